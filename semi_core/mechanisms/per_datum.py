r"""Per-datum membership inference on the empirical mean (``per_datum_leakage`` seed, Alg. 1).

Data-generating law: a product distribution :math:`\mathcal D=\bigotimes_j\mathcal D_j` with
known per-coordinate mean :math:`\mu_j`, variance :math:`\sigma_j^2` and third cumulant
(:class:`ProductLaw`: Bernoulli, Gaussian, Poisson, or any law with a sampler). The mechanism
(:class:`PerDatumMean`, ``T = 1`` release) draws :math:`D\sim\mathcal D^{\otimes n}`; under
:math:`H_1` the target :math:`z^*` replaces a uniformly chosen row (seed Alg. 1); it releases

.. math::

    o = \frac1k\sum_{i\in S}Z_i + \frac{1}{\sqrt n}N,\qquad N\sim\mathcal N(0, C_\gamma),

with :math:`S` a uniform ``k``-subset (``k = round(rho n)``, sampled without replacement, seed
§4.2; ``S = [n]`` when ``rho = 1``) and :math:`C_\gamma=\mathrm{diag}(\gamma_j^2)` (§4.1).

**One shared inclusion event.** Under :math:`H_1` the target is in :math:`S` with probability
:math:`k/n`, one event for *all* coordinates, so the release law is the mixture
:math:`\tfrac kn P_{\rm in}+(1-\tfrac kn)P_0` and the exact log-LR is

.. math::

    \ell^{\rm sub}=\log\Big(1-\tfrac kn+\tfrac kn\,e^{\ell_{\rm in}}\Big),\qquad
    \ell_{\rm in}=\sum_j\log\frac{p^{(k-1)}_j(k o_j-z_j^*)}{p^{(k)}_j(k o_j)},

(:math:`p^{(k)}_j` the law of a sum of ``k`` draws of :math:`\mathcal D_j`). The seed's
Thm 4.3 instead multiplies per-coordinate mixtures :math:`\prod_j(1-\rho+\rho e^{\ell_{{\rm in},j}})`
(Eq. 15), the LR of a mechanism whose coordinates are sub-sampled *independently*; it is kept
as :meth:`PerDatumMean.paper_sub_log_lr`, labelled as the paper's approximation.

Simulation modes. ``"sufficient"``: per coordinate only the sum matters, so a round draws the
sum of ``k - 1`` rows (Binomial counts for Bernoulli data) plus either the target or one more
row: ``O(d)`` per round, 2,000 games of the seed's ``n = 1000, d = 5000`` experiment in about a
second. ``"exact"``: the dataset is built row by row as in Alg. 1 (row replaced, sub-sample
drawn as a permutation); ``O(n d)`` per round, for checks at small sizes.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.special import gammaln

from semi_core._validation import check_finite_array, check_int, check_memory, check_probability
from semi_core.mechanisms.base import MechanismBase
from semi_core.stats import leakage as L

__all__ = ["ProductLaw", "PerDatumMean", "AverageDatumMean", "seed_bernoulli", "seed_targets", "TESTS",
           "THRESHOLD_SCALE", "INCLUSIONS", "RowSampler"]

#: Log-LR statistics the mechanism computes from its releases.
TESTS = ("exact", "approx", "paper-sub")

#: Sub-sampling models: one inclusion event for all coordinates, or one per coordinate.
INCLUSIONS = ("shared", "per-coordinate")

#: The one scale of every ``threshold`` (theory, CLI, report): the log-LR of one release.
THRESHOLD_SCALE = "log_lr"


@dataclass(frozen=True, eq=False)
class ProductLaw:
    r"""Product law :math:`\bigotimes_j\mathcal D_j` with known moments.

    Attributes
    ----------
    family : str
        ``bernoulli``, ``gaussian``, ``poisson`` or ``custom``.
    mean, var, k3 : ndarray, shape (d,)
        Per-coordinate mean, variance (> 0) and third cumulant.
    sampler : callable or None
        ``custom`` only: ``sampler(rng, size) -> ndarray (*size, d)``.
    """

    family: str
    mean: np.ndarray
    var: np.ndarray
    k3: np.ndarray
    sampler: Callable | None = None

    @property
    def d(self) -> int:
        """Dimension."""
        return int(self.mean.size)

    # -- constructors --------------------------------------------------------------------------
    @staticmethod
    def bernoulli(p) -> ProductLaw:
        """Independent Bernoulli(p_j) coordinates.

        Parameters
        ----------
        p : array_like, shape (d,)
            Success probability of each coordinate, in (0, 1).

        Returns
        -------
        ProductLaw
            The law (mean p, variance p(1-p), third cumulant p(1-p)(1-2p)).
        """
        p = check_finite_array(p, "p", ndim=1)
        if ((p <= 0) | (p >= 1)).any():
            raise ValueError("p must lie in (0, 1) in every coordinate")
        return ProductLaw("bernoulli", p, p * (1 - p), p * (1 - p) * (1 - 2 * p))

    @staticmethod
    def gaussian(mean, std) -> ProductLaw:
        """Independent N(mean_j, std_j^2) coordinates.

        Parameters
        ----------
        mean : array_like, shape (d,)
            Mean of each coordinate.
        std : float or array_like, shape (d,)
            Standard deviation of each coordinate, > 0.

        Returns
        -------
        ProductLaw
            The law.
        """
        mu = check_finite_array(mean, "mean", ndim=1)
        sd = np.broadcast_to(check_finite_array(std, "std"), mu.shape).astype(float)
        if (sd <= 0).any():
            raise ValueError("std must be > 0 in every coordinate")
        return ProductLaw("gaussian", mu, sd**2, np.zeros_like(mu))

    @staticmethod
    def poisson(lam) -> ProductLaw:
        """Independent Poisson(lam_j) coordinates (all cumulants equal lam_j).

        Parameters
        ----------
        lam : array_like, shape (d,)
            Rate of each coordinate, > 0.

        Returns
        -------
        ProductLaw
            The law.
        """
        la = check_finite_array(lam, "lam", ndim=1)
        if (la <= 0).any():
            raise ValueError("lam must be > 0 in every coordinate")
        return ProductLaw("poisson", la, la.copy(), la.copy())

    @staticmethod
    def custom(mean, var, sampler: Callable, *, k3=None) -> ProductLaw:
        """Any product law with a sampler and known mean/variance (exact mode and Eq. 10 only).

        Parameters
        ----------
        mean : array_like, shape (d,)
            Mean of each coordinate.
        var : float or array_like, shape (d,)
            Variance of each coordinate, > 0.
        sampler : callable
            ``sampler(rng, size) -> ndarray`` of shape ``(*size, d)``.
        k3 : array_like, shape (d,), optional
            Third cumulants (for the Edgeworth corrections); None = 0.

        Returns
        -------
        ProductLaw
            The law (``family = "custom"``).
        """
        mu = check_finite_array(mean, "mean", ndim=1)
        v = np.broadcast_to(check_finite_array(var, "var"), mu.shape).astype(float)
        if (v <= 0).any():
            raise ValueError("var must be > 0 in every coordinate")
        if not callable(sampler):
            raise TypeError("sampler must be callable(rng, size) -> array (*size, d)")
        kk = np.zeros_like(mu) if k3 is None else np.broadcast_to(
            check_finite_array(k3, "k3"), mu.shape).astype(float)
        return ProductLaw("custom", mu, v, kk, sampler)

    @staticmethod
    def from_rows(rows) -> ProductLaw:
        r"""The empirical law of a population: each datum is a uniformly drawn row of ``rows``.

        Mean, variance and third cumulant are the columns' (population, ``ddof=0``); draws
        keep a row's coordinates together, so the law is the population's, while the closed
        forms (:math:`m^*`, Eq. 10) use its diagonal (product) approximation, seed §3. Every
        column must vary (variance > 0). ``family = "custom"``: ``mode="exact"`` only.

        Parameters
        ----------
        rows : array_like, shape (N, d)
            The population, N >= 2 finite rows, every column with variance > 0.

        Returns
        -------
        ProductLaw
            The empirical law (``family = "custom"``).
        """
        X = check_finite_array(rows, "rows", ndim=2)
        if X.shape[0] < 2:
            raise ValueError(f"rows must hold at least 2 rows, got {X.shape[0]}")
        v = X.var(axis=0)
        if (v <= 0).any():
            bad = np.flatnonzero(v <= 0)[:5].tolist()
            raise ValueError(f"rows: every column must vary; constant columns {bad} "
                             "(drop them: they carry no membership signal)")
        mu = X.mean(axis=0)
        return ProductLaw("custom", mu, v, ((X - mu) ** 3).mean(axis=0), RowSampler(X))

    # -- sampling --------------------------------------------------------------------------------
    def sample(self, rng: np.random.Generator, size) -> np.ndarray:
        """Rows of the law, shape ``(*size, d)``.

        Parameters
        ----------
        rng : numpy.random.Generator
            Source of randomness.
        size : int or tuple of int
            Leading shape of the draw.

        Returns
        -------
        ndarray
            The rows, shape ``(*size, d)``.
        """
        size = (size,) if np.ndim(size) == 0 else tuple(size)
        shape = (*size, self.d)
        if self.family == "bernoulli":
            return (rng.random(shape) < self.mean).astype(np.float64)
        if self.family == "gaussian":
            return self.mean + np.sqrt(self.var) * rng.standard_normal(shape)
        if self.family == "poisson":
            return rng.poisson(self.mean, shape).astype(np.float64)
        out = np.asarray(self.sampler(rng, size), dtype=float)
        if out.shape != shape:
            raise ValueError(f"sampler must return shape {shape}, got {out.shape}")
        return out

    @property
    def has_sum_law(self) -> bool:
        """Whether sums of rows can be drawn directly and have a known density."""
        return self.family in ("bernoulli", "gaussian", "poisson")

    def sample_sum(self, rng: np.random.Generator, k: int, rounds: int) -> np.ndarray:
        """Sum of ``k`` i.i.d. rows, shape ``(rounds, d)`` (sufficient statistic).

        Parameters
        ----------
        rng : numpy.random.Generator
            Source of randomness.
        k : int
            Number of rows summed, >= 0.
        rounds : int
            Number of independent sums.

        Returns
        -------
        ndarray, shape (rounds, d)
            The sums (zeros when ``k = 0``).
        """
        shape = (rounds, self.d)
        if k == 0:
            return np.zeros(shape)
        if self.family == "bernoulli":
            return rng.binomial(k, self.mean, shape).astype(np.float64)
        if self.family == "gaussian":
            return k * self.mean + math.sqrt(k) * np.sqrt(self.var) * rng.standard_normal(shape)
        if self.family == "poisson":
            return rng.poisson(k * self.mean, shape).astype(np.float64)
        raise ValueError("sufficient mode needs a law with a known sum law (bernoulli, "
                         "gaussian, poisson); use mode='exact' for a custom law")

    def sum_logpdf(self, s: np.ndarray, k: int) -> np.ndarray:
        """Log density (pmf) of the sum of ``k`` rows at ``s``, coordinate-wise.

        Parameters
        ----------
        s : ndarray, shape (..., d)
            Values of the sum.
        k : int
            Number of rows summed, >= 1.

        Returns
        -------
        ndarray, shape (..., d)
            Log density (log pmf for discrete families) of each coordinate; ``-inf`` off the
            support.
        """
        if self.family == "bernoulli":
            p = self.mean
            ok = (s >= 0) & (s <= k)
            ss = np.clip(s, 0, k)
            out = (gammaln(k + 1) - gammaln(ss + 1) - gammaln(k - ss + 1)
                   + ss * np.log(p) + (k - ss) * np.log1p(-p))
            return np.where(ok, out, -np.inf)
        if self.family == "gaussian":
            v = k * self.var
            return -0.5 * np.log(2 * np.pi * v) - (s - k * self.mean) ** 2 / (2 * v)
        if self.family == "poisson":
            la = k * self.mean
            ok = s >= 0
            ss = np.maximum(s, 0)
            return np.where(ok, ss * np.log(la) - la - gammaln(ss + 1), -np.inf)
        raise ValueError("the exact LR needs a law with a known sum law")

    def params(self) -> dict:
        """Summary (JSON).

        Returns
        -------
        dict
            ``family``, ``d``, ``mean_range`` and ``var_range``.
        """
        return {"family": self.family, "d": self.d,
                "mean_range": [float(self.mean.min()), float(self.mean.max())],
                "var_range": [float(self.var.min()), float(self.var.max())]}


@dataclass(frozen=True, eq=False)
class RowSampler:
    """Sampler of :meth:`ProductLaw.from_rows`: rows drawn uniformly with replacement
    (module-level and picklable, so games run on Dask)."""

    rows: np.ndarray

    def __call__(self, rng: np.random.Generator, size) -> np.ndarray:
        return self.rows[rng.integers(self.rows.shape[0], size=size)]


def seed_bernoulli(d: int = 5000, a: float = 0.25, *, seed=0) -> ProductLaw:
    """The seed's data law (App. E.1): Bernoulli(p), :math:`p_j\\sim U[a, 1-a]`.

    Parameters
    ----------
    d : int
        Dimension, >= 1.
    a : float
        The :math:`p_j` are uniform on [a, 1 - a]; 0 <= a < 0.5.
    seed : int
        Seed of the draw of the :math:`p_j`.

    Returns
    -------
    ProductLaw
        The Bernoulli product law.
    """
    d = check_int(d, "d", minimum=1)
    a = check_probability(a, "a", low_open=False)
    if not a < 0.5:
        raise ValueError(f"a must be < 0.5, got {a}")
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), 1305]))
    return ProductLaw.bernoulli(rng.uniform(a, 1 - a, d))


def seed_targets(law: ProductLaw, *, seed=0) -> dict[str, np.ndarray]:
    r"""The seed's targets (§5, App. E.1) for Bernoulli data.

    ``easy`` :math:`=\mathbb 1\{p\le1/2\}` (largest Mahalanobis distance), ``hard``
    :math:`=\mathbb 1\{p>1/2\}` (smallest), ``medium`` :math:`\sim\mathrm{Bern}(p)`.

    Parameters
    ----------
    law : ProductLaw
        A Bernoulli product law.
    seed : int
        Seed of the ``medium`` target's draw.

    Returns
    -------
    dict of str to ndarray
        ``easy``, ``medium`` and ``hard`` targets, each of shape (d,).
    """
    if law.family != "bernoulli":
        raise ValueError("named targets (easy/medium/hard) are defined for Bernoulli data; "
                         "pass a target vector instead")
    p = law.mean
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), 1306]))
    return {"easy": (p <= 0.5).astype(float), "medium": (rng.random(p.size) < p).astype(float),
            "hard": (p > 0.5).astype(float)}


class PerDatumMean(MechanismBase):
    r"""(Noisy, sub-sampled) empirical mean attacked for one fixed target (seed Alg. 1-2).

    Parameters
    ----------
    law : ProductLaw
    n : int
        Dataset size (>= 2).
    target : array_like, shape (d,)
        The fixed target :math:`z^*`.
    noise_std : float or array_like, shape (d,)
        :math:`\gamma_j`; the release adds :math:`N/\sqrt n`, :math:`N\sim\mathcal N(0,C_\gamma)`.
    rho : float
        Sub-sampling ratio in (0, 1]; ``k = round(rho n)`` rows without replacement (>= 2).
    mode : {"sufficient", "exact"}
        How :meth:`release` simulates (see the module docstring).
    inclusion : {"shared", "per-coordinate"}
        Sub-sampling model (only matters when ``k < n``). ``"shared"`` (default, seed §4.2 as
        the mechanism is defined): one ``k``-subset, so the target is in it for all
        coordinates or for none (probability :math:`q=k/n`). ``"per-coordinate"``: every
        coordinate draws its own ``k``-subset, independently, so the target enters coordinate
        ``j`` with probability :math:`q` independently of the others; its exact LR is the
        product of mixtures (Eq. 15, :meth:`paper_sub_log_lr`) and its H1 law is Gaussian-like,
        :math:`\mathcal N(\rho m^*/2,\rho m^*)` in the limit -- the seed's Thm 4.3 / Eq. (16)
        describe this mechanism, not the shared one.
    test : {"auto", "exact", "approx", "paper-sub"}
        Statistic returned by :meth:`log_lr_steps`. ``auto``: the exact LR when the law has a
        known sum law and there is no noise (or the data are Gaussian), else the Eq. (10)
        approximation (with :math:`C_\sigma+C_\gamma`, §4.1).
    """

    T = 1

    def __init__(self, law: ProductLaw, n: int, target, *, noise_std=0.0, rho: float = 1.0,
                 mode: str = "sufficient", test: str = "auto", inclusion: str = "shared"):
        if not isinstance(law, ProductLaw):
            raise TypeError(f"law must be a ProductLaw, got {type(law).__name__}")
        self.law = law
        self.n = check_int(n, "n", minimum=2)
        z = check_finite_array(target, "target", ndim=1)
        if z.shape != (law.d,):
            raise ValueError(f"target must have shape ({law.d},), got {z.shape}")
        self.target = z
        g = check_finite_array(noise_std, "noise_std")
        g = np.broadcast_to(g, (law.d,)).astype(float) if g.ndim == 0 else g
        if g.shape != (law.d,) or (g < 0).any():
            raise ValueError(f"noise_std must be >= 0, scalar or shape ({law.d},)")
        self.noise_std = g
        self.rho = check_probability(rho, "rho", high_open=False)
        self.k = int(round(self.rho * self.n))
        if self.k < 2:
            raise ValueError(f"rho * n must round to at least 2 rows, got k = {self.k}")
        if mode not in ("sufficient", "exact"):
            raise ValueError(f"mode must be 'sufficient' or 'exact', got {mode!r}")
        if mode == "sufficient" and not law.has_sum_law:
            raise ValueError("mode='sufficient' needs a bernoulli, gaussian or poisson law")
        self.mode = mode
        if inclusion not in INCLUSIONS:
            raise ValueError(f"inclusion must be one of {list(INCLUSIONS)}, got {inclusion!r}")
        self.inclusion = inclusion
        if test not in ("auto", *TESTS):
            raise ValueError(f"test must be one of {['auto', *TESTS]}, got {test!r}")
        if test == "auto":
            test = "exact" if self.exact_available else "approx"
        if test in ("exact", "paper-sub") and not self.exact_available:
            raise ValueError(f"test={test!r} needs the exact density of the release (a "
                             "bernoulli/gaussian/poisson law without noise, or gaussian data)")
        self.test = test

    # -- properties ------------------------------------------------------------------------------
    @property
    def d(self) -> int:
        """Dimension."""
        return self.law.d

    @property
    def q(self) -> float:
        """Inclusion probability :math:`k/n` of the target under :math:`H_1`."""
        return self.k / self.n

    @property
    def per_coordinate(self) -> bool:
        """Whether the target's inclusion is drawn per coordinate (and sub-sampling is on)."""
        return self.inclusion == "per-coordinate" and self.k < self.n

    @property
    def noisy(self) -> bool:
        """Whether Gaussian noise is added."""
        return bool((self.noise_std > 0).any())

    @property
    def exact_available(self) -> bool:
        """Whether the exact coordinate-wise LR can be evaluated."""
        return self.law.has_sum_law and (not self.noisy or self.law.family == "gaussian")

    @property
    def effective_var(self) -> np.ndarray:
        r"""Per-coordinate variance in units of one row at sample size ``k``:
        :math:`\sigma_j^2+\tfrac kn\gamma_j^2` (release variance times ``k``)."""
        return self.law.var + self.q * self.noise_std**2

    @property
    def m_star(self) -> float:
        r"""Leakage score :math:`\tilde m^*_\gamma` of the full-data mechanism (Eq. 7, 12)."""
        dl = self.target - self.law.mean
        return float(np.sum(dl**2 / (self.law.var + self.noise_std**2)) / self.n)

    @property
    def m_in(self) -> float:
        r"""Score given inclusion, :math:`\|z^*-\mu\|^2/(k\,v)` (``= m*/rho`` without noise)."""
        dl = self.target - self.law.mean
        return float(np.sum(dl**2 / self.effective_var) / self.k)

    def params(self) -> dict:
        """Validated parameters (JSON).

        Returns
        -------
        dict
            The validated parameters, the target's ``m_star`` and the law's summary.
        """
        return {"mechanism": "PerDatumMean", "T": 1, "n": self.n, "k": self.k,
                "rho": self.rho, "noise_std_range": [float(self.noise_std.min()),
                                                     float(self.noise_std.max())],
                "mode": self.mode, "test": self.test, "inclusion": self.inclusion,
                "m_star": self.m_star,
                "law": self.law.params()}

    # -- releases --------------------------------------------------------------------------------
    def release(self, member, tau, rng: np.random.Generator) -> np.ndarray:
        """Releases of ``len(member)`` rounds, shape ``(R, 1, d)`` (``tau`` is ignored: T = 1).

        Parameters
        ----------
        member : array_like of bool, shape (R,)
            Whether the target is in the dataset in each round.
        tau : int or array_like of int
            Ignored (one release).
        rng : numpy.random.Generator
            Source of randomness.

        Returns
        -------
        ndarray, shape (R, 1, d)
            The noisy means.
        """
        b = np.asarray(member, dtype=bool).reshape(-1)
        R = b.size
        if self.mode == "sufficient":
            s = self.law.sample_sum(rng, self.k - 1, R)
            if self.k == self.n:
                inc = b[:, None]
            elif self.per_coordinate:                   # one inclusion event per coordinate
                inc = b[:, None] & (rng.random((R, self.d)) < self.q)
            else:                                       # one inclusion event per round
                inc = (b & (rng.random(R) < self.q))[:, None]
            extra = self.law.sample(rng, R)
            s += np.where(inc, self.target, extra)
            out = s / self.k
        else:
            check_memory(8.0 * R * self.n * self.d, f"{R} datasets of {self.n} x {self.d} rows",
                         hint="use a smaller chunk_size or mode='sufficient'")
            D = self.law.sample(rng, (R, self.n))                   # every datum of every round
            j = rng.integers(self.n, size=R)
            D[b, j[b]] = self.target                                # Alg. 1: replace row j
            if self.per_coordinate:                                 # a k-subset per coordinate
                check_memory(24.0 * R * self.n * self.d, f"{R} x {self.n} x {self.d} subsets",
                             hint="use a smaller chunk_size or mode='sufficient'")
                keep = np.argsort(rng.random((R, self.n, self.d)), axis=1)[:, :self.k, :]
                D = np.take_along_axis(D, keep, axis=1)
            elif self.k < self.n:                                   # a uniform k-subset per round
                keep = np.argsort(rng.random((R, self.n)), axis=1)[:, :self.k]
                D = np.take_along_axis(D, keep[:, :, None], axis=1)
            out = D.mean(axis=1)
        if self.noisy:
            out += self.noise_std * rng.standard_normal((R, self.d)) / math.sqrt(self.n)
        return out[:, None, :]

    # -- log-likelihood ratios ---------------------------------------------------------------------
    def _flat(self, releases) -> np.ndarray:
        o = np.asarray(releases, dtype=float)
        if o.ndim == 3:
            o = o[:, -1, :]
        if o.ndim != 2 or o.shape[1] != self.d:
            raise ValueError(f"releases must have shape (R, 1, {self.d}) or (R, {self.d}), "
                             f"got {np.shape(releases)}")
        return o

    def _mix(self, l_in: np.ndarray) -> np.ndarray:
        if self.k == self.n:
            return l_in
        with np.errstate(divide="ignore"):
            return np.logaddexp(math.log1p(-self.q), math.log(self.q) + l_in)

    def _mix_coords(self, c: np.ndarray) -> np.ndarray:
        """Log-LR from per-coordinate 'included' log-LRs ``c`` (R, d) under :attr:`inclusion`."""
        if self.per_coordinate:
            return np.sum(self._mix(c), axis=-1)
        return self._mix(np.sum(c, axis=-1))

    def _coord_in_log_lr(self, o: np.ndarray, z=None) -> np.ndarray:
        """Per-coordinate exact log-LR of 'included' vs H0, shape (R, d) (``z``: the target,
        default :attr:`target`; ``(R, d)`` for one target per round)."""
        law, k = self.law, self.k
        z = self.target if z is None else z
        if law.family == "gaussian":
            # release given inclusion: N(mu + (z-mu)/k, (k-1)s2/k^2 + g2/n); H0: N(mu, s2/k + g2/n)
            g2 = self.noise_std**2 / self.n
            v0 = law.var / k + g2
            v1 = (k - 1) * law.var / k**2 + g2
            m1 = law.mean + (z - law.mean) / k
            return (-0.5 * np.log(v1 / v0) - (o - m1) ** 2 / (2 * v1)
                    + (o - law.mean) ** 2 / (2 * v0))
        s = np.rint(o * k)
        if law.family == "bernoulli" and np.all((z == 0) | (z == 1)):
            # log Bin_{k-1}(s - z) - log Bin_k(s) = log(s/(kp)) (z=1), log((k-s)/(k(1-p))) (z=0)
            one = z == 1
            y = np.where(one, s, k - s)
            with np.errstate(divide="ignore"):
                return np.log(y) - np.log(k * np.where(one, law.mean, 1 - law.mean))
        return law.sum_logpdf(s - z, k - 1) - law.sum_logpdf(s, k)

    def exact_log_lr(self, releases) -> np.ndarray:
        r"""Exact log-LR (the Neyman-Pearson statistic of this mechanism):
        :math:`\log(1-q+q\,e^{\ell_{\rm in}})`, :math:`q=k/n`, with one shared inclusion
        event; with ``inclusion="per-coordinate"`` :math:`\sum_j\log(1-q+q\,e^{\ell_{{\rm in},j}})`
        (Eq. 15, then exact).

        Parameters
        ----------
        releases : array_like, shape (R, 1, d) or (R, d)
            Releases.

        Returns
        -------
        ndarray, shape (R,)
            The exact log-LR of each release.
        """
        if not self.exact_available:
            raise ValueError("the exact LR needs a bernoulli/gaussian/poisson law without "
                             "noise (or gaussian data)")
        o = self._flat(releases)
        return self._mix_coords(self._coord_in_log_lr(o))

    def paper_sub_log_lr(self, releases) -> np.ndarray:
        r"""The seed's Eq. (15): :math:`\sum_j\log(1-\rho+\rho e^{\ell_{{\rm in},j}})`.

        The LR of coordinates sub-sampled independently -- the paper's approximation of the
        shared-inclusion mechanism (equal to :meth:`exact_log_lr` when ``rho = 1``).

        Parameters
        ----------
        releases : array_like, shape (R, 1, d) or (R, d)
            Releases.

        Returns
        -------
        ndarray, shape (R,)
            The Eq. (15) log-LR of each release.
        """
        o = self._flat(releases)
        c = self._coord_in_log_lr(o)
        if self.k == self.n:
            return np.sum(c, axis=1)
        with np.errstate(divide="ignore"):
            return np.sum(np.logaddexp(math.log1p(-self.q), math.log(self.q) + c), axis=1)

    def approx_log_lr(self, releases, *, target=None, mean=None, var=None,
                      mixture: bool = True) -> np.ndarray:
        r"""Eq. (10) at sample size ``k`` with :math:`C_\sigma+\tfrac kn C_\gamma` (§4.1),
        mixed over the inclusion event(s) when ``k < n`` (``mixture=True``; one shared event,
        or one per coordinate with ``inclusion="per-coordinate"``):

        .. math::

            \ell^{\rm app}_{\rm in}=(z-\mu)^\top V^{-1}(o-\mu)-\tfrac1{2k}\|z-\mu\|^2_{V^{-1}}.

        ``target``, ``mean``, ``var`` override :math:`z^*,\mu,V` (misspecified and plug-in
        attacks); ``var`` is in the units of :attr:`effective_var`. ``mean``/``var`` may be
        ``(R, d)`` (one estimate per round).

        Parameters
        ----------
        releases : array_like, shape (R, 1, d) or (R, d)
            Releases.
        target : array_like, shape (d,), optional
            Target the statistic is built for; None = the mechanism's target.
        mean : array_like, shape (d,) or (R, d), optional
            Assumed data mean; None = the law's.
        var : array_like, shape (d,) or (R, d), optional
            Assumed variance in the units of :attr:`effective_var`; None = the true one.
        mixture : bool
            Mix over the inclusion event(s) when ``k < n``; False = the unmixed Eq. (10).

        Returns
        -------
        ndarray, shape (R,)
            The approximate log-LR of each release.
        """
        o = self._flat(releases)
        z = self.target if target is None else np.asarray(target, dtype=float)
        mu = self.law.mean if mean is None else np.asarray(mean, dtype=float)
        v = self.effective_var if var is None else np.asarray(var, dtype=float)
        dl = z - mu
        c = dl / v
        cj = c * (o - mu) - c * dl / (2 * self.k)
        if not mixture:
            return np.sum(cj, axis=-1)
        return self._mix_coords(cj)

    def log_lr_steps(self, releases) -> np.ndarray:
        """The statistic :attr:`test` as ``(R, 1)`` (T = 1).

        Parameters
        ----------
        releases : array_like, shape (R, 1, d)
            Releases.

        Returns
        -------
        ndarray, shape (R, 1)
            The statistic of each release.
        """
        fn = {"exact": self.exact_log_lr, "approx": self.approx_log_lr,
              "paper-sub": self.paper_sub_log_lr}[self.test]
        return fn(releases)[:, None]

    def final_log_lr(self, releases, tau) -> np.ndarray:
        """With one release the Final Observation test is the same statistic.

        Parameters
        ----------
        releases : array_like, shape (R, 1, d)
            Releases.
        tau : int or array_like of int
            Ignored (one release).

        Returns
        -------
        ndarray, shape (R,)
            The statistic of each release.
        """
        return self.log_lr_steps(releases)[:, 0]

    # -- theory ----------------------------------------------------------------------------------
    def theory(self, alpha: float = 0.01) -> dict:
        r"""Closed forms for this mechanism (corrected, and the paper's form where it differs).

        Returns ``m_star``, ``leakage``, ``power``, ``threshold``, ``threshold_scale``,
        ``advantage`` (= leakage), and with sub-sampling ``paper`` (the seed's
        :math:`\rho m^*` per-coordinate approximation).

        **One scale.** ``threshold`` is always on the scale :data:`THRESHOLD_SCALE`
        (``"log_lr"``): the log-likelihood ratio :math:`\log p_1(o)/p_0(o)` of one release
        under this mechanism's own inclusion model, i.e. the statistic of
        :meth:`exact_log_lr` (and of :meth:`approx_log_lr`, its Eq. 10 approximation). In the
        limit experiment (:math:`x\sim\mathcal N(0,1)` under H0, :math:`s^2` the score given
        inclusion) it is

        .. math::

            \ell = \log\big(1-q+q\,e^{s x-s^2/2}\big),\qquad q=k/n,

        which is :math:`\sqrt{m^*}x-m^*/2` (Cor. 3.2) when ``k = n`` (:math:`q=1`) -- the same
        statistic, not a different scale. With ``inclusion="per-coordinate"`` the threshold is
        that of the per-coordinate product LR (:meth:`paper_sub_log_lr`, Eq. 15), whose limit is
        :math:`\mathcal N(\mp\rho m^*/2,\rho m^*)` (Thm 4.3, Eq. 16).

        Parameters
        ----------
        alpha : float
            False-positive rate of ``power`` and ``threshold``, in (0, 1).

        Returns
        -------
        dict
            The closed forms listed above.
        """

        a = float(alpha)
        m = self.m_star
        if self.per_coordinate:
            # sum_j log(1-q+q e^{l_j}) with l_j ~ N(-a_j/2, a_j), a_j small: mean -q^2 a_j/2,
            # variance q^2 a_j, so N(-+ q^2 m_in/2, q^2 m_in) = N(-+ rho m*/2, rho m*) (Eq. 16)
            mi = self.m_in
            me = self.q**2 * mi
            out = {"m_star": m, "m_in": mi, "rho_effective": self.q, "m_eff": me,
                   "leakage": float(L.leakage(me)), "power": float(L.power(a, me)),
                   "threshold": float(L.threshold(a, me)),
                   "paper": {"m_eff": self.q * m,
                             "leakage": float(L.sub_leakage(m, self.q, form="paper")),
                             "power": float(L.sub_power(a, m, self.q, form="paper"))}}
        elif self.k == self.n:
            out = {"m_star": m, "leakage": float(L.leakage(m)), "power": float(L.power(a, m)),
                   "threshold": float(L.threshold(a, m))}
        else:
            # score per unit of inclusion: m_in = (m* with k, C_sigma + q C_gamma); m*/rho form
            mi = self.m_in
            out = {"m_star": m, "m_in": mi, "rho_effective": self.q,
                   "leakage": float(L.sub_leakage(mi * self.q, self.q)),
                   "power": float(L.sub_power(a, mi * self.q, self.q)),
                   "threshold": float(L.sub_threshold(a, mi * self.q, self.q)),
                   "paper": {"m_eff": self.q * m,
                             "leakage": float(L.sub_leakage(m, self.q, form="paper")),
                             "power": float(L.sub_power(a, m, self.q, form="paper"))}}
        out["advantage"] = out["leakage"]
        out["threshold_scale"] = THRESHOLD_SCALE
        out["alpha"] = a
        return out


class AverageDatumMean(MechanismBase):
    r"""The average-datum game on the (noisy) empirical mean (seed App. B, Alg. 3/4).

    Each round draws a fresh target :math:`z^*\sim\mathcal D`; under :math:`H_1` it is a
    uniformly chosen row of the dataset, under :math:`H_0` it is drawn apart from it (Alg. 3).
    The release is the pair :math:`(z^*, o)`, shape ``(R, 1, 2, d)`` (``[:, 0, 0]`` the target,
    ``[:, 0, 1]`` the mean :math:`o=\frac1n\sum_iZ_i+N/\sqrt n`). Since :math:`z^*` has law
    :math:`\mathcal D` under both hypotheses, the LR is the per-datum one evaluated at the
    round's own target (Eq. 22-24):

    .. math::

        \ell(z^*, o)=\sum_j\log\frac{p^{(n-1)}_j(n o_j-z^*_j)}{p^{(n)}_j(n o_j)}

    (with noise, Gaussian data only). For Gaussian data the law of :math:`\ell` has exact
    finite-``n`` moments (:func:`semi_core.stats.leakage.avg_moments`, derived in
    :func:`semi_core.symbolic.leakage.avg_moments`); the limit is :math:`\mathcal N(\mp M/2,
    M)`, :math:`M=\sum_j\sigma_j^2/(n(\sigma_j^2+\gamma_j^2))` (:math:`=d/n=\tau`
    noiseless: the seed's Remark 3.3, Sankararaman et al.'s average-datum result).
    No sub-sampling (``rho = 1``).

    Parameters
    ----------
    law : ProductLaw
        Bernoulli, Gaussian or Poisson (a known sum law).
    n : int
        Dataset size (>= 2).
    noise_std : float or array_like, shape (d,)
        :math:`\gamma_j` (Gaussian data only when > 0: the exact LR needs the release density).
    """

    T = 1

    def __init__(self, law: ProductLaw, n: int, *, noise_std=0.0):
        if not isinstance(law, ProductLaw):
            raise TypeError(f"law must be a ProductLaw, got {type(law).__name__}")
        # the per-datum mechanism at a placeholder target holds the validated parameters and
        # the coordinate-wise LR; each round supplies its own target
        self._pd = PerDatumMean(law, n, law.mean, noise_std=noise_std)
        if not self._pd.exact_available:
            raise ValueError("the average-datum LR needs a bernoulli/gaussian/poisson law "
                             "without noise, or gaussian data")
        self.law, self.n, self.noise_std = law, self._pd.n, self._pd.noise_std

    @property
    def d(self) -> int:
        """Dimension."""
        return self.law.d

    def params(self) -> dict:
        """Validated parameters (JSON).

        Returns
        -------
        dict
            ``mechanism``, ``T``, ``n``, ``noise_std_range`` and the law's summary.
        """
        return {"mechanism": "AverageDatumMean", "T": 1, "n": self.n,
                "noise_std_range": [float(self.noise_std.min()), float(self.noise_std.max())],
                "law": self.law.params()}

    def release(self, member, tau, rng: np.random.Generator) -> np.ndarray:
        """Pairs :math:`(z^*, o)` of ``len(member)`` rounds, shape ``(R, 1, 2, d)`` (Alg. 3).

        Parameters
        ----------
        member : array_like of bool, shape (R,)
            Whether each round's target is in the dataset.
        tau : int or array_like of int
            Ignored (one release).
        rng : numpy.random.Generator
            Source of randomness.

        Returns
        -------
        ndarray, shape (R, 1, 2, d)
            The target and the noisy mean of each round.
        """
        b = np.asarray(member, dtype=bool).reshape(-1)
        R = b.size
        z = self.law.sample(rng, R)                       # the round's target, ~ D either way
        s = self.law.sample_sum(rng, self.n - 1, R)       # the other n - 1 rows
        s += np.where(b[:, None], z, self.law.sample(rng, R))
        o = s / self.n
        if self._pd.noisy:
            o += self.noise_std * rng.standard_normal((R, self.d)) / math.sqrt(self.n)
        return np.stack([z, o], axis=1)[:, None]

    def log_lr(self, releases) -> np.ndarray:
        """Exact log-LR of each round's pair (Eq. 22-24), shape ``(R,)``.

        Parameters
        ----------
        releases : array_like, shape (R, 1, 2, d) or (R, 2, d)
            Pairs :math:`(z^*, o)`.

        Returns
        -------
        ndarray, shape (R,)
            The exact log-LR of each round.
        """
        a = np.asarray(releases, dtype=float)
        if a.ndim == 4:
            a = a[:, -1]
        if a.ndim != 3 or a.shape[1:] != (2, self.d):
            raise ValueError(f"releases must have shape (R, 1, 2, {self.d}) or (R, 2, "
                             f"{self.d}), got {np.shape(releases)}")
        return np.sum(self._pd._coord_in_log_lr(a[:, 1], a[:, 0]), axis=1)

    def log_lr_steps(self, releases) -> np.ndarray:
        """The exact log-LR as ``(R, 1)`` (T = 1).

        Parameters
        ----------
        releases : array_like, shape (R, 1, 2, d)
            Pairs :math:`(z^*, o)`.

        Returns
        -------
        ndarray, shape (R, 1)
            The exact log-LR of each round.
        """
        return self.log_lr(releases)[:, None]

    def final_log_lr(self, releases, tau) -> np.ndarray:
        """With one release the Final Observation test is the same statistic.

        Parameters
        ----------
        releases : array_like, shape (R, 1, 2, d)
            Pairs :math:`(z^*, o)`.
        tau : int or array_like of int
            Ignored (one release).

        Returns
        -------
        ndarray, shape (R,)
            The exact log-LR of each round.
        """
        return self.log_lr(releases)

    def theory(self, alpha: float = 0.01) -> dict:
        r"""Limit experiment :math:`\mathcal N(\mp M/2, M)` (leakage, power, threshold on the
        log-LR scale) and, for Gaussian data, the exact finite-``n`` moments of :math:`\ell`.

        Parameters
        ----------
        alpha : float
            False-positive rate of ``power`` and ``threshold``, in (0, 1).

        Returns
        -------
        dict
            ``M``, ``leakage``, ``power``, ``threshold``, ``threshold_scale``, ``alpha`` and, for
            Gaussian data, the exact moments.
        """
        a = check_probability(alpha, "alpha")
        r2 = L.avg_r2(self.n, self.law.var, self.noise_std**2)
        M = float(np.sum(r2))
        out = {"M": M, "leakage": float(L.leakage(M)), "power": float(L.power(a, M)),
               "threshold": float(L.threshold(a, M)), "threshold_scale": THRESHOLD_SCALE,
               "alpha": a}
        out["advantage"] = out["leakage"]
        if self.law.family == "gaussian":
            out["exact_moments"] = L.avg_moments(r2)
        return out
