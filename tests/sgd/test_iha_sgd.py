"""Heavy-ball SGD trainer, batched reference models, Hessian / iHVP paths and the appended
loaders (``iha_parameters_vs_loss``)."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from torch import nn  # noqa: E402

from semi_core.sgd.data import load_bundled, load_tabular  # noqa: E402
from semi_core.sgd.grads import FunctionalModel  # noqa: E402
from semi_core.sgd.hessian import (  # noqa: E402
    CGInverse,
    EigenInverse,
    cg_solve,
    hvp_operator,
    lissa_solve,
    mean_loss_hessian,
)
from semi_core.sgd.momentum import SGDConfig, batch_schedule, train_sgd, train_sgd_torch  # noqa: E402
from semi_core.sgd.reference_models import (  # noqa: E402
    build_attack_model,
    init_thetas,
    membership_matrix,
    model_seeds,
    schedules,
    train_models,
    train_models_reference,
)


@pytest.fixture(scope="module")
def digits():
    x, y, _ = load_bundled("digits")
    return torch.as_tensor(x[:300]), torch.as_tensor(y[:300])


def test_functional_sgd_equals_torch_optim(digits):
    x, y = digits
    torch.manual_seed(0)
    module = nn.Linear(64, 10).double()
    fm = FunctionalModel(module)
    theta0 = fm.theta()
    cfg = SGDConfig(lr=0.05, momentum=0.9, weight_decay=1e-3, batch_size=16, epochs=2,
                    log_every=5)
    sched = batch_schedule(np.arange(300), cfg.steps(300), 16, np.random.default_rng(1))
    theta, log = train_sgd(fm, theta0, x, y, sched, cfg)
    oracle = nn.Linear(64, 10).double()
    FunctionalModel(oracle).load(theta0)
    train_sgd_torch(oracle, x, y, sched, cfg)
    np.testing.assert_allclose(theta.numpy(), FunctionalModel(oracle).theta().numpy(),
                               rtol=0, atol=1e-12)
    assert log.steps == list(range(5, sched.shape[0] + 1, 5))
    assert log.loss[-1] < log.loss[0] and log.config["momentum"] == 0.9


def test_batch_schedule_passes():
    sched = batch_schedule(np.arange(10, 20), 7, 4, np.random.default_rng(0))
    assert sched.shape == (7, 4)
    flat = sched.reshape(-1)
    assert sorted(flat[:10]) == list(range(10, 20)) and sorted(flat[10:20]) == list(range(10, 20))


@pytest.mark.parametrize("kind, K", [("logreg-mse", 2), ("logreg", 10), ("mlp", 10)])
def test_batched_models_equal_loop_oracle(digits, kind, K):
    x, y = digits
    yk = (y % 2).double() if kind == "logreg-mse" else y
    fm = build_attack_model(kind, 64, K, hidden=8)
    M = 5
    member = membership_matrix(M, 300, 0)
    seeds = model_seeds(1, M)
    cfg = SGDConfig(lr=0.05, momentum=0.9, weight_decay=5e-4, batch_size=16, epochs=1,
                    log_every=4)
    th0 = init_thetas(fm, seeds)
    sched = schedules(member, cfg, seeds)
    ref = train_models_reference(fm, th0, x, yk, sched, cfg)
    for kw in ({}, {"manual": False}, {"generic": True}, {"chunk": 2}):
        log: list = []
        out = train_models(fm, th0, x, yk, sched, cfg, log=log, **kw)
        np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=0, atol=1e-10)
        steps = sched.shape[1] // cfg.log_every
        assert len(log) == steps * (1 if "chunk" not in kw else 3)
        assert all(np.isfinite(e["mean_batch_loss"]) for e in log)
    # every model trains only on its members
    for m in range(M):
        assert member[m, sched[m]].all()


def _logreg_problem(d_in=5, n=60, K=3, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, d_in, generator=g, dtype=torch.float64)
    y = torch.randint(0, K, (n,), generator=g)
    fm = FunctionalModel(nn.Linear(d_in, K).double())
    theta = torch.randn(fm.d, generator=g, dtype=torch.float64) * 0.3
    return fm, theta, x, y


def test_hessian_matches_closed_form_softmax():
    r"""Softmax regression: H = (1/n) sum_i (diag p_i - p_i p_i^T) (x) x~_i x~_i^T."""
    fm, theta, x, y = _logreg_problem()
    H = mean_loss_hessian(fm, theta, x, y, chunk=17)
    W = theta[:15].reshape(3, 5)
    b = theta[15:]
    p = torch.softmax(x @ W.T + b, -1)
    xt = torch.cat([x, torch.ones(60, 1, dtype=x.dtype)], 1)
    ref = torch.zeros(18, 18, dtype=x.dtype)
    perm = [k * 5 + j for k in range(3) for j in range(5)] + [15, 16, 17]  # (W row-major, b)
    for i in range(60):
        A = torch.diag(p[i]) - torch.outer(p[i], p[i])
        blk = torch.kron(A, torch.outer(xt[i], xt[i]))   # order (k, j) with j over x~ (6)
        ref += blk
    ref /= 60
    # reorder ref from (k, x~ index) to the flat (W, b) order
    idx = [k * 6 + j for k in range(3) for j in range(5)] + [k * 6 + 5 for k in range(3)]
    np.testing.assert_allclose(H.numpy(), ref[idx][:, idx].numpy(), atol=1e-12)
    assert perm  # the flat order is W (3 x 5, row-major) then b


def test_ihvp_cg_matches_dense_solve():
    fm, theta, x, y = _logreg_problem(seed=3)
    H = mean_loss_hessian(fm, theta, x, y)
    hvp = hvp_operator(fm, theta, x, y)
    B = torch.randn(7, fm.d, dtype=torch.float64, generator=torch.Generator().manual_seed(4))
    np.testing.assert_allclose(hvp(B).numpy(), (B @ H).numpy(), atol=1e-12)
    from semi_core.sgd.hessian import _mean_loss
    assert float(_mean_loss(fm, x, y)(theta)) == pytest.approx(float(fm.losses(theta, x, y).mean()),
                                                               rel=1e-14)
    eps = 0.2
    dense = torch.linalg.solve(H + eps * torch.eye(fm.d, dtype=H.dtype), B.T).T
    X, info = cg_solve(hvp, B, damping=eps, tol=1e-13)
    assert info.converged
    np.testing.assert_allclose(X.numpy(), dense.numpy(), rtol=0, atol=1e-8)
    np.testing.assert_allclose(EigenInverse(H, epsilon=eps).solve(B).numpy(), dense.numpy(),
                               atol=1e-10)
    np.testing.assert_allclose(CGInverse(hvp, damping=eps, tol=1e-13).solve(B, power=2).numpy(),
                               EigenInverse(H, epsilon=eps).solve(B, power=2).numpy(),
                               atol=1e-8)


@pytest.mark.slow
def test_lissa_matches_dense_solve():
    fm, theta, x, y = _logreg_problem(seed=3)
    H = mean_loss_hessian(fm, theta, x, y)
    hvp = hvp_operator(fm, theta, x, y)
    B = torch.randn(2, fm.d, dtype=torch.float64, generator=torch.Generator().manual_seed(4))
    eps = 0.2
    dense = torch.linalg.solve(H + eps * torch.eye(fm.d, dtype=H.dtype), B.T).T
    top = float(torch.linalg.eigvalsh(H).max()) + eps
    L = lissa_solve(hvp, B, damping=eps, scale=1.05 * top, depth=80)
    np.testing.assert_allclose(L.numpy(), dense.numpy(), atol=1e-6)


def test_lowrank_pseudo_inverse():
    A = torch.randn(6, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    H = A @ A.T                                  # rank 3
    inv = EigenInverse(H, epsilon=1e-8, method="lowrank")
    assert inv.rank == 3
    np.testing.assert_allclose(inv.solve(torch.eye(6, dtype=H.dtype)).numpy(),
                               np.linalg.pinv(H.numpy()), atol=1e-8)


def test_tabular_loaders(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(12, 5))
    y = rng.integers(1, 101, 12)
    np.savetxt(tmp_path / "p.csv", np.column_stack([y, X]), delimiter=",")
    x2, y2 = load_tabular(tmp_path / "p.csv")
    np.testing.assert_allclose(x2, X)
    assert (y2 == y).all()
    np.savez(tmp_path / "p.npz", features=X, labels=y)
    x3, y3 = load_tabular(tmp_path / "p.npz")
    np.testing.assert_allclose(x3, X)
    assert (y3 == y).all()
    x, y, K = load_bundled("breast-cancer")
    assert x.shape == (569, 30) and K == 2 and abs(x.mean()) < 1e-12
    x, y, K = load_bundled("digits-odd")
    assert set(np.unique(y)) == {0, 1} and K == 2


@pytest.mark.parametrize("write, call, exc, match", [
    (None, lambda p: load_tabular(p / "missing.csv"), FileNotFoundError, "no such data file"),
    ("a.csv", lambda p: load_tabular(p / "a.csv"), ValueError, "different numbers of columns"),
    ("b.csv", lambda p: load_tabular(p / "b.csv"), ValueError, "not comma-separated numbers"),
    ("c.npz", lambda p: load_tabular(p / "c.npz"), ValueError, "needs arrays 'X' and 'y'"),
    ("d.csv", lambda p: load_tabular(p / "d.csv"), ValueError, "labels must be non-negative"),
    ("e.json", lambda p: load_tabular(p / "e.json"), ValueError, "unknown extension"),
    (None, lambda p: load_bundled("mnist"), ValueError, "dataset must be one of"),
    (None, lambda p: SGDConfig(momentum=1.0), ValueError, "momentum must be in"),
    (None, lambda p: SGDConfig(lr=0), ValueError, "lr must be finite and > 0"),
    (None, lambda p: SGDConfig(weight_decay=-1), ValueError, "weight_decay must be"),
    (None, lambda p: build_attack_model("cnn", 4, 2), ValueError, "model must be one of"),
    (None, lambda p: build_attack_model("logreg-mse", 4, 3), ValueError, "binary task"),
    (None, lambda p: membership_matrix(0, 5, 0), ValueError, "n_models must be in"),
    (None, lambda p: EigenInverse(torch.eye(2) * -1.0, epsilon=0.2), ValueError,
     "increase the damping"),
    (None, lambda p: EigenInverse(torch.eye(2), epsilon=2.0, method="lowrank"), ValueError,
     "keeps no eigenvalue"),
    (None, lambda p: EigenInverse(torch.ones(2, 3), epsilon=0.1), ValueError, "square"),
    (None, lambda p: cg_solve(lambda v: -v, torch.ones(1, 3)), ValueError,
     "not positive definite"),
])
def test_bad_inputs(tmp_path, write, call, exc, match):
    if write == "a.csv":
        (tmp_path / write).write_text("1,2,3\n1,2\n")
    elif write == "b.csv":
        (tmp_path / write).write_text("1,2,x\n")
    elif write == "c.npz":
        np.savez(tmp_path / write, A=np.ones(3))
    elif write == "d.csv":
        (tmp_path / write).write_text("0.5,1,2\n1,2,3\n")
    elif write == "e.json":
        (tmp_path / write).write_text("{}")
    with pytest.raises(exc, match=match):
        call(tmp_path)
