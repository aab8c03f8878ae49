"""A user-style DP-SGD loop that saves checkpoints (for the checkpoint-audit tests)."""

import numpy as np
import torch
from torch import nn

D_IN, N_CLASSES = 6, 3


def make_model() -> nn.Module:
    """The user's architecture: a small MLP (its factory is imported as module:callable)."""
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(D_IN, 8), nn.Tanh(), nn.Linear(8, N_CLASSES)).double()


def data(seed=0, n=400):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, D_IN))
    y = (x[:, 0] > 0).astype(np.int64) + (x[:, 1] > 1).astype(np.int64)
    return x, y


CANARY = (np.full(D_IN, 3.0), 2)


def train_run(out_dir, *, member, tau, seed, steps=4, batch=16, lr=0.5, clip=1.0, sigma=1.0,
              fmt="safetensors", pool=None, every=1, save0=True, dtype=None, name=None):
    """Plain torch DP-SGD (per-sample clip, Gaussian noise), a checkpoint every ``every`` steps
    (``save0=False``: theta_0 not saved; ``dtype``: weights cast when saved; ``name(t)``: the
    file stem)."""
    from pathlib import Path

    from torch.func import functional_call, grad, vmap

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    model = make_model()
    params = {k: v.detach().clone() for k, v in model.named_parameters()}
    x, y = pool if pool is not None else data(1)
    rng = np.random.default_rng(seed)
    gen = torch.Generator().manual_seed(int(seed))

    def loss(p, xi, yi):
        return nn.functional.cross_entropy(functional_call(model, p, (xi[None],)), yi[None])

    def save(t):
        if (t == 0 and not save0) or t % every:
            return
        state = {k: (v if dtype is None else v.to(dtype)).clone() for k, v in params.items()}
        if fmt == "safetensors":
            from safetensors.torch import save_file
            save_file(state, str(out / f"{name(t) if name else f'step_{t}'}.safetensors"))
        else:
            torch.save({"state_dict": state, "step": t},
                       out / f"{name(t) if name else f'ckpt-{t:03d}'}.pt")

    save(0)
    for t in range(1, steps + 1):
        idx = rng.choice(len(x), size=batch, replace=False)
        xb, yb = torch.as_tensor(x[idx]), torch.as_tensor(y[idx])
        if member and t == tau:
            xb[0], yb[0] = torch.as_tensor(CANARY[0]), CANARY[1]
        g = vmap(grad(loss), in_dims=(None, 0, 0))(params, xb, yb)
        flat = torch.cat([g[k].reshape(batch, -1) for k in params], 1)
        f = torch.clamp(clip / flat.norm(dim=1).clamp_min(1e-12), max=1.0)
        for k in params:
            gk = (g[k] * f.reshape(-1, *[1] * (g[k].ndim - 1))).sum(0)
            noise = sigma * clip * torch.randn(gk.shape, generator=gen, dtype=gk.dtype)
            params[k] = params[k] - lr * (gk + noise) / batch
        save(t)
