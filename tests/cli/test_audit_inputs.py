"""``semi-core audit`` on the inputs people already have: two loss columns side by side with NaN
padding (tf-privacy's ``AttackInputData``, pandas), two files of scores, an ML Privacy Meter
attack result; and the notes the output carries (padding read, the test's other tail, a
one-run file audited as independent games, losses read as "higher = member")."""

from __future__ import annotations

import json

import numpy as np
import pytest

from semi_core import _io
from semi_core.audit import epsilon_lower_bound
from semi_core.cli import main

DELTA = "1e-5"


def _run(capsys, argv):
    capsys.readouterr()
    rc = main(list(argv))
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


def _json(capsys, argv):
    rc, out, err = _run(capsys, [*argv, "--json"])
    obj = json.loads(out)
    return rc, obj


def _losses(seed=0, n_train=500, n_test=300):
    rng = np.random.default_rng(seed)
    return rng.normal(-1.0, 1.0, n_train), rng.normal(0.0, 1.0, n_test)


def _side_by_side(path, a, b, *, missing="", index=True):
    """Two columns of unequal length, the shorter padded, as pandas' to_csv writes them."""
    n = max(a.size, b.size)
    lines = [(",".join(["", "loss_train", "loss_test"]) if index else "loss_train,loss_test")]
    for i in range(n):
        cells = [repr(float(a[i])) if i < a.size else missing,
                 repr(float(b[i])) if i < b.size else missing]
        lines.append(",".join(([str(i)] if index else []) + cells))
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("missing", ["", "nan", "NaN"])
def test_two_padded_columns_audit_the_two_classes(tmp_path, capsys, missing):
    a, b = _losses()
    path = _side_by_side(tmp_path / "tfp.csv", a, b, missing=missing)
    rc, got = _json(capsys, ["audit", "--scores", str(path), "--member-col", "loss_train",
                             "--nonmember-col", "loss_test", "--lower-is-member",
                             "--delta", DELTA])
    assert rc == 0, got
    ref = epsilon_lower_bound(-a, -b, delta=1e-5)
    assert got["epsilon_lower_bound"] == ref.epsilon_lower_bound > 0
    assert got["n_member"] == 500 and got["n_nonmember"] == 300
    assert got["input"]["form"] == "two-columns"
    assert got["input"]["padding"] == {"loss_train": 0, "loss_test": 200}
    assert any("last 200 cells" in n and "padding" in n for n in got["notes"])


def test_pandas_written_frame(tmp_path, capsys):
    pd = pytest.importorskip("pandas")
    a, b = _losses(1, 120, 200)
    pd.DataFrame({"loss_train": pd.Series(a), "loss_test": pd.Series(b)}).to_csv(
        tmp_path / "p.csv")
    mem, non, pad = _io.read_score_columns(tmp_path / "p.csv", "loss_train", "loss_test")
    np.testing.assert_array_equal(mem, a)
    np.testing.assert_array_equal(non, b)
    assert pad == {"loss_train": 80, "loss_test": 0}


@pytest.mark.parametrize("chunk", [16, 8 * 2**20])
def test_padding_only_at_the_end(tmp_path, monkeypatch, chunk):
    monkeypatch.setattr(_io, "CSV_CHUNK_BYTES", chunk)
    a, b = _losses(2, 30, 20)
    path = _side_by_side(tmp_path / "p.csv", a, b, index=False)
    lines = path.read_text().splitlines()
    lines[5] = lines[5].split(",")[0] + ","  # an empty cell inside loss_test
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match=r"column 'loss_test': row 5 is empty or NaN but values "
                                         r"follow"):
        _io.read_score_columns(path, "loss_train", "loss_test")
    lines[5] = lines[5] + "abc"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match=r"line 6: loss_test 'abc' is not a number"):
        _io.read_score_columns(path, "loss_train", "loss_test")


def test_nan_is_padding_only_in_the_two_column_form(tmp_path, capsys):
    np.save(tmp_path / "m.npy", np.r_[0.5, 1.0, np.nan])
    np.save(tmp_path / "n.npy", np.r_[0.1, 0.2])
    rc, got = _json(capsys, ["audit", "--member-scores", str(tmp_path / "m.npy"),
                             "--nonmember-scores", str(tmp_path / "n.npy"), "--delta", DELTA])
    assert rc == 2 and "NaN" in got["error"] and got["kind"] == "invalid_argument"
    (tmp_path / "s.csv").write_text("score,member\n1.0,1\nnan,0\n0.5,0\n")
    rc, got = _json(capsys, ["audit", "--scores", str(tmp_path / "s.csv"), "--delta", DELTA])
    assert rc == 2 and "NaN" in got["error"]


def test_two_files_in_every_format(tmp_path, capsys):
    a, b = _losses(3, 200, 150)
    np.save(tmp_path / "train.npy", a)
    np.savetxt(tmp_path / "test.txt", b)  # one number a line, no header
    np.savez(tmp_path / "test.npz", loss=b)
    (tmp_path / "test.csv").write_text("loss\n" + "\n".join(repr(float(v)) for v in b) + "\n")
    ref = epsilon_lower_bound(-a, -b, delta=1e-5).epsilon_lower_bound
    for non in ("test.txt", "test.npz", "test.csv"):
        rc, got = _json(capsys, ["audit", "--member-scores", str(tmp_path / "train.npy"),
                                 "--nonmember-scores", str(tmp_path / non),
                                 "--lower-is-member", "--delta", DELTA])
        assert rc == 0, (non, got)
        assert got["epsilon_lower_bound"] == ref and got["input"]["form"] == "two-files"


@pytest.mark.parametrize("argv,match", [
    (["--member-scores", "{d}/m.npy"], "go together"),
    (["--scores", "{d}/s.csv", "--member-scores", "{d}/m.npy", "--nonmember-scores",
      "{d}/m.npy"], "instead of --scores"),
    (["--scores", "{d}/s.csv", "--member-col", "a"], "go together"),
    (["--scores", "{d}/s.csv", "--member-col", "a", "--nonmember-col", "b", "--label-col", "m"],
     "do not apply"),
    (["--member-scores", "{d}/m.npy", "--nonmember-scores", "{d}/m.npy", "--label-col", "m"],
     "apply to --scores only"),
    ([], "name the scores"),
    (["--scores", "{d}/s.csv", "--member-col", "a", "--nonmember-col", "A"], "must differ"),
    (["--scores", "{d}/m.npy", "--member-col", "a", "--nonmember-col", "b"], "one array"),
])
def test_input_flag_combinations_are_checked(tmp_path, capsys, argv, match):
    np.save(tmp_path / "m.npy", np.r_[0.5, 1.0])
    (tmp_path / "s.csv").write_text("a,b\n1,2\n")
    argv = [a.replace("{d}", str(tmp_path)) for a in argv]
    rc, got = _json(capsys, ["audit", *argv, "--delta", DELTA])
    assert rc == 2 and match in got["error"], got
    # a wrong combination of flags is a usage error; a bad pair of columns a bad argument
    want = "invalid_argument" if match in ("must differ", "one array") else "usage"
    assert got["kind"] == want, got


# -- notes ----------------------------------------------------------------------------------------
def test_other_tail_is_said_in_the_text(tmp_path, capsys):
    """Non-members spread to both sides of the members: the evidence is that few members fall
    at or below the threshold (FNR near 0) while many non-members do, the ratio
    (TNR - delta) / FNR; the test is reported with TPR and FPR near 1."""
    rng = np.random.default_rng(4)
    mem = rng.normal(0, 0.05, 400)
    non = rng.normal(0, 1, 400)
    np.save(tmp_path / "m.npy", mem)
    np.save(tmp_path / "n.npy", non)
    argv = ["audit", "--member-scores", str(tmp_path / "m.npy"), "--nonmember-scores",
            str(tmp_path / "n.npy"), "--delta", DELTA]
    rc, got = _json(capsys, argv)
    assert rc == 0 and got["direction"] == "tnr/fnr" and got["epsilon_lower_bound"] > 0
    rc, out, _ = _run(capsys, argv)
    assert "note: the bound comes from the test's other tail" in out
    # the usual tail: no such note
    rc, out, _ = _run(capsys, ["audit", "--member-scores", str(tmp_path / "m.npy"),
                               "--nonmember-scores", str(tmp_path / "m.npy"), "--delta",
                               DELTA])
    assert "other tail" not in out


def _mlpm(path, seed=5, n=2000):
    """An ML Privacy Meter ``attack_result_<i>.npz``: one target model's records."""
    rng = np.random.default_rng(seed)
    member = rng.random(n) < 0.5
    scores = rng.normal(1.0 * member, 1.0)
    np.savez(path, fpr=np.r_[0.0, 1.0], tpr=np.r_[0.0, 1.0], auc=0.7, one_tenth_fpr=0.0,
             zero_fpr=0.0, scores=scores, memberships=member)
    return scores, member


@pytest.mark.parametrize("method,warned", [("band", True), ("dkw", True), ("gdp", True),
                                           ("one-run", False)])
def test_ml_privacy_meter_file_is_said_to_be_one_run(tmp_path, capsys, method, warned):
    path = tmp_path / "attack_result_0.npz"
    scores, member = _mlpm(path)
    rc, got = _json(capsys, ["audit", "--scores", str(path), "--method", method,
                             "--delta", DELTA])
    assert rc == 0, got
    assert got["input"]["ml_privacy_meter"] is True
    assert got["n_member"] == int(member.sum())
    said = [n for n in got["notes"] if "ML Privacy Meter" in n]
    assert bool(said) == warned
    if warned:
        assert "one-run setting" in said[0] and f"method {method} assumes independent" in said[0]
        rc, out, _ = _run(capsys, ["audit", "--scores", str(path), "--method", method,
                                   "--delta", DELTA])
        assert "note: " in out and "one training run" in out


def test_a_plain_npz_is_not_flagged(tmp_path, capsys):
    rng = np.random.default_rng(6)
    np.savez(tmp_path / "s.npz", score=rng.normal(size=100), member=rng.integers(0, 2, 100))
    rc, got = _json(capsys, ["audit", "--scores", str(tmp_path / "s.npz"), "--delta", DELTA])
    assert rc == 0 and got["input"]["ml_privacy_meter"] is False and got["notes"] == []


def test_losses_read_as_higher_is_member_are_flagged(tmp_path, capsys):
    a, b = _losses(7)
    path = _side_by_side(tmp_path / "tfp.csv", a, b)
    rc, got = _json(capsys, ["audit", "--scores", str(path), "--member-col", "loss_train",
                             "--nonmember-col", "loss_test", "--delta", DELTA])
    assert any("--lower-is-member" in n for n in got["notes"])
    rc, got = _json(capsys, ["audit", "--scores", str(path), "--member-col", "loss_train",
                             "--nonmember-col", "loss_test", "--delta", DELTA,
                             "--lower-is-member"])
    assert not any("--lower-is-member" in n for n in got["notes"])


def test_loss_files_read_as_higher_is_member_are_flagged(tmp_path, capsys):
    a, b = _losses(8)
    np.save(tmp_path / "loss_train.npy", a)
    np.save(tmp_path / "loss_test.npy", b)
    argv = ["audit", "--member-scores", str(tmp_path / "loss_train.npy"), "--nonmember-scores",
            str(tmp_path / "loss_test.npy"), "--delta", DELTA]
    rc, got = _json(capsys, argv)
    assert rc == 0 and any("--lower-is-member" in n for n in got["notes"])
    rc, out, _ = _run(capsys, argv)
    assert "note: the scores are named like losses" in out
