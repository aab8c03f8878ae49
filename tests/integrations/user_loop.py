"""The user's code of tests/integrations/test_training.py: their model, data, loss, optimizer
and DP-SGD step, in a module of their own (importable, so Dask workers can load it)."""

import numpy as np
import torch
from torch import nn
from torch.func import functional_call, grad, vmap

from semi_core.sgd.accounting import calibrate_sigma

LR, BATCH, CLIP, STEPS = 0.2, 16, 1.0, 3
SIGMA = calibrate_sigma(2.0, 1e-5)
_rng = np.random.default_rng(0)
X = torch.as_tensor(_rng.standard_normal((500, 6)))
X[:, -1] = 0.0                                        # a feature no record uses
Y = torch.as_tensor((X[:, 0] + X[:, 1] > 0).long() + (X[:, 2] > 1).long())


def make_model():
    torch.manual_seed(1)
    return nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3)).double()


def user_train(model, run, *, clip=True, noise_scale=1.0):
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    params = dict(model.named_parameters())

    def loss_fn(p, x, y):
        return nn.functional.cross_entropy(functional_call(model, p, (x[None],)), y[None])

    per_sample = vmap(grad(loss_fn), in_dims=(None, 0, 0))
    for t in range(1, run.steps + 1):
        idx = torch.randperm(len(X), generator=run.generator)[:BATCH]
        x, y = run.canary_batch(t, X[idx], Y[idx])
        g = per_sample({k: v.detach() for k, v in params.items()}, x, y)
        g = run.canary_gradients(t, g)
        norms = torch.cat([v.flatten(1) for v in g.values()], 1).norm(dim=1)
        factor = (CLIP / norms).clamp(max=1.0) if clip else torch.ones_like(norms)
        for k, p in params.items():
            noise = noise_scale * SIGMA * CLIP * torch.randn(p.shape, generator=run.generator,
                                                             dtype=p.dtype)
            p.grad = ((g[k] * factor.view(-1, *[1] * p.dim())).sum(0) + noise) / BATCH
        opt.step()
        run.record(model)


SIGMA_1 = calibrate_sigma(1.0, 1e-5)


def noise_on_mean_bug(model, run):
    """A common bug: the noise is divided by the batch size twice (std sigma*C/n on the sum),
    in a loop that claims epsilon = 1 (noise_multiplier SIGMA_1)."""
    user_train(model, run, noise_scale=SIGMA_1 / SIGMA / BATCH)

def opacus_train(model, run):
    """The same loop written with Opacus objects (GradSampleModule, DPOptimizer)."""
    from opacus import GradSampleModule
    from opacus.optimizers import DPOptimizer

    gsm = GradSampleModule(model, loss_reduction="mean")
    opt = DPOptimizer(torch.optim.SGD(gsm.parameters(), lr=LR), noise_multiplier=SIGMA,
                      max_grad_norm=CLIP, expected_batch_size=BATCH, loss_reduction="mean",
                      generator=run.generator)
    for t in range(1, run.steps + 1):
        idx = torch.randperm(len(X), generator=run.generator)[:BATCH]
        x, y = run.canary_batch(t, X[idx], Y[idx])
        opt.zero_grad()
        nn.functional.cross_entropy(gsm(x), y).backward()
        run.canary_gradients(t, gsm)          # edits p.grad_sample before Opacus clips
        opt.step()
        run.record(gsm)


Q = BATCH / len(X)                                    # Poisson sample rate: expected batch BATCH


def poisson_train(model, run, *, clip=True, noise_scale=1.0):
    """The same loop with Poisson sampling (Opacus' default): each record in each batch with
    probability Q, batches of any size, the sum divided by the expected size BATCH."""
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    params = dict(model.named_parameters())

    def loss_fn(p, x, y):
        return nn.functional.cross_entropy(functional_call(model, p, (x[None],)), y[None])

    per_sample = vmap(grad(loss_fn), in_dims=(None, 0, 0))
    for t in range(1, run.steps + 1):
        idx = torch.nonzero(torch.rand(len(X), generator=run.generator) < Q).flatten()
        x, y = run.canary_batch(t, X[idx], Y[idx])
        g = per_sample({k: v.detach() for k, v in params.items()}, x, y)
        g = run.canary_gradients(t, g)
        norms = torch.cat([v.flatten(1) for v in g.values()], 1).norm(dim=1)
        factor = (CLIP / norms).clamp(max=1.0) if clip else torch.ones_like(norms)
        for k, p in params.items():
            noise = noise_scale * SIGMA * CLIP * torch.randn(p.shape, generator=run.generator,
                                                             dtype=p.dtype)
            p.grad = ((g[k] * factor.view(-1, *[1] * p.dim())).sum(0) + noise) / BATCH
        opt.step()
        run.record(model)
