"""CLI start-up: ``semi-core --help`` and a few commands against the interpreter's floor.

Each line is a fresh ``python -c`` process (what a user's shell starts), timed by its CPU time
(user + system, from ``os.wait4``: robust to other load on the machine) and wall time, best of
``repeat``; peak RSS from the same ``wait4``. References timed in the same run:

* ``python -c pass``: the floor of any Python command line;
* ``import numpy, scipy.special``: the floor the issue sets for commands that need neither torch
  nor SymPy (a six-line SciPy script).

``python -m benchmarks.bench_cli --before /tmp/before`` also times the same lines with another
checkout first on ``sys.path`` (the code before a change), in the same run.
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
]


def _run(code: str, pythonpath: str | None) -> tuple[float, float, float]:
    """(cpu seconds, wall seconds, peak RSS MiB) of one ``python -c code`` process."""
    env = dict(os.environ)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", code], env=env, cwd="/",
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0,):
        raise RuntimeError(f"{code!r} exited {proc.returncode}")
    return ru.ru_utime + ru.ru_stime, wall, ru.ru_maxrss / 1024.0


def _best(code: str, pythonpath: str | None, repeat: int) -> tuple[float, float, float]:
    runs = [_run(code, pythonpath) for _ in range(repeat)]
    return min(r[0] for r in runs), min(r[1] for r in runs), max(r[2] for r in runs)


def main(quick: bool = False, before: str | None = None) -> list[dict]:
    repeat = 2 if quick else 5
    print(f"\n## CLI start-up (fresh process each, best of {repeat}; CPU = user + sys)")
    print(f"{'line':<32} {'code':<7} {'CPU s':>7} {'wall s':>7} {'MiB':>6} "
          f"{'x pass':>7} {'x np+sp':>8}")
    floors = [(label, code) for label, code in LINES if not label.startswith("semi-core")]
    cli = [(label, code) for label, code in LINES if label.startswith("semi-core")]
    jobs = [("-", str(ROOT), floors), ("now", str(ROOT), cli)]
    if before:
        jobs.append(("before", before, cli))
    rows: list[dict] = []
    for version, path, lines in jobs:
        for label, code in lines:
            cpu, wall, rss = _best(code, path, repeat)
            floor = rows[0]["cpu_s"] if rows else cpu
            np_sp = rows[1]["cpu_s"] if len(rows) > 1 else cpu
            row = {"line": label, "code": version, "cpu_s": cpu, "wall_s": wall, "rss_mib": rss,
                   "x_floor": cpu / floor, "x_numpy_scipy": cpu / np_sp}
            rows.append(row)
            print(f"{label:<32} {version:<7} {cpu:>7.3f} {wall:>7.3f} {rss:>6.0f} "
                  f"{row['x_floor']:>7.1f} {row['x_numpy_scipy']:>8.2f}")
    return rows


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--before", metavar="DIR", help="another checkout timed in the same run")
    a = ap.parse_args()
    main(quick=a.quick, before=a.before)
