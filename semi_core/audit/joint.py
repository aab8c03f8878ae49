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
(``bands.count_grid(N0, dense=JOINT_DENSE, ratio=JOINT_RATIO, max_step=`` :math:`\lceil
N_0/` ``JOINT_STEPS`` :math:`\rceil`): every count :math:`\le2`, then growing by 50 % but by
at most :math:`N_0/32`, mirrored; the cap keeps the family fine at mid-range counts, where tied
scores -- randomised response, geometric noise -- put the best threshold, at the price of about
twenty more tests at :math:`10^4` per side): direction ``tpr/fpr`` at the counts :math:`g\le(N_0-1)/2` (small
false-positive rates), ``tnr/fnr`` at the mirrored counts (``sides="one"``: the first half
only). One test per grid count, so :math:`K` tests in all, each at level :math:`\xi/K`
(Bonferroni, valid under any dependence). For each test,

.. math::

    \underline\varepsilon_g=\sup\{\varepsilon\ge0:\ \pi_g(\varepsilon,A_g)\le\xi/K\}
    \quad(\text{by a root search; the value returned always passes the test}),

and :math:`\underline\varepsilon=\max_g\underline\varepsilon_g\vee0`. If
:math:`\underline\varepsilon>\varepsilon` for the true :math:`\varepsilon`, the test of
:math:`H_\varepsilon` rejected at some :math:`g` (monotonicity), which happens with probability
:math:`\le K\cdot\xi/K=\xi`.

The maximum is taken over *every* count of the family, by branch and bound
(:func:`joint_epsilon`): one count per audit is solved first (the one whose Clopper-Pearson
rectangle is best: a ranking only), giving :math:`L`; a count is skipped when a lower Riemann sum
of its exact integral (:func:`_ladder_lower_bound`) already exceeds :math:`\xi/K` at :math:`L`, since
its test then rejects at no :math:`\varepsilon\ge L`; the others are solved. Each root is found
by safeguarded regula falsi (Illinois) on :math:`\log\pi_g`, to :data:`_ROOT_TOL`, and the value
returned is always a point whose upper-sum p-value was computed and passed. The skipping and the
root search change the running time only: the tests, their p-values and their level are those
above (the former search screened three counts per direction by a coarse pass; the maximum over
all counts is never below it). The Beta quantiles of the slices depend on :math:`(N_0, g)` alone
and are computed once per process, for the counts that are solved.

No separate confidence bounds on :math:`\alpha` and :math:`\beta` exist here (the test is
joint); results report the empirical rates at the threshold that attains the bound.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import bdtr, bdtrc, betainc, betaincinv

from semi_core.audit.bands import count_grid, rank_threshold_counts

__all__ = [
    "JOINT_DENSE",
    "JOINT_RATIO",
    "JOINT_STEPS",
    "JOINT_SLICES",
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
#: The family's step is at most ``ceil(N0 / JOINT_STEPS)``.
JOINT_STEPS = 32
#: Equal-probability slices of the Beta law (before the refinement towards 1).
JOINT_SLICES = 128
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
    grid = count_grid(n0, dense=JOINT_DENSE, ratio=JOINT_RATIO,
                      max_step=-(-n0 // JOINT_STEPS))
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


def joint_epsilon(counts: np.ndarray, grid: np.ndarray, direction: np.ndarray, *, n_member: int,
                  n_nonmember: int, delta: float,
                  level: float) -> tuple[np.ndarray, np.ndarray]:
    r"""Per-row :math:`\max_g\underline\varepsilon_g` over *every* grid count, and its column.

    Branch and bound, with the same tests and the same p-values as solving every count:

    1. a cheap proxy (the Clopper-Pearson rectangle of the count at :math:`\xi/(2K)` per rate)
       picks one count per row, solved exactly: :math:`L=\underline\varepsilon_{g_0}`;
    2. every other count is dropped when a *lower* bound of its exact mixture integral at
       :math:`L` (:func:`_ladder_lower_bound`: a lower Riemann sum on a fixed ladder of
       :math:`u`) exceeds the level: its test does not reject at :math:`L`, hence (the
       integral grows with :math:`\varepsilon`) at no :math:`\varepsilon\ge L`;
    3. the rest are solved exactly from :math:`L` up.

    Dropping a count never changes the maximum (up to the root tolerance
    :data:`_ROOT_TOL`); the returned value of each solved count passes its own test (the upper
    Riemann sum), which is all the validity argument uses.

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

    Returns
    -------
    (eps, column) : ndarray (B,) of float (``-inf``: no test rejects even at 0), ndarray of int
    """
    B, K = counts.shape
    n1, n0 = int(n_member), int(n_nonmember)
    cnt = counts.astype(float)
    rows = np.arange(B)
    # 1. proxy: the best rectangle per row, solved exactly
    c0 = np.argmax(_proxy(cnt, grid, direction, n1, n0, delta, level), axis=1)
    guess = _plug_in(cnt, grid, direction, n1, n0, delta) + 0.25
    best = _solve_exact(direction[c0], grid[c0], cnt[rows, c0], n1, n0, delta, level,
                        np.zeros(B), guess[rows, c0])
    col = c0.copy()
    # 2. prune the other counts by a lower bound of their p-values at max(L, 0)
    floor = np.maximum(best, 0.0)
    lb = _ladder_lower_bound(direction, grid, cnt, floor, n1, n0, delta)  # (B, K)
    alive = lb <= level
    alive[rows, c0] = False
    r_idx, k_idx = np.nonzero(alive)
    if r_idx.size:
        # 3. solve the survivors exactly from the floor up (passing at the floor first)
        e = _solve_exact(direction[k_idx], grid[k_idx], cnt[r_idx, k_idx], n1, n0, delta, level,
                         floor[r_idx], guess[r_idx, k_idx])
        order = np.lexsort((k_idx, -e, r_idx))  # per row: largest eps, then smallest column
        first = np.ones(order.size, dtype=bool)
        first[1:] = r_idx[order][1:] != r_idx[order][:-1]
        rr, ee, kk = r_idx[order][first], e[order][first], k_idx[order][first]
        better = (ee > best[rr]) | ((ee == best[rr]) & (kk < col[rr]) & np.isfinite(ee))
        best[rr[better]] = ee[better]
        col[rr[better]] = kk[better]
    return best, col


#: Absolute tolerance of the root search in epsilon (the value returned always passes).
_ROOT_TOL = 1e-10
#: Ladder of the pruning lower bound, in standard deviations of Beta(g+1, N0-g) from its mean.
_LADDER = np.array([-3.0, -2.0, -1.5, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0,
                    4.5, 5.0, 6.0, 7.0, 8.0, 9.5, 11.0, 13.0, 16.0, 20.0])
_CACHE_MAX = 4096
_ENDS_CACHE: dict[tuple[int, int], np.ndarray] = {}
_LADDER_CACHE: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}
_FINE_P, _FINE_W = beta_slices(JOINT_SLICES)


def _fine_ends(gs: np.ndarray, n0: int) -> np.ndarray:
    """Rounded-up Beta quantiles of the fine slices for the counts ``gs`` (P, L); each
    ``(N0, g)`` is computed once per process (they depend on nothing else)."""
    uniq = np.unique(gs)
    if len(_ENDS_CACHE) + uniq.size > _CACHE_MAX:  # bounded memory: start afresh
        _ENDS_CACHE.clear()
    missing = [int(g) for g in uniq if (n0, int(g)) not in _ENDS_CACHE]
    if missing:
        vals = _slice_ends(np.asarray(missing), n0, _FINE_P)
        for g, v in zip(missing, vals, strict=True):
            _ENDS_CACHE[(n0, g)] = v
    table = np.stack([_ENDS_CACHE[(n0, int(g))] for g in uniq])
    return table[np.searchsorted(uniq, gs)]


def _ladder(gs: np.ndarray, n0: int) -> tuple[np.ndarray, np.ndarray]:
    """Ladder points ``u`` (K, M) and the Beta(g+1, N0-g) mass of ``[u_k, u_{k+1})`` (last:
    ``[u_M, 1]``), per count; cached per ``(N0, g)``."""
    if len(_LADDER_CACHE) + len(gs) > _CACHE_MAX:  # bounded memory: start afresh
        _LADDER_CACHE.clear()
    missing = [int(g) for g in gs if (n0, int(g)) not in _LADDER_CACHE]
    if missing:
        g = np.asarray(missing, dtype=float)[:, None]
        a, b = g + 1.0, n0 - g
        mean = a / (n0 + 1.0)
        sd = np.sqrt(mean * (1.0 - mean) / (n0 + 2.0))
        u = np.clip(mean + _LADDER[None, :] * sd, 0.0, 1.0)
        u = np.maximum.accumulate(u, axis=1)
        cdf = betainc(a, b, u)
        mass = np.diff(np.concatenate([cdf, np.ones((g.shape[0], 1))], axis=1), axis=1)
        for i, gi in enumerate(missing):
            _LADDER_CACHE[(n0, gi)] = (u[i], np.maximum(mass[i], 0.0))
    us = np.stack([_LADDER_CACHE[(n0, int(g))][0] for g in gs])
    ms = np.stack([_LADDER_CACHE[(n0, int(g))][1] for g in gs])
    return us, ms


def _integrand(direction: np.ndarray, e: np.ndarray, u: np.ndarray, c: np.ndarray, n1: int,
               delta: float) -> np.ndarray:
    """The mixture's integrand at ``u`` (..., M), per problem direction/eps/count (..., 1)."""
    up = bdtrc(np.maximum(c - 1.0, 0.0), n1, np.minimum(1.0, e * u + delta))
    up = np.where(c > 0, up, 1.0)
    down = bdtr(c, n1, np.maximum(0.0, (1.0 - u - delta) / e))
    return np.where(direction == 0, up, down)


def _ladder_lower_bound(direction, grid, cnt, eps, n1, n0, delta) -> np.ndarray:
    r"""A lower bound of :math:`\pi_g(\varepsilon,\cdot)` for every (row, count), (B, K).

    The integrand grows with :math:`u`, so charging each ladder cell its value at the cell's
    lower end bounds the integral from below (the mass below the first point is dropped).
    Used only to skip counts whose test cannot reject; never as a p-value.
    """
    us, ms = _ladder(grid, n0)  # (K, M)
    e = np.exp(eps)[:, None, None]
    f = _integrand(direction[None, :, None], e, us[None], cnt[..., None], n1, delta)
    return (f * ms[None]).sum(axis=-1)


def _proxy(cnt, grid, direction, n1, n0, delta, level) -> np.ndarray:
    """Rectangle bound per (row, count): only ranks the counts (no validity rests on it)."""
    h = level / 2.0
    g = grid.astype(float)
    a_up = betaincinv(g + 1.0, n0 - g, 1.0 - h)[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        p_lo = np.where(cnt > 0, betaincinv(np.maximum(cnt, 1.0), n1 - cnt + 1.0, h), 0.0)
        e0 = np.log(np.maximum(p_lo - delta, 1e-300)) - np.log(a_up)
        b_up = np.where(cnt >= n1, 1.0, betaincinv(cnt + 1.0, np.maximum(n1 - cnt, 1e-300),
                                                     1.0 - h))
        e1 = np.log(np.maximum(1.0 - a_up - delta, 1e-300)) - np.log(b_up)
    out = np.where(direction[None, :] == 0, e0, e1)
    return np.where(np.isfinite(out), out, -1e300)


def _plug_in(cnt, grid, direction, n1, n0, delta) -> np.ndarray:
    """The empirical (no-margin) eps of each (row, count): a first upper end for the root
    search, above the bound in all but rare cases (a starting point only)."""
    a_hat = (grid + 1.0) / n0
    with np.errstate(divide="ignore", invalid="ignore"):
        e0 = np.log(np.maximum(cnt / n1 - delta, 1e-300)) - np.log(a_hat)
        e1 = np.log(np.maximum(1.0 - grid / n0 - delta, 1e-300)) - np.log((cnt + 1.0) / n1)
    out = np.where(direction[None, :] == 0, e0, e1)
    return np.where(np.isfinite(out), out, 0.0)


def _upper_p(direction, eps, ends, c, n1, delta) -> np.ndarray:
    """The upper-Riemann p-value of mixed-direction problems (P,), ends (P, L)."""
    out = np.empty(c.shape)
    for d in (0, 1):
        m = direction == d
        if m.any():
            out[m] = _p_value(d, eps[m], ends[m], _FINE_W, c[m], n1, delta)
    return out


def _solve_exact(direction, gs, c, n1, n0, delta, level, lo0, guess=None) -> np.ndarray:
    r"""Largest certified eps per problem in ``[lo0, _EPS_MAX]``: ``-inf`` where the test does
    not reject at ``lo0``; ``guess``: a first upper end to try (any value is safe: one that
    passes becomes the lower end). Safeguarded regula falsi (Illinois) on
    :math:`\log\pi(\varepsilon)-\log\ell`, which grows with :math:`\varepsilon`; the value
    returned is always a point whose upper-Riemann p-value was computed and is
    :math:`\le\ell`."""
    P = c.shape[0]
    out = np.full(P, -np.inf)
    if P == 0:
        return out
    ends = _fine_ends(gs, n0)
    # accept p <= level (1 - 1e-12): a recomputation in another array shape, which may round
    # the sum differently in its last place, passes too
    ll = math.log(level) + math.log1p(-1e-12)
    lo = lo0.astype(float).copy()
    hi = np.full(P, _EPS_MAX)

    def F(idx, e):
        return np.log(_upper_p(direction[idx], e, ends[idx], c[idx], n1, delta)) - ll

    flo = F(np.arange(P), lo)
    ok = flo <= 0
    fhi = np.full(P, np.inf)
    if guess is not None:  # a first upper end near the root saves the steps down from 40
        i = np.nonzero(ok)[0]
        x = np.clip(guess[i], lo[i] + 0.01, _EPS_MAX)
        fx = F(i, x)
        rej = fx <= 0
        lo[i[rej]], flo[i[rej]] = x[rej], fx[rej]
        hi[i[~rej]], fhi[i[~rej]] = x[~rej], fx[~rej]
    i = np.nonzero(ok & ~np.isfinite(fhi))[0]
    fhi[i] = F(i, hi[i])
    top = ok & (fhi <= 0)
    out[top] = hi[top]
    act = np.nonzero(ok & ~top)[0]
    side = np.zeros(P, dtype=np.int64)
    for it in range(200):
        if act.size == 0:
            break
        a, b, fa, fb = lo[act], hi[act], flo[act], fhi[act]
        x = (a * fb - b * fa) / (fb - fa)
        # safeguard: a step that is not strictly inside the bracket bisects; so does every
        # sixteenth step, which bounds the count of steps whatever the shape of the curve
        bad = ~np.isfinite(x) | (x <= a) | (x >= b) | (it % 16 == 15)
        x = np.where(bad, 0.5 * (a + b), x)
        fx = F(act, x)
        rej = fx <= 0
        i_r, i_a = act[rej], act[~rej]
        lo[i_r], flo[i_r] = x[rej], fx[rej]
        fhi[i_r] = np.where(side[i_r] == 1, 0.5 * fhi[i_r], fhi[i_r])
        side[i_r] = 1
        hi[i_a], fhi[i_a] = x[~rej], fx[~rej]
        flo[i_a] = np.where(side[i_a] == -1, 0.5 * flo[i_a], flo[i_a])
        side[i_a] = -1
        act = act[(hi[act] - lo[act]) > _ROOT_TOL]
    fin = ok & ~top
    out[fin] = lo[fin]
    return out


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
