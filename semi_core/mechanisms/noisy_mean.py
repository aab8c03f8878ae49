r"""Noisy empirical-mean mechanism: a DP version of the SeMI seed's running mean (§3, §5).

Data :math:`X_{t,k}\sim\mathcal N(m_{\mathcal D},\sigma_{\mathcal D}^2 I_d)` are clipped to the
L2 ball of radius :math:`C` (for :math:`d=1` this is :math:`[-C,C]`), and every running mean is
released with fresh Gaussian noise:

.. math::

    o_t = \hat\mu_t + \xi_t,\qquad \hat\mu_t=\frac1{N_t}\sum_{j\le t}n_j\bar X_j,\qquad
    \xi_t\sim\mathcal N(0,s^2I_d),\qquad N_t=\sum_{j\le t}n_j .

Neighbouring relation and sensitivity
-------------------------------------
Replace-one: two datasets with the same batch sizes that differ in one record of batch
:math:`\tau`. Replacing :math:`x` by :math:`x'` (both clipped, :math:`\|x'-x\|_2\le2C`) moves
:math:`\hat\mu_t` by :math:`(x'-x)/N_t` for every :math:`t\ge\tau` and leaves earlier releases
unchanged, so the release vector :math:`(o_1,\dots,o_T)\in\mathbb R^{Td}` is a Gaussian mechanism
with noise :math:`s^2I_{Td}` and L2 sensitivity

.. math::

    \Delta_\tau = 2C\Big(\sum_{t=\tau}^{T}N_t^{-2}\Big)^{1/2}
    \quad\Big(=\tfrac{2C}{n}\big(\textstyle\sum_{t\ge\tau}t^{-2}\big)^{1/2}\text{ for } n_t\equiv n\Big),

hence exactly :math:`\mu_\tau`-GDP with :math:`\mu_\tau=\Delta_\tau/s` for neighbours differing at
step :math:`\tau`, and :math:`\mu_1`-GDP overall (the bound is attained by :math:`x=-Cu`,
:math:`x'=Cu`). Ground truth :math:`\varepsilon(\delta)` is
:func:`semi_core.audit.gdp_epsilon`. The SeMI game (Alg. 1-2) mixes over the replaced record,
which by joint convexity of the hockey-stick divergence cannot exceed :math:`\varepsilon_\tau`.

Tests
-----
The noise breaks the isolation property (Remark 3.3: :math:`\tau o_\tau-(\tau-1)o_{\tau-1}`
now carries noise from two releases, correlated with neighbouring steps), so the optimal test
is the likelihood ratio of the whole release vector. With the clipped batch mean approximated
by :math:`\mathcal N(m, V/n_t)` (:math:`m, V` the exact clipped moments), the release vector is
Gaussian under both hypotheses:

.. math::

    H_0:\ o\sim\mathcal N(\mathbf 1\otimes m,\ \Sigma_0),\quad
    \Sigma_0=(A\otimes I)\,\mathrm{diag}(V/n_j)\,(A\otimes I)^\top+s^2I,\quad A_{tj}=\frac{n_j}{N_t}\mathbb 1(j\le t),

    H_1^\tau:\ o\sim\mathcal N\big(\mathbf 1\otimes m+a_\tau\otimes\tfrac{z^*-m}{n_\tau},\
    \Sigma_0-a_\tau a_\tau^\top\otimes\tfrac{V}{n_\tau^2}\big),\quad a_\tau=A_{:,\tau},

(one of the :math:`n_\tau` records is the canary :math:`z^*` instead of a random draw) and the log
LR is a difference of Gaussian log-densities evaluated with Cholesky solves. SeMI* uses the
known :math:`\tau`; SeMI-max :math:`\max_t\log\mathrm{LR}_t`; SeMI-Unif
:math:`\log\frac1T\sum_t\mathrm{LR}_t`; Final Observation the marginal law of :math:`o_T`.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import ndtr

from semi_core._validation import (
    check_batch_size,
    check_finite_array,
    check_int,
    check_positive,
    check_tau,
)
from semi_core.mechanisms.base import MechanismBase
from semi_core.mechanisms.gaussian import GaussianPairLogLR, factor_covariance
from semi_core.stats.gdp import gdp_epsilon

__all__ = ["NoisyMean", "clipped_normal_moments"]


def clipped_normal_moments(mean: float, std: float, clip: float) -> tuple[float, float]:
    r"""Mean and variance of :math:`\min(\max(Y,-C),C)`, :math:`Y\sim\mathcal N(m,s^2)`.

    With :math:`a=(-C-m)/s`, :math:`b=(C-m)/s`, :math:`P=\Phi(b)-\Phi(a)`:

    .. math::

        E X = -C\Phi(a)+C(1-\Phi(b))+mP+s(\varphi(a)-\varphi(b)),

        E X^2 = C^2(\Phi(a)+1-\Phi(b))+(m^2+s^2)P+2ms(\varphi(a)-\varphi(b))
                +s^2(a\varphi(a)-b\varphi(b)).

    Parameters
    ----------
    mean : float
        Mean m of the normal variable.
    std : float
        Its standard deviation s, > 0.
    clip : float
        Clipping bound C, > 0.

    Returns
    -------
    (float, float)
        Mean and variance.
    """
    m, s, C = float(mean), check_positive(std, "std"), check_positive(clip, "clip")
    a, b = (-C - m) / s, (C - m) / s
    pa, pb = float(ndtr(a)), float(ndtr(b))
    phia = math.exp(-0.5 * a * a) / math.sqrt(2 * math.pi)
    phib = math.exp(-0.5 * b * b) / math.sqrt(2 * math.pi)
    P = pb - pa
    ex = -C * pa + C * (1 - pb) + m * P + s * (phia - phib)
    ex2 = (C * C * (pa + 1 - pb) + (m * m + s * s) * P + 2 * m * s * (phia - phib)
           + s * s * (a * phia - b * phib))
    return ex, max(ex2 - ex * ex, 0.0)


def _clip_ball(x: np.ndarray, C: float) -> np.ndarray:
    norm = np.linalg.norm(x, axis=-1, keepdims=True)
    return x * np.minimum(1.0, C / np.maximum(norm, 1e-300))


class NoisyMean(MechanismBase):
    r"""Clipped empirical-mean mechanism with Gaussian noise on every release.

    Parameters
    ----------
    n : int or sequence of int
        Batch size (``>= 2``) or the ``T`` per-step batch sizes.
    T : int
        Number of releases, ``>= 1``.
    noise : float
        Noise standard deviation :math:`s>0` added to each coordinate of each release.
    clip : float
        Clipping radius :math:`C>0` (L2 ball; :math:`[-C,C]` for ``d = 1``).
    data_mean : float or array_like (d,)
        Mean of the (unclipped) Gaussian data.
    data_std : float
        Standard deviation per coordinate of the data, ``> 0``.
    target : float or array_like (d,), optional
        Canary :math:`z^*` with :math:`\|z^*\|\le C`; default :math:`C e_1` (on the boundary).
    d : int, optional
        Dimension (inferred from ``data_mean``/``target`` otherwise; default 1).
    moment_samples : int
        Reference draws for the clipped moments when ``d > 1`` (``d = 1`` is exact).
    moment_seed : int
        Seed of those draws.

    Notes
    -----
    See the module docstring for the sensitivity :math:`\Delta_\tau` and the test statistics.
    """

    def __init__(self, n, T: int, *, noise: float, clip: float = 1.0, data_mean=0.0,
                 data_std: float = 1.0, target=None, d: int | None = None,
                 moment_samples: int = 200_000, moment_seed: int = 12345):
        self.T = check_int(T, "T", minimum=1)
        if np.ndim(n) == 0:
            self.n_t = np.full(self.T, check_batch_size(n, "n"), dtype=np.int64)
        else:
            nt = [check_batch_size(v, "n") for v in np.asarray(n).reshape(-1).tolist()]
            if len(nt) != self.T:
                raise ValueError(f"n must be an int or have T={self.T} entries, got {len(nt)}")
            self.n_t = np.asarray(nt, dtype=np.int64)
        self.noise = check_positive(noise, "noise")
        self.clip = check_positive(clip, "clip")
        self.data_std = check_positive(data_std, "data_std")
        dm = check_finite_array(data_mean, "data_mean", ndim=(0, 1))
        tg = None if target is None else check_finite_array(target, "target", ndim=(0, 1))
        dims = [a.size for a in (dm, tg) if a is not None and a.ndim == 1]
        if d is None:
            d = dims[0] if dims else 1
        self.d = check_int(d, "d", minimum=1)
        if any(k != self.d for k in dims):
            raise ValueError(f"data_mean/target must have d={self.d} entries")
        self.data_mean = np.broadcast_to(dm, (self.d,)).astype(float).copy()
        if tg is None:
            tg = np.zeros(self.d)
            tg[0] = self.clip
        self.target = np.broadcast_to(tg, (self.d,)).astype(float).copy()
        if np.linalg.norm(self.target) > self.clip * (1 + 1e-12):
            raise ValueError(f"target must lie in the clipping ball (norm <= clip={self.clip}), "
                             f"got norm {np.linalg.norm(self.target)}")
        self.cum_n = np.cumsum(self.n_t)
        t_idx = np.arange(self.T)
        self.A = np.where(t_idx[None, :] <= t_idx[:, None],
                          self.n_t[None, :] / self.cum_n[:, None], 0.0)
        self._moments(check_int(moment_samples, "moment_samples", minimum=1000), moment_seed)
        self._cache: dict = {}

    # ------------------------------------------------------------------ privacy
    def sensitivity(self, tau: int = 1) -> float:
        r""":math:`\Delta_\tau=2C(\sum_{t\ge\tau}N_t^{-2})^{1/2}` (replace-one at step ``tau``).

        Parameters
        ----------
        tau : int
            Insertion step in 1..T.

        Returns
        -------
        float
            The L2 sensitivity of the releases from step ``tau`` on.
        """
        tau = check_tau(tau, self.T)
        return float(2.0 * self.clip * np.sqrt(np.sum(1.0 / self.cum_n[tau - 1:] ** 2.0)))

    def mu(self, tau: int = 1) -> float:
        r"""GDP parameter :math:`\mu_\tau=\Delta_\tau/s` (``tau = 1``: the whole mechanism).

        Parameters
        ----------
        tau : int
            Insertion step in 1..T.

        Returns
        -------
        float
            The GDP parameter, > 0.
        """
        return self.sensitivity(tau) / self.noise

    def epsilon(self, delta: float, tau: int = 1) -> float:
        r"""Exact :math:`\varepsilon(\delta)` of the release sequence (:math:`\mu_\tau`-GDP).

        Parameters
        ----------
        delta : float
            The :math:`\delta` of the privacy profile, in (0, 1).
        tau : int
            Insertion step in 1..T.

        Returns
        -------
        float
            The exact :math:`\varepsilon(\delta)`, >= 0.
        """

        return gdp_epsilon(self.mu(tau), delta)

    # ------------------------------------------------------------------ Gaussian laws
    def _moments(self, samples: int, seed: int) -> None:
        if self.d == 1:
            m, v = clipped_normal_moments(self.data_mean[0], self.data_std, self.clip)
            self.clipped_mean, self.clipped_cov = np.array([m]), np.array([[v]])
            return
        rng = np.random.Generator(np.random.PCG64(seed))
        x = _clip_ball(rng.normal(self.data_mean, self.data_std, (samples, self.d)), self.clip)
        self.clipped_mean = x.mean(axis=0)
        self.clipped_cov = np.cov(x, rowvar=False)

    def gaussian_law(self, tau: int | None):
        r"""Mean (Td,) and covariance (Td, Td) of the release vector (``tau=None``: :math:`H_0`).

        .. math::

            \Sigma_0=(A\otimes I)\mathrm{diag}(V/n_j)(A\otimes I)^\top+s^2I,\qquad
            \Sigma_1^\tau=\Sigma_0-a_\tau a_\tau^\top\otimes V/n_\tau^2

        Parameters
        ----------
        tau : int or None
            Insertion step in 1..T, or None for H0.

        Returns
        -------
        mean : ndarray, shape (T*d,)
            Mean of the flattened releases.
        cov : ndarray, shape (T*d, T*d)
            Their covariance.
        """
        m, V = self.clipped_mean, self.clipped_cov
        mean, cov = self._h0_law()
        if tau is not None:
            tau = check_tau(tau, self.T)
            a = self.A[:, tau - 1]
            nt = float(self.n_t[tau - 1])
            mean = mean + np.kron(a, (self.target - m) / nt)
            cov = cov - np.kron(np.outer(a, a), V / nt ** 2)
        return np.array(mean), 0.5 * (cov + cov.T)

    def _h0_law(self) -> tuple[np.ndarray, np.ndarray]:
        """Mean and covariance of the releases under :math:`H_0`, computed once (read-only)."""
        if "h0" not in self._cache:
            d = self.d
            AI = np.kron(self.A, np.eye(d))
            D = np.kron(np.diag(1.0 / self.n_t), self.clipped_cov)
            mean = np.tile(self.clipped_mean, self.T)
            cov = AI @ D @ AI.T + self.noise ** 2 * np.eye(self.T * d)
            mean.setflags(write=False)
            cov.setflags(write=False)
            self._cache["h0"] = (mean, cov)
        return self._cache["h0"]

    def _pair(self, tau: int, rows=None):
        """The cached two-covariance log-LR of :math:`H_1^\\tau` vs :math:`H_0` on ``rows``.

        :math:`V_0` restricted to ``rows`` is validated and factored once for all ``tau``.
        """
        key = (tau, rows)
        if key not in self._cache:
            idx = np.arange(self.T * self.d) if rows is None else np.asarray(rows)
            sub = np.ix_(idx, idx)
            h0 = self._cache.get(("h0", rows))
            if h0 is None:
                m0, c0 = self.gaussian_law(None)
                h0 = self._cache[("h0", rows)] = (m0[idx], factor_covariance(c0[sub], "V0"))
            m1, c1 = self.gaussian_law(tau)
            self._cache[key] = GaussianPairLogLR(h0[0], h0[1], m1[idx], c1[sub])
        return self._cache[key]

    def _flat(self, releases) -> np.ndarray:
        r = np.asarray(releases, dtype=float)
        if r.shape[-2:] != (self.T, self.d):
            raise ValueError(f"releases must have shape (..., T={self.T}, d={self.d}), "
                             f"got {r.shape}")
        return r.reshape(-1, self.T * self.d)

    def log_lr(self, releases, tau: int) -> np.ndarray:
        r"""SeMI* statistic: full-sequence log LR of :math:`H_1^\tau` vs :math:`H_0`, shape (R,).

        Parameters
        ----------
        releases : array_like, shape (R, T, d)
            Releases.
        tau : int
            Insertion step in 1..T.

        Returns
        -------
        ndarray, shape (R,)
            The log-LR of each round.
        """
        x = self._flat(releases)
        tau = check_tau(tau, self.T)
        return self._pair(tau)(x)

    def log_lr_steps(self, releases) -> np.ndarray:
        r"""Log LR for every candidate :math:`t=1..T`, shape (R, T).

        Parameters
        ----------
        releases : array_like, shape (R, T, d)
            Releases.

        Returns
        -------
        ndarray, shape (R, T)
            The log-LR of each round and candidate step.
        """
        x = self._flat(releases)
        return np.stack([self._pair(t)(x) for t in range(1, self.T + 1)], axis=1)

    def final_log_lr(self, releases, tau) -> np.ndarray:
        r"""Final Observation statistic: log LR of the marginal law of :math:`o_T` alone.

        ``tau``: an int, or one insertion time per round.

        Parameters
        ----------
        releases : array_like, shape (R, T, d)
            Releases (only the last step is used).
        tau : int or array_like of int, shape (R,)
            Insertion step(s) in 1..T.

        Returns
        -------
        ndarray, shape (R,)
            The log-LR of each round.
        """
        x = self._flat(releases)
        rows = tuple(range((self.T - 1) * self.d, self.T * self.d))
        xs = x[:, list(rows)]
        taus = np.broadcast_to(np.asarray(tau), (x.shape[0],))
        out = np.empty(x.shape[0])
        for t in np.unique(taus):
            sel = taus == t
            out[sel] = self._pair(check_tau(int(t), self.T), rows)(xs[sel])
        return out

    # ------------------------------------------------------------------ simulation
    def release(self, member, tau, rng: np.random.Generator) -> np.ndarray:
        """Noisy releases (R, T, d) of rounds with the canary in (``member``) or out.

        Every datum is drawn, clipped, and (for members) one record of batch ``tau`` (an int
        or one per round) is replaced by the canary (Alg. 1 of the SeMI seed; which record is
        immaterial for a mean).

        Parameters
        ----------
        member : array_like of bool, shape (R,)
            Whether the canary is inserted in each round.
        tau : int or array_like of int, shape (R,)
            Insertion batch in 1..T.
        rng : numpy.random.Generator
            Source of randomness.

        Returns
        -------
        ndarray, shape (R, T, d)
            The noisy releases.
        """
        member = np.asarray(member, dtype=bool).reshape(-1)
        R = member.size
        taus = np.broadcast_to(np.asarray(tau), (R,))
        if R and (taus.min() < 1 or taus.max() > self.T):
            raise ValueError(f"tau must be in 1..{self.T}")
        sums = np.empty((R, self.T, self.d))
        for t in range(self.T):
            x = _clip_ball(rng.normal(self.data_mean, self.data_std,
                                      (R, int(self.n_t[t]), self.d)), self.clip)
            x[member & (taus == t + 1), 0, :] = self.target
            sums[:, t, :] = x.sum(axis=1)
        running = np.cumsum(sums, axis=1) / self.cum_n[None, :, None]
        return running + rng.normal(0.0, self.noise, running.shape)

    def simulate(self, member, tau: int, rng: np.random.Generator) -> np.ndarray:
        """Alias of :meth:`release` with one insertion time ``tau`` (kept for callers).

        Parameters
        ----------
        member : array_like of bool, shape (R,)
            Whether the canary is inserted in each round.
        tau : int
            Insertion batch in 1..T.
        rng : numpy.random.Generator
            Source of randomness.

        Returns
        -------
        ndarray, shape (R, T, d)
            The noisy releases.
        """
        return self.release(member, check_tau(tau, self.T), rng)

    def params(self) -> dict:
        """Validated parameters (JSON metadata).

        Returns
        -------
        dict
            ``mechanism``, ``T``, ``d``, ``n``, ``noise``, ``clip``, ``data_std``, ``data_mean`` and
            ``target``.
        """
        return {"mechanism": "noisy-mean", "T": self.T, "d": self.d, "n": self.n_t.tolist(),
                "noise": self.noise, "clip": self.clip, "data_std": self.data_std,
                "data_mean": self.data_mean.tolist(), "target": self.target.tolist()}

    def __repr__(self) -> str:
        return (f"NoisyMean(T={self.T}, n={self.n_t.tolist()}, d={self.d}, noise={self.noise}, "
                f"clip={self.clip}, mu_1={self.mu(1):.4g})")
