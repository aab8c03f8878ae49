"""Poisson-sampled user loops: the mixture log-LR three ways (SymPy, log-space numeric, Monte
Carlo), the loop end to end with variable batch sizes, the relation's accountants, the Opacus
hand-over and the measured memory estimate."""

import math
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
sp = pytest.importorskip("sympy")

from semi_core.integrations.training import (  # noqa: E402
    TrainingLoop,
    accountant_epsilon,
    audit_training,
)
from semi_core.sgd.lr import (  # noqa: E402
    poisson_dirac_final_log_lr,
    poisson_dirac_log_lr,
    poisson_mixture_log_lr,
)
from semi_core.symbolic import get_derivation  # noqa: E402
from tests.integrations.user_loop import (  # noqa: E402
    BATCH,
    CLIP,
    LR,
    SIGMA,
    STEPS,
    Q,
    X,
    Y,
    make_model,
    poisson_train,
    user_train,
)


# ------------------------------------------------------------------ the formula, three ways
def test_symbolic_equals_numeric():
    rng = np.random.default_rng(0)
    step = get_derivation("poisson_dirac_step_log_lr").lambdify()
    mix = get_derivation("poisson_step_log_lr").lambdify()
    for _ in range(20):
        s, a = rng.normal(0, 3, 2)
        v, q = rng.uniform(0.2, 4.0), rng.uniform(0.01, 0.99)
        assert poisson_dirac_log_lr(s, q=q, a=a, var=v) == pytest.approx(step(s, a, v, q),
                                                                          rel=1e-12)
        ell = rng.normal(0, 5)
        assert poisson_mixture_log_lr(ell, q) == pytest.approx(mix(ell, q), rel=1e-12)
    der = get_derivation("poisson_dirac_final_log_lr")
    S, A, V, q = (sp.Symbol(n) for n in ("S", "A", "V", "q"))
    for T in (1, 3, 6):
        S_, A_, V_, q_ = 1.7, 0.3, 2.5, 0.2
        expr = der.expr.subs({der.symbols[4]: T}).doit()
        want = float(expr.subs(dict(zip(der.symbols[:4], (S_, A_, V_, q_), strict=True))))
        assert poisson_dirac_final_log_lr(np.array([S_]), q=q_, steps=T, A=A_, V=V_)[0] == \
            pytest.approx(want, rel=1e-12)


def test_log_space_is_stable_and_exact_at_the_edges():
    # q = 1: the plain Dirac log-LR 2(s - a - 1/2)/v; huge s: no overflow, slope 1/v
    assert poisson_dirac_log_lr(3.0, q=1.0, a=0.0, var=2.0) == pytest.approx((2 * 3 - 1) / 4)
    big = poisson_dirac_log_lr(1e4, q=0.01, a=0.0, var=1.0)
    assert np.isfinite(big) and big == pytest.approx(math.log(0.01) + (2e4 - 1) / 2)
    assert poisson_mixture_log_lr(-np.inf, 0.3) == pytest.approx(math.log(0.7))
    with pytest.raises(ValueError, match="q"):
        poisson_mixture_log_lr(0.0, 0.0)
    with pytest.raises(ValueError, match="var"):
        poisson_dirac_log_lr(0.0, q=0.5, a=0.0, var=0.0)


def test_monte_carlo_the_mixture_is_the_likelihood_ratio():
    """E_{H0}[LR] = 1 and E_{H0}[LR * 1{s > c}] = P_{H1}(s > c) for the per-step mixture
    and for the final-observation binomial mixture. 200,000 H0 draws; tolerance 5 standard
    errors of the sample mean (sd of LR * indicator / sqrt(n))."""
    rng = np.random.default_rng(1)
    n, q, a, v, T = 200_000, 0.3, 0.4, 1.5, 4
    s0 = rng.normal(a, math.sqrt(v), n)
    lr = np.exp(poisson_dirac_log_lr(s0, q=q, a=a, var=v))
    assert abs(lr.mean() - 1) < 5 * lr.std() / math.sqrt(n)
    inc = rng.random(n) < q
    s1 = rng.normal(a, math.sqrt(v), n) + inc
    for c in (0.0, 1.0, 2.0):
        w = lr * (s0 > c)
        p1 = (s1 > c).mean()
        se = math.hypot(w.std() / math.sqrt(n), math.sqrt(p1 * (1 - p1) / n))
        assert abs(w.mean() - p1) < 5 * se
    S0 = rng.normal(T * a, math.sqrt(T * v), n)
    LR = np.exp(poisson_dirac_final_log_lr(S0, q=q, steps=T, A=T * a, V=T * v))
    S1 = rng.normal(T * a, math.sqrt(T * v), n) + rng.binomial(T, q, n)
    assert abs(LR.mean() - 1) < 5 * LR.std() / math.sqrt(n)
    for c in (1.0, 3.0):
        w = LR * (S0 > c)
        p1 = (S1 > c).mean()
        se = math.hypot(w.std() / math.sqrt(n), math.sqrt(p1 * (1 - p1) / n))
        assert abs(w.mean() - p1) < 5 * se


# ------------------------------------------------------------------ the loop
def _poisson_loop(train=poisson_train, **kw):
    kw = {"canary": "dirac", "noise_multiplier": SIGMA, **kw}
    return TrainingLoop(train, make_model(), reference=(X[:64], Y[:64]), steps=STEPS, lr=LR,
                        batch_size=BATCH, max_grad_norm=CLIP, sampler="poisson",
                        sample_rate=Q, **kw)


def test_variable_batches_fail_fixed_with_a_message_that_says_what_to_do():
    loop = TrainingLoop(poisson_train, make_model(), reference=(X[:64], Y[:64]), steps=STEPS,
                        lr=LR, batch_size=BATCH, noise_multiplier=SIGMA, max_grad_norm=CLIP)
    with pytest.raises(ValueError, match="sampler='poisson', sample_rate=q"):
        loop.release(np.array([True]), np.array([1]), np.random.default_rng(0))
    with pytest.raises(ValueError, match="sample_rate"):
        TrainingLoop(poisson_train, make_model(), reference=(X[:64], Y[:64]), steps=STEPS,
                     lr=LR, batch_size=BATCH, noise_multiplier=SIGMA, max_grad_norm=CLIP,
                     sampler="poisson")


def test_poisson_loop_inserts_with_the_sample_rate_and_scores():
    loop = _poisson_loop()
    assert "semi-star" not in loop.tests
    runs = [loop._one_run(True, 1, seed) for seed in range(3)]
    assert all(r.shape == (STEPS, loop.fm.d) for r in runs)
    # the Crafter's inclusion coin: rate Q per step of a member run, none in a non-member run
    from semi_core.integrations.training import Run
    inc = np.array([Run(loop, member=True, tau=1, seed=s).included for s in range(4000)])
    assert abs(inc.mean() - Q) < 5 * math.sqrt(Q * (1 - Q) / inc.size)
    assert not Run(loop, member=False, tau=1, seed=0).included.any()
    # isolated coordinate: s_t = K_t + sigma xi exactly, so the mixture is the exact LR
    rel = loop.release(np.array([True, False]), np.array([1, 1]), np.random.default_rng(0))
    lr = loop.log_lr_steps(rel)
    s, a, var = loop._dirac_parts(rel)
    np.testing.assert_allclose(a, 0.0, atol=1e-12)
    np.testing.assert_allclose(var, SIGMA ** 2)
    np.testing.assert_allclose(lr, poisson_dirac_log_lr(s, q=Q, a=0.0, var=SIGMA ** 2))


def test_poisson_audit_compares_with_the_relation_and_says_what_differs():
    rep = audit_training(_poisson_loop(), 24, seed=0, methods=["band", "gdp"], chunk_size=12,
                         claimed_epsilon=8.0)
    acc = rep["accountant"]
    assert acc["reference"] == "dp_accounting_pld"
    assert acc["epsilon"] == pytest.approx(acc["opacus_prv"], abs=0.02)   # PRV grid
    assert acc["epsilon"] < acc["opacus_rdp"] * 1.001
    assert rep["refuted"] == [] and rep["warnings"] == []
    rows = list(rep.summary())
    assert {r["test"] for r in rows} == {"semi-unif", "semi-max", "final", "semi-sum"}
    assert all(r["largest_certifiable"] > 0 for r in rows)
    assert "replace-one" in rep["headline"]["differs"] or rep["headline"]["differs"]


def test_fixed_relation_is_one_replace_one_step():
    acc = accountant_epsilon(SIGMA, 1e-5)
    assert acc["epsilon"] == pytest.approx(2.0, rel=1e-6)
    assert acc["dp_accounting_pld"] == pytest.approx(2.0, abs=0.05)
    acc_p = accountant_epsilon(SIGMA, 1e-5, sample_rate=1.0, steps=1)
    assert acc_p["epsilon"] < acc["epsilon"]     # add/remove: half the sensitivity


def test_shuffle_accepts_a_short_last_batch():
    def short_last(model, run):
        for t in range(1, run.steps + 1):
            n = BATCH if t < run.steps else BATCH - 3
            g = torch.zeros(n, 83, dtype=torch.float64)
            run.canary_gradients(t, g)
            run.record(model)

    loop = TrainingLoop(short_last, make_model(), reference=(X[:64], Y[:64]), steps=STEPS,
                        lr=LR, batch_size=BATCH, noise_multiplier=SIGMA, max_grad_norm=CLIP,
                        sampler="shuffle")
    loop.release(np.array([True]), np.array([STEPS]), np.random.default_rng(0))


def test_arguments_checked_before_training():
    calls = []

    def counting(model, run):
        calls.append(1)
        user_train(model, run)

    loop = TrainingLoop(counting, make_model(), reference=(X[:64], Y[:64]), steps=STEPS,
                        lr=LR, batch_size=BATCH, noise_multiplier=SIGMA, max_grad_norm=CLIP)
    for kw, msg in (({"methods": ["nope"]}, "methods"), ({"delta": 2.0}, "delta"),
                    ({"tau": STEPS + 1}, "tau"), ({"chunk_size": 0}, "chunk_size"),
                    ({"failure_prob": 0}, "failure_prob")):
        with pytest.raises(ValueError, match=msg):
            audit_training(loop, 8, **kw)
    assert calls == []


# ------------------------------------------------------------------ Opacus hand-over
def _opacus_objects(poisson=True, n=64, batch=16):
    opacus = pytest.importorskip("opacus")
    g = torch.Generator().manual_seed(0)
    x = torch.randn(n, 6, generator=g)
    x[:, -1] = 0
    y = (x[:, 0] > 0).long()
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(6, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=batch)
    with warnings.catch_warnings():   # Opacus' secure-RNG notice (once per process)
        warnings.simplefilter("ignore", UserWarning)
        pe = opacus.PrivacyEngine()
        model, opt, loader = pe.make_private_with_epsilon(
            module=model, optimizer=opt, data_loader=loader, target_epsilon=4.0,
            target_delta=1e-5, epochs=5, max_grad_norm=1.0, poisson_sampling=poisson)
    return model, opt, loader, pe


def epoch(model, optimizer, loader):            # the user's training step, unchanged
    criterion = torch.nn.CrossEntropyLoss()
    for data, target in loader:
        optimizer.zero_grad()
        criterion(model(data), target).backward()
        optimizer.step()


def test_from_opacus_reads_the_users_objects_and_audits():
    model, opt, loader, pe = _opacus_objects()
    with pytest.raises(ValueError, match="steps"):
        TrainingLoop.from_opacus(epoch, model, opt, loader, pe, epochs=5, steps=5 * 4 + 1)
    loop = TrainingLoop.from_opacus(epoch, model, opt, loader, pe, target_epsilon=4.0,
                                    target_delta=1e-5, epochs=5, n_reference=16)
    assert loop.sampler == "poisson" and loop.sample_rate == pytest.approx(0.25)
    assert loop.T == len(loader) and loop.noise_multiplier == opt.noise_multiplier
    head = loop.headline
    assert head["epsilon"] == pytest.approx(4.0, abs=0.1) and head["steps"] == 5 * len(loader)
    hist = list(pe.accountant.history)
    rep = audit_training(loop, 8, seed=0, chunk_size=4, methods=["band"])
    assert pe.accountant.history == hist            # the user's accountant is untouched
    assert rep["refuted"] == [] and rep["warnings"] == []
    assert "not held back" in " ".join(rep["notes"])
    assert "headline counts 20" in rep["headline"]["differs"]
    theta = loop.release(np.array([True]), np.array([1]), np.random.default_rng(0))
    assert np.isfinite(theta).all() and not np.allclose(theta[0, -1], loop.theta0.numpy())


# ------------------------------------------------------------------ memory
@pytest.mark.slow
def test_memory_estimate_within_a_factor_of_the_measured_peak():
    """A small convnet: the runner's estimate (measured by the loop's pilot) is within a
    factor 3 of the peak resident growth of the same play."""
    from semi_core.game.play import estimate_play, play
    from semi_core.integrations.training import _peak_growth

    def train(model, run):
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for t in range(1, run.steps + 1):
            x = torch.randn(32, 1, 12, 12, generator=run.generator)
            y = torch.randint(0, 10, (32,), generator=run.generator)
            from torch.func import functional_call, grad, vmap
            params = {k: v.detach() for k, v in model.named_parameters()}

            def loss(p, xx, yy):
                return torch.nn.functional.cross_entropy(
                    functional_call(model, p, (xx[None],)), yy[None])

            g = vmap(grad(loss), in_dims=(None, 0, 0))(params, x, y)
            g = run.canary_gradients(t, g)
            for k, p in model.named_parameters():
                p.grad = g[k].sum(0) / 32 + torch.randn(p.shape, generator=run.generator)
            opt.step()
            run.record(model)

    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Conv2d(1, 8, 3), torch.nn.ReLU(), torch.nn.Flatten(),
                              torch.nn.Linear(8 * 10 * 10, 10))
    ref = (torch.randn(64, 1, 12, 12), torch.randint(0, 10, (64,)))
    loop = TrainingLoop(train, net, reference=ref, steps=3, lr=0.1, batch_size=32,
                        noise_multiplier=1.0, max_grad_norm=1.0, loss="cross_entropy")
    est = estimate_play(loop, 32, chunk_size=32)
    peak = _peak_growth(lambda: play(loop, 32, seed=0, tau=2, chunk_size=32))
    assert peak / 3 < est.peak_bytes < 3 * peak + 50e6, (est.peak_bytes, peak)


def _opacus_poisson(sigma, n=64, batch=32):
    opacus = pytest.importorskip("opacus")
    g = torch.Generator().manual_seed(0)
    x = torch.randn(n, 6, generator=g)
    x[:, -1] = 0
    y = (x[:, 0] > 0).long()
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(6, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=batch)
    with warnings.catch_warnings():   # Opacus' secure-RNG notice (once per process)
        warnings.simplefilter("ignore", UserWarning)
        pe = opacus.PrivacyEngine()
        return (*pe.make_private(module=model, optimizer=opt, data_loader=loader,
                                 noise_multiplier=sigma, max_grad_norm=1.0), pe)


def test_the_canary_goes_through_the_users_sampler():
    """The loader samples at q = 0.5 while the accounting says 0.02: with almost no noise the
    standardised update at the isolated coordinate is the number of canary copies, so the
    inclusion rate is read off: 0.5 (80 Bernoulli draws; 5 SE), not 0.02."""
    model, opt, loader, pe = _opacus_poisson(sigma=1e-3)
    loop = TrainingLoop.from_opacus(epoch, model, opt, loader, pe, n_reference=16,
                                    sample_rate=0.02)
    assert loop.sample_rate == 0.02 and "not the loader's 0.5" in " ".join(loop.notes)
    rel = loop.release(np.ones(40, bool), np.ones(40, int), np.random.default_rng(0))
    s, _, _ = loop._dirac_parts(rel)
    k = np.round(s)
    np.testing.assert_allclose(s, k, atol=0.05)
    assert set(np.unique(k)) <= {0.0, 1.0}
    assert abs(k.mean() - 0.5) < 5 * math.sqrt(0.25 / k.size)
    rel0 = loop.release(np.zeros(10, bool), np.ones(10, int), np.random.default_rng(1))
    assert np.abs(loop._dirac_parts(rel0)[0]).max() < 0.05       # no canary in non-members


@pytest.mark.slow
def test_misreported_sample_rate_is_caught():
    """sigma = 1, the loader samples at 0.5, the accounting claims 0.02 (relation epsilon
    0.52 at delta 1e-5 over 2 steps): 2000 runs (about 16 CPU-s) certify more (band and cp on
    semi-sum); the same runs with the true rate declared (relation epsilon 4.85) are not
    refuted."""
    model, opt, loader, pe = _opacus_poisson(sigma=1.0)
    bad = TrainingLoop.from_opacus(epoch, model, opt, loader, pe, n_reference=16,
                                   sample_rate=0.02)
    with pytest.warns(UserWarning, match="leaks more than it claims"):
        rep = audit_training(bad, 2000, seed=0, methods=["band", "cp"], chunk_size=50)
    assert {"semi-sum/band", "semi-sum/cp"} <= set(rep["refuted"])
    good = TrainingLoop.from_opacus(epoch, model, opt, loader, pe, n_reference=16)
    rep = audit_training(good, 2000, seed=0, methods=["band", "cp"], chunk_size=50)
    assert rep["refuted"] == []
