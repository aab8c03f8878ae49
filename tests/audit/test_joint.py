"""The ``joint`` method: exact joint tests of both error rates at rank thresholds.

Three ways, checked against each other:
- SymPy: the mixed tail as an exact rational integral for small sizes; the numeric upper
  Riemann sum is never below it and converges to it as the slices shrink;
- Monte Carlo: on score laws that sit *on* the (eps, delta) boundary at every threshold, the
  p-value at the true eps rejects with frequency <= its level + 3 SE (and is not vacuous);
- a slow, obviously correct reference (adaptive quadrature + root finding at every grid
  count, no screening) that the vectorised bound may undercut (it is conservative) but not
  exceed.
"""

import math

import numpy as np
import pytest
import sympy as sp
from scipy import integrate, optimize
from scipy.special import bdtr, bdtrc
from scipy.stats import beta as beta_law

from semi_core.audit import audit_batch, epsilon_lower_bound
from semi_core.audit.bands import rank_threshold_counts
from semi_core.audit.joint import joint_grid, mixture_p_value


def _exact_tail(n0, n1, g, eps, delta, a):
    """P(A >= a) for A ~ Bin(n1, min(1, e^eps u + delta)), u ~ Beta(g+1, n0-g), in SymPy."""
    u = sp.symbols("u", positive=True)
    e = sp.exp(eps)
    dens = u**g * (1 - u) ** (n0 - g - 1) / sp.beta(g + 1, n0 - g)
    p = e * u + delta
    tail = sum(sp.binomial(n1, k) * p**k * (1 - p) ** (n1 - k) for k in range(a, n1 + 1))
    cut = (1 - delta) / e
    if cut >= 1:
        return sp.nsimplify(sp.integrate(sp.expand(dens * tail), (u, 0, 1)))
    return sp.integrate(sp.expand(dens * tail), (u, 0, cut)) + sp.integrate(dens, (u, cut, 1))


@pytest.mark.parametrize("n0, n1, g, eps, delta, a", [
    (4, 3, 1, sp.log(2), sp.Rational(1, 10), 2),
    (6, 5, 0, sp.log(3), sp.Rational(0), 3),
    (5, 4, 2, sp.Rational(0), sp.Rational(1, 20), 4),
])
def test_mixed_tail_is_an_upper_riemann_sum_of_the_exact_integral(n0, n1, g, eps, delta, a):
    exact = float(_exact_tail(n0, n1, g, eps, delta, a))
    coarse = float(mixture_p_value("tpr/fpr", float(eps), a, g, n_member=n1, n_nonmember=n0,
                                   delta=float(delta)))
    fine = float(mixture_p_value("tpr/fpr", float(eps), a, g, n_member=n1, n_nonmember=n0,
                                 delta=float(delta), n_slices=8192))
    # an upper sum: never below the integral (up to double rounding), converging to it
    assert coarse >= exact - 1e-13 and fine >= exact - 1e-13
    assert coarse - exact < 0.02 and fine - exact < 5e-4, (exact, coarse, fine)


def test_second_direction_is_the_mirror_image():
    # tnr/fnr at count g and member count b equals tpr/fpr on mirrored scores: checked through
    # its own exact integral: P(B <= b), B ~ Bin(N1, max(0, e^-eps (1 - u - delta)))
    n0, n1, g, eps, delta, b = 7, 6, 4, 0.4, 0.05, 2
    ref, _ = integrate.quad(
        lambda u: beta_law.pdf(u, g + 1, n0 - g)
        * bdtr(b, n1, max(0.0, math.exp(-eps) * (1 - u - delta))), 0, 1, epsabs=1e-13)
    got = float(mixture_p_value("tnr/fnr", eps, b, g, n_member=n1, n_nonmember=n0,
                                delta=delta, n_slices=8192))
    assert ref - 1e-12 <= got < ref + 5e-4


def _boundary_scores(rng, sims, n0, n1, eps, delta, direction):
    """Non-members U(0, 1); members on the boundary of the (eps, delta) constraint at every
    threshold: P(Y > t) = min(1, e^eps (1 - t) + delta) (``tpr/fpr``) or
    P(Y <= t) = max(0, e^-eps (t - delta)) (``tnr/fnr``)."""
    x = rng.random((sims, n0))
    if direction == "tpr/fpr":  # W = 1 - Y: atom delta at 0, else uniform on (0, (1-delta)e^-eps)
        w = np.where(rng.random((sims, n1)) < delta, 0.0,
                     rng.random((sims, n1)) * (1 - delta) * math.exp(-eps))
        return 1.0 - w, x
    low = rng.random((sims, n1)) < (1 - delta) * math.exp(-eps)
    y = np.where(low, delta + rng.random((sims, n1)) * (1 - delta), 2.0)
    return y, x


@pytest.mark.parametrize("direction, g", [("tpr/fpr", 4), ("tpr/fpr", 0), ("tnr/fnr", 44)])
def test_p_value_at_the_true_eps_has_its_level_on_the_boundary(direction, g):
    # 10,000 simulated audits of N0 = N1 = 50 on the boundary law: rejection frequency at the
    # true eps <= level + 3 SE (SE = sqrt(l (1 - l) / 10,000)); not vacuous at level 0.2
    rng = np.random.default_rng(2024)
    sims, n0, n1, eps, delta = 10_000, 50, 50, 1.0, 0.01
    y, x = _boundary_scores(rng, sims, n0, n1, eps, delta, direction)
    _, _, le1 = rank_threshold_counts(y, x, np.array([g]))
    count = (n1 - le1[:, 0]) if direction == "tpr/fpr" else le1[:, 0]
    pv = mixture_p_value(direction, eps, count, g, n_member=n1, n_nonmember=n0, delta=delta)
    for level in (0.01, 0.05, 0.2):
        rate = float(np.mean(pv <= level))
        assert rate <= level + 3 * math.sqrt(level * (1 - level) / sims), (level, rate)
    assert np.mean(pv <= 0.2) > 0.1  # the test uses its level: not a vacuous bound


def _reference_bound(member, nonmember, delta, xi):
    """Slow reference: every grid count, adaptive quadrature, root finding on eps."""
    n1, n0 = member.size, nonmember.size
    grid, direction = joint_grid(n0)
    level = xi / grid.size
    xs = np.sort(nonmember)
    best = 0.0
    for g, d in zip(grid.tolist(), direction.tolist(), strict=True):
        gam = xs[n0 - 1 - g]
        above = int(np.sum(member > gam))

        def pval(e, g=g, d=d, above=above):
            if d == 0:
                def f(u):
                    return bdtrc(above - 1, n1, min(1.0, math.exp(e) * u + delta)) \
                        if above > 0 else 1.0
            else:
                def f(u):
                    return bdtr(n1 - above, n1, max(0.0, math.exp(-e) * (1 - u - delta)))
            val, _ = integrate.quad(lambda u: beta_law.pdf(u, g + 1, n0 - g) * f(u), 0, 1,
                                    limit=200, epsabs=1e-14, epsrel=1e-10)
            return val

        if pval(0.0) > level:
            continue
        hi = 40.0
        if pval(hi) <= level:
            best = max(best, hi)
            continue
        best = max(best, optimize.brentq(lambda e: pval(e) - level, 0.0, hi, xtol=1e-10))
    return best


@pytest.mark.parametrize("mu, n, audits", [
    (1.0, 60, 1), (2.0, 50, 1), (0.0, 50, 1),
    pytest.param(1.0, 150, 4, marks=pytest.mark.slow), pytest.param(3.0, 100, 4, marks=pytest.mark.slow),
])
def test_vectorised_bound_is_the_reference_up_to_its_conservative_sums(mu, n, audits):
    rng = np.random.default_rng(int(10 * mu) + n)
    for _ in range(audits):
        m, x = rng.normal(mu, 1, n), rng.normal(0, 1, n)
        fast = epsilon_lower_bound(m, x, delta=1e-5, failure_prob=0.05,
                                   method="joint").epsilon_lower_bound
        ref = _reference_bound(m, x, 1e-5, 0.05)
        assert fast <= ref + 1e-9, (fast, ref)  # upper sums: the fast p-values are larger
        assert fast >= ref - 0.05, (fast, ref)


def test_result_fields_and_the_tests_counted():
    rng = np.random.default_rng(3)
    r = epsilon_lower_bound(rng.normal(1.5, 1, 400), rng.normal(0, 1, 400), delta=1e-5,
                            method="joint")
    assert r.method == "joint" and r.assumption == "iid-games"
    assert r.n_thresholds == joint_grid(400)[0].size
    # a joint test: no separate confidence bounds on the two rates (None, not NaN)
    assert r.tpr_lower is None and r.fpr_upper is None
    assert r.epsilon_lower_bound > 0 and r.direction in ("tpr/fpr", "tnr/fnr")
    one = epsilon_lower_bound(rng.normal(1.5, 1, 400), rng.normal(0, 1, 400), delta=1e-5,
                              method="joint", sides="one")
    assert one.direction == "tpr/fpr" and one.n_thresholds == joint_grid(400, "one")[0].size


def test_monotone_in_the_failure_probability_and_batch_equals_single():
    rng = np.random.default_rng(4)
    m, x = rng.normal(1, 1, (3, 300)), rng.normal(0, 1, (3, 300))
    lo = audit_batch(m, x, delta=1e-5, failure_prob=0.01, method="joint")
    hi = audit_batch(m, x, delta=1e-5, failure_prob=0.1, method="joint")
    assert (hi >= lo).all() and (hi > lo).any()
    for i in range(3):
        single = epsilon_lower_bound(m[i], x[i], delta=1e-5, failure_prob=0.01, method="joint")
        assert single.epsilon_lower_bound == lo[i]


def test_tighter_than_the_rectangle_methods_on_gaussian_scores():
    # medians over 20 audits, mu = 1, 1,000 per side: the joint test beats band and cp ranks
    rng = np.random.default_rng(5)
    m, x = rng.normal(1, 1, (20, 1000)), rng.normal(0, 1, (20, 1000))
    med = {k: float(np.median(audit_batch(m, x, delta=1e-5, **kw))) for k, kw in {
        "joint": {"method": "joint"}, "band": {"method": "band"},
        "cp-ranks": {"method": "cp", "thresholds": "ranks"}}.items()}
    assert med["joint"] > med["band"] and med["joint"] > med["cp-ranks"], med


def test_ties_and_degenerate_sizes():
    # all scores equal: nothing certified; one score per side: a clean number
    assert epsilon_lower_bound(np.zeros(30), np.zeros(30), delta=0.0,
                               method="joint").epsilon_lower_bound == 0.0
    r = epsilon_lower_bound([1.0], [0.0], delta=0.0, method="joint")
    assert r.epsilon_lower_bound >= 0.0 and not math.isnan(r.epsilon_lower_bound)
    # heavy ties (7 distinct values), well separated: a positive bound
    rng = np.random.default_rng(6)
    m = rng.binomial(6, 0.9, 500).astype(float)
    x = rng.binomial(6, 0.1, 500).astype(float)
    assert epsilon_lower_bound(m, x, delta=1e-5, method="joint").epsilon_lower_bound > 1.0


def _every_count(member, nonmember, delta, xi):
    """The maximum over every grid count, each solved exactly (no skipping)."""
    from semi_core.audit import joint

    n1, n0 = member.shape[1], nonmember.shape[1]
    grid, direction = joint_grid(n0)
    gam, le0, le1 = (a[:, ::-1] for a in rank_threshold_counts(member, nonmember, grid))
    counts = np.where(direction[None, :] == 0, n1 - le1, le1).astype(float)
    B, K = counts.shape
    rr, kk = np.repeat(np.arange(B), K), np.tile(np.arange(K), B)
    e = joint._solve_exact(direction[kk], grid[kk], counts[rr, kk], n1, n0, delta,
                           xi / K, np.zeros(B * K))
    return e.reshape(B, K).max(axis=1), counts, grid, direction


@pytest.mark.parametrize("mu, n, delta", [(0.5, 2000, 1e-5), (1.0, 3000, 0.1), (2.0, 1000, 1e-5),
                                          (0.0, 1000, 1e-5)])
def test_branch_and_bound_is_the_maximum_over_every_count(mu, n, delta):
    # skipping a count whose lower-bounded p-value fails at the running best never changes the
    # maximum: equal to solving all K counts, to the root tolerance
    from semi_core.audit import joint

    rng = np.random.default_rng(int(10 * mu) + n)
    m, x = rng.normal(mu, 1, (6, n)), rng.normal(0, 1, (6, n))
    ref, counts, grid, direction = _every_count(m, x, delta, 0.05)
    got, col = joint.joint_epsilon(counts, grid, direction, n_member=n, n_nonmember=n,
                                   delta=delta, level=0.05 / grid.size)
    fin = np.isfinite(ref)
    assert (np.isfinite(got) == fin).all()
    assert np.allclose(got[fin], ref[fin], rtol=0, atol=2 * joint._ROOT_TOL), (got, ref)
    # the reported column attains it, and its p-value passes at the value returned
    for i in np.nonzero(fin)[0]:
        d = "tpr/fpr" if direction[col[i]] == 0 else "tnr/fnr"
        p = mixture_p_value(d, got[i], counts[i, col[i]], grid[col[i]], n_member=n,
                            n_nonmember=n, delta=delta)
        assert p <= 0.05 / grid.size


def test_pruning_bound_is_below_the_integral():
    # the ladder sum is a lower Riemann sum: never above the exact integral (quadrature), which
    # is never above the upper sum used as the p-value
    from semi_core.audit import joint

    n0, n1, delta = 400, 300, 1e-5
    grid, direction = joint_grid(n0)
    rng = np.random.default_rng(8)
    cnt = rng.integers(0, n1 + 1, (1, grid.size)).astype(float)
    for eps in (0.0, 0.7, 2.0):
        lb = joint._ladder_lower_bound(direction, grid, cnt, np.array([eps]), n1, n0, delta)[0]
        for k in range(0, grid.size, 5):
            g, c, d = int(grid[k]), float(cnt[0, k]), int(direction[k])
            if d == 0:
                def f(u, c=c, eps=eps):
                    return bdtrc(c - 1, n1, min(1.0, math.exp(eps) * u + delta)) if c > 0 else 1.0
            else:
                def f(u, c=c, eps=eps):
                    return bdtr(c, n1, max(0.0, math.exp(-eps) * (1 - u - delta)))
            exact, _ = integrate.quad(lambda u, f=f, g=g: beta_law.pdf(u, g + 1, n0 - g) * f(u),
                                      0, 1, limit=400, epsabs=1e-13, epsrel=1e-9)
            up = mixture_p_value("tpr/fpr" if d == 0 else "tnr/fnr", eps, c, g, n_member=n1,
                                 n_nonmember=n0, delta=delta)
            assert lb[k] <= exact + 1e-9 and exact <= up + 1e-12, (g, c, lb[k], exact, up)


def test_family_is_fine_at_mid_range_counts_where_tied_scores_decide():
    # randomised response (eps0 = 1): two score values, the best threshold at FPR ~ 0.27. A
    # family growing by 50 % there charges the FPR bound up to 1.5x the count's own; the step
    # cap (N0/32) bounds that. Medians of 9 audits of 2,000 per side: the capped family above
    # the uncapped one (JOINT_STEPS = 1: a step of N0, no cap) and above band.
    from semi_core.audit import joint

    for n0 in (100, 2000, 12345):
        g = joint_grid(n0)[0]
        assert np.diff(g).max() <= -(-n0 // joint.JOINT_STEPS)
    p = math.e / (1 + math.e)
    rng = np.random.default_rng(12)
    m = (rng.random((9, 2000)) < p).astype(float)
    x = (rng.random((9, 2000)) >= p).astype(float)
    med = {k: float(np.median(audit_batch(m, x, delta=1e-5, method=k))) for k in ("joint", "band")}
    steps = joint.JOINT_STEPS
    try:
        joint.JOINT_STEPS = 1
        uncapped = float(np.median(audit_batch(m, x, delta=1e-5, method="joint")))
    finally:
        joint.JOINT_STEPS = steps
    assert med["joint"] > uncapped + 0.1 and med["joint"] >= med["band"], (med, uncapped)


def test_cached_quantiles_survive_a_full_cache():
    # the per-(N0, g) caches are bounded; clearing a full cache mid-call must not drop the
    # entries the call still needs (a KeyError before): a second family at the same N0 shares
    # counts with the first
    from semi_core.audit import joint

    rng = np.random.default_rng(14)
    m, x = rng.normal(1, 1, 300), rng.normal(0, 1, 300)
    old, steps = joint._CACHE_MAX, joint.JOINT_STEPS
    joint._LADDER_CACHE.clear()
    joint._ENDS_CACHE.clear()
    try:
        joint._CACHE_MAX = 30
        for s in (32, 10 ** 9, 32):
            joint.JOINT_STEPS = s
            assert epsilon_lower_bound(m, x, delta=1e-5, method="joint").epsilon_lower_bound > 0
    finally:
        joint._CACHE_MAX, joint.JOINT_STEPS = old, steps
