"""CLI start-up: ``semi-core --help`` and a few commands against the interpreter's floor.

Each line is a fresh ``python -c`` process (what a user's shell starts), timed by its CPU time
(user + system, from ``os.wait4``: robust to other load on the machine) and wall time, best of
``repeat``; peak RSS from the same ``wait4``. References timed in the same run:

* ``python -c pass``: the floor of any Python command line;
* ``import numpy, scipy.special``: the floor the issue sets for commands that need neither torch
  nor SymPy (a six-line SciPy script).

Then the band audit, cold (first call in a process) vs warm (second call): 10^4 scores per
side (the band calibration is looked up in the shipped table) and the off-table sizes 9,999,
12,345 and 1,234,567 per side (simulated once per process). ``semi-core audit`` is timed at
10^4 and at 12,345 per class (off the table).

``python -m benchmarks.bench_cli --before /tmp/before`` also times the same lines with another
checkout first on ``sys.path`` (the code before a change), in the same run.

Two things keep the ratios fair on a shared, drifting machine:

* **Bytecode.** NumPy and SciPy start from the bytecode ``pip`` compiled at install; an
  installed semi_core has it too, but an editable checkout run with ``PYTHONDONTWRITEBYTECODE=1``
  compiles every semi_core module from source at each start (~0.1 s). The benchmark compiles
  each timed checkout's ``semi_core`` first (``compileall``, as ``pip install`` does;
  ``--no-compile`` skips it and times the source compile too).
* **Alternation.** Each command is timed alternately with ``import numpy, scipy.special``
  (``repeat`` pairs); ``x np+sp`` is best-of command over best-of the floor from the same pairs.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: (label, python -c code); the CLI lines call ``semi_core.cli.main`` as the console script does.
_CLI = "import sys; from semi_core.cli import main; sys.exit(main({argv!r}))"
LINES: list[tuple[str, str]] = [
    ("python -c pass", "pass"),
    ("import numpy, scipy.special", "import numpy, scipy.special"),
    ("semi-core --help", _CLI.format(argv=["--help"])),
    ("semi-core power --help", _CLI.format(argv=["power", "--help"])),
    ("semi-core audit-opacus --help", _CLI.format(argv=["audit-opacus", "--help"])),
    ("semi-core epsilon --gdp-mu 1", _CLI.format(argv=["epsilon", "--gdp-mu", "1", "--delta",
                                                         "1e-5", "--json"])),
    ("semi-core power --T 10", _CLI.format(argv=["power", "--T", "10", "--json"])),
    # the other torch-free commands (small work: start-up and imports dominate)
    ("semi-core audit-game --help", _CLI.format(argv=["audit-game", "--help"])),
    ("semi-core audit-game --rounds 200", _CLI.format(argv=["audit-game", "--rounds", "200",
                                                             "--json"])),
    ("semi-core simulate --rounds 2000", _CLI.format(argv=["simulate", "--rounds", "2000",
                                                            "--json"])),
    ("semi-core seq-audit --max-obs 100", _CLI.format(argv=["seq-audit", "--epsilon", "0.01",
                                                             "--max-obs", "100", "--json"])),
    ("semi-core leakage --d 100 --n 50", _CLI.format(argv=["leakage", "--d", "100", "--n", "50",
                                                            "--json"])),
]


# The child reports its own peak RSS (VmHWM of its own address space) at exit: the rusage
# ru_maxrss of a child also counts the (forked) parent's memory before exec.
_PEAK = ("import atexit, sys\natexit.register(lambda: sys.stderr.write(\n    '\\nPEAK ' + "
         "[x for x in open('/proc/self/status') if x.startswith('VmHWM')][0]))\n")


def _run(code: str, pythonpath: str | None) -> tuple[float, float, float]:
    """(cpu seconds, wall seconds, peak RSS MiB) of one ``python -c code`` process."""
    env = dict(os.environ)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", _PEAK + code], env=env, cwd="/",
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    err = proc.stderr.read()
    _, status, ru = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0,):
        raise RuntimeError(f"{code!r} exited {proc.returncode}: {err[-500:]}")
    peak = [ln for ln in err.splitlines() if ln.startswith("PEAK VmHWM")]
    rss = float(peak[-1].split()[2]) / 1024.0 if peak else float("nan")
    return ru.ru_utime + ru.ru_stime, wall, rss


def _best(code: str, pythonpath: str | None, repeat: int) -> tuple[float, float, float]:
    runs = [_run(code, pythonpath) for _ in range(repeat)]
    return min(r[0] for r in runs), min(r[1] for r in runs), max(r[2] for r in runs)


_COLD_WARM = r"""
import json, time, numpy as np
from semi_core.audit import epsilon_lower_bound
rng = np.random.default_rng(0)
n = {n}
m, x = rng.normal(1, 1, n), rng.normal(0, 1, n)
t = []
for _ in range(2):
    t0 = time.process_time()
    epsilon_lower_bound(m, x, delta=1e-5, method="band")
    t.append(time.process_time() - t0)
print(json.dumps(t))
"""


_COLD_WARM_NUMPY = r"""
import json, time, numpy as np
rng = np.random.default_rng(0)
n = {n}
m, x = rng.normal(1, 1, n), rng.normal(0, 1, n)
ranks = np.linspace(0, n - 1, 410).astype(np.int64)
t = []
for _ in range(2):
    t0 = time.process_time()
    a = np.asarray(m, dtype=float)
    b = np.asarray(x, dtype=float)
    nan = int(np.isnan(a).sum() + np.isnan(b).sum())
    xs, ys = np.sort(b), np.sort(a)
    g = xs[ranks]
    le0 = np.searchsorted(xs, g, side="right")
    le1 = np.searchsorted(ys, g, side="right")
    with np.errstate(divide="ignore"):
        r = np.log(1.0 - le1 / n) - np.log((n - le0 + 1) / n)
    i = int(np.argmax(r))
    t.append(time.process_time() - t0)
print(json.dumps(t))
"""


def _cold_warm(path: str, n: int, repeat: int, script: str = _COLD_WARM) -> tuple[float, float]:
    """(cold, warm) CPU seconds of one band audit of ``n`` scores per side: the first call in a
    fresh process (imports excluded) and the second call in the same process."""
    import json

    env = dict(os.environ, PYTHONPATH=path)
    best = [float("inf"), float("inf")]
    for _ in range(repeat):
        out = subprocess.run([sys.executable, "-c", script.format(n=n)], env=env, cwd="/",
                             capture_output=True, text=True, check=True).stdout
        cold, warm = json.loads(out.strip().splitlines()[-1])
        best = [min(best[0], cold), min(best[1], warm)]
    return best[0], best[1]


def cold_warm_rows(before: str | None, repeat: int, sizes=(10_000, 9_999, 12_345, 1_234_567)
                   ) -> list[dict]:
    """Cold vs warm band audit (10^4 scores per side: a shipped calibration; the others are off
    the table).

    The floor: the NumPy operations of one audit alone (validate, sort both classes, search
    410 thresholds, log ratios), first vs second call in a fresh process: what any NumPy code
    pays on its first call (ufunc loop selection, first allocations) and no table can remove.
    """
    rows = []
    print("\n## Band audit, cold (first call in a process) vs warm (second call), CPU s")
    print(f"{'n per side':<12} {'code':<7} {'cold':>8} {'warm':>8} {'cold/warm':>10}")
    cold, warm = _cold_warm(str(ROOT), 10_000, repeat, _COLD_WARM_NUMPY)
    rows.append({"line": "NumPy floor n=10000", "code": "-", "cold_s": cold, "warm_s": warm,
                 "cold_over_warm": cold / warm})
    print(f"{'10000':<12} {'NumPy':<7} {cold:>8.4f} {warm:>8.4f} {cold / warm:>10.1f}")
    versions = [("now", str(ROOT))] + ([("before", before)] if before else [])
    for n in sizes:
        for version, path in versions:
            cold, warm = _cold_warm(path, n, repeat)
            rows.append({"line": f"band audit n={n}", "code": version, "cold_s": cold,
                         "warm_s": warm, "cold_over_warm": cold / warm})
            print(f"{n:<12} {version:<7} {cold:>8.4f} {warm:>8.4f} {cold / warm:>10.1f}")
    return rows


def _compile(path: str) -> bool:
    """Byte-compile ``path/semi_core`` in place, as ``pip install`` does for an installed copy;
    False (and a note) when it cannot (a read-only checkout: then its sources compile at each
    start, and the rows say so)."""
    import compileall
    import contextlib
    import io

    src = Path(path) / "semi_core"
    with contextlib.redirect_stdout(io.StringIO()):
        ok = bool(compileall.compile_dir(str(src), quiet=1, workers=1))
    if not ok:
        print(f"note: could not byte-compile {src}; its lines include the source compile")
    return ok


def main(quick: bool = False, before: str | None = None, compile_sources: bool = True
         ) -> list[dict]:
    repeat = 2 if quick else 6
    print(f"\n## CLI start-up (fresh process each, best of {repeat}; CPU = user + sys)")
    print(f"{'line':<36} {'code':<7} {'CPU s':>7} {'wall s':>7} {'MiB':>6} "
          f"{'x pass':>7} {'x np+sp':>8}")
    import tempfile

    import numpy as np

    tmp = tempfile.mkdtemp(prefix="bench_cli_")
    csv = os.path.join(tmp, "scores.csv")
    rng = np.random.default_rng(0)
    with open(csv, "w") as fh:  # 10^4 scores per class: a shipped band calibration
        fh.write("score,member\n")
        for member, mu in ((1, 1.0), (0, 0.0)):
            fh.writelines(f"{float(x)!r},{member}\n" for x in rng.normal(mu, 1.0, 10_000))
    csv2 = os.path.join(tmp, "scores_12345.csv")
    with open(csv2, "w") as fh:  # 12,345 per class: off the shipped table
        fh.write("score,member\n")
        for member, mu in ((1, 1.0), (0, 0.0)):
            fh.writelines(f"{float(x)!r},{member}\n" for x in rng.normal(mu, 1.0, 12_345))
    lines = LINES + [("semi-core audit (10^4 per class)", _CLI.format(
        argv=["audit", "--scores", csv, "--delta", "1e-5", "--json"])),
        ("semi-core audit (12,345 per class)", _CLI.format(
            argv=["audit", "--scores", csv2, "--delta", "1e-5", "--json"]))]
    floors = [(label, code) for label, code in lines if not label.startswith("semi-core")]
    cli = [(label, code) for label, code in lines if label.startswith("semi-core")]
    jobs = [("now", str(ROOT), cli)]
    if before:
        jobs.append(("before", before, cli))
    compiled = {path: compile_sources and _compile(path) for _, path, _ in jobs}
    rows: list[dict] = []
    for label, code in floors:
        cpu, wall, rss = _best(code, str(ROOT), repeat)
        floor = rows[0]["cpu_s"] if rows else cpu
        rows.append({"line": label, "code": "-", "cpu_s": cpu, "wall_s": wall, "rss_mib": rss,
                     "x_floor": cpu / floor, "x_numpy_scipy": 1.0})
        print(f"{label:<36} {'-':<7} {cpu:>7.3f} {wall:>7.3f} {rss:>6.0f} "
              f"{rows[-1]['x_floor']:>7.1f} {'':>8}")
    np_sp_code = dict(floors)["import numpy, scipy.special"]
    for version, path, lines in jobs:
        for label, code in lines:
            runs, paired = [], []
            for _ in range(repeat):  # alternate with the floor: both see the same load
                paired.append(_run(np_sp_code, path)[0])
                runs.append(_run(code, path))
            cpu, wall = min(r[0] for r in runs), min(r[1] for r in runs)
            rss, np_sp = max(r[2] for r in runs), min(paired)
            row = {"line": label, "code": version, "cpu_s": cpu, "wall_s": wall, "rss_mib": rss,
                   "x_floor": cpu / rows[0]["cpu_s"], "numpy_scipy_paired_s": np_sp,
                   "x_numpy_scipy": cpu / np_sp, "bytecode": compiled[path]}
            rows.append(row)
            print(f"{label:<36} {version:<7} {cpu:>7.3f} {wall:>7.3f} {rss:>6.0f} "
                  f"{row['x_floor']:>7.1f} {row['x_numpy_scipy']:>8.2f}")
    rows += cold_warm_rows(before, 2 if quick else 3,
                           (10_000, 12_345) if quick else (10_000, 9_999, 12_345, 1_234_567))
    return rows


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--before", metavar="DIR", help="another checkout timed in the same run")
    ap.add_argument("--no-compile", action="store_true",
                    help="do not byte-compile semi_core first (time its source compile too)")
    a = ap.parse_args()
    main(quick=a.quick, before=a.before, compile_sources=not a.no_compile)
