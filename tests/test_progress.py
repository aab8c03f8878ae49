"""Progress: a line every few seconds off a terminal, a bar on one, silence when off."""

import io

import pytest

from semi_core._progress import Reporter, as_reporter, format_seconds
from semi_core.game.play import play
from semi_core.mechanisms.empirical_mean import EmpiricalMean


class _Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def test_plain_lines_at_most_every_interval(monkeypatch):
    clock = _Clock()
    monkeypatch.setattr("semi_core._progress.time.monotonic", clock)
    out = io.StringIO()
    rep = Reporter(True, stream=out, interval=5.0)
    with rep.stage("play", total=100) as st:
        for _ in range(10):
            clock.t += 1.0
            st.update(10)
    lines = out.getvalue().splitlines()
    assert len(lines) == 2  # at t = 5 s and t = 10 s
    assert lines[0].startswith("play: 50% (50/100 rounds), 5 s elapsed, about 5 s left")


def test_silent_when_off_and_hook_when_callable():
    out = io.StringIO()
    rep = Reporter(False, stream=out)
    rep.announce(1e6, "work")
    with rep.stage("x", total=3) as st:
        st.update(3)
    assert out.getvalue() == ""
    got = []
    as_reporter(got.append).announce(3600.0, "work")
    assert got == ["work: estimated 60.0 min"]
    as_reporter(got.append).announce(1.0, "short")  # short work is not announced
    assert len(got) == 1
    with pytest.raises(TypeError, match="progress"):
        as_reporter("yes")


def test_runner_announces_long_work(monkeypatch):
    got = []
    monkeypatch.setattr("semi_core._progress.ANNOUNCE_AFTER", 0.0)
    play(EmpiricalMean.isotropic(5, 3), 200, 0, progress=got.append)
    assert got and "estimated" in got[0] and "200 rounds of EmpiricalMean" in got[0]


def test_format_seconds():
    assert [format_seconds(s) for s in (5, 600, 7200, 3e5)] == ["5 s", "10.0 min", "2.0 h",
                                                                "3.5 days"]


# -- plain lines at least every interval (a heartbeat), and the CLI's one reporter ----------

def test_heartbeat_writes_lines_while_a_step_is_long():
    """A step longer than the interval still gets lines (no update needed), none after."""
    import time

    out = io.StringIO()
    rep = Reporter(True, stream=out, interval=0.05)
    with rep.running("semi-core demo"), rep.stage("work", total=2, unit="step") as st:
        time.sleep(0.5)  # one long step: no update() call in between
        st.update(1)
    n = len(out.getvalue().splitlines())
    time.sleep(0.2)
    text = out.getvalue()
    assert len(text.splitlines()) == n >= 4, text  # several lines, and none once it ended
    assert "\r" not in text
    assert "semi-core demo: " in text and "work: 0% (0/2 steps)" in text


def test_interval_from_environment(monkeypatch):
    monkeypatch.setenv("SEMI_CORE_PROGRESS_INTERVAL", "0.25")
    assert Reporter(True).interval == 0.25
    monkeypatch.setenv("SEMI_CORE_PROGRESS_INTERVAL", "-1")
    with pytest.raises(ValueError, match="SEMI_CORE_PROGRESS_INTERVAL"):
        Reporter(True)


def _seq_audit_cmd(*extra):
    import sys

    code = "import sys; from semi_core.cli import main; sys.exit(main(sys.argv[1:]))"
    return [sys.executable, "-c", code, "seq-audit", "--claimed-epsilon", "0.01",
            "--max-obs", "1500", "--runs", "6", "--json", *extra]


@pytest.mark.parametrize("quiet", [False, True])
def test_cli_json_progress_to_a_file(tmp_path, quiet):
    """stderr to a file (not a terminal): plain progress lines under --json, stdout one JSON
    object; --no-progress writes nothing on stderr."""
    import json
    import os
    import subprocess

    # an interval well below the run (a few tenths of a second once the kernels are compiled)
    env = dict(os.environ, SEMI_CORE_PROGRESS_INTERVAL="0.02")
    with open(tmp_path / "err.log", "wb") as err:
        proc = subprocess.run(_seq_audit_cmd(*(["--no-progress"] if quiet else [])),
                              stdout=subprocess.PIPE, stderr=err, env=env, timeout=300)
    assert proc.returncode == 0
    obj = json.loads(proc.stdout)  # exactly one JSON object
    assert isinstance(obj, dict) and "summary" in obj
    log = (tmp_path / "err.log").read_bytes()
    if quiet:
        assert log == b""
        return
    assert b"\r" not in log
    lines = log.decode().splitlines()
    assert len(lines) >= 3, lines
    assert all(line.startswith("semi-core seq-audit: ") for line in lines), lines


def test_no_progress_help_states_no_true_default():
    from semi_core.cli import build_parser

    helps = build_parser(["simulate"])._subparsers._group_actions[0].choices["simulate"]
    text = helps.format_help()
    assert "--no-progress" in text and "(default: True)" not in text


def test_report_interrupt_counts_sections(tmp_path, monkeypatch):
    """An interrupt inside a section's games is reported in sections (the progress's units),
    not in the runner's tasks."""
    import sys
    import types

    from semi_core.game.backends import Interrupted
    from semi_core.report import Section, build_report

    def ok(ctx):
        return Section("ok", "fine")

    def stopped(ctx):
        raise Interrupted({i: None for i in range(11)}, None, 12)  # "after 11 of 12 tasks"

    for name, fn in (("_fake_ok_section", ok), ("_fake_stop_section", stopped)):
        monkeypatch.setitem(sys.modules, name, types.SimpleNamespace(build=fn))
    out = io.StringIO()
    with pytest.raises(KeyboardInterrupt, match=r"after 1 of 3 sections \(in _fake_stop_section"):
        build_report(tmp_path / "rep", sections=["_fake_ok_section", "_fake_stop_section",
                                                 "_fake_ok_section"],
                     progress=Reporter(True, stream=out))
    assert not (tmp_path / "rep").exists()


def test_runner_interrupt_counts_rounds_as_its_progress():
    """The runner's interrupt message counts rounds (the progress's unit), then chunks."""
    from semi_core.game.backends import Interrupted, run_local

    def fn(i):
        if i == 2:
            raise KeyboardInterrupt
        return i

    with pytest.raises(Interrupted, match=r"after 20 of 40 rounds \(2 of 4 chunks\)"):
        run_local(fn, [0, 1, 2, 3], sizes=[10, 10, 10, 10])
