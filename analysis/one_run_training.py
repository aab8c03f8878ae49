"""Many canaries in ONE run of a user's DP-SGD loop against R separate runs, at equal CPU time;
and a misreported sample rate caught from one run.

1. Tightness (:func:`semi_core.integrations.one_run_training.audit_one_run`): the README's
   plain-torch loop (an MLP whose first layer reads ``ZERO`` all-zero features, so that it has
   more than 1000 isolated coordinates) with sigma calibrated so that one canary's relation
   (replace-one, one step, no subsampling; mu = 2/sigma) has eps(1e-5) = eps for
   eps in {2, 4, 8}; m in {100, 1000} Dirac canaries spread over T = 10 steps of batch 128,
   each included with probability 1/2; median over 5 seeds (min-max) of eps_LB of ``one-run`` and
   ``one-run-fdp``
   (distribution-free (eps, delta) curve) from the per-step log-LR at each canary's step. Beside
   it, :func:`~semi_core.integrations.training.audit_training` on the SAME loop (one Dirac
   canary per run, tau = 5) with R runs, R the number of runs that fit in the one run's CPU time
   (at least the 4 runs it accepts), and with R = 200 for scale; certified with ``band``
   (distribution-free) and ``gdp`` (mu-GDP assumption). CPU seconds are process time with one
   torch thread, measured in the same run.
2. Sample rate (``--only sample-rate`` alone): input canaries through the loop's own Poisson sampler
   (``run.dataset``) declared at q = 0.01, T = 20, sigma = 1 (eps(1e-5) = 0.455, add/remove);
   the loop's sampler really uses q' in {0.01, 0.1, 1.0}; black-box loss scores of m canaries.

Usage::

    python analysis/one_run_training.py                 # both tables
    python analysis/one_run_training.py --quick         # m = 100, eps = 4 only
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import torch
from torch import nn
from torch.func import functional_call, grad, vmap

from semi_core.integrations.one_run_training import OneRunLoop, audit_one_run
from semi_core.integrations.training import TrainingLoop, audit_training
from semi_core.sgd.accounting import calibrate_sigma

F_REAL, ZERO, N = 6, 130, 4000
LR, BATCH, CLIP, STEPS, DELTA = 0.2, 128, 1.0, 10, 1e-5


def _data(features_zero, n, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.zeros(n, F_REAL + features_zero, dtype=torch.float64)
    x[:, :F_REAL] = torch.randn(n, F_REAL, generator=g, dtype=torch.float64)
    return x, (x[:, 0] > 0).long() + (x[:, 1] > 1).long()


X, Y = _data(ZERO, N)


def make_model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(F_REAL + ZERO, 8), nn.ReLU(), nn.Linear(8, 3)).double()


def make_train(sigma, *, rate=None, q_declared=None, data=(X, Y), batch=BATCH):
    """The README's loop: fixed batches (``rate=None``) or Poisson sampling at ``rate`` from
    ``run.dataset`` (normalised by the declared expected batch size)."""
    dx0, dy0 = data

    def train(model, run):
        opt = torch.optim.SGD(model.parameters(), lr=LR if rate is None else 1.0)
        params = dict(model.named_parameters())

        def loss(p, x, y):
            return nn.functional.cross_entropy(functional_call(model, p, (x[None],)), y[None])

        dx, dy = (dx0, dy0) if rate is None else run.dataset(dx0, dy0)
        norm = batch if rate is None else q_declared * len(dx0)
        for t in range(1, run.steps + 1):
            if rate is None:
                idx = torch.randperm(len(dx), generator=run.generator)[:batch]
            else:
                idx = torch.rand(len(dx), generator=run.generator, dtype=torch.float64) < rate
            x, y = run.canary_batch(t, dx[idx], dy[idx])
            g = vmap(grad(loss), in_dims=(None, 0, 0))(
                {k: v.detach() for k, v in params.items()}, x, y)
            g = run.canary_gradients(t, g)
            f = (CLIP / torch.cat([v.flatten(1) for v in g.values()], 1).norm(dim=1)).clamp(max=1)
            for k, p in params.items():
                noise = sigma * CLIP * torch.randn(p.shape, generator=run.generator,
                                                   dtype=p.dtype)
                p.grad = ((g[k] * f.view(-1, *[1] * p.dim())).sum(0) + noise) / norm
            opt.step()
            run.record(model)
    return train


def tightness(epsilons=(2.0, 4.0, 8.0), ms=(100, 1000), *, seed=0, r_scale=200, reps=5):
    rows = []
    for eps in epsilons:
        sigma = calibrate_sigma(eps, DELTA)
        train = make_train(sigma)
        ref = (X[:128], Y[:128])
        kw = dict(reference=ref, steps=STEPS, lr=LR, batch_size=BATCH, noise_multiplier=sigma,
                  max_grad_norm=CLIP)
        many = TrainingLoop(train, make_model(), **kw)
        t0 = time.process_time()
        audit_training(many, rounds=4, seed=seed, methods=["band"])
        per_run = (time.process_time() - t0) / 4
        cache = {}
        for m in ms:
            loop = OneRunLoop(train, make_model(), canaries=m, **kw)
            one = {"one-run": [], "one-run-fdp": []}
            secs = []
            for rep in range(reps):  # independent one-run audits: seeds seed, seed + 1, ...
                t0 = time.process_time()
                res = audit_one_run(loop, seed=seed + rep)
                secs.append(time.process_time() - t0)
                for meth in one:
                    one[meth].append(res.epsilon_lower_bound("dirac", meth) / eps)
            one_s = float(np.median(secs))
            r_eq = max(4, int(one_s / per_run))
            for r in sorted({r_eq, r_scale}):
                if r not in cache:
                    t0 = time.process_time()
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        rep = audit_training(many, rounds=r, seed=seed, methods=["band", "gdp"])
                    best = {mm: max(rep.epsilon_lower_bound(t, mm) for t in rep.tests)
                            for mm in ("band", "gdp")}
                    cache[r] = (best, time.process_time() - t0)
            row = {"eps": eps, "m": m, "sigma": sigma,
                   "one-run": float(np.median(one["one-run"])),
                   "one-run-fdp": float(np.median(one["one-run-fdp"])),
                   "one-run range": (min(one["one-run"]), max(one["one-run"])),
                   "one_s": one_s, "r_eq": r_eq, "per_run_s": per_run}
            for tag, r in (("eq", r_eq), ("scale", r_scale)):
                best, secs = cache[r]
                row[f"band_{tag}"] = best["band"] / eps
                row[f"gdp_{tag}"] = best["gdp"] / eps
                row[f"s_{tag}"] = secs
            rows.append(row)
            print(_fmt_row(row), flush=True)
    return rows


HEAD = ("| eps | m | one run: one-run, median (min-max) | one run: one-run-fdp (eps,delta) | "
        "one run CPU s | "
        "R at equal CPU | R runs: band | R runs: gdp (mu-GDP) | R runs CPU s | "
        "R=200: band | R=200: gdp (mu-GDP) | R=200 CPU s |\n" + "|---" * 12 + "|")


def _fmt_row(r):
    lo, hi = r["one-run range"]
    return (f"| {r['eps']:g} | {r['m']} | {r['one-run']:.3f} ({lo:.3f}-{hi:.3f}) | "
            f"{r['one-run-fdp']:.3f} | "
            f"{r['one_s']:.1f} | {r['r_eq']} | {r['band_eq']:.3f} | {r['gdp_eq']:.3f} | "
            f"{r['s_eq']:.1f} | {r['band_scale']:.3f} | {r['gdp_scale']:.3f} | "
            f"{r['s_scale']:.1f} |")


def sample_rate(m=1000, rates=(0.01, 0.1, 1.0), *, seed=0):
    q, steps, sigma, n = 0.01, 20, 1.0, 2000
    x, y = _data(m, n, seed=1)
    cx = torch.zeros(m, F_REAL + m, dtype=torch.float64)
    cx[torch.arange(m), F_REAL + torch.arange(m)] = 1.0
    cy = torch.as_tensor(np.arange(m) % 3)
    print(f"\nsample rate declared q = {q}, T = {steps}, sigma = {sigma}, m = {m} input canaries "
          "through the loop's Poisson sampler, black-box loss score")
    print("| real rate | eps (declared q) | eps_LB one-run | eps_LB one-run-fdp | refuted | "
          "CPU s |\n|---|---|---|---|---|---|")
    out = []
    for rate in rates:
        torch.manual_seed(0)
        model = nn.Linear(F_REAL + m, 3).double()
        loop = OneRunLoop(make_train(sigma, rate=rate, q_declared=q, data=(x, y)), model,
                          reference=(x[:64], y[:64]), steps=steps, lr=1.0,
                          batch_size=int(q * n), noise_multiplier=sigma, max_grad_norm=CLIP,
                          canary="input", canary_records=(cx, cy), sample_rate=q)
        t0 = time.process_time()
        res = audit_one_run(loop, seed=seed)
        secs = time.process_time() - t0
        print(f"| {rate:g} | {res.epsilon:.3f} | {res.epsilon_lower_bound('loss'):.3f} | "
              f"{res.epsilon_lower_bound('loss', 'one-run-fdp'):.3f} | "
              f"{', '.join(res.refuted) or 'no'} | {secs:.1f} |", flush=True)
        out.append(res)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", choices=("tightness", "sample-rate"))
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    if args.only != "sample-rate":
        print(f"one run of the user's loop (m Dirac canaries, T = {STEPS}, batch {BATCH}) vs R "
              "runs of audit_training (one canary each); eps_LB / eps, delta = 1e-5, 95 %")
        print(HEAD)
        if args.quick:
            tightness((4.0,), (100,), r_scale=20, reps=2)
        else:
            tightness()
    if args.only != "tightness":
        sample_rate(200 if args.quick else 1000)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
