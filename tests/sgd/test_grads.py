"""Per-sample gradients (torch.func) against the per-sample autograd loop; clipping."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

from semi_core.sgd.grads import FunctionalModel, clip_rows  # noqa: E402


def _modules():
    torch.manual_seed(0)
    frozen = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3)).double()
    for p in frozen[0].parameters():
        p.requires_grad_(False)
    return {
        "logreg": (nn.Linear(6, 3).double(), "cross_entropy"),
        "mlp": (nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 3)).double(),
                "cross_entropy"),
        "frozen": (frozen, "cross_entropy"),
        "linreg": (nn.Linear(6, 1, bias=False).double(), "mse"),
    }


@pytest.mark.parametrize("kind", ["logreg", "mlp", "frozen", "linreg"])
def test_vmap_per_sample_grads_equal_loop(kind, rng):
    module, loss = _modules()[kind]
    fm = FunctionalModel(module, loss=loss)
    x = torch.as_tensor(rng.normal(size=(7, 6)))
    y = (torch.as_tensor(rng.normal(size=7)) if loss == "mse"
         else torch.as_tensor(rng.integers(0, 3, 7)))
    theta = fm.theta() + 0.1 * torch.as_tensor(rng.normal(size=fm.d))
    fast = fm.per_sample_grads(theta, x, y)
    slow = fm.per_sample_grads_reference(theta, x, y)
    assert fast.shape == (7, fm.d)
    torch.testing.assert_close(fast, slow, rtol=1e-12, atol=1e-12)
    # the batch gradient is the mean of the per-sample gradients
    fm.load(theta)
    module.zero_grad()
    out = module(x)
    full = (nn.functional.cross_entropy(out, y) if loss == "cross_entropy"
            else 0.5 * ((out[:, 0] - y) ** 2).mean())
    full.backward()
    flat = torch.cat([dict(module.named_parameters())[k].grad.reshape(-1) for k in fm.names])
    torch.testing.assert_close(fast.mean(0), flat, rtol=1e-12, atol=1e-12)
    # replicas: R copies of theta on their own batches
    thetas = torch.stack([theta, 2 * theta])
    xb, yb = torch.stack([x, x.flip(0)]), torch.stack([y, y.flip(0)])
    rep = fm.per_sample_grads_batched(thetas, xb, yb)
    torch.testing.assert_close(rep[1], fm.per_sample_grads_reference(2 * theta, x.flip(0), y.flip(0)),
                               rtol=1e-12, atol=1e-12)


def test_frozen_parameters_are_excluded():
    module, _ = _modules()["frozen"]
    fm = FunctionalModel(module)
    assert fm.names == ["2.weight", "2.bias"] and fm.d == 8 * 3 + 3


def test_clip_rows_bounds_norms_and_keeps_small_rows(rng):
    g = torch.as_tensor(rng.normal(size=(50, 9)) * rng.uniform(0.01, 5, size=(50, 1)))
    c = clip_rows(g, 1.5)
    norms = torch.linalg.vector_norm(g, dim=1)
    cn = torch.linalg.vector_norm(c, dim=1)
    assert torch.all(cn <= 1.5 + 1e-12)
    small = norms <= 1.5
    torch.testing.assert_close(c[small], g[small])
    torch.testing.assert_close(cn[~small], torch.full_like(cn[~small], 1.5))
    # direction preserved
    cos = (c * g).sum(1) / (cn * norms)
    torch.testing.assert_close(cos, torch.ones_like(cos))


@pytest.mark.parametrize("clip", [0.0, -1.0, float("nan")])
def test_clip_must_be_positive(clip):
    with pytest.raises(ValueError, match="clip"):
        clip_rows(torch.ones(2, 3), clip)


def test_model_without_trainable_parameters_is_rejected():
    module = nn.Linear(3, 2)
    for p in module.parameters():
        p.requires_grad_(False)
    with pytest.raises(ValueError, match="no trainable parameters"):
        FunctionalModel(module)
    with pytest.raises(TypeError, match="module"):
        FunctionalModel(np.zeros(3))


@pytest.mark.parametrize("kind", ["logreg", "frozen", "mlp"])
def test_ghost_clipped_mean_equals_per_sample_clipping(kind, rng):
    from semi_core.sgd.ghost import ghost_clipped_mean, ghost_parts

    module, _ = _modules()[kind]
    fm = FunctionalModel(module)
    stack = fm.linear_stack()
    assert stack is not None
    thetas = fm.theta() + 0.3 * torch.as_tensor(rng.normal(size=(3, fm.d)))
    x = torch.as_tensor(rng.normal(size=(3, 9, 6)) * 2)
    y = torch.as_tensor(rng.integers(0, 3, (3, 9)))
    per_sample = fm.per_sample_grads_batched(thetas, x, y)
    for clip in (0.05, 0.5, 50.0):
        fast = ghost_clipped_mean(stack, thetas, x, y, clip=clip)
        ref = clip_rows(per_sample, clip).mean(1)
        torch.testing.assert_close(fast, ref, rtol=1e-10, atol=1e-12)
    # per-sample norms from the layer factors
    acts, backs = ghost_parts(stack, thetas, x, y)
    norm2 = sum((b * b).sum(-1) * (a * a).sum(-1) for a, b in zip(acts, backs, strict=True))
    torch.testing.assert_close(norm2, (per_sample**2).sum(-1), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("kind", ["logreg", "frozen", "mlp"])
def test_ghost_grads_equal_vmap_per_sample_grads_on_shared_samples(kind, rng):
    from semi_core.sgd.batched import ghost_grads

    module, _ = _modules()[kind]
    fm = FunctionalModel(module)
    thetas = fm.theta() + 0.3 * torch.as_tensor(rng.normal(size=(4, fm.d)))
    x = torch.as_tensor(rng.normal(size=(5, 6)) * 2)
    y = torch.as_tensor(rng.integers(0, 3, 5))
    torch.testing.assert_close(ghost_grads(fm.linear_stack(), thetas, x, y),
                               fm.per_sample_grads_batched(thetas, x, y, shared=True),
                               rtol=1e-12, atol=1e-14)


def test_unsupported_structures_fall_back_to_generic():
    module, loss = _modules()["linreg"]
    assert FunctionalModel(module, loss=loss).linear_stack() is None  # mse, no bias
    conv = nn.Sequential(nn.Conv1d(1, 2, 3), nn.Flatten(), nn.Linear(8, 3)).double()
    assert FunctionalModel(conv).linear_stack() is None
