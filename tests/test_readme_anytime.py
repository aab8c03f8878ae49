"""README "Audit while you train": its blocks run as pasted, alone, in an empty directory
(fast; the whole "Audit your own work" section runs in tests/test_readme_own_work.py)."""

import os
import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"
START = "**Audit while you train**"


def blocks() -> list[tuple[str, str]]:
    text = README.read_text(encoding="utf-8")
    start = text.index(START)
    end = text.find("\n## ", start)
    return re.findall(r"```(python|bash)\n(.*?)```", text[start:end], flags=re.S)


def test_blocks_run_as_pasted(tmp_path):
    got = blocks()
    assert [lang for lang, _ in got] == ["python", "bash"]
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    env.pop("PYTHONPATH", None)
    py = subprocess.run([sys.executable, "-c", got[0][1]], cwd=tmp_path, env=env,
                        capture_output=True, text=True, timeout=300)
    assert py.returncode == 0, py.stderr[-2000:]
    assert "stopped at step" in py.stdout and "refuted=True" in py.stdout
    sh = subprocess.run(["bash", "-euo", "pipefail", "-c", got[1][1]], cwd=tmp_path, env=env,
                        capture_output=True, text=True, timeout=300)
    assert sh.returncode == 0, sh.stderr[-2000:]
    assert "REFUTED after" in sh.stdout
