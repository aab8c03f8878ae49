"""DP-SGD audit games per second on a GPU against the CPU, and the difference of the bounds.

Runs only where torch sees a CUDA device; elsewhere it prints that it skipped and returns no
rows (exit status 0), so ``python -m benchmarks`` runs it everywhere.

1. The white-box game (:func:`semi_core.sgd.dirac.play_white_box`, Dirac canaries, ``k`` games
   per run) of :func:`semi_core.sgd.one_run.synthetic_setup` calibrated to eps = 4 at
   delta = 1e-5, played with the same seed on ``device="cpu"`` and ``device="cuda"``: games per
   second (wall clock, best of 3; the scores come back to the host, which synchronises) and the
   ratio GPU / CPU. The noise is drawn on the host from the same seeds, so the two devices train
   the same runs and their certified bounds (``band``, ``gdp``) differ by float rounding only:
   the printed difference is the check.
2. One run of a user's loop with m = 1000 Dirac canaries
   (:func:`semi_core.integrations.one_run_training.audit_one_run`), the loop written for any
   device (model, data and ``run.generator`` on it): seconds on each device and ``one-run``
   eps_LB. The loop draws its noise from ``run.generator`` on the device, so the CPU and CUDA
   runs are different draws: their bounds differ by sampling, not rounding.

Usage::

    python -m benchmarks gpu            # or: python -m benchmarks.bench_gpu [--quick]
"""

from __future__ import annotations

import sys
import time

DELTA = 1e-5


def _games(device, setup, runs, seed=0):
    from semi_core.audit import epsilon_lower_bound
    from semi_core.sgd.dirac import play_white_box

    best, res = float("inf"), None
    for _ in range(3):
        t0 = time.perf_counter()
        res = play_white_box(setup, rounds=runs, tau=1, seed=seed, semi=False, device=device)
        best = min(best, time.perf_counter() - t0)
    mem, non = res.scores("dirac")
    bounds = {m: epsilon_lower_bound(mem, non, delta=DELTA, method=m).epsilon_lower_bound
              for m in ("band", "gdp")}
    return best, mem.size + non.size, bounds


def _user_loop(device, m, sigma, seed=0):
    import torch
    from torch import nn
    from torch.func import functional_call, grad, vmap

    from semi_core.integrations.one_run_training import OneRunLoop, audit_one_run

    dev = torch.device(device)
    g = torch.Generator().manual_seed(0)
    x_all = torch.zeros(4000, 6 + 130, dtype=torch.float64)
    x_all[:, :6] = torch.randn(4000, 6, generator=g, dtype=torch.float64)
    y_all = (x_all[:, 0] > 0).long() + (x_all[:, 1] > 1).long()
    x_all, y_all = x_all.to(dev), y_all.to(dev)
    batch, lr, clip = 128, 0.2, 1.0

    def train(model, run):
        opt = torch.optim.SGD(model.parameters(), lr=lr)
        params = dict(model.named_parameters())

        def loss(p, x, y):
            return nn.functional.cross_entropy(functional_call(model, p, (x[None],)), y[None])

        for t in range(1, run.steps + 1):
            idx = torch.randperm(len(x_all), generator=run.generator, device=dev)[:batch]
            x, y = run.canary_batch(t, x_all[idx], y_all[idx])
            gs = vmap(grad(loss), in_dims=(None, 0, 0))(
                {k: v.detach() for k, v in params.items()}, x, y)
            gs = run.canary_gradients(t, gs)
            f = (clip / torch.cat([v.flatten(1) for v in gs.values()], 1).norm(dim=1)).clamp(
                max=1)
            for k, p in params.items():
                noise = sigma * clip * torch.randn(p.shape, generator=run.generator,
                                                   dtype=p.dtype, device=dev)
                p.grad = ((gs[k] * f.view(-1, *[1] * p.dim())).sum(0) + noise) / batch
            opt.step()
            run.record(model)

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(136, 8), nn.ReLU(), nn.Linear(8, 3)).double().to(dev)
    loop = OneRunLoop(train, model, reference=(x_all[:128], y_all[:128]), steps=10, lr=lr,
                      batch_size=batch, noise_multiplier=sigma, max_grad_norm=clip, canaries=m,
                      device=dev)
    t0 = time.perf_counter()
    res = audit_one_run(loop, seed=seed)
    return time.perf_counter() - t0, res.epsilon_lower_bound("dirac", "one-run")


def main(quick: bool = False, devices=None) -> list[dict]:
    """Print the GPU / CPU table (or that it skipped) and return its rows; ``devices``
    (default ``("cpu", "cuda")`` when CUDA is present) names the two devices compared, the
    first the reference (``("cpu", "cpu")`` runs the script's code path without a GPU)."""
    import torch

    from semi_core.sgd.accounting import calibrate_sigma
    from semi_core.sgd.one_run import synthetic_setup

    if devices is None:
        if not torch.cuda.is_available():
            print("bench_gpu: skipped (torch sees no CUDA device; run it where a GPU is "
                  "present)")
            return []
        devices = ("cpu", "cuda")
    ref_dev, dev_b = devices
    sigma = calibrate_sigma(4.0, DELTA)
    k, runs = (64, 8) if quick else (256, 64)
    setup = synthetic_setup(k, sigma, steps=4, batch_size=max(k, 256),
                            real_features=64 if quick else 512, seed=0)
    rows = []
    name = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "no GPU"
    print(f"\nwhite-box DP-SGD game, k = {k} canaries per run, {runs} runs, eps = 4 ({name})")
    print("| device | games/s | ratio to cpu | eps_LB band | eps_LB gdp |")
    print("|---|---|---|---|---|")
    out = []
    for dev in (ref_dev, dev_b):
        if dev != "cpu":
            _games(dev, setup, 1)  # warm-up (kernels, allocator)
        secs, games, bounds = _games(dev, setup, runs)
        out.append((games / secs, bounds))
        print(f"| {dev} | {games / secs:.0f} | {games / secs / out[0][0]:.2f} | "
              f"{bounds['band']:.4f} | {bounds['gdp']:.4f} |")
        rows.append({"bench": "gpu", "what": "white-box game", "device": dev,
                     "games_per_s": games / secs, **{f"eps_lb_{m}": v for m, v in bounds.items()}})
    diff = {m: abs(out[1][1][m] - out[0][1][m]) for m in ("band", "gdp")}
    print(f"|eps_LB({dev_b}) - eps_LB({ref_dev})|: band {diff['band']:.2e}, gdp {diff['gdp']:.2e} "
          "(same runs: float rounding only)")
    rows.append({"bench": "gpu", "what": "bound difference", **diff})
    m = 200 if quick else 1000
    print(f"\none run of a user's loop, m = {m} Dirac canaries, T = 10, batch 128")
    print("| device | seconds | ratio to cpu | eps_LB one-run |\n|---|---|---|---|")
    base = None
    for dev in (ref_dev, dev_b):
        secs, lb = _user_loop(dev, m, sigma)
        base = secs if base is None else base
        print(f"| {dev} | {secs:.2f} | {secs / base:.2f} | {lb:.3f} |")
        rows.append({"bench": "gpu", "what": "one-run user loop", "device": dev,
                     "seconds": secs, "eps_lb_one_run": lb})
    return rows


if __name__ == "__main__":
    main(quick="--quick" in sys.argv[1:])
