"""DP-SGD trainer, Crafter draws, batched replicas vs the per-run loop."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from semi_core.sgd.dpsgd import (  # noqa: E402
    DPSGDConfig,
    draw_game,
    train_dpsgd,
    train_dpsgd_batched,
)
from semi_core.sgd.grads import clip_rows  # noqa: E402


def test_config_validation():
    with pytest.raises(ValueError, match="clip"):
        DPSGDConfig(clip=0.0)
    with pytest.raises(ValueError, match="batch_size"):
        DPSGDConfig(batch_size=1)
    with pytest.raises(ValueError, match="sigma_dp"):
        DPSGDConfig(sigma_dp=-0.1)
    with pytest.raises(ValueError, match="lr"):
        DPSGDConfig(lr=0.0)


def test_draws_fresh_disjoint_batches_and_canary_slot():
    cfg = DPSGDConfig(batch_size=8, steps=5)
    dr = draw_game(np.random.SeedSequence(1), pool_size=100, cfg=cfg, d=3, tau=4)
    assert dr.batches.shape == (5, 8) and len(np.unique(dr.batches)) == 40
    assert dr.tau == 4 and 0 <= dr.slot < 8 and dr.noise.shape == (5, 3)
    h0 = draw_game(np.random.SeedSequence(1), pool_size=100, cfg=cfg, d=3, tau=None)
    assert h0.slot is None
    with pytest.raises(ValueError, match="tau"):
        draw_game(np.random.SeedSequence(1), pool_size=100, cfg=cfg, d=3, tau=6)
    with pytest.raises(ValueError, match="tau"):
        draw_game(np.random.SeedSequence(1), pool_size=100, cfg=cfg, d=3, tau=0)
    with pytest.raises(ValueError, match="pool"):
        draw_game(np.random.SeedSequence(1), pool_size=39, cfg=cfg, d=3, tau=None)


def test_update_is_clipped_mean_plus_scaled_noise(small_setup):
    s = small_setup
    cfg = DPSGDConfig(batch_size=16, steps=3, lr=0.3, clip=0.5, sigma_dp=2.0)
    dr = draw_game(np.random.SeedSequence(5), pool_size=len(s.pool_x), cfg=cfg, d=s.fm.d, tau=2)
    traj = train_dpsgd(s.fm, s.theta0, dr, s.pool_x, s.pool_y, (s.canary_x, s.canary_y), cfg)
    assert traj.shape == (4, s.fm.d)
    # rebuild step 2 by hand: the canary replaces slot `slot` of batch 2
    idx = torch.as_tensor(dr.batches[1])
    x, y = s.pool_x[idx].clone(), s.pool_y[idx].clone()
    x[dr.slot], y[dr.slot] = s.canary_x, s.canary_y
    g = clip_rows(s.fm.per_sample_grads_reference(traj[1], x, y), 0.5).mean(0)
    expected = traj[1] - 0.3 * (g + 2.0 * 0.5 / 16 * torch.as_tensor(dr.noise[1]))
    torch.testing.assert_close(traj[2], expected, rtol=1e-10, atol=1e-12)


def test_batched_replicas_equal_per_run_loop(small_setup):
    s = small_setup
    cfg = s.cfg
    draws = [draw_game(np.random.SeedSequence(k), pool_size=len(s.pool_x), cfg=cfg, d=s.fm.d,
                       tau=None if k % 2 else 1 + k % cfg.steps) for k in range(6)]
    canary = (s.canary_x, s.canary_y)
    batched = train_dpsgd_batched(s.fm, s.theta0, draws, s.pool_x, s.pool_y, canary, cfg)
    loop = torch.stack([train_dpsgd(s.fm, s.theta0, dr, s.pool_x, s.pool_y, canary, cfg)
                        for dr in draws])
    torch.testing.assert_close(batched, loop, rtol=1e-10, atol=1e-12)


def test_package_exports_resolve():
    import semi_core.sgd as sgd

    for name in sgd.__all__:
        assert getattr(sgd, name) is not None
    with pytest.raises(AttributeError):
        sgd.not_a_name  # noqa: B018
