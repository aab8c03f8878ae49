"""The documentation's examples run as printed, with the output the pages show.

Two kinds of example live in the docs:

- ``.. code-block:: python`` blocks in ``docs/*.rst``: run, and must print something;
- scripts ``docs/examples/NAME.py`` with their printed output ``NAME.out`` and, where the page
  shows the command-line form, a console transcript ``NAME.console`` (``$ semi-core ...`` lines,
  each followed by what the command prints on stdout). The pages show these files through
  ``literalinclude`` and draw their figures from the same scripts (``.. plot::``), so a page
  cannot show an output or a figure that the code no longer gives: a changed output fails here.

Scripts whose first lines hold ``# docs: slow`` (torch training) run in the slow tier.
Timings inside a command's output (``0.62 s``) are masked before comparing.

``python tests/test_docs_examples.py [NAME ...]`` rewrites the ``.out``/``.console`` files
from a run (then read the diff before committing it).
"""

from __future__ import annotations

import os
import re
import runpy
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs"
EXAMPLES = DOCS / "examples"
BLOCK = re.compile(r"\.\. code-block:: python\n\n((?:    .*\n|[ \t]*\n)+)")
SLOW_MARK = "# docs: slow"
TIMING = re.compile(r"\b\d+(?:\.\d+)?\s?(?:s|CPU-s|ms)\b")
PROMPT = "$ "


def _blocks():
    for path in sorted(DOCS.rglob("*.rst")):
        for k, m in enumerate(BLOCK.finditer(path.read_text())):
            code = "\n".join(line[4:] for line in m.group(1).splitlines())
            yield pytest.param(code, id=f"{path.relative_to(DOCS)}:{k}")


@pytest.mark.parametrize("code", list(_blocks()))
def test_docs_example_runs(code, capsys):
    exec(compile(code, "<docs>", "exec"), {})
    assert capsys.readouterr().out.strip(), "the example prints its result"


# --------------------------------------------------------------------------- example scripts
def _is_slow(path: Path) -> bool:
    return SLOW_MARK in path.read_text().splitlines()[:5] if path.suffix == ".py" else (
        SLOW_MARK in path.read_text())


def _params(suffix: str):
    for path in sorted(EXAMPLES.glob(f"*{suffix}")):
        marks = [pytest.mark.slow] if _is_slow(path) else []
        yield pytest.param(path, id=path.name, marks=marks)


def mask(text: str) -> str:
    """The output with timings masked and trailing blanks dropped."""
    return "\n".join(TIMING.sub("<t>", ln).rstrip() for ln in text.strip().splitlines())


def run_script(path: Path, workdir: Path) -> str:
    """Stdout of the example script ``path`` run in ``workdir`` (figures closed)."""
    import contextlib
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    buf, cwd = io.StringIO(), os.getcwd()
    os.chdir(workdir)
    try:
        with contextlib.redirect_stdout(buf):
            runpy.run_path(str(path), run_name="__main__")
    finally:
        os.chdir(cwd)
        plt.close("all")
    return buf.getvalue()


def parse_console(text: str) -> list[tuple[str, str]]:
    """``[(command, expected stdout)]`` of a transcript: a line ``$ cmd`` (continued by a
    trailing backslash) followed by the command's output up to the next prompt."""
    out: list[tuple[str, list[str]]] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        ln = lines[i]
        if ln.startswith(PROMPT):
            cmd = ln[len(PROMPT):]
            while cmd.endswith("\\"):
                i += 1
                cmd = cmd[:-1] + " " + lines[i].strip()
            out.append((cmd, []))
        elif out:
            out[-1][1].append(ln)
        i += 1
    return [(c, "\n".join(o)) for c, o in out]


def normal_console(text: str) -> list[tuple[list[str], str]]:
    """The transcript's commands as argument lists (however the lines are wrapped) with their
    masked outputs."""
    return [(shlex.split(cmd), mask(out)) for cmd, out in parse_console(text)]


def run_console(text: str, workdir: Path) -> str:
    """The transcript as a run of its commands gives it (same prompts, fresh outputs)."""
    bindir = Path(sys.executable).parent
    env = dict(os.environ, PATH=f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}",
               OMP_NUM_THREADS="1", MPLBACKEND="Agg")
    env.pop("PYTHONPATH", None)
    chunks = []
    for cmd, _ in parse_console(text):
        argv = shlex.split(cmd)
        proc = subprocess.run(argv, cwd=workdir, env=env, capture_output=True, text=True,
                              timeout=600)
        assert proc.returncode == 0, f"{cmd}\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}"
        shown = cmd if len(PROMPT + cmd) <= 100 else _wrap(cmd)
        chunks.append(PROMPT + shown + "\n" + proc.stdout.rstrip("\n"))
    return "\n".join(chunks) + "\n"


def _wrap(cmd: str, width: int = 96) -> str:
    words: list[str] = []
    for word in map(shlex.quote, shlex.split(cmd)):
        if words and words[-1].startswith("--") and " " not in words[-1] and (
                not word.startswith("-")):
            words[-1] += " " + word              # an option stays on the line of its value
        else:
            words.append(word)
    lines, cur = [], ""
    for word in words:
        if cur and len(cur) + 1 + len(word) > width:
            lines.append(cur + " \\")
            cur = "    " + word
        else:
            cur = f"{cur} {word}" if cur else word
    return "\n".join([*lines, cur])


@pytest.mark.parametrize("script", list(_params(".py")))
def test_example_prints_what_the_page_shows(script, tmp_path):
    """The script's output, then its command-line transcript (run in the same directory, so
    it may read the files the script writes), are what the page shows."""
    expected = script.with_suffix(".out")
    assert expected.exists(), f"{expected.name} missing: run python {__file__} {script.stem}"
    assert mask(run_script(script, tmp_path)) == mask(expected.read_text())
    console = script.with_suffix(".console")
    if console.exists():
        text = console.read_text()
        assert parse_console(text), "a transcript holds at least one command"
        assert normal_console(run_console(text, tmp_path)) == normal_console(text)


def test_every_example_is_on_a_page():
    """Each script, its output and its transcript are included by a page (so the checked
    text is the shown text), and each script draws the page's figure."""
    pages = "\n".join(p.read_text() for p in DOCS.rglob("*.rst"))
    for path in sorted(EXAMPLES.glob("*")):
        if path.suffix in (".py", ".out", ".console"):
            assert f"literalinclude:: ../examples/{path.name}" in pages or (
                f"literalinclude:: examples/{path.name}" in pages), path.name
        if path.suffix == ".console":
            assert path.with_suffix(".py").exists(), f"{path.name} runs after its script"
        if path.suffix == ".py":
            assert re.search(rf"\.\. plot:: (\.\./)?examples/{path.name}", pages), path.name


def test_console_parser_and_mask():
    text = "$ semi-core a --b 1 \\\n    --c 2\nline (0.62 s)\n$ semi-core d\nx\n"
    assert parse_console(text) == [("semi-core a --b 1  --c 2", "line (0.62 s)"),
                                   ("semi-core d", "x")]
    assert mask("took 5.3 s, 12 CPU-s; 0.01 steps") == "took <t>, <t>; 0.01 steps"
    assert mask("a (1.0 s)") != mask("b (1.0 s)")
    assert normal_console(text) == normal_console(
        "$ semi-core a --b 1 --c 2\nline (9.1 s)\n$ semi-core d\nx\n")
    assert normal_console(text) != normal_console("$ semi-core a --b 2 --c 2\nline\n")


if __name__ == "__main__":                    # regenerate the expected outputs
    import tempfile

    names = set(sys.argv[1:])
    for path in sorted(EXAMPLES.glob("*.py")):
        if names and path.stem not in names:
            continue
        with tempfile.TemporaryDirectory() as tmp:
            path.with_suffix(".out").write_text(run_script(path, Path(tmp)))
            console = path.with_suffix(".console")
            if console.exists():
                console.write_text(run_console(console.read_text(), Path(tmp)))
        print("wrote", path.stem)
