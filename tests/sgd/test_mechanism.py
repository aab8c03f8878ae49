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


def test_log_lr_steps_equal_the_audit_games(small_setup):
    """The mechanism's auditor side on the audit's own trajectories gives the audit's LRs."""
    from semi_core.sgd.audit import _run_chunk
    from semi_core.sgd.dpsgd import draw_game, train_dpsgd_batched

    s = small_setup
    draws = [draw_game(np.random.SeedSequence([7, k]), pool_size=s.pool_x.shape[0], cfg=s.cfg,
                       d=s.fm.d, tau=2 if k % 2 else None) for k in range(4)]
    _, want = _run_chunk(s, draws, batched=True)
    with torch.no_grad():
        traj = train_dpsgd_batched(s.fm, s.theta0, draws, s.pool_x, s.pool_y,
                                   (s.canary_x, s.canary_y), s.cfg).numpy()
    np.testing.assert_allclose(DPSGDMechanism(s).log_lr_steps(traj[:, 1:]), want, rtol=1e-10,
                               atol=1e-10)


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
