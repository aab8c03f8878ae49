"""DP-SGD through the Mechanism protocol: the generic game and audit run it like any mechanism."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from semi_core.audit.games import audit_mechanism  # noqa: E402
from semi_core.game.play import play  # noqa: E402
from semi_core.game.result import GameResult  # noqa: E402
from semi_core.mechanisms.base import GroundTruthUnknown, is_mechanism  # noqa: E402
from semi_core.sgd.accounting import dpsgd_epsilon  # noqa: E402
from semi_core.sgd.mechanism import DPSGDMechanism  # noqa: E402


def test_protocol_game_and_reproducibility(small_setup):
    mech = DPSGDMechanism(small_setup)
    assert is_mechanism(mech)
    a = play(mech, 12, 5, tau=2, chunk_size=8)
    b = play(mech, 12, 5, tau=2, chunk_size=8)
    assert isinstance(a, GameResult) and set(a.stats) == set(mech.tests)
    np.testing.assert_array_equal(a.stats["semi-star"], b.stats["semi-star"])
    np.testing.assert_array_equal(a.stats["semi-max"],
                                  np.maximum.reduce([a.stats["semi-star"], a.stats["semi-max"]]))


def test_log_lr_steps_are_rowwise_and_equal_the_numpy_statistic(small_setup):
    """The batched auditor side scores each run on its own: a chunk's log-LRs equal those of
    its runs scored one at a time, and step 1 equals the NumPy DP-SGD log-LR (an independent
    implementation: SciPy Woodbury on the low-rank-plus-diagonal covariance)."""
    from semi_core.sgd.grads import clip_rows
    from semi_core.sgd.gradstats import gradient_statistics
    from semi_core.sgd.lr import dpsgd_log_lr

    s = small_setup
    mech = DPSGDMechanism(s)
    rel = mech.release(np.array([True, False, True, False]), np.array([2, 1, 1, 3]),
                       np.random.default_rng(7))
    lr = mech.log_lr_steps(rel)
    one = np.concatenate([mech.log_lr_steps(rel[k:k + 1]) for k in range(4)])
    np.testing.assert_allclose(lr, one, rtol=1e-10, atol=1e-10)
    cfg = s.cfg
    ref = clip_rows(s.fm.per_sample_grads(s.theta0, s.ref_x, s.ref_y), cfg.clip).numpy()
    tgt = clip_rows(s.fm.per_sample_grads(s.theta0, s.canary_x[None], s.canary_y.reshape(1)),
                    cfg.clip).numpy()[0]
    st = gradient_statistics(ref, shrinkage=s.shrinkage, ridge=s.ridge, form="lowrank")
    for k in range(4):
        want = dpsgd_log_lr(rel[k, 0] - s.theta0.numpy(), cfg.lr, st.mean, st.cov, tgt,
                            cfg.batch_size, sigma_dp=cfg.sigma_dp, clip=cfg.clip)
        assert lr[k, 0] == pytest.approx(float(want), rel=1e-7, abs=1e-8)


def test_ground_truth_and_audit(small_setup):
    mech = DPSGDMechanism(small_setup)
    assert mech.epsilon(1e-5) == pytest.approx(dpsgd_epsilon(1.0, 1e-5))
    res = audit_mechanism(mech, 16, 1, tau=1, delta=1e-5, tests=("semi-star",))
    assert res["tests"]["semi-star"]["epsilon_lower_bound"] <= res["epsilon_true"]
    from semi_core.sgd.audit import AuditSetup
    from semi_core.sgd.dpsgd import DPSGDConfig

    plain = AuditSetup(**{**small_setup.__dict__,
                          "cfg": DPSGDConfig(**{**small_setup.cfg.__dict__, "sigma_dp": 0.0})})
    with pytest.raises(GroundTruthUnknown):
        DPSGDMechanism(plain).epsilon(1e-5)
    with pytest.raises(ValueError, match="releases"):
        mech.log_lr_steps(np.zeros((2, 3)))
    with pytest.raises(TypeError, match="AuditSetup"):
        DPSGDMechanism(object())
