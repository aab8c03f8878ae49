"""A user's own DP-SGD loop (plain torch; and with Opacus objects) audited through
integrations.training; the user's code is in tests/integrations/user_loop.py."""

import pickle

import numpy as np
import pytest

torch = pytest.importorskip("torch")


from semi_core.game.backends import Executor  # noqa: E402
from semi_core.game.play import play  # noqa: E402
from semi_core.integrations.training import TrainingLoop, audit_training  # noqa: E402
from semi_core.testing import MechanismCheckError, check_mechanism  # noqa: E402  (slow tests)
from tests.integrations.user_loop import (  # noqa: E402  (the user's code)
    BATCH,
    CLIP,
    LR,
    SIGMA,
    SIGMA_1,
    STEPS,
    X,
    Y,
    make_model,
    noise_on_mean_bug,
    opacus_train,
    user_train,
)


def _loop(train=user_train, **kw):
    kw = {"canary": "dirac", "noise_multiplier": SIGMA, **kw}
    return TrainingLoop(train, make_model(), reference=(X[:64], Y[:64]), steps=STEPS, lr=LR,
                        batch_size=BATCH, max_grad_norm=CLIP, **kw)


def test_dirac_loop_isolates_the_unused_feature():
    """The unused feature's weights are isolated (conformance: tests/test_conformance.py)."""
    assert _loop().coordinate_moment == 0.0


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


def _same_as_in_process(loop, executor):
    a = play(loop, 24, seed=7, tau=2, chunk_size=8)
    b = play(loop, 24, seed=7, tau=2, chunk_size=8, executor=executor)
    np.testing.assert_array_equal(a.member, b.member)
    for k in a.stats:
        np.testing.assert_array_equal(a.stats[k], b.stats[k])


def test_same_seed_same_result_in_process_and_threads():
    loop = _loop()
    _same_as_in_process(loop, Executor(threads=2))
    assert pickle.loads(pickle.dumps(loop)).params() == loop.params()


@pytest.mark.slow
def test_same_seed_same_result_on_dask(dask_client):
    _same_as_in_process(_loop(), Executor(client=dask_client))


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

    def returns_states(model, run, shift=0.0):
        states = [{k: v.detach().clone() + shift for k, v in model.state_dict().items()}]
        for t in range(1, run.steps + 1):
            run.canary_gradients(t, torch.zeros(BATCH, 83, dtype=torch.float64))
            states.append({k: v + t for k, v in states[0].items()})
        return states

    gen = np.random.default_rng(0)
    got = _loop(returns_states).release(np.array([True]), np.array([2]), gen)
    th0 = _loop().theta0.numpy()
    np.testing.assert_array_equal(got[0], th0 + np.arange(1, STEPS + 1)[:, None])
    with pytest.raises(ValueError, match="not the model's theta_0"):
        _loop(lambda m, r: returns_states(m, r, 1.0)).release(np.array([True]), np.array([2]),
                                                              gen)
    with pytest.raises(ValueError, match="never called run.canary_gradients"):
        _loop(no_canary).release(np.array([True]), np.array([2]), gen)
    with pytest.raises(ValueError, match="recorded 0 states"):
        _loop(short).release(np.array([True]), np.array([STEPS]), gen)
    with pytest.raises(ValueError, match="canary_record"):
        _loop(canary="input")
    with pytest.raises(ValueError, match="canary must be one of"):
        _loop(canary="gradient")


@pytest.mark.slow
def test_opacus_objects_loop():
    """An Opacus loop gives the same exact Gaussian pair: at the isolated coordinate the
    standardised update is N(+-1, sigma^2) (checked on 60 runs: class means within 5 SE)."""
    pytest.importorskip("opacus")
    loop = _loop(opacus_train)
    res = play(loop, 60, seed=4, tau=2, chunk_size=60)
    s = res.stats["semi-star"] * SIGMA**2 / 2
    for cls, mean in ((res.member, 1.0), (~res.member, -1.0)):
        assert abs(s[cls].mean() - mean) < 5 * SIGMA / np.sqrt(cls.sum())
