r"""Heavy-ball SGD with weight decay, equal to ``torch.optim.SGD(lr, momentum, weight_decay)``.

The update of the IHA seed (``iha_parameters_vs_loss``, §2.2, Eq. 2), with
:math:`L_{\mathrm{tot}}(\mathbf w)=L(\mathbf w)+\tfrac\alpha2\|\mathbf w\|^2`, a mini-batch
:math:`\mathcal B_t` of size :math:`S` and :math:`\mathbf h_0=\mathbf 0`:

.. math::

    \mathbf g_t=\frac1S\sum_{i\in\mathcal B_t}\nabla\ell(\mathbf w_{t-1},\mathbf z_i)
        +\alpha\mathbf w_{t-1},\qquad
    \mathbf h_t=\mu\mathbf h_{t-1}+\mathbf g_t,\qquad
    \mathbf w_t=\mathbf w_{t-1}-\lambda\mathbf h_t .

This is exactly PyTorch's ``SGD`` with ``dampening=0, nesterov=False`` (its first step sets the
buffer to :math:`\mathbf g_1`, which is :math:`\mu\cdot\mathbf 0+\mathbf g_1`). The batch schedule
is an explicit index array (:func:`batch_schedule`), so a functional run (:func:`train_sgd`), the
``torch.optim.SGD`` oracle (:func:`train_sgd_torch`) and the batched replicas of
:mod:`semi_core.sgd.reference_models` see identical batches and give identical weights.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import torch
from torch import nn
from torch.func import grad

from semi_core._validation import check_int, check_positive

from .grads import FunctionalModel

__all__ = ["SGDConfig", "batch_schedule", "train_sgd", "train_sgd_torch", "TrainLog"]


@dataclass(frozen=True)
class SGDConfig:
    r"""Hyper-parameters :math:`(\lambda,\mu,\alpha,S)` and the training length.

    Attributes
    ----------
    lr : float > 0
        Learning rate :math:`\lambda` (seed §4.1: 0.01).
    momentum : float in [0, 1)
        :math:`\mu` (seed: 0.9).
    weight_decay : float >= 0
        :math:`\alpha` (seed: 5e-4).
    batch_size : int >= 1
        :math:`S`.
    epochs : float > 0
        Passes over the (expected) training set; ``steps = round(epochs * n / S)``.
    log_every : int >= 1
        Steps between two entries of the training log.
    """

    lr: float = 0.01
    momentum: float = 0.9
    weight_decay: float = 5e-4
    batch_size: int = 32
    epochs: float = 30.0
    log_every: int = 100

    def __post_init__(self):
        check_positive(self.lr, "lr")
        if not (isinstance(self.momentum, int | float) and 0.0 <= self.momentum < 1.0):
            raise ValueError(f"momentum must be in [0, 1), got {self.momentum!r}")
        if not (isinstance(self.weight_decay, int | float) and np.isfinite(self.weight_decay)
                and self.weight_decay >= 0):
            raise ValueError(f"weight_decay must be finite and >= 0, got {self.weight_decay!r}")
        check_int(self.batch_size, "batch_size", minimum=1)
        check_positive(self.epochs, "epochs")
        check_int(self.log_every, "log_every", minimum=1)

    def steps(self, n: int) -> int:
        """Number of steps for a training set of (expected) size ``n``.

        Parameters
        ----------
        n : int
            (Expected) size of the training set.

        Returns
        -------
        int
            ``round(epochs * n / batch_size)``, at least 1.
        """
        return max(1, int(round(self.epochs * n / self.batch_size)))

    def to_dict(self) -> dict:
        """The configuration as a plain dict.

        Returns
        -------
        dict
            Every field by name.
        """
        return asdict(self)


def batch_schedule(train_idx, steps: int, batch_size: int, rng: np.random.Generator) -> np.ndarray:
    """Mini-batch indices ``(steps, batch_size)``: shuffled passes over ``train_idx``.

    Consecutive random permutations of ``train_idx`` are concatenated and cut into batches of
    exactly ``batch_size`` (a pass that does not divide evenly continues into the next), so every
    record is used once per pass and every batch has the same size.

    Parameters
    ----------
    train_idx : array_like of int
        Indices of the training records (non-empty).
    steps : int
        Number of batches, >= 1.
    batch_size : int
        Records per batch, >= 1.
    rng : numpy.random.Generator
        Source of the permutations.

    Returns
    -------
    ndarray of int64, shape (steps, batch_size)
        The batches.
    """
    idx = np.asarray(train_idx, dtype=np.int64).reshape(-1)
    if idx.size == 0:
        raise ValueError("train_idx must hold at least one record")
    steps = check_int(steps, "steps", minimum=1)
    batch_size = check_int(batch_size, "batch_size", minimum=1)
    need = steps * batch_size
    passes = -(-need // idx.size)
    stream = np.concatenate([rng.permutation(idx) for _ in range(passes)])
    return stream[:need].reshape(steps, batch_size)


@dataclass
class TrainLog:
    """Training log: ``(step, batch loss before that step)`` pairs and the config."""

    config: dict
    steps: list[int]
    loss: list[float]

    def to_dict(self) -> dict:
        """The log as a plain dict.

        Returns
        -------
        dict
            ``config``, ``steps`` and ``loss``.
        """
        return {"config": self.config, "steps": self.steps, "loss": self.loss}


def _batch_loss(fm: FunctionalModel):
    def f(theta, xb, yb):
        return fm.losses(theta, xb, yb).mean()
    return f


def train_sgd(fm: FunctionalModel, theta0: torch.Tensor, x: torch.Tensor, y: torch.Tensor,
              schedule: np.ndarray, cfg: SGDConfig) -> tuple[torch.Tensor, TrainLog]:
    r"""One functional run of Eq. 2 on flat parameters; returns ``(w_T, log)``.

    .. math:: \mathbf h_t=\mu\mathbf h_{t-1}+\nabla L_{\mathcal B_t}(\mathbf w_{t-1})
        +\alpha\mathbf w_{t-1},\quad \mathbf w_t=\mathbf w_{t-1}-\lambda\mathbf h_t

    Parameters
    ----------
    fm : FunctionalModel
        The model.
    theta0 : torch.Tensor, shape (d,)
        Initial parameters (not modified).
    x : torch.Tensor, shape (N, ...)
        Training inputs.
    y : torch.Tensor, shape (N,)
        Training targets.
    schedule : ndarray of int, shape (steps, batch_size)
        Batch indices (:func:`batch_schedule`).
    cfg : SGDConfig
        Learning rate, momentum and weight decay.

    Returns
    -------
    w_T : torch.Tensor, shape (d,)
        Final parameters.
    log : TrainLog
        The batch losses.
    """
    sched = torch.as_tensor(np.asarray(schedule, dtype=np.int64))
    g_fn = grad(_batch_loss(fm))
    loss_fn = _batch_loss(fm)
    theta = theta0.detach().clone()
    buf = torch.zeros_like(theta)
    log = TrainLog(cfg.to_dict(), [], [])
    for t in range(sched.shape[0]):
        xb, yb = x[sched[t]], y[sched[t]]
        if (t + 1) % cfg.log_every == 0:  # batch loss before the step
            log.steps.append(t + 1)
            log.loss.append(float(loss_fn(theta, xb, yb)))
        g = g_fn(theta, xb, yb) + cfg.weight_decay * theta
        buf = cfg.momentum * buf + g
        theta = theta - cfg.lr * buf
    return theta, log


def train_sgd_torch(module: nn.Module, x: torch.Tensor, y: torch.Tensor, schedule: np.ndarray,
                    cfg: SGDConfig, *, loss: str = "cross_entropy") -> nn.Module:
    """Oracle: the same run with ``torch.optim.SGD(lr, momentum, weight_decay)`` on ``module``.

    ``loss`` as in :class:`~semi_core.sgd.grads.FunctionalModel` (``"mse"`` is
    :math:`\\tfrac12(f(x)-y)^2` on a scalar output). Trains ``module`` in place and returns it.

    Parameters
    ----------
    module : torch.nn.Module
        The model, trained in place.
    x : torch.Tensor, shape (N, ...)
        Training inputs.
    y : torch.Tensor, shape (N,)
        Training targets.
    schedule : ndarray of int, shape (steps, batch_size)
        Batch indices.
    cfg : SGDConfig
        Learning rate, momentum and weight decay.
    loss : {"cross_entropy", "mse"}
        The loss.

    Returns
    -------
    torch.nn.Module
        ``module`` after training.
    """
    opt = torch.optim.SGD([p for p in module.parameters() if p.requires_grad], lr=cfg.lr,
                          momentum=cfg.momentum, weight_decay=cfg.weight_decay)
    sched = torch.as_tensor(np.asarray(schedule, dtype=np.int64))
    for t in range(sched.shape[0]):
        xb, yb = x[sched[t]], y[sched[t]]
        opt.zero_grad()
        out = module(xb)
        if loss == "cross_entropy":
            val = nn.functional.cross_entropy(out, yb)
        else:
            val = (0.5 * (out.reshape(-1) - yb.reshape(-1)) ** 2).mean()
        val.backward()
        opt.step()
    return module
