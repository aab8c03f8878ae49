# docs: slow
"""A white-box DP-SGD audit: a Dirac gradient canary in a small softmax model trained by
DP-SGD, certified epsilon lower bounds beside the exact epsilon, and a bug the audit catches."""
import matplotlib.pyplot as plt
import numpy as np
import torch

from semi_core.integrations.opacus import audit_opacus

# 400 records, 8 features of which the last two are always 0: the weights of those features
# get no natural gradient, so a Dirac canary placed there is isolated from training
rng = np.random.default_rng(0)
x = rng.normal(size=(400, 8))
x[:, -2:] = 0.0
y = np.argmax(x @ rng.normal(size=(8, 3)) + rng.gumbel(size=(400, 3)), axis=1)
data = (torch.as_tensor(x), torch.as_tensor(y))


def model_fn():
    torch.manual_seed(0)
    return torch.nn.Linear(8, 3).double()


reports = {}
for bug in (None, "noise_reused"):          # a correct run, then the same noise at every step
    reports[bug] = audit_opacus(model_fn, data, noise_multiplier=2.0, max_grad_norm=1.0,
                                batch_size=16, steps=3, tau=2, rounds=2000, delta=1e-5,
                                engine="batched", semi=False, bug=bug, seed=0)
    print(f"--- bug={bug}")
    print(reports[bug].summary())

fig, axes = plt.subplots(1, 2, figsize=(8, 3.2), sharey=True)
for ax, (bug, test) in zip(axes, ((None, "dirac"), ("noise_reused", "dirac_contrast"))):
    game = reports[bug].game
    s = game.stats[test]
    bins = np.linspace(np.percentile(s, 0.5), np.percentile(s, 99.5), 50)
    ax.hist(s[game.member], bins, alpha=0.6, label="canary in (member)")
    ax.hist(s[~game.member], bins, alpha=0.6, label="canary out")
    ax.set(title=f"{test}, bug={bug}", xlabel="score")
axes[0].set_ylabel("runs")
axes[0].legend(fontsize=8)
fig.tight_layout()
