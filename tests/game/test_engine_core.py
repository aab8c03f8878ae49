"""Monte Carlo engine vs closed forms, references, modes, seeding and bad inputs."""

import math

import numpy as np
import pytest
from scipy.stats import ks_2samp

from semi_core._rng import child_seed
from semi_core.audit.roc import auc, tpr_at_fpr_se
from semi_core.game.engine import (
    build_params,
    play_chunk,
    reference_per_round,
    simulate,
)
from semi_core.game.play import play
from semi_core.mechanisms.empirical_mean import EmpiricalMean
from semi_core.stats import errors

SIGMAS = 4.5  # Monte Carlo tolerance in standard errors (two-sided tail 7e-6 per comparison)
P_MIN = 1e-4  # two-sample tests: false-alarm probability per comparison


def _mc_tolerance(mech, test, fpr, tau, n0, n1):
    """SE of an empirical TPR at estimated threshold: binomial + threshold term with the
    closed-form ROC slope (delta method)."""
    tpr = float(errors.tpr_at_fpr(mech, fpr, test, tau))
    eps = 0.02
    slope = (float(errors.tpr_at_fpr(mech, fpr * (1 + eps), test, tau))
             - float(errors.tpr_at_fpr(mech, fpr * (1 - eps), test, tau))) / (2 * eps * fpr)
    se = math.sqrt(tpr * (1 - tpr) / n1 + slope**2 * fpr * (1 - fpr) / n0)
    return tpr, se


@pytest.fixture(scope="module")
def seed_setting():
    """The seed's §3.3 setting: n = 10, T = 10, N(0, 1), z* = 3, tau = 5."""
    return EmpiricalMean(10, 10, mu=0.0, cov=1.0, target=3.0)


@pytest.fixture(scope="module")
def exact_run(seed_setting):
    return simulate(seed_setting, 100_000, 2024, tau=5, mode="exact")


@pytest.fixture(scope="module")
def sufficient_run(seed_setting):
    return simulate(seed_setting, 100_000, 2025, tau=5, mode="sufficient")


@pytest.mark.twin
@pytest.mark.parametrize("which", ["exact_run", "sufficient_run"])
@pytest.mark.parametrize("test", ["semi-star", "final", "semi-max"])
def test_closed_forms_gaussian(request, seed_setting, which, test):
    res = request.getfixturevalue(which)
    n1 = int(res.member.sum())
    n0 = res.rounds - n1
    emp = tpr_at_fpr_se(*res.scores(test), [0.1, 0.01])
    for i, f in enumerate([0.1, 0.01]):
        tpr, se = _mc_tolerance(seed_setting, test, f, 5, n0, n1)
        assert abs(emp["tpr"][i] - tpr) < SIGMAS * se, (test, f, emp["tpr"][i], tpr, se)
    a, a_se = auc(*res.scores(test), se=True)
    assert abs(a - errors.auc(seed_setting, test, tau=5)) < SIGMAS * a_se


def test_membership_and_tau_laws(exact_run):
    R = exact_run.rounds
    # B ~ Bernoulli(1/2): binomial SE; tau is the point mass 5
    assert abs(exact_run.member.mean() - 0.5) < SIGMAS * math.sqrt(0.25 / R)
    assert np.all(exact_run.tau == 5)


def test_seed_prop_d2_bounds(exact_run):
    """max_t log LR_t - log T <= log LR_Unif <= max_t log LR_t (seed Prop. D.2, uniform prior)."""
    mx, un = exact_run.stats["semi-max"], exact_run.stats["semi-unif"]
    assert np.all(un <= mx + 1e-12) and np.all(un >= mx - math.log(10) - 1e-12)


@pytest.mark.twin
def test_exact_vs_sufficient_two_sample(exact_run, sufficient_run, record_property):
    """Both modes draw the same law: two-sample KS test on each statistic and class."""
    pvals = {}
    for test in exact_run.stats:
        for cls in (True, False):
            a = exact_run.stats[test][exact_run.member == cls]
            b = sufficient_run.stats[test][sufficient_run.member == cls]
            pvals[f"{test}/{'member' if cls else 'nonmember'}"] = ks_2samp(a, b).pvalue
    record_property("ks_pvalues", pvals)
    print("exact vs sufficient KS p-values:", {k: round(v, 4) for k, v in pvals.items()})
    assert min(pvals.values()) > P_MIN / len(pvals), pvals


@pytest.fixture(scope="module")
def shifted_mech():
    """Per-step (mu_t, Sigma_t, n_t), d = 2, full covariances (seed App. C)."""
    T = 3
    mu = np.array([[0.0, 0.0], [0.5, -0.2], [1.0, 0.3]])
    cov = np.array([[[1.0, 0.3], [0.3, 0.5]], [[2.0, -0.4], [-0.4, 1.0]],
                    [[0.7, 0.0], [0.0, 1.5]]])
    return EmpiricalMean([4, 6, 9], T, mu=mu, cov=cov, target=[2.0, 1.0])


def _drift_mech():
    """Per-step mu_t and n_t with a stationary covariance (the Final Observation fast path)."""
    return EmpiricalMean([3, 8, 5], 3, mu=[[0.0, 0.0], [1.0, -0.5], [-0.5, 0.4]],
                         cov=[[1.0, -0.3], [-0.3, 0.8]], target=[1.5, 2.0])


@pytest.mark.twin
@pytest.mark.parametrize("which", ["shifted", "drift"])
def test_nonstationary_vs_vectorised_reference(shifted_mech, which):
    """Engine vs the lead's vectorised play (every datum, scored from the releases),
    uniform tau, same SeMI-Unif prior: KS two-sample test per statistic and class."""
    mech = shifted_mech if which == "shifted" else _drift_mech()
    R = 25_000
    eng = simulate(mech, R, 1, tau="uniform")
    ref = play(mech, R, 2, tau="uniform", unif_pmf=np.full(3, 1 / 3))
    pvals = []
    for test in eng.stats:
        for cls in (True, False):
            pvals.append(ks_2samp(eng.stats[test][eng.member == cls],
                                  ref.stats[test][ref.member == cls]).pvalue)
    assert min(pvals) > P_MIN / len(pvals), pvals


@pytest.mark.twin
def test_nonstationary_semi_star_closed_form(shifted_mech):
    res = simulate(shifted_mech, 60_000, 3, tau=2, mode="sufficient")
    n1 = int(res.member.sum())
    tpr, se = _mc_tolerance(shifted_mech, "semi-star", 0.1, 2, res.rounds - n1, n1)
    emp = tpr_at_fpr_se(*res.scores("semi-star"), 0.1)["tpr"][0]
    assert abs(emp - tpr) < SIGMAS * se


@pytest.mark.twin
@pytest.mark.parametrize("data", ["laplace", "bernoulli:0.3"])
def test_engine_vs_per_round_reference(data):
    """Non-Gaussian data: engine vs the straightforward per-round reference (independent
    code path through the mechanism's releases / isolation / log-LR methods)."""
    mech = EmpiricalMean(5, 3, mu=[0.2, -0.1], cov=[[1.0, 0.4], [0.4, 2.0]], target=[2.5, 0.0])
    ref = reference_per_round(mech, 3000, 9, data=data, tau="uniform")
    eng = simulate(mech, 30_000, 10, data=data, tau="uniform")
    pvals = []
    for test in eng.stats:
        for cls in (True, False):
            # Bernoulli data give atoms: round so both code paths put them at the same value
            pvals.append(ks_2samp(np.round(eng.stats[test][eng.member == cls], 9),
                                  np.round(ref.stats[test][ref.member == cls], 9)).pvalue)
    assert min(pvals) > P_MIN / len(pvals), pvals


def test_thread_count_invariance(seed_setting):
    kw = dict(tau="uniform", chunk_size=700, data="student-t:5")
    a = simulate(seed_setting, 5000, 77, **kw)
    b = simulate(seed_setting, 5000, 77, executor=2, progress=True, **kw)
    np.testing.assert_array_equal(a.member, b.member)
    np.testing.assert_array_equal(a.tau, b.tau)
    for k in a.stats:
        np.testing.assert_array_equal(a.stats[k], b.stats[k])
    c = simulate(seed_setting, 5000, 78, **kw)
    assert not np.array_equal(a.stats["semi-star"], c.stats["semi-star"])


def test_numba_thread_setting_invariance(seed_setting):
    numba = pytest.importorskip("numba")
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        a = simulate(seed_setting, 3000, 5, chunk_size=1000, kernel="numba")
        numba.set_num_threads(max(1, min(2, numba.config.NUMBA_NUM_THREADS)))
        b = simulate(seed_setting, 3000, 5, chunk_size=1000, kernel="numba")
    finally:
        numba.set_num_threads(before)
    np.testing.assert_array_equal(a.stats["final"], b.stats["final"])


def test_child_seed_is_spawn_child():
    root = np.random.SeedSequence(123)
    kids = np.random.SeedSequence(123).spawn(4)
    for k in range(4):
        assert child_seed(root, k).generate_state(4).tolist() == kids[k].generate_state(4).tolist()
    root.spawn(2)  # a used root gives the same chunk seeds
    assert child_seed(root, 1).generate_state(2).tolist() == kids[1].generate_state(2).tolist()


@pytest.mark.twin
def test_force_twin_env_gives_same_result(seed_setting, monkeypatch):
    kw = dict(tau="uniform", chunk_size=256, data="exponential")
    a = simulate(seed_setting, 600, 4, kernel="numba", **kw)  # small: forced compiled
    monkeypatch.setenv("SEMI_CORE_FORCE_TWIN", "1")
    b = simulate(seed_setting, 600, 4, **kw)
    assert b.kernel == "numpy-twin"
    np.testing.assert_array_equal(a.member, b.member)
    for k in a.stats:
        np.testing.assert_allclose(a.stats[k], b.stats[k], rtol=1e-12, atol=1e-12)


def test_point_mass_and_pmf_tau(seed_setting):
    pmf = np.zeros(10)
    pmf[[1, 7]] = [0.25, 0.75]
    res = simulate(seed_setting, 20_000, 3, tau=pmf, mode="sufficient")
    assert set(np.unique(res.tau)) == {2, 8}
    frac = (res.tau == 8).mean()
    assert abs(frac - 0.75) < SIGMAS * math.sqrt(0.75 * 0.25 / res.rounds)


@pytest.mark.parametrize("kw,exc,match", [
    (dict(mode="fast"), ValueError, "mode must be one of"),
    (dict(mode="sufficient", data="laplace"), ValueError, "needs data 'gaussian'"),
    (dict(data="student-t:2"), ValueError, "nu must be > 2"),
    (dict(data="bernoulli:1.0"), ValueError, r"p must be in \(0, 1\)"),
    (dict(data="weibull"), ValueError, "unknown distribution"),
    (dict(p_member=1.0), ValueError, "p_member"),
    (dict(tau=11), ValueError, "tau"),
    (dict(unif_pmf=np.ones(10)), ValueError, "unif_pmf"),
    (dict(chunk_size=0), ValueError, "chunk_size"),
    (dict(executor=0), ValueError, "threads"),
    (dict(executor=1.5), TypeError, "executor"),
    (dict(executor="dask"), TypeError, "executor"),
])
def test_bad_inputs(seed_setting, kw, exc, match):
    with pytest.raises(exc, match=match):
        simulate(seed_setting, 10, 0, **kw)


def test_bad_rounds(seed_setting):
    with pytest.raises(ValueError, match="rounds"):
        simulate(seed_setting, 0, 0)


def test_play_chunk_zero_rounds(seed_setting):
    p = build_params(seed_setting, tau=5)
    m, t, s = play_chunk(p, child_seed(0, 0), 0)
    assert m.shape == (0,) and t.shape == (0,) and s.shape == (4, 0)


@pytest.mark.twin
@pytest.mark.parametrize("mode", ["exact", "sufficient"])
def test_d1_block_path_equals_twin_with_zero_mass_steps(seed_setting, mode):
    """The d = 1 block path (tau by counting CDF entries below u_tau) against the NumPy twin
    (searchsorted) with steps of zero mass (flat CDF segments), over two full blocks of 256
    rounds and a partial one: same B, same tau, same statistics (1e-12: summation order)."""
    pmf = np.zeros(10)
    pmf[[0, 3, 4, 9]] = [0.1, 0.4, 0.2, 0.3]
    p = build_params(seed_setting, mode=mode, tau=pmf, p_member=0.6)
    a = play_chunk(p, child_seed(17, 0), 600, twin=False)
    b = play_chunk(p, child_seed(17, 0), 600, twin=True)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    assert set(np.unique(a[1])) == {1, 4, 5, 10}
    np.testing.assert_allclose(a[2], b[2], rtol=1e-12, atol=1e-12)
