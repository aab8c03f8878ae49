"""Bad-input table over every ``semi-core`` command: one JSON error object, exit 2, no traceback.

Each case is a command line that must be refused *before* any long work. The contract
(:func:`semi_core.cli.main`): under ``--json`` exactly one JSON object with ``error`` and a
stable ``kind`` (never ``internal``), exit code 2; without ``--json`` one line on stderr and
nothing on stdout. ``{name}`` placeholders are files made by the ``files`` fixture (bad
``.npy``/``.npz``/CSV/IDX files, unwritable places). The classes of bad input: usage errors,
invalid values (NaN/inf/out of range/wrong type), silent reinterpretation, resources, files,
output paths, remote trust (hang guard: every case must answer within ``HANG_SECONDS``).
"""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest

from semi_core.cli import COMMAND_MODULES

from .conftest import assert_json_error, run_cli

COMMANDS = [m.replace("_", "-") for m in COMMAND_MODULES]

# -- value classes ------------------------------------------------------------------------------
NONNUM = ["abc", "", "1,5", "0x10"]
NONFINITE = ["nan", "inf", "-inf", "1e999"]
INT_BAD = ["abc", "", "2.5", "nan"]


def _cases():
    cases: list[tuple[str, list[str], set[str] | None]] = []

    def add(cls, base, flag, values, kinds=None):
        for v in values:
            cases.append((cls, [*base, flag, v], kinds))

    # -- power -------------------------------------------------------------------------------
    b = ["power"]
    add("invalid", b, "--n", ["1", "0", "-5", *INT_BAD])
    add("invalid", b, "--T", ["0", "-1", *INT_BAD])
    add("invalid", b, "--mu", NONNUM + NONFINITE)
    add("invalid", b, "--sigma", ["0", "-1", "-1e-5", "1e-320", *NONNUM, *NONFINITE])
    add("invalid", b, "--target", ["1e200", *NONNUM, *NONFINITE])
    add("invalid", b, "--dim", ["0", "-1", *INT_BAD])
    add("resource", b, "--dim", ["100000", "1000000000"], {"resource"})
    add("invalid", b, "--tau", ["0", "11", "-1", "abc", "", "1.5", "uniformly", "all"])
    add("invalid", b, "--fpr", ["0", "1", "-0.1", "1.5", "-1e-5", *NONNUM, *NONFINITE])
    add("usage", b, "--test", ["nope", "", "SEMI-STAR", "semi-unif"], {"usage"})
    add("files", b, "--cov", ["{npz}", "{empty}", "{complex}", "{object}", "{vector}",
                              "{nonsym}", "{notpd}", "{nancov}", "{text}", "{missing}", "{dir}",
                              "{cube}", "{strings}", ""])
    add("files", b, "--target-file", ["{npz}", "{complex}", "{object}", "{matrix}",
                                      "{nanvec}", "{text}", "{missing}", "{emptyvec}", ""])
    cases.append(("reinterpret", ["power", "--dim", "5", "--cov", "{cov3}"], None))
    cases.append(("reinterpret", ["power", "--dim", "2", "--target-file", "{vec3}"], None))
    cases.append(("reinterpret", ["power", "--cov", "{cov2}", "--target-file", "{vec3}"], None))
    cases.append(("reinterpret", ["power", "--T", "3", "--tau", "5"], None))

    # -- simulate ----------------------------------------------------------------------------
    b = ["simulate", "--rounds", "200", "--no-progress"]
    add("invalid", b, "--n", ["1", "0", *INT_BAD])
    add("invalid", b, "--T", ["0", *INT_BAD])
    add("invalid", b, "--mu", NONFINITE + ["abc"])
    add("invalid", b, "--sigma", ["0", "-1", *NONFINITE, "abc"])
    add("invalid", b, "--target", ["1e200", "-1e200", *NONFINITE, "abc"])
    add("invalid", b, "--dim", ["0", "-2", *INT_BAD])
    add("invalid", b, "--tau", ["0", "11", "x", "", "all"])
    add("invalid", b, "--rounds", ["0", "-1", "abc", "2.5", "nan", ""])
    add("resource", b, "--rounds", ["1e13", "1000000000000000"], {"resource"})
    add("invalid", b, "--seed", ["-1", "abc", "1.5", "", "combining_mi_updates"])
    add("invalid", b, "--p-member", ["0", "1", "-0.5", "1.5", "nan", "inf", "abc"])
    add("usage", b, "--mode", ["nope", "EXACT", ""], {"usage"})
    add("invalid", b, "--data", ["gamma", "student-t:2", "student-t:x", "student-t:nan",
                                 "bernoulli:1.5", "bernoulli:0", "bernoulli:", "", ":", "student-t"])
    add("invalid", b, "--threads", ["0", "-1", "abc", "1.5"])
    add("invalid", b, "--workers", ["0", "-1", "abc"])
    add("invalid", b, "--chunk-size", ["0", "-1", "abc", ""])
    add("invalid", b, "--connect-timeout", ["0", "-1", "nan", "inf", "abc"])
    add("invalid", b, "--max-variates", ["0", "-1", "nan", "abc"])
    add("resource", b, "--max-variates", ["10", "1000"], {"resource"})
    add("files", b, "--cov", ["{npz}", "{empty}", "{complex}", "{object}", "{nonsym}",
                              "{notpd}", "{text}", "{missing}", "{dir}"])
    add("files", b, "--target-file", ["{npz}", "{complex}", "{object}", "{matrix}",
                                      "{nanvec}", "{missing}"])
    cases.append(("invalid", [*b, "--mode", "sufficient", "--data", "laplace"], None))
    cases.append(("invalid", [*b, "--scheduler", "tcp://127.0.0.1:1", "--workers", "2"], None))
    cases.append(("reinterpret", [*b, "--dim", "5", "--cov", "{cov3}"], None))
    cases.append(("reinterpret", [*b, "--T", "2", "--tau", "5"], None))
    # a job this small runs in-process by default and never connects: --small-jobs cluster
    # makes it connect, so the connection's failures are the ones reported
    c = [*b, "--small-jobs", "cluster"]
    cases.append(("remote", [*c, "--scheduler", "tcp://127.0.0.1:1"],
                  {"connection", "timeout"}))
    # a malformed address is refused from the arguments, whatever the job's size
    for sj in ([], ["--small-jobs", "cluster"]):
        cases.append(("remote", [*b, *sj, "--scheduler", ""], None))
        cases.append(("remote", [*b, *sj, "--scheduler", "tcp://:80"], None))
        cases.append(("remote", [*b, *sj, "--scheduler", "tcp://host-without-port"], None))
    cases.append(("remote", [*c, "--scheduler", "{silent}", "--connect-timeout", "0.5"],
                  {"timeout"}))
    cases.append(("remote", [*c, "--scheduler", "{junk}", "--connect-timeout", "2"],
                  {"connection"}))
    cases.append(("remote", [*c, "--scheduler", "{junk}"], {"connection"}))

    # -- audit -------------------------------------------------------------------------------
    b = ["audit", "--scores", "{csv}"]
    add("invalid", [*b], "--delta", ["-1e-5", "1", "1.5", "-1", *NONNUM, *NONFINITE])
    b = ["audit", "--scores", "{csv}", "--delta", "1e-5"]
    add("invalid", b, "--failure-prob", ["0", "0.6", "1", "-0.1", *NONNUM, *NONFINITE])
    add("invalid", b, "--alpha", ["0", "0.7", "nan", "abc"])
    add("usage", b, "--method", ["nope", "", "DKW"], {"usage"})
    add("usage", b, "--sides", ["three", ""], {"usage"})
    add("usage", b, "--gdp-fit", ["nope"], {"usage"})
    add("invalid", b, "--seed", ["-1", "abc", "0.5"])
    add("invalid", b, "--threshold", ["abc", ""])
    cases.append(("reinterpret", [*b, "--method", "cp", "--gdp-fit", "gaussian"], None))
    cases.append(("reinterpret", [*b, "--method", "dkw", "--threshold", "0.5"], None))
    add("files", ["audit", "--delta", "1e-5"], "--scores",
        ["{missing}", "{dir}", "", "{csv_empty}", "{csv_header_only}", "{csv_no_member}",
         "{csv_dup_member}", "{csv_dup_score}", "{csv_nan}", "{csv_bad_score}",
         "{csv_bad_member}", "{csv_all_members}", "{csv_no_members}", "{csv_binary}",
         "{csv_latin1}", "{csv_ragged}", "{csv_nul}", "{npz}", "{gz_corrupt}",
         "{csv_semicolon}", "{csv_bom_dup}"])
    cases.append(("usage", ["audit", "--delta", "1e-5"], {"usage"}))
    cases.append(("usage", ["audit", "--scores", "{csv}"], {"usage"}))

    # -- epsilon -----------------------------------------------------------------------------
    b = ["epsilon", "--delta", "1e-5"]
    add("invalid", b, "--gdp-mu", ["-1", "1e300", "1e7", *NONNUM, *NONFINITE])
    add("invalid", b, "--mu", ["-1", "1e300", "nan", "abc"])
    add("invalid", b, "--noise", ["0", "-1", "1e-300", *NONNUM, *NONFINITE])
    add("invalid", b, "--sigma", ["0", "-2", "nan"])
    add("invalid", [*b, "--noise", "1"], "--sensitivity", ["0", "-1", "nan", "inf", "abc"])
    add("invalid", ["epsilon", "--gdp-mu", "1"], "--delta",
        ["-1e-5", "1", "2", *NONNUM, *NONFINITE])
    cases.append(("invalid", [*b], None))
    cases.append(("invalid", [*b, "--gdp-mu", "1", "--noise", "1"], None))
    cases.append(("usage", ["epsilon", "--gdp-mu", "1"], {"usage"}))

    # -- audit-game --------------------------------------------------------------------------
    b = ["audit-game", "--rounds", "200", "--mu-levels", "2"]
    add("invalid", b, "--n", ["1", "0", *INT_BAD])
    add("resource", b, "--n", ["1000000000000"], {"resource"})
    add("invalid", b, "--T", ["0", *INT_BAD])
    add("invalid", b, "--tau", ["0", "11", "abc", "uniform", "all"])
    add("invalid", b, "--clip", ["0", "-1", *NONFINITE, "abc"])
    add("invalid", b, "--data-mean", [*NONFINITE, "abc"])
    add("invalid", b, "--data-std", ["0", "-1", *NONFINITE])
    add("invalid", b, "--target", ["2", "-1.5", *NONFINITE])
    add("invalid", ["audit-game", "--rounds", "200"], "--mu-levels",
        ["0", "-1", "nan", "inf", "abc"])
    add("invalid", ["audit-game", "--rounds", "200"], "--noise", ["0", "-1", "nan", "inf", "abc"])
    add("invalid", b, "--rounds", ["0", "-1", "abc", "1.5"])
    add("invalid", b, "--delta", ["-1e-5", "1", "nan", "abc"])
    add("invalid", b, "--failure-prob", ["0", "0.7", "nan", "abc"])
    add("invalid", b, "--alpha", ["0", "0.9"])
    add("usage", b, "--method", ["nope"], {"usage"})
    add("invalid", b, "--seed", ["-1", "abc"])
    cases.append(("usage", ["audit-game", "--noise", "1", "--mu-levels", "2"], {"usage"}))
    cases.append(("usage", ["audit-game", "--mu-levels"], {"usage"}))

    # -- audit-dpsgd (every refusal happens before training) ---------------------------------
    b = ["audit-dpsgd", "--rounds", "4", "--steps", "2", "--batch-size", "8"]
    add("invalid", b, "--epsilon", ["0", "-1", "nan", "abc", "", "-inf"])
    add("invalid", b, "--delta", ["-1e-5", "1", "nan", "0", "abc"])
    add("invalid", b, "--tau", ["0", "3", "abc", "uniform"])
    add("invalid", b, "--steps", ["0", "abc"])
    add("invalid", b, "--batch-size", ["1", "0", "abc"])
    add("invalid", b, "--lr", ["0", "-1", "nan", "inf"])
    add("invalid", b, "--clip", ["0", "-1", "nan"])
    add("reinterpret", b, "--n-reference", ["1", "100000", "abc"])
    add("invalid", b, "--failure-prob", ["0", "0.7", "nan"])
    add("invalid", b, "--seed", ["-1", "abc"])
    add("invalid", b, "--rounds", ["0", "abc"])
    add("usage", b, "--dataset", ["mnist", ""], {"usage"})
    add("usage", b, "--model", ["resnet"], {"usage"})
    cases.append(("reinterpret", [*b, "--data-dir", "{dir}"], None))
    add("files", [*b, "--dataset", "fashion-mnist"], "--data-dir",
        ["{missing}", "{idx_empty_dir}", "{idx_corrupt_gz}", "{idx_bomb}", "{idx_huge_decl}",
         "{idx_float}",
         "{idx_label_256}", "{idx_truncated}", "{idx_trailing}", "{idx_badmagic}"])
    cases.append(("invalid", [*b, "--dataset", "fashion-mnist"], None))

    # -- verify / derive / reproduce: output paths before any work ---------------------------
    add("output", ["verify"], "--errata", ["", "{dir}", "{missing_dir}/e.md", "{ro}/e.md",
                                          "{tmp}/e.txt"])
    add("output", ["verify"], "--latex", ["", "{dir}", "{missing_dir}/v.tex", "{ro}/v.tex",
                                         "{tmp}/v.pdf"])
    add("usage", ["verify"], "--paper", ["nope", ""], {"usage"})
    add("invalid", ["verify"], "--seed", ["combining_mi_updates", "-1", "abc"])
    add("invalid", ["verify"], "--claim", ["no-such-claim", "nope:x"])
    add("output", ["derive"], "--latex", ["", "{dir}", "{missing_dir}/d.tex", "{tmp}/d.pdf",
                                         "{ro}/d.tex"])
    add("invalid", ["derive"], "--name", ["nope", ""])
    add("output", ["reproduce", "--quick", "--no-progress"], "--out",
        ["", "   ", "{file}", "{ro}/report", "{file}/sub"])
    add("invalid", ["reproduce", "--quick", "--out", "{tmp}/rep"], "--section",
        ["nope", "semi_core.report.nope", ""])
    add("invalid", ["reproduce", "--quick", "--out", "{tmp}/rep"], "--seed", ["-1", "abc"])

    # -- every discovered command: usage errors ----------------------------------------------
    for cmd in COMMANDS:
        cases.append(("usage", [cmd, "--no-such-flag"], {"usage"}))
        cases.append(("usage", [cmd, "--no-such-flag", "1"], {"usage"}))
        # a command with a positional argument (example-data DIR) reads the junk as its value
        junk_kinds = {"invalid_argument"} if cmd == "example-data" else {"usage"}
        cases.append(("usage", [cmd, "positional-junk"], junk_kinds))
        cases.append(("usage", [cmd, "--json=yes"], {"usage"}))
    for argv in ([], ["nosuch"], ["--version-x"], ["POWER"], ["power", "--n"],
                 ["power", "--n", "--T", "3"], ["simulate", "--rounds"], ["audit", "--delta"]):
        cases.append(("usage", list(argv), {"usage"}))
    return cases


CASES = _cases()


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Paths of good and bad input files and of unwritable places."""
    import os
    import socket
    import threading

    d = tmp_path_factory.mktemp("bad_inputs")
    f = {"tmp": str(d), "missing": str(d / "nope.npy"), "missing_dir": str(d / "no" / "dir")}
    (d / "adir").mkdir()
    f["dir"] = str(d / "adir")
    np.savez(d / "c.npz", a=np.eye(2))
    f["npz"] = str(d / "c.npz")
    for name, arr in {"empty": np.zeros((0, 0)), "complex": np.eye(2) * (1 + 1j),
                      "vector": np.ones(3), "nonsym": np.array([[1.0, 0.5], [0.0, 1.0]]),
                      "notpd": np.array([[1.0, 2.0], [2.0, 1.0]]),
                      "nancov": np.array([[1.0, np.nan], [np.nan, 1.0]]),
                      "cube": np.ones((2, 2, 2)), "strings": np.array([["a", "b"], ["c", "d"]]),
                      "matrix": np.eye(2), "nanvec": np.array([1.0, np.nan]),
                      "emptyvec": np.zeros(0), "cov3": np.eye(3), "cov2": np.eye(2),
                      "vec3": np.ones(3)}.items():
        np.save(d / f"{name}.npy", arr)
        f[name] = str(d / f"{name}.npy")
    np.save(d / "object.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    f["object"] = str(d / "object.npy")
    (d / "text.npy").write_text("not a numpy file\n")
    f["text"] = str(d / "text.npy")
    (d / "file").write_text("x")
    f["file"] = str(d / "file")
    ro = d / "ro"
    ro.mkdir()
    f["ro"] = "/proc/semi_core_ro" if os.geteuid() == 0 else str(ro)
    if os.geteuid() != 0:
        ro.chmod(0o500)

    rng = np.random.default_rng(0)
    good = ["score,member"] + [f"{s},1" for s in rng.normal(1, 1, 60)] + [
        f"{s},0" for s in rng.normal(0, 1, 60)]
    csvs = {
        "csv": "\n".join(good) + "\n",
        "csv_empty": "",
        "csv_header_only": "score,member\n",
        "csv_no_member": "score,label\n1.0,1\n",
        "csv_dup_member": "score,member,member\n1.0,1,0\n0.5,0,1\n",
        "csv_dup_score": "score,Score,member\n1.0,2.0,1\n0.5,0.1,0\n",
        "csv_nan": "score,member\nnan,1\n0.0,0\n",
        "csv_bad_score": "score,member\n1.0x,1\n0.0,0\n",
        "csv_bad_member": "score,member\n1.0,maybe\n0.0,0\n",
        "csv_all_members": "score,member\n1.0,1\n2.0,1\n",
        "csv_no_members": "score,member\n1.0,0\n2.0,0\n",
        "csv_ragged": "score,member\n1.0,1,extra\n0.0,0\n",
        "csv_semicolon": "score;member\n1.0;1\n0.0;0\n",
        "csv_bom_dup": "\ufeffscore,member,score\n1,1,2\n",
    }
    for name, text in csvs.items():
        (d / f"{name}.csv").write_text(text, encoding="utf-8")
        f[name] = str(d / f"{name}.csv")
    (d / "bin.csv").write_bytes(bytes(range(256)) * 4)
    f["csv_binary"] = str(d / "bin.csv")
    (d / "latin1.csv").write_bytes("score,member\n1.0,\xe9\n".encode("latin-1"))
    f["csv_latin1"] = str(d / "latin1.csv")
    (d / "nul.csv").write_bytes(b"score,member\n1.0\x00,1\n0,0\n")
    f["csv_nul"] = str(d / "nul.csv")
    (d / "corrupt.csv.gz").write_bytes(b"\x1f\x8b\x08\x00garbage")
    f["gz_corrupt"] = str(d / "corrupt.csv.gz")

    def idx(dtype_code, dims, payload=None):
        head = bytes([0, 0, dtype_code, len(dims)]) + b"".join(
            int(v).to_bytes(4, "big") for v in dims)
        if payload is None:
            item = {0x08: 1, 0x0D: 4}[dtype_code]
            payload = bytes(int(np.prod(dims)) * item)
        return head + payload

    def idx_dir(name, images: bytes, labels: bytes, gz=False):
        p = d / name
        p.mkdir()
        suffix = ".gz" if gz else ""
        for stem, data in (("train-images-idx3-ubyte", images),
                           ("train-labels-idx1-ubyte", labels)):
            (p / (stem + suffix)).write_bytes(gzip.compress(data) if gz else data)
        f[name] = str(p)

    (d / "idx_empty_dir").mkdir()
    f["idx_empty_dir"] = str(d / "idx_empty_dir")
    good_lab = idx(0x08, (4,), bytes([0, 1, 2, 3]))
    idx_dir("idx_corrupt_gz", b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03garbage", good_lab)
    (d / "idx_corrupt_gz" / "train-images-idx3-ubyte").rename(
        d / "idx_corrupt_gz" / "train-images-idx3-ubyte.gz")
    idx_dir("idx_bomb", gzip.compress(idx(0x08, (60000, 28, 28))[:16] + bytes(10 ** 6)),
            good_lab)
    # the header declares 2 GiB of images: refused before reading
    idx_dir("idx_huge_decl", idx(0x08, (40000, 256, 256), b""), good_lab)
    idx_dir("idx_float", idx(0x0D, (4, 2, 2)), good_lab)
    idx_dir("idx_label_256", idx(0x08, (4, 2, 2)), idx(0x08, (4,), bytes([0, 1, 255, 3])))
    idx_dir("idx_truncated", idx(0x08, (4, 2, 2))[:-3], good_lab)
    idx_dir("idx_trailing", idx(0x08, (4, 2, 2)) + b"extra", good_lab)
    idx_dir("idx_badmagic", b"\x01\x02\x03\x04" + bytes(20), good_lab)

    # a TCP port that accepts connections and never answers (a hang without a timeout)
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    conns = []

    def accept():
        while True:
            try:
                conns.append(srv.accept()[0])
            except OSError:
                return

    threading.Thread(target=accept, daemon=True).start()
    f["silent"] = f"tcp://127.0.0.1:{srv.getsockname()[1]}"
    # a service that is not Dask: greets with bytes that read as a 3 EiB frame length
    junk = socket.socket()
    junk.bind(("127.0.0.1", 0))
    junk.listen(8)

    def greet():
        while True:
            try:
                c, _ = junk.accept()
            except OSError:
                return
            conns.append(c)
            c.sendall(b"HTTP/1.1 400 Bad Request\r\n\r\n")

    threading.Thread(target=greet, daemon=True).start()
    f["junk"] = f"tcp://127.0.0.1:{junk.getsockname()[1]}"
    yield f
    srv.close()
    junk.close()
    for c in conns:
        c.close()
    if os.geteuid() != 0:
        ro.chmod(0o700)


def _fill(argv, files):
    return [a.format(**files) if "{" in a else a for a in argv]


def _id(case):
    cls, argv, _ = case
    return f"{cls}:" + " ".join(argv)[:80]


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_bad_input_json_contract(case, files, capsys, no_hang):
    cls, argv, kinds = case
    assert_json_error(capsys, _fill(argv, files), kinds)


# Without --json: one line on stderr, nothing on stdout (a sample of every class).
TEXT_CASES = CASES[::7]


@pytest.mark.parametrize("case", TEXT_CASES, ids=[_id(c) for c in TEXT_CASES])
def test_bad_input_text_contract(case, files, capsys, no_hang):
    _cls, argv, _kinds = case
    rc, out, err = run_cli(capsys, _fill(argv, files))
    assert rc == 2 and out == ""
    # warnings and progress lines (a slow refusal reports progress as any command) aside
    lines = [ln for ln in err.splitlines() if not ln.startswith("semi-core: warning:")
             and not (" elapsed" in ln and ": error: " not in ln)]
    assert len(lines) == 1 and ": error: " in lines[0], err
    assert "Traceback" not in err


def test_every_command_is_in_the_table():
    seen = {argv[0] for _c, argv, _k in CASES if argv}
    assert set(COMMANDS) <= seen


def test_deprecated_alias_warns_and_works(files, capsys, no_hang):
    rc, out, err = run_cli(capsys, ["audit", "--scores", files["csv"], "--delta", "1e-5",
                                    "--alpha", "0.1", "--json"])
    assert rc == 0 and json.loads(out)["failure_prob"] == pytest.approx(0.1)
    assert "--alpha is deprecated" in err
    rc, out, _ = run_cli(capsys, ["epsilon", "--mu", "1", "--delta", "1e-5", "--json"])
    assert rc == 0 and json.loads(out)["epsilon"] == pytest.approx(4.377178095681224, rel=1e-9)


def test_bom_and_stdin_are_accepted(files, capsys, monkeypatch, tmp_path, no_hang):
    import io
    import sys

    text = open(files["csv"], encoding="utf-8").read()
    bom = tmp_path / "bom.csv"
    bom.write_bytes(b"\xef\xbb\xbf" + text.replace("score,member", " Score , MEMBER ").encode())
    rc, out, _ = run_cli(capsys, ["audit", "--scores", str(bom), "--delta", "1e-5", "--json"])
    ref_rc, ref, _ = run_cli(capsys, ["audit", "--scores", files["csv"], "--delta", "1e-5",
                                      "--json"])
    got, want = json.loads(out), json.loads(ref)
    # the same audit; only the file it names differs
    assert got.pop("input")["scores"] == str(bom) and want.pop("input")["scores"] == files["csv"]
    assert rc == ref_rc == 0 and got == want
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode())))
    rc, out, _ = run_cli(capsys, ["audit", "--scores", "-", "--delta", "1e-5", "--json"])
    got = json.loads(out)
    assert rc == 0 and got.pop("input")["scores"] == "-" and got == want


def test_negative_scientific_number_is_a_value(files, capsys):
    obj = assert_json_error(capsys, ["audit", "--scores", files["csv"], "--delta", "-1e-5"])
    assert "--delta must be in [0, 1)" in obj["error"]


def test_existing_output_file_is_kept_when_refused(files, capsys, tmp_path):
    target = tmp_path / "keep.md"
    target.write_text("precious")
    assert_json_error(capsys, ["verify", "--errata", str(target), "--claim", "no-such-claim"])
    assert target.read_text() == "precious"


def test_one_vocabulary_across_commands():
    """Same flag => same default (and type) in every command that has it."""
    from semi_core.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    seen: dict[str, dict] = {}
    for cmd, p in sub.choices.items():
        for act in p._actions:
            for opt in act.option_strings:
                if opt in ("-h", "--help"):
                    continue
                seen.setdefault(opt, {})[cmd] = (act.dest, act.default)
    # shared by every command (new ones included): one dest, one default
    for flag in ("--seed", "--failure-prob", "--json", "--progress", "--delta"):
        dests = {v[0] for v in seen.get(flag, {}).values()}
        assert len(dests) <= 1, (flag, seen[flag])
    for flag in ("--seed", "--failure-prob", "--json", "--progress"):
        # a default of None marks a flag refused where it does not apply (audit's --seed is
        # 0 where it applies): the same meaning, not a second default
        values = {v for v in seen.get(flag, {}).values() if v[1] is not None}
        assert len(values) <= 1, (flag, seen[flag])
    # the mechanism vocabulary of the commands built on cli._options
    mine = {"power", "simulate", "audit-game", "audit", "audit-dpsgd", "epsilon", "verify",
            "reproduce", "derive"}
    for flag in ("--tau", "--method", "--dim", "--target-file", "--cov", "--n", "--T"):
        values = {v for c, v in seen.get(flag, {}).items() if c in mine}
        assert len(values) <= 1, (flag, seen[flag])
    assert "--alpha" not in seen.get("power", {})
    assert "--rng-seed" in {o for o in seen if seen[o].get("verify")}
    assert seen["--paper"]["verify"][0] == "paper"
