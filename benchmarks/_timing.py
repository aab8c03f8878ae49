"""Timing helper shared by the benchmark modules."""

from __future__ import annotations

import time


def best_of(fn, repeat: int = 5) -> float:
    """Best wall-clock time of ``repeat`` calls of ``fn`` (seconds); the minimum is the least
    perturbed by other load on the machine."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best
