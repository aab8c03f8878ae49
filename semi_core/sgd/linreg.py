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

from semi_core._names import Test
from semi_core._rng import as_seed_sequence
from semi_core._validation import (
    check_batch_size,
    check_covariance,
    check_finite_array,
    check_int,
    check_positive,
    check_release_args,
    check_tau,
)
from semi_core.game.play import play
from semi_core.game.result import GameResult
from semi_core.mechanisms.base import MechanismBase

from .lr import semi_sgd_log_lr
from .scorers import ATTACK_TESTS, LossBaselines, attack_names

__all__ = ["linreg_grad_mean", "linreg_grad_cov", "linreg_mahalanobis_at_optimum",
           "H2Config", "LinRegSGDMechanism", "simulate_h2", "h2_power_table"]


def linreg_grad_mean(theta, theta_star, sigma_x) -> np.ndarray:
    """:math:`\\mu_g(\\theta) = \\Sigma_x(\\theta-\\theta^*)` (seed Lemma F.6).

    Parameters
    ----------
    theta : array_like, shape (..., d)
        Parameters.
    theta_star : array_like, shape (d,)
        True regression coefficients.
    sigma_x : array_like, shape (d, d)
        Covariance of the features (positive definite).

    Returns
    -------
    ndarray, shape (..., d)
        Mean per-sample gradient.
    """
    sx, _ = check_covariance(sigma_x, "sigma_x")
    delta = check_finite_array(theta, "theta") - check_finite_array(theta_star, "theta_star")
    return delta @ sx


def linreg_grad_cov(theta, theta_star, sigma_x, sigma_eps: float) -> np.ndarray:
    """:math:`\\Sigma_g(\\theta) = (\\sigma_\\varepsilon^2+\\Delta^\\top\\Sigma_x\\Delta)\\Sigma_x +
    \\Sigma_x\\Delta\\Delta^\\top\\Sigma_x` (seed Lemma F.7); ``theta`` may be ``(..., d)``.

    Parameters
    ----------
    theta : array_like, shape (..., d)
        Parameters.
    theta_star : array_like, shape (d,)
        True regression coefficients.
    sigma_x : array_like, shape (d, d)
        Covariance of the features (positive definite).
    sigma_eps : float
        Standard deviation of the label noise, > 0.

    Returns
    -------
    ndarray, shape (..., d, d)
        Covariance of the per-sample gradient.
    """
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

    Parameters
    ----------
    x_target : array_like, shape (d,)
        Features of the target.
    eps_target : float
        Label noise of the target (its residual at the optimum).
    sigma_x : array_like, shape (d, d)
        Covariance of the features (positive definite).
    sigma_eps : float
        Standard deviation of the label noise, > 0.

    Returns
    -------
    float
        :math:`m^*`, >= 0.
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


class LinRegSGDMechanism(MechanismBase):
    """SGD linear regression of seed App. H.2 as a :class:`~semi_core.mechanisms.base.Mechanism`.

    A release is the trajectory :math:`\\theta_1..\\theta_T` ``(R, T, d)`` of one SGD run from
    :math:`\\theta_0 = 0` with exact dynamics (per-sample gradients
    :math:`(\\theta^\\top x - y)x`, fresh batches of ``n`` Gaussian samples per step), the
    canary :math:`(x^*, y^*)` replacing a uniform element of batch :math:`\\tau` when
    :math:`B = 1`. The per-step log-LR is SeMI-SGD with the closed-form
    :math:`\\mu_g,\\Sigma_g` (Lemmas F.6-F.7) at each run's own :math:`\\theta_{t-1}` (oracle
    statistics, as in the seed's validation); :meth:`canary_losses` feeds the loss baselines
    (:class:`~semi_core.sgd.scorers.LossBaselines`). No ground truth is declared (plain SGD is
    not differentially private).

    Parameters
    ----------
    cfg : H2Config
    """

    tests = (Test.SEMI_STAR.value, Test.SEMI_UNIF.value, Test.SEMI_MAX.value)

    def __init__(self, cfg: H2Config | None = None):
        cfg = H2Config() if cfg is None else cfg
        if not isinstance(cfg, H2Config):
            raise TypeError(f"cfg must be an H2Config, got {type(cfg).__name__}")
        self.cfg = cfg
        self.d = check_int(cfg.d, "d", minimum=1)
        self.T = check_int(cfg.steps, "steps", minimum=1)
        self.n = check_batch_size(cfg.n, "n")
        self.eta = check_positive(cfg.eta, "eta")
        self.sigma_eps = check_positive(cfg.sigma_eps, "sigma_eps")
        self.theta_star = np.ones(self.d)
        self.x_target = cfg.target_scale * np.where(np.arange(self.d) % 2 == 0, 1.0, -1.0)
        self.y_target = float(self.theta_star @ self.x_target
                              + cfg.target_residual * self.sigma_eps)

    def release(self, member, tau, rng: np.random.Generator) -> np.ndarray:
        """``R`` SGD trajectories :math:`\\theta_1..\\theta_T`; round ``r`` has the canary at
        ``tau[r]`` when ``member[r]``.

        Parameters
        ----------
        member : array_like of bool, shape (R,)
            Whether the canary is inserted in each round.
        tau : int or array_like of int
            Insertion step(s) in 1..T.
        rng : numpy.random.Generator
            Source of randomness.

        Returns
        -------
        ndarray, shape (R, T, d)
            The trajectories.
        """
        member, taus = check_release_args(member, tau, self.T)
        R, n, d = member.size, self.n, self.d
        slot = rng.integers(0, n, R)
        theta = np.zeros((R, d))
        traj = np.empty((R, self.T, d))
        for t in range(1, self.T + 1):
            x = rng.standard_normal((R, n, d))
            y = x @ self.theta_star + self.sigma_eps * rng.standard_normal((R, n))
            ins = np.flatnonzero(member & (taus == t))
            x[ins, slot[ins]] = self.x_target
            y[ins, slot[ins]] = self.y_target
            resid = np.einsum("rnd,rd->rn", x, theta) - y
            theta = theta - self.eta * np.einsum("rn,rnd->rd", resid, x) / n
            traj[:, t - 1] = theta
        return traj

    def _trajectories(self, releases) -> np.ndarray:
        rel = np.asarray(releases, dtype=float)
        if rel.ndim != 3 or rel.shape[1:] != (self.T, self.d):
            raise ValueError(f"releases must have shape (R, {self.T}, {self.d}), got "
                             f"{rel.shape}")
        return np.concatenate([np.zeros((rel.shape[0], 1, self.d)), rel], axis=1)

    def log_lr_steps(self, releases) -> np.ndarray:
        """Per-step SeMI-SGD log-LRs ``(R, T)`` with the closed-form gradient law at each
        run's own :math:`\\theta_{t-1}`.

        Parameters
        ----------
        releases : array_like, shape (R, T, d)
            Trajectories.

        Returns
        -------
        ndarray, shape (R, T)
            Per-step log-LRs.
        """
        traj = self._trajectories(releases)
        sx = np.eye(self.d)
        out = np.empty((traj.shape[0], self.T))
        for t in range(1, self.T + 1):
            prev = traj[:, t - 1]
            mu = linreg_grad_mean(prev, self.theta_star, sx)
            cov = linreg_grad_cov(prev, self.theta_star, sx, self.sigma_eps)
            g_t = (prev @ self.x_target - self.y_target)[:, None] * self.x_target
            out[:, t - 1] = semi_sgd_log_lr(traj[:, t] - prev, self.eta, mu, cov, g_t, self.n)
        return out

    def canary_losses(self, releases) -> np.ndarray:
        """The canary's losses :math:`\\tfrac12(y^*-\\theta_t^\\top x^*)^2`, ``t = 0..T``.

        Parameters
        ----------
        releases : array_like, shape (R, T, d)
            Trajectories.

        Returns
        -------
        ndarray, shape (R, T+1)
            The canary's loss at each step (``t = 0`` at the initial parameters).
        """
        return 0.5 * (self.y_target - self._trajectories(releases) @ self.x_target) ** 2

    def params(self) -> dict:
        """The configuration (JSON metadata).

        Returns
        -------
        dict
            ``mechanism``, ``T`` and the fields of the configuration.
        """
        return {"mechanism": "linreg-sgd", "T": self.T, **self.cfg.__dict__}


def simulate_h2(cfg: H2Config, *, tau: int, rounds: int, seed, executor=None) -> GameResult:
    """Play ``rounds`` SeMI games on SGD linear regression with insertion time ``tau``.

    The game is :class:`LinRegSGDMechanism` played by the one runner
    (:func:`semi_core.game.play.play`, :math:`B\\sim\\mathrm{Bernoulli}(1/2)`): SeMI-SGD is
    the runner's SeMI* (closed-form :math:`\\mu_g,\\Sigma_g` at each run's own
    :math:`\\theta_{\\tau-1}`), SeMI-max maximises the per-step log-LRs, the baselines use the
    target's losses (:class:`~semi_core.sgd.scorers.LossBaselines`).

    Parameters
    ----------
    cfg : H2Config
        The experiment's configuration.
    tau : int
        Insertion step in 1..T.
    rounds : int
        Number of games, >= 2.
    seed : int or numpy.random.SeedSequence
        Root seed.
    executor : object, optional
        Executor of the runner's chunks (the result does not depend on it).

    Returns
    -------
    GameResult
        ``member`` = B, one score array per attack (``semi_sgd``, ``semi_max``, baselines).
    """
    mech = LinRegSGDMechanism(cfg)
    tau = check_tau(tau, mech.T)
    rounds = check_int(rounds, "rounds", minimum=2)
    res = play(mech, rounds, seed, tau=tau, tests=tuple(ATTACK_TESTS.values()),
               scorers=(LossBaselines(mech),), executor=executor)
    res = attack_names(res)
    res.metadata = {**res.metadata, "game": "linreg-sgd", "config": cfg.__dict__}
    return res


def h2_power_table(cfg: H2Config, *, rounds: int, seed, taus=None, fpr: float = 0.05) -> dict:
    """Power (TPR at ``fpr``, step rule) and AUC per attack for each ``tau`` (seed Fig. 7b).

    Parameters
    ----------
    cfg : H2Config
        The experiment's configuration.
    rounds : int
        Games per insertion step, >= 2.
    seed : int or numpy.random.SeedSequence
        Root seed (one child per step).
    taus : sequence of int, optional
        Insertion steps; None = 1..T.
    fpr : float
        False-positive rate of the reported power, in (0, 1).

    Returns
    -------
    dict
        Per attack, the power and AUC at each ``tau``.
    """
    from semi_core.audit import auc, tpr_at_fpr

    taus = list(range(1, cfg.steps + 1)) if taus is None else list(taus)
    root = as_seed_sequence(seed)
    table: dict = {}
    for tau, ss in zip(taus, root.spawn(len(taus)), strict=True):
        res = simulate_h2(cfg, tau=tau, rounds=rounds, seed=ss)
        table[tau] = {k: {"tpr": float(tpr_at_fpr(*res.scores(k), fpr)),
                          "auc": float(auc(*res.scores(k)))} for k in res.stats}
    return table
