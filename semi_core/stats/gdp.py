r"""Ground-truth privacy curves: :math:`\mu`-GDP and the Gaussian mechanism.

The privacy profile of :math:`\mu`-GDP (equivalently, of the Gaussian mechanism with
L2 sensitivity :math:`\Delta` and noise scale :math:`\sigma`, :math:`\mu=\Delta/\sigma`) is the
hockey-stick divergence between :math:`\mathcal N(\mu,1)` and :math:`\mathcal N(0,1)`:

.. math::

    \delta(\varepsilon) = \Phi\!\left(-\frac{\varepsilon}{\mu}+\frac{\mu}{2}\right)
        - e^{\varepsilon}\,\Phi\!\left(-\frac{\varepsilon}{\mu}-\frac{\mu}{2}\right).

The one GDP accountant of the toolkit (mechanisms, audits and the DP-SGD layer all use it).
It is derived (tests/audit/test_ground_truth.py, SymPy) from the likelihood-ratio region
:math:`\{x:\ \mu x-\mu^2/2>\varepsilon\}=\{x>\varepsilon/\mu+\mu/2\}`. Both terms are evaluated
in log space (``scipy.special.log_ndtr``) so that :math:`\delta` down to ``1e-300`` is resolved,
and :math:`\varepsilon(\delta)` is the root of the decreasing map
:math:`\varepsilon\mapsto\log\delta(\varepsilon)-\log\delta`. Cross-checked against
dp-accounting's PLD accountant in the tests.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
from scipy.special import erfcx, log_ndtr, ndtr

from semi_core._validation import check_delta, check_positive

__all__ = [
    "gdp_delta", "gdp_log_delta", "gdp_epsilon", "gaussian_mechanism_epsilon", "decreasing_root",
]


def _check_mu(mu) -> float:
    if isinstance(mu, bool) or not isinstance(mu, numbers.Real):
        raise TypeError(f"mu must be a real number >= 0, got {type(mu).__name__}")
    mu = float(mu)
    if not (math.isfinite(mu) and mu >= 0):
        raise ValueError(f"mu must be finite and >= 0, got {mu}")
    return mu


def gdp_log_delta(eps, mu: float) -> np.ndarray:
    r"""Natural log of the :math:`\mu`-GDP privacy profile :math:`\delta(\varepsilon)`.

    Parameters
    ----------
    eps : array_like
        Values of :math:`\varepsilon \ge 0`.
    mu : float
        GDP parameter, ``mu > 0``.

    Returns
    -------
    ndarray
        :math:`\log\delta(\varepsilon)`, computed as

        .. math::

            \log\delta = a + \log\!\left(-\mathrm{expm1}(b-a)\right),\quad
            a=\log\Phi(-\varepsilon/\mu+\mu/2),\ b=\varepsilon+\log\Phi(-\varepsilon/\mu-\mu/2),

        where :math:`b<a` for every :math:`\varepsilon\ge0` and :math:`\mu>0`.
    """
    mu = check_positive(mu, "mu")
    eps = np.asarray(eps, dtype=float)
    if np.isnan(eps).any() or (eps < 0).any():
        raise ValueError("eps must be >= 0 and not NaN")
    shape = eps.shape
    eps = np.atleast_1d(eps)
    a = log_ndtr(-eps / mu + mu / 2)
    # b = eps + log Phi(-x2) with x2 = eps/mu + mu/2 > 0. Written directly, eps and
    # log Phi(-x2) ~ -x2^2/2 cancel for large mu (mu = 4e8: both ~1e17, b - a rounds above
    # 0); with e^eps phi(x2) = phi(x1) and Phi(-x) = exp(-x^2/2) erfcx(x/sqrt2)/2 it is
    # b = -x1^2/2 - log 2 + log erfcx(x2/sqrt2), free of cancellation (x1 = x2 - mu).
    x2 = eps / mu + mu / 2
    b = -0.5 * (x2 - mu) ** 2 - np.log(2.0) + np.log(erfcx(x2 / np.sqrt(2)))
    with np.errstate(divide="ignore", invalid="ignore"):
        out = a + np.log(-np.expm1(b - a))
        # Tail (eps/mu > mu/2): a and b are huge and nearly equal, so b - a cancels. Use
        # e^eps phi(x2) = phi(x1) and Phi(-x) = phi(x) erfcx(x/sqrt2) sqrt(pi/2):
        # delta = exp(-x1^2/2)/2 * (erfcx(x1/sqrt2) - erfcx(x2/sqrt2)).
        x1 = eps / mu - mu / 2  # x2 = x1 + mu
        tail = x1 > 0
        diff = _erfcx_drop(x1[tail] / np.sqrt(2), mu / np.sqrt(2))
        out[tail] = -0.5 * x1[tail] ** 2 - np.log(2.0) + np.log(diff)
    if np.isnan(out).any():  # pragma: no cover - every branch above is finite by construction
        raise ArithmeticError(f"log delta(eps) could not be computed for mu={mu}")
    return out.reshape(shape)


def _neg_erfcx_slope(m: np.ndarray) -> np.ndarray:
    r""":math:`-\mathrm{erfcx}'(m)=2/\sqrt\pi-2m\,\mathrm{erfcx}(m)>0` for :math:`m>0`; for large
    :math:`m` (where the difference cancels) its asymptotic series
    :math:`\pi^{-1/2}(m^{-2}-\tfrac32m^{-4}+\tfrac{15}4m^{-6}-\tfrac{105}8m^{-8})`."""
    m = np.asarray(m, dtype=float)
    big = m > 30.0
    out = np.empty_like(m)
    mi = m[~big]
    out[~big] = 2.0 / np.sqrt(np.pi) - 2.0 * mi * erfcx(mi)
    r = 1.0 / m[big] ** 2
    out[big] = (r - 1.5 * r**2 + 3.75 * r**3 - 13.125 * r**4) / np.sqrt(np.pi)
    return out


def _erfcx_drop(a: np.ndarray, h: float) -> np.ndarray:
    r""":math:`\mathrm{erfcx}(a)-\mathrm{erfcx}(a+h)` without cancellation.

    Direct difference when :math:`h` is not tiny against :math:`a` (relative rounding error
    about :math:`10^{-16}a/h`); otherwise the midpoint rule :math:`h\,(-\mathrm{erfcx}')(a+h/2)`,
    whose relative error is :math:`O((h/a)^2)` (below :math:`10^{-12}` where it is used).
    """
    a = np.asarray(a, dtype=float)
    small = h < 1e-6 * np.maximum(a, 1.0)
    out = np.empty_like(a)
    out[~small] = erfcx(a[~small]) - erfcx(a[~small] + h)
    out[small] = h * _neg_erfcx_slope(a[small] + 0.5 * h)
    return out


def gdp_delta(eps, mu: float) -> np.ndarray:
    r"""Privacy profile of :math:`\mu`-GDP (SeMI seed §2, Eq. 1; Dong-Roth-Su GDP).

    .. math::

        \delta(\varepsilon) = \Phi(-\varepsilon/\mu+\mu/2) - e^{\varepsilon}\Phi(-\varepsilon/\mu-\mu/2)

    Parameters
    ----------
    eps : array_like
        :math:`\varepsilon \ge 0`.
    mu : float
        ``mu >= 0``; ``mu = 0`` gives :math:`\delta\equiv 0`.

    Returns
    -------
    ndarray
        :math:`\delta(\varepsilon)` (evaluated as ``exp(gdp_log_delta)``).
    """
    mu = _check_mu(mu)
    if mu == 0.0:
        eps = np.asarray(eps, dtype=float)
        if np.isnan(eps).any() or (eps < 0).any():
            raise ValueError("eps must be >= 0 and not NaN")
        return np.zeros_like(eps)
    return np.exp(gdp_log_delta(eps, mu))


def gdp_epsilon(mu: float, delta: float) -> float:
    r"""Exact :math:`\varepsilon(\delta)` of a :math:`\mu`-GDP mechanism.

    Solves :math:`\delta(\varepsilon)=\delta` (see :func:`gdp_delta`) for
    :math:`\varepsilon\ge0` on :math:`\log\delta(\varepsilon)-\log\delta`, which is strictly
    decreasing, by :func:`decreasing_root` (absolute error :math:`\le 10^{-14}+
    9\cdot10^{-16}\varepsilon`, returned from below; no ``scipy.optimize`` import).

    .. math::

        \varepsilon(\delta) = \min\{\varepsilon\ge0:\ \Phi(-\varepsilon/\mu+\mu/2)
            - e^{\varepsilon}\Phi(-\varepsilon/\mu-\mu/2)\le\delta\}

    Parameters
    ----------
    mu : float
        ``mu >= 0``.
    delta : float
        In ``[0, 1)``. ``delta = 0`` gives ``inf`` for ``mu > 0``.

    Returns
    -------
    float
        ``0.0`` when :math:`\delta\ge\delta(0)=2\Phi(\mu/2)-1` (or ``mu == 0``).

    Examples
    --------
    >>> eps = gdp_epsilon(1.0, 1e-5)
    >>> print(f"{eps:.4f}")
    4.3772
    >>> print(f"{float(gdp_delta(eps, 1.0)):.3g}")     # the inverse map
    1e-05
    >>> gdp_epsilon(0.0, 1e-5)
    0.0
    """
    mu = _check_mu(mu)
    delta = check_delta(delta)
    if mu == 0.0:
        return 0.0
    if delta == 0.0:
        return math.inf
    if delta >= 2.0 * ndtr(mu / 2) - 1.0:
        return 0.0
    log_d = math.log(delta)

    def f(e):
        return gdp_log_delta(e, mu) - log_d

    hi = max(1.0, mu * mu)
    while float(f(hi)) > 0:
        hi *= 2.0
        if hi > 1e8:  # only reachable for delta below the float range of log_ndtr
            raise ValueError(f"delta={delta} too small to resolve for mu={mu}")
    return decreasing_root(f, 0.0, hi)


#: Points evaluated per step of :func:`decreasing_root`.
_SECTIONS = 64


def decreasing_root(f, lo: float, hi: float, *, xtol: float = 1e-14,
                    rtol: float = 4 * np.finfo(float).eps, max_steps: int = 200) -> float:
    r"""Root of a decreasing function by vectorised multisection (no SciPy optimiser).

    Keeps a bracket :math:`f(\text{lo})>0\ge f(\text{hi})` and replaces it, at every step, by
    the one of ``_SECTIONS`` equal sub-intervals where the sign changes (one vectorised call of
    ``f`` per step), until :math:`\text{hi}-\text{lo}\le \text{xtol}+\text{rtol}\,
    |\text{hi}|`. The root :math:`r=\inf\{x: f(x)\le0\}` then lies in
    :math:`(\text{lo},\text{hi}]`: the error of the returned ``lo`` is at most the tolerance
    and its sign is known (:math:`\text{lo}<r`; for :math:`\varepsilon(\delta)` an
    under-statement, never an over-claim). The same stopping rule as
    ``scipy.optimize.brentq(f, lo, hi, xtol, rtol)``, whose answer may lie on either side.

    Parameters
    ----------
    f : callable
        Vectorised, non-increasing on ``[lo, hi]``; ``f(lo) > 0 >= f(hi)`` is required.
    lo, hi : float
        The bracket, ``lo < hi``.
    xtol, rtol : float
        Absolute and relative tolerance.
    max_steps : int
        Steps before giving up (each shrinks the bracket ``_SECTIONS`` times; 200 steps reach
        adjacent floats from any bracket of finite floats).

    Returns
    -------
    float
        ``lo`` of the final bracket.
    """
    if not lo < hi:
        raise ValueError(f"decreasing_root needs lo < hi, got [{lo}, {hi}]")
    if not float(f(np.float64(lo))) > 0 >= float(f(np.float64(hi))):
        raise ValueError(f"decreasing_root: f does not change sign from > 0 to <= 0 on "
                         f"[{lo}, {hi}]")
    frac = np.arange(1, _SECTIONS) / _SECTIONS
    for _ in range(max_steps):
        if hi - lo <= xtol + rtol * abs(hi):
            return float(lo)
        x = lo + (hi - lo) * frac
        v = np.asarray(f(x), dtype=float)
        if np.isnan(v).any():
            raise ArithmeticError(f"decreasing_root: f is NaN in [{lo}, {hi}]")
        k = int(np.count_nonzero(v > 0))  # f decreasing: the positive values come first
        new_lo = float(x[k - 1]) if k > 0 else lo
        new_hi = float(x[k]) if k < x.size else hi
        if new_lo == lo and new_hi == hi:  # adjacent floats: nothing left to split
            return float(lo)
        lo, hi = new_lo, new_hi
    raise ArithmeticError(f"decreasing_root did not reach the tolerance in {max_steps} steps")


def gaussian_mechanism_epsilon(sigma: float, sensitivity: float, delta: float) -> float:
    r"""Exact :math:`\varepsilon(\delta)` of the Gaussian mechanism.

    The mechanism :math:`f(D)+\mathcal N(0,\sigma^2 I)` with L2 sensitivity :math:`\Delta`
    is exactly :math:`\mu`-GDP with :math:`\mu=\Delta/\sigma`, so this is
    ``gdp_epsilon(sensitivity / sigma, delta)``.

    Parameters
    ----------
    sigma : float
        Noise standard deviation, ``> 0``.
    sensitivity : float
        L2 sensitivity, ``> 0``.
    delta : float
        In ``[0, 1)``.

    Returns
    -------
    float
    """
    sigma = check_positive(sigma, "sigma")
    sensitivity = check_positive(sensitivity, "sensitivity")
    return gdp_epsilon(sensitivity / sigma, delta)
