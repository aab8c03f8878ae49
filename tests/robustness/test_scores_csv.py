"""``semi-core audit --scores``: the CSV loader streams with NumPy and keeps every validation
(bad rows are refused as before), and ``--higher-is`` says which way is member.

The loader (:func:`semi_core._io.read_scores_csv`) parses chunks with ``np.loadtxt`` and falls
back to the csv module for a chunk with quotes or an error. The oracle here is the previous
whole-file, Python-list implementation (copied below): on fuzzed CSV texts, at chunk sizes from
a few bytes up, the streaming loader must return the same arrays or raise the same
``ValueError`` (same message where it names a line). Memory: the loader's peak is bounded by
the result arrays plus one chunk (measured with tracemalloc; the list-based reader needed
~120 bytes a row).
"""

from __future__ import annotations

import csv
import io
import json
import sys
import tracemalloc

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from semi_core import _io
from semi_core.audit import epsilon_lower_bound

from .conftest import assert_json_error, run_cli

_TRUE = {"1", "true", "t", "yes", "y", "member", "in"}
_FALSE = {"0", "false", "f", "no", "n", "nonmember", "non-member", "out"}


def _number(word: str):
    """The value of an ASCII decimal numeral (no underscores, no inf/nan), else None."""
    if not word.isascii() or "_" in word or not any(c.isdigit() for c in word):
        return None
    try:
        return float(word)
    except ValueError:
        return None


def reference_reader(raw: bytes):
    """The previous loader (whole file, Python lists): the oracle of the streaming one."""
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ValueError("--scores: not UTF-8 text") from None
    if "\x00" in text:
        raise ValueError("--scores: binary data (NUL bytes) in a CSV file")
    scores, member = [], []
    reader = csv.reader(io.StringIO(text, newline=""))
    header = next(reader, None)
    cols = [c.strip().lower() for c in (header or [])]
    if "score" not in cols or "member" not in cols:
        raise ValueError(f"--scores: CSV header must contain columns 'score' and 'member', "
                         f"got {header}")
    for name in ("score", "member"):
        if cols.count(name) > 1:
            raise ValueError(f"--scores: column {name!r} appears {cols.count(name)} times in "
                             f"the header {header}")
    i_s, i_m = cols.index("score"), cols.index("member")
    for i, row in enumerate(reader, start=2):
        if not row or all(not c.strip() for c in row):
            continue
        if len(row) != len(cols):
            raise ValueError(f"--scores line {i}: {len(row)} fields, the header has "
                             f"{len(cols)}")
        raw_s, raw_m = row[i_s], row[i_m]
        try:
            scores.append(float(raw_s))
        except (TypeError, ValueError):
            raise ValueError(f"--scores line {i}: score {raw_s!r} is not a number") from None
        m = (raw_m or "").strip().lower()
        if m in _TRUE:
            member.append(True)
        elif m in _FALSE:
            member.append(False)
        elif _number(m) in (0.0, 1.0):  # 1.0 / 0.0 as pandas writes them, as in npz/npy
            member.append(_number(m) == 1.0)
        else:
            raise ValueError(f"--scores line {i}: member must be 1/0 or true/false, "
                             f"got {raw_m!r}")
    s = np.asarray(scores, dtype=float)
    b = np.asarray(member, dtype=bool)
    return s[b], s[~b]


def _stream_read(raw: bytes, chunk: int):
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_io, "CSV_CHUNK_BYTES", chunk)
        return _io._read_stream(io.BytesIO(raw), "--scores")


def _same(raw: bytes, chunk: int):
    try:
        ref = reference_reader(raw)
    except ValueError as exc:
        with pytest.raises(ValueError) as err:
            _stream_read(raw, chunk)
        if " line " in str(exc):
            assert str(err.value) == str(exc), raw[:300]
        return "error"
    got = _stream_read(raw, chunk)
    for a, b in zip(got, ref, strict=True):
        assert a.dtype == b.dtype and a.shape == b.shape, raw[:300]
        np.testing.assert_array_equal(a, b)
    return "ok"


GOOD_SCORES = st.one_of(
    st.floats(allow_nan=False, width=64).map(repr),
    st.integers(-10**6, 10**6).map(str),
    st.sampled_from(["1e3", "-2.5E-3", " 0.5 ", "\t1\t", "inf", "-Infinity", "+.5", "5.",
                     "1_000", "١٢", "1e400", "\u30001", "nan"]),
)
BAD_SCORES = st.sampled_from(["", " ", "abc", "0x10", "1e", "_1", "1,5", "−1", "1__0"])
GOOD_MEMBERS = st.sampled_from(
    ["1", "0", "true", "False", " TRUE ", "yes", "n", "In", "out", "Member", "non-member",
     "nonmember", "t", "F", "\x85yes", "YES\u3000", " y\t", "1.0", "0.0", " 1.000000e+00",
     "-0", "+1.", ".0", "1E0"])
BAD_MEMBERS = st.sampled_from(["", "2", "maybe", "ＹＥＳ", "İn", "0.5", "2.0", "nan", "1.0.0",
                               "１.0", "1_0", "0x1", "inf", "-1"])


@st.composite
def csv_texts(draw):
    extra = draw(st.integers(0, 2))
    names = ["score", "member"] + [f"c{i}" for i in range(extra)]
    order = draw(st.permutations(names))
    header_cells = [draw(st.sampled_from([n, n.upper(), f" {n} ", n.title()])) for n in order]
    if draw(st.integers(0, 40)) == 0:
        header_cells.append(draw(st.sampled_from(["member", "score", "x"])))  # duplicates
    eol = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    lines = [",".join(header_cells)]
    for _ in range(draw(st.integers(0, 25))):
        kind = draw(st.integers(0, 120))
        if kind == 0:
            lines.append("")
        elif kind == 1:
            lines.append("  ")
        elif kind == 2:
            lines.append("," * (len(header_cells) - 1))
        else:
            cells = []
            for n in (c.strip().lower() for c in header_cells):
                if n == "score":
                    bad = kind > 4 and draw(st.integers(0, 60)) == 0
                    cells.append(draw(BAD_SCORES if bad else GOOD_SCORES))
                elif n == "member":
                    bad = kind > 4 and draw(st.integers(0, 60)) == 0
                    cells.append(draw(BAD_MEMBERS if bad else GOOD_MEMBERS))
                else:
                    cells.append(draw(st.sampled_from(["x", "", "7"])))
            if kind == 3:
                cells.append("9")  # ragged
            if kind == 4 and cells:
                cells[0] = f'"{cells[0]}"'  # quoted field
            lines.append(",".join(cells))
    text = eol.join(lines) + (eol if draw(st.booleans()) else "")
    raw = text.encode()
    if draw(st.integers(0, 15)) == 0:
        raw = b"\xef\xbb\xbf" + raw
    if draw(st.integers(0, 40)) == 0:
        pos = draw(st.integers(0, len(raw)))
        raw = raw[:pos] + draw(st.sampled_from([b"\x00", b"\xff", b"\xc3"])) + raw[pos:]
    return raw


@settings(max_examples=400, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(raw=csv_texts(), chunk=st.sampled_from([1, 7, 16, 64, 8 * 2**20]))
def test_streaming_loader_matches_the_previous_loader(raw, chunk):
    _same(raw, chunk)


def test_error_lines_are_counted_across_chunks():
    rows = "".join(f"{i * 0.5},{i % 2}\n" for i in range(500))
    raw = f"score,member\n{rows}oops,1\n".encode()
    for chunk in (10, 100, 1000, 8 * 2**20):
        with pytest.raises(ValueError, match="line 502: score 'oops' is not a number"):
            _stream_read(raw, chunk)
    raw = f"score,member\n{rows}1,1,1\n".encode()
    with pytest.raises(ValueError, match="line 502: 3 fields, the header has 2"):
        _stream_read(raw, 64)


@pytest.mark.parametrize("raw,msg", [
    (b"score,member,member\n1,1,0\n", "appears 2 times"),
    (b"score,label\n1,1\n", "must contain columns"),
    (b"", "must contain columns"),
    (b"score,member\n1,1\n2,0\x00\n", "NUL"),
    (b"score,member\n1,1\n\xff,0\n", "UTF-8"),
    (b"score,member\n1,1\n2,0,3\n", "line 3: 3 fields"),
    (b"score,member\n1,maybe\n", "line 2: member must be"),
])
def test_validations_are_kept(raw, msg):
    for chunk in (1, 5, 8 * 2**20):
        with pytest.raises(ValueError, match=msg):
            _stream_read(raw, chunk)


def test_stdin_and_bom(monkeypatch):
    raw = b"\xef\xbb\xbf Score ,MEMBER\r\n1.5,yes\r\n-2,no\r\n"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(raw)))
    m, n = _io.read_scores_csv("-")
    assert m.tolist() == [1.5] and n.tolist() == [-2.0]


def test_stdin_larger_than_the_limit_is_refused(monkeypatch):
    monkeypatch.setattr(_io, "MAX_CSV_BYTES", 1000)
    monkeypatch.setattr(_io, "CSV_CHUNK_BYTES", 100)
    raw = b"score,member\n" + b"1.0,1\n" * 400
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(raw)))
    with pytest.raises(ValueError, match="larger than"):
        _io.read_scores_csv("-")


def test_peak_memory_is_bounded_by_the_result_and_one_chunk(tmp_path, monkeypatch):
    """200,000 rows: the arrays are 1.8 MB; the list-based reader peaked near 25 MB."""
    n = 200_000
    rng = np.random.default_rng(0)
    path = tmp_path / "big.csv"
    with open(path, "w") as fh:
        fh.write("score,member\n")
        np.savetxt(fh, np.c_[rng.normal(size=n), rng.integers(0, 2, n)], fmt=["%.6f", "%d"],
                   delimiter=",")
    monkeypatch.setattr(_io, "CSV_CHUNK_BYTES", 256 * 1024)
    tracemalloc.start()
    try:
        m, non = _io.read_scores_csv(str(path))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert m.size + non.size == n
    result = 9 * n
    assert peak < 2 * result + 40 * 256 * 1024, peak  # 2x: the parts and their concatenation


# -- --higher-is -----------------------------------------------------------------------------
@pytest.fixture
def losses(tmp_path):
    rng = np.random.default_rng(5)
    mem = rng.normal(-1.0, 1.0, 300)  # members have lower losses
    non = rng.normal(0.0, 1.0, 300)
    path = tmp_path / "loss.csv"
    rows = [f"{float(v)!r},1" for v in mem] + [f"{float(v)!r},0" for v in non]
    path.write_text("score,member\n" + "\n".join(rows) + "\n")
    return path, mem, non


@pytest.mark.parametrize("method", ["band", "dkw", "cp", "gdp", "one-run"])
def test_higher_is_nonmember_audits_the_negated_scores(losses, capsys, method):
    path, mem, non = losses
    rc, out, _ = run_cli(capsys, ["audit", "--scores", str(path), "--delta", "1e-5",
                                  "--method", method, "--higher-is", "nonmember", "--json"])
    assert rc == 0, out
    got = json.loads(out)
    ref = epsilon_lower_bound(-mem, -non, delta=1e-5, method=method)
    assert got["epsilon_lower_bound"] == ref.epsilon_lower_bound > 0
    assert got["threshold"] == -ref.threshold  # on the file's scale
    assert got["higher_is"] == "nonmember" and got["assumption"] == ref.assumption
    rc, out, _ = run_cli(capsys, ["audit", "--scores", str(path), "--delta", "1e-5",
                                  "--method", method, "--json"])
    assert json.loads(out)["epsilon_lower_bound"] < got["epsilon_lower_bound"]


def test_higher_is_with_preregistered_thresholds(losses, capsys):
    path, mem, non = losses
    rc, out, _ = run_cli(capsys, ["audit", "--scores", str(path), "--delta", "1e-5",
                                  "--method", "cp", "--threshold", "-1.5", "--higher-is",
                                  "nonmember", "--json"])
    got = json.loads(out)
    ref = epsilon_lower_bound(-mem, -non, delta=1e-5, method="cp", thresholds=[1.5])
    assert got["epsilon_lower_bound"] == ref.epsilon_lower_bound
    assert got["threshold"] == -1.5 and got["assumption"] == "iid-games+preregistered"


def test_text_output_names_direction_and_assumption(losses, capsys):
    path, _, _ = losses
    rc, out, _ = run_cli(capsys, ["audit", "--scores", str(path), "--delta", "1e-5",
                                  "--method", "gdp", "--higher-is", "nonmember"])
    assert rc == 0
    assert "score <" in out and "lower = member" in out
    assert "assumes:" in out and "mu-GDP" in out and "[mu-gdp]" in out


def test_help_says_which_way_is_member(capsys):
    with pytest.raises(SystemExit):
        run_cli(capsys, ["audit", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--higher-is {member,nonmember}" in text and "lower = member" in text


@pytest.mark.parametrize("value", ["loss", "", "MEMBER", "higher"])
def test_higher_is_bad_values(losses, capsys, value):
    path, _, _ = losses
    assert_json_error(capsys, ["audit", "--scores", str(path), "--delta", "1e-5",
                               "--higher-is", value], kinds={"usage"})
