"""SeMI-Unif has one home (:func:`semi_core.stats.statistics.semi_unif`): its callers agree with
it and with the expressions they used before on fixed inputs."""

import numpy as np
import pytest
from scipy.special import logsumexp

from semi_core.attacks.updates.gap import MultiUpdateTests
from semi_core.mechanisms.empirical_mean import EmpiricalMean
from semi_core.stats.statistics import semi_max, semi_unif


def _llr(seed=0, shape=(50, 6)):
    return np.random.default_rng(seed).normal(0.0, 3.0, shape)


def test_uniform_prior_is_the_previous_expression_to_the_bit():
    llr = _llr()
    np.testing.assert_array_equal(semi_unif(llr), logsumexp(llr, axis=1) - np.log(6))


def test_gap_prior_matches_the_previous_checkpoint_expression():
    """The checkpoint audit summed ``row + log(k_j/T)`` with ``np.logaddexp.reduce``; the
    orders of summation differ, so agreement is to rounding (1e-12 relative)."""
    llr = _llr(1, (20, 4))
    gaps = np.array([1.0, 2.0, 2.0, 5.0])
    pmf = gaps / gaps.sum()
    old = [float(np.logaddexp.reduce(row + np.log(pmf))) for row in llr]
    np.testing.assert_allclose(semi_unif(llr, pmf), old, rtol=1e-12, atol=1e-12)


def test_multi_update_scorer_calls_the_one_statistic():
    mech = EmpiricalMean(n=[20, 5, 5, 5], T=4, mu=0.0, cov=1.0, target=np.r_[4.0, 0.0])
    rng = np.random.default_rng(3)
    member = rng.random(64) < 0.5
    tau = rng.integers(2, 5, 64)
    rel = mech.release(member, tau, rng)
    out = MultiUpdateTests(mech, 1e-3)(rel, tau, rng)
    llr = mech.log_lr_steps(rel)[:, 1:]
    np.testing.assert_array_equal(out["semi-unif"], logsumexp(llr, axis=1) - np.log(3))
    np.testing.assert_array_equal(out["semi-unif"], semi_unif(llr))
    np.testing.assert_array_equal(out["semi-max"], semi_max(llr))


def test_checkpoint_statistics_call_the_one_statistic(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("safetensors")
    from semi_core.integrations.checkpoints import CheckpointRuns, audit_checkpoints, load_model
    from tests.integrations import ckpt_helpers as H

    H.train_run(tmp_path / "a", member=True, tau=2, seed=5, steps=4, every=2, save0=False)
    x, y = H.data(7, 200)
    runs = CheckpointRuns(load_model("tests.integrations.ckpt_helpers:make_model"),
                          reference=(x, y), target=H.CANARY, lr=0.5, batch_size=16,
                          noise_multiplier=1.0, max_grad_norm=1.0, steps=4, every=2)
    out = audit_checkpoints(runs, [tmp_path / "a"])
    lr = np.asarray(out["log_lr"])
    pmf = runs.unif_pmf()
    got = [s["semi_unif"] for s in out["statistics"]]
    np.testing.assert_array_equal(got, semi_unif(lr, pmf))
    old = [float(np.logaddexp.reduce(row + np.log(pmf))) for row in lr]
    np.testing.assert_allclose(got, old, rtol=1e-12, atol=1e-12)
