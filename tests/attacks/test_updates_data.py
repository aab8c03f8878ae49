"""``semi-core updates --data FILE``: the user's csv / npz / IDX data through the project's loaders
(files written by the tests; nothing is downloaded)."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from semi_core.attacks.updates import UpdateConfig, run_experiment, summarize  # noqa: E402
from semi_core.attacks.updates.experiment import load_update_data  # noqa: E402
from semi_core.attacks.updates.experiment.data import _pools  # noqa: E402
from semi_core.sgd.data import load_digits  # noqa: E402

TINY = dict(n0=60, trials=2, n_ref=2, base_epochs=4, new_epochs=2, full_epochs=1, n_up=4)


def _write_csv(path, x, y, label_column=0):
    arr = np.insert(x, label_column, y, axis=1)
    np.savetxt(path, arr, delimiter=",", fmt="%.17g")


def _write_idx(d, images: np.ndarray, labels: np.ndarray, gz: bool = True):
    def blob(a, code):
        head = bytes([0, 0, code, a.ndim]) + np.asarray(a.shape, ">u4").tobytes()
        return head + a.tobytes()

    op = gzip.open if gz else open
    ext = ".gz" if gz else ""
    with op(d / f"train-images-idx3-ubyte{ext}", "wb") as fh:
        fh.write(blob(images.astype(np.uint8), 0x08))
    with op(d / f"train-labels-idx1-ubyte{ext}", "wb") as fh:
        fh.write(blob(labels.astype(np.uint8), 0x08))


def test_csv_and_npz_of_digits_reproduce_the_bundled_run(tmp_path):
    """Digits written to a csv (label last) and an npz load to the bundled arrays exactly, and
    the npz run is bit-identical to the bundled run (the same seed streams)."""
    x, y = load_digits()
    _write_csv(tmp_path / "d.csv", x, y, label_column=64)
    np.savez(tmp_path / "d.npz", X=x, y=y)
    for path, col in (("d.csv", -1), ("d.csv", 64), ("d.npz", 0)):
        xa, ya = load_update_data(tmp_path / path, label_column=col)
        assert np.array_equal(xa, x) and np.array_equal(ya, y)
    ref = _pools(UpdateConfig(shift_alpha=0.5, **TINY), np.random.default_rng(3))
    got = _pools(UpdateConfig(dataset="file", data=str(tmp_path / "d.npz"), shift_alpha=0.5,
                              **TINY), np.random.default_rng(3))
    for a, b in zip(ref[:3], got[:3], strict=True):
        assert np.array_equal(a, b)
    assert all(np.array_equal(ref[3][k], got[3][k]) for k in ref[3])


def test_labels_are_remapped_and_idx_pair_loads(tmp_path):
    rng = np.random.default_rng(0)
    imgs = rng.integers(0, 256, size=(400, 6, 5))
    labels = rng.integers(3, 6, size=400)              # classes {3, 4, 5}
    _write_idx(tmp_path, imgs, labels)
    x, yy = load_update_data(tmp_path)
    assert x.shape == (400, 30) and 0 <= x.min() and x.max() <= 1
    assert set(np.unique(yy)) == {0, 1, 2}
    run = run_experiment(UpdateConfig(dataset="file", data=str(tmp_path), **TINY))
    assert run.scores["loss"].shape == (2, 2, 8)
    assert 0 <= summarize(run)["mi_accuracy"]["mean"] <= 1


def test_data_config_errors(tmp_path):
    with pytest.raises(ValueError, match="data .* exactly with dataset 'file'"):
        UpdateConfig(data="x.csv")
    with pytest.raises(ValueError, match="exactly with dataset 'file'"):
        UpdateConfig(dataset="file")
    np.savez(tmp_path / "one.npz", X=np.ones((200, 3)), y=np.zeros(200))
    with pytest.raises(ValueError, match="single class"):
        load_update_data(tmp_path / "one.npz")
    np.savez(tmp_path / "three.npz", X=np.random.default_rng(1).random((400, 3)),
             y=np.arange(400) % 3)
    with pytest.raises(ValueError, match="10-class"):
        run_experiment(UpdateConfig(dataset="file", data=str(tmp_path / "three.npz"),
                                    shift_alpha=0.5, **TINY))


def _cli(argv, capsys):
    from semi_core.cli import main

    code = main(["updates", *argv, "--json"])
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1, out
    return code, json.loads(out[0])


def test_cli_data_runs_and_refuses(tmp_path, capsys):
    rng = np.random.default_rng(2)
    x = rng.random((300, 5))
    y = (x[:, 0] > 0.5).astype(int)
    _write_csv(tmp_path / "t.csv", x, y)
    code, obj = _cli(["--data", str(tmp_path / "t.csv"), "--trials", "2", "--n0", "40",
                      "--n-up", "3"], capsys)
    assert code == 0, obj
    assert obj["config"]["data"] == str(tmp_path / "t.csv")
    assert obj["config"]["dataset"] == "file"
    for argv, needle in [
        (["--data", str(tmp_path / "missing.csv")], "--data"),
        (["--label-column", "2"], "--label-column"),
        (["--data", str(tmp_path / "t.csv"), "--label-column", "9"], "label_column"),
        (["--data", str(tmp_path)], "train-images-idx3-ubyte"),
    ]:
        code, obj = _cli([*argv, "--trials", "2", "--n0", "40", "--n-up", "3"], capsys)
        assert code == 2 and needle in obj["error"], (argv, obj)


def test_hard_easy_pairs_and_covariate_shift():
    from semi_core.attacks.updates.experiment.data import _subpop_pairs

    x, y = load_digits()
    xh, yh, sh = _subpop_pairs(x, y, "subpop-hard")
    xe, ye, se = _subpop_pairs(x, y, "subpop-easy")
    for ys, ss in ((yh, sh), (ye, se)):
        assert set(np.unique(ys)) == {0, 1} and 0 < ss.mean() < 1

    def gap(xs, ss):  # distance of the target records' mean image from the sources'
        return np.linalg.norm(xs[ss].mean(0) - xs[~ss].mean(0))

    assert gap(xh, sh) > gap(xe, se)          # Hard targets lie farther from their sources
    cfg = UpdateConfig(shift="covariate-hard", shift_alpha=1.0, **TINY)
    xc, yc, src, pools = _pools(cfg, np.random.default_rng(0))
    n = len(y)
    assert xc.shape == (2 * n, 64) and np.allclose(xc[n:], 1 - xc[:n]) and src[:n].all()
    assert all(np.array_equal(np.sort(p[p < n] + n), np.sort(p[p >= n])) for p in pools.values())
    run = run_experiment(cfg)
    assert run.scores["loss"].shape == (2, 2, 8)
    with pytest.raises(ValueError, match="shift must be one of"):
        UpdateConfig(shift="label")
