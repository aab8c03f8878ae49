r"""Black-box mean mechanisms of the sequential DP auditing seed (§4.1, eq. 5-7) and user callables.

A *dataset mechanism* maps a dataset (records in :math:`[0,1]`, add/remove neighbours) to a
random output. Here, for :math:`n = |S|`, :math:`s = \sum_i x_i` and
:math:`\tilde n = \max\{10^{-12}, n + W\}`:

============== ======================================= =========================================
name           output                                  privacy
============== ======================================= =========================================
DPLaplace      :math:`(s + Z)/\tilde n`                 :math:`\varepsilon`-DP
NonDPLaplace1  :math:`(s + Z)/n`                        not DP (noise scaled by the private n)
NonDPLaplace2  :math:`s/n + Z/\tilde n`                 not DP (mean with the private n)
============== ======================================= =========================================

with :math:`W, Z\sim\mathrm{Laplace}(0, 2/\varepsilon)` (seed eq. 5-7: :math:`\rho_1 = Z/\tilde n`,
:math:`\rho_2 = Z/n`). DPLaplace is :math:`\varepsilon`-DP: the count (sensitivity 1) and the
sum (sensitivity 1 for records in :math:`[0,1]`) each get :math:`\varepsilon/2`, the division is
post-processing. The Gaussian variants replace both noises by :math:`N(0,\sigma^2)`.

**Our sigma calibration** (the seed does not state one): each of the two Gaussian releases is
calibrated *exactly* to :math:`(\varepsilon/2,\delta/2)`-DP at sensitivity 1 with the analytic
Gaussian mechanism, i.e. :math:`\sigma = 1/\mu` where :math:`\mu`-GDP has
:math:`\delta_\mu(\varepsilon/2) = \delta/2`; by basic composition DPGaussian is
:math:`(\varepsilon,\delta)`-DP (default :math:`\delta = 10^{-5}`).

The seed's pair is :math:`S=\{0\}`, :math:`S'=\{0,1\}` (:data:`SEED_PAIR`).

**Where the floor goes** (``floor``). Eq. 5 as printed floors the noisy *count*,
:math:`\tilde n=\max\{10^{-12}, n+W\}` (``floor="count"``, the default above). DP-Auditorium's
``MeanMechanism``, whose setup the seed says it follows, floors the noise *scale* instead: the
mean uses :math:`n+W` unfloored and the noise scale is :math:`\max\{10^{-12}, b/(n+W)\}`
(``floor="scale"``, :math:`b=2/\varepsilon` or the Gaussian :math:`\sigma`). Under the scale
floor a negative noisy count (probability :math:`\approx\tfrac12 e^{-n\varepsilon/2}`) gives an
output with noise :math:`10^{-12}`: a point mass at :math:`s/n` for NonDP2 (and at
:math:`s/(n+W)` for DP, which is then no longer DP), which is what makes NonDP2 detectable.

Any Python callable ``mechanism(dataset, rng) -> output`` (a scalar or a fixed-shape array) is
accepted by :func:`as_dataset_mechanism` without subclassing; every output is checked (finite,
same shape each call) and a violation raises an error naming ``mechanism``.

The zoo classes also implement the :class:`~semi_core.mechanisms.base.Mechanism` protocol with
``T = 1`` (``member`` = output on :math:`S'`), their exact log-LR computed by quadrature over the
count noise (:meth:`NoisyCountMean.logpdf`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from scipy import special

from semi_core._validation import check_delta, check_positive, check_real
from semi_core.mechanisms.base import GroundTruthUnknown, MechanismBase

__all__ = ["NoisyCountMean", "DPLaplace", "NonDPLaplace1", "NonDPLaplace2", "DPGaussian",
           "NonDPGaussian1", "NonDPGaussian2", "CallableMechanism", "as_dataset_mechanism",
           "ZOO", "ZOO_EPSILON_RANGE", "FLOORS", "SEED_PAIR", "gaussian_sigma",
           "make_zoo_mechanism", "RandomizedResponse"]

#: The seed's neighbouring datasets (§4.1): S = {0}, S' = {0, 1}.
SEED_PAIR = (np.array([0.0]), np.array([0.0, 1.0]))

_FLOOR = 1e-12  # the seed's max{1e-12, n + noise}
#: Where the 1e-12 floor applies: the noisy count (eq. 5 as printed) or the noise scale
#: (DP-Auditorium's MeanMechanism).
FLOORS = ("count", "scale")

#: Design epsilons a :class:`NoisyCountMean` accepts: outside, the noise scale (``2/eps`` or the
#: Gaussian calibration) over- or underflows and the quadrature log-LR loses every digit.
ZOO_EPSILON_RANGE = (1e-6, 1e6)


def gaussian_sigma(epsilon: float, delta: float) -> float:
    r"""Noise std of a sensitivity-1 Gaussian release that is exactly :math:`(\varepsilon,\delta)`-DP.

    Solves :math:`\Phi(-\varepsilon/\mu+\mu/2)-e^\varepsilon\Phi(-\varepsilon/\mu-\mu/2)=\delta`
    for :math:`\mu` (Brent, log space via :func:`semi_core.stats.gdp.gdp_delta`) and returns
    :math:`1/\mu`.

    Parameters
    ----------
    epsilon : float
        Target :math:`\varepsilon`, > 0.
    delta : float
        Target :math:`\delta`, in (0, 1).

    Returns
    -------
    float
        The noise standard deviation, > 0.

    Examples
    --------
    >>> print(f"{gaussian_sigma(1.0, 1e-5):.4f}")
    3.7306
    """
    from scipy import optimize  # lazy: slow to import, one root for the Gaussian rows

    from semi_core.stats.gdp import gdp_delta

    epsilon = check_positive(epsilon, "epsilon")
    delta = check_delta(delta)
    if delta <= 0:
        raise ValueError("delta must be > 0 for a Gaussian mechanism")
    hi = 1.0
    while float(gdp_delta(epsilon, hi)) < delta:
        hi *= 2.0
    lo = hi / 2.0
    while float(gdp_delta(epsilon, lo)) > delta:
        lo /= 2.0
    mu = optimize.brentq(lambda m: float(gdp_delta(epsilon, m)) - delta, lo, hi, xtol=1e-15,
                         rtol=1e-13)
    return 1.0 / mu


def _check_dataset(dataset) -> np.ndarray:
    arr = np.asarray(dataset, dtype=float).reshape(-1)
    if arr.size == 0:
        raise ValueError("dataset must have at least one record")
    if not np.all(np.isfinite(arr)) or arr.min() < 0 or arr.max() > 1:
        raise ValueError("dataset records must be finite and in [0, 1] (sum sensitivity 1)")
    return arr


class CountMeanVariant:
    r"""The settings every noisy-count mean mechanism shares: the checked design
    :math:`\varepsilon`, value noise and variant, the seed's name and whether it is DP
    (seed eq. 5-7). Used by :class:`NoisyCountMean` and the DP-Auditorium conventions
    (:class:`~semi_core.audit.sequential.conventions.AuditoriumMean`)."""

    noise: str
    variant: str
    epsilon_design: float

    def _set_variant(self, epsilon: float, noise: str, variant: str, scale_text: str = ""
                     ) -> None:
        self.epsilon_design = check_positive(epsilon, "epsilon")
        lo, hi = ZOO_EPSILON_RANGE
        if not lo <= self.epsilon_design <= hi:
            raise ValueError(f"epsilon must be in [{lo:g}, {hi:g}]{scale_text}, "
                             f"got {self.epsilon_design:g}")
        if noise not in ("laplace", "gaussian"):
            raise ValueError(f"noise must be 'laplace' or 'gaussian', got {noise!r}")
        if variant not in ("dp", "nondp1", "nondp2"):
            raise ValueError(f"variant must be 'dp', 'nondp1' or 'nondp2', got {variant!r}")
        self.noise, self.variant = noise, variant

    @property
    def name(self) -> str:
        """The seed's name: ``DPLaplace``, ``NonDPGaussian1``, ..."""
        kind = "DP" if self.variant == "dp" else "NonDP"
        num = {"dp": "", "nondp1": "1", "nondp2": "2"}[self.variant]
        return f"{kind}{self.noise.capitalize()}{num}"

    @property
    def is_dp(self) -> bool:
        """Whether the variant is the DP one (``"dp"``)."""
        return self.variant == "dp"


class NoisyCountMean(CountMeanVariant, MechanismBase):
    """Noisy mean with a noisy count (the six mechanisms of seed eq. 5-7; see the module doc).

    Parameters
    ----------
    epsilon : float
        Privacy parameter the mechanism is designed for (> 0).
    noise : {"laplace", "gaussian"}
    variant : {"dp", "nondp1", "nondp2"}
    delta : float
        Gaussian variants only (default ``1e-5``).
    pair : tuple of array_like
        ``(S, S')`` used by the :class:`Mechanism` protocol (default :data:`SEED_PAIR`).
    floor : {"count", "scale"}
        Floor :math:`10^{-12}` on the noisy count (eq. 5 as printed) or on the noise scale
        (DP-Auditorium); see the module doc. Exact densities exist for ``"count"`` only.
    """

    T = 1
    tests = ("semi-star", "semi-max", "semi-unif")

    def __init__(self, epsilon: float, *, noise: str = "laplace", variant: str = "dp",
                 delta: float = 1e-5, pair=SEED_PAIR, quad_nodes: int = 4000,
                 floor: str = "count"):
        if floor not in FLOORS:
            raise ValueError(f"floor must be one of {FLOORS}, got {floor!r}")
        self.floor = floor
        self._set_variant(epsilon, noise, variant, " for the noisy-count mean mechanisms "
                          "(noise scale 2/epsilon)")
        self.delta_design = check_delta(delta) if noise == "gaussian" else 0.0
        if noise == "laplace":
            self.scale = 2.0 / self.epsilon_design
        else:
            self.scale = gaussian_sigma(self.epsilon_design / 2, self.delta_design / 2)
        self.pair = (_check_dataset(pair[0]), _check_dataset(pair[1]))
        self.quad_nodes = int(quad_nodes)

    # -------------------------------------------------------------- black-box sampling
    def _noise(self, rng, size):
        if self.noise == "laplace":
            return rng.laplace(0.0, self.scale, size)
        return rng.normal(0.0, self.scale, size)

    def sample(self, dataset, size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` independent outputs on ``dataset``, shape ``(size, 1)``.

        Parameters
        ----------
        dataset : array_like
            The dataset (1-D values).
        size : int
            Number of outputs, >= 0.
        rng : numpy.random.Generator
            Source of randomness.

        Returns
        -------
        ndarray, shape (size, 1)
            The outputs.
        """
        x = _check_dataset(dataset)
        n, s = float(x.size), float(x.sum())
        w, z = self._noise(rng, size), self._noise(rng, size)
        if self.floor == "scale" and self.variant != "nondp1":
            nw = n + w  # DP-Auditorium: unfloored count, noise scale max(1e-12, b / count)
            noise = z / self.scale * np.maximum(_FLOOR, self.scale / nw)
            mean = s / nw if self.variant == "dp" else s / n
            return (mean + noise)[:, None]
        nt = np.maximum(_FLOOR, n + w)
        if self.variant == "dp":
            out = (s + z) / nt
        elif self.variant == "nondp1":
            out = (s + z) / n
        else:
            out = s / n + z / nt
        return out[:, None]

    def __call__(self, dataset, rng: np.random.Generator) -> float:
        """One output (the ``mechanism(dataset, rng)`` form)."""
        return float(self.sample(dataset, 1, rng)[0, 0])

    # -------------------------------------------------------------- exact densities
    def _logf(self, u):
        if self.noise == "laplace":
            return -np.abs(u) / self.scale - np.log(2 * self.scale)
        return -0.5 * (u / self.scale) ** 2 - np.log(self.scale * np.sqrt(2 * np.pi))

    def _count_nodes(self, n: float) -> np.ndarray:
        u = (np.arange(self.quad_nodes) + 0.5) / self.quad_nodes
        if self.noise == "laplace":
            w = -self.scale * np.sign(u - 0.5) * np.log1p(-2 * np.abs(u - 0.5))
        else:
            w = self.scale * special.ndtri(u)
        return np.maximum(_FLOOR, n + w)

    def logpdf(self, outputs, dataset) -> np.ndarray:
        r"""Log-density of scalar outputs on ``dataset``: exact for ``nondp1``, else the mean of
        the conditional densities over ``quad_nodes`` midpoint quantiles of the count noise
        (:math:`p(o)=\mathbb E_{\tilde n}\,p(o\mid\tilde n)`).

        Parameters
        ----------
        outputs : array_like
            Scalar outputs (flattened).
        dataset : array_like
            The dataset (1-D values).

        Returns
        -------
        ndarray
            Log-density of each output.
        """
        if self.floor == "scale" and self.variant != "nondp1":
            raise GroundTruthUnknown(f"{self.name} with floor='scale' has a near-atom of width "
                                     "1e-12: no density is computed")
        x = _check_dataset(dataset)
        n, s = float(x.size), float(x.sum())
        o = np.asarray(outputs, dtype=float).reshape(-1)
        if self.variant == "nondp1":
            return np.log(n) + self._logf(n * o - s)
        nt = self._count_nodes(n)[None, :]
        if self.variant == "dp":
            lc = np.log(nt) + self._logf(nt * o[:, None] - s)
        else:
            lc = np.log(nt) + self._logf(nt * (o[:, None] - s / n))
        return special.logsumexp(lc, axis=1) - np.log(nt.shape[1])

    # -------------------------------------------------------------- Mechanism protocol
    def release(self, member, tau, rng: np.random.Generator) -> np.ndarray:
        """Outputs on ``S'`` (member) or ``S``, shape ``(R, 1, 1)``; ``tau`` must be 1.

        Parameters
        ----------
        member : array_like of bool, shape (R,)
            Whether each round runs on the neighbour ``S'``.
        tau : int or array_like of int
            Must be 1.
        rng : numpy.random.Generator
            Source of randomness.

        Returns
        -------
        ndarray, shape (R, 1, 1)
            The outputs.
        """
        member = np.asarray(member, dtype=bool).reshape(-1)
        if np.any(np.asarray(tau) != 1):
            raise ValueError("tau must be 1 (one release)")
        out = np.empty((member.size, 1, 1))
        for flag, data in ((False, self.pair[0]), (True, self.pair[1])):
            idx = np.flatnonzero(member == flag)
            out[idx, 0, :] = self.sample(data, idx.size, rng)
        return out

    def log_lr_steps(self, releases) -> np.ndarray:
        """Exact log-LR of ``S'`` against ``S`` per release, shape ``(R, 1)``.

        Parameters
        ----------
        releases : array_like, shape (R, 1, 1)
            Outputs.

        Returns
        -------
        ndarray, shape (R, 1)
            The log-LR of each output.
        """
        o = np.asarray(releases, dtype=float).reshape(-1)
        return (self.logpdf(o, self.pair[1]) - self.logpdf(o, self.pair[0]))[:, None]

    def epsilon(self, delta: float, tau: int = 1) -> float:
        """No exact epsilon(delta) is known (DP variants satisfy the design guarantee only).

        Parameters
        ----------
        delta : float
            The :math:`\\delta` of the profile.
        tau : int
            Insertion step (1).

        Returns
        -------
        float
            Never returns: raises :class:`GroundTruthUnknown`.
        """
        raise GroundTruthUnknown(f"{self.name}: only the design guarantee is known "
                                 f"(eps={self.epsilon_design}, delta={self.delta_design})"
                                 if self.is_dp else f"{self.name} is not DP")

    def params(self) -> dict[str, Any]:
        return {"mechanism": self.name, "T": 1, "epsilon": self.epsilon_design,
                "delta": self.delta_design, "noise_scale": self.scale, "floor": self.floor,
                "S": self.pair[0].tolist(), "S_prime": self.pair[1].tolist()}

    def __repr__(self) -> str:
        return f"{self.name}(epsilon={self.epsilon_design}, scale={self.scale:.6g})"


def DPLaplace(epsilon, **kw):  # noqa: N802 - the seed's names
    """seed eq. 5: :math:`\\sum x/\\tilde n + \\rho_1` (epsilon-DP).

    Parameters
    ----------
    epsilon : float
        Design :math:`\\varepsilon`, > 0.
    **kw
        Further keywords of :class:`NoisyCountMean`.

    Returns
    -------
    NoisyCountMean
        The mechanism.
    """
    return NoisyCountMean(epsilon, noise="laplace", variant="dp", **kw)


def NonDPLaplace1(epsilon, **kw):  # noqa: N802
    """seed eq. 6: :math:`\\sum x/n + \\rho_2` (not DP).

    Parameters
    ----------
    epsilon : float
        Nominal :math:`\\varepsilon`, > 0 (sets the noise scale).
    **kw
        Further keywords of :class:`NoisyCountMean`.

    Returns
    -------
    NoisyCountMean
        The mechanism.
    """
    return NoisyCountMean(epsilon, noise="laplace", variant="nondp1", **kw)


def NonDPLaplace2(epsilon, **kw):  # noqa: N802
    """seed eq. 7: :math:`\\sum x/n + \\rho_1` (not DP).

    Parameters
    ----------
    epsilon : float
        Nominal :math:`\\varepsilon`, > 0 (sets the noise scale).
    **kw
        Further keywords of :class:`NoisyCountMean`.

    Returns
    -------
    NoisyCountMean
        The mechanism.
    """
    return NoisyCountMean(epsilon, noise="laplace", variant="nondp2", **kw)


def DPGaussian(epsilon, delta=1e-5, **kw):  # noqa: N802
    """Gaussian analogue of DPLaplace ((epsilon, delta)-DP with our calibration).

    Parameters
    ----------
    epsilon : float
        Design :math:`\\varepsilon`, > 0.
    delta : float
        Design :math:`\\delta`, in (0, 1).
    **kw
        Further keywords of :class:`NoisyCountMean`.

    Returns
    -------
    NoisyCountMean
        The mechanism.
    """
    return NoisyCountMean(epsilon, noise="gaussian", variant="dp", delta=delta, **kw)


def NonDPGaussian1(epsilon, delta=1e-5, **kw):  # noqa: N802
    """Gaussian analogue of NonDPLaplace1.

    Parameters
    ----------
    epsilon : float
        Nominal :math:`\\varepsilon`, > 0 (sets the noise scale).
    delta : float
        Nominal :math:`\\delta`, in (0, 1).
    **kw
        Further keywords of :class:`NoisyCountMean`.

    Returns
    -------
    NoisyCountMean
        The mechanism.
    """
    return NoisyCountMean(epsilon, noise="gaussian", variant="nondp1", delta=delta, **kw)


def NonDPGaussian2(epsilon, delta=1e-5, **kw):  # noqa: N802
    """Gaussian analogue of NonDPLaplace2.

    Parameters
    ----------
    epsilon : float
        Nominal :math:`\\varepsilon`, > 0 (sets the noise scale).
    delta : float
        Nominal :math:`\\delta`, in (0, 1).
    **kw
        Further keywords of :class:`NoisyCountMean`.

    Returns
    -------
    NoisyCountMean
        The mechanism.
    """
    return NoisyCountMean(epsilon, noise="gaussian", variant="nondp2", delta=delta, **kw)


#: CLI names -> constructors ``f(epsilon, delta)``.
ZOO: dict[str, Callable[..., NoisyCountMean]] = {
    "dp-laplace": lambda e, d, **kw: DPLaplace(e, **kw),
    "nondp-laplace-1": lambda e, d, **kw: NonDPLaplace1(e, **kw),
    "nondp-laplace-2": lambda e, d, **kw: NonDPLaplace2(e, **kw),
    "dp-gaussian": lambda e, d, **kw: DPGaussian(e, d, **kw),
    "nondp-gaussian-1": lambda e, d, **kw: NonDPGaussian1(e, d, **kw),
    "nondp-gaussian-2": lambda e, d, **kw: NonDPGaussian2(e, d, **kw),
}


def make_zoo_mechanism(name: str, epsilon: float, delta: float = 1e-5, *,
                       floor: str = "count") -> NoisyCountMean:
    """A zoo mechanism by CLI name (``dp-laplace``, ``nondp-gaussian-2``, ...); ``floor``: see
    :class:`NoisyCountMean`.

    Parameters
    ----------
    name : str
        A key of ``ZOO``.
    epsilon : float
        Design (or nominal) :math:`\\varepsilon`, > 0.
    delta : float
        Design :math:`\\delta` of the Gaussian variants, in (0, 1).
    floor : {"count", "scale"}
        How the noisy count is floored.

    Returns
    -------
    NoisyCountMean
        The mechanism.
    """
    if name not in ZOO:
        raise ValueError(f"mechanism must be one of {sorted(ZOO)}, got {name!r}")
    return ZOO[name](epsilon, delta, floor=floor)


class CallableMechanism:
    """Wrap ``fn(dataset, rng) -> output`` (scalar or array) as a dataset mechanism.

    Every output is validated: it must be numeric, finite and of the same shape on every call
    (the shape of the first output); violations raise ``ValueError`` naming ``mechanism``.
    """

    def __init__(self, fn: Callable[[Any, np.random.Generator], Any]):
        if not callable(fn):
            raise TypeError(f"mechanism must be callable as mechanism(dataset, rng), got "
                            f"{type(fn).__name__}")
        self.fn = fn
        self.shape: tuple[int, ...] | None = None
        self.name = getattr(fn, "__name__", type(fn).__name__)

    def _one(self, dataset, rng) -> np.ndarray:
        out = self.fn(dataset, rng)
        try:
            arr = np.asarray(out, dtype=float)
        except (TypeError, ValueError):
            raise ValueError(f"mechanism must return a number or a numeric array, got "
                             f"{type(out).__name__}") from None
        if self.shape is None:
            self.shape = arr.shape
        elif arr.shape != self.shape:
            raise ValueError(f"mechanism changed its output shape from {self.shape} to "
                             f"{arr.shape}; outputs must have one fixed shape")
        if not np.all(np.isfinite(arr)):
            raise ValueError("mechanism returned a NaN or infinite output; outputs must be finite")
        return arr.reshape(-1)

    def sample(self, dataset, size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` outputs, shape ``(size, d)``.

        Parameters
        ----------
        dataset : array_like
            The dataset passed to the callable.
        size : int
            Number of outputs, >= 0.
        rng : numpy.random.Generator
            Passed to every call.

        Returns
        -------
        ndarray, shape (size, d)
            The outputs, flattened to rows.
        """
        rows = [self._one(dataset, rng) for _ in range(int(size))]
        if not rows:
            return np.empty((0, 1 if self.shape is None else max(1, int(np.prod(self.shape)))))
        return np.vstack(rows)


def as_dataset_mechanism(obj):
    """A zoo mechanism or anything with ``sample(dataset, size, rng)`` is used as it is; any
    other callable ``mechanism(dataset, rng)`` is wrapped in :class:`CallableMechanism`.

    Parameters
    ----------
    obj : object or callable
        A mechanism with ``sample`` or a callable ``mechanism(dataset, rng)``.

    Returns
    -------
    object
        Something with ``sample(dataset, size, rng)``.
    """
    if hasattr(obj, "sample") and callable(obj.sample):
        return obj
    return CallableMechanism(obj)


class RandomizedResponse(MechanismBase):
    r"""The binary mechanism that is *exactly* :math:`(\varepsilon,\delta)`-DP and attains the
    success bound: it releases the membership bit with probability
    :math:`p^*=(e^\varepsilon+\delta)/(1+e^\varepsilon)` and its complement otherwise.

    :math:`P(1\mid\text{in}) = p^* = e^\varepsilon(1-p^*)+\delta`, so the DP inequality is an
    equality on the event ``{1}`` (the boundary case of the SeMI stream audit).

    Everything is computed from the flip probability in log space,

    .. math::

        q = 1-p^* = \frac{1-\delta}{1+e^{\varepsilon}},\qquad
        \log q = \log(1-\delta) - \log(1+e^{\varepsilon}),

    so every finite :math:`\varepsilon` (``1e6`` included) has a finite log-LR
    :math:`\log(1-q)-\log q` and the exact ground truth; :math:`e^\varepsilon` is never formed
    (it overflows at :math:`\varepsilon\approx 709.8`).

    Parameters
    ----------
    epsilon : float
        Finite, :math:`\ge 0`.
    delta : float
        In :math:`[0, 1)`.
    """

    T = 1
    tests = ("semi-star", "semi-max", "semi-unif")

    def __init__(self, epsilon: float, delta: float = 0.0):
        self.eps = check_real(epsilon, "epsilon")
        if self.eps < 0:
            raise ValueError(f"epsilon must be finite and >= 0, got {self.eps}")
        self.delta = check_delta(delta)
        # log q = log(1 - delta) - log(1 + e^eps), with log(1 + e^eps) = logaddexp(0, eps)
        self.log_q = float(np.log1p(-self.delta) - np.logaddexp(0.0, self.eps))
        self.q = float(np.exp(self.log_q))      # flip probability 1 - p* (may underflow to 0)
        self.p = 1.0 - self.q                   # P(release = membership bit)

    def release(self, member, tau, rng: np.random.Generator) -> np.ndarray:
        """The released bits of ``len(member)`` rounds (the membership bit kept w.p. :math:`p^*`).

        Parameters
        ----------
        member : array_like of bool, shape (R,)
            The membership bit of each round.
        tau : int or array_like of int
            Ignored (one release).
        rng : numpy.random.Generator
            Source of randomness.

        Returns
        -------
        ndarray, shape (R, 1, 1)
            The released bits (0.0 or 1.0).
        """
        member = np.asarray(member, dtype=bool).reshape(-1)
        keep = rng.random(member.size) < self.p
        return np.where(keep, member, ~member).astype(float)[:, None, None]

    def log_lr_steps(self, releases) -> np.ndarray:
        r"""Exact log-LR :math:`\pm\log(p^*/(1-p^*))` of each released bit.

        Parameters
        ----------
        releases : array_like, shape (R, 1, 1)
            Released bits.

        Returns
        -------
        ndarray, shape (R, 1)
            The log-LR of each release.
        """
        o = np.asarray(releases, dtype=float).reshape(-1)
        llr = float(np.log1p(-self.q) - self.log_q)  # log p* - log q, finite for finite eps
        return np.where(o > 0.5, llr, -llr)[:, None]

    def epsilon(self, delta: float, tau: int = 1) -> float:
        r"""Exact :math:`\varepsilon(\delta')=\log((p^*-\delta')/(1-p^*))` (0 when negative),
        as :math:`\log(1-\delta'-q)-\log q` (stable for every finite :math:`\varepsilon`).

        Parameters
        ----------
        delta : float
            The :math:`\delta'` of the profile, in [0, 1).
        tau : int
            Insertion step (1).

        Returns
        -------
        float
            The exact :math:`\varepsilon(\delta')`, >= 0.
        """
        d = check_delta(delta)
        num = (1.0 - d) - self.q
        if num <= 0:
            return 0.0
        return float(max(0.0, np.log(num) - self.log_q))

    def params(self) -> dict[str, Any]:
        return {"mechanism": "randomized-response", "T": 1, "epsilon": self.eps,
                "delta": self.delta, "p": float(self.p), "log_flip_probability": self.log_q}
