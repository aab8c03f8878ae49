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
