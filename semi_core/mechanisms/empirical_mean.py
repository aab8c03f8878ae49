"""The Gaussian empirical-mean mechanism of the SeMI seed (§3, Appendices A-E).

At step :math:`t` a fresh batch of :math:`n_t` points :math:`X_{t,k}\\sim\\mathcal N(\\mu_t,\\Sigma_t)`
arrives and the mechanism releases the running mean

.. math::

    \\hat\\mu_t = \\frac{1}{N_t}\\sum_{s\\le t}\\sum_{k} X_{s,k},\\qquad N_t=\\sum_{s\\le t} n_s .

Under :math:`H_1^\\tau` one uniformly chosen point of batch :math:`\\tau` is replaced by the target
:math:`z^*`. By the isolation property (seed Remark 3.3) the batch means are recovered exactly from
consecutive releases, :math:`\\bar X_t = (N_t\\hat\\mu_t - N_{t-1}\\hat\\mu_{t-1})/n_t`, and the
log-likelihood ratio only involves :math:`\\bar X_\\tau` (seed Lemma 3.2, Thm 3.1, Thm C.1):

.. math::

    \\log\\mathrm{LR}_\\tau = -\\frac d2\\log\\frac{n_\\tau-1}{n_\\tau}
      + \\frac{n_\\tau}{n_\\tau-1}\\Big(u_\\tau^\\top w - \\tfrac12\\|w\\|^2\\Big)
      - \\frac{m_\\tau}{2(n_\\tau-1)},

with :math:`\\Sigma_\\tau = L_\\tau L_\\tau^\\top`, :math:`w = L_\\tau^{-1}(\\bar X_\\tau-\\mu_\\tau)`,
:math:`u_\\tau = L_\\tau^{-1}(z^*-\\mu_\\tau)` and :math:`m_\\tau=\\|u_\\tau\\|^2` (squared Mahalanobis
distance). The symbolic layer derives this form; ``tests/stats`` checks the two agree.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from semi_core._validation import (
    check_batch_size,
    check_covariance,
    check_finite_array,
    check_int,
    check_positive,
    check_release_args,
    check_tau,
)
from semi_core.kernels import QuadraticForm
from semi_core.mechanisms.base import GroundTruthUnknown, MechanismBase
from semi_core.mechanisms.gaussian import GaussianPairLogLR

__all__ = ["EmpiricalMean", "GaussianPairLogLR"]


def _forward_solve(L: np.ndarray, b: np.ndarray) -> np.ndarray:
    r"""Solve :math:`L_t x_t = b_t` for every step by forward substitution (no inverse formed).

    :math:`x_{t,i} = (b_{t,i} - \sum_{j<i} L_{t,ij}x_{t,j})/L_{t,ii}`, vectorised over the steps
    (the algorithm of LAPACK's triangular solve, without importing ``scipy.linalg``, about 0.1 s
    of a command's start-up).

    Parameters
    ----------
    L : ndarray, shape (T, d, d)
        Lower-triangular factors with a positive diagonal (Cholesky factors).
    b : ndarray, shape (T, d)
        Right-hand sides.

    Returns
    -------
    ndarray, shape (T, d)
        The solutions.
    """
    x = np.empty(b.shape, dtype=np.float64)
    for i in range(b.shape[1]):
        x[:, i] = (b[:, i] - np.einsum("tj,tj->t", L[:, i, :i], x[:, :i])) / L[:, i, i]
    return x


def _per_step_vectors(value, T: int, d: int | None, name: str) -> np.ndarray:
    arr = check_finite_array(value, name)
    if arr.ndim == 0:
        return np.full((T, d or 1), float(arr))
    if arr.ndim == 1:
        if d is not None and arr.size != d:
            raise ValueError(f"{name} must have {d} entries (the dimension), got {arr.size}")
        return np.broadcast_to(arr, (T, arr.size)).copy()
    if arr.ndim == 2:
        if arr.shape[0] != T or (d is not None and arr.shape[1] != d):
            raise ValueError(f"{name} per-step form must have shape ({T}, {d or 'd'}), got {arr.shape}")
        return arr.copy()
    raise ValueError(f"{name} must be a scalar, (d,) or (T, d) array, got shape {arr.shape}")


class EmpiricalMean(MechanismBase):
    """Gaussian empirical-mean mechanism with (optionally) per-step parameters.

    Parameters
    ----------
    n : int or sequence of int
        Batch size (>= 2), or one batch size per step.
    T : int
        Number of released updates (>= 1).
    mu : float or array_like
        Data mean: scalar, shape (d,) or per-step shape (T, d).
    cov : float or array_like
        Data covariance: a scalar variance (times the identity), a (d, d) positive-definite
        matrix or per-step (T, d, d).
    target : float or array_like
        The canary :math:`z^*`, shape (d,) (scalar when d = 1).

    Notes
    -----
    Seed: ``semi_sequential_mi`` §3.1 (Thm 3.1, Lemma 3.2), App. B (multivariate), App. C
    (per-step parameters). Varying batch sizes use the weighted running mean above; the seed
    only mentions them in a footnote.
    """

    def __init__(self, n, T: int, mu=0.0, cov=1.0, target=1.0):
        self.T = check_int(T, "T", minimum=1)
        tgt = check_finite_array(target, "target")
        if tgt.ndim > 1:
            raise ValueError(f"target must be a scalar or a (d,) vector, got shape {tgt.shape}")
        self.target = np.atleast_1d(tgt).astype(float)
        d = self.target.size
        if np.ndim(n) == 0:
            self.n_t = np.full(self.T, check_batch_size(n, "n"), dtype=np.int64)
        else:
            n_arr = np.asarray(n)
            if n_arr.shape != (self.T,):
                raise ValueError(f"n must be an int or {self.T} batch sizes, got shape {n_arr.shape}")
            self.n_t = np.array([check_batch_size(v, f"n[{i}]") for i, v in enumerate(n_arr)],
                                dtype=np.int64)
        self.mu_t = _per_step_vectors(mu, self.T, d, "mu")
        cov_arr = check_finite_array(cov, "cov")
        if cov_arr.ndim == 0:
            if cov_arr <= 0:
                raise ValueError(f"cov (a variance) must be > 0, got {float(cov_arr)}")
            cov_t = np.broadcast_to(float(cov_arr) * np.eye(d), (self.T, d, d)).copy()
        elif cov_arr.ndim == 2:
            cov_t = np.broadcast_to(cov_arr, (self.T, *cov_arr.shape)).copy()
        elif cov_arr.ndim == 3:
            if cov_arr.shape[0] != self.T:
                raise ValueError(f"per-step cov must have shape ({self.T}, {d}, {d}), got {cov_arr.shape}")
            cov_t = cov_arr.copy()
        else:
            raise ValueError(f"cov must be a scalar, (d, d) or (T, d, d), got shape {cov_arr.shape}")
        self.cov_t = cov_t
        self.chol_t = np.empty_like(cov_t)
        for t in range(self.T):
            name = "cov" if cov_arr.ndim < 3 else f"cov[{t}]"
            _, self.chol_t[t] = check_covariance(cov_t[t], name, d=d)
        self.d = d
        self.cum_n = np.cumsum(self.n_t)
        self.delta_t = self.target[None, :] - self.mu_t
        self.u_t = _forward_solve(self.chol_t, self.delta_t)
        self.m_t = np.einsum("ti,ti->t", self.u_t, self.u_t)

    # -- convenience constructors -------------------------------------------------------
    @classmethod
    def isotropic(cls, n, T: int, *, mu: float = 0.0, sigma: float = 1.0, distance: float = 3.0,
                  d: int = 1) -> EmpiricalMean:
        """Stationary N(mu 1, sigma^2 I_d) data with a target at Mahalanobis distance ``distance``
        along the first axis (the seed's §3.3 setting: n=10, mu=0, sigma=1, z*=3).

        Parameters
        ----------
        n : int or sequence of int
            Batch size(s), >= 2 (one per step or one for all).
        T : int
            Number of releases, >= 1.
        mu : float
            Mean of every coordinate.
        sigma : float
            Standard deviation of every coordinate, > 0.
        distance : float
            Mahalanobis distance of the target from the mean, >= 0.
        d : int
            Dimension, >= 1.

        Returns
        -------
        EmpiricalMean
            The mechanism.
        """
        d = check_int(d, "d", minimum=1)
        sigma = check_positive(sigma, "sigma")  # a negative sigma would mirror the target
        if not 0.0 < sigma * sigma < np.inf:
            raise ValueError(f"sigma^2 must be a finite positive variance, got sigma = {sigma}")
        distance = float(check_finite_array(distance, "distance", ndim=0))
        if distance < 0 or not distance * distance < np.inf or not np.isfinite(distance * sigma):
            raise ValueError(f"distance (a Mahalanobis distance) must be >= 0 with a finite "
                             f"square, got {distance}")
        target = np.full(d, float(check_finite_array(mu, "mu", ndim=0)))
        target[0] += distance * sigma
        return cls(n, T, mu=np.full(d, float(mu)), cov=float(sigma) ** 2, target=target)

    # -- structure ----------------------------------------------------------------------
    @cached_property
    def stationary(self) -> bool:
        """True when mu, Sigma and n do not vary with t (the seed's main setting)."""
        return bool(np.all(self.n_t == self.n_t[0]) and np.allclose(self.mu_t, self.mu_t[0])
                    and np.allclose(self.cov_t, self.cov_t[0]))

    @cached_property
    def stationary_cov(self) -> bool:
        """True when Sigma_t does not vary with t (then Final Observation has a closed form)."""
        return bool(np.allclose(self.cov_t, self.cov_t[0]))

    def __repr__(self) -> str:
        n = int(self.n_t[0]) if np.all(self.n_t == self.n_t[0]) else self.n_t.tolist()
        return f"EmpiricalMean(n={n}, T={self.T}, d={self.d}, m*={np.round(self.m_t, 6).tolist()})"

    # -- releases and isolation -----------------------------------------------------------
    def _as_steps(self, x, name: str) -> np.ndarray:
        arr = np.asarray(x, dtype=float)
        if self.d == 1 and (arr.ndim == 0 or arr.shape[-1] != 1):
            arr = arr[..., None]
        if arr.ndim < 2 or arr.shape[-2:] != (self.T, self.d):
            raise ValueError(f"{name} must have shape (..., {self.T}, {self.d}), got {np.shape(x)}")
        if np.isnan(arr).any():
            raise ValueError(f"{name} contains NaN")
        return arr

    def releases(self, batch_means) -> np.ndarray:
        """Running means :math:`\\hat\\mu_1..\\hat\\mu_T` from batch means, shape (..., T, d).

        Parameters
        ----------
        batch_means : array_like, shape (..., T, d)
            Batch means :math:`\\bar X_t`.

        Returns
        -------
        ndarray, shape (..., T, d)
            The running means.
        """
        xb = self._as_steps(batch_means, "batch_means")
        w = self.n_t[:, None].astype(float)
        return np.cumsum(w * xb, axis=-2) / self.cum_n[:, None]

    def batch_means(self, releases) -> np.ndarray:
        """Recover :math:`\\bar X_t` from releases (isolation, seed Remark 3.3), shape (..., T, d).

        Parameters
        ----------
        releases : array_like, shape (..., T, d)
            Running means :math:`\\hat\\mu_t`.

        Returns
        -------
        ndarray, shape (..., T, d)
            The batch means.
        """
        mh = self._as_steps(releases, "releases")
        tot = self.cum_n[:, None] * mh
        prev = np.concatenate([np.zeros_like(tot[..., :1, :]), tot[..., :-1, :]], axis=-2)
        return (tot - prev) / self.n_t[:, None]

    def release(self, member, tau, rng: np.random.Generator) -> np.ndarray:
        """Releases :math:`\\hat\\mu_1..\\hat\\mu_T` of ``R`` rounds, shape (R, T, d) (seed Alg. 1).

        Every datum is drawn; when ``member[r]`` a uniformly chosen datum of batch ``tau[r]`` is
        replaced by the target (lines 4-9 of Alg. 1).

        Parameters
        ----------
        member : array_like of bool, shape (R,)
            Whether the target is inserted in each round.
        tau : int or array_like of int, shape (R,)
            Insertion batch in 1..T.
        rng : numpy.random.Generator
            Source of randomness.

        Returns
        -------
        ndarray, shape (R, T, d)
            The releases.
        """
        member, taus = check_release_args(member, tau, self.T)
        R = member.size
        batch_means = np.empty((R, self.T, self.d))
        for t in range(self.T):
            n = int(self.n_t[t])
            e = rng.standard_normal((R, n, self.d))
            X = self.mu_t[t] + e @ self.chol_t[t].T
            ins = np.flatnonzero(member & (taus == t + 1))
            j = rng.integers(0, n, size=ins.size)
            X[ins, j, :] = self.target
            batch_means[:, t, :] = X.mean(axis=1)
        return self.releases(batch_means)

    def params(self) -> dict:
        """Validated parameters (JSON metadata).

        Returns
        -------
        dict
            ``mechanism``, ``T``, ``d``, ``n`` (per step) and ``mahalanobis_sq`` (per step).
        """
        return {"mechanism": "empirical-mean", "T": self.T, "d": self.d,
                "n": self.n_t.tolist(), "mahalanobis_sq": self.m_t.tolist()}

    def epsilon(self, delta: float, tau: int = 1) -> float:
        """The unclipped, noiseless empirical mean is not differentially private.

        Parameters
        ----------
        delta : float
            The :math:`\\delta` of the privacy profile.
        tau : int
            Insertion step.

        Returns
        -------
        float
            Never returns: raises :class:`GroundTruthUnknown`.
        """
        raise GroundTruthUnknown("the empirical mean without clipping and noise has no finite "
                                 "epsilon (use NoisyMean for a DP mechanism)")

    # -- likelihood ratios ---------------------------------------------------------------
    def step_coefficients(self, t: int) -> tuple[float, np.ndarray, float]:
        """Whitened coefficients ``(c0, b, s)`` of step t: log LR_t = c0 + b.w + s|w|^2.

        Parameters
        ----------
        t : int
            Step in 1..T.

        Returns
        -------
        c0 : float
            Constant term.
        b : ndarray, shape (d,)
            Linear coefficients in the whitened batch mean w.
        s : float
            Coefficient of :math:`\\|w\\|^2` (negative).
        """
        t = check_tau(t, self.T, "t")
        n = float(self.n_t[t - 1])
        c0 = -0.5 * self.d * np.log1p(-1.0 / n) - self.m_t[t - 1] / (2.0 * (n - 1.0))
        return c0, n / (n - 1.0) * self.u_t[t - 1], -n / (2.0 * (n - 1.0))

    def quadratic_form(self, t: int) -> QuadraticForm:
        """log LR_t as a :class:`~semi_core.kernels.QuadraticForm` in :math:`N=\\bar X_t-\\mu_t`.

        Parameters
        ----------
        t : int
            Step in 1..T.

        Returns
        -------
        QuadraticForm
            The compiled log-LR of step ``t``.
        """
        c0, b, s = self.step_coefficients(t)
        return QuadraticForm.from_covariance(c0, b, self.chol_t[t - 1], s)

    def log_lr_steps(self, releases) -> np.ndarray:
        """Per-step log-LRs :math:`\\log\\mathrm{LR}_t` from the releases, shape (..., T)
        (:class:`~semi_core.mechanisms.base.Mechanism` protocol): isolation, then
        :meth:`batch_log_lr_steps`.

        Parameters
        ----------
        releases : array_like, shape (..., T, d)
            Running means.

        Returns
        -------
        ndarray, shape (..., T)
            The per-step log-LRs.
        """
        return self.batch_log_lr_steps(self.batch_means(releases))

    def batch_log_lr_steps(self, batch_means) -> np.ndarray:
        """Per-step log-LRs :math:`\\log\\mathrm{LR}_t`, t = 1..T, from batch means, shape (..., T).

        Evaluated by the compiled Cholesky-whitened quadratic-form kernel.

        Parameters
        ----------
        batch_means : array_like, shape (..., T, d)
            Batch means.

        Returns
        -------
        ndarray, shape (..., T)
            The per-step log-LRs.
        """
        xb = self._as_steps(batch_means, "batch_means")
        out = np.empty(xb.shape[:-1])
        for t in range(1, self.T + 1):
            out[..., t - 1] = self.quadratic_form(t)(xb[..., t - 1, :] - self.mu_t[t - 1])
        return out

    # -- final observation ---------------------------------------------------------------
    @cached_property
    def final_mean(self) -> np.ndarray:
        """Mean of :math:`\\hat\\mu_T` under :math:`H_0`: :math:`\\sum_t n_t\\mu_t/N_T`."""
        return (self.n_t[:, None] * self.mu_t).sum(0) / self.cum_n[-1]

    def final_log_lr(self, releases, tau=None) -> np.ndarray:
        """Final Observation log-LR from the release sequence (uses :math:`\\hat\\mu_T` only).

        Parameters
        ----------
        releases : array_like, shape (..., T, d)
            Running means (only the last is used).
        tau : int or array_like of int, optional
            Insertion time(s); needed only when the means or covariances vary over steps.

        Returns
        -------
        ndarray, shape (...)
            The Final Observation log-LR.
        """
        rel = self._as_steps(releases, "releases")
        return self.final_release_log_lr(rel[..., -1, :], tau)

    def final_release_log_lr(self, final_release, tau=None) -> np.ndarray:
        """Final Observation log-LR from :math:`\\hat\\mu_T` alone (seed Lemmas 3.7-3.8).

        .. math::

            W=\\hat\\mu_T-\\bar\\mu,\\quad W|H_0\\sim\\mathcal N\\Big(0,\\tfrac{\\sum_t n_t\\Sigma_t}{N^2}\\Big),
            \\quad W|H_1^\\tau\\sim\\mathcal N\\Big(\\tfrac{z^*-\\mu_\\tau}{N},
            \\tfrac{\\sum_t n_t\\Sigma_t-\\Sigma_\\tau}{N^2}\\Big),\\ N=N_T.

        With stationary :math:`\\Sigma` the covariances are proportional and this is the SeMI*
        form with :math:`n\\to N_T`; otherwise the general Gaussian log-LR is used. ``tau`` (int
        or per-row array) is needed only when :math:`\\mu_t` or :math:`\\Sigma_t` vary.

        Parameters
        ----------
        final_release : array_like, shape (..., d)
            The last release :math:`\\hat\\mu_T`.
        tau : int or array_like of int, optional
            Insertion time(s) in 1..T; needed only for non-stationary means or covariances.

        Returns
        -------
        ndarray, shape (...)
            The Final Observation log-LR.
        """
        W = np.asarray(final_release, dtype=float)
        if self.d == 1 and (W.ndim == 0 or W.shape[-1] != 1):
            W = W[..., None]
        if W.shape[-1] != self.d:
            raise ValueError(f"final_release must have last axis {self.d}, got {np.shape(final_release)}")
        if np.isnan(W).any():
            raise ValueError("final_release contains NaN")
        W = W - self.final_mean
        taus = self._taus_for(W.shape[:-1], tau)
        out = np.empty(W.shape[:-1])
        for t in np.unique(taus):
            sel = taus == t
            out[sel] = self.final_quadratic_form(int(t))(W[sel])
        return out

    def _taus_for(self, shape, tau) -> np.ndarray:
        if tau is None:
            if not (self.stationary or (np.allclose(self.mu_t, self.mu_t[0]) and self.stationary_cov)):
                raise ValueError("tau is required for Final Observation when mu_t or Sigma_t vary")
            return np.ones(shape, dtype=np.int64)
        taus = np.broadcast_to(np.asarray(tau), shape)
        if taus.size and (taus.min() < 1 or taus.max() > self.T):
            raise ValueError(f"tau must be in 1..{self.T}, got values {taus.min()}..{taus.max()}")
        return taus.astype(np.int64)

    def final_quadratic_form(self, tau: int) -> QuadraticForm | GaussianPairLogLR:
        """Final Observation log-LR at insertion time ``tau`` as a quadratic form in W.

        Parameters
        ----------
        tau : int
            Insertion time in 1..T.

        Returns
        -------
        QuadraticForm or GaussianPairLogLR
            A quadratic form (stationary covariance) or the general Gaussian-pair log-LR.
        """
        tau = check_tau(tau, self.T)
        N = float(self.cum_n[-1])
        delta = self.delta_t[tau - 1]
        if self.stationary_cov:
            L = self.chol_t[0]
            u = _forward_solve(L[None], delta[None])[0]
            m = float(u @ u)
            c0 = -0.5 * self.d * np.log1p(-1.0 / N) - m / (2.0 * (N - 1.0))
            return QuadraticForm.from_covariance(c0, N / (N - 1.0) * u, L, -N / (2.0 * (N - 1.0)))
        V0 = np.einsum("t,tij->ij", self.n_t.astype(float), self.cov_t) / N**2
        V1 = V0 - self.cov_t[tau - 1] / N**2
        return GaussianPairLogLR(np.zeros(self.d), V0, delta / N, V1)

    def final_mahalanobis_sq(self, tau: int) -> float:
        """Squared Mahalanobis distance of the target used by Final Observation (stationary Sigma).

        Parameters
        ----------
        tau : int
            Insertion time in 1..T.

        Returns
        -------
        float
            Squared Mahalanobis distance, >= 0.
        """
        tau = check_tau(tau, self.T)
        u = _forward_solve(self.chol_t[:1], self.delta_t[tau - 1][None])[0]
        return float(u @ u)
