"""Linear regression closed forms (seed App. F.3) and the SGD validation of App. H.2.

Model: :math:`x\\sim\\mathcal N(0,\\Sigma_x)`, :math:`y = \\theta^{*\\top}x + \\varepsilon`,
:math:`\\varepsilon\\sim\\mathcal N(0,\\sigma_\\varepsilon^2)`, loss
:math:`\\ell = \\tfrac12(y-\\theta^\\top x)^2`, :math:`\\Delta = \\theta-\\theta^*`. Per-sample
gradient :math:`g = (\\Delta^\\top x - \\varepsilon)x`; by Isserlis' theorem

.. math::

   \\mu_g = \\Sigma_x\\Delta,\\qquad
   \\Sigma_g = (\\sigma_\\varepsilon^2 + \\Delta^\\top\\Sigma_x\\Delta)\\Sigma_x
              + \\Sigma_x\\Delta\\Delta^\\top\\Sigma_x,\\qquad
   m^*(\\theta^*) = \\frac{(\\varepsilon^*)^2}{\\sigma_\\varepsilon^2}
   \\,x^{*\\top}\\Sigma_x^{-1}x^*.

(Lemmas F.6-F.7 and Theorem F.10 of the seed; re-derived, they agree.) The gradient is not
Gaussian (it is a product of Gaussians), so the SeMI-SGD statistic is the Gaussian
approximation of §4.1; the H.2 simulation uses the exact SGD dynamics.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import linalg

from semi_core._rng import as_seed_sequence
from semi_core._validation import (
    check_batch_size,
    check_covariance,
    check_finite_array,
    check_int,
    check_positive,
    check_tau,
)
from semi_core.game.result import GameResult
from semi_core.stats.statistics import semi_max
from semi_core.stats.update_combination import BASELINES

from .lr import semi_sgd_log_lr

__all__ = ["linreg_grad_mean", "linreg_grad_cov", "linreg_mahalanobis_at_optimum",
           "H2Config", "simulate_h2", "h2_power_table"]


def linreg_grad_mean(theta, theta_star, sigma_x) -> np.ndarray:
    """:math:`\\mu_g(\\theta) = \\Sigma_x(\\theta-\\theta^*)` (seed Lemma F.6)."""
    sx, _ = check_covariance(sigma_x, "sigma_x")
    delta = check_finite_array(theta, "theta") - check_finite_array(theta_star, "theta_star")
    return delta @ sx


def linreg_grad_cov(theta, theta_star, sigma_x, sigma_eps: float) -> np.ndarray:
    """:math:`\\Sigma_g(\\theta) = (\\sigma_\\varepsilon^2+\\Delta^\\top\\Sigma_x\\Delta)\\Sigma_x +
    \\Sigma_x\\Delta\\Delta^\\top\\Sigma_x` (seed Lemma F.7); ``theta`` may be ``(..., d)``."""
    sx, _ = check_covariance(sigma_x, "sigma_x")
    sigma_eps = check_positive(sigma_eps, "sigma_eps")
    delta = check_finite_array(theta, "theta") - check_finite_array(theta_star, "theta_star")
    sd = delta @ sx
    quad = (sd * delta).sum(-1)
    return ((sigma_eps**2 + quad)[..., None, None] * sx
            + sd[..., :, None] * sd[..., None, :])


def linreg_mahalanobis_at_optimum(x_target, eps_target: float, sigma_x, sigma_eps: float) -> float:
    """Target Mahalanobis distance at the optimum (seed Thm F.10), by Cholesky whitening.

    .. math:: m^* = (\\varepsilon^*/\\sigma_\\varepsilon)^2\\,x^{*\\top}\\Sigma_x^{-1}x^*
    """
    _, chol = check_covariance(sigma_x, "sigma_x")
    sigma_eps = check_positive(sigma_eps, "sigma_eps")
    z = linalg.solve_triangular(chol, check_finite_array(x_target, "x_target", ndim=1), lower=True)
    return float((eps_target / sigma_eps) ** 2 * (z @ z))


@dataclass(frozen=True)
class H2Config:
    """Seed App. H.2: d=5, T=10, n=50, eta=0.05. Unstated in the seed and chosen here:
    :math:`\\Sigma_x = I`, :math:`\\sigma_\\varepsilon = 1`, :math:`\\theta^* = \\mathbf 1`,
    :math:`\\theta_0 = 0`, target :math:`x^* = 1.5\\cdot(1,-1,1,-1,1)`,
    :math:`y^* = \\theta^{*\\top}x^* + 3\\sigma_\\varepsilon`."""

    d: int = 5
    steps: int = 10
    n: int = 50
    eta: float = 0.05
    sigma_eps: float = 1.0
    target_residual: float = 3.0
    target_scale: float = 1.5


def simulate_h2(cfg: H2Config, *, tau: int, rounds: int, seed) -> dict[str, np.ndarray]:
    """Play ``rounds`` SeMI games on SGD linear regression with insertion time ``tau``.

    Exact SGD dynamics (per-sample gradients :math:`(\\theta^\\top x - y)x`), fresh batches
    of ``n`` Gaussian samples per step, canary replacing one element of batch ``tau`` when
    ``B = 1``. SeMI-SGD uses the closed-form :math:`\\mu_g,\\Sigma_g` at each run's own
    :math:`\\theta_{\\tau-1}` (oracle statistics, as in the seed's validation); SeMI-max
    maximises the per-step log-LRs; the baselines use the target's losses.

    Returns
    -------
    GameResult
        ``member`` = B, one score array per attack (``semi_sgd``, ``semi_max``, baselines).
    """
    d = check_int(cfg.d, "d", minimum=1)
    T = check_int(cfg.steps, "steps", minimum=1)
    n = check_batch_size(cfg.n, "n")
    eta = check_positive(cfg.eta, "eta")
    tau = check_tau(tau, T)
    rounds = check_int(rounds, "rounds", minimum=2)
    rng = np.random.Generator(np.random.PCG64(as_seed_sequence(seed)))
    theta_star = np.ones(d)
    sx = np.eye(d)
    x_t = cfg.target_scale * np.where(np.arange(d) % 2 == 0, 1.0, -1.0)
    y_t = theta_star @ x_t + cfg.target_residual * cfg.sigma_eps
    b = rng.integers(0, 2, rounds)
    theta = np.zeros((rounds, d))
    traj = [theta]
    for t in range(1, T + 1):
        x = rng.standard_normal((rounds, n, d))
        y = x @ theta_star + cfg.sigma_eps * rng.standard_normal((rounds, n))
        if t == tau:
            slot = rng.integers(0, n, rounds)
            mem = np.flatnonzero(b == 1)
            x[mem, slot[mem]] = x_t
            y[mem, slot[mem]] = y_t
        resid = np.einsum("rnd,rd->rn", x, theta) - y
        theta = theta - eta * np.einsum("rn,rnd->rd", resid, x) / n
        traj.append(theta)
    traj = np.stack(traj, axis=1)                       # (R, T+1, d)
    losses = 0.5 * (y_t - traj @ x_t) ** 2
    log_lrs = np.empty((rounds, T))
    for t in range(1, T + 1):
        prev = traj[:, t - 1]
        mu = linreg_grad_mean(prev, theta_star, sx)
        cov = linreg_grad_cov(prev, theta_star, sx, cfg.sigma_eps)
        g_t = (prev @ x_t - y_t)[:, None] * x_t
        log_lrs[:, t - 1] = semi_sgd_log_lr(traj[:, t] - prev, eta, mu, cov, g_t, n)
    out = {"semi_sgd": log_lrs[:, tau - 1], "semi_max": semi_max(log_lrs)}
    for name, fn in BASELINES.items():
        out[name] = fn(losses)
    return GameResult(member=b.astype(bool), tau=tau, stats=out,
                      metadata={"game": "linreg-sgd", "config": cfg.__dict__})


def h2_power_table(cfg: H2Config, *, rounds: int, seed, taus=None, fpr: float = 0.05) -> dict:
    """Power (TPR at ``fpr``, step rule) and AUC per attack for each ``tau`` (seed Fig. 7b)."""
    from semi_core.audit import auc, tpr_at_fpr

    taus = list(range(1, cfg.steps + 1)) if taus is None else list(taus)
    root = as_seed_sequence(seed)
    table: dict = {}
    for tau, ss in zip(taus, root.spawn(len(taus)), strict=True):
        res = simulate_h2(cfg, tau=tau, rounds=rounds, seed=ss)
        table[tau] = {k: {"tpr": float(tpr_at_fpr(*res.scores(k), fpr)),
                          "auc": float(auc(*res.scores(k)))} for k in res.stats}
    return table
