"""The two score-file readers (``--scores`` and ``--member-scores`` / ``--nonmember-scores``)
share one .npz/.npy/parquet reader: the same values and the same refusals as before."""

from __future__ import annotations

import numpy as np
import pytest

from semi_core._io import read_score_list, read_scores_file


@pytest.fixture()
def files(tmp_path):
    rng = np.random.default_rng(0)
    sc, lab = rng.normal(size=20), rng.random(20) < 0.5
    np.savez(tmp_path / "a.npz", score=sc, member=lab)
    np.savez(tmp_path / "b.npz", x=sc)
    np.save(tmp_path / "c.npy", np.c_[sc, lab.astype(float)])
    st = np.zeros(20, dtype=[("score", float), ("member", bool)])
    st["score"], st["member"] = sc, lab
    np.save(tmp_path / "s.npy", st)
    np.save(tmp_path / "o.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    (tmp_path / "bad.npz").write_bytes(b"PK\x03\x04garbage")
    return tmp_path, sc, lab


def test_values_of_both_readers(files):
    d, sc, lab = files
    for f in ("a.npz", "c.npy", "s.npy"):
        mem, non = read_scores_file(d / f)
        np.testing.assert_array_equal(mem, sc[lab])
        np.testing.assert_array_equal(non, sc[~lab])
    np.testing.assert_array_equal(read_score_list(d / "b.npz", name="--member-scores"), sc)
    for f in ("a.npz", "s.npy"):
        np.testing.assert_array_equal(
            read_score_list(d / f, name="--member-scores", score_col="score"), sc)


@pytest.mark.parametrize("fn, kw, exc, msg", [
    ("b.npz", {}, ValueError, r"--scores: .*b.npz has no array 'score' \(arrays: \['x'\]\); "
                              r"name them with --score-col / --label-col"),
    ("b.npz", {"score_col": "score"}, ValueError,
     r"--member-scores: .*b.npz has no array 'score' \(arrays: \['x'\]\)$"),
    ("a.npz", {}, ValueError, r"--member-scores: .*holds arrays \['score', 'member'\]; name one"),
    ("o.npy", {}, ValueError, r"o.npy is not a readable .npy array without objects"),
    ("bad.npz", {}, ValueError, r"bad.npz is not a readable .npz archive \(BadZipFile"),
    ("none.npz", {}, FileNotFoundError, r"no such file"),
])
def test_refusals_name_the_argument(files, fn, kw, exc, msg):
    d = files[0]
    if fn == "b.npz" and not kw:
        with pytest.raises(exc, match=msg):
            read_scores_file(d / fn)
        return
    with pytest.raises(exc, match=msg):
        read_score_list(d / fn, name="--member-scores", **kw)
    if fn in ("o.npy", "bad.npz", "none.npz"):
        with pytest.raises(exc, match=msg):
            read_scores_file(d / fn)
