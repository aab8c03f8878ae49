"""The Crafter and SeMI game (seed Alg. 1-2) for the Gaussian empirical-mean mechanism.

Vectorised NumPy reference: every datum is simulated (Alg. 1 line 4), the canary replaces a
uniformly chosen element of batch :math:`\\tau` when :math:`B=1` (lines 5-7), the mechanism
releases running means (line 9), and every test is computed *from the releases only* (the
auditor's view), through the isolation property. Rounds are cut into chunks; chunk ``k`` draws
from the ``k``-th child of the seed's ``SeedSequence``, so the result depends on the seed and
``chunk_size`` only. The fast compiled engine lives in :mod:`semi_core.game.engine`.
"""

from __future__ import annotations

import numpy as np

from semi_core._rng import chunk_bounds, chunk_generators
from semi_core._validation import check_int, check_pmf, check_probability, check_tau
from semi_core.game.result import GameResult

__all__ = ["GameResult", "crafter", "play_game", "resolve_tau_pmf"]


def resolve_tau_pmf(T: int, tau) -> np.ndarray:
    """Insertion-time law :math:`\\nu_\\tau`: None/"uniform" -> uniform, int -> point mass, else a pmf."""
    if tau is None or (isinstance(tau, str) and tau == "uniform"):
        return np.full(T, 1.0 / T)
    if np.ndim(tau) == 0:
        p = np.zeros(T)
        p[check_tau(tau, T) - 1] = 1.0
        return p
    return check_pmf(tau, "tau (insertion-time pmf)", size=T)


def crafter(mech, rng: np.random.Generator, rounds: int, *, p_member: float = 0.5,
            tau_pmf=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Seed Alg. 1 for ``rounds`` independent games: returns ``(B, tau, releases)``.

    Parameters
    ----------
    mech : EmpiricalMean
    rng : numpy.random.Generator
    rounds : int
    p_member : float
        :math:`\\nu_B(1)`, in (0, 1).
    tau_pmf : array_like, shape (T,), optional
        :math:`\\nu_\\tau` (uniform if None).

    Returns
    -------
    B : ndarray of bool, (rounds,)
    tau : ndarray of int, (rounds,), values in 1..T
    releases : ndarray, (rounds, T, d), the running means :math:`\\hat\\mu_1..\\hat\\mu_T`.
    """
    p = resolve_tau_pmf(mech.T, tau_pmf)
    B = rng.random(rounds) < p_member
    tau = rng.choice(mech.T, size=rounds, p=p) + 1
    return B, tau, mech.release(B, tau, rng)


def play_game(mech, rounds: int, seed=0, *, p_member: float = 0.5, tau=None,
              unif_pmf=None, chunk_size: int = 4096, tests=None) -> GameResult:
    """Play R rounds of the SeMI game (seed Alg. 2) and compute every test from the releases.

    The one reference game of the toolkit: it runs any
    :class:`~semi_core.mechanisms.base.Mechanism` (empirical mean, noisy mean, the later seeds'
    mechanisms) through ``mech.release`` and scores the releases with ``mech.score``.

    Parameters
    ----------
    mech : Mechanism
    rounds : int
        Number of games R (>= 1).
    seed : int or numpy.random.SeedSequence
        Root seed; chunk k uses the k-th spawned child.
    p_member : float
        Probability that the canary is inserted (:math:`\\nu_B`).
    tau : None, "uniform", int or array_like
        Insertion-time law :math:`\\nu_\\tau` of the Crafter.
    unif_pmf : array_like, optional
        Prior of the SeMI-Unif statistic; uniform on 1..T by default (the seed's SeMI-Unif).
        Pass the Crafter's :math:`\\nu_\\tau` to get the Neyman-Pearson test for that law.
    chunk_size : int
        Rounds per chunk (memory is O(chunk_size * n * d)).
    tests : sequence of str, optional
        Statistics to compute (default: every test the mechanism offers).

    Returns
    -------
    GameResult
    """
    from semi_core._rng import as_seed_sequence
    from semi_core.mechanisms.base import is_mechanism

    if not is_mechanism(mech):
        raise TypeError(f"mech must implement the Mechanism protocol, got {type(mech).__name__}")
    root = as_seed_sequence(seed)
    rounds = check_int(rounds, "rounds", minimum=1)
    chunk_size = check_int(chunk_size, "chunk_size", minimum=1)
    p_member = check_probability(p_member, "p_member")
    pmf = resolve_tau_pmf(mech.T, tau)
    upmf = None if unif_pmf is None else check_pmf(unif_pmf, "unif_pmf", size=mech.T)
    bounds = chunk_bounds(rounds, chunk_size)
    parts = []
    for (lo, hi), rng in zip(bounds, chunk_generators(root, len(bounds))):
        B, tau_r, rel = crafter(mech, rng, hi - lo, p_member=p_member, tau_pmf=pmf)
        parts.append(GameResult(B, tau_r, score_releases(mech, rel, tau_r, unif_pmf=upmf,
                                                         tests=tests)))
    out = GameResult.concatenate(parts)
    out.seed = root.entropy if isinstance(root.entropy, int) else None
    out.metadata = {"game": "reference", "chunk_size": chunk_size, "p_member": p_member,
                    "mechanism": mech.params()}
    return out


def score_releases(mech, releases, tau, *, unif_pmf=None, tests=None) -> dict[str, np.ndarray]:
    """Every test statistic from observed releases (the auditor's side of Alg. 2)."""
    return mech.score(releases, tau, unif_pmf=unif_pmf, tests=tests)
