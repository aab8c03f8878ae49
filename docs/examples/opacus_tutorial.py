# docs: slow
"""From your Opacus training to a certified epsilon (the tutorial page runs this file)."""
# [1-train]
import matplotlib.pyplot as plt
import numpy as np
import torch
from opacus import PrivacyEngine
from torch import nn

# synthetic data made here (no download): 512 records, 8 features; the last two features are
# zero in every record, so their weights get no natural gradient (room for a Dirac canary)
rng = np.random.default_rng(0)
x = rng.normal(size=(512, 8))
x[:, -2:] = 0.0
y = np.argmax(x @ rng.normal(size=(8, 3)) + rng.gumbel(size=(512, 3)), axis=1)
X, Y = torch.as_tensor(x), torch.as_tensor(y)


def make_model():
    torch.manual_seed(0)
    return nn.Linear(8, 3).double()


def train_epoch(model, optimizer, loader):          # your training code, as you wrote it
    criterion = nn.CrossEntropyLoss()
    for data, target in loader:
        optimizer.zero_grad()
        criterion(model(data), target).backward()
        optimizer.step()


EPOCHS, DELTA = 4, 1e-5
model = make_model()
loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(X, Y), batch_size=32)
engine = PrivacyEngine()
model, optimizer, loader = engine.make_private_with_epsilon(
    module=model, optimizer=torch.optim.SGD(model.parameters(), lr=0.5), data_loader=loader,
    target_epsilon=0.5, target_delta=DELTA, epochs=EPOCHS, max_grad_norm=1.0)
for _ in range(EPOCHS):
    train_epoch(model, optimizer, loader)
sigma = optimizer.noise_multiplier
print(f"[1] Opacus: noise multiplier {sigma:.3f}, {len(loader)} steps per epoch, "
      f"accountant epsilon {engine.accountant.get_epsilon(delta=DELTA):.3f}")
# [2-audit]
from semi_core.integrations.opacus import audit_opacus  # noqa: E402

rep = audit_opacus(make_model, (X, Y), noise_multiplier=sigma, max_grad_norm=1.0,
                   batch_size=32, steps=4, tau=2, lr=0.5, rounds=400, delta=DELTA,
                   canary="dirac", semi=False, seed=0)
print("[2]", rep.summary())
# [3-bug]
buggy = audit_opacus(make_model, (X, Y), noise_multiplier=sigma, max_grad_norm=1.0,
                     batch_size=32, steps=4, tau=2, lr=0.5, rounds=400, delta=DELTA,
                     canary="dirac", semi=False, seed=0, bug="noise_reused")
print("[3]", buggy)
# [4-loop]
from semi_core.integrations.training import TrainingLoop, audit_training  # noqa: E402

loop = TrainingLoop.from_opacus(train_epoch, model, optimizer, loader, engine,
                                target_epsilon=0.5, target_delta=DELTA, epochs=EPOCHS,
                                n_reference=64)
report = audit_training(loop, rounds=100, seed=0, methods=["band", "cp"])
print("[4]", report.summary())
# [5-figure]
fig, axes = plt.subplots(1, 2, figsize=(8, 3.2), sharey=True)
for ax, (r, test, title) in zip(axes, ((rep, "dirac", "correct Opacus run"),
                                       (buggy, "dirac_contrast", "noise reused across steps"))):
    game = r.game
    s = game.stats[test]
    bins = np.linspace(np.percentile(s, 0.5), np.percentile(s, 99.5), 40)
    ax.hist(s[game.member], bins, alpha=0.6, label="canary in")
    ax.hist(s[~game.member], bins, alpha=0.6, label="canary out")
    ax.set(title=title, xlabel=f"{test} score")
axes[0].set_ylabel("runs")
axes[0].legend(fontsize=8)
fig.tight_layout()
