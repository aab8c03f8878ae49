"""Seed handling: ``numpy.random.Generator`` / ``SeedSequence`` only, passed explicitly.

Monte Carlo work is cut into chunks of rounds; chunk ``k`` always draws from the ``k``-th
child of the root ``SeedSequence``, so results do not depend on how many threads or
workers run the chunks.
"""

from __future__ import annotations

import numpy as np

__all__ = ["as_seed_sequence", "child_seed", "chunk_generators", "chunk_bounds"]


def as_seed_sequence(seed) -> np.random.SeedSequence:
    """Accept an int, a ``SeedSequence`` or ``None`` (fresh entropy) and return a SeedSequence."""
    if isinstance(seed, np.random.SeedSequence):
        return seed
    if isinstance(seed, np.random.Generator):
        raise TypeError("seed must be an int or SeedSequence; pass a Generator as rng= instead")
    if seed is None or isinstance(seed, int | np.integer):
        return np.random.SeedSequence(None if seed is None else int(seed))
    raise TypeError(f"seed must be an int, SeedSequence or None, got {type(seed).__name__}")


def child_seed(seed, *key: int) -> np.random.SeedSequence:
    """The descendant of ``seed`` at spawn path ``key`` (``child_seed(s, k)`` equals the ``k``-th
    child of ``SeedSequence(s).spawn``).

    Built from the root's entropy and spawn key, so it does not depend on how many children the
    root object has already spawned: the same ``(seed, key)`` always gives the same stream, in
    any process, thread or Dask worker.
    """
    root = as_seed_sequence(seed)
    return np.random.SeedSequence(root.entropy, spawn_key=tuple(root.spawn_key) + tuple(
        int(k) for k in key), pool_size=root.pool_size)


def chunk_bounds(rounds: int, chunk_size: int) -> list[tuple[int, int]]:
    """Split ``range(rounds)`` into consecutive ``[start, stop)`` chunks of ``chunk_size``."""
    return [(s, min(s + chunk_size, rounds)) for s in range(0, rounds, chunk_size)]


def chunk_generators(seed, n_chunks: int) -> list[np.random.Generator]:
    """One independent ``Generator`` per chunk, spawned from the root ``SeedSequence``."""
    return [np.random.Generator(np.random.PCG64(s)) for s in as_seed_sequence(seed).spawn(n_chunks)]
