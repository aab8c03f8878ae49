"""The project's vocabulary: test (statistic) names, each with one display label.

One home for the names used by games, CLI options, report tables and JSON keys. A test name is a
``str`` enum member, so ``Test.SEMI_STAR == "semi-star"`` and JSON keys stay plain strings.
"""

from __future__ import annotations

from enum import Enum

__all__ = ["Test", "SEMI_TESTS", "test_label", "parse_tests"]


class Test(str, Enum):
    """Membership tests computed from a sequence of releases (SeMI seed §3, App. D-E)."""

    SEMI_STAR = "semi-star"
    SEMI_UNIF = "semi-unif"
    SEMI_MAX = "semi-max"
    FINAL = "final"

    def __str__(self) -> str:  # "semi-star", not "Test.SEMI_STAR"
        return self.value

    @property
    def label(self) -> str:
        """Display label used in tables and figures."""
        return _LABELS[self]


_LABELS = {
    Test.SEMI_STAR: "SeMI*",
    Test.SEMI_UNIF: "SeMI-Unif",
    Test.SEMI_MAX: "SeMI-max",
    Test.FINAL: "Final Observation",
}

#: The four sequential tests in their canonical order (game outputs, CLI, report).
SEMI_TESTS: tuple[str, ...] = tuple(t.value for t in Test)


def test_label(name: str) -> str:
    """Display label of a test name (unknown names, e.g. attack baselines, are returned as is)."""
    try:
        return Test(name).label
    except ValueError:
        return name


def parse_tests(value, *, allowed=SEMI_TESTS, name: str = "tests") -> tuple[str, ...]:
    """A comma-separated string or a sequence of test names, each checked against ``allowed``."""
    items = value.split(",") if isinstance(value, str) else list(value)
    out = tuple(str(v).strip() for v in items if str(v).strip())
    if not out:
        raise ValueError(f"{name} must name at least one of {list(allowed)}")
    bad = [v for v in out if v not in allowed]
    if bad:
        raise ValueError(f"{name} must be drawn from {list(allowed)}, got {bad}")
    return out
