"""Shared parameter sets: one place feeding tests, benchmarks, analysis/ and the report.

The seed's §3.3 / Fig. 2 / App. H.1 setting is n = 10, mu = 0, sigma = 1, a target at Mahalanobis
distance 3, tau = 5 (T = 10), R = 50,000 games per point; App. H.3 uses n = 10, T = 5, tau = 3.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["EmpiricalMeanCase", "SEED_FIG2", "FIG2_T_GRID", "FIG2_DISTANCE_GRID", "POWER_CASES",
           "FPR_LEVELS", "SEED_ROUNDS", "POWER_FPR", "FAILURE_PROB", "AUDIT_DELTA", "DPSGD",
           "NOISY_MEAN_AUDIT"]

#: False-positive rates reported by `semi-core simulate` (and the seed's "power" = TPR at 1 %).
FPR_LEVELS = (0.1, 0.01, 0.001)

#: Games per point in the seed's experiments.
SEED_ROUNDS = 50_000

#: The seed's "power": TPR at 1 % FPR (default of `semi-core power --fpr`).
POWER_FPR = 0.01

#: Failure probability xi of every certified bound by default (seed §5.1; `--failure-prob`).
FAILURE_PROB = 0.05

#: delta of the noisy-mean audit (seed §5.1 reports epsilon at delta = 1e-5).
AUDIT_DELTA = 1e-5

#: DP-SGD audit (seed §5.2, Fig. 3): T = 10 steps, batch 64, delta = 1e-4, 1000 games per tau.
DPSGD = {"steps": 10, "batch_size": 64, "delta": 1e-4, "rounds": 1000, "tau": 5}

#: Noisy-mean audit table (`semi-core audit-game`): games per noise level, GDP levels.
NOISY_MEAN_AUDIT = {"rounds": 4000, "mu_levels": (1.0, 2.0, 4.0)}


@dataclass(frozen=True)
class EmpiricalMeanCase:
    """One parameter point of the Gaussian empirical-mean mechanism."""

    name: str
    n: int
    T: int
    tau: int
    distance: float
    d: int = 1
    mu: float = 0.0
    sigma: float = 1.0

    def mechanism(self):
        """The :class:`~semi_core.mechanisms.empirical_mean.EmpiricalMean` of this case."""
        from semi_core.mechanisms.empirical_mean import EmpiricalMean

        return EmpiricalMean.isotropic(self.n, self.T, mu=self.mu, sigma=self.sigma,
                                       distance=self.distance, d=self.d)


#: The seed's Fig. 2 point (n = 10, z* = 3, tau = 5, T = 10).
SEED_FIG2 = EmpiricalMeanCase("seed-fig2", n=10, T=10, tau=5, distance=3.0)

#: Fig. 2(a): power vs T (tau = min(5, T)).
FIG2_T_GRID = (1, 2, 3, 5, 7, 10, 15, 20)

#: Fig. 2(b): power vs Mahalanobis distance at T = 5.
FIG2_DISTANCE_GRID = (0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0)

#: Cases shared by the closed-form <-> Monte Carlo tests and the benchmarks.
POWER_CASES = (
    EmpiricalMeanCase("T1", n=10, T=1, tau=1, distance=3.0),
    EmpiricalMeanCase("T5", n=10, T=5, tau=3, distance=3.0),
    EmpiricalMeanCase("T10", n=10, T=10, tau=5, distance=3.0),
    EmpiricalMeanCase("d5", n=10, T=5, tau=3, distance=3.0, d=5),
    EmpiricalMeanCase("n3-far", n=3, T=4, tau=2, distance=4.0),
    EmpiricalMeanCase("d50", n=10, T=5, tau=3, distance=3.0, d=50),
)
