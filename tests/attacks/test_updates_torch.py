"""SGD-New / SGD-Full updates on the torch replicas, offline LiRA, the experiment and the DP game."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from semi_core.attacks.updates import (  # noqa: E402
    TrainConfig,
    UpdateConfig,
    game_result,
    lira_offline_loss,
    run_experiment,
    run_updates,
    summarize,
    train_replicas,
)
from semi_core.sgd.data import load_digits  # noqa: E402
from semi_core.sgd.models import build_model  # noqa: E402

TINY = dict(n0=60, trials=2, n_ref=2, base_epochs=4, new_epochs=2, full_epochs=1, n_up=4)


@pytest.fixture(scope="module")
def model():
    torch.set_num_threads(1)
    x, y = load_digits()
    fm, theta, _ = build_model("logreg", x[:32], y[:32], 10,
                               seed_seq=np.random.SeedSequence(1), epochs=0)
    return fm, theta, x, y


def test_replicas_equal_one_at_a_time(model):
    """Training R replicas together gives each replica's own run (same generators)."""
    fm, theta, x, y = model
    idx = np.random.default_rng(0).choice(len(y), size=(3, 40), replace=False)
    X = torch.as_tensor(x[idx])
    Y = torch.as_tensor(y[idx])
    for cfg in (TrainConfig(2, 0.3, 16), TrainConfig(2, 0.3, 16, clip=0.5, sigma_dp=1.0)):
        joint = train_replicas(fm, theta.expand(3, -1), X, Y, cfg,
                               [np.random.default_rng(s) for s in range(3)])
        for r in range(3):
            alone = train_replicas(fm, theta[None], X[r:r + 1], Y[r:r + 1], cfg,
                                   [np.random.default_rng(r)])
            assert torch.allclose(joint[r], alone[0], atol=1e-10)


def test_sgd_full_uses_the_union_and_snapshots(model):
    fm, theta, x, y = model
    rng = np.random.default_rng(1)
    idx = rng.choice(len(y), size=(2, 30 + 2 * 5), replace=False)
    bx, by = torch.as_tensor(x[idx[:, :30]]), torch.as_tensor(y[idx[:, :30]])
    ux = torch.as_tensor(x[idx[:, 30:]]).reshape(2, 2, 5, -1)
    uy = torch.as_tensor(y[idx[:, 30:]]).reshape(2, 2, 5)
    base, up = TrainConfig(2, 0.3, 16), TrainConfig(1, 0.3, 64)
    snaps = {u: run_updates(fm, theta, bx, by, ux, uy, update=u, base_cfg=base, update_cfg=up,
                            rngs=[np.random.default_rng(s) for s in (5, 6)])
             for u in ("sgd-new", "sgd-full")}
    assert snaps["sgd-new"].shape == (2, 3, fm.d)
    assert torch.allclose(snaps["sgd-new"][:, 0], snaps["sgd-full"][:, 0])   # same f0
    # one full-batch epoch of SGD-Full from f0 is one gradient step on D0 u D1
    x1 = torch.cat([bx[0], ux[0, 0]])
    y1 = torch.cat([by[0], uy[0, 0]])
    g = torch.func.grad(lambda th: fm.losses(th, x1, y1).mean())(snaps["sgd-full"][0, 0])
    assert torch.allclose(snaps["sgd-full"][0, 1], snaps["sgd-full"][0, 0] - 0.3 * g)
    with pytest.raises(ValueError, match="update must be"):
        run_updates(fm, theta, bx, by, ux, uy, update="sgd", base_cfg=base, update_cfg=up,
                    rngs=[np.random.default_rng(0)] * 2)


def test_lira_offline_loss_formula(rng):
    from scipy.stats import norm

    ref = rng.normal(size=(6, 5))
    tgt = rng.normal(size=5)
    expect = -norm.logcdf((tgt - ref.mean(0)) / np.sqrt(ref.var(0, ddof=1).mean()))
    assert lira_offline_loss(tgt, ref) == pytest.approx(expect)
    with pytest.raises(ValueError, match="M >= 2"):
        lira_offline_loss(tgt, ref[:1])


def test_experiment_small_is_reproducible_and_complete():
    cfg = UpdateConfig(k=2, **TINY)
    a = run_experiment(cfg, scores=("loss", "lira"))
    b = run_experiment(cfg, scores=("loss", "lira"))
    for s in ("loss", "lira"):
        assert np.array_equal(a.scores[s], b.scores[s])
        assert a.scores[s].shape == (2, 3, 2 * 2 * 4)
        assert np.all(a.scores[s] >= 0)            # loss-like scores
    for thr in ("batch", "transfer", "rank"):
        out = summarize(a, score="lira", combiner="ratio", threshold=thr)
        assert 0 <= out["mi_accuracy"]["mean"] <= 1
        assert out["entry_baselines"]["random"] == pytest.approx(0.25)
        assert set(out["tpr_at_fpr"]) == {"0.01", "0.1"}
        assert "lira" in out["no_update"]
    res = game_result(a)
    assert res.rounds == 2 * 16 and set(res.tests) == {"back-front", "final-loss"}
    assert set(np.unique(res.tau)) <= {1, 2}
    with pytest.raises(ValueError, match="threshold"):
        summarize(a, threshold="median")


def test_shift_setting_is_binary_and_mixed():
    cfg = UpdateConfig(shift_alpha=1.0, **TINY)
    run = run_experiment(cfg)
    out = summarize(run)
    assert 0 <= out["mi_accuracy"]["mean"] <= 1
    assert run.scores["loss"].shape == (2, 2, 8)


def test_dp_game_certifies_below_truth():
    from semi_core.attacks.updates.dp import dp_audit

    cfg = UpdateConfig(clip=1.0, sigma_dp=1.0, **{**TINY, "trials": 2})
    out = dp_audit(cfg, rounds=40, delta=1e-4)
    for att in out["attacks"].values():
        for v in att["epsilon_lower_bound"].values():
            assert 0.0 <= v <= out["epsilon_true"]
