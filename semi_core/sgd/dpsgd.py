"""DP-SGD trainer whose batch schedule the Crafter controls (seed §4.2, Algorithm 2 for SGD).

Step :math:`t` (fresh batch :math:`D_t` of ``n`` records, each record used in exactly one step):

.. math::

   \\theta_t = \\theta_{t-1} - \\eta\\Big(\\frac1n\\sum_{x\\in D_t}\\mathrm{clip}_C(\\nabla_\\theta
   \\ell(\\theta_{t-1}; x)) + \\xi_t\\Big),\\qquad
   \\xi_t\\sim\\mathcal N(0, \\sigma_{DP}^2C^2 I/n^2).

Under :math:`H_1^\\tau` the canary replaces one uniformly chosen element of batch
:math:`D_\\tau`. ``sigma_dp = 0`` is clipped SGD without noise. All randomness of a game (batch
indices, canary slot, noise) comes from that game's own ``SeedSequence``, so a run gives the same
trajectory whether games are trained one at a time or as a batch of replicas.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from semi_core._validation import check_batch_size, check_int, check_positive, check_tau

from .ghost import ghost_clipped_mean
from .grads import FunctionalModel, clip_rows

__all__ = ["DPSGDConfig", "GameDraw", "draw_game", "train_dpsgd", "train_dpsgd_batched"]


@dataclass(frozen=True)
class DPSGDConfig:
    """Hyper-parameters of the audited run.

    Attributes
    ----------
    batch_size : int >= 2
    steps : int >= 1
        ``T``.
    lr : float > 0
        :math:`\\eta` (constant).
    clip : float > 0
        :math:`C`.
    sigma_dp : float >= 0
        Noise multiplier (noise std :math:`\\sigma_{DP}C/n` on the clipped mean).
    """

    batch_size: int = 64
    steps: int = 10
    lr: float = 0.5
    clip: float = 1.0
    sigma_dp: float = 0.0

    def __post_init__(self):
        check_batch_size(self.batch_size, "batch_size")
        check_int(self.steps, "steps", minimum=1)
        check_positive(self.lr, "lr")
        check_positive(self.clip, "clip")
        if not (np.isfinite(self.sigma_dp) and self.sigma_dp >= 0):
            raise ValueError(f"sigma_dp must be finite and >= 0, got {self.sigma_dp}")


@dataclass
class GameDraw:
    """The Crafter's choices for one run: batch indices into the private pool ``(T, n)``,
    the canary slot (``None`` under H0) and standard-normal noise ``(T, d)``."""

    batches: np.ndarray
    tau: int | None
    slot: int | None
    noise: np.ndarray


def draw_game(seed_seq: np.random.SeedSequence, *, pool_size: int, cfg: DPSGDConfig, d: int,
              tau: int | None) -> GameDraw:
    """Draw one run: ``T`` fresh disjoint batches from the pool, the canary slot, the noise.

    ``tau=None`` is an H0 run; otherwise the canary replaces batch ``tau``'s element ``slot``
    (uniform on ``0..n-1``).

    Parameters
    ----------
    seed_seq : numpy.random.SeedSequence
        The run's stream.
    pool_size : int
        Number of private records, >= T n.
    cfg : DPSGDConfig
        Steps, batch size and noise.
    d : int
        Number of parameters.
    tau : int or None
        Insertion step in 1..T, or None for an H0 run.

    Returns
    -------
    GameDraw
        Batches, canary slot and noise of the run.
    """
    T, n = cfg.steps, cfg.batch_size
    if pool_size < T * n:
        raise ValueError(f"private pool has {pool_size} records, T*n = {T * n} are needed "
                         "(each record is used in exactly one step)")
    rng = np.random.Generator(np.random.PCG64(seed_seq))
    batches = rng.choice(pool_size, size=T * n, replace=False).reshape(T, n)
    slot = None
    if tau is not None:
        tau = check_tau(tau, T)
        slot = int(rng.integers(n))
    noise = rng.standard_normal((T, d))
    return GameDraw(batches=batches, tau=tau, slot=slot, noise=noise)


def _batch_tensors(draw: GameDraw, pool_x: torch.Tensor, pool_y: torch.Tensor,
                   canary: tuple[torch.Tensor, torch.Tensor]):
    idx = torch.as_tensor(draw.batches, device=pool_x.device)
    xb, yb = pool_x[idx].clone(), pool_y[idx].clone()
    if draw.tau is not None:
        xb[draw.tau - 1, draw.slot] = canary[0]
        yb[draw.tau - 1, draw.slot] = canary[1]
    return xb, yb


def train_dpsgd(fm: FunctionalModel, theta0: torch.Tensor, draw: GameDraw, pool_x, pool_y,
                canary, cfg: DPSGDConfig) -> torch.Tensor:
    """One run, one step at a time (the per-run reference). Returns :math:`(\\theta_0..\\theta_T)`
    as a ``(T+1, d)`` tensor.

    Parameters
    ----------
    fm : FunctionalModel
        The model.
    theta0 : torch.Tensor, shape (d,)
        Initial parameters.
    draw : GameDraw
        The run's draws (:func:`draw_game`).
    pool_x, pool_y : torch.Tensor
        The private pool.
    canary : tuple of torch.Tensor
        The canary record ``(x, y)``.
    cfg : DPSGDConfig
        The DP-SGD configuration.

    Returns
    -------
    torch.Tensor, shape (T+1, d)
        The trajectory.
    """
    xb, yb = _batch_tensors(draw, pool_x, pool_y, canary)
    noise = torch.as_tensor(draw.noise, dtype=theta0.dtype, device=theta0.device)
    traj = [theta0]
    theta = theta0
    scale = cfg.sigma_dp * cfg.clip / cfg.batch_size
    for t in range(cfg.steps):
        g = clip_rows(fm.per_sample_grads(theta, xb[t], yb[t]), cfg.clip).mean(0)
        theta = theta - cfg.lr * (g + scale * noise[t])
        traj.append(theta)
    return torch.stack(traj)


def train_dpsgd_batched(fm: FunctionalModel, theta0: torch.Tensor, draws: list[GameDraw],
                        pool_x, pool_y, canary, cfg: DPSGDConfig, *,
                        fast: bool = True) -> torch.Tensor:
    """``R`` independent runs as replicas (``vmap`` over replicas and samples).

    With ``fast=True`` and a stack of linear layers (:meth:`FunctionalModel.linear_stack`: the
    logistic regression, the MLP and the frozen-backbone model) the clipped mean gradient is
    computed by :func:`~semi_core.sgd.ghost.ghost_clipped_mean` (no per-sample gradient
    tensor). Returns ``(R, T+1, d)``; identical (up to float rounding) to
    :func:`train_dpsgd` per run.

    Parameters
    ----------
    fm : FunctionalModel
        The model.
    theta0 : torch.Tensor, shape (d,)
        Initial parameters (shared by the runs).
    draws : list of GameDraw
        One draw per run.
    pool_x, pool_y : torch.Tensor
        The private pool.
    canary : tuple of torch.Tensor
        The canary record ``(x, y)``.
    cfg : DPSGDConfig
        The DP-SGD configuration.
    fast : bool
        Use the ghost clipped mean for stacks of linear layers.

    Returns
    -------
    torch.Tensor, shape (R, T+1, d)
        The trajectories.
    """
    parts = [_batch_tensors(dr, pool_x, pool_y, canary) for dr in draws]
    xb = torch.stack([p[0] for p in parts])          # (R, T, n, ...)
    yb = torch.stack([p[1] for p in parts])
    noise = torch.as_tensor(np.stack([dr.noise for dr in draws]), dtype=theta0.dtype,
                            device=theta0.device)
    theta = theta0.expand(len(draws), -1).clone()
    traj = [theta]
    scale = cfg.sigma_dp * cfg.clip / cfg.batch_size
    stack = fm.linear_stack() if fast else None
    for t in range(cfg.steps):
        if stack is not None:
            g = ghost_clipped_mean(stack, theta, xb[:, t], yb[:, t], clip=cfg.clip)
        else:
            g = clip_rows(fm.per_sample_grads_batched(theta, xb[:, t], yb[:, t]),
                          cfg.clip).mean(1)
        theta = theta - cfg.lr * (g + scale * noise[:, t])
        traj.append(theta)
    return torch.stack(traj, dim=1)
