"""The Crafter and SeMI game (seed Alg. 1-2) for the Gaussian empirical-mean mechanism.

Vectorised NumPy reference: every datum is simulated (Alg. 1 line 4), the canary replaces a
uniformly chosen element of batch :math:`\\tau` when :math:`B=1` (lines 5-7), the mechanism
releases running means (line 9), and every test is computed *from the releases only* (the
auditor's view), through the isolation property. Rounds are cut into chunks; chunk ``k`` draws
from the ``k``-th child of the seed's ``SeedSequence``, so the result depends on the seed and
``chunk_size`` only. The fast compiled engine lives in :mod:`semi_core.game.engine`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from semi_core._rng import chunk_bounds, chunk_generators
from semi_core._validation import check_int, check_pmf, check_probability, check_tau
from semi_core.stats.statistics import semi_max, semi_star, semi_unif

__all__ = ["GameResult", "crafter", "play_game", "resolve_tau_pmf"]


@dataclass
class GameResult:
    """Outcome of R rounds of the SeMI game.

    Attributes
    ----------
    member : ndarray of bool, shape (R,)
        The Crafter's insertion indicator B.
    tau : ndarray of int, shape (R,)
        The insertion time drawn by the Crafter (drawn for every round, as in Alg. 1).
    stats : dict of str -> ndarray, shape (R,)
        Test statistics (higher = member): ``semi-star``, ``semi-unif``, ``semi-max``, ``final``.
    """

    member: np.ndarray
    tau: np.ndarray
    stats: dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def rounds(self) -> int:
        """Number of rounds R."""
        return int(self.member.size)

    def scores(self, test: str) -> tuple[np.ndarray, np.ndarray]:
        """``(member_scores, nonmember_scores)`` of ``test``."""
        s = self.stats[test]
        return s[self.member], s[~self.member]

    @staticmethod
    def concatenate(parts: list[GameResult]) -> GameResult:
        """Join chunk results in order."""
        return GameResult(
            member=np.concatenate([p.member for p in parts]),
            tau=np.concatenate([p.tau for p in parts]),
            stats={k: np.concatenate([p.stats[k] for p in parts]) for k in parts[0].stats},
        )


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
    batch_means = np.empty((rounds, mech.T, mech.d))
    for t in range(mech.T):
        n = int(mech.n_t[t])
        e = rng.standard_normal((rounds, n, mech.d))
        X = mech.mu_t[t] + e @ mech.chol_t[t].T
        ins = np.flatnonzero(B & (tau == t + 1))
        j = rng.integers(0, n, size=ins.size)
        X[ins, j, :] = mech.target
        batch_means[:, t, :] = X.mean(axis=1)
    return B, tau, mech.releases(batch_means)


def play_game(mech, rounds: int, seed=0, *, p_member: float = 0.5, tau=None,
              unif_pmf=None, chunk_size: int = 4096) -> GameResult:
    """Play R rounds of the SeMI game (seed Alg. 2) and compute every test from the releases.

    Parameters
    ----------
    mech : EmpiricalMean
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

    Returns
    -------
    GameResult
    """
    rounds = check_int(rounds, "rounds", minimum=1)
    chunk_size = check_int(chunk_size, "chunk_size", minimum=1)
    p_member = check_probability(p_member, "p_member")
    pmf = resolve_tau_pmf(mech.T, tau)
    upmf = None if unif_pmf is None else check_pmf(unif_pmf, "unif_pmf", size=mech.T)
    bounds = chunk_bounds(rounds, chunk_size)
    parts = []
    for (lo, hi), rng in zip(bounds, chunk_generators(seed, len(bounds))):
        B, tau_r, rel = crafter(mech, rng, hi - lo, p_member=p_member, tau_pmf=pmf)
        parts.append(GameResult(B, tau_r, score_releases(mech, rel, tau_r, unif_pmf=upmf)))
    return GameResult.concatenate(parts)


def score_releases(mech, releases, tau, *, unif_pmf=None) -> dict[str, np.ndarray]:
    """Every test statistic from observed releases (the auditor's side of Alg. 2)."""
    lr = mech.log_lr_steps(mech.batch_means(releases))
    stats = {
        "semi-star": semi_star(lr, tau),
        "semi-unif": semi_unif(lr, unif_pmf),
        "semi-max": semi_max(lr),
        "final": mech.final_log_lr(np.asarray(releases)[..., -1, :], tau),
    }
    return stats
