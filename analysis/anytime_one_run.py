"""Audit while you train: validity, price of anytime validity and stopping times of the
anytime-valid one-run audit (:mod:`semi_core.audit.anytime_one_run`).

    .venv/bin/python analysis/anytime_one_run.py [--runs 1000] [--m 1000] [--seed 0]

Prints three Markdown tables and writes them with the numbers to
``analysis/anytime_outputs/anytime_one_run.json``:

1. validity: runs whose anytime bound ever exceeds the true epsilon, and runs that refute the
   true claim (the stronger event), for canaries exactly at the claim (randomised response:
   every score tied; Gaussian canaries at (eps, delta)), with the 95 % Clopper-Pearson interval;
2. price of anytime validity: the final anytime bound vs the fixed-time one-run bound
   (Steinke, Nasr & Jagielski 2023) on the same canaries and guesses;
3. stopping time: canaries graded when a false claim is refuted, vs the end-of-run audit;
4. ``--dpsgd``: one DP-SGD run of a plain-torch loop (``OneRunLoop``, m white-box Dirac canaries
   spread over the steps, scored at their own step) for the correct loop and the bug zoo
   (clipping forgotten, noise divided by the batch size): the step and the canaries graded at
   which the anytime audit refutes the claim, against the end-of-run one-run audit.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from semi_core.audit.anytime_one_run import (
    markdown_table,
    price_table,
    stopping_table,
    validity_table,
)


def dpsgd_stopping(*, m: int = 1000, claimed: float = 2.0, seed: int = 0) -> list[dict]:
    """One run per loop (correct, clipping off, noise / batch size) of m Dirac canaries; the
    scores are graded in the order fixed in advance (step, then canary index), each right after
    its step, as a training-loop callback would."""
    import numpy as np
    import torch
    from torch import nn
    from torch.func import functional_call, grad, vmap

    from semi_core.audit import AnytimeOneRun
    from semi_core.integrations.one_run_training import OneRunLoop, audit_one_run
    from semi_core.sgd.accounting import calibrate_sigma

    torch.set_num_threads(1)
    f_real, zero, n, lr, batch, clip, steps, delta = 6, 130, 4000, 0.2, 128, 1.0, 10, 1e-5
    g = torch.Generator().manual_seed(0)
    X = torch.zeros(n, f_real + zero, dtype=torch.float64)
    X[:, :f_real] = torch.randn(n, f_real, generator=g, dtype=torch.float64)
    Y = (X[:, 0] > 0).long() + (X[:, 1] > 1).long()
    sigma = calibrate_sigma(claimed, delta)

    def make_model():
        torch.manual_seed(0)
        return nn.Sequential(nn.Linear(f_real + zero, 8), nn.ReLU(), nn.Linear(8, 3)).double()

    def make_train(bug):
        def train(model, run):
            opt = torch.optim.SGD(model.parameters(), lr=lr)
            params = dict(model.named_parameters())

            def loss(p, x, y):
                return nn.functional.cross_entropy(functional_call(model, p, (x[None],)),
                                                   y[None])

            noise_sd = sigma * clip / (batch if bug == "noise / batch size" else 1)
            for t in range(1, run.steps + 1):
                idx = torch.randperm(n, generator=run.generator)[:batch]
                x, y = run.canary_batch(t, X[idx], Y[idx])
                gr = vmap(grad(loss), in_dims=(None, 0, 0))(
                    {k: v.detach() for k, v in params.items()}, x, y)
                gr = run.canary_gradients(t, gr)
                norms = torch.cat([v.flatten(1) for v in gr.values()], 1).norm(dim=1)
                f = (torch.ones_like(norms) if bug == "clipping off"
                     else (clip / norms).clamp(max=1))
                for k, p in params.items():
                    noise = noise_sd * torch.randn(p.shape, generator=run.generator,
                                                   dtype=p.dtype)
                    p.grad = ((gr[k] * f.view(-1, *[1] * p.dim())).sum(0) + noise) / batch
                opt.step()
                run.record(model)
        return train

    rows = []
    for bug in ("none", "clipping off", "noise / batch size"):
        loop = OneRunLoop(make_train(bug), make_model(), reference=(X[:128], Y[:128]),
                          steps=steps, lr=lr, batch_size=batch, noise_multiplier=sigma,
                          max_grad_norm=clip, canaries=m)
        res = audit_one_run(loop, seed=seed, claimed_epsilon=claimed, delta=delta,
                            methods=("one-run",))
        order = np.lexsort((np.arange(m), res.taus))      # fixed in advance: step, then index
        s, y, tau = res.scores["dirac"][order], res.member[order], res.taus[order]
        end = res.bounds["dirac"]["one-run"].epsilon_lower_bound
        for frac in (0.2, 1.0):
            audit = AnytimeOneRun(claimed, delta=delta, n_canaries=m, guess_fraction=frac)
            for t in range(1, steps + 1):                 # one callback per training step
                audit.update(s[tau == t], y[tau == t])
            at = audit.refuted_at
            rows.append({"loop": bug, "claimed": claimed, "m": m, "steps": steps,
                         "guess_fraction": frac,
                         "refuted_at_canary": at if at is not None else "-",
                         "refuted_at_step": int(tau[at - 1]) if at is not None else "-",
                         "anytime_bound": audit.epsilon_lower_bound,
                         "end_of_run_one_run": end, "end_of_run_refutes": bool(end > claimed)})
    return rows


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=1000)
    p.add_argument("--m", type=int, default=1000, help="canaries per run")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default=str(Path(__file__).parent / "anytime_outputs"))
    p.add_argument("--dpsgd", action="store_true",
                   help="only the DP-SGD bug-zoo stopping table (one run per loop)")
    args = p.parse_args(argv)
    res = {}
    tables = ((("dpsgd", lambda runs, n_canaries, seed: dpsgd_stopping(m=n_canaries,
                                                                        seed=seed)),)
              if args.dpsgd else
              (("validity", validity_table), ("price", price_table),
               ("stopping", stopping_table)))
    for name, fn in tables:
        t0 = time.perf_counter()
        rows = fn(runs=args.runs, n_canaries=args.m, seed=args.seed)
        res[name] = rows
        runs = "one run per loop" if args.dpsgd else f"{args.runs} runs"
        print(f"\n## {name} ({runs} x {args.m} canaries, "
              f"{time.perf_counter() - t0:.0f} s)\n")
        print(markdown_table(rows), flush=True)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"anytime_one_run{'_dpsgd' if args.dpsgd else ''}.json").write_text(json.dumps(
        {"runs": args.runs, "m": args.m, "seed": args.seed, **res}, indent=1))
    return res


if __name__ == "__main__":
    main()
