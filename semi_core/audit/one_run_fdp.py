r"""One-run audits of an f-DP hypothesis: the reconstruction recursion of Mahloujifar et al.

Mahloujifar, Melis & Chaudhuri (2024; ICML 2025), *Auditing f-differential privacy in one run*
(arXiv:2410.22235), in the design of Steinke, Nasr & Jagielski (2023) (:mod:`semi_core.audit.one_run`):
``m`` canaries, each included independently with probability 1/2 (:math:`S_i`), one run of the
mechanism, :math:`r` guesses :math:`T_i\in\{-1,+1\}` made from its output (abstaining on the
other :math:`m-r`), :math:`W` correct. The null hypothesis is that the mechanism is
:math:`f`-DP for a trade-off function :math:`f` (convex, non-increasing, :math:`f(\alpha)\le
1-\alpha`); write :math:`g=1-f` (its *blow-up*: concave, increasing, :math:`g(x)\ge x`) and
:math:`g^{-1}` for its inverse.

Derivation (ours; it reproduces the numerical audit of their paper, ``audit_rh_with_cap``)
------------------------------------------------------------------------------------------
*One canary.* Let :math:`I` be uniform on the canaries, :math:`C_I` / :math:`N_I` the events
that the guess on :math:`I` is correct / wrong, and :math:`E` any event of the output and the
*other* bits :math:`S_{-I}`. Given :math:`I=i,S_{-i}=s`, the runs with :math:`S_i=1` and
:math:`S_i=0` are neighbours, so with :math:`A=\{T_i=+1\}\cap E`, :math:`B=\{T_i=-1\}\cap E`
and :math:`P_1(A)\le g(P_0(A))`, :math:`P_0(B)\le g(P_1(B))`:

.. math::

    P[C_i\cap E\mid s]=\tfrac12P_1(A)+\tfrac12P_0(B)\le\tfrac12g(P_0(A))+\tfrac12g(P_1(B))
    \le g\big(P[N_i\cap E\mid s]\big),

and averaging over :math:`(i,s)` (Jensen, :math:`g` concave):
:math:`P[C_I\cap E]\le g(P[N_I\cap E])`.

*All canaries.* Take :math:`E=\{W_{-I}\ge j-1\}` (correct guesses among the other canaries).
:math:`C_I\cap E=C_I\cap\{W\ge j\}` and :math:`N_I\cap E=N_I\cap\{W\ge j-1\}`; with
:math:`p_w=P[W=w]`,

.. math::

    a_j=P[C_I,W\ge j]=\frac1m\sum_{w\ge j}w\,p_w,\qquad
    b_j=P[N_I,W\ge j]=\frac1m\sum_{w\ge j}(r-w)\,p_w,\qquad
    b_{j-1}\ge g^{-1}(a_j)\quad(1\le j\le r),

    a_{j-1}=a_j+c_{j-1}\,(b_{j-1}-b_j),\quad c_i=\frac{i}{r-i},\qquad a_0+b_0=\frac rm .

*The recursion.* Start from :math:`\hat a_v=\xi v/m`, :math:`\hat b_v=\xi(r-v)/m` and take the
smallest step each constraint allows, for :math:`j=v,\dots,1`:

.. math::

    \hat b_{j-1}=\max\big(\hat b_j,\ g^{-1}(\hat a_j)\big),\qquad
    \hat a_{j-1}=\hat a_j+c_{j-1}\,(\hat b_{j-1}-\hat b_j);\qquad
    \text{reject }f\text{ if }\hat a_0+\hat b_0>\frac rm .

*Validity.* Let :math:`K_c=\{(x,y):x+y\ge0,\ x\ge cy\}` (a convex cone; :math:`K_c\subseteq
K_{c'}` for :math:`c'\le c`). If :math:`q=P[W\ge v]\ge\xi`, then
:math:`(a_v,b_v)-(\hat a_v,\hat b_v)\in K_{c_{v-1}}` (:math:`a_v+b_v=rq/m`, :math:`a_v\ge
vq/m`, and :math:`c_{v-1}(r-v)<v`). One greedy step :math:`T` maps :math:`A-B\in K_c` to
:math:`T(A)-T(B)\in K_c` (the :math:`x-cy` part is unchanged and the sum can only drop when
:math:`\hat b` was binding, where it drops by at most :math:`y`), and the true step is
:math:`T(A)+d(c,1)`, :math:`d\ge0`, a direction of :math:`K_c`. So
:math:`a_0+b_0=r/m\ge\hat a_0+\hat b_0`: a rejection is impossible when
:math:`P[W\ge v]\ge\xi`, i.e. **under an f-DP mechanism the test rejects with probability
below** :math:`\xi`. A larger :math:`g` (weaker privacy) only enlarges the greedy path (it is a
feasible path for the smaller :math:`g`), so a family :math:`f_\theta` ordered by
:math:`\theta` is rejected on an interval :math:`\theta<\underline\theta`: the reported
:math:`\underline\theta` exceeds the true :math:`\theta` with probability at most
:math:`\xi`. A state is final once :math:`\hat b_j\ge g^{-1}(\hat a_j)` (nothing moves again)
or once :math:`\hat a+\hat b>r/m` (the sum never decreases).

Families (:data:`TRADEOFFS`)
----------------------------
``"eps-delta"`` (the default, :data:`DEFAULT_TRADEOFF`)
    The exact :math:`(\varepsilon,\delta)` curve
    :math:`f(\alpha)=\max(0,1-\delta-e^\varepsilon\alpha,e^{-\varepsilon}(1-\delta-\alpha))`:
    :math:`g^{-1}(y)=\max(0,(y-\delta)e^{-\varepsilon},1-\delta-e^{\varepsilon}(1-y))`. Every
    :math:`(\varepsilon,\delta)`-DP mechanism is :math:`f_{\varepsilon,\delta}`-DP, so nothing
    is assumed of the curve's shape (``"one-run-bernoulli-half"``, as Steinke et al.).
``"gdp"`` (opt-in, by name only)
    :math:`g^{-1}_\mu(y)=\Phi(\Phi^{-1}(y)-\mu)` (computed as
    ``exp(log_ndtr(ndtri(y) - mu))``: no underflow to a wrong 0 before :math:`10^{-308}`);
    :math:`\underline\mu` is certified, then
    :math:`\underline\varepsilon=\varepsilon_{\mathrm{GDP}}(\underline\mu,\delta)`
    (:func:`~semi_core.stats.gdp.gdp_epsilon`). This is jax_privacy's
    ``epsilon_one_run_fdp`` (it parametrises the Gaussian curve by the :math:`\sigma` that makes
    it :math:`(\varepsilon,\delta)`-DP: the same map). It assumes the mechanism's curve is
    Gaussian (``AuditResult.assumption == "one-run-bernoulli-half+mu-gdp"``) and over-claims
    when it is not: on the scores of exactly :math:`\varepsilon`-DP mechanisms (randomised
    response :math:`\varepsilon=1`, 4; Laplace 1; two-sided geometric 2) most audits certify
    more than :math:`\varepsilon` (the soundness table of ``semi-core reproduce``). It was
    the default before; it is now used only when named.

Any claimed curve (:func:`one_run_fdp_p_value`)
    A callable :math:`f` (validated as a trade-off function by :func:`check_tradeoff`: values
    in [0, 1], below :math:`1-\alpha`, non-increasing, convex; inverted conservatively) or a
    privacy profile :math:`\{(\varepsilon_j,\delta_j)\}` (e.g. a sub-sampled Gaussian's
    from a PLD accountant; :func:`profile_blowup_inverse`) is tested as one hypothesis: the
    p-value is the smallest :math:`\xi` at which the recursion rejects.

Guesses are those of :mod:`semi_core.audit.one_run` (top :math:`k_+` "in", bottom :math:`k_-` "out", a
tie group straddling a cut abstained on, :math:`r=k_++k_-` counted; the pre-registered family
with Bonferroni), and the same design assumption and class-size check
(:func:`~semi_core.audit.one_run.check_inclusion_balance`) apply.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import log_ndtr, ndtri

from semi_core._validation import check_delta, check_failure_prob, check_int
from semi_core.audit.one_run import (
    check_guesses,
    check_inclusion_balance,
    guess_family,
    one_run_counts,
)
from semi_core.stats.gdp import gdp_epsilon

__all__ = [
    "TRADEOFFS",
    "DEFAULT_TRADEOFF",
    "blowup_inverse",
    "one_run_fdp_rejects",
    "one_run_fdp_bound",
    "one_run_fdp_epsilon",
    "batch_one_run_fdp",
    "gaussian_ceiling",
    "check_tradeoff",
    "tradeoff_blowup_inverse",
    "profile_blowup_inverse",
    "one_run_fdp_p_value",
]

#: Trade-off families of the f-DP audit: the (eps, delta) curve (valid for every
#: (eps, delta)-DP mechanism) and the Gaussian curve (mu; assumes a mu-GDP mechanism).
TRADEOFFS = ("eps-delta", "gdp")
#: The default family: the one that assumes nothing of the mechanism's curve.
DEFAULT_TRADEOFF = "eps-delta"
#: A rejection needs the recursion's mass to exceed r/m by this relative margin (rounding).
_MARGIN = 1e-12
#: Refinement of the parameter search: grid points per pass and passes (16**7 ~ 2.7e8).
_GRID, _PASSES = 16, 7


def _check_tradeoff(tradeoff) -> str:
    if not isinstance(tradeoff, str) or tradeoff not in TRADEOFFS:
        raise ValueError(f"tradeoff must be one of {TRADEOFFS}, got {tradeoff!r}")
    return tradeoff


def blowup_inverse(y, theta, *, tradeoff: str, delta: float = 0.0) -> np.ndarray:
    r"""Inverse blow-up :math:`g_\theta^{-1}(y)`, :math:`g_\theta=1-f_\theta` (vectorised).

    .. math::

        \text{gdp: }\ \Phi(\Phi^{-1}(y)-\mu),\qquad
        \text{eps-delta: }\ \max\big(0,\ (y-\delta)e^{-\varepsilon},\
            1-\delta-e^{\varepsilon}(1-y)\big)

    Parameters
    ----------
    y : array_like
        Probabilities in ``[0, 1]``.
    theta : array_like
        :math:`\mu\ge0` (``gdp``) or :math:`\varepsilon\ge0` (``eps-delta``), broadcast with y.
    tradeoff : {"eps-delta", "gdp"}
        Required: the family (no default; ``gdp`` assumes a :math:`\mu`-GDP mechanism).
    delta : float
        ``eps-delta`` only, in ``[0, 1)``.

    Returns
    -------
    ndarray
        :math:`g_\theta^{-1}(y)` in [0, 1], broadcast over ``y`` and ``theta``.
    """
    tradeoff = _check_tradeoff(tradeoff)
    y = np.asarray(y, dtype=float)
    th = np.asarray(theta, dtype=float)
    if np.isnan(y).any() or (y < 0).any() or (y > 1).any():
        raise ValueError("y must be probabilities in [0, 1]")
    if np.isnan(th).any() or (th < 0).any():
        raise ValueError("theta must be >= 0 (mu or epsilon)")
    return _ginv(y, th, tradeoff, check_delta(delta))


def _ginv(y, th, tradeoff, delta):
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        if tradeoff == "gdp":
            return np.exp(log_ndtr(ndtri(y) - th))
        a = (y - delta) * np.exp(-th)
        b = 1.0 - delta - np.exp(th) * (1.0 - y)
        return np.maximum(0.0, np.maximum(a, np.where(np.isnan(b), -np.inf, b)))


def _rejects(m, r, v, xi, theta, tradeoff, delta):
    """Recursion for arrays ``r, v, xi, theta`` (broadcast); True where f_theta is rejected.
    ``tradeoff``: a family name (with ``theta``, ``delta``) or a vectorised ``g^{-1}(y)``."""
    r, v, xi, th = (np.array(a, dtype=float) for a in np.broadcast_arrays(r, v, xi, theta))
    shape = r.shape
    r, v, xi, th = r.ravel(), v.ravel(), xi.ravel(), th.ravel()
    if isinstance(tradeoff, str):
        def ginv(y, t):
            return _ginv(y, t, tradeoff, delta)
    else:
        def ginv(y, t):
            return tradeoff(y)
    a = xi * v / m
    b = xi * (r - v) / m
    cap = r / m
    live = v > 0  # v = 0: a + b = xi r / m <= r / m, never rejected
    vmax = int(v.max()) if v.size else 0
    for i in range(vmax - 1, -1, -1):
        idx = np.flatnonzero(live & (v > i))
        if idx.size == 0:
            if not live.any():
                break
            continue
        ai, bi = a[idx], b[idx]
        step = np.maximum(ginv(np.minimum(ai, 1.0), th[idx]) - bi, 0.0)
        bi = bi + step
        ai = ai + (i / (r[idx] - i)) * step
        a[idx], b[idx] = ai, bi
        # final states: nothing moves again (step 0) or already over the cap (sum grows)
        live[idx] = (step > 0) & (ai + bi <= cap[idx] * (1.0 + _MARGIN))
    return (a + b > cap * (1.0 + _MARGIN)).reshape(shape)


def _check_mrv(m, r, v):
    m = check_int(m, "m", minimum=1)
    r = np.asarray(r)
    v = np.asarray(v)
    if (not np.issubdtype(r.dtype, np.integer) or not np.issubdtype(v.dtype, np.integer)
            or (v < 0).any() or (v > r).any() or (r > m).any()):
        raise ValueError(f"need integers 0 <= v <= r <= m (correct <= guesses <= canaries), "
                         f"got v={v!r}, r={r!r}, m={m}")
    return m, r, v


def one_run_fdp_rejects(m: int, r: int, v: int, theta: float, *, tradeoff: str,
                        delta: float = 0.0, failure_prob: float = 0.05) -> bool:
    r"""Does ``v`` correct of ``r`` guesses on ``m`` canaries refute :math:`f_\theta`-DP?

    True when the recursion (module docstring) ends with :math:`\hat a_0+\hat b_0>r/m`: under
    an :math:`f_\theta`-DP mechanism this happens with probability below :math:`\xi`.

    Parameters
    ----------
    m, r, v : int
        Canaries, guesses, correct guesses: ``0 <= v <= r <= m``, ``m >= 1``.
    theta : float
        :math:`\mu\ge0` (``gdp``) or :math:`\varepsilon\ge0` (``eps-delta``).
    tradeoff : {"eps-delta", "gdp"}
        Required (no default; ``gdp`` assumes a :math:`\mu`-GDP mechanism).
    delta : float
        ``eps-delta`` only.
    failure_prob : float
        :math:`\xi\in(0,0.5]`.

    Returns
    -------
    bool
        Whether :math:`f_\theta`-DP is refuted.
    """
    m, r, v = _check_mrv(m, check_int(r, "r", minimum=0), check_int(v, "v", minimum=0))
    tradeoff = _check_tradeoff(tradeoff)
    th = float(theta)
    if not (math.isfinite(th) and th >= 0):
        raise ValueError(f"theta must be a finite number >= 0, got {theta!r}")
    return bool(_rejects(m, r, v, check_failure_prob(failure_prob), th, tradeoff,
                         check_delta(delta)))


def _bound(m, r, v, xi, tradeoff, delta):
    """Largest rejected theta per (r, v) pair (arrays), to relative 1e-8; 0 if none."""
    r = np.atleast_1d(r).astype(float)
    v = np.atleast_1d(v).astype(float)
    n = r.size
    lo = np.zeros(n)
    ok = _rejects(m, r, v, xi, 0.0, tradeoff, delta)
    if not ok.any():
        return lo
    hi = np.ones(n)
    grow = ok.copy()
    while grow.any():  # doubling until not rejected (v = r: rejected up to theta ~ log(m/xi))
        rej = _rejects(m, r[grow], v[grow], xi, hi[grow], tradeoff, delta)
        idx = np.flatnonzero(grow)
        lo[idx[rej]] = hi[idx[rej]]
        hi[idx[rej]] *= 2.0
        grow[idx[~rej]] = False
        if (hi[grow] > 1e4).any():
            raise ValueError("the f-DP recursion rejects every parameter up to 1e4; the counts "
                             f"(m={m}, r, v) are degenerate")
    act = np.flatnonzero(ok)
    lo_a, hi_a = lo[act], hi[act]
    frac = np.arange(1, _GRID + 1) / (_GRID + 1)
    for _ in range(_PASSES):
        grid = lo_a[:, None] + (hi_a - lo_a)[:, None] * frac[None, :]
        rej = _rejects(m, r[act][:, None], v[act][:, None], xi, grid, tradeoff, delta)
        # rejections form an interval [0, theta*): the last rejected grid point is below it
        last = np.where(rej.any(axis=1), _GRID - 1 - np.argmax(rej[:, ::-1], axis=1), -1)
        new_lo = np.where(last >= 0, grid[np.arange(act.size), np.maximum(last, 0)], lo_a)
        new_hi = np.where(last < _GRID - 1, grid[np.arange(act.size),
                                                 np.minimum(last + 1, _GRID - 1)], hi_a)
        lo_a, hi_a = new_lo, new_hi
    lo[act] = lo_a
    return lo


def one_run_fdp_bound(m: int, r: int, v: int, *, tradeoff: str, delta: float = 0.0,
                      failure_prob: float = 0.05) -> float:
    r"""Largest parameter of the family refuted at level :math:`\xi`: :math:`\underline\mu` or
    :math:`\underline\varepsilon`.

    .. math::

        \underline\theta=\sup\{\theta\ge0:\ \hat a_0(\theta)+\hat b_0(\theta)>r/m\}\quad
        (0\text{ if none})

    (grid refinement, 7 passes of 16 points: resolution :math:`\approx4\cdot10^{-9}` of the
    bracket; the returned value is a rejected point, never above the supremum).

    Parameters
    ----------
    m, r, v : int
        As in :func:`one_run_fdp_rejects`.
    tradeoff : {"eps-delta", "gdp"}
        Required (the two return different parameters): ``eps-delta`` returns
        :math:`\underline\varepsilon` (valid for every mechanism), ``gdp``
        :math:`\underline\mu` (assumes a :math:`\mu`-GDP mechanism).
    delta : float
        ``eps-delta`` only.
    failure_prob : float
        :math:`\xi\in(0,0.5]`.

    Returns
    -------
    float
        :math:`\underline\mu` or :math:`\underline\varepsilon`, >= 0.
    """
    m, r, v = _check_mrv(m, check_int(r, "r", minimum=0), check_int(v, "v", minimum=0))
    return float(_bound(m, r, v, check_failure_prob(failure_prob), _check_tradeoff(tradeoff),
                        check_delta(delta))[0])


def _to_epsilon(theta, tradeoff, delta):
    if tradeoff == "eps-delta":
        return float(theta)
    return gdp_epsilon(float(theta), delta)


def _check_gdp_delta(tradeoff, delta):
    if tradeoff == "gdp" and delta == 0.0:
        raise ValueError("delta must be > 0 for method='one-run-fdp' with tradeoff='gdp': a "
                         "mu-GDP mechanism with mu > 0 is (eps, 0)-DP for no finite eps; pass "
                         "delta > 0 (the delta-free result is mu_lower) or tradeoff='eps-delta'")


def one_run_fdp_epsilon(m: int, r: int, v: int, *, delta: float, failure_prob: float = 0.05,
                        tradeoff: str = DEFAULT_TRADEOFF) -> float:
    r"""The one-run f-DP lower bound on :math:`\varepsilon` at :math:`\delta`.

    ``eps-delta`` (default; valid for every :math:`(\varepsilon,\delta)`-DP mechanism):
    :math:`\underline\varepsilon` of the :math:`(\varepsilon,\delta)` curve; ``gdp``
    (assumes a :math:`\mu`-GDP mechanism; over-claims e.g. for randomised response):
    :math:`\varepsilon_{\mathrm{GDP}}(\underline\mu,\delta)` (needs :math:`\delta>0`).

    Parameters
    ----------
    m, r, v : int
        As in :func:`one_run_fdp_rejects`.
    delta : float
        In ``[0, 1)``.
    failure_prob : float
        :math:`\xi\in(0,0.5]`.
    tradeoff : {"eps-delta", "gdp"}

    Returns
    -------
    float
        :math:`\underline\varepsilon\ge0`.
    """
    tradeoff = _check_tradeoff(tradeoff)
    delta = check_delta(delta)
    _check_gdp_delta(tradeoff, delta)
    th = one_run_fdp_bound(m, r, v, tradeoff=tradeoff, delta=delta, failure_prob=failure_prob)
    return _to_epsilon(th, tradeoff, delta)


def batch_one_run_fdp(member, nonmember, delta, xi, guesses, tradeoff=None) -> dict:
    """The ``method="one-run-fdp"`` engine of :func:`~semi_core.audit.bounds.audit_batch`:
    rows of (validated) scores, Bonferroni over the guess family, the same output keys as the
    ``one-run`` engine plus ``mu_lower`` (``gdp``). ``tradeoff=None`` is
    :data:`DEFAULT_TRADEOFF` (``"eps-delta"``: nothing assumed of the curve); the Gaussian
    curve is used only when asked for by name.

    Parameters
    ----------
    member : ndarray, shape (B, N1)
        Scores of the included canaries, one audit per row.
    nonmember : ndarray, shape (B, N0)
        Scores of the excluded canaries.
    delta : float
        The :math:`\\delta` of the ``eps-delta`` curve, in [0, 1).
    xi : float
        Failure probability, in (0, 0.5].
    guesses : None or sequence of (int, int)
        Guess pairs; None = the pre-registered family.
    tradeoff : None, "eps-delta", "gdp" or callable
        The trade-off curve; None = ``"eps-delta"``.

    Returns
    -------
    dict
        The per-row bounds and guess counts, as the ``one-run`` engine, plus ``mu_lower``.
    """
    tradeoff = _check_tradeoff(DEFAULT_TRADEOFF if tradeoff is None else tradeoff)
    _check_gdp_delta(tradeoff, delta)
    n1, n0 = member.shape[1], nonmember.shape[1]
    m = n1 + n0
    balance_p = check_inclusion_balance(n1, n0, method="one-run-fdp")
    family = guess_family(m) if guesses is None else check_guesses(guesses, m)
    level = xi / len(family)
    B = member.shape[0]
    cnt = np.array([[one_run_counts(member[i], nonmember[i], kp, km)
                     for kp, km in family] for i in range(B)], dtype=float)  # (B, F, 3)
    r = cnt[..., 0].astype(np.int64)
    v = cnt[..., 1].astype(np.int64)
    theta = _bound(m, r.ravel(), v.ravel(), level, tradeoff, delta).reshape(r.shape)
    best = np.argmax(theta, axis=1)
    rows = np.arange(B)
    th = theta[rows, best]
    cut = cnt[rows, best, 2]
    eps = np.array([_to_epsilon(t, tradeoff, delta) for t in th])
    fin = np.isfinite(cut)
    tp = np.where(fin, (member >= np.where(fin, cut, 0.0)[:, None]).sum(axis=1), 0)
    fp = np.where(fin, (nonmember >= np.where(fin, cut, 0.0)[:, None]).sum(axis=1), 0)
    nan = np.full(B, math.nan)
    out = {"eps": eps, "crit": eps, "threshold": cut, "r": r[rows, best], "v": v[rows, best],
           "tp": tp, "fp": fp, "alpha_hat": fp / n0, "beta_hat": 1.0 - tp / n1,
           "alpha_up": nan, "beta_up": nan, "direction": np.zeros(B, dtype=int), "n1": n1,
           "n0": n0, "n_thresholds": len(family), "balance_p": balance_p,
           "tradeoff": tradeoff}
    if tradeoff == "gdp":
        out["mu_lower"] = th
    return out


# --------------------------------------------------------------------------- any claimed curve
def _alpha_grid(n: int) -> np.ndarray:
    return np.unique(np.concatenate([[0.0], np.logspace(-15, 0, n), np.linspace(0, 1, n)]))


def check_tradeoff(f, *, n_grid: int = 4001, tol: float = 1e-9) -> tuple[np.ndarray, np.ndarray]:
    r"""Validate a claimed trade-off function and tabulate it.

    A trade-off function (Dong, Roth & Su 2022, Prop. 2.2) is convex, continuous,
    non-increasing on :math:`[0,1]` and :math:`f(\alpha)\le1-\alpha`; a callable that is not
    is refused with the first violation named (checked on a grid of ``2 n_grid`` points,
    logarithmic near 0 and uniform, with absolute tolerance ``tol`` and relative ``1e-7`` on
    slopes).

    Parameters
    ----------
    f : callable
        Vectorised :math:`\alpha\mapsto f(\alpha)` (type II error at type I error
        :math:`\alpha`).
    n_grid : int
    tol : float

    Returns
    -------
    (alpha, f_alpha) : ndarray
        The grid and the values.
    """
    if not callable(f):
        raise TypeError(f"tradeoff must be a callable alpha -> f(alpha), got {type(f).__name__}")
    n_grid = check_int(n_grid, "n_grid", minimum=10)
    alpha = _alpha_grid(n_grid)
    try:
        fa = np.asarray(f(alpha), dtype=float)
    except Exception as err:  # noqa: BLE001 - any failure means "not a vectorised curve"
        raise ValueError(f"tradeoff(alpha) failed on an array of alphas: {err}") from err
    if fa.shape != alpha.shape:
        raise ValueError(f"tradeoff(alpha) must return one value per alpha (shape "
                         f"{alpha.shape}), got shape {fa.shape}")
    if not np.all(np.isfinite(fa)) or (fa < -tol).any() or (fa > 1 + tol).any():
        raise ValueError("a trade-off function takes values in [0, 1] (no NaN)")
    bad = fa > 1 - alpha + tol
    if bad.any():
        a0 = float(alpha[np.argmax(bad)])
        raise ValueError(f"not a trade-off function: f(alpha) > 1 - alpha at alpha = {a0:.3g} "
                         "(a test cannot do worse than random guessing)")
    if (np.diff(fa) > tol).any():
        a0 = float(alpha[1:][np.argmax(np.diff(fa) > tol)])
        raise ValueError(f"not a trade-off function: f increases at alpha = {a0:.3g} (must be "
                         "non-increasing)")
    slope = np.diff(fa) / np.diff(alpha)
    dec = slope[1:] < slope[:-1] - 1e-7 * (1.0 + np.abs(slope[:-1])) - tol / np.diff(alpha)[1:]
    if dec.any():
        a0 = float(alpha[1:-1][np.argmax(dec)])
        raise ValueError(f"not a trade-off function: f is not convex near alpha = {a0:.3g}")
    return alpha, np.clip(fa, 0.0, 1.0)


def tradeoff_blowup_inverse(f, *, n_grid: int = 4001):
    r"""A conservative :math:`g^{-1}` for a claimed trade-off function ``f`` (validated by
    :func:`check_tradeoff`).

    With :math:`g_j=1-f(\alpha_j)` on the grid and :math:`g_j<y\le g_{j+1}`, concavity of
    :math:`g` gives :math:`g(x)\le g_j+s_{j-1}(x-\alpha_j)` for :math:`x\ge\alpha_j`
    (:math:`s_{j-1}` the secant slope on the left), hence

    .. math::

        g^{-1}(y)\ \ge\ \min\Big(\alpha_{j+1},\ \alpha_j+\frac{y-g_j}{s_{j-1}}\Big),

    a lower bound (the recursion stays valid) that is exact where :math:`g` is linear.

    Parameters
    ----------
    f : callable
        The claimed trade-off function on [0, 1].
    n_grid : int
        Number of grid points.

    Returns
    -------
    callable
        ``g_inv(y)``, vectorised.
    """
    alpha, fa = check_tradeoff(f, n_grid=n_grid)
    g = np.maximum.accumulate(1.0 - fa)
    with np.errstate(divide="ignore", invalid="ignore"):
        left = np.concatenate([[np.inf], np.diff(g) / np.diff(alpha)])  # s_{j-1} at j

    def ginv(y):
        y = np.asarray(y, dtype=float)
        idx = np.searchsorted(g, y, side="left") - 1
        j = np.clip(idx, 0, alpha.size - 2)
        with np.errstate(divide="ignore", invalid="ignore"):
            step = np.where(left[j] > 0, (y - g[j]) / left[j], np.inf)
        x = np.minimum(alpha[j + 1], alpha[j] + np.maximum(step, 0.0))
        return np.where(idx >= 0, np.where(idx >= alpha.size - 1, alpha[-1], x), 0.0)

    return ginv


def profile_blowup_inverse(epsilons, deltas):
    r""":math:`g^{-1}` of a mechanism given by its privacy profile at some points.

    A mechanism that is :math:`(\varepsilon_j,\delta_j)`-DP for every :math:`j` is
    :math:`f`-DP with :math:`f=\max_j f_{\varepsilon_j,\delta_j}` (Dong, Roth & Su 2022,
    Prop. 2.12 / 2.13: the profile determines the curve), hence

    .. math::

        g^{-1}(y)=\max_j\max\big(0,\ (y-\delta_j)e^{-\varepsilon_j},\
            1-\delta_j-e^{\varepsilon_j}(1-y)\big),

    exact in the limit of a fine grid and conservative (smaller) on any finite one. This is how
    a curve from a PLD accountant enters (e.g. ``dp_accounting``'s
    ``PLDAccountant.get_delta(eps)`` on a grid of eps for a sub-sampled Gaussian).

    Parameters
    ----------
    epsilons : array_like
        :math:`\varepsilon_j\ge0` (finite).
    deltas : array_like
        :math:`\delta_j\in[0,1]`, same length.

    Returns
    -------
    callable
        ``g_inv(y)``, vectorised.
    """
    eps = np.asarray(epsilons, dtype=float).ravel()
    dl = np.asarray(deltas, dtype=float).ravel()
    if eps.size == 0 or eps.shape != dl.shape:
        raise ValueError("epsilons and deltas must be non-empty and of the same length")
    if not (np.all(np.isfinite(eps)) and (eps >= 0).all()):
        raise ValueError("epsilons must be finite and >= 0")
    if not (np.all(np.isfinite(dl)) and (dl >= 0).all() and (dl <= 1).all()):
        raise ValueError("deltas must lie in [0, 1]")
    ee, en = np.exp(eps)[None, :], np.exp(-eps)[None, :]

    def ginv(y):
        y = np.asarray(y, dtype=float)[..., None]
        with np.errstate(over="ignore", invalid="ignore"):
            b = 1.0 - dl - ee * (1.0 - y)
        out = np.maximum((y - dl) * en, np.where(np.isnan(b), -np.inf, b)).max(axis=-1)
        return np.maximum(out, 0.0)

    return ginv


def one_run_fdp_p_value(m: int, r: int, v: int, *, tradeoff=None, profile=None) -> float:
    r"""P-value of a claimed :math:`f`-DP guarantee from one run: the smallest :math:`\xi`
    at which the recursion refutes it.

    Rejection is monotone in :math:`\xi` (the start :math:`(\xi v,\xi(r-v))/m` grows along
    the cone of the module docstring), so :math:`P_f[p\le\xi]\le\xi` for every
    :math:`f`-DP mechanism. Found by bisection on :math:`\log\xi` (relative 1e-9), the
    returned value is a rejected level (never below the exact p-value).

    Parameters
    ----------
    m, r, v : int
        Canaries, guesses, correct guesses.
    tradeoff : callable, optional
        The claimed curve :math:`\alpha\mapsto f(\alpha)` (validated: :func:`check_tradeoff`).
    profile : (epsilons, deltas), optional
        The claimed privacy profile instead (:func:`profile_blowup_inverse`).

    Returns
    -------
    float
        In :math:`(0, 1]`; ``1.0`` when not rejected at any level.
    """
    m, r, v = _check_mrv(m, check_int(r, "r", minimum=0), check_int(v, "v", minimum=0))
    if (tradeoff is None) == (profile is None):
        raise ValueError("pass exactly one of tradeoff (a callable f) and profile "
                         "((epsilons, deltas))")
    ginv = (tradeoff_blowup_inverse(tradeoff) if tradeoff is not None
            else profile_blowup_inverse(*profile))

    def rej(xi):
        return bool(_rejects(m, r, v, xi, 0.0, ginv, 0.0))

    if not rej(1.0):
        return 1.0
    lo, hi = -800.0, 0.0  # log xi: rejected at hi, not at lo
    if rej(math.exp(lo)):
        return math.exp(lo)
    while hi - lo > 1e-9 * max(1.0, abs(hi)):
        mid = 0.5 * (lo + hi)
        if rej(math.exp(mid)):
            hi = mid
        else:
            lo = mid
    return math.exp(hi)


# --------------------------------------------------------------------------- what m can give
def gaussian_ceiling(mu: float, m: int, *, delta: float, failure_prob: float = 0.05,
                     tradeoff: str = "gdp", n_k: int = 60) -> dict:
    r"""Best :math:`\underline\varepsilon` a one-run f-DP audit of ``m`` canaries can expect
    from a :math:`\mu`-GDP score: an *oracle* reference, not a certificate.

    Scores :math:`\mu S_i+\mathcal N(0,1)`, :math:`S_i\sim` Bernoulli(1/2); guessing the top
    and bottom :math:`k` (threshold :math:`t_k` with
    :math:`m(\frac12\bar\Phi(t_k-\mu)+\frac12\bar\Phi(t_k))=k`) is correct with the
    expected precision :math:`\pi_k=\bar\Phi(t_k-\mu)/(\bar\Phi(t_k-\mu)+\bar\Phi(t_k))`;
    the bound is evaluated at :math:`r=2k`, :math:`v=\mathrm{round}(\pi_k r)` for ``n_k``
    values of :math:`k` in :math:`1..m/2` (log-spaced) and the best :math:`k` is kept, with
    no Bonferroni correction and no sampling noise in :math:`v`: a run of the real audit
    (pre-registered family, random counts) certifies less about as often as not. Used to show
    what ``m`` canaries can give at all (e.g. :math:`\varepsilon=4`, :math:`\delta=10^{-5}`,
    ``m = 1000``: about :math:`0.57\varepsilon`). ``tradeoff`` defaults to ``"gdp"`` here
    because the scores are Gaussian by construction; the value certifies nothing.

    Parameters
    ----------
    mu : float
        GDP parameter of the scores, > 0.
    m : int
        Number of canaries.
    delta : float
        The :math:`\delta` of the bound.
    failure_prob : float
        :math:`\xi\in(0,0.5]`.
    tradeoff : {"gdp", "eps-delta"}
        Curve of the audit.
    n_k : int
        Number of guess counts tried.

    Returns
    -------
    dict
        ``epsilon`` (the ceiling), ``k``, ``precision``.
    """
    from scipy.optimize import brentq  # lazy: scipy.optimize is slow to import
    from scipy.special import ndtr

    mu = float(mu)
    if not (math.isfinite(mu) and mu > 0):
        raise ValueError(f"mu must be a finite number > 0, got {mu!r}")
    m = check_int(m, "m", minimum=2)
    best = {"epsilon": 0.0, "k": 0, "precision": math.nan}
    for k in np.unique(np.geomspace(1, m // 2, check_int(n_k, "n_k", minimum=1)).astype(int)):
        k = int(k)
        t = brentq(lambda t, k=k: m * 0.5 * (ndtr(mu - t) + ndtr(-t)) - k, -60.0, 60.0)
        prec = float(ndtr(mu - t) / (ndtr(mu - t) + ndtr(-t)))
        r = 2 * k
        e = one_run_fdp_epsilon(m, r, int(round(prec * r)), delta=delta,
                                failure_prob=failure_prob, tradeoff=tradeoff)
        if e > best["epsilon"]:
            best = {"epsilon": float(e), "k": k, "precision": prec}
    return best
