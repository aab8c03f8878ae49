"""The anytime-valid one-run audit: SymPy vs numeric vs Monte Carlo, validity, power, inputs.

Monte Carlo tolerances: a rate estimated from R runs is compared with its bound plus
MC_SIGMAS (4.5) binomial standard errors (tests/conftest.py); a mean of N draws with 4.5
standard errors of the mean.
"""

import math

import numpy as np
import pytest
import sympy as sp
from scipy.special import expit
from scipy.stats import binom

from semi_core.audit import AnytimeOneRun, ClaimRefutedError
from semi_core.audit.anytime_one_run import (
    delta_slack,
    gaussian_mu_at,
    simulate_anytime,
    simulate_canaries,
)
from semi_core.audit.one_run import one_run_epsilon
from semi_core.audit.sequential.semi_stream import log_mixture_wealth
from semi_core.stats.gdp import gdp_delta
from semi_core.symbolic import anytime_one_run as sym
from semi_core.symbolic._registry import get_derivation
from tests.conftest import MC_SIGMAS, binomial_se

EPS = [0.0, 0.3, 1.0, 2.5, 6.0]


# -- SymPy == numeric ---------------------------------------------------------------------------
@pytest.mark.parametrize("e", EPS)
def test_posterior_max_is_q(e):
    f = get_derivation("anytime_posterior_max").lambdify()
    assert f(e) == pytest.approx(float(expit(e)), rel=1e-14)


@pytest.mark.parametrize("e", EPS)
def test_excess_density_and_slack(e):
    ex = get_derivation("anytime_excess_density").lambdify()
    assert ex(e) == pytest.approx(0.5 * (1 - float(expit(e))), rel=1e-13)
    sl = get_derivation("anytime_delta_slack").lambdify()
    assert sl(1000, 1e-5, e) == pytest.approx(float(delta_slack(1000, 1e-5, e)), rel=1e-13)


@pytest.mark.parametrize("e", [0.5, 2.0])
@pytest.mark.parametrize("r", [0.0, 0.5, 1.0])
def test_bet_is_the_likelihood_ratio(e, r):
    q = float(expit(e))
    rr = q + r * (1 - q)
    lam = get_derivation("anytime_bet").lambdify()(rr, e)
    assert 1 + lam * (1 - q) == pytest.approx(rr / q, rel=1e-12)
    assert 1 - lam * q == pytest.approx((1 - rr) / (1 - q), rel=1e-12, abs=1e-14)
    assert -1e-12 <= lam <= 1 / q + 1e-12          # rounding of q + 0 (1 - q) - q


@pytest.mark.parametrize("k,n", [(0, 0), (0, 3), (2, 3), (5, 5), (3, 7)])
@pytest.mark.parametrize("q", [0.6, 0.9])
def test_mixture_closed_form_matches_sympy_integral(k, n, q):
    exact = sym.mixture_wealth_integral(k, n)
    val = float(exact.subs(sp.Symbol("q", positive=True), sp.Rational(str(q))))
    assert float(np.exp(log_mixture_wealth(k, n, q))) == pytest.approx(val, rel=1e-10)


@pytest.mark.parametrize("n", [1, 10, 60])
@pytest.mark.parametrize("e", [0.3, 2.0])
def test_mixture_is_a_martingale_at_the_boundary(n, e):
    """E[K_n] = 1 when every guess is right with probability exactly q (fails if the closed
    form or its normalisation is wrong)."""
    q = float(expit(e))
    k = np.arange(n + 1)
    mean = float(np.sum(binom.pmf(k, n, q) * np.exp(log_mixture_wealth(k, n, q))))
    assert mean == pytest.approx(1.0, rel=1e-9)


# -- Lemma 1's delta term: closed form vs quadrature vs Monte Carlo ----------------------------
def _gauss_excess(y, mu, q):
    # pi = phi(y - mu)/(phi(y - mu) + phi(y)) = expit(mu y - mu^2/2)
    pi = expit(mu * y - mu * mu / 2)
    return np.maximum(pi - q, 0) + np.maximum(1 - pi - q, 0)


@pytest.mark.parametrize("e,d", [(1.0, 0.05), (0.5, 0.1)])
def test_expected_excess_equals_delta_over_one_plus_e_eps(e, d, rng):
    """For the Gaussian canary exactly at (eps, delta) the expected posterior excess is
    delta/(1+e^eps) (Lemma 1 with equality): numeric quadrature and Monte Carlo."""
    from scipy.integrate import quad

    mu, q = gaussian_mu_at(e, d), float(expit(e))
    assert float(gdp_delta(e, mu)) == pytest.approx(d, rel=1e-9)
    bound = d / (1 + math.exp(e))

    def dens(y):  # the balanced mixture of N(mu, 1) and N(0, 1)
        return 0.5 * (np.exp(-(y - mu) ** 2 / 2) + np.exp(-y * y / 2)) / math.sqrt(2 * math.pi)

    val, _ = quad(lambda y: _gauss_excess(y, mu, q) * dens(y), -40, 40, points=[0, mu],
                  limit=400, epsabs=1e-13)
    assert val == pytest.approx(bound, rel=1e-6)
    n = 400_000
    b = rng.random(n) < 0.5
    y = rng.standard_normal(n) + mu * b
    x = _gauss_excess(y, mu, q)
    assert abs(x.mean() - bound) <= MC_SIGMAS * x.std() / math.sqrt(n)


# -- validity (fast tier; the >= 1000-run cells are slow) ---------------------------------------
@pytest.mark.parametrize("kind,e,d", [("rr", 1.0, 0.0), ("gaussian", 1.0, 1e-4)])
def test_bound_never_exceeds_truth_beyond_failure_prob(kind, e, d):
    runs = 300
    out = simulate_anytime(kind, true_epsilon=e, claimed_epsilon=e, delta=d, n_canaries=300,
                           runs=runs, seed=11, failure_prob=0.1, compare_fixed=False)
    # refuting the (true) claim is the stronger event: bound >= truth
    assert out["refuted_rate"] <= 0.1 + MC_SIGMAS * binomial_se(0.1, runs)
    assert out["ever_above_truth"] <= out["refuted_rate"]


def test_batching_does_not_change_the_result():
    a = simulate_anytime("rr", true_epsilon=4.0, claimed_epsilon=1.0, delta=0.0, n_canaries=400,
                         runs=20, seed=3, compare_fixed=False)
    b = simulate_anytime("rr", true_epsilon=4.0, claimed_epsilon=1.0, delta=0.0, n_canaries=400,
                         runs=20, seed=3, batch=1, compare_fixed=False)
    c = simulate_anytime("rr", true_epsilon=4.0, claimed_epsilon=1.0, delta=0.0, n_canaries=400,
                         runs=20, seed=3, batch=37, compare_fixed=False)
    for x in (b, c):
        assert np.array_equal(a["bound"], x["bound"])
        assert np.array_equal(a["refuted_at"], x["refuted_at"])


def test_refutes_a_false_claim_early_and_bound_is_sound():
    out = simulate_anytime("rr", true_epsilon=8.0, claimed_epsilon=2.0, delta=0.0,
                           n_canaries=600, runs=30, seed=5)
    assert out["refuted_rate"] == 1.0
    assert np.median(out["refuted_at"]) < 200          # far before the end of the run
    assert (out["bound"] <= 8.0).all()
    # anytime validity costs something: never above the fixed-time bound by more than a step
    assert (out["bound"] <= out["fixed_time"] + 0.05).all()


def test_fixed_sequence_reads_the_grid_in_order():
    a = AnytimeOneRun(1.0, epsilon_grid=[0.5, 1.0, 3.0], guess_fraction=1.0, warmup=1,
                      refit_every=1)
    s = np.r_[-1.0, 1.0, np.tile([1.0, -1.0], 100)]
    a.update(s, s > 0)
    assert a.refuted and a.epsilon_lower_bound == 3.0
    lw = [log_mixture_wealth(a.correct, a.guesses, float(expit(e))) for e in (0.5, 1.0, 3.0)]
    assert min(lw) >= math.log(1 / 0.05)
    assert list(a.rejected_at) == sorted(a.rejected_at)
    # the bound after all correct guesses equals the largest grid epsilon whose wealth crossed
    assert a.fixed_time_epsilon() >= a.epsilon_lower_bound


def test_delta_slack_enters_the_threshold():
    a = AnytimeOneRun(2.0, delta=1e-4, n_canaries=100, failure_prob=0.05)
    i = int(np.flatnonzero(a.epsilon_grid == 2.0)[0])
    assert a._level[i] == pytest.approx(0.05 - 100 * 1e-4 * math.exp(-2.0), rel=1e-12)
    # grid points whose slack exceeds half the level are left out in advance
    assert (delta_slack(100, 1e-4, a.epsilon_grid) <= 0.025 + 1e-15).all()
    with pytest.raises(ValueError, match="n_canaries"):
        AnytimeOneRun(2.0, delta=1e-5)
    with pytest.raises(ValueError, match="leaves no level"):
        AnytimeOneRun(0.5, delta=1e-3, n_canaries=1000)


def test_fixed_time_bound_is_steinke():
    a = AnytimeOneRun(1.0, threshold=(-0.5, 0.5))
    s = np.tile([1.0, -1.0], 30)
    a.update(s, s > 0)
    assert a.fixed_time_epsilon() == one_run_epsilon(60, 60, 60, delta=0.0, failure_prob=0.05)


def test_display_and_dict():
    a = AnytimeOneRun(1.0)
    rng = np.random.default_rng(0)
    a.update(*simulate_canaries("gaussian", 100, 1.0, 1e-5, rng))
    d = a.to_dict()
    assert d["assumption"] == "one-run-bernoulli-half" and d["canaries_seen"] == 100
    assert "AnytimeOneRun(claimed_epsilon=1" in repr(a)
    assert len(a.summary()) == len(d)


# -- bad input -----------------------------------------------------------------------------------
@pytest.mark.parametrize("kw,match", [
    ({"claimed_epsilon": -1.0}, "claimed_epsilon"),
    ({"claimed_epsilon": float("nan")}, "claimed_epsilon"),
    ({"claimed_epsilon": 1.0, "failure_prob": 0.7}, "failure_prob"),
    ({"claimed_epsilon": 1.0, "guess_fraction": 0.0}, "guess_fraction"),
    ({"claimed_epsilon": 1.0, "threshold": (1.0, 0.0)}, "threshold"),
    ({"claimed_epsilon": 1.0, "epsilon_grid": [0.0, -1.0]}, "epsilon_grid"),
    ({"claimed_epsilon": 1.0, "warmup": 0}, "warmup"),
])
def test_bad_arguments(kw, match):
    with pytest.raises((ValueError, TypeError), match=match):
        AnytimeOneRun(**kw)


def test_bad_updates():
    a = AnytimeOneRun(1.0, n_canaries=4, delta=1e-6)
    with pytest.raises(ValueError, match="scores"):
        a.update([0.0, np.nan], [1, 0])
    with pytest.raises(ValueError, match="one label per score"):
        a.update([0.0, 1.0], [1])
    with pytest.raises(ValueError, match="member"):
        a.update([0.0, 1.0], [1, 2])
    a.update([0.0, 1.0], [1, 0])
    with pytest.raises(ValueError, match="n_canaries = 4"):
        a.update([0.0, 1.0, 2.0], [1, 0, 1])
    b = AnytimeOneRun(1.0)
    with pytest.raises(ValueError, match="Bernoulli"):
        b.update(np.zeros(40), np.ones(40, bool))
    with pytest.raises(ValueError, match="Bernoulli"):       # the refusal sticks
        b.update([0.0, 1.0], [0, 1])


@pytest.mark.parametrize("n", [1, 7, 200])
def test_balance_mixture_is_a_martingale_under_fair_inclusion(n):
    """E[2^n B(N1 + 1, N0 + 1)] = 1 under Bin(n, 1/2): Ville bounds the ever-refusal rate."""
    from scipy.special import betaln

    k = np.arange(n + 1)
    mean = np.sum(binom.pmf(k, n, 0.5) * np.exp(n * math.log(2) + betaln(k + 1, n - k + 1)))
    assert mean == pytest.approx(1.0, rel=1e-9)


# -- the training-loop adapter -------------------------------------------------------------------
def test_callback_raises_or_flags():
    from semi_core.integrations.anytime import AnytimeCallback

    rng = np.random.default_rng(1)
    s, y = simulate_canaries("rr", 400, 8.0, 0.0, rng)
    cb = AnytimeCallback(AnytimeOneRun(2.0))
    with pytest.raises(ClaimRefutedError, match="refuted after"):
        for i in range(0, 400, 8):
            cb(s[i:i + 8], y[i:i + 8])
    assert 0 < cb.audit.refuted_at < 400
    flag = AnytimeCallback(AnytimeOneRun(2.0), on_refute="flag")
    got = [flag(s[i:i + 8], y[i:i + 8]) for i in range(0, 400, 8)]
    assert got[-1] and not got[0]
    with pytest.raises(ValueError, match="on_refute"):
        AnytimeCallback(AnytimeOneRun(2.0), on_refute="stop")


def test_torch_step_hook():
    torch = pytest.importorskip("torch")
    from semi_core.integrations.anytime import AnytimeCallback

    rng = np.random.default_rng(2)
    s, y = simulate_canaries("rr", 300, 8.0, 0.0, rng)
    cb = AnytimeCallback(AnytimeOneRun(2.0), on_refute="flag")
    w = torch.zeros(2, requires_grad=True)
    opt = torch.optim.SGD([w], lr=0.1)
    step = {"t": 0}

    def score_fn():  # 3 canaries graded every other step (none after the 300th)
        t = step["t"]
        step["t"] += 1
        i = 3 * (t // 2)
        return (s[i:i + 3], y[i:i + 3]) if t % 2 == 0 else None

    opt.register_step_post_hook(cb.step_hook(score_fn))
    for _ in range(200):
        opt.zero_grad()
        (w ** 2).sum().backward()
        opt.step()
    assert cb.audit.canaries_seen == 300 and cb.audit.refuted


def test_opacus_optimizer_attach():
    torch = pytest.importorskip("torch")
    pytest.importorskip("opacus")
    from opacus import PrivacyEngine

    from semi_core.integrations.anytime import AnytimeCallback

    rng = np.random.default_rng(4)
    s, y = simulate_canaries("rr", 200, 8.0, 0.0, rng)
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 1)
    data = torch.utils.data.TensorDataset(torch.randn(64, 3), torch.randn(64, 1))
    model, opt, loader = PrivacyEngine().make_private(
        module=model, optimizer=torch.optim.SGD(model.parameters(), lr=0.1),
        data_loader=torch.utils.data.DataLoader(data, batch_size=8), noise_multiplier=1.0,
        max_grad_norm=1.0)
    cb = AnytimeCallback(AnytimeOneRun(2.0))
    fed = {"i": 0}

    def score_fn():  # 25 canaries graded after every step
        i = fed["i"]
        fed["i"] += 25
        return s[i:i + 25], y[i:i + 25]

    cb.attach(opt, score_fn)
    with pytest.raises(ClaimRefutedError):
        for _ in range(3):
            for x, t in loader:
                opt.zero_grad()
                ((model(x) - t) ** 2).mean().backward()
                opt.step()
    assert cb.audit.refuted and cb.audit.canaries_seen % 25 == 0
    with pytest.raises(TypeError, match="step"):
        cb.attach(object(), score_fn)


# -- slow: >= 1000 runs per cell ------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("kind,e,d", [("rr", 1.0, 0.0), ("rr", 2.0, 0.0),
                                      ("gaussian", 2.0, 1e-5), ("gaussian", 1.0, 1e-4)])
def test_validity_1000_runs(kind, e, d):
    runs = 1000
    out = simulate_anytime(kind, true_epsilon=e, claimed_epsilon=e, delta=d, n_canaries=1000,
                           runs=runs, seed=101, failure_prob=0.05, compare_fixed=False)
    assert out["refuted_rate"] <= 0.05 + MC_SIGMAS * binomial_se(0.05, runs)
