r"""DP-SGD as a :class:`~semi_core.mechanisms.base.Mechanism` (SeMI seed §4.2, §5.2).

A *release* is the trajectory :math:`\theta_1,\dots,\theta_T` of one DP-SGD run on fresh
batches of the private pool (each record used once), with the canary replacing one element of
batch :math:`\tau` when :math:`B=1` (:func:`~semi_core.sgd.dpsgd.draw_game`); the public
:math:`\theta_0` is common to every run. ``release`` trains all rounds of a chunk together as
replicas (:func:`~semi_core.sgd.dpsgd.train_dpsgd_batched`), so the runner's chunks are the
batched unit of work. The auditor's per-step log-LR is the two-covariance DP-SGD statistic at
each run's own :math:`\theta_{t-1}` (:func:`~semi_core.sgd.batched.ghost_log_lr` /
:func:`~semi_core.sgd.batched.batched_dpsgd_log_lr`; Thm 4.1 at :math:`\sigma_{\mathrm{DP}}=0`);
:meth:`DPSGDMechanism.canary_losses` feeds the loss baselines
(:class:`~semi_core.sgd.scorers.LossBaselines`). The ground truth is exact:
:math:`\mu=2/\sigma_{\mathrm{DP}}`-GDP under replace-one (:mod:`semi_core.sgd.accounting`). With
this, the runner (:func:`semi_core.game.play.play`, :func:`~semi_core.game.play.play_sweep`) and
the audit (:func:`semi_core.audit.games.audit_mechanism`) run DP-SGD exactly as they run the
empirical and noisy means.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from semi_core._names import Test
from semi_core._validation import check_release_args
from semi_core.mechanisms.base import GroundTruthUnknown, MechanismBase

from .accounting import dpsgd_epsilon
from .batched import batched_dpsgd_log_lr, ghost_grads, ghost_log_lr
from .device import move_setup
from .dpsgd import DPSGDConfig, draw_game, train_dpsgd_batched
from .grads import FunctionalModel, clip_rows

__all__ = ["AuditSetup", "DPSGDMechanism"]


@dataclass
class AuditSetup:
    """Everything the games need: model, :math:`\\theta_0`, data tensors, canary, config."""

    fm: FunctionalModel
    theta0: torch.Tensor
    pool_x: torch.Tensor
    pool_y: torch.Tensor
    ref_x: torch.Tensor
    ref_y: torch.Tensor
    canary_x: torch.Tensor
    canary_y: torch.Tensor
    cfg: DPSGDConfig
    shrinkage: float = 0.1
    ridge: float = 1e-4
    info: dict = field(default_factory=dict)

    def to(self, device) -> AuditSetup:
        """This setup with its model and tensors on ``device``
        (:func:`~semi_core.sgd.device.move_setup`; itself when already there).

        Parameters
        ----------
        device : str or torch.device
            Target device.

        Returns
        -------
        AuditSetup
            The moved setup (``self`` when already on ``device``).
        """
        return move_setup(self, device)


class DPSGDMechanism(MechanismBase):
    """The audited DP-SGD run of an :class:`AuditSetup` as a mechanism.

    Parameters
    ----------
    setup : AuditSetup
        Model, :math:`\\theta_0`, private pool, reference data, canary and configuration.
    fast_stats : bool
        For stacks of linear layers use the outer-product structure of the per-sample
        gradients (:func:`~semi_core.sgd.ghost.ghost_clipped_mean`,
        :func:`~semi_core.sgd.batched.ghost_log_lr`: same numbers, no per-sample gradient
        tensors); ``False`` forces the generic ``torch.func`` path.
    device : None, str or torch.device
        Where training and statistics run (default: the setup's; otherwise a moved copy,
        :meth:`AuditSetup.to`). Training keeps the model's dtype; releases, log-LRs and losses
        come back to the host as NumPy (float64 for a float64 model).
    """

    tests = (Test.SEMI_STAR.value, Test.SEMI_UNIF.value, Test.SEMI_MAX.value)

    def __init__(self, setup: AuditSetup, *, fast_stats: bool = True, device=None):
        if not isinstance(setup, AuditSetup):
            raise TypeError(f"setup must be an AuditSetup, got {type(setup).__name__}")
        if device is not None:
            setup = setup.to(device)
        self.setup = setup
        self.fast_stats = bool(fast_stats)
        self.T = int(setup.cfg.steps)

    def release(self, member, tau, rng: np.random.Generator) -> np.ndarray:
        r"""Trajectories :math:`\theta_1..\theta_T`, ``(R, T, d)``, of ``R`` runs trained together
        as replicas; round ``r`` has the canary at ``tau[r]`` when ``member[r]`` (``tau`` is not
        read for non-members). Each run's batches, slot and noise come from its own child seed
        of ``rng``, so a run does not depend on the other runs of its chunk.

        Parameters
        ----------
        member : array_like of bool, shape (R,)
            Whether the canary is inserted in each round.
        tau : int or array_like of int
            Insertion step(s) in 1..T.
        rng : numpy.random.Generator
            Source of the runs' child seeds.

        Returns
        -------
        ndarray, shape (R, T, d)
            The trajectories.
        """
        member, taus = check_release_args(member, tau, self.T)
        s = self.setup
        keys = rng.integers(0, 2**63 - 1, size=(member.size, 2))
        draws = [draw_game(np.random.SeedSequence(k.tolist()), pool_size=s.pool_x.shape[0],
                           cfg=s.cfg, d=s.fm.d, tau=int(t) if m else None)
                 for k, m, t in zip(keys, member, taus, strict=True)]
        with torch.no_grad():
            traj = train_dpsgd_batched(s.fm, s.theta0, draws, s.pool_x, s.pool_y,
                                       (s.canary_x, s.canary_y), s.cfg, fast=self.fast_stats)
        return traj[:, 1:].detach().cpu().numpy()

    def trajectories(self, releases) -> torch.Tensor:
        r""":math:`\theta_0..\theta_T` ``(R, T+1, d)`` from releases ``(R, T, d)``.

        Parameters
        ----------
        releases : array_like, shape (R, T, d)
            Releases.

        Returns
        -------
        torch.Tensor, shape (R, T+1, d)
            The trajectories with :math:`\theta_0` prepended.
        """
        traj = np.asarray(releases, dtype=float)
        if traj.ndim != 3 or traj.shape[1:] != (self.T, self.setup.fm.d):
            raise ValueError(f"releases must have shape (R, {self.T}, {self.setup.fm.d}), "
                             f"got {traj.shape}")
        if not np.isfinite(traj).all():
            raise ValueError("releases contain NaN or infinite parameters")
        t = torch.as_tensor(traj, dtype=self.setup.theta0.dtype, device=self.setup.theta0.device)
        theta0 = self.setup.theta0.reshape(1, 1, -1).expand(t.shape[0], 1, -1)
        return torch.cat([theta0, t], dim=1)

    def log_lr_steps(self, releases) -> np.ndarray:
        r"""Per-step DP-SGD log-LRs ``(R, T)`` from releases :math:`\theta_1..\theta_T`.

        Step ``t`` uses clipped reference gradients at each run's own :math:`\theta_{t-1}`
        (seed §4.2 estimation, shrinkage of :mod:`semi_core.sgd.gradstats`).

        Parameters
        ----------
        releases : array_like, shape (R, T, d)
            Releases.

        Returns
        -------
        ndarray, shape (R, T)
            Per-step log-LRs.
        """
        s, cfg = self.setup, self.setup.cfg
        fm = s.fm
        with torch.no_grad():
            traj = self.trajectories(releases)
            stack = fm.linear_stack() if self.fast_stats else None
            R, T1, _ = traj.shape
            cx, cy = s.canary_x.unsqueeze(0), s.canary_y.reshape(1)
            common = dict(eta=cfg.lr, n=cfg.batch_size, sigma_dp=cfg.sigma_dp, clip=cfg.clip,
                          shrinkage=s.shrinkage, ridge=s.ridge)
            lrs = torch.empty(R, T1 - 1, dtype=traj.dtype, device=traj.device)
            for t in range(1, T1):
                prev = traj[:, t - 1]
                if stack is not None:
                    tgt = clip_rows(ghost_grads(stack, prev, cx, cy)[:, 0], cfg.clip)
                    lrs[:, t - 1] = ghost_log_lr(traj[:, t] - prev, prev, stack, s.ref_x,
                                                 s.ref_y, tgt, **common)
                else:
                    tgt = clip_rows(fm.per_sample_grads_batched(prev, cx, cy,
                                                                shared=True)[:, 0], cfg.clip)
                    ref = clip_rows(fm.per_sample_grads_batched(prev, s.ref_x, s.ref_y,
                                                                shared=True), cfg.clip)
                    lrs[:, t - 1] = batched_dpsgd_log_lr(traj[:, t] - prev, ref, tgt, **common)
        return lrs.cpu().numpy()

    def canary_losses(self, releases) -> np.ndarray:
        r"""The canary's losses :math:`\ell(\theta_t; z^*)`, ``t = 0..T``, ``(R, T+1)``.

        Parameters
        ----------
        releases : array_like, shape (R, T, d)
            Releases.

        Returns
        -------
        ndarray, shape (R, T+1)
            The canary's loss at each step.
        """
        s = self.setup
        with torch.no_grad():
            traj = self.trajectories(releases)
            R, T1, d = traj.shape
            losses = s.fm.losses_batched(traj.reshape(R * T1, d), s.canary_x.unsqueeze(0),
                                         s.canary_y.reshape(1)).reshape(R, T1)
        return losses.cpu().numpy()

    def epsilon(self, delta: float, tau: int = 1) -> float:
        """Exact :math:`\\varepsilon(\\delta)` of the run (replace-one, :math:`\\mu=2/\\sigma_{DP}`).

        Parameters
        ----------
        delta : float
            The :math:`\\delta` of the profile, in (0, 1).
        tau : int
            Insertion step (the guarantee does not depend on it).

        Returns
        -------
        float
            :math:`\\varepsilon(\\delta)`, >= 0.
        """
        if self.setup.cfg.sigma_dp == 0:
            raise GroundTruthUnknown("plain SGD (sigma_dp = 0) is not differentially private")
        return dpsgd_epsilon(self.setup.cfg.sigma_dp, delta)

    def mu(self, tau: int = 1) -> float:
        """GDP parameter :math:`\\mu=2/\\sigma_{DP}` (every step; one record used once).

        Parameters
        ----------
        tau : int
            Insertion step (the guarantee does not depend on it).

        Returns
        -------
        float
            The GDP parameter, > 0.
        """
        if self.setup.cfg.sigma_dp == 0:
            raise GroundTruthUnknown("plain SGD (sigma_dp = 0) is not differentially private")
        return 2.0 / self.setup.cfg.sigma_dp

    def params(self) -> dict:
        """Configuration and setup information (JSON metadata).

        Returns
        -------
        dict
            DP-SGD hyper-parameters, ``d`` and how the statistics are computed.
        """
        c = self.setup.cfg
        return {"mechanism": "dp-sgd", "T": self.T, "batch_size": c.batch_size, "lr": c.lr,
                "clip": c.clip, "sigma_dp": c.sigma_dp, "d": int(self.setup.fm.d),
                "fast_stats": self.fast_stats,
                **{k: v for k, v in self.setup.info.items() if isinstance(v, int | float | str)}}
