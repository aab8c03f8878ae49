"""The white-box mechanism whose releases are trained by Opacus: :class:`OpacusMechanism`.
"""

from __future__ import annotations

import warnings

import numpy as np
import torch

from semi_core.integrations.opacus.prepare import _OpacusContext
from semi_core.integrations.opacus.training import _TRAIN_LOCK, _draw_poisson, _opacus_train
from semi_core.mechanisms.base import GroundTruthUnknown
from semi_core.sgd.accounting import poisson_pld_epsilon
from semi_core.sgd.bugs import Bug
from semi_core.sgd.dirac import (
    Runs,
    WhiteBoxMechanism,
)
from semi_core.sgd.lr import poisson_dirac_log_lr

__all__ = ["OpacusMechanism"]


class OpacusMechanism(WhiteBoxMechanism):
    r"""The white-box game of :mod:`semi_core.sgd.dirac` trained by Opacus' real optimizer.

    ``release`` trains the chunk's runs one after another through ``PrivacyEngine.make_private``
    (one wrapping per chunk on fixed batches, each run reset to :math:`\theta_0` and its seed)
    (``GradSampleModule`` per-sample gradients, ``DPOptimizer`` clipping, noise and scaling; with
    ``sampler="poisson"`` its ``DPDataLoader``), on the Crafter's draws (:func:`~semi_core.sgd.
    dirac.draw_runs`: the same batches and slots as the batched trainer given the same ``rng``;
    Opacus' noise from a ``torch.Generator`` seeded per run). Releases, log-LRs and scorers are
    those of :class:`~semi_core.sgd.dirac.WhiteBoxMechanism`.

    ``sampler="poisson"`` (add/remove): one canary per run, present in the dataset under
    :math:`H_1`; ``tau`` is not used; the Dirac per-step log-LR is the exact mixture term
    :math:`\log(1-q+q\,e^{(2s_t-1)/(2\sigma_{DP}^2)})` with :math:`s_t` standardised by the
    expected batch size, and the ground truth is the ``dp_accounting`` PLD
    (:func:`poisson_pld_epsilon`).

    Opacus' warnings of the runs trained in this process are collected in ``warnings_seen``
    (runs on Dask workers report none; the runner's pilot run is always local).
    """

    def __init__(self, ctx: _OpacusContext, *, bug: Bug | None = None,
                 timings: dict | None = None):
        if not isinstance(ctx, _OpacusContext):
            raise TypeError(f"ctx must come from prepare_opacus_setup, got {type(ctx).__name__}")
        super().__init__(ctx.setup, bug=bug, timings=timings)
        self.ctx = ctx
        self.sampler = ctx.sampler
        self.warnings_seen: set[str] = set()
        if self.sampler == "poisson":
            self.k = 1
            self.sample_rate = float(ctx.setup.info["sample_rate"])
            self.expected_batch_size = int(ctx.setup.info["expected_batch_size"])

    def release(self, member, tau, rng: np.random.Generator) -> np.ndarray:
        """Releases ``(R, T, d + 1)`` (:class:`~semi_core.sgd.dirac.WhiteBoxMechanism`).

        Parameters
        ----------
        member : array_like of bool, shape (R,)
            Canary bit of each round.
        tau : int or array_like of int
            Insertion step(s) in 1..T.
        rng : numpy.random.Generator
            Source of the runs' seeds.

        Returns
        -------
        ndarray, shape (R, T, d + 1)
            Parameters after each step, with the round's canary index in the last column.
        """
        if self.sampler == "fixed":
            return super().release(member, tau, rng)
        member = np.asarray(member, dtype=bool).reshape(-1)
        return self.pack_releases(self.train_runs(_draw_poisson(member, rng)), member.size)

    def train_runs(self, runs: Runs) -> torch.Tensor:
        """Train ``runs`` through Opacus: :math:`(\\theta_0..\\theta_T)` ``(m, T+1, d)``.

        Parameters
        ----------
        runs : Runs
            Draws of the runs (:func:`~semi_core.sgd.dirac.draw_runs`).

        Returns
        -------
        torch.Tensor, shape (m, T+1, d)
            The trajectories.
        """
        caught: list[str] = []
        with _TRAIN_LOCK, warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            traj = _opacus_train(self.ctx, runs, self.bug, caught,
                                 {} if self.timings is None else self.timings)
        caught.extend(f"{x.category.__name__}: {x.message}" for x in w)
        self.warnings_seen.update(caught)
        return traj

    def standardised(self, traj: torch.Tensor, idx: np.ndarray) -> np.ndarray:
        """:math:`s_t`; under Poisson sampling standardised by the expected batch size.

        Parameters
        ----------
        traj : torch.Tensor, shape (R, T+1, d)
            Trajectories.
        idx : ndarray of int, shape (R,)
            Canary index of each round.

        Returns
        -------
        ndarray, shape (R, T)
            The standardised updates.
        """
        s = super().standardised(traj, idx)
        if self.sampler == "poisson":
            s = s * (self.expected_batch_size / self.setup.cfg.batch_size)
        return s

    def log_lr_steps(self, releases) -> np.ndarray:
        """Per-step log-LRs ``(R, T)``; Poisson Dirac: the mixture terms (class docstring).

        Parameters
        ----------
        releases : array_like, shape (R, T, d + 1)
            Releases.

        Returns
        -------
        ndarray, shape (R, T)
            Per-step log-LRs.
        """
        if self.sampler == "fixed" or self.setup.kind != "dirac":
            return super().log_lr_steps(releases)
        traj, idx = self.trajectories(releases)
        s = self.standardised(traj, idx)
        return poisson_dirac_log_lr(s, q=self.sample_rate, a=0.0,
                                    var=self.setup.cfg.sigma_dp ** 2)

    def epsilon(self, delta: float, tau: int = 1) -> float:
        """Exact :math:`\\varepsilon(\\delta)`: :math:`\\mu`-GDP (fixed batches, replace-one) or
        the PLD of ``T`` Poisson-subsampled Gaussian steps (add/remove, correct runs only).

        Parameters
        ----------
        delta : float
            The :math:`\\delta` of the profile, in (0, 1).
        tau : int
            Insertion step.

        Returns
        -------
        float
            :math:`\\varepsilon(\\delta)`, >= 0.
        """
        if self.sampler == "fixed":
            return super().epsilon(delta, tau)
        if self.bug is not None:
            raise GroundTruthUnknown("no closed form for a buggy Poisson-subsampled run")
        cfg = self.setup.cfg
        return poisson_pld_epsilon(cfg.sigma_dp, self.sample_rate, cfg.steps, delta)

    def params(self) -> dict:
        """Configuration (JSON metadata).

        Returns
        -------
        dict
            The white-box configuration with the engine, sampler and canaries per run.
        """
        out = {**super().params(), "mechanism": "opacus-dp-sgd", "engine": "opacus",
               "sampler": self.sampler, "canaries_per_run": self.k}
        if self.sampler == "poisson":
            out.update(sample_rate=self.sample_rate,
                       expected_batch_size=self.expected_batch_size)
        return out
