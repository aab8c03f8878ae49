"""DP-SGD audit throughput: runs trained as batched replicas vs a per-run loop, same run.

Rows (all per audited run of T = 10 DP-SGD steps, batch 64, logistic regression on digits):

- ``train``: the T steps only, batched replicas vs one run at a time with the generic
  per-sample-gradient trainer (``train=``: one run at a time through the same batched kernels);
- ``game``: the whole game of :class:`~semi_core.sgd.mechanism.DPSGDMechanism` (training,
  canary losses at every checkpoint, per-step SeMI-SGD log-LR with reference statistics at
  every theta_{t-1}) batched vs one run at a time (``game=``: one run at a time through the
  same batched kernels);
- ``stats``: the game with the outer-product ("ghost") clipping and statistics of
  :mod:`semi_core.sgd.ghost` vs the generic torch.func per-sample-gradient
  statistics, both batched.

Both sides use identical randomness (per-game SeedSequence), so they compute the same numbers.

``--before PATH`` (or ``main(before=PATH)``) adds the row ``audit``: the whole batched audit
(:func:`semi_core.sgd.audit.audit_games` through the game runner, or the hand-written
``run_games`` loop of an older checkout at PATH) of the same configuration, each timed in its
own fresh process (best of ``repeat``, runs alternated), and prints the ratio
before / after (> 1: the current code is faster).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from benchmarks._timing import best_of


def _per_run(fn, runs: int, repeat: int = 2) -> float:
    return best_of(fn, repeat) / runs


def _game(setup, draws, *, batched: bool, fast_stats: bool = True):
    """Train the runs of ``draws`` (as replicas, or one at a time with the per-run trainer)
    and score them as the audit does: per-step log-LRs and the canary's losses."""
    import torch  # lazy: heavy optional dependency

    from semi_core.sgd.dpsgd import train_dpsgd, train_dpsgd_batched
    from semi_core.sgd.mechanism import DPSGDMechanism

    canary = (setup.canary_x, setup.canary_y)
    if batched:
        traj = train_dpsgd_batched(setup.fm, setup.theta0, draws, setup.pool_x, setup.pool_y,
                                   canary, setup.cfg, fast=fast_stats)
    else:
        traj = torch.stack([train_dpsgd(setup.fm, setup.theta0, dr, setup.pool_x, setup.pool_y,
                                        canary, setup.cfg) for dr in draws])
    mech = DPSGDMechanism(setup, fast_stats=fast_stats)
    rel = traj[:, 1:].numpy()
    return mech.log_lr_steps(rel), mech.canary_losses(rel)


#: The whole audit of one configuration, timed in a fresh process; works on the current code
#: (``audit_games``, the runner) and on older checkouts (the ``run_games`` loop).
_AUDIT_TIMER = """
import json, sys, time
import torch
from semi_core.sgd import audit
from semi_core.sgd.dpsgd import DPSGDConfig
torch.set_num_threads(1)
rounds, steps = int(sys.argv[1]), int(sys.argv[2])
cfg = DPSGDConfig(batch_size=64, steps=steps, lr=0.5, clip=1.0, sigma_dp=2.0)
setup = audit.prepare_audit(model="logreg", cfg=cfg, seed=0, pretrain_epochs=20,
                            n_reference=128)
taus = list(range(1, steps + 1))
play = getattr(audit, "audit_games", None) or audit.run_games
play(setup, rounds=4, taus=[1], seed=99, chunk_size=64)  # warm-up (imports, allocator)
t0, c0 = time.perf_counter(), time.process_time()
play(setup, rounds=rounds, taus=taus, seed=1, chunk_size=64)
print(json.dumps({"seconds": time.perf_counter() - t0, "cpu_seconds": time.process_time() - c0,
                  "runner": play.__name__}))
"""


def time_audit(path: str, *, rounds: int, steps: int = 10) -> dict:
    """Seconds of the whole audit (``rounds`` games at each of ``steps`` insertion times) with
    the package found at ``path``, in a fresh process (cwd outside any checkout)."""
    env = {**os.environ, "PYTHONPATH": str(path)}
    out = subprocess.run([sys.executable, "-c", _AUDIT_TIMER, str(rounds), str(steps)],
                         env=env, cwd=tempfile.gettempdir(), capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def compare_before(before: str, *, rounds: int = 100, repeat: int = 3) -> dict:
    """The ``audit`` row: the batched audit before (checkout ``before``) and now, alternated,
    best of ``repeat`` each."""
    now = str(Path(__file__).resolve().parent.parent)
    t_before, t_now, c_before, c_now, names = [], [], [], [], {}
    for _ in range(repeat):
        b = time_audit(before, rounds=rounds)
        a = time_audit(now, rounds=rounds)
        t_before.append(b["seconds"])
        t_now.append(a["seconds"])
        c_before.append(b["cpu_seconds"])
        c_now.append(a["cpu_seconds"])
        names = {"before": b["runner"], "after": a["runner"]}
    row = {"workload": "audit", "reference": f"before: {names['before']}",
           "ref_s_per_run": min(t_before), "batched": f"after: {names['after']}",
           "s_per_run": min(t_now), "speedup": min(t_before) / min(t_now),
           "cpu_before": min(c_before), "cpu_after": min(c_now),
           "cpu_ratio": min(c_before) / min(c_now),
           "all_before": t_before, "all_after": t_now, "rounds_per_tau": rounds}
    print(f"audit    {row['reference']:<32} {row['ref_s_per_run']:>9.3f} "
          f"{row['batched']:<32} {row['s_per_run']:>9.3f} {row['speedup']:>9.3f}  "
          f"(whole audit, {rounds} games x 10 tau, wall seconds; ratio before/after)")
    print(f"audit    {'CPU seconds, before':<32} {row['cpu_before']:>9.3f} "
          f"{'CPU seconds, after':<32} {row['cpu_after']:>9.3f} {row['cpu_ratio']:>9.3f}")
    return row


def main(quick: bool = False, before: str | None = None, audit_rounds: int = 100) -> list[dict]:
    import torch  # lazy: heavy optional dependency

    from semi_core.sgd.audit import prepare_audit
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
                lambda: [_game(setup, [d], batched=False) for d in draws[:n_loop]],
                f"{n_batch} replicas",
                lambda: _game(setup, draws, batched=True)),
            "game=": (
                "per-run loop, same kernels",
                lambda: [_game(setup, [d], batched=True) for d in draws[:n_loop]],
                f"{n_batch} replicas",
                lambda: _game(setup, draws, batched=True)),
            "stats": (
                f"{n_loop} replicas, generic stats",
                lambda: _game(setup, draws[:n_loop], batched=True, fast_stats=False),
                f"{n_loop} replicas, ghost stats",
                lambda: _game(setup, draws[:n_loop], batched=True)),
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
    if before is not None:
        rows.append(compare_before(before, rounds=audit_rounds))
    return rows


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(description="DP-SGD audit throughput")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--before", metavar="PATH", default=None,
                    help="an older checkout: time its whole audit against the current one")
    ap.add_argument("--audit-rounds", type=int, default=100)
    a = ap.parse_args()
    main(quick=a.quick, before=a.before, audit_rounds=a.audit_rounds)
