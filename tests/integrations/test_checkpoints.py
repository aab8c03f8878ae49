"""Audit saved checkpoints: formats, refusals, the trajectory, a recorded game, the CLI."""

import json
import pickle
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("safetensors")

from semi_core.integrations.checkpoints import (  # noqa: E402
    CheckpointRuns,
    audit_checkpoints,
    load_model,
    load_state,
    step_files,
)
from tests.integrations import ckpt_helpers as H  # noqa: E402

SPEC = "tests.integrations.ckpt_helpers:make_model"


def _runs(**kw):
    x, y = H.data(7, 200)
    return CheckpointRuns(load_model(SPEC), reference=(x, y), target=H.CANARY, lr=0.5,
                          batch_size=16, steps=4, noise_multiplier=1.0, max_grad_norm=1.0, **kw)


def test_formats_load_identically(tmp_path):
    H.train_run(tmp_path / "a", member=True, tau=2, seed=3, fmt="safetensors")
    H.train_run(tmp_path / "b", member=True, tau=2, seed=3, fmt="pt")
    r = _runs()
    np.testing.assert_array_equal(r.trajectory(tmp_path / "a"), r.trajectory(tmp_path / "b"))
    state = load_state(step_files(tmp_path / "a")[0][1])
    np.savez(tmp_path / "c.npz", **state)
    assert load_state(tmp_path / "c.npz").keys() == state.keys()


def test_refusals_name_the_file(tmp_path):
    run = tmp_path / "run"
    H.train_run(run, member=False, tau=1, seed=1)
    r = _runs()
    (run / "step_2.safetensors").unlink()
    with pytest.raises(ValueError, match=r"saved steps \[0, 1, 3, 4\] \(4 files\) are not the "
                                         r"expected \[0, 1, 2, 3, 4\]"):
        r.trajectory(run)
    H.train_run(run, member=False, tau=1, seed=1)
    bad = {k: v.copy() for k, v in load_state(run / "step_3.safetensors").items()}
    first = next(iter(bad))
    bad[first][...] = np.nan
    from safetensors.numpy import save_file
    save_file(bad, str(run / "step_3.safetensors"))
    with pytest.raises(ValueError, match="step_3.safetensors.*NaN"):
        r.trajectory(run)
    bad[first] = np.zeros((2, 2))
    save_file(bad, str(run / "step_3.safetensors"))
    with pytest.raises(ValueError, match="step_3.safetensors.*shape"):
        r.trajectory(run)


class _Evil:
    def __reduce__(self):
        return (open, (str(Path(sys.argv[0]).parent / "PWNED"), "w"))


def test_pickled_objects_are_refused_without_running(tmp_path):
    p = tmp_path / "step_0.pt"
    with open(p, "wb") as fh:
        pickle.dump({"w": _Evil()}, fh)
    marker = Path(sys.argv[0]).parent / "PWNED"
    with pytest.raises(ValueError, match="refused"):
        load_state(p)
    assert not marker.exists()
    torch.save({"w": torch.zeros(2), "opt": {"lr": 0.1}}, tmp_path / "x.pt")
    with pytest.raises(ValueError, match="not an array"):
        load_state(tmp_path / "x.pt")


def test_trajectory_mode_and_model_spec_errors(tmp_path):
    H.train_run(tmp_path / "m", member=True, tau=3, seed=5)
    out = audit_checkpoints(_runs(), [tmp_path / "m"])
    lr = np.asarray(out["log_lr"])
    assert lr.shape == (1, 4) and np.isfinite(lr).all()
    assert out["theta0"] == "saved" and out["config"]["statistics_dtype"] == "float64"
    assert out["statistics"][0]["semi_max"] == lr.max()
    for spec, match in [("nocolon", "module:callable"), ("no_such_mod:f", "cannot import"),
                        ("json:nothing_here", "no callable")]:
        with pytest.raises(ValueError, match=match):
            load_model(spec)


def test_recorded_game_certifies_below_the_truth(tmp_path):
    """24 labelled runs: a valid bound (below the run's exact eps) from SeMI* at tau = 2."""
    from semi_core.sgd.accounting import dpsgd_epsilon

    dirs, member = [], []
    rng = np.random.default_rng(0)
    for i in range(24):
        m = bool(rng.random() < 0.5) if i > 1 else bool(i)
        H.train_run(tmp_path / f"r{i}", member=m, tau=2, seed=100 + i, sigma=1.0)
        dirs.append(tmp_path / f"r{i}")
        member.append(m)
    out = audit_checkpoints(_runs(), dirs, member=member, tau=2, delta=1e-5)
    eps = dpsgd_epsilon(1.0, 1e-5)
    for test, per in out["epsilon_lower_bound"].items():
        for b in per.values():
            assert 0 <= b["epsilon_lower_bound"] <= eps, test
    assert out["game"].rounds == 24 and set(out["game"].stats) >= {"semi-star", "delta_diff"}


def test_cli(tmp_path, capsys, monkeypatch):
    from semi_core.cli import main

    for i, m in enumerate([True, False, True, False, True, False]):
        H.train_run(tmp_path / ("member" if m else "non-member") / f"run{i}", member=m, tau=1,
                    seed=i)
    x, y = H.data(7, 200)
    np.savez(tmp_path / "ref.npz", X=x, y=y)
    np.savez(tmp_path / "target.npz", X=H.CANARY[0][None], y=np.array([H.CANARY[1]]))
    code = main(["audit-checkpoints", "--model", SPEC, "--runs-root", str(tmp_path),
                 "--reference", str(tmp_path / "ref.npz"), "--target", str(tmp_path / "target.npz"),
                 "--lr", "0.5", "--batch-size", "16", "--noise-multiplier", "1",
                 "--max-grad-norm", "1", "--tau", "1", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["runs"] == 6 and out["members"] == 3
    assert "semi-star" in out["epsilon_lower_bound"]
