"""Score readers under real files: long fields, CR-only line ends, damaged archives, and one
label rule for every format (:mod:`semi_core._io`).

Each test writes its own small file. Failures are user errors naming the file and line, never
a ``_csv.Error`` or ``BadZipFile`` (kind ``internal``).
"""

from __future__ import annotations

import csv
import io
import tracemalloc

import numpy as np
import pytest

from semi_core import _io

from .conftest import assert_json_error

LIMIT = csv.field_size_limit()


def _csv(path, rows, header="score,member", eol="\n"):
    path.write_bytes((eol.join([header, *rows]) + eol).encode())
    return path


# -- a field over the csv module's limit ---------------------------------------------------------
@pytest.mark.parametrize("chunk", [64, 8 * 2**20])
def test_a_quoted_field_over_the_limit_is_a_user_error_naming_the_line(tmp_path, monkeypatch,
                                                                      chunk):
    monkeypatch.setattr(_io, "CSV_CHUNK_BYTES", chunk)
    path = _csv(tmp_path / "long.csv", ["0.5,0,a", "1,1,\"" + "x" * (LIMIT + 10) + "\"",
                                        "0,0,b"], header="score,member,note")
    with pytest.raises(ValueError, match=rf"--scores line 3: a field longer than {LIMIT}"):
        _io.read_scores_csv(path)


def test_a_long_header_field_is_a_user_error(tmp_path):
    path = _csv(tmp_path / "h.csv", ["1,1,x"], header='score,member,"' + "h" * (LIMIT + 1) + '"')
    with pytest.raises(ValueError, match="line 1: a field longer than"):
        _io.read_scores_csv(path)


def test_long_field_under_json_is_one_error_object(tmp_path, capsys):
    path = _csv(tmp_path / "long.csv", ["1,1,\"" + "x" * (LIMIT + 1) + "\""],
                header="score,member,note")
    obj = assert_json_error(capsys, ["audit", "--scores", str(path), "--delta", "1e-5"],
                            kinds={"invalid_argument"})
    assert "line 2" in obj["error"] and "long.csv" not in obj["kind"]


def test_one_long_unquoted_field_does_not_widen_every_cell(tmp_path):
    """np.loadtxt makes every cell as long as the longest field: 3,000 rows x 3 columns x a
    20,000-character field would be 720 MB of cells. The chunk goes to the row-by-row parser
    (peak a few MB); the values are the same."""
    rows = ["1,1," + "x" * 20_000] + [f"{i / 10},{i % 2},a" for i in range(3_000)]
    path = _csv(tmp_path / "wide.csv", rows, header="score,member,note")
    tracemalloc.start()
    try:
        mem, non = _io.read_scores_csv(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert mem.size == 1 + 1_500 and non.size == 1_500
    assert mem[0] == 1.0 and np.array_equal(non, np.arange(0, 3_000, 2) / 10)
    assert peak < 32 * 2**20, peak


def test_a_line_longer_than_the_limit_is_refused_not_rebuffered(monkeypatch):
    """A data line without an end is refused once it passes MAX_LINE_BYTES: each further block
    would copy the whole line again (quadratic work)."""
    monkeypatch.setattr(_io, "MAX_LINE_BYTES", 1000)
    monkeypatch.setattr(_io, "CSV_CHUNK_BYTES", 100)
    raw = b"score,member\n1,1\n" + b"2" * 200_000 + b",0\n"
    with pytest.raises(ValueError, match="a line longer than"):
        _io._read_stream(io.BytesIO(raw), "--scores")
    ok = b"score,member\n1,1\n" + b"2" * 500 + b",0\n"
    mem, non = _io._read_stream(io.BytesIO(ok), "--scores")
    assert mem.tolist() == [1.0] and non.size == 1


def test_cell_bound_of_the_fast_path():
    # rows x columns x longest line x 4 when that is small enough: 3 lines (2 newlines + the
    # tail), 2 columns, "1,12345"
    assert _io._cell_bytes(b"1,12345\n0,1\n", 2) == 3 * 2 * 7 * 4
    # else the longest field: 12 rows, 3 columns, 1000 characters
    chunk = b"1,1," + b"x" * 1000 + b"\n" + b"0,0,a\n" * 10
    assert _io._cell_bytes(chunk, 3) == 12 * 3 * 1000 * 4


# -- CR-only line ends ---------------------------------------------------------------------------
def _rows(n, seed=0):
    rng = np.random.default_rng(seed)
    s, m = rng.normal(size=n), rng.integers(0, 2, n)
    return [f"{a!r},{b}" for a, b in zip(s.tolist(), m, strict=True)], s, m.astype(bool)


@pytest.mark.parametrize("chunk", [1, 7, 4096, 8 * 2**20])
def test_cr_only_files_read_as_their_lf_twin(tmp_path, monkeypatch, chunk):
    monkeypatch.setattr(_io, "CSV_CHUNK_BYTES", chunk)
    rows, s, m = _rows(300 if chunk < 100 else 20_000)
    for eol in ("\r", "\r\n", "\n"):
        mem, non = _io.read_scores_csv(_csv(tmp_path / "f.csv", rows, eol=eol))
        np.testing.assert_array_equal(mem, s[m])
        np.testing.assert_array_equal(non, s[~m])


def test_cr_only_large_file_and_line_numbers(tmp_path):
    """200,000 rows with CR ends (4 MB; the reader used to find no data at all) and an error
    on the last line named as in the LF file."""
    rows, s, m = _rows(200_000, seed=1)
    mem, non = _io.read_scores_csv(_csv(tmp_path / "big.csv", rows, eol="\r"))
    assert mem.size + non.size == 200_000
    np.testing.assert_array_equal(mem, s[m])
    for eol in ("\r", "\n"):
        path = _csv(tmp_path / "bad.csv", rows[:5000] + ["oops,1"], eol=eol)
        with pytest.raises(ValueError, match="line 5002: score 'oops' is not a number"):
            _io.read_scores_csv(path)


class _Counting(io.BytesIO):
    def __init__(self, raw):
        super().__init__(raw)
        self.read_bytes = 0

    def read(self, n=-1):
        block = super().read(n)
        self.read_bytes += len(block)
        return block


def test_the_header_search_reads_one_block_not_the_file():
    """The header search reads until the first line end of any kind (it used to look for LF
    only: a CR-only file was read whole, growing and rescanning the buffer, before the header
    was cut)."""
    rows, _, _ = _rows(50_000)
    raw = ("score,member\r" + "\r".join(rows) + "\r").encode()
    stream = _Counting(raw)
    head, end = _io._first_line(stream, "--scores")
    assert end == len("score,member") and head[end:end + 1] == b"\r"
    assert stream.read_bytes <= 65536 + 1 < len(raw)


def test_a_crlf_split_between_blocks_is_one_line_end():
    stream = _io._CRLines(io.BytesIO(b"\n2,0\r3,1\r"), pending=b"1,1\r")
    assert stream.read(1) + stream.read(100) == b"1,1\n2,0\n3,1\n"


# -- damaged archives ----------------------------------------------------------------------------
def _npz(path, n=2000):
    rng = np.random.default_rng(3)
    np.savez_compressed(path, score=rng.normal(size=n), member=rng.integers(0, 2, n))
    return path.read_bytes()


@pytest.mark.parametrize("damage", ["truncated", "tail-cut", "flipped"])
def test_a_damaged_npz_is_a_user_error(tmp_path, capsys, damage):
    raw = _npz(tmp_path / "ok.npz")
    bad = tmp_path / "bad.npz"
    if damage == "truncated":
        bad.write_bytes(raw[:len(raw) // 2])  # no central directory: BadZipFile
    elif damage == "tail-cut":
        bad.write_bytes(raw[:-10])
    else:  # the deflate stream of the first member damaged: zlib error or a CRC mismatch
        b = bytearray(raw)
        for i in range(200, 260):
            b[i] ^= 0xFF
        bad.write_bytes(bytes(b))
    with pytest.raises(ValueError, match=r"bad\.npz is not a readable \.npz archive"):
        _io.read_scores_file(bad)
    obj = assert_json_error(capsys, ["audit", "--scores", str(bad), "--delta", "1e-5"],
                            kinds={"invalid_argument"})
    assert "readable .npz" in obj["error"]


def test_missing_arrays_are_still_named(tmp_path):
    np.savez(tmp_path / "s.npz", loss=np.zeros(3), member=np.array([1, 0, 1]))
    with pytest.raises(ValueError, match=r"no array 'score' \(arrays: \['loss', 'member'\]\)"):
        _io.read_scores_file(tmp_path / "s.npz")


# -- one label rule for every format -------------------------------------------------------------
def _write(fmt, path, scores, labels):
    """Write ``scores``/``labels`` as each format would (CSV: as pandas writes floats)."""
    if fmt == "csv":
        lab = [repr(float(v)) if not isinstance(v, str) else v for v in labels]
        path.write_text("score,member\n" + "".join(
            f"{s!r},{v}\n" for s, v in zip(scores, lab, strict=True)))
    elif fmt == "npz":
        np.savez(path, score=np.asarray(scores), member=np.asarray(labels))
    else:
        rec = np.zeros(len(scores), dtype=[("score", float), ("member", np.asarray(labels).dtype)])
        rec["score"], rec["member"] = scores, labels
        np.save(path, rec)
    return path


@pytest.mark.parametrize("fmt", ["csv", "npz", "npy"])
def test_float_labels_read_the_same_in_every_format(tmp_path, fmt):
    scores = [0.3, 1.5, -2.0, 4.0]
    labels = [1.0, 0.0, 0.0, 1.0]
    mem, non = _io.read_scores_file(_write(fmt, tmp_path / f"s.{fmt}", scores, labels))
    assert mem.tolist() == [0.3, 4.0] and non.tolist() == [1.5, -2.0]


@pytest.mark.parametrize("fmt", ["csv", "npz", "npy"])
@pytest.mark.parametrize("bad", [2.0, 0.5, -1.0, float("nan")])
def test_labels_other_than_0_1_are_refused_by_name_in_every_format(tmp_path, fmt, bad):
    path = _write(fmt, tmp_path / f"s.{fmt}", [0.3, 1.5, 2.5], [1.0, bad, 0.0])
    with pytest.raises(ValueError, match="member") as err:
        _io.read_scores_file(path)
    assert "must" in str(err.value)


def test_csv_written_by_pandas_is_read(tmp_path):
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"score": [0.3, 1.5, -2.0], "member": [1.0, 0.0, 1.0]})
    frame.to_csv(tmp_path / "p.csv", index=False)
    assert "1.0" in (tmp_path / "p.csv").read_text()
    mem, non = _io.read_scores_csv(tmp_path / "p.csv")
    assert mem.tolist() == [0.3, -2.0] and non.tolist() == [1.5]


def test_label_strings_are_one_rule():
    words = np.array(["1", "0", "1.0", "0.000", "1e0", "+1.", "-0", "yes", "out", "2", "0.5",
                      "nan", "1_0", "１", "1.0.0", ""])
    is_true, ok = _io._label_strings(words)
    assert ok.tolist() == [True] * 9 + [False] * 7
    assert is_true[:9].tolist() == [True, False, True, False, True, True, False, True, False]
    for w, t, o in zip(words, is_true, ok, strict=True):
        assert _io._label_word(str(w)) == (bool(t) if o else None)
    np.testing.assert_array_equal(_io.labels_to_bool(words[:9], "m"), is_true[:9])
    np.testing.assert_array_equal(_io.labels_to_bool(np.array([1.0, 0.0, -0.0]), "m"),
                                  [True, False, False])
