"""DP-SGD audit throughput: runs trained as batched replicas vs a per-run loop, same run.

Rows (all per audited run of T = 10 DP-SGD steps, batch 64, logistic regression on digits):

- ``train``: the T steps only, batched replicas vs one run at a time with the generic
  per-sample-gradient trainer (``train=``: one run at a time through the same batched kernels);
- ``game``: the whole game (training, canary losses at every checkpoint, per-step SeMI-SGD
  log-LR with reference statistics at every theta_{t-1}) batched vs one run at a time
  (``game=``: one run at a time through the same batched kernels);
- ``stats``: the game with the outer-product ("ghost") clipping and statistics of
  :mod:`semi_core.sgd.ghost` vs the generic torch.func per-sample-gradient
  statistics, both batched.

Both sides use identical randomness (per-game SeedSequence), so they compute the same numbers.
"""

from __future__ import annotations

import numpy as np

from benchmarks._timing import best_of


def _per_run(fn, runs: int, repeat: int = 2) -> float:
    return best_of(fn, repeat) / runs


def main(quick: bool = False) -> list[dict]:
    import torch

    from semi_core.sgd.audit import _run_chunk, prepare_audit
    from semi_core.sgd.dpsgd import DPSGDConfig, draw_game, train_dpsgd, train_dpsgd_batched

    torch.set_num_threads(1)
    cfg = DPSGDConfig(batch_size=64, steps=10, lr=0.5, clip=1.0, sigma_dp=2.0)
    setup = prepare_audit(model="logreg", cfg=cfg, seed=0, pretrain_epochs=20, n_reference=128)
    n_batch, n_loop = (64, 8) if quick else (256, 32)
    draws = [draw_game(np.random.SeedSequence(k), pool_size=len(setup.pool_x), cfg=cfg,
                       d=setup.fm.d, tau=None if k % 2 else 5) for k in range(n_batch)]
    canary = (setup.canary_x, setup.canary_y)
    args = (setup.pool_x, setup.pool_y, canary, cfg)
    rows = []
    print(f"\n## DP-SGD audit throughput (logreg/digits, d = {setup.fm.d}, T = 10, n = 64, "
          f"torch threads = {torch.get_num_threads()}); seconds per run")
    print(f"{'workload':<8} {'reference':<32} {'s/run':>9} {'batched':<32} {'s/run':>9} "
          f"{'speed-up':>9}")
    with torch.no_grad():
        cases = {
            "train": (
                "per-run loop (vmap per-sample)",
                lambda: [train_dpsgd(setup.fm, setup.theta0, d, *args) for d in draws[:n_loop]],
                f"{n_batch} replicas",
                lambda: train_dpsgd_batched(setup.fm, setup.theta0, draws, *args)),
            "train=": (
                "per-run loop, same kernels",
                lambda: [train_dpsgd_batched(setup.fm, setup.theta0, [d], *args)
                         for d in draws[:n_loop]],
                f"{n_batch} replicas",
                lambda: train_dpsgd_batched(setup.fm, setup.theta0, draws, *args)),
            "game": (
                "per-run loop (vmap per-sample)",
                lambda: [_run_chunk(setup, [d], batched=False) for d in draws[:n_loop]],
                f"{n_batch} replicas",
                lambda: _run_chunk(setup, draws, batched=True)),
            "game=": (
                "per-run loop, same kernels",
                lambda: [_run_chunk(setup, [d], batched=True) for d in draws[:n_loop]],
                f"{n_batch} replicas",
                lambda: _run_chunk(setup, draws, batched=True)),
            "stats": (
                f"{n_loop} replicas, generic stats",
                lambda: _run_chunk(setup, draws[:n_loop], batched=True, fast_stats=False),
                f"{n_loop} replicas, ghost stats",
                lambda: _run_chunk(setup, draws[:n_loop], batched=True)),
        }
        for name, (ref_name, ref_fn, new_name, new_fn) in cases.items():
            n_new = n_loop if name == "stats" else n_batch
            t_ref = _per_run(ref_fn, n_loop)
            t_new = _per_run(new_fn, n_new)
            rows.append({"workload": name, "reference": ref_name, "ref_s_per_run": t_ref,
                         "batched": new_name, "s_per_run": t_new, "speedup": t_ref / t_new})
            print(f"{name:<8} {ref_name:<32} {t_ref:>9.4f} {new_name:<32} {t_new:>9.4f} "
                  f"{t_ref / t_new:>9.1f}")
    game = next(r for r in rows if r["workload"] == "game")
    print(f"=> R = 1000 games (one tau, ~1000 runs): {1000 * game['s_per_run']:.0f} s batched, "
          f"{1000 * game['ref_s_per_run']:.0f} s as a per-run loop")
    return rows


if __name__ == "__main__":
    main()
