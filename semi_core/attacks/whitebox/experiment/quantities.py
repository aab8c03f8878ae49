"""White-box quantities of one target model (:class:`WhiteBox`): losses, gradients, the Hessian
and its inverses, computed once and cached.
"""

from __future__ import annotations

import time

import numpy as np
import torch

from semi_core._validation import check_positive, check_probability
from semi_core.attacks._budget import _C_ACT, hvp_rows
from semi_core.game.play import PoolView
from semi_core.sgd.hessian import CGInverse, EigenInverse, hvp_operator, mean_loss_hessian
from semi_core.sgd.momentum import SGDConfig

from ..scores import (
    iha_terms,
    sif_score,
)

__all__ = ["WhiteBox"]


_GRAD_CHUNK = 256


class _RowChunks:
    """``V -> matvec(V)`` applied to ``rows`` rows at a time (bounds the batched HVP's
    activations, :func:`semi_core.attacks._budget.hvp_rows`; each row's product is its own)."""

    def __init__(self, matvec, rows: int):
        self.matvec, self.rows = matvec, int(rows)

    def __call__(self, V):
        if V.ndim == 1 or V.shape[0] <= self.rows:
            return self.matvec(V)
        return torch.cat([self.matvec(V[a:a + self.rows])
                          for a in range(0, V.shape[0], self.rows)])


def _model_shape_of(fm) -> tuple[int, int]:
    """``(d, A)`` of a built model (:func:`semi_core.attacks._budget.model_shape`): features,
    hidden widths and outputs read from its ``Linear`` layers."""
    lin = [m for m in fm.module.modules() if isinstance(m, torch.nn.Linear)]
    widths = tuple(m.out_features for m in lin)
    return int(fm.d), lin[0].in_features + _C_ACT * sum(widths)


class _Scaled:
    """``V -> scale * matvec(V)``."""

    def __init__(self, matvec, scale: float):
        self.matvec, self.scale = matvec, scale

    def __call__(self, V):
        return self.scale * self.matvec(V)


class WhiteBox:
    r"""White-box quantities of one target model, computed once and cached: losses and
    per-sample gradients of the targets, the mean training gradient :math:`\nabla L_1`, the
    per-sample training gradients (for the LOO-fraction variant), the exact Hessian of the mean
    training loss and the matrix-free HVP operator.

    Parameters
    ----------
    view : PoolView
        The population game (its mechanism a :class:`TrainedModelMechanism`).
    t : int
        The target model.
    records : array_like of int
        Pool records scored (indices into the mechanism's candidates).
    damping, cg_tol : float
        Default damping of the inverse Hessians and the CG tolerance.
    loss_scale : float
        The auditor's loss is ``loss_scale`` times the model's (``2``: the authors' MSE
        convention :math:`(\sigma-y)^2` for a model trained on :math:`\tfrac12(\sigma-y)^2`):
        losses, gradients, the Hessian and HVPs are scaled by it, so the damping applies to the
        scaled Hessian (:data:`MSE_CONVENTIONS`).
    sgd : SGDConfig, optional
        The hyper-parameters :math:`(\lambda,\mu,\alpha)` of Eq. 8 in the auditor's loss
        convention (default: the mechanism's training configuration).
    """

    def __init__(self, view: PoolView, t: int, records, *, damping: float = 0.2,
                 cg_tol: float = 1e-10, loss_scale: float = 1.0, sgd: SGDConfig | None = None):
        mech = view.mech
        self.mech, self.t = mech, int(t)
        self.fm = fm = mech.local_model()        # this object's own module (thread safety)
        self.sgd: SGDConfig = mech.cfg if sgd is None else sgd
        self.loss_scale = check_positive(loss_scale, "loss_scale")
        self.damping, self.cg_tol = float(damping), float(cg_tol)
        records = np.asarray(records, dtype=np.int64)
        self.targets = mech.candidates[records]
        self.theta = torch.as_tensor(view.models[self.t])
        self.train_idx = mech.training_set(view.membership[self.t])
        self.n = int(self.train_idx.size)
        self.member = view.membership[self.t, records]
        with torch.no_grad():
            self.losses = self.loss_scale * fm.losses(
                self.theta, mech.x[self.targets], mech.y[self.targets]).numpy()
        self._grads = self._train_grads = self._grad_l1 = None
        self._H = None
        self.seconds: dict[str, float] = {}

    # gradients are computed on first use: LOSS needs none, IHA and SIF the targets' and the
    # mean training gradient, only the LOO-fraction variant every training record's
    @property
    def grads(self) -> torch.Tensor:
        """Per-sample gradients of the targets ``(k, d)`` (cached)."""
        if self._grads is None:
            x, y = self.mech.x[self.targets], self.mech.y[self.targets]
            with torch.no_grad():
                self._grads = self.loss_scale * self.fm.per_sample_grads(self.theta, x, y)
        return self._grads

    @property
    def train_grads(self) -> torch.Tensor:
        """Per-sample gradients of the training set ``(n, d)`` (cached)."""
        if self._train_grads is None:
            x, y = self.mech.x[self.train_idx], self.mech.y[self.train_idx]
            with torch.no_grad():
                self._train_grads = self.loss_scale * self.fm.per_sample_grads(self.theta, x, y)
        return self._train_grads

    @property
    def grad_l1(self) -> torch.Tensor:
        r"""Mean training gradient :math:`\nabla L_1` ``(d,)``, summed over chunks of
        :data:`_GRAD_CHUNK` records (no ``n x d`` array)."""
        if self._grad_l1 is None:
            if self._train_grads is not None:
                self._grad_l1 = self._train_grads.mean(0)
            else:
                total = torch.zeros(self.fm.d, dtype=self.theta.dtype)
                with torch.no_grad():
                    for a in range(0, self.n, _GRAD_CHUNK):
                        rows = self.train_idx[a:a + _GRAD_CHUNK]
                        total += self.fm.per_sample_grads(self.theta, self.mech.x[rows],
                                                          self.mech.y[rows]).sum(0)
                self._grad_l1 = self.loss_scale * total / self.n
        return self._grad_l1

    def hessian(self) -> torch.Tensor:
        """Exact :math:`\\nabla^2L` on the target's training set (cached).

        Returns
        -------
        torch.Tensor, shape (d, d)
            The Hessian.
        """
        if self._H is None:
            t0 = time.perf_counter()
            self._H = self.loss_scale * mean_loss_hessian(
                self.fm, self.theta, self.mech.x[self.train_idx], self.mech.y[self.train_idx])
            self.seconds["hessian"] = time.perf_counter() - t0
        return self._H

    def inverse(self, method: str = "exact", *, epsilon: float | None = None,
                lowrank: bool = False):
        """``EigenInverse`` (damping or low-rank) or a ``CGInverse`` on the HVP operator.

        Parameters
        ----------
        method : {"exact", "cg"}
            Eigen-decomposition or conjugate gradients.
        epsilon : float, optional
            Damping (or low-rank threshold); None = the configured damping.
        lowrank : bool
            Low-rank pseudo-inverse instead of damping (``exact`` only).

        Returns
        -------
        EigenInverse or CGInverse
            The inverse operator.
        """
        eps = self.damping if epsilon is None else epsilon
        if method == "exact":
            return EigenInverse(self.hessian(), epsilon=eps,
                                method="lowrank" if lowrank else "damping")
        if method == "cg":
            hvp = hvp_operator(self.fm, self.theta, self.mech.x[self.train_idx],
                               self.mech.y[self.train_idx])
            if self.loss_scale != 1.0:
                hvp = _Scaled(hvp, self.loss_scale)
            _, act = _model_shape_of(self.fm)
            return CGInverse(_RowChunks(hvp, hvp_rows(self.n, act)), damping=eps,
                             tol=self.cg_tol)
        raise ValueError(f"method must be 'exact' or 'cg', got {method!r}")

    def iha_terms(self, inv, *, loo_fraction: float = 1.0, rng=None) -> dict[str, np.ndarray]:
        r"""Eq. 8 terms; ``loo_fraction < 1`` estimates :math:`\nabla L_0` from a random
        fraction of :math:`D\setminus\{z\}` per target (App. F, Table 9), scaled to the full
        :math:`1/n` normalisation.

        Parameters
        ----------
        inv : EigenInverse or CGInverse
            The inverse Hessian.
        loo_fraction : float
            Fraction of :math:`D\setminus\{z\}` used, in (0, 1].
        rng : numpy.random.Generator, optional
            Source of the subsets (``loo_fraction < 1``).

        Returns
        -------
        dict of str to ndarray
            Eq. 8's terms per target.
        """
        sgd = self.sgd
        kw = dict(n=self.n, lr=sgd.lr, momentum=sgd.momentum, weight_decay=sgd.weight_decay)
        if loo_fraction >= 1.0:
            return iha_terms(inv, self.grads, self.losses, grad_l1=self.grad_l1,
                             member=self.member, **kw)
        loo_fraction = check_probability(loo_fraction, "loo_fraction")
        rng = np.random.default_rng(0) if rng is None else rng
        pos = {int(r): i for i, r in enumerate(self.train_idx)}
        rows = np.zeros((self.targets.size, self.n))
        for j, rec in enumerate(self.targets):
            avail = np.ones(self.n, dtype=bool)
            if int(rec) in pos:
                avail[pos[int(rec)]] = False
            cand = np.flatnonzero(avail)
            k = max(1, int(round(loo_fraction * cand.size)))
            pick = rng.choice(cand, size=k, replace=False)
            rows[j, pick] = cand.size / (k * self.n)   # unbiased for (1/n) sum over D \ {z}
        g0 = torch.as_tensor(rows) @ self.train_grads
        return iha_terms(inv, self.grads, self.losses, grad_l0=g0, **kw)

    def sif(self, inv) -> np.ndarray:
        """SIF scores of the targets (:func:`~semi_core.attacks.whitebox.scores.sif_score`).

        Parameters
        ----------
        inv : EigenInverse or CGInverse
            The damped inverse Hessian.

        Returns
        -------
        ndarray, shape (k,)
            The scores.
        """
        return sif_score(inv, self.grads)
