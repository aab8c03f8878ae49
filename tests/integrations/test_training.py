"""A user's own DP-SGD loop (plain torch, no Opacus) audited through integrations.training."""

import pickle

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from torch import nn  # noqa: E402
from torch.func import functional_call, grad, vmap  # noqa: E402

from semi_core.game.backends import Executor  # noqa: E402
from semi_core.game.play import play  # noqa: E402
from semi_core.integrations.training import TrainingLoop, audit_training  # noqa: E402
from semi_core.sgd.accounting import calibrate_sigma  # noqa: E402
from semi_core.testing import MechanismCheckError, check_mechanism  # noqa: E402

# ---- the user's code: their model, data, loss, optimizer and DP-SGD step ------------------
LR, BATCH, CLIP, STEPS = 0.2, 16, 1.0, 3
SIGMA = calibrate_sigma(2.0, 1e-5)
_rng = np.random.default_rng(0)
X = torch.as_tensor(_rng.standard_normal((500, 6)))
X[:, -1] = 0.0                                        # a feature no record uses
Y = torch.as_tensor((X[:, 0] + X[:, 1] > 0).long() + (X[:, 2] > 1).long())


def make_model():
    torch.manual_seed(1)
    return nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3)).double()


def user_train(model, run, *, clip=True, noise_scale=1.0):
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    params = dict(model.named_parameters())

    def loss_fn(p, x, y):
        return nn.functional.cross_entropy(functional_call(model, p, (x[None],)), y[None])

    per_sample = vmap(grad(loss_fn), in_dims=(None, 0, 0))
    for t in range(1, run.steps + 1):
        idx = torch.randperm(len(X), generator=run.generator)[:BATCH]
        x, y = run.canary_batch(t, X[idx], Y[idx])
        g = per_sample({k: v.detach() for k, v in params.items()}, x, y)
        g = run.canary_gradients(t, g)
        norms = torch.cat([v.flatten(1) for v in g.values()], 1).norm(dim=1)
        factor = (CLIP / norms).clamp(max=1.0) if clip else torch.ones_like(norms)
        for k, p in params.items():
            noise = noise_scale * SIGMA * CLIP * torch.randn(p.shape, generator=run.generator,
                                                             dtype=p.dtype)
            p.grad = ((g[k] * factor.view(-1, *[1] * p.dim())).sum(0) + noise) / BATCH
        opt.step()
        run.record(model)


SIGMA_1 = calibrate_sigma(1.0, 1e-5)


def noise_on_mean_bug(model, run):
    """A common bug: the noise is divided by the batch size twice (std sigma*C/n on the sum),
    in a loop that claims epsilon = 1 (noise_multiplier SIGMA_1)."""
    user_train(model, run, noise_scale=SIGMA_1 / SIGMA / BATCH)
# -------------------------------------------------------------------------------------------


@pytest.fixture(autouse=True, scope="module")
def _one_torch_thread():
    """Tiny models: torch's intra-op threads only add contention (2 shared cores)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _loop(train=user_train, **kw):
    kw = {"canary": "dirac", "noise_multiplier": SIGMA, **kw}
    return TrainingLoop(train, make_model(), reference=(X[:64], Y[:64]), steps=STEPS, lr=LR,
                        batch_size=BATCH, max_grad_norm=CLIP, **kw)


def test_dirac_loop_passes_check_mechanism():
    loop = _loop()
    assert loop.coordinate_moment == 0.0      # the unused feature's weights are isolated
    rep = check_mechanism(loop, rounds=20, truth_rounds=100)
    assert rep["ground_truth"] == "passed"


def test_input_canary_loop_passes_check_mechanism():
    loop = _loop(canary="input", canary_record=(np.r_[np.zeros(5), 4.0], 2))
    rep = check_mechanism(loop, rounds=20, truth_rounds=0)
    assert set(rep) >= {"chunking", "log_lr_rowwise", "determinism"}


@pytest.mark.slow
def test_dirac_scores_are_the_exact_gaussian_pair():
    """Isolated coordinate: SeMI* = 2 s / sigma^2 with s ~ N(+-1, sigma^2) exactly, so the
    standardised score s = SeMI* sigma^2 / 2 has mean +-1 and sd sigma in each class. 400 runs:
    a class mean's standard error is sigma / sqrt(n_class), the sd's relative SE
    1 / sqrt(2 n_class); both are allowed 5 SE (false failure ~ 1e-6)."""
    loop = _loop()
    res = play(loop, 400, seed=3, tau=2, chunk_size=100)
    s = res.stats["semi-star"] * SIGMA**2 / 2
    for cls, mean in ((res.member, 1.0), (~res.member, -1.0)):
        se = SIGMA / np.sqrt(cls.sum())
        assert abs(s[cls].mean() - mean) < 5 * se
        assert abs(s[cls].std() / SIGMA - 1) < 5 / np.sqrt(2 * cls.sum())


def test_same_seed_same_result_in_process_threads_and_dask(dask_client):
    loop = _loop()
    a = play(loop, 24, seed=7, tau=2, chunk_size=8)
    for ex in (Executor(threads=2), Executor(client=dask_client)):
        b = play(loop, 24, seed=7, tau=2, chunk_size=8, executor=ex)
        np.testing.assert_array_equal(a.member, b.member)
        for k in a.stats:
            np.testing.assert_array_equal(a.stats[k], b.stats[k])
    assert pickle.loads(pickle.dumps(loop)).params() == loop.params()


@pytest.mark.slow
def test_bug_is_caught_by_check_mechanism_and_audit():
    """Noise divided by n twice: mu = 2n/sigma ~ 6 against the declared 2/sigma, the runs
    (nearly) separate and the certified bound exceeds the claimed 1 (Clopper-Pearson on a
    random half of 200 games certifies up to 1.81 at failure probability 1e-3; 3.28 at 0.05
    with 200 games per class)."""
    bad = _loop(noise_on_mean_bug, noise_multiplier=SIGMA_1)
    with pytest.raises(MechanismCheckError, match="ground_truth"):
        check_mechanism(bad, rounds=20, truth_rounds=200)
    with pytest.warns(UserWarning, match="leaks more than it claims"):
        rep = audit_training(bad, 200, seed=1, claimed_epsilon=1.0, methods=["cp"])
    assert "semi-star/cp" in rep["refuted"]


def test_audit_training_report():
    rep = audit_training(_loop(), 60, seed=2, claimed_epsilon=2.0, methods=["band", "gdp"])
    assert rep["refuted"] == [] and rep["warnings"] == []
    assert abs(rep["accountant"]["gdp_exact"] - 2.0) < 1e-6
    assert rep["accountant"]["dp_accounting_pld"] == pytest.approx(2.0, abs=0.05)
    assert set(rep["epsilon_lower_bound"]) == {"semi-star", "semi-unif", "semi-max", "final"}
    gdp = rep["epsilon_lower_bound"]["semi-star"]["gdp"]
    assert gdp["assumption"] != rep["epsilon_lower_bound"]["semi-star"]["band"]["assumption"]


def test_user_mistakes_are_named():
    def no_canary(model, run):
        for _ in range(run.steps):
            run.record(model)

    def short(model, run):
        run.canary_gradients(run.steps, torch.zeros(BATCH, 83, dtype=torch.float64))

    gen = np.random.default_rng(0)
    with pytest.raises(ValueError, match="never called run.canary_gradients"):
        _loop(no_canary).release(np.array([True]), np.array([2]), gen)
    with pytest.raises(ValueError, match="recorded 0 states"):
        _loop(short).release(np.array([True]), np.array([STEPS]), gen)
    with pytest.raises(ValueError, match="canary_record"):
        _loop(canary="input")
    with pytest.raises(ValueError, match="canary must be one of"):
        _loop(canary="gradient")


def opacus_train(model, run):
    """The same loop written with Opacus objects (GradSampleModule, DPOptimizer)."""
    from opacus import GradSampleModule
    from opacus.optimizers import DPOptimizer

    gsm = GradSampleModule(model, loss_reduction="mean")
    opt = DPOptimizer(torch.optim.SGD(gsm.parameters(), lr=LR), noise_multiplier=SIGMA,
                      max_grad_norm=CLIP, expected_batch_size=BATCH, loss_reduction="mean",
                      generator=run.generator)
    for t in range(1, run.steps + 1):
        idx = torch.randperm(len(X), generator=run.generator)[:BATCH]
        x, y = run.canary_batch(t, X[idx], Y[idx])
        opt.zero_grad()
        nn.functional.cross_entropy(gsm(x), y).backward()
        run.canary_gradients(t, gsm)          # edits p.grad_sample before Opacus clips
        opt.step()
        run.record(gsm)


@pytest.mark.slow
def test_opacus_objects_loop():
    """An Opacus loop gives the same exact Gaussian pair: at the isolated coordinate the
    standardised update is N(+-1, sigma^2) (checked on 60 runs: class means within 5 SE)."""
    pytest.importorskip("opacus")
    loop = _loop(opacus_train)
    rep = check_mechanism(loop, rounds=20, truth_rounds=0)
    assert rep["chunking"] == "passed"
    res = play(loop, 60, seed=4, tau=2, chunk_size=60)
    s = res.stats["semi-star"] * SIGMA**2 / 2
    for cls, mean in ((res.member, 1.0), (~res.member, -1.0)):
        assert abs(s[cls].mean() - mean) < 5 * SIGMA / np.sqrt(cls.sum())
