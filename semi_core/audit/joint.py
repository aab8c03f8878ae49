r"""Exact joint tests of both error rates at pre-registered rank thresholds (method ``joint``).

Every other distribution-free method here bounds the two error rates *separately* (an upper
bound on :math:`\alpha` at :math:`\xi/2`, one on :math:`\beta` at :math:`\xi/2`) and plugs the
corner of that rectangle into Lemma 2.1 of the SeMI seed (§2; :math:`\varepsilon\ge
\log\frac{1-\delta-\beta}{\alpha}`). The corner is where both bounds fail *together*, an event
far rarer than either: the margins add (:math:`z_{\xi/2}(\sigma_\alpha+\sigma_\beta)` on the log
scale) where one test of the ratio would pay :math:`z_\xi\sqrt{\sigma_\alpha^2+\sigma_\beta^2}`.
This module tests the privacy hypothesis itself, with one exact test per threshold.

The test at one rank threshold
------------------------------
Non-member scores :math:`X_1..X_{N_0}`, member scores :math:`Y_1..Y_{N_1}`, independent, each
i.i.d.; :math:`\alpha(\gamma)=P(X>\gamma)`, :math:`p(\gamma)=P(Y>\gamma)=1-\beta(\gamma)`. The
threshold is the order statistic :math:`\gamma_g=X_{(N_0-g)}` (``g`` non-members above it) and
:math:`A_g=\#\{Y_i>\gamma_g\}`. With the quantile coupling of :mod:`semi_core.audit.bands`,
:math:`\alpha(\gamma_g)\le U_g:=V_{(g+1)}\sim\mathrm{Beta}(g+1,N_0-g)` pathwise (ties included),
and given the non-member scores :math:`A_g\sim\mathrm{Bin}(N_1,p(\gamma_g))`.

If the mechanism is :math:`(\varepsilon,\delta)`-DP, every test obeys
:math:`p\le e^\varepsilon\alpha+\delta` (direction ``tpr/fpr``) and
:math:`1-\alpha\le e^\varepsilon\beta+\delta` (``tnr/fnr``). Under the first,
:math:`p(\gamma_g)\le\min(1,e^\varepsilon U_g+\delta)` and the binomial tail grows with
:math:`p`, so for every count :math:`a`

.. math::

    P(A_g\ge a)\;\le\;\pi_g(\varepsilon,a)
    =\int_0^1 \bar F_{\mathrm{Bin}}\big(a;\,N_1,\,\min(1,e^\varepsilon u+\delta)\big)\,
    \mathrm{d}\,\mathrm{Beta}(u;\,g+1,\,N_0-g),

a mixed (beta-binomial-like) tail that depends on nothing unknown. :math:`\pi_g(\varepsilon,
A_g)` is therefore a valid p-value of :math:`H_\varepsilon` (for a discrete statistic,
:math:`P(\pi(A)\le\ell)\le\ell` whenever :math:`\pi` dominates the true survival function), and
it increases with :math:`\varepsilon`. The second direction is the mirror image: under it
:math:`\beta(\gamma_g)\ge e^{-\varepsilon}(1-U_g-\delta)`, the member count at or below
:math:`\gamma_g` is small under the alternative, and

.. math::

    P(N_1-A_g\le b)\le\int_0^1 F_{\mathrm{Bin}}\big(b;\,N_1,\,
    \max(0,e^{-\varepsilon}(1-u-\delta))\big)\,\mathrm{d}\,\mathrm{Beta}(u;\,g+1,\,N_0-g).

Computing the integral as a guaranteed upper bound
--------------------------------------------------
Both integrands increase with :math:`u`. The Beta law is cut at its quantiles
:math:`0<p_1<\dots<p_L<1` (``JOINT_SLICES - 1`` equal steps, then a geometric refinement
towards 1 down to :math:`1-10^{-12}`) and every slice is charged the integrand at its *upper*
end (the quantile, rounded up); the last slice is charged 1. The sum is an upper bound on the
integral, exact to within the slices' spread, so the p-value stays valid and only slightly
conservative.

The bound
---------
The thresholds are the pre-registered rank family :math:`\mathcal G_{\mathrm{joint}}(N_0)`
(``bands.count_grid(N0, dense=JOINT_DENSE, ratio=JOINT_RATIO)``: every count :math:`\le2`, then
growing by 50 %, mirrored): direction ``tpr/fpr`` at the counts :math:`g\le(N_0-1)/2` (small
false-positive rates), ``tnr/fnr`` at the mirrored counts (``sides="one"``: the first half
only). One test per grid count, so :math:`K` tests in all, each at level :math:`\xi/K`
(Bonferroni, valid under any dependence). For each test,

.. math::

    \underline\varepsilon_g=\sup\{\varepsilon\ge0:\ \pi_g(\varepsilon,A_g)\le\xi/K\}
    \quad(\text{by bisection; the value returned always passes the test}),

and :math:`\underline\varepsilon=\max_g\underline\varepsilon_g\vee0`. If
:math:`\underline\varepsilon>\varepsilon` for the true :math:`\varepsilon`, the test of
:math:`H_\varepsilon` rejected at some :math:`g` (monotonicity), which happens with probability
:math:`\le K\cdot\xi/K=\xi`. To save time the exact computation runs on the
``JOINT_SCREEN`` most promising counts per direction (ranked by a coarse version of the same
computation); a maximum over fewer valid tests is still valid, and the Bonferroni count stays
:math:`K`.

No separate confidence bounds on :math:`\alpha` and :math:`\beta` exist here (the test is
joint); results report the empirical rates at the threshold that attains the bound.
"""

from __future__ import annotations

import numpy as np
from scipy.special import bdtr, bdtrc, betaincinv

from semi_core.audit.bands import count_grid, rank_threshold_counts

__all__ = [
    "JOINT_DENSE",
    "JOINT_RATIO",
    "JOINT_SLICES",
    "JOINT_SCREEN",
    "joint_grid",
    "beta_slices",
    "mixture_p_value",
    "joint_epsilon",
    "batch_joint",
]

#: Every count up to this is a threshold of the rank family.
JOINT_DENSE = 2
#: Growth factor of the rank family beyond ``JOINT_DENSE``.
JOINT_RATIO = 1.5
#: Equal-probability slices of the Beta law (before the refinement towards 1).
JOINT_SLICES = 128
#: Counts per direction computed exactly (the most promising after screening).
JOINT_SCREEN = 3
_SCREEN_SLICES = 16
_SCREEN_ITERS = 12
_ITERS = 44
_EPS_MAX = 40.0
#: Relative round-up of the Beta quantiles (betaincinv is accurate to ~1e-15).
_ROUND_UP = 1e-10


def joint_grid(n0: int, sides: str = "two") -> tuple[np.ndarray, np.ndarray]:
    r"""The pre-registered counts and their directions (0: ``tpr/fpr``, 1: ``tnr/fnr``).

    Counts :math:`g\le(N_0-1)/2` are tested in the ``tpr/fpr`` direction, the mirrored ones in
    ``tnr/fnr``; ``sides="one"`` keeps the first half only.

    Parameters
    ----------
    n0 : int
        Number of non-member scores.
    sides : {"two", "one"}
        Both directions or ``tpr/fpr`` only.

    Returns
    -------
    grid : ndarray of int64, shape (K,)
        Rank counts.
    direction : ndarray of int64, shape (K,)
        Their directions.
    """
    grid = count_grid(n0, dense=JOINT_DENSE, ratio=JOINT_RATIO)
    direction = (grid > (n0 - 1) // 2).astype(np.int64)
    if sides == "one":
        keep = direction == 0
        return grid[keep], direction[keep]
    return grid, direction


def beta_slices(n_slices: int = JOINT_SLICES, tail: int = 12) -> tuple[np.ndarray, np.ndarray]:
    """Upper quantile levels of the slices (``L``) and the slices' probabilities (``L + 1``;
    the last slice, ``[p_L, 1]``, is charged the integrand's maximum, 1).

    Parameters
    ----------
    n_slices : int
        Number of equal slices before the tail refinement.
    tail : int
        Decades of tail refinement.

    Returns
    -------
    levels : ndarray, shape (L,)
        Upper quantile levels.
    weights : ndarray, shape (L + 1,)
        Probabilities of the slices.
    """
    p = np.concatenate([np.arange(1, n_slices) / n_slices,
                        1.0 - np.logspace(-np.log10(n_slices) - 0.25, -tail, 4 * tail)])
    p = np.unique(p)
    w = np.diff(np.concatenate([[0.0], p, [1.0]]))
    return p, w


def _slice_ends(g: np.ndarray, n0: int, p: np.ndarray) -> np.ndarray:
    """Beta(g+1, N0-g) quantiles at ``p``, rounded up: shape ``g.shape + p.shape``."""
    g = np.asarray(g, dtype=float)[..., None]
    u = betaincinv(g + 1.0, n0 - g, p)
    return np.minimum(1.0, u * (1.0 + _ROUND_UP))


def _p_value(direction: int, eps, ends, w, count, n1: int, delta: float) -> np.ndarray:
    """Upper-Riemann mixture p-value; ``ends`` (..., L), ``count`` and ``eps`` (...)."""
    e = np.exp(np.asarray(eps, dtype=float))[..., None]
    c = np.asarray(count, dtype=float)[..., None]
    if direction == 0:  # P(A >= count), A ~ Bin(N1, min(1, e^eps u + delta))
        pr = np.minimum(1.0, e * ends + delta)
        tail = np.where(c > 0, bdtrc(np.maximum(c - 1.0, 0.0), n1, pr), 1.0)
    else:  # P(B <= count), B ~ Bin(N1, max(0, e^-eps (1 - u - delta)))
        pr = np.maximum(0.0, (1.0 - ends - delta) / e)
        tail = bdtr(c, n1, pr)
    return (tail * w[:-1]).sum(axis=-1) + w[-1]


def mixture_p_value(direction: str, epsilon, count, g, *, n_member: int, n_nonmember: int,
                    delta: float, n_slices: int = JOINT_SLICES) -> np.ndarray:
    r"""The p-value :math:`\pi_g(\varepsilon,\cdot)` of :math:`H_\varepsilon` at rank count ``g``.

    ``direction="tpr/fpr"``: ``count`` is :math:`A_g`, the members above the threshold;
    ``"tnr/fnr"``: the members at or below it (module docstring). Broadcasts over
    ``epsilon``, ``count`` and ``g``.

    .. math::

        \pi_g(\varepsilon,a)=\int_0^1\bar F_{\mathrm{Bin}}(a;N_1,\min(1,e^\varepsilon u+\delta))
        \,\mathrm{dBeta}(u;g+1,N_0-g)

    computed as an upper Riemann sum over quantile slices (never below the integral).

    Parameters
    ----------
    direction : {"tpr/fpr", "tnr/fnr"}
        Direction of the test.
    epsilon : float or array_like
        Tested :math:`\varepsilon`.
    count : int or array_like
        Member count of the test.
    g : int or array_like
        Rank count.
    n_member : int
        Number of members N1.
    n_nonmember : int
        Number of non-members N0.
    delta : float
        The :math:`\delta` of the hypothesis.
    n_slices : int
        Quantile slices of the Riemann sum.

    Returns
    -------
    ndarray
        Values in ``(0, 1]``.
    """
    if direction not in ("tpr/fpr", "tnr/fnr"):
        raise ValueError(f"direction must be 'tpr/fpr' or 'tnr/fnr', got {direction!r}")
    p, w = beta_slices(n_slices)
    eps, count, g = np.broadcast_arrays(np.asarray(epsilon, dtype=float),
                                        np.asarray(count, dtype=float),
                                        np.asarray(g, dtype=float))
    ends = _slice_ends(g, n_nonmember, p)
    return _p_value(0 if direction == "tpr/fpr" else 1, eps, ends, w, count, n_member, delta)


def _solve(direction, ends, w, count, n1, delta, level, iters) -> np.ndarray:
    """Largest eps in [0, _EPS_MAX] whose test rejects (bisection); -inf where none does."""
    lo = np.zeros(count.shape)
    hi = np.full(count.shape, _EPS_MAX)
    ok = _p_value(direction, lo, ends, w, count, n1, delta) <= level
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        rej = _p_value(direction, mid, ends, w, count, n1, delta) <= level
        lo = np.where(rej, mid, lo)
        hi = np.where(rej, hi, mid)
    return np.where(ok, lo, -np.inf)


def joint_epsilon(counts: np.ndarray, grid: np.ndarray, direction: np.ndarray, *, n_member: int,
                  n_nonmember: int, delta: float, level: float,
                  screen: int = JOINT_SCREEN) -> tuple[np.ndarray, np.ndarray]:
    r"""Per-row :math:`\max_g\underline\varepsilon_g` and the column attaining it.

    Parameters
    ----------
    counts : ndarray, shape (B, K)
        Per grid count: :math:`A_g` (direction 0) or :math:`N_1-A_g` (direction 1).
    grid, direction : ndarray, shape (K,)
        The rank counts and their directions (:func:`joint_grid`).
    n_member : int
        Number of members N1.
    n_nonmember : int
        Number of non-members N0.
    delta : float
        The :math:`\delta` of the hypotheses.
    level : float
        Per-test level :math:`\xi/K`.
    screen : int
        Columns screened before the exact search.

    Returns
    -------
    (eps, column) : ndarray (B,) of float (``-inf``: no test rejects even at 0), ndarray of int
    """
    B = counts.shape[0]
    best = np.full(B, -np.inf)
    col = np.zeros(B, dtype=np.int64)
    ps, ws = beta_slices(_SCREEN_SLICES, 6)
    p, w = beta_slices(JOINT_SLICES)
    for d in (0, 1):
        cols = np.nonzero(direction == d)[0]
        if cols.size == 0:
            continue
        cnt = counts[:, cols].astype(float)
        gg = grid[cols]
        k = min(screen, cols.size)
        if k < cols.size:  # rank the counts by a coarse run of the same computation
            rough = _solve(d, _slice_ends(gg, n_nonmember, ps)[None], ws, cnt, n_member, delta,
                           level, _SCREEN_ITERS)
            pick = np.argsort(-rough, axis=1, kind="stable")[:, :k]
        else:
            pick = np.broadcast_to(np.arange(k), (B, k))
        ends = _slice_ends(gg, n_nonmember, p)[pick]  # (B, k, L)
        e = _solve(d, ends, w, np.take_along_axis(cnt, pick, axis=1), n_member, delta, level,
                   _ITERS)
        j = np.argmax(e, axis=1)
        ej = e[np.arange(B), j]
        better = ej > best
        best = np.where(better, ej, best)
        col = np.where(better, cols[pick[np.arange(B), j]], col)
    return best, col


def batch_joint(member: np.ndarray, nonmember: np.ndarray, delta: float, xi: float,
                sides: str, *, chunk: int = 512) -> dict:
    """The ``joint`` audit of ``B`` score sets (rows): the dict the audit front ends read.

    Parameters
    ----------
    member : ndarray, shape (B, N1)
        Member scores, one audit per row.
    nonmember : ndarray, shape (B, N0)
        Non-member scores.
    delta : float
        The :math:`\\delta` of the bound.
    xi : float
        Failure probability.
    sides : {"two", "one"}
        Directions tested.
    chunk : int
        Rows per block (memory bound).

    Returns
    -------
    dict
        Per-row bounds, thresholds and counts.
    """
    n1, n0 = member.shape[1], nonmember.shape[1]
    grid, direction = joint_grid(n0, sides)
    level = xi / grid.size
    B = member.shape[0]
    out = {k: np.empty(B) for k in ("crit", "threshold", "alpha_hat", "beta_hat")}
    d_out = np.empty(B, dtype=np.int64)
    for s in range(0, B, chunk):
        sl = slice(s, min(B, s + chunk))
        rows = np.arange(sl.stop - sl.start)
        # rank_threshold_counts gives the thresholds ascending, i.e. the grid's counts reversed
        gam, le0, le1 = (a[:, ::-1] for a in rank_threshold_counts(member[sl], nonmember[sl],
                                                                   grid))
        counts = np.where(direction[None, :] == 0, n1 - le1, le1)
        out["crit"][sl], col = joint_epsilon(counts, grid, direction, n_member=n1,
                                             n_nonmember=n0, delta=delta, level=level)
        out["threshold"][sl] = gam[rows, col]
        out["alpha_hat"][sl] = (n0 - le0[rows, col]) / n0
        out["beta_hat"][sl] = le1[rows, col] / n1
        d_out[sl] = direction[col]
    nan = np.full(B, np.nan)
    return {**out, "alpha_up": nan, "beta_up": nan, "direction": d_out,
            "n_thresholds": int(grid.size), "n1": n1, "n0": n0}
