"""Scores of a Dirac canary under Poisson sampling: :class:`PoissonDiracScorer`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from semi_core.integrations.opacus.mechanism import OpacusMechanism

__all__ = ["PoissonDiracScorer"]


@dataclass(frozen=True)
class PoissonDiracScorer:
    """Dirac canary under Poisson sampling: the exact mixture log-LR over all steps
    (``dirac_mixture``) and the sum of standardised updates (``dirac_sum``)."""

    mech: OpacusMechanism
    names = ("dirac_mixture", "dirac_sum")
    tau_free = True

    def __call__(self, releases, tau, rng=None) -> dict[str, np.ndarray]:
        traj, idx = self.mech.trajectories(releases)
        return {"dirac_mixture": self.mech.log_lr_steps(releases).sum(1),
                "dirac_sum": self.mech.standardised(traj, idx).sum(1)}
