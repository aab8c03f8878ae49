# docs: slow
"""Your own DP-SGD loop, audited white-box: many runs with one canary each, or ONE run with
many canaries."""
import matplotlib.pyplot as plt
import numpy as np
import torch
from torch import nn
from torch.func import functional_call, grad, vmap

from semi_core.integrations.one_run_training import OneRunLoop, audit_one_run
from semi_core.integrations.training import TrainingLoop, audit_training

gen = torch.Generator().manual_seed(0)
X = torch.randn(500, 6, dtype=torch.float64, generator=gen)
X[:, -1] = 0                                      # your data (a feature never used)
Y = (X[:, 0] > 0).long() + (X[:, 1] > 1).long()
LR, BATCH, CLIP, SIGMA = 0.2, 16, 1.0, 2.0


def make_model(width=8):
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(6, width), nn.ReLU(), nn.Linear(width, 3)).double()


def train(model, run):                 # your loop, with the three calls the audit needs
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    params = dict(model.named_parameters())

    def loss(p, x, y):
        return nn.functional.cross_entropy(functional_call(model, p, (x[None],)), y[None])

    for t in range(1, run.steps + 1):
        idx = torch.randperm(len(X), generator=run.generator)[:BATCH]
        x, y = run.canary_batch(t, X[idx], Y[idx])                 # 1: an input canary
        g = vmap(grad(loss), in_dims=(None, 0, 0))({k: v.detach() for k, v in params.items()},
                                                   x, y)
        g = run.canary_gradients(t, g)                              # 2: a gradient canary
        f = (CLIP / torch.cat([v.flatten(1) for v in g.values()], 1).norm(dim=1)).clamp(max=1)
        for k, p in params.items():
            noise = SIGMA * CLIP * torch.randn(p.shape, generator=run.generator, dtype=p.dtype)
            p.grad = ((g[k] * f.view(-1, *[1] * p.dim())).sum(0) + noise) / BATCH
        opt.step()
        run.record(model)                                           # 3: record the step


loop = TrainingLoop(train, make_model(), reference=(X[:64], Y[:64]), steps=3, lr=LR,
                    batch_size=BATCH, noise_multiplier=SIGMA, max_grad_norm=CLIP)
report = audit_training(loop, rounds=200, seed=0, methods=["band", "gdp"])
print(report.summary())

one = OneRunLoop(train, make_model(128), reference=(X[:64], Y[:64]), steps=16, lr=LR,
                 batch_size=BATCH, noise_multiplier=SIGMA, max_grad_norm=CLIP, canaries=128)
result = audit_one_run(one, seed=0)                                 # ONE training run
print(result.summary())

s, m = np.asarray(result.scores["dirac"]), np.asarray(result.member, bool)
fig, ax = plt.subplots(figsize=(5, 3.2))
bins = np.linspace(s.min(), s.max(), 30)
ax.hist(s[m], bins, alpha=0.6, label=f"included ({m.sum()})")
ax.hist(s[~m], bins, alpha=0.6, label=f"not included ({(~m).sum()})")
ax.set(xlabel="white-box score of the canary at its step", ylabel="canaries",
       title="one run, 128 Dirac canaries")
ax.legend(fontsize=8)
fig.tight_layout()
