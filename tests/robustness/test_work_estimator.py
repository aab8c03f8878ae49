"""The one resource gate (check_work): memory and estimated time refused up front, by env."""

import pytest

from semi_core._validation import (
    DEFAULT_MAX_SECONDS,
    ResourceLimitError,
    check_work,
    time_limit,
)


def test_default_time_limit_is_one_day(monkeypatch):
    monkeypatch.delenv("SEMI_CORE_MAX_SECONDS", raising=False)
    assert time_limit() == DEFAULT_MAX_SECONDS == 86400.0
    check_work("small", seconds=3600.0, nbytes=1e3)  # passes
    with pytest.raises(ResourceLimitError, match=r"big job would take about .*SEMI_CORE_MAX_SECONDS"):
        check_work("big job", seconds=2 * 86400.0, hint="use fewer runs")


@pytest.mark.parametrize("text, seconds", [("600", 600.0), ("30m", 1800.0), ("2h", 7200.0),
                                           ("1d", 86400.0), ("5 s", 5.0), ("1.5min", 90.0),
                                           ("inf", float("inf")), ("none", float("inf"))])
def test_time_limit_parses(monkeypatch, text, seconds):
    monkeypatch.setenv("SEMI_CORE_MAX_SECONDS", text)
    assert time_limit() == seconds


@pytest.mark.parametrize("text", ["abc", "0", "-5", "nan", "h"])
def test_time_limit_refuses_bad_env(monkeypatch, text):
    monkeypatch.setenv("SEMI_CORE_MAX_SECONDS", text)
    with pytest.raises(ValueError, match="SEMI_CORE_MAX_SECONDS"):
        time_limit()


def test_limits_and_hint(monkeypatch):
    monkeypatch.setenv("SEMI_CORE_MAX_SECONDS", "10")
    monkeypatch.setenv("SEMI_CORE_MAX_MEMORY", "1M")
    with pytest.raises(ResourceLimitError, match="x would take about 20 s.*; try y"):
        check_work("x", seconds=20.0, hint="try y")
    with pytest.raises(ResourceLimitError, match="memory.*; try z"):
        check_work("x", nbytes=2**21, seconds=1.0, hint="try z")
    for bad in (float("inf"), float("nan")):
        with pytest.raises(ResourceLimitError):
            check_work("x", seconds=bad)
        with pytest.raises(ResourceLimitError):
            check_work("x", nbytes=bad)
    check_work("x", nbytes=2**19, seconds=9.0)
    monkeypatch.setenv("SEMI_CORE_MAX_SECONDS", "inf")
    check_work("x", seconds=1e300)
    assert issubclass(ResourceLimitError, ValueError)
