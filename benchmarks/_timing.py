"""Timing helper shared by the benchmark modules."""

from __future__ import annotations

import time


def best_of(fn, repeat: int = 5, clock=time.perf_counter) -> float:
    """Best time of ``repeat`` calls of ``fn`` (seconds) by ``clock`` (wall clock by default;
    ``time.process_time`` for the CPU time of single-threaded work on a loaded machine); the
    minimum is the least perturbed by other load on the machine."""
    best = float("inf")
    for _ in range(repeat):
        t0 = clock()
        fn()
        best = min(best, clock() - t0)
    return best
