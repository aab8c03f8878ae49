"""Model-update runs (Jagielski et al. Alg. 1) trained as batched replicas vs one run at a time,
and the update / per-datum leakage games before and after they moved onto the one runner.

Rows: base training + one SGD-New update of logistic regression / the MLP on digits (n0 = 300,
n_up = 10), per run; the reference is the same trainer called with one replica at a time (same
generators, same numbers), so the ratio is what batching the trials buys.

``--before PATH`` (or ``main(before=PATH)``) adds one row per game, through the public API that
both versions share: ``gap`` (:func:`~semi_core.attacks.updates.gap.play_update_game`, 40 000
rounds), ``multi`` (``multi_update_game``, 20 000 rounds, k = 5), ``leakage``
(``simulate_leakage``, 2 000 games of the seed's n = 1000, d = 5000 Bernoulli mean),
``experiment`` (``run_experiment``, 8 trials) and ``dp`` (``dp_game``, 64 runs). Each is timed
in a fresh process with the package at PATH (the old hand-written loops) and with the current
one, alternated, best of ``repeat``; the ratio is before / after (> 1: now faster).
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

#: The games, timed in a fresh process on whichever package ``PYTHONPATH`` names.
_GAME_TIMER = """
import json, sys, time
import numpy as np
import torch
torch.set_num_threads(1)
from semi_core.attacks.updates import UpdateConfig, run_experiment
from semi_core.attacks.updates.dp import dp_game
from semi_core.attacks.updates.gap import UpdateMeanGame, multi_update_game, play_update_game
from semi_core.attacks.leakage import simulate_leakage
from semi_core.mechanisms.per_datum import PerDatumMean, seed_bernoulli, seed_targets
quick = sys.argv[1] == "1"
law = seed_bernoulli(5000, seed=0)
mech = PerDatumMean(law, 1000, seed_targets(law, seed=0)["medium"])
work = {
    "gap": lambda: play_update_game(UpdateMeanGame(), 10000 if quick else 40000, 0),
    "multi": lambda: multi_update_game(rounds=5000 if quick else 20000, seed=0),
    "leakage": lambda: simulate_leakage(mech, 500 if quick else 2000, 0,
                                        attacks=("exact", "approx")),
    "experiment": lambda: run_experiment(UpdateConfig(trials=4 if quick else 8, seed=0)),
    "dp": lambda: dp_game(UpdateConfig(clip=1.0, sigma_dp=1.0, seed=0), 16 if quick else 64),
}
out = {}
for name, fn in work.items():
    fn() if name in ("gap", "multi", "leakage") else None  # warm-up of the cheap games
    t0, c0 = time.perf_counter(), time.process_time()
    fn()
    out[name] = (time.perf_counter() - t0, time.process_time() - c0)
print(json.dumps(out))
"""


def time_games(path: str, *, quick: bool = False) -> dict:
    """``(wall, CPU)`` seconds of each game with the package at ``path``, in a fresh process
    (BLAS on one thread, as torch: CPU seconds are then the least load-sensitive measure)."""
    env = {**os.environ, "PYTHONPATH": str(path), "OMP_NUM_THREADS": "1",
           "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    out = subprocess.run([sys.executable, "-c", _GAME_TIMER, "1" if quick else "0"], env=env,
                         cwd=tempfile.gettempdir(), capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def compare_before(before: str, *, quick: bool = False, repeat: int = 3) -> list[dict]:
    """One row per game: best of ``repeat`` before (checkout ``before``) and now, alternated."""
    now = str(Path(__file__).resolve().parent.parent)
    t_b: dict[str, list] = {}
    t_a: dict[str, list] = {}
    for _ in range(repeat):
        for tgt, path in ((t_b, before), (t_a, now)):
            for k, v in time_games(path, quick=quick).items():
                tgt.setdefault(k, []).append(v)
    print("\n## Update and leakage games: the old loops (before) vs the one runner (after), "
          f"best of {repeat}; ratio before/after (> 1: now faster)")
    print(f"{'game':<11} {'wall before':>12} {'wall after':>11} {'ratio':>7} "
          f"{'CPU before':>11} {'CPU after':>10} {'ratio':>7}")
    rows = []
    for k in t_b:
        wb, wa = min(v[0] for v in t_b[k]), min(v[0] for v in t_a[k])
        cb, ca = min(v[1] for v in t_b[k]), min(v[1] for v in t_a[k])
        print(f"{k:<11} {wb:>12.3f} {wa:>11.3f} {wb / wa:>7.3f} {cb:>11.3f} {ca:>10.3f} "
              f"{cb / ca:>7.3f}")
        rows.append({"game": k, "before_s": wb, "after_s": wa, "ratio": wb / wa,
                     "cpu_before_s": cb, "cpu_after_s": ca, "cpu_ratio": cb / ca,
                     "all_before": t_b[k], "all_after": t_a[k]})
    return rows


def main(quick: bool = False, before: str | None = None, repeat: int = 3) -> list[dict]:
    import torch

    from semi_core.attacks.updates import TrainConfig, run_updates
    from semi_core.sgd.data import load_digits
    from semi_core.sgd.models import build_model

    torch.set_num_threads(1)
    x, y = load_digits()
    R = 8 if quick else 32
    rng = np.random.default_rng(0)
    idx = np.stack([rng.choice(len(y), 310, replace=False) for _ in range(R)])
    bx, by = torch.as_tensor(x[idx[:, :300]]), torch.as_tensor(y[idx[:, :300]])
    ux = torch.as_tensor(x[idx[:, 300:]]).reshape(R, 1, 10, -1)
    uy = torch.as_tensor(y[idx[:, 300:]]).reshape(R, 1, 10)
    base, upd = TrainConfig(5 if quick else 30, 0.2, 32), TrainConfig(10, 0.05, 32)
    rows = []
    print("\n## Model-update runs: batched replicas vs one at a time (seconds per run)")
    print(f"{'model':<8} {'runs':>5} {'one-at-a-time':>14} {'batched':>10} {'speed-up':>9}")
    for kind in ("logreg", "mlp"):
        fm, theta, _ = build_model(kind, x[:32], y[:32], 10, seed_seq=np.random.SeedSequence(1),
                                   epochs=0, hidden=64)

        def batched(fm=fm, theta=theta):
            run_updates(fm, theta, bx, by, ux, uy, update="sgd-new", base_cfg=base,
                        update_cfg=upd, rngs=[np.random.default_rng(r) for r in range(R)])

        def loop(fm=fm, theta=theta):
            for r in range(R):
                run_updates(fm, theta, bx[r:r + 1], by[r:r + 1], ux[r:r + 1], uy[r:r + 1],
                            update="sgd-new", base_cfg=base, update_cfg=upd,
                            rngs=[np.random.default_rng(r)])

        t_b = best_of(batched, 2) / R
        t_l = best_of(loop, 2) / R
        print(f"{kind:<8} {R:>5} {t_l:>14.4f} {t_b:>10.4f} {t_l / t_b:>8.1f}x")
        rows.append({"model": kind, "runs": R, "loop_s_per_run": t_l, "batched_s_per_run": t_b,
                     "speedup": t_l / t_b})
    if before is not None:
        rows += compare_before(before, quick=quick, repeat=repeat)
    return rows


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--before", metavar="PATH", help="an older checkout to compare with")
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    main(quick=a.quick, before=a.before, repeat=a.repeat)
