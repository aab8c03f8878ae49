r"""DP-SGD as a :class:`~semi_core.mechanisms.base.Mechanism` (SeMI seed §4.2, §5.2).

A *release* is the whole trajectory :math:`\theta_0,\dots,\theta_T` of one DP-SGD run on fresh
batches of the private pool (each record used once), with the canary replacing one element of
batch :math:`\tau` when :math:`B=1` (:func:`~semi_core.sgd.dpsgd.draw_game`). The auditor's per-step
log-LR is the two-covariance DP-SGD statistic at each run's own :math:`\theta_{t-1}`
(:func:`~semi_core.sgd.audit.trajectory_scores`; Thm 4.1 at :math:`\sigma_{\mathrm{DP}}=0`). The
ground truth is exact: :math:`\mu=2/\sigma_{\mathrm{DP}}`-GDP under replace-one
(:mod:`semi_core.sgd.accounting`). With this, the generic game
(:func:`semi_core.game.play.play`) and audit (:func:`semi_core.audit.games.audit_mechanism`)
run DP-SGD exactly as they run the empirical and noisy means.
"""

from __future__ import annotations

import numpy as np
import torch

from semi_core._names import Test
from semi_core.mechanisms.base import GroundTruthUnknown, MechanismBase

from .accounting import dpsgd_epsilon
from .audit import AuditSetup, trajectory_scores
from .dpsgd import draw_game, train_dpsgd_batched

__all__ = ["DPSGDMechanism"]


class DPSGDMechanism(MechanismBase):
    """The audited DP-SGD run of an :class:`~semi_core.sgd.audit.AuditSetup` as a mechanism.

    Parameters
    ----------
    setup : AuditSetup
        Model, :math:`\\theta_0`, private pool, reference data, canary and configuration.
    fast_stats : bool
        Use the linear-layer fast path for the statistics where the model allows it.
    """

    tests = (Test.SEMI_STAR.value, Test.SEMI_UNIF.value, Test.SEMI_MAX.value)

    def __init__(self, setup: AuditSetup, *, fast_stats: bool = True):
        if not isinstance(setup, AuditSetup):
            raise TypeError(f"setup must be an AuditSetup, got {type(setup).__name__}")
        self.setup = setup
        self.fast_stats = bool(fast_stats)
        self.T = int(setup.cfg.steps)

    def release(self, member, tau, rng: np.random.Generator) -> np.ndarray:
        """Trajectories :math:`\theta_1..\theta_T`, ``(R, T, d)``, of ``R`` runs (the common,
        public :math:`\theta_0` is not repeated); round ``r`` has the canary at ``tau[r]`` when
        ``member[r]``. Each run's batches, slot and noise come from its own child seed of ``rng``."""
        member = np.asarray(member, dtype=bool).reshape(-1)
        taus = np.broadcast_to(np.asarray(tau, dtype=np.int64), member.shape)
        if member.size and (taus.min() < 1 or taus.max() > self.T):
            raise ValueError(f"tau must be in 1..{self.T}")
        s = self.setup
        keys = rng.integers(0, 2**63 - 1, size=(member.size, 2))
        draws = [draw_game(np.random.SeedSequence(k.tolist()), pool_size=s.pool_x.shape[0],
                           cfg=s.cfg, d=s.fm.d, tau=int(t) if m else None)
                 for k, m, t in zip(keys, member, taus, strict=True)]
        with torch.no_grad():
            traj = train_dpsgd_batched(s.fm, s.theta0, draws, s.pool_x, s.pool_y,
                                       (s.canary_x, s.canary_y), s.cfg, fast=self.fast_stats)
        return traj[:, 1:].detach().numpy()

    def trajectories(self, releases) -> torch.Tensor:
        """:math:`\theta_0..\theta_T` ``(R, T+1, d)`` from releases ``(R, T, d)``."""
        traj = np.asarray(releases, dtype=float)
        if traj.ndim != 3 or traj.shape[1:] != (self.T, self.setup.fm.d):
            raise ValueError(f"releases must have shape (R, {self.T}, {self.setup.fm.d}), "
                             f"got {traj.shape}")
        if not np.isfinite(traj).all():
            raise ValueError("releases contain NaN or infinite parameters")
        t = torch.as_tensor(traj, dtype=self.setup.theta0.dtype)
        theta0 = self.setup.theta0.reshape(1, 1, -1).expand(t.shape[0], 1, -1)
        return torch.cat([theta0, t], dim=1)

    def log_lr_steps(self, releases) -> np.ndarray:
        """Per-step DP-SGD log-LRs (R, T) from releases :math:`\theta_1..\theta_T` (R, T, d)."""
        with torch.no_grad():
            _, lrs = trajectory_scores(self.setup, self.trajectories(releases),
                                       fast_stats=self.fast_stats)
        return lrs

    def epsilon(self, delta: float, tau: int = 1) -> float:
        """Exact :math:`\\varepsilon(\\delta)` of the run (replace-one, :math:`\\mu=2/\\sigma_{DP}`)."""
        if self.setup.cfg.sigma_dp == 0:
            raise GroundTruthUnknown("plain SGD (sigma_dp = 0) is not differentially private")
        return dpsgd_epsilon(self.setup.cfg.sigma_dp, delta)

    def mu(self, tau: int = 1) -> float:
        """GDP parameter :math:`\\mu=2/\\sigma_{DP}` (every step; one record used once)."""
        if self.setup.cfg.sigma_dp == 0:
            raise GroundTruthUnknown("plain SGD (sigma_dp = 0) is not differentially private")
        return 2.0 / self.setup.cfg.sigma_dp

    def params(self) -> dict:
        """Configuration and setup information (JSON metadata)."""
        c = self.setup.cfg
        return {"mechanism": "dp-sgd", "T": self.T, "batch_size": c.batch_size, "lr": c.lr,
                "clip": c.clip, "sigma_dp": c.sigma_dp, "d": int(self.setup.fm.d),
                **{k: v for k, v in self.setup.info.items() if isinstance(v, int | float | str)}}
