r"""A model trained once with heavy-ball SGD as a one-shot (``T = 1``) :class:`Mechanism` that
releases its parameters; the auditor's log-LR is the seed's Thm 3.2 / IHA approximation.

Release (``iha_parameters_vs_loss`` §2.2, Eq. 2): in round ``r`` a model is trained from a
random initialisation with a random batch order on :math:`D_0` (the ``base`` records) plus the
canary :math:`\mathbf z^*` when ``member[r]``; the release is the final weight vector
``(R, 1, d)``. All models of a call train together (:mod:`semi_core.sgd.reference_models`).

Auditor (leave-one-out knowledge, seed Table 1): knows :math:`D_0` and the hyper-parameters.
With :math:`n=|D_0|+1`, :math:`\nabla L_0(\mathbf w)=\frac1n\sum_{D_0}\nabla\ell`,
:math:`\mathbf H_*` the damped Hessian of the mean loss on :math:`D_0` (membership-free) and
:math:`L_*` the mean loss on :math:`D_0` at :math:`\mathbf w`,

.. math::

    \log\mathrm{LR}(\mathbf w)\approx\frac{S(1-\mu)}{2nL_*}\Big(\frac{\ell(\mathbf w,\mathbf z^*)}
        {1+\mu}-\frac{I_1+I_2+I_3+I_4}\lambda\Big)\qquad\text{(Thm 3.2, Eq. 7)} .

This is an approximation (Assumptions 1-3), so :meth:`epsilon` has no ground truth; the
certified bounds of :func:`semi_core.audit.games.audit_game_result` on the game remain valid
lower bounds whatever the score (the score only affects their tightness).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from semi_core._rng import as_seed_sequence
from semi_core._validation import check_int, check_positive
from semi_core.mechanisms.base import MechanismBase
from semi_core.sgd.grads import FunctionalModel
from semi_core.sgd.hessian import EigenInverse, mean_loss_hessian
from semi_core.sgd.momentum import SGDConfig
from semi_core.sgd.reference_models import init_thetas, schedules, train_models

from .scores import iha_score, iha_terms

__all__ = ["TrainedModelMechanism"]


class TrainedModelMechanism(MechanismBase):
    """One SGD-trained model per round, released once (``T = 1``); see the module docstring.

    Parameters
    ----------
    fm : FunctionalModel
    x, y : Tensor
        The pool; ``base`` and ``canary`` index into it.
    base : array_like of int
        :math:`D_0`, in every training set (at least 2 records).
    canary : int
        Index of :math:`\\mathbf z^*` (not in ``base``).
    cfg : SGDConfig
        :math:`(\\lambda,\\mu,\\alpha,S)` and the number of epochs.
    damping : float
        Damping of the auditor's Hessian (seed: 0.2).
    """

    T = 1
    tests = ("semi-star",)

    def __init__(self, fm: FunctionalModel, x: torch.Tensor, y: torch.Tensor, base, canary: int,
                 cfg: SGDConfig, *, damping: float = 0.2):
        self.fm, self.x, self.y, self.cfg = fm, x, y, cfg
        self.base = np.unique(np.asarray(base, dtype=np.int64))
        if self.base.size < 2:
            raise ValueError("base must hold at least 2 records")
        if self.base.min() < 0 or self.base.max() >= x.shape[0]:
            raise ValueError(f"base indices must lie in 0..{x.shape[0] - 1}")
        self.canary = check_int(canary, "canary", minimum=0, maximum=x.shape[0] - 1)
        if self.canary in set(self.base.tolist()):
            raise ValueError("canary must not be one of the base records")
        self.damping = check_positive(damping, "damping")
        self.n = int(self.base.size) + 1

    def release(self, member, tau, rng: np.random.Generator) -> np.ndarray:
        """Train ``len(member)`` models (batched) and release their weights ``(R, 1, d)``."""
        member = np.asarray(member, dtype=bool).reshape(-1)
        R = member.size
        rows = np.zeros((R, self.x.shape[0]), dtype=bool)
        rows[:, self.base] = True
        rows[member, self.canary] = True
        seeds = as_seed_sequence(int(rng.integers(2**63))).spawn(R)
        steps = self.cfg.steps(self.n)
        with torch.no_grad():
            th = train_models(self.fm, init_thetas(self.fm, seeds), self.x, self.y,
                              schedules(rows, self.cfg, seeds, steps=steps), self.cfg)
        return th.numpy()[:, None, :]

    def log_lr_steps(self, releases) -> np.ndarray:
        """Thm 3.2's log-LR of each release, ``(R, 1)`` (auditor: knows :math:`D_0` only)."""
        rel = np.asarray(releases, dtype=np.float64)
        if rel.ndim != 3 or rel.shape[1] != 1 or rel.shape[2] != self.fm.d:
            raise ValueError(f"releases must have shape (R, 1, {self.fm.d}), got {rel.shape}")
        xb, yb = self.x[self.base], self.y[self.base]
        xz, yz = self.x[self.canary:self.canary + 1], self.y[self.canary:self.canary + 1]
        c = self.cfg
        out = np.empty((rel.shape[0], 1))
        for r in range(rel.shape[0]):
            w = torch.as_tensor(rel[r, 0])
            with torch.no_grad():
                base_losses = self.fm.losses(w, xb, yb)
                g_base = self.fm.per_sample_grads(w, xb, yb)
                loss_z = self.fm.losses(w, xz, yz).numpy()
                g_z = self.fm.per_sample_grads(w, xz, yz)
            inv = EigenInverse(mean_loss_hessian(self.fm, w, xb, yb), epsilon=self.damping)
            g0 = g_base.sum(0, keepdim=True) / self.n
            terms = iha_terms(inv, g_z, loss_z, n=self.n, lr=c.lr, momentum=c.momentum,
                              weight_decay=c.weight_decay, grad_l0=g0)
            L_star = float(base_losses.mean())
            pref = c.batch_size * (1 - c.momentum) / (2 * self.n * L_star)
            out[r, 0] = pref * iha_score(terms, lr=c.lr)[0]
        return out

    def params(self) -> dict[str, Any]:
        return {"mechanism": "TrainedModelMechanism", "T": 1, "n_base": int(self.base.size),
                "canary": int(self.canary), "d": int(self.fm.d), "damping": self.damping,
                "sgd": self.cfg.to_dict(), "loss": self.fm.loss_name}
