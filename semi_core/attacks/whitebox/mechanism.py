r"""Models trained with heavy-ball SGD as a mechanism that releases their parameters: a pool
mechanism for the population game of §4 and a one-shot (``T = 1``) :class:`Mechanism` whose
auditor's log-LR is the seed's Thm 3.2 / IHA approximation.

Pool (``iha_parameters_vs_loss`` §4.1, after Carlini et al. 2022): the records are
``candidates`` (by default every record of ``x`` not in ``base``); row ``i`` of
:meth:`TrainedModelMechanism.release_pool` chooses which candidates join ``base`` in model
``i``'s training set, and the release is model ``i``'s final weight vector. All models of a call
train together (:mod:`semi_core.sgd.reference_models`) for the same number of steps
(``steps``), so a model does not depend on which other models share its call.
:func:`semi_core.game.play.play_pool` plays the population game on it
(:func:`semi_core.attacks.whitebox.experiment.run_attacks`).

One-shot game (seed §2.2, Eq. 2; with ``canary``): in round ``r`` a model is trained from a
random initialisation with a random batch order on :math:`D_0` (the ``base`` records) plus the
canary :math:`\mathbf z^*` when ``member[r]``; the release is the final weight vector
``(R, 1, d)`` (one pool row per round, the canary the only candidate).

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

import copy
import threading
from typing import Any

import numpy as np
import torch
from torch.func import functional_call, vmap

from semi_core._rng import as_seed_sequence
from semi_core._validation import check_int, check_positive
from semi_core.mechanisms.base import MechanismBase
from semi_core.sgd.grads import FunctionalModel
from semi_core.sgd.hessian import EigenInverse, mean_loss_hessian
from semi_core.sgd.momentum import SGDConfig
from semi_core.sgd.reference_models import init_thetas, schedules, train_models

from .scores import iha_score, iha_terms, logit_confidence

__all__ = ["TrainedModelMechanism", "FORWARD_AD_LOCK"]

#: Held around computations that use forward-mode AD (``torch.func.hessian`` / ``jvp``: the
#: exact Hessian, Hessian-vector products, CG): PyTorch's forward-AD levels are process-wide,
#: so two threads of the runner must not run them at once (other work stays parallel).
FORWARD_AD_LOCK = threading.RLock()


class TrainedModelMechanism(MechanismBase):
    """Models trained with heavy-ball SGD, releasing their weights; see the module docstring.

    Parameters
    ----------
    fm : FunctionalModel
    x, y : Tensor
        The records; ``base``, ``canary`` and ``candidates`` index into them.
    base : array_like of int
        Records in every training set (:math:`D_0`; at least 2 records with ``canary``).
    canary : int or None
        Index of :math:`\\mathbf z^*` (not in ``base``) for the one-shot game; ``None`` for a
        pool mechanism only (:meth:`release` and :meth:`log_lr_steps` then refuse).
    cfg : SGDConfig
        :math:`(\\lambda,\\mu,\\alpha,S)` and the number of epochs.
    damping : float or None
        Damping of the auditor's Hessian (seed: 0.2); unused (``None`` allowed) in pool mode.
    candidates : array_like of int, optional
        The pool's records (pool mode only): every record not in ``base`` by default.
    steps : int, optional
        SGD steps of every model; default ``cfg.steps(n)`` with ``n`` the expected training-set
        size (``|base| + 1`` with a canary, ``|base| + |candidates| / 2`` otherwise).
    """

    T = 1
    tests = ("semi-star",)

    def __init__(self, fm: FunctionalModel, x: torch.Tensor, y: torch.Tensor, base, canary,
                 cfg: SGDConfig, *, damping: float = 0.2, candidates=None,
                 steps: int | None = None):
        if not isinstance(cfg, SGDConfig):
            raise TypeError(f"cfg must be an SGDConfig, got {type(cfg).__name__}")
        N = int(x.shape[0])
        if int(y.shape[0]) != N:
            raise ValueError(f"x and y must hold the same records, got {N} and {y.shape[0]}")
        self.fm, self.x, self.y, self.cfg = fm, x, y, cfg
        self.base = np.unique(np.asarray(base, dtype=np.int64).reshape(-1))
        if self.base.size and (self.base.min() < 0 or self.base.max() >= N):
            raise ValueError(f"base indices must lie in 0..{N - 1}")
        self.damping = None if damping is None and canary is None else check_positive(
            damping, "damping")
        if canary is not None:
            if candidates is not None:
                raise ValueError("give either canary (the one-shot game) or candidates (a "
                                 "pool), not both")
            if self.base.size < 2:
                raise ValueError("base must hold at least 2 records")
            self.canary = check_int(canary, "canary", minimum=0, maximum=N - 1)
            if self.canary in set(self.base.tolist()):
                raise ValueError("canary must not be one of the base records")
            self.candidates = np.array([self.canary], dtype=np.int64)
            expected = self.base.size + 1.0
        else:
            self.canary = None
            cand = (np.setdiff1d(np.arange(N), self.base) if candidates is None
                    else np.asarray(candidates, dtype=np.int64).reshape(-1))
            if cand.size == 0:
                raise ValueError("candidates must hold at least 1 record")
            if cand.min() < 0 or cand.max() >= N:
                raise ValueError(f"candidates must lie in 0..{N - 1}")
            if np.unique(cand).size != cand.size or np.intersect1d(cand, self.base).size:
                raise ValueError("candidates must be distinct and not in base")
            self.candidates = cand
            expected = self.base.size + cand.size / 2.0
        self.n = int(self.base.size) + 1
        self.steps = (cfg.steps(max(expected, 1.0)) if steps is None
                      else check_int(steps, "steps", minimum=1))

    @classmethod
    def pool(cls, fm: FunctionalModel, x: torch.Tensor, y: torch.Tensor, cfg: SGDConfig, *,
             base=(), candidates=None, steps: int | None = None) -> TrainedModelMechanism:
        """A pool mechanism only (no canary): records ``candidates``, ``base`` always in.

        Parameters
        ----------
        fm : FunctionalModel
            The model.
        x : torch.Tensor
            Records' inputs.
        y : torch.Tensor
            Records' labels.
        cfg : SGDConfig
            Training configuration.
        base : sequence of int
            Records always in the training set.
        candidates : sequence of int, optional
            Records drawn per model; None = every record not in ``base``.
        steps : int, optional
            Training steps; None = from ``cfg``.

        Returns
        -------
        TrainedModelMechanism
            The pool mechanism.
        """
        return cls(fm, x, y, base, None, cfg, damping=None, candidates=candidates, steps=steps)

    def local_model(self) -> FunctionalModel:
        """A private copy of ``fm`` for one call: ``torch.func.functional_call`` swaps a
        module's parameters while it runs, so concurrent calls (the runner's threads) must not
        share a module.

        Returns
        -------
        FunctionalModel
            A deep copy of ``fm``.
        """
        return copy.deepcopy(self.fm)

    @property
    def n_records(self) -> int:
        """Records whose membership a pool row chooses (``len(candidates)``)."""
        return int(self.candidates.size)

    def training_set(self, row) -> np.ndarray:
        """Sorted indices into ``x`` of the training set chosen by one pool row.

        Parameters
        ----------
        row : array_like of bool, shape (n_records,)
            Which candidates are in.

        Returns
        -------
        ndarray of int
            Sorted record indices.
        """
        row = np.asarray(row, dtype=bool).reshape(-1)
        return np.union1d(self.base, self.candidates[row])

    def release_pool(self, rows, rng: np.random.Generator) -> np.ndarray:
        """Train one model per row of ``rows`` ``(m, n_records)`` (batched) and release the
        final weights ``(m, d)``; initial weights and batch orders from ``rng``.

        Parameters
        ----------
        rows : ndarray of bool, shape (m, n_records)
            Candidate membership of each model.
        rng : numpy.random.Generator
            Source of the initial weights and batch orders.

        Returns
        -------
        ndarray, shape (m, d)
            Final weights.
        """
        rows = np.asarray(rows)
        if rows.dtype != bool or rows.ndim != 2 or rows.shape[1] != self.n_records:
            raise ValueError(f"rows must be a bool array of shape (m, {self.n_records}), got "
                             f"{rows.dtype} {rows.shape}")
        m = rows.shape[0]
        full = np.zeros((m, self.x.shape[0]), dtype=bool)
        full[:, self.base] = True
        full[:, self.candidates] = rows
        seeds = as_seed_sequence(int(rng.integers(2**63))).spawn(m)
        fm = self.local_model()
        with torch.no_grad():
            th = train_models(fm, init_thetas(fm, seeds), self.x, self.y,
                              schedules(full, self.cfg, seeds, steps=self.steps), self.cfg)
        return th.numpy()

    def _need_canary(self, what: str) -> None:
        if self.canary is None:
            raise ValueError(f"{what} needs the one-shot game (a canary); this "
                             "TrainedModelMechanism is a pool mechanism (use play_pool)")

    def release(self, member, tau, rng: np.random.Generator) -> np.ndarray:
        """Train ``len(member)`` models (batched) and release their weights ``(R, 1, d)``.

        Parameters
        ----------
        member : array_like of bool, shape (R,)
            Whether the canary is in each model's training set.
        tau : int or array_like of int
            Insertion step (1).
        rng : numpy.random.Generator
            Source of randomness.

        Returns
        -------
        ndarray, shape (R, 1, d)
            Final weights.
        """
        self._need_canary("release")
        member = np.asarray(member, dtype=bool).reshape(-1, 1)
        return self.release_pool(member, rng)[:, None, :]

    def confidence_kind(self) -> str:
        """``"binary"`` (sigmoid head, MSE loss: the pre-sigmoid score) or ``"logits"``
        (cross-entropy) for :func:`~semi_core.attacks.whitebox.scores.logit_confidence`.

        Returns
        -------
        {"binary", "logits"}
            The kind.
        """
        mod = self.fm.module
        if self.fm.loss_name == "mse" and isinstance(mod, torch.nn.Sequential) and \
                isinstance(mod[-1], torch.nn.Sigmoid):
            return "binary"
        if self.fm.loss_name == "cross_entropy":
            return "logits"
        raise ValueError("confidences need a sigmoid + MSE or a cross-entropy model, got loss "
                         f"{self.fm.loss_name!r}")

    def confidences(self, thetas, idx) -> np.ndarray:
        """Logit-scaled confidences ``(M, k)`` of models ``thetas (M, d)`` on records ``idx``
        (indices into ``x``).

        Parameters
        ----------
        thetas : array_like, shape (M, d)
            Model weights.
        idx : array_like of int, shape (k,)
            Record indices.

        Returns
        -------
        ndarray, shape (M, k)
            Logit confidences.
        """
        kind = self.confidence_kind()
        fm = self.local_model()
        module = fm.module[:-1] if kind == "binary" else fm.module

        def f(theta, xb):
            return functional_call(module, {**fm.frozen, **fm.unflatten(theta)}, (xb,))

        thetas = torch.as_tensor(thetas)
        idx = torch.as_tensor(np.asarray(idx, dtype=np.int64))
        with torch.no_grad():
            out = vmap(f, in_dims=(0, None))(thetas, self.x[idx])
            phi = logit_confidence(out, self.y[idx].expand(thetas.shape[0], -1), kind=kind)
        return phi.numpy()

    def losses(self, thetas, idx) -> np.ndarray:
        """Per-record losses ``(M, k)`` of models ``thetas (M, d)`` on records ``idx``.

        Parameters
        ----------
        thetas : array_like, shape (M, d)
            Model weights.
        idx : array_like of int, shape (k,)
            Record indices.

        Returns
        -------
        ndarray, shape (M, k)
            Per-record losses.
        """
        idx = torch.as_tensor(np.asarray(idx, dtype=np.int64))
        with torch.no_grad():
            return self.local_model().losses_batched(torch.as_tensor(thetas), self.x[idx],
                                                     self.y[idx]).numpy()

    def log_lr_steps(self, releases) -> np.ndarray:
        """Thm 3.2's log-LR of each release, ``(R, 1)`` (auditor: knows :math:`D_0` only).

        Parameters
        ----------
        releases : array_like, shape (R, 1, d)
            Final weights.

        Returns
        -------
        ndarray, shape (R, 1)
            The log-LR of each release.
        """
        self._need_canary("log_lr_steps")
        rel = np.asarray(releases, dtype=np.float64)
        if rel.ndim != 3 or rel.shape[1] != 1 or rel.shape[2] != self.fm.d:
            raise ValueError(f"releases must have shape (R, 1, {self.fm.d}), got {rel.shape}")
        xb, yb = self.x[self.base], self.y[self.base]
        xz, yz = self.x[self.canary:self.canary + 1], self.y[self.canary:self.canary + 1]
        fm = self.local_model()
        out = np.empty((rel.shape[0], 1))
        with FORWARD_AD_LOCK:
            self._log_lr_rows(fm, rel, xb, yb, xz, yz, out)
        return out

    def _log_lr_rows(self, fm, rel, xb, yb, xz, yz, out) -> None:
        c = self.cfg
        for r in range(rel.shape[0]):
            w = torch.as_tensor(rel[r, 0])
            with torch.no_grad():
                base_losses = fm.losses(w, xb, yb)
                g_base = fm.per_sample_grads(w, xb, yb)
                loss_z = fm.losses(w, xz, yz).numpy()
                g_z = fm.per_sample_grads(w, xz, yz)
            inv = EigenInverse(mean_loss_hessian(fm, w, xb, yb), epsilon=self.damping)
            g0 = g_base.sum(0, keepdim=True) / self.n
            terms = iha_terms(inv, g_z, loss_z, n=self.n, lr=c.lr, momentum=c.momentum,
                              weight_decay=c.weight_decay, grad_l0=g0)
            L_star = float(base_losses.mean())
            pref = c.batch_size * (1 - c.momentum) / (2 * self.n * L_star)
            out[r, 0] = pref * iha_score(terms, lr=c.lr)[0]

    def params(self) -> dict[str, Any]:
        return {"mechanism": "TrainedModelMechanism", "T": 1, "n_base": int(self.base.size),
                "canary": None if self.canary is None else int(self.canary),
                "n_records": self.n_records, "steps": int(self.steps), "d": int(self.fm.d),
                "damping": self.damping, "sgd": self.cfg.to_dict(), "loss": self.fm.loss_name}
