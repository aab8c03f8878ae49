"""Adam for the update experiment's training phases, against torch.optim.Adam on the same
batches, and its plumbing (defaults, CLI)."""

from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from semi_core.attacks.updates import UpdateConfig  # noqa: E402
from semi_core.attacks.updates.experiment.config import DEFAULT_LR  # noqa: E402
from semi_core.attacks.updates.training import TrainConfig, train_replicas  # noqa: E402
from semi_core.sgd.models import build_model  # noqa: E402


def _reference(fm, theta0, x, y, cfg, seed):
    """torch.optim.Adam on one replica, with the shuffles its generator gives."""
    theta = torch.nn.Parameter(theta0.clone())
    opt = torch.optim.Adam([theta], lr=cfg.lr, betas=(0.9, 0.999), eps=1e-8)
    g = np.random.default_rng(seed)
    n, B = x.shape[0], min(cfg.batch_size, x.shape[0])
    for _ in range(cfg.epochs):
        perm = torch.as_tensor(g.permutation(n))
        for s in range(0, n, B):
            idx = perm[s:s + B]
            opt.zero_grad()
            fm.losses(theta, x[idx], y[idx]).mean().backward()
            opt.step()
    return theta.detach()


def test_adam_replicas_match_torch_adam():
    rng = np.random.default_rng(0)
    R, n, p, K = 3, 23, 5, 3
    x = torch.as_tensor(rng.normal(size=(R, n, p)))
    y = torch.as_tensor(rng.integers(0, K, size=(R, n)))
    fm, theta0, _ = build_model("logreg", x[0, :8].numpy(), y[0, :8].numpy(), K,
                                seed_seq=np.random.SeedSequence(1), epochs=0)
    thetas = theta0.expand(R, -1).clone() + 0.1 * torch.as_tensor(rng.normal(size=(R, fm.d)))
    cfg = TrainConfig(epochs=4, lr=0.03, batch_size=7, optimizer="adam")
    got = train_replicas(fm, thetas, x, y, cfg, [np.random.default_rng(10 + r) for r in range(R)])
    for r in range(R):
        want = _reference(fm, thetas[r], x[r], y[r], cfg, 10 + r)
        torch.testing.assert_close(got[r], want, rtol=1e-10, atol=1e-12)
    sgd = train_replicas(fm, thetas, x, y, TrainConfig(epochs=4, lr=0.03, batch_size=7),
                         [np.random.default_rng(10 + r) for r in range(R)])
    assert not torch.allclose(sgd, got)            # the option changes the steps


def test_learning_rate_defaults_follow_the_optimizer():
    assert (UpdateConfig().base_lr, UpdateConfig().new_lr, UpdateConfig().full_lr) == \
        DEFAULT_LR["sgd"] == (0.2, 0.05, 0.2)
    a = UpdateConfig(optimizer="adam", new_lr=0.002)
    assert (a.base_lr, a.new_lr, a.full_lr) == (0.01, 0.002, 0.01)
    assert a.update_cfg.optimizer == "adam" and a.base_cfg.optimizer == "adam"
    with pytest.raises(ValueError, match="optimizer must be one of"):
        UpdateConfig(optimizer="rmsprop")
    with pytest.raises(ValueError, match="optimizer must be one of"):
        TrainConfig(1, 0.1, optimizer="adamw")


def test_cli_optimizer(capsys):
    from semi_core.cli import main

    assert main(["updates", "--optimizer", "adam", "--study", "chen", "--json"]) == 2
    assert "applies to the single experiment" in json.loads(capsys.readouterr().out)["error"]
    code = main(["updates", "--optimizer", "adam", "--trials", "2", "--n0", "40", "--n-up", "4",
                 "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["config"]["optimizer"] == "adam"
    assert out["config"]["base_lr"] == DEFAULT_LR["adam"][0]
