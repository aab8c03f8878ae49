"""README "Audit your own work": every block runs as pasted, in order, in an empty directory."""

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("safetensors")

README = Path(__file__).resolve().parents[1] / "README.md"
SECTION = "## Audit your own work"


def blocks() -> list[tuple[str, str]]:
    """``(language, code)`` of the section's fenced blocks, in order."""
    text = README.read_text(encoding="utf-8")
    start = text.index(SECTION)
    end = text.find("\n## ", start + len(SECTION))
    body = text[start:end if end >= 0 else None]
    return re.findall(r"```(python|bash)\n(.*?)```", body, flags=re.S)


DRIVER = textwrap.dedent('''
    import json, subprocess, sys
    blocks = json.load(open(sys.argv[1]))
    ns = {"__name__": "__main__"}
    for i, (lang, code) in enumerate(blocks):
        print(f"--- block {i} ({lang})", flush=True)
        if lang == "python":
            exec(compile(code, f"README block {i}", "exec"), ns)
        else:
            subprocess.run(["bash", "-euo", "pipefail", "-c", code], check=True)
''')


def test_section_has_the_three_paths():
    got = blocks()
    code = "\n".join(c for _, c in got)
    assert [lang for lang, _ in got].count("bash") >= 2
    for needle in ("semi-core audit ", "semi-core audit-checkpoints", "integrations.training",
                   "ScoreAuditor"):
        assert needle in code


@pytest.mark.slow
def test_readme_blocks_run_as_pasted(tmp_path):
    import json

    (tmp_path / "blocks.json").write_text(json.dumps(blocks()))
    (tmp_path / "driver.py").write_text(DRIVER)
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
               OMP_NUM_THREADS="1")
    env.pop("PYTHONPATH", None)
    work = tmp_path / "work"
    work.mkdir()
    proc = subprocess.run([sys.executable, str(tmp_path / "driver.py"),
                           str(tmp_path / "blocks.json")], cwd=work, env=env,
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    out = proc.stdout
    assert "epsilon >=" in out and "TPR at FPR 1%" in out          # semi-core audit
    assert "'gdp_exact'" in out                                     # audit_training
    assert '"epsilon_lower_bound"' in out                           # audit-checkpoints --json
    assert (work / "my_runs" / "member").is_dir()
