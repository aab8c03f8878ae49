"""Many canaries in one run of a user's loop (:mod:`semi_core.integrations.one_run_training`)."""

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402
from torch.func import functional_call, grad, vmap  # noqa: E402

from semi_core.integrations.one_run_training import (  # noqa: E402
    OneRunLoop,
    OneRunTrainingResult,
    audit_one_run,
    poisson_epsilon,
)
from semi_core.sgd.one_run import draw_inclusion  # noqa: E402

F_REAL, F_ZERO = 6, 40
LR, BATCH, CLIP = 0.2, 64, 1.0


def _data(n=2000, zero=F_ZERO, dtype=torch.float64):
    g = torch.Generator().manual_seed(0)
    x = torch.zeros(n, F_REAL + zero, dtype=dtype)
    x[:, :F_REAL] = torch.randn(n, F_REAL, generator=g, dtype=dtype)
    return x, (x[:, 0] > 0).long() + (x[:, 1] > 1).long()


X, Y = _data()


def make_model(dtype=torch.float64, features=F_REAL + F_ZERO):
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(features, 8), nn.ReLU(), nn.Linear(8, 3)).to(dtype)


def make_train(sigma, *, use_canary=True, dtype_seen=None, data=(X, Y)):
    """The README's plain-torch DP-SGD loop (fixed batches); ``use_canary=False`` trains on the
    gradients without the canaries (a null run); ``dtype_seen`` collects the parameter dtype."""
    dx, dy = data

    def train(model, run):
        opt = torch.optim.SGD(model.parameters(), lr=LR)
        params = dict(model.named_parameters())

        def loss(p, x, y):
            return nn.functional.cross_entropy(functional_call(model, p, (x[None],)), y[None])

        for t in range(1, run.steps + 1):
            idx = torch.randperm(len(dx), generator=run.generator)[:BATCH]
            x, y = run.canary_batch(t, dx[idx], dy[idx])
            g = vmap(grad(loss), in_dims=(None, 0, 0))(
                {k: v.detach() for k, v in params.items()}, x, y)
            g2 = run.canary_gradients(t, g)
            g = g2 if use_canary else g
            f = (CLIP / torch.cat([v.flatten(1) for v in g.values()], 1).norm(dim=1)).clamp(max=1)
            for k, p in params.items():
                if dtype_seen is not None:
                    dtype_seen.add(p.dtype)
                noise = sigma * CLIP * torch.randn(p.shape, generator=run.generator,
                                                   dtype=p.dtype)
                p.grad = ((g[k] * f.view(-1, *[1] * p.dim())).sum(0) + noise) / BATCH
            opt.step()
            run.record(model)
    return train


def dirac_loop(sigma, m=300, steps=10, **kw):
    train_kw = {k: kw.pop(k) for k in ("use_canary", "dtype_seen", "data") if k in kw}
    model = kw.pop("model", None) or make_model()
    return OneRunLoop(make_train(sigma, **train_kw), model, reference=(X[:128], Y[:128]),
                      steps=steps, lr=LR, batch_size=BATCH, noise_multiplier=sigma,
                      max_grad_norm=CLIP, canaries=m, **kw)


def test_dirac_scores_follow_the_derived_law_and_certify():
    # isolated coordinates: s = +-1 + sigma*xi, a = 0, var = sigma^2, so the score
    # 2(s - a)/var is N(+-2/sigma^2, 4/sigma^2) (module docstring); the class means must
    # match within 4 standard errors (SE = (2/sigma)/sqrt(class size))
    sigma = 1.0
    res = audit_one_run(dirac_loop(sigma), seed=3)
    assert isinstance(res, OneRunTrainingResult)
    s = res.scores["dirac"]
    for sign, sel in ((1.0, res.member), (-1.0, ~res.member)):
        se = (2 / sigma) / math.sqrt(sel.sum())
        assert abs(s[sel].mean() - sign * 2 / sigma ** 2) < 4 * se
        assert abs(s[sel].std(ddof=1) - 2 / sigma) < 4 * (2 / sigma) / math.sqrt(2 * sel.sum())
    # mu = 2 per canary: m = 300 guesses far better than chance
    assert res.epsilon_lower_bound("dirac", "one-run") > 0.5
    assert res.best() <= res.epsilon
    assert res.assumption == "one-run-bernoulli-half"
    for per in res.bounds.values():
        for r in per.values():
            assert r.assumption == "one-run-bernoulli-half"  # fdp: distribution-free curve
    assert np.array_equal(res.member, draw_inclusion(300, 3))
    assert "one-run-bernoulli-half" in repr(res)
    rows = res.summary().to_dict()
    assert {r["method"] for r in rows} == {"one-run", "one-run-fdp"}
    assert res.to_dict()["assumption_text"].startswith("each canary")


def test_same_seed_same_audit_and_gdp_tradeoff_names_its_assumption():
    a = audit_one_run(dirac_loop(2.0, m=100), seed=5, tradeoff="gdp")
    b = audit_one_run(dirac_loop(2.0, m=100), seed=5, tradeoff="gdp")
    assert np.array_equal(a.scores["dirac"], b.scores["dirac"])
    assert a.bounds["dirac"]["one-run-fdp"].assumption == "one-run-bernoulli-half+mu-gdp"
    assert a.bounds["dirac"]["one-run"].assumption == "one-run-bernoulli-half"


def test_null_run_certifies_nothing():
    # the loop drops the canaries' gradients: the scores do not depend on the bits
    res = audit_one_run(dirac_loop(1.0, use_canary=False), seed=1)
    assert res.best() == 0.0 and res.refuted == []


def test_input_canaries_white_and_black_box():
    m = 120
    cx = torch.zeros(m, F_REAL + F_ZERO, dtype=torch.float64)
    cx[np.arange(m), F_REAL + np.arange(m) % F_ZERO] = 4.0
    cy = torch.as_tensor(np.arange(m) % 3)
    loop = OneRunLoop(make_train(0.5), make_model(), reference=(X[:128], Y[:128]), steps=6,
                      lr=LR, batch_size=BATCH, noise_multiplier=0.5, max_grad_norm=CLIP,
                      canary="input", canary_records=(cx, cy))
    res = audit_one_run(loop, seed=0)
    assert set(res.scores) == {"step_log_lr", "loss"}
    # white-box: the per-step log-LR of an included canary is higher on average (mu ~ 4 per
    # canary at sigma 0.5): the class means differ by more than 4 pooled standard errors
    s = res.scores["step_log_lr"]
    se = math.sqrt(s[res.member].var() / res.member.sum() + s[~res.member].var()
                   / (~res.member).sum())
    assert s[res.member].mean() - s[~res.member].mean() > 4 * se
    assert res.epsilon_lower_bound("step_log_lr") > 0


def test_design_checked_before_training():
    calls = []

    def train(model, run):
        calls.append(1)

    kw = dict(reference=(X[:128], Y[:128]), steps=2, lr=LR, batch_size=BATCH,
              noise_multiplier=1.0, max_grad_norm=CLIP)
    with pytest.raises(ValueError, match="exceed batch_size"):
        OneRunLoop(train, make_model(), canaries=200, **kw)
    with pytest.raises(ValueError, match="canaries"):
        OneRunLoop(train, make_model(), canaries=10**6, **kw)
    with pytest.raises(ValueError, match="sample_rate applies to input"):
        OneRunLoop(train, make_model(), canaries=100, sample_rate=0.1, **kw)
    with pytest.raises(ValueError, match="device='meta'"):
        OneRunLoop(train, make_model(), canaries=100, device="meta", **kw)
    with pytest.raises(ValueError, match="methods"):
        audit_one_run(OneRunLoop(train, make_model(), canaries=100, **kw), methods=["band"])
    loop = OneRunLoop(train, make_model(), canaries=100, **kw)
    with pytest.raises(ValueError, match="recorded 0 states"):
        audit_one_run(loop)
    assert calls == [1]


def test_forgotten_canary_call_is_an_error():
    def train(model, run):
        for _ in range(run.steps):
            run.record(model)
    loop = OneRunLoop(train, make_model(), reference=(X[:128], Y[:128]), steps=2, lr=LR,
                      batch_size=BATCH, noise_multiplier=1.0, max_grad_norm=CLIP, canaries=100)
    with pytest.raises(ValueError, match="never called run.canary_gradients"):
        audit_one_run(loop)


def test_float32_model_trains_in_float32_statistics_in_float64():
    seen = set()
    model = make_model(torch.float32)
    loop = dirac_loop(1.0, m=100, model=model, dtype_seen=seen, device="cpu",
                     data=(X.float(), Y))
    res = audit_one_run(loop, seed=2)
    assert seen == {torch.float32}
    assert res.scores["dirac"].dtype == np.float64
    assert res.config["model_dtype"] == "float32" and res.config["device"] == "cpu"
    # float32 training, float64 statistics: the scores still follow the derived law
    # N(+-2/sigma^2, 4/sigma^2) within 4 standard errors
    sc = res.scores["dirac"]
    for sign, sel in ((1.0, res.member), (-1.0, ~res.member)):
        assert abs(sc[sel].mean() - sign * 2.0) < 4 * 2.0 / math.sqrt(sel.sum())


# --------------------------------------------------------------------- the sample rate audited
N_POOL, Q, T_POISSON, M_POISSON = 1000, 0.02, 10, 200


def _poisson_problem():
    x = torch.zeros(N_POOL, F_REAL + M_POISSON, dtype=torch.float64)
    g = torch.Generator().manual_seed(1)
    x[:, :F_REAL] = torch.randn(N_POOL, F_REAL, generator=g, dtype=torch.float64)
    y = (x[:, 0] > 0).long() + (x[:, 1] > 1).long()
    cx = torch.zeros(M_POISSON, F_REAL + M_POISSON, dtype=torch.float64)
    cx[torch.arange(M_POISSON), F_REAL + torch.arange(M_POISSON)] = 1.0
    return x, y, cx, torch.as_tensor(np.arange(M_POISSON) % 3)


def poisson_train(rate, x_all, y_all, sigma=1.0, lr=1.0):
    """A plain-torch Poisson-sampling loop: every record of ``run.dataset`` is in a step's batch
    with probability ``rate`` (the loop's real rate, whatever it declares)."""
    def train(model, run):
        opt = torch.optim.SGD(model.parameters(), lr=lr)
        params = dict(model.named_parameters())

        def loss(p, x, y):
            return nn.functional.cross_entropy(functional_call(model, p, (x[None],)), y[None])

        dx, dy = run.dataset(x_all, y_all)
        for t in range(1, run.steps + 1):
            take = torch.rand(len(dx), generator=run.generator, dtype=torch.float64) < rate
            x, y = run.canary_batch(t, dx[take], dy[take])
            g = vmap(grad(loss), in_dims=(None, 0, 0))(
                {k: v.detach() for k, v in params.items()}, x, y)
            f = (CLIP / torch.cat([v.flatten(1) for v in g.values()], 1).norm(dim=1)).clamp(max=1)
            for k, p in params.items():
                noise = sigma * CLIP * torch.randn(p.shape, generator=run.generator,
                                                   dtype=p.dtype)
                p.grad = ((g[k] * f.view(-1, *[1] * p.dim())).sum(0) + noise) / (Q * N_POOL)
            opt.step()
            run.record(model)
    return train


@pytest.mark.parametrize("real_rate, caught", [(Q, False), (1.0, True)])
def test_misreported_sample_rate_is_caught(real_rate, caught):
    pytest.importorskip("dp_accounting")
    x, y, cx, cy = _poisson_problem()
    torch.manual_seed(0)
    model = nn.Linear(F_REAL + M_POISSON, 3).double()
    loop = OneRunLoop(poisson_train(real_rate, x, y), model, reference=(x[:64], y[:64]),
                      steps=T_POISSON, lr=1.0, batch_size=int(Q * N_POOL), noise_multiplier=1.0,
                      max_grad_norm=CLIP, canary="input", canary_records=(cx, cy),
                      sample_rate=Q)
    res = audit_one_run(loop, seed=0)
    assert res.epsilon == pytest.approx(poisson_epsilon(1.0, Q, T_POISSON, 1e-5))
    assert "Poisson" in res.relation
    assert set(res.scores) == {"loss"}
    # a sampler that ignores the declared rate (every record in every step) leaks far more
    # than the declared q = 0.02 allows: ONE run certifies more than the accountant's epsilon
    assert bool(res.refuted) is caught
    if caught:
        assert res.best() > res.epsilon


def test_poisson_epsilon_matches_the_unsampled_gaussian_at_rate_one():
    pytest.importorskip("dp_accounting")
    # q = 1, one step, add/remove: the Gaussian mechanism with mu = 1/sigma; compare with the
    # exact GDP conversion (sensitivity C, noise sigma*C); the PLD discretisation is 1e-3
    from semi_core.stats.gdp import gdp_epsilon

    assert poisson_epsilon(2.0, 1.0, 1, 1e-5) == pytest.approx(gdp_epsilon(0.5, 1e-5), abs=2e-2)
    with pytest.raises(ValueError, match="sample_rate"):
        poisson_epsilon(1.0, 0.0, 1, 1e-5)


def test_canary_gradients_same_in_every_form():
    # flat rows, {name: tensor}, a list, a tuple and a module carrying grad_sample must put the
    # same +-M e_j rows in the same slots (and nothing else changes)
    from semi_core.integrations.one_run_training import OneRunRun

    loop = dirac_loop(1.0, m=100, steps=2)
    member = draw_inclusion(100, 0)
    taus = np.repeat([1, 2], 50)
    run = OneRunRun(loop, member, taus, np.random.SeedSequence(0))
    fm = loop.fm
    g = torch.Generator().manual_seed(1)
    flat = torch.randn(BATCH, fm.d, generator=g, dtype=torch.float64)
    parts = [p.reshape(BATCH, *s) for p, s in zip(flat.split(fm.sizes, 1), fm.shapes,
                                                   strict=True)]
    want = run.canary_gradients(1, flat)
    slots = run._slots[1]
    M = loop.scale * CLIP
    expect = flat.clone()
    expect[torch.as_tensor(slots)] = 0.0
    for c, s in zip(run._at[1], slots, strict=True):
        expect[s, loop.coords[c]] = M if member[c] else -M
    assert torch.equal(want, expect)

    def flatten(ps):
        return torch.cat([p.reshape(BATCH, -1) for p in ps], 1)

    d = run.canary_gradients(1, dict(zip(fm.names, parts, strict=True)))
    assert torch.equal(flatten([d[k] for k in fm.names]), want)
    assert torch.equal(flatten(run.canary_gradients(1, list(parts))), want)
    assert torch.equal(flatten(run.canary_gradients(1, tuple(parts))), want)
    module = make_model()
    for p, gs in zip(module.parameters(), parts, strict=True):
        p.grad_sample = gs.clone()
    assert run.canary_gradients(1, module) is module
    assert torch.equal(flatten([p.grad_sample for p in module.parameters()]), want)
    assert torch.equal(flatten(parts), flat)                 # inputs not changed
    with pytest.raises(ValueError, match="rows, the declared batch_size"):
        run.canary_gradients(1, flat[:10])


def test_memory_estimated_and_refused_before_training(monkeypatch):
    from semi_core._validation import ResourceLimitError
    from semi_core.integrations.one_run_training import estimate_bytes

    calls = []
    loop = dirac_loop(1.0, m=100, steps=2)
    loop.train = lambda model, run: calls.append(1)
    d = loop.fm.d
    # 128 float64 reference gradients (clipped copy, float64 column copy), one batch of canary
    # gradients, three states, the scores
    assert estimate_bytes(loop) == 128 * d * 24 + BATCH * d * 32 + 24 * d + 32 * 100
    monkeypatch.setenv("SEMI_CORE_MAX_MEMORY", "1K")
    with pytest.raises(ResourceLimitError, match="one-run audit of 100 canaries"):
        audit_one_run(loop)
    assert calls == []


def test_sampler_design_errors():
    x, y, cx, cy = _poisson_problem()
    torch.manual_seed(0)
    model = nn.Linear(F_REAL + M_POISSON, 3).double()
    kw = dict(reference=(x[:64], y[:64]), steps=2, lr=1.0, batch_size=20, noise_multiplier=1.0,
              max_grad_norm=CLIP, canary="input", canary_records=(cx, cy))

    def no_dataset(model, run):
        for _ in range(run.steps):
            run.record(model)

    with pytest.raises(ValueError, match="taus applies to fixed-step designs"):
        OneRunLoop(no_dataset, model, sample_rate=0.1, taus=1, **kw)
    with pytest.raises(ValueError, match="sample_rate must"):
        OneRunLoop(no_dataset, model, sample_rate=1.5, **kw)
    loop = OneRunLoop(no_dataset, model, sample_rate=0.1, **kw)
    with pytest.raises(ValueError, match="never called run.dataset"):
        audit_one_run(loop)

    def wrong_call(model, run):
        run.dataset(x, y)

    with pytest.raises(ValueError, match="run.dataset is for designs with sample_rate"):
        audit_one_run(OneRunLoop(wrong_call, model, **{**kw, "batch_size": 100}))
    with pytest.raises(ValueError, match="canary_records x rows have shape"):
        OneRunLoop(no_dataset, model, **{**kw, "canary_records": (cx[:, :5], cy)})
