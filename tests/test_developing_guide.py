"""The "Adding a system" guide in docs/DEVELOPING.md runs exactly as printed."""

import re
from pathlib import Path

GUIDE = Path(__file__).resolve().parents[1] / "docs" / "DEVELOPING.md"


def _blocks() -> list[str]:
    text = GUIDE.read_text()
    section = text[text.index("## Adding a system"):]
    return re.findall(r"```python\n(.*?)```", section, re.S)


def test_guide_has_the_five_parts():
    blocks = _blocks()
    assert len(blocks) == 5
    for word in ("class LaplaceCounts", "check_mechanism", "Claim(", "def build(",
                 "def register("):
        assert any(word in b for b in blocks), word


def test_worked_example_runs_as_printed(tmp_path):
    ns: dict = {"__name__": "guide"}
    for block in _blocks():
        exec(compile(block, str(GUIDE), "exec"), ns)  # noqa: S102 - our own documentation
    sec = ns["build"](ns["ReportContext"](out_dir=tmp_path, quick=True, seed=1))
    assert 0 < sec.data["eps_lb"] <= sec.data["eps"] == 2.0
