"""Audit a directory of saved training runs, as a user would (``semi-core audit-checkpoints``).

A user-style DP-SGD loop (a small MLP on synthetic data, per-sample clipping and Gaussian noise
written by hand in plain torch, not the toolkit's trainer) trains ``--runs`` runs of ``T``
steps; each run inserts an input canary (a record in an input field no natural record uses,
labelled by the auditor) at step ``tau`` with probability 1/2 and saves a safetensors
checkpoint every ``--every`` steps (without theta_0 when ``--every`` > 1: the model factory
gives it) under ``OUT/member/runK`` or ``OUT/non-member/runK``. The
toolkit then reads the checkpoints back and certifies an epsilon lower bound for every test and
method, beside the run's exact epsilon (one step of the Gaussian mechanism with sensitivity
``2C`` and noise ``sigma C``: mu = 2/sigma-GDP, replace-one).

Run: ``python analysis/checkpoint_audit.py --runs 200 --out /tmp/ckpt_runs`` (every step) or
``--steps 30 --every 10 --tau 15`` (every 10 steps). It prints the CPU seconds of the audit per
100 runs beside the bounds.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch
from safetensors.torch import save_file
from torch import nn
from torch.func import functional_call, grad, vmap

from semi_core.audit.bounds import METHODS
from semi_core.audit.roc import auc
from semi_core.integrations.checkpoints import CheckpointRuns, audit_checkpoints
from semi_core.sgd.accounting import calibrate_sigma, dpsgd_epsilon

D_IN, HIDDEN, K = 10, 16, 3


def make_model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(D_IN, HIDDEN), nn.Tanh(), nn.Linear(HIDDEN, K)).double()


def user_data(n: int, seed: int):
    """Synthetic tabular data; the last two features are an unused (always 0) input field."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, D_IN))
    x[:, -2:] = 0.0
    y = np.argmax(x[:, :K] + 0.5 * rng.standard_normal((n, K)), axis=1)
    return x, y


def input_canary():
    """An input-space canary in the unused field (its gradient reaches weights no natural
    record moves, so the audit is white-box tight), with a label chosen by the auditor."""
    x = np.zeros(D_IN)
    x[-1] = 5.0
    return x, 1


def train_and_save(out: Path, *, member: bool, tau: int, seed: int, x, y, canary, steps: int,
                   batch: int, lr: float, clip: float, sigma: float, every: int = 1) -> None:
    """The user's loop: DP-SGD by hand, a checkpoint every ``every`` steps (step 0 = the init,
    saved only when every step is)."""
    out.mkdir(parents=True, exist_ok=True)
    model = make_model()
    params = {k: v.detach().clone() for k, v in model.named_parameters()}
    rng = np.random.default_rng(seed)
    gen = torch.Generator().manual_seed(seed)

    def loss(p, xi, yi):
        return nn.functional.cross_entropy(functional_call(model, p, (xi[None],)), yi[None])

    if every == 1:
        save_file({k: v.clone() for k, v in params.items()}, str(out / "step_0.safetensors"))
    for t in range(1, steps + 1):
        idx = rng.choice(len(x), size=batch, replace=False)
        xb, yb = torch.as_tensor(x[idx]), torch.as_tensor(y[idx])
        if member and t == tau:
            xb[0], yb[0] = torch.as_tensor(canary[0]), int(canary[1])
        g = vmap(grad(loss), in_dims=(None, 0, 0))(params, xb, yb)
        norms = torch.cat([g[k].reshape(batch, -1) for k in params], 1).norm(dim=1)
        f = torch.clamp(clip / norms.clamp_min(1e-12), max=1.0)
        for k in params:
            gk = (g[k] * f.reshape(-1, *[1] * (g[k].ndim - 1))).sum(0)
            noise = sigma * clip * torch.randn(gk.shape, generator=gen, dtype=gk.dtype)
            params[k] = params[k] - lr * (gk + noise) / batch
        if t % every == 0:
            save_file({k: v.clone() for k, v in params.items()},
                      str(out / f"step_{t}.safetensors"))


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--out", type=Path, default=Path("results/checkpoint_runs"))
    ap.add_argument("--epsilon", type=float, default=4.0)
    ap.add_argument("--delta", type=float, default=1e-5)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--tau", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--every", type=int, default=1)
    args = ap.parse_args(argv)
    batch, lr, clip = 32, 0.5, 1.0
    sigma = calibrate_sigma(args.epsilon, args.delta)
    x, y = user_data(2000, args.seed)
    ref = user_data(256, args.seed + 1)
    canary = input_canary()
    rng = np.random.default_rng(args.seed + 2)
    t0 = time.perf_counter()
    dirs, member = [], []
    for i in range(args.runs):
        m = bool(rng.random() < 0.5)
        d = args.out / ("member" if m else "non-member") / f"run{i:04d}"
        train_and_save(d, member=m, tau=args.tau, seed=10_000 + i, x=x, y=y, canary=canary,
                       steps=args.steps, batch=batch, lr=lr, clip=clip, sigma=sigma,
                       every=args.every)
        dirs.append(d)
        member.append(m)
    t_train = time.perf_counter() - t0
    runs = CheckpointRuns(make_model(), reference=ref, target=canary, lr=lr, batch_size=batch,
                          steps=args.steps, every=args.every, noise_multiplier=sigma,
                          max_grad_norm=clip)
    out = {"runs": args.runs, "members": int(sum(member)), "epsilon_true":
           dpsgd_epsilon(sigma, args.delta), "sigma": sigma, "seconds_training": t_train,
           "methods": {}}
    methods = [m for m in METHODS if m != "one-run"]
    t1, c1 = time.perf_counter(), time.process_time()
    res = audit_checkpoints(runs, dirs, member=member, tau=args.tau, delta=args.delta,
                            methods=methods)
    out["seconds_audit"] = time.perf_counter() - t1
    out["cpu_seconds_audit_per_100_runs"] = 100 * (time.process_time() - c1) / args.runs
    out["theta0"], out["saved_steps"] = res["theta0"], res["config"]["saved_steps"]
    for meth in methods:
        out["methods"][meth] = {t: res.epsilon_lower_bound(t, meth) for t in res.tests}
        out["methods"][meth]["max_certifiable"] = res.epsilon_max_certifiable("semi-star", meth)
    g = res.game
    out["auc"] = {t: float(auc(*g.scores(t))) for t in g.stats}
    print(json.dumps(out, indent=2))
    return out


if __name__ == "__main__":
    main()
