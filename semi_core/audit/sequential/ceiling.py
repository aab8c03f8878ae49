r"""The largest epsilon an MMD sequential audit can ever certify (its ceiling).

sequential_dp_auditing seed, §4.2 "Discussion" and App. G (Fig. 8). With a witness of RKHS
norm at most :math:`r` (:math:`r=1` in Alg. 1/2; the authors' notebook projects on the ball of
radius :math:`\tfrac12`), every payoff has :math:`\mathbb E[v_t\mid\mathcal F_{t-1}]\le
r\,\mathrm{MMD}_h(P,Q)` for the kernel of bandwidth :math:`h` the run uses, and the OGA witness
makes the running mean of :math:`v_t` converge to :math:`r\,\mathrm{MMD}_h` (regret
:math:`O(\sqrt t)`, law of large numbers). So the test of :math:`\varepsilon` gains wealth only
if :math:`r\,\mathrm{MMD}_h>\tau(\varepsilon,\delta)`; for every :math:`\varepsilon` with
:math:`\tau(\varepsilon,\delta)\ge r\,\mathrm{MMD}_h` the null is true for the test (its wealth
is a supermartingale) and it rejects with probability at most :math:`\alpha` **whatever the
number of observations**. The same holds for Alg. 2: its e-values have
:math:`\mathbb E[E_t\mid\mathcal F_{t-1}]\le(2+r\,\mathrm{MMD}_h)/(2+\tau)\le1` there.
The grid's lower bound therefore stays below

.. math::

    \varepsilon^*(M,\delta)=\tau^{-1}(M)
    =\log\frac{1-2\delta+M/\sqrt2}{1-M/\sqrt2}
    =\operatorname{log1p}\Big(\frac{2(M/\sqrt2-\delta)}{1-M/\sqrt2}\Big),
    \qquad M=r\,\mathrm{MMD}_h(P,Q),

(:math:`\tau(\varepsilon,\delta)=\sqrt2(1-2(1-\delta)/(1+e^\varepsilon))`, Thm 3.1; 0 when
:math:`M\le\sqrt2\delta`) except with probability :math:`\alpha`, and reaches every grid point
below it (Thm 3.3). For any kernel with :math:`0\le K\le1`, :math:`\mathrm{MMD}\le\sqrt2\,
\mathrm{TV}`, so :math:`\varepsilon^*(\sqrt2\,\mathrm{TV},\delta)` bounds every bandwidth.

Example (App. G): the white-box canary stream :math:`N(0,\sigma^2)` vs :math:`N(1,\sigma^2)`
calibrated to :math:`\varepsilon_{canary}=2.75`, :math:`\delta=10^{-5}` (:math:`\sigma=1.50`)
has :math:`\mathrm{MMD}_h=0.287` at the median-heuristic bandwidth :math:`h\approx1.5`:
:math:`\varepsilon^*=0.41`, and :math:`\mathrm{TV}=0.26` caps every kernel at 0.53.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from semi_core._rng import as_seed_sequence
from semi_core._validation import check_delta, check_int

from .tau import tau_for

__all__ = ["epsilon_ceiling", "mmd_linear_estimate", "mechanism_ceiling",
           "gaussian_shift_ceiling"]

_SQRT2 = math.sqrt(2.0)


def epsilon_ceiling(mmd: float, delta: float, *, radius: float = 1.0, bound: str = "new",
                    tau=None) -> float:
    r"""The ceiling :math:`\varepsilon^*` of an MMD audit whose witness statistic converges to
    ``radius * mmd`` (module doc): the largest :math:`\varepsilon` with
    :math:`\tau(\varepsilon,\delta)<M`.

    .. math:: \varepsilon^*=\operatorname{log1p}\big(2(m-\delta)/(1-m)\big),\quad
              m=M/\sqrt2\quad(\text{Thm 3.1's }\tau)

    Parameters
    ----------
    mmd : float
        Population :math:`\mathrm{MMD}_h(P,Q)`, in :math:`[0,\sqrt2]`.
    delta : float
        Tested :math:`\delta`, in [0, 1).
    radius : float
        Norm bound of the witness, in (0, 1] (1: Alg. 1/2; 0.5: the notebook's OGA).
    bound : {"new", "auditorium"}
        Threshold of the tests (:func:`.tau.tau_for`).
    tau : callable, optional
        Any other increasing threshold ``tau(epsilon, delta)`` (e.g. the notebook's); the
        ceiling is then found by bisection.

    Returns
    -------
    float
        :math:`\varepsilon^*\ge0` (``inf`` when :math:`M=\sqrt2` under Thm 3.1's threshold).
    """
    mmd = float(mmd)
    if not (np.isfinite(mmd) and 0.0 <= mmd <= _SQRT2 * (1 + 1e-12)):
        raise ValueError(f"mmd must be in [0, sqrt 2], got {mmd}")
    delta = check_delta(delta)
    if delta >= 1:
        raise ValueError(f"delta must be < 1, got {delta}")
    radius = float(radius)
    if not 0.0 < radius <= 1.0:
        raise ValueError(f"radius must be in (0, 1], got {radius}")
    M = radius * min(mmd, _SQRT2)
    if tau is None and bound == "new":
        m = M / _SQRT2
        if m <= delta:
            return 0.0
        if m >= 1.0:
            return math.inf
        return math.log1p(2.0 * (m - delta) / (1.0 - m))
    f = tau if tau is not None else (lambda e, d: tau_for(bound, e, d))
    if f(0.0, delta) >= M:
        return 0.0
    lo, hi = 0.0, 1.0
    while f(hi, delta) < M:
        hi *= 2.0
        if hi > 700:
            return math.inf
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if f(mid, delta) < M else (lo, mid)
        if hi - lo < 1e-13 * max(1.0, hi):
            break
    return lo


def mmd_linear_estimate(source, bandwidth: float, n_pairs: int, seed) -> tuple[float, float]:
    r"""Unbiased linear-time estimate of :math:`\mathrm{MMD}_h^2` from ``n_pairs`` fresh pairs
    (Gretton et al. 2012, §6): with pairs :math:`(x_{2i-1},y_{2i-1}),(x_{2i},y_{2i})`,

    .. math:: g_i=k(x_{2i-1},x_{2i})+k(y_{2i-1},y_{2i})-k(x_{2i-1},y_{2i})-k(x_{2i},y_{2i-1}),

    i.i.d. with mean :math:`\mathrm{MMD}^2`; the estimate is their mean and its SE
    :math:`\mathrm{sd}(g)/\sqrt{n/2}`.

    Parameters
    ----------
    source : PairSource
        Draws ``(X, Y)``.
    bandwidth : float
        RBF bandwidth, > 0.
    n_pairs : int
        Pairs drawn (>= 4; even).
    seed : int or numpy.random.SeedSequence
        Seed of the draws.

    Returns
    -------
    tuple of float
        The estimate of :math:`\mathrm{MMD}^2` and its standard error.
    """
    n = check_int(n_pairs, "n_pairs", minimum=4) // 2 * 2
    h = float(bandwidth)
    if not (np.isfinite(h) and h > 0):
        raise ValueError(f"bandwidth must be finite and > 0, got {bandwidth}")
    rng = np.random.Generator(np.random.PCG64(as_seed_sequence(seed)))
    X, Y = source(n, rng)

    def k(a, b):
        return np.exp(-np.sum((a - b) ** 2, axis=1) / (2.0 * h * h))

    x1, x2, y1, y2 = X[0::2], X[1::2], Y[0::2], Y[1::2]
    g = k(x1, x2) + k(y1, y2) - k(x1, y2) - k(x2, y1)
    return float(g.mean()), float(g.std(ddof=1) / math.sqrt(g.size))


def mechanism_ceiling(source, bandwidth: float, delta: float, *, n_pairs: int = 20_000,
                      seed=0, radius: float = 1.0, bound: str = "new", tau=None) -> dict:
    r"""The ceiling of an audit of ``source`` at ``bandwidth``, from a Monte Carlo estimate of
    :math:`\mathrm{MMD}_h` (:func:`mmd_linear_estimate`); the range maps
    :math:`\widehat{\mathrm{MMD}^2}\pm2\,\mathrm{SE}` through :func:`epsilon_ceiling`.

    Parameters
    ----------
    source : PairSource
        Draws ``(X, Y)`` (fresh draws: not the audit's own pairs).
    bandwidth : float
        The audit's RBF bandwidth.
    delta : float
        Tested :math:`\delta`.
    n_pairs : int
        Pairs of the estimate.
    seed : int or numpy.random.SeedSequence
        Seed of the draws.
    radius : float
        Witness norm bound (1, or 0.5 for the notebook's OGA).
    bound : str
        Threshold (:func:`epsilon_ceiling`).
    tau : callable, optional
        Another threshold (:func:`epsilon_ceiling`).

    Returns
    -------
    dict
        ``mmd``, ``mmd2``, ``mmd2_se``, ``epsilon_ceiling`` and its ``epsilon_ceiling_range``
        (2 SE), the settings and what the number means.
    """
    m2, se = mmd_linear_estimate(source, bandwidth, n_pairs, seed)

    def ceil(v):
        return epsilon_ceiling(math.sqrt(min(max(v, 0.0), 2.0)), delta, radius=radius,
                               bound=bound, tau=tau)

    return {"epsilon_ceiling": ceil(m2), "epsilon_ceiling_range": [ceil(m2 - 2 * se),
                                                                    ceil(m2 + 2 * se)],
            "mmd": math.sqrt(max(m2, 0.0)), "mmd2": m2, "mmd2_se": se,
            "bandwidth": float(bandwidth), "n_pairs": int(n_pairs), "radius": radius,
            "meaning": "largest epsilon this MMD test can reject at this bandwidth, whatever the "
                       "number of observations: above it the null holds for the test (its "
                       "wealth is a supermartingale), so the lower bound exceeds it with "
                       "probability <= alpha; range: MMD^2 estimate +- 2 SE"}


def gaussian_shift_ceiling(mu: float, sigma: float, delta: float, *,
                           bandwidth: float | None = None, radius: float = 1.0) -> dict:
    r"""Exact ceilings for :math:`N(0,\sigma^2)` vs :math:`N(\mu,\sigma^2)` (the white-box
    canary stream): at ``bandwidth`` (closed-form :math:`\mathrm{MMD}_h`,
    :func:`.rbf.mmd_gaussian_shift`), at the best bandwidth (maximised over :math:`h`) and for
    every kernel in [0, 1] (:math:`\varepsilon^*(\sqrt2\,\mathrm{TV})`,
    :math:`\mathrm{TV}=2\Phi(|\mu|/(2\sigma))-1`).

    Parameters
    ----------
    mu : float
        Shift.
    sigma : float
        Noise standard deviation, > 0.
    delta : float
        Tested :math:`\delta`.
    bandwidth : float, optional
        The audit's bandwidth.
    radius : float
        Witness norm bound.

    Returns
    -------
    dict
        ``at_bandwidth`` (when given), ``best_bandwidth``, ``best_kernel_ceiling``,
        ``any_kernel_ceiling`` and ``tv``.
    """
    from scipy import optimize

    from .rbf import mmd_gaussian_shift

    if not (np.isfinite(sigma) and sigma > 0):
        raise ValueError(f"sigma must be finite and > 0, got {sigma}")
    res = optimize.minimize_scalar(lambda lh: -mmd_gaussian_shift([mu], sigma, math.exp(lh)),
                                   bounds=(math.log(sigma) - 8, math.log(sigma) + 8),
                                   method="bounded", options={"xatol": 1e-10})
    h_best = math.exp(res.x)
    tv = float(2.0 * special.ndtr(abs(mu) / (2.0 * sigma)) - 1.0)
    out = {"best_bandwidth": h_best,
           "best_kernel_ceiling": epsilon_ceiling(mmd_gaussian_shift([mu], sigma, h_best),
                                                  delta, radius=radius),
           "any_kernel_ceiling": epsilon_ceiling(_SQRT2 * tv, delta, radius=radius), "tv": tv}
    if bandwidth is not None:
        mmd = mmd_gaussian_shift([mu], sigma, float(bandwidth))
        out["at_bandwidth"] = {"bandwidth": float(bandwidth), "mmd": mmd,
                               "epsilon_ceiling": epsilon_ceiling(mmd, delta, radius=radius)}
    return out
