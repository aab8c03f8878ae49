"""The README's quick tour runs as pasted, line by line, in an empty directory.

Each command line of the tour's code block (continuation lines joined, comments dropped) runs
through the installed ``semi-core`` script with the environment active. Long lines are scaled
down by the substitutions in :data:`SCALE` (fewer rounds, runs, models, trials), so the test
checks that every line is accepted and completes, not the numbers of the full runs; the
unscaled times are stated in the README beside the long lines. ``--json`` lines must print one
JSON object. Slow tier (the tour trains models and verifies every claim).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: option -> largest value the test uses (the README's value when smaller)
SCALE = {"--rounds": 200, "--max-obs": 400, "--runs": 2, "--models": 32, "--targets": 40,
         "--trials": 2, "--simulate": 200, "--d": 500}


def tour_lines() -> list[str]:
    text = (ROOT / "README.md").read_text()
    block = re.search(r"## Quick tour\n.*?```bash\n(.*?)```", text, flags=re.S).group(1)
    lines, buf = [], ""
    for raw in block.splitlines():
        line = raw.split("  #")[0].rstrip() if not raw.lstrip().startswith("#") else ""
        if line.endswith("\\"):
            buf += line[:-1] + " "
            continue
        line = (buf + line).strip()
        buf = ""
        if line and not line.startswith((".", "source ")):
            lines.append(line)
    return lines


def scaled(line: str) -> list[str]:
    argv = shlex.split(line)
    for i, tok in enumerate(argv[:-1]):
        if tok in SCALE and re.fullmatch(r"\d+", argv[i + 1]):
            argv[i + 1] = str(min(int(argv[i + 1]), SCALE[tok]))
    return argv


def test_tour_is_parsed():
    lines = tour_lines()
    assert lines[0] == "semi-core example-data ."
    assert len(lines) >= 25 and all(ln.startswith("semi-core ") for ln in lines)


@pytest.mark.slow
def test_tour_runs_as_pasted(tmp_path):
    bindir = Path(sys.executable).parent
    env = dict(os.environ, PATH=f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}",
               MPLBACKEND="Agg")
    failures = []
    for line in tour_lines():
        argv = scaled(line)
        proc = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=900)
        ok = proc.returncode == 0
        if ok and "--json" in argv:
            try:
                json.loads(proc.stdout)
            except ValueError:
                ok = False
        if not ok:
            failures.append(f"{line}\n  rc={proc.returncode} {proc.stdout[-300:]}"
                            f"{proc.stderr[-300:]}")
    assert not failures, "\n".join(failures)


def test_tour_python_block_runs(tmp_path, monkeypatch):
    """The Python block after the tour's commands runs as printed."""
    monkeypatch.chdir(tmp_path)
    text = (ROOT / "README.md").read_text()
    tour = text[text.index("## Quick tour"):text.index("## Audit your own work")]
    blocks = re.findall(r"```python\n(.*?)```", tour, flags=re.S)
    assert blocks
    for code in blocks:
        exec(compile(code, "<README>", "exec"), {})
