"""Alg. 6 canary ranking and the Alg. 7 white-box score against dense NumPy references."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.slow  # ~15 s CPU: pretraining and per-sample gradients

from semi_core.sgd.audit import prepare_audit  # noqa: E402
from semi_core.sgd.dpsgd import DPSGDConfig, draw_game, train_dpsgd  # noqa: E402
from semi_core.sgd.grads import clip_rows  # noqa: E402
from semi_core.sgd.gradstats import gradient_statistics  # noqa: E402
from semi_core.sgd.leakage_canaries import (  # noqa: E402
    candidate_pool,
    rank_canaries,
    wb_scores,
)


@pytest.fixture(scope="module")
def setup():
    cfg = DPSGDConfig(batch_size=16, steps=3, lr=0.5, clip=1.0, sigma_dp=2.0)
    return prepare_audit(dataset="digits", model="logreg", cfg=cfg, seed=3, n_reference=40,
                         pretrain_epochs=5)


def _dense_v(setup, traj, extra):
    cfg, fm = setup.cfg, setup.fm
    out = []
    for t in range(1, cfg.steps + 1):
        prev = traj[t - 1]
        ref = clip_rows(fm.per_sample_grads(prev, setup.ref_x, setup.ref_y), cfg.clip).numpy()
        g = clip_rows(fm.per_sample_grads(prev, setup.canary_x[None], setup.canary_y.reshape(1)),
                      cfg.clip).numpy()[0]
        st = gradient_statistics(ref, shrinkage=setup.shrinkage, ridge=setup.ridge, form="dense")
        C = st.cov + extra * np.eye(st.d)
        a = g - st.mean
        y = np.linalg.solve(C, a)
        u = (prev - traj[t]).numpy() / cfg.lr - st.mean
        out.append(y @ u - y @ a / (2 * cfg.batch_size))
    return np.array(out)


def test_wb_scores_match_dense_eq10(setup):
    cfg = setup.cfg
    traj = []
    for k, tau in enumerate((None, 2)):
        dr = draw_game(np.random.SeedSequence([5, k]), pool_size=setup.pool_x.shape[0], cfg=cfg,
                       d=setup.fm.d, tau=tau)
        with torch.no_grad():
            traj.append(train_dpsgd(setup.fm, setup.theta0, dr, setup.pool_x, setup.pool_y,
                                    (setup.canary_x, setup.canary_y), cfg))
    traj = torch.stack(traj)
    v = wb_scores(setup, traj.numpy())
    extra = (cfg.sigma_dp * cfg.clip) ** 2 / cfg.batch_size
    for r in range(2):
        assert np.allclose(v["noise_aware"][r], _dense_v(setup, traj[r], extra), rtol=1e-7,
                           atol=1e-8)
        assert np.allclose(v["literal"][r], _dense_v(setup, traj[r], 0.0), rtol=1e-7, atol=1e-8)
    with pytest.raises(ValueError, match="traj"):
        wb_scores(setup, np.zeros((2, 2, setup.fm.d)))


def test_rank_canaries_sums_per_step_ranks(setup):
    cx, cy = candidate_pool("digits", 3)
    cx, cy = cx[:30], cy[:30]
    top, score, dist = rank_canaries(setup, cx, cy, m=3, seed=1)
    assert dist.shape == (setup.cfg.steps, 30)
    ranks = np.argsort(np.argsort(dist, axis=1), axis=1).sum(axis=0)
    assert np.array_equal(score, ranks)
    assert set(top) == set(np.argsort(-score, kind="stable")[:3])
    # the per-step distances equal the dense Mahalanobis distance at step 1 (theta_0)
    cfg, fm = setup.cfg, setup.fm
    dr = draw_game(np.random.SeedSequence(1), pool_size=setup.pool_x.shape[0], cfg=cfg,
                   d=fm.d, tau=None)
    idx = torch.as_tensor(dr.batches[0])
    gb = clip_rows(fm.per_sample_grads(setup.theta0, setup.pool_x[idx], setup.pool_y[idx]),
                   cfg.clip).numpy()
    st = gradient_statistics(gb, shrinkage=setup.shrinkage, ridge=setup.ridge, form="dense")
    gc = clip_rows(fm.per_sample_grads(setup.theta0, cx, cy), cfg.clip).numpy()
    ref = np.array([st.mahalanobis(g) for g in gc])
    assert np.allclose(dist[0], ref, rtol=1e-7)
    with pytest.raises(ValueError, match="m"):
        rank_canaries(setup, cx, cy, m=0)
