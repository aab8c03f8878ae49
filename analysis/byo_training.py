"""Bring your own training loop: certified eps_LB of a user-style DP-SGD loop at claimed eps.

The loop below is written as a user would write it (plain torch, ``torch.func`` per-sample
gradients, ``torch.optim.SGD``; not the toolkit's trainer), with the three calls of
:mod:`semi_core.integrations.training` (``canary_batch``, ``canary_gradients``, ``record``).
For each claimed epsilon its noise multiplier is calibrated (one DP-SGD step holds the canary,
replace-one: mu = 2/sigma-GDP), ``--rounds`` runs are played through the one runner with a Dirac
canary, and every test (SeMI*, SeMI-Unif, SeMI-max, Final Observation) is certified by every
method. Two bug-injected variants of the same loop (clipping forgotten; noise divided by the
batch size twice) are audited the same way: a certified bound above the claimed epsilon is a
bug caught.

Run: ``python analysis/byo_training.py --rounds 1000`` (prints a table and writes JSON with
``--json FILE``).
"""

from __future__ import annotations

import argparse
import json
import time
import warnings

import numpy as np
import torch
from torch import nn
from torch.func import functional_call, grad, vmap

from semi_core.audit.bounds import METHODS
from semi_core.integrations.training import TrainingLoop, audit_training
from semi_core.sgd.accounting import calibrate_sigma

D_IN, HIDDEN, K = 8, 12, 4
LR, BATCH, CLIP, STEPS, DELTA = 0.1, 32, 1.0, 4, 1e-5

_rng = np.random.default_rng(2024)
X = torch.as_tensor(_rng.standard_normal((3000, D_IN)))
X[:, -1] = 0.0                                           # a feature no record uses
Y = torch.as_tensor(np.argmax(X.numpy()[:, :K] + 0.3 * _rng.standard_normal((3000, K)), 1))
BUGS = ("none", "no_clipping", "noise_over_n")


def make_model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(D_IN, HIDDEN), nn.Tanh(), nn.Linear(HIDDEN, K)).double()


def train(model, run, *, sigma: float, bug: str = "none"):
    """The user's DP-SGD loop (``bug`` injects one of two classic mistakes)."""
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    params = dict(model.named_parameters())

    def loss_fn(p, x, y):
        return nn.functional.cross_entropy(functional_call(model, p, (x[None],)), y[None])

    per_sample = vmap(grad(loss_fn), in_dims=(None, 0, 0))
    for t in range(1, run.steps + 1):
        idx = torch.randint(len(X), (BATCH,), generator=run.generator)
        x, y = run.canary_batch(t, X[idx], Y[idx])
        g = run.canary_gradients(t, per_sample({k: v.detach() for k, v in params.items()}, x, y))
        norms = torch.cat([v.flatten(1) for v in g.values()], 1).norm(dim=1)
        factor = torch.ones_like(norms) if bug == "no_clipping" else (CLIP / norms).clamp(max=1)
        std = sigma * CLIP / (BATCH if bug == "noise_over_n" else 1)
        for k, p in params.items():
            noise = std * torch.randn(p.shape, generator=run.generator, dtype=p.dtype)
            p.grad = ((g[k] * factor.view(-1, *[1] * p.dim())).sum(0) + noise) / BATCH
        opt.step()
        run.record(model)


class UserTrain:
    """``train`` with its configuration bound (picklable, for any executor)."""

    def __init__(self, sigma: float, bug: str):
        self.sigma, self.bug = sigma, bug
        self.__qualname__ = f"train[{bug}]"

    def __call__(self, model, run):
        return train(model, run, sigma=self.sigma, bug=self.bug)


def audit_one(eps: float, bug: str, rounds: int, seed: int, methods) -> dict:
    sigma = calibrate_sigma(eps, DELTA)
    loop = TrainingLoop(UserTrain(sigma, bug), make_model(), reference=(X[:128], Y[:128]),
                        steps=STEPS, lr=LR, batch_size=BATCH, noise_multiplier=sigma,
                        max_grad_norm=CLIP)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rep = audit_training(loop, rounds, seed, claimed_epsilon=eps, delta=DELTA,
                             methods=methods, chunk_size=250)
    lb = {t: {m: r.epsilon_lower_bound for m, r in per.items()} for t, per in rep.bounds.items()}
    return {"claimed_epsilon": eps, "bug": bug, "sigma": sigma, "rounds": rounds,
            "accountant": rep["accountant"], "epsilon_lower_bound": lb,
            "max_certifiable": {m: rep.epsilon_max_certifiable("semi-star", m)
                                for m in rep.methods},
            "refuted": rep.refuted,
            "refuted_under_assumption": rep.refuted_under_assumption,
            "seconds": time.perf_counter() - t0,
            "coordinate_second_moment": loop.coordinate_moment}


def verdict(r: dict) -> str:
    """CAUGHT: a distribution-free bound exceeds the claim; (gdp): only an assumption-bound one."""
    if r["refuted"]:
        return "CAUGHT"
    return "caught under the GDP assumption only" if r["refuted_under_assumption"] else "ok"


def main(argv=None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=1000)
    ap.add_argument("--epsilons", type=float, nargs="+", default=[1.0, 2.0, 4.0, 8.0])
    ap.add_argument("--bugs", nargs="+", choices=BUGS, default=list(BUGS))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    torch.set_num_threads(1)          # tiny model: intra-op threads only add contention
    methods = [m for m in METHODS if m != "one-run"]
    rows = []
    for bug in args.bugs:
        for eps in args.epsilons:
            rows.append(audit_one(eps, bug, args.rounds, args.seed, methods))
            r = rows[-1]
            star, mx = r["epsilon_lower_bound"]["semi-star"], r["epsilon_lower_bound"]["semi-max"]
            fin = r["epsilon_lower_bound"]["final"]
            print(f"| {bug} | {eps:g} | {r['sigma']:.3f} | {r['accountant']['gdp_exact']:.3f} | "
                  f"{r['accountant']['dp_accounting_pld'] or float('nan'):.3f} | "
                  f"{star['band']:.2f} / {star['cp']:.2f} / {star['dkw']:.2f} / "
                  f"{star['gdp']:.2f} | {mx['band']:.2f} / {mx['gdp']:.2f} | "
                  f"{fin['band']:.2f} / {fin['gdp']:.2f} | {r['max_certifiable']['band']:.2f} | "
                  f"{verdict(r)} | {r['seconds']:.0f} s |", flush=True)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=1)
    return rows


if __name__ == "__main__":
    print("| bug | claimed eps | sigma | accountant GDP | PLD | SeMI* band/cp/dkw/gdp | "
          "SeMI-max band/gdp | Final band/gdp | max certifiable (band) | verdict | time |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    main()
