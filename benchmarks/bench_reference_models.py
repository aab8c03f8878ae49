"""Reference-model training: 64 models at once (batched) vs one model at a time, same run.

Rows: 64 models on scikit-learn digits, each on a random half (about 900 records), heavy-ball
SGD (lr 0.01, momentum 0.9, weight decay 5e-4, batch 32), for

- ``logreg``: 10-class logistic regression (d = 650);
- ``logreg-mse``: odd/even with a sigmoid + MSE head (d = 65; the seed's MNIST-Odd model);
- ``mlp``: 64-16-10 tanh MLP (d = 1210).

Reference: :func:`semi_core.sgd.reference_models.train_models_reference`, one model at a time
with ``torch.optim.SGD`` (the oracle the tests compare against). Batched:
:func:`~semi_core.sgd.reference_models.train_models` (one batched forward and explicit
back-propagation per step; ``vmap``: the generic ``torch.func`` path). Both produce the same
weights (max abs difference printed). Target of issue 11: >= 10x for 64 models.

End to end (issue 20): :func:`semi_core.attacks.whitebox.run_attacks` -- 64 models on
digits-odd (``logreg-mse``), 500 targets scored by IHA, LOSS, SIF, LiRA online/offline, and the
leave-one-out stage (L-attack, LiRA-L on 20 records x 4 models) -- played by the game runner
(``play_pool``). ``--before DIR`` times the same call on the code checked out in ``DIR`` (e.g.
``git worktree add /tmp/before <commit>``) in alternating subprocesses on this machine and
prints the ratio after / before (target of issue 20: within +-5 %)::

    python -m benchmarks.bench_reference_models --before /tmp/before --repeat 3
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from benchmarks._timing import best_of

_ROOT = Path(__file__).resolve().parent.parent


def _case(kind: str, cfg, M: int) -> dict:
    import torch

    from semi_core.sgd.data import load_bundled
    from semi_core.sgd.reference_models import (
        build_attack_model,
        init_thetas,
        membership_matrix,
        model_seeds,
        schedules,
        train_models,
        train_models_reference,
    )

    ds = "digits-odd" if kind == "logreg-mse" else "digits"
    x, y, K = load_bundled(ds)
    X = torch.as_tensor(x)
    Y = torch.as_tensor(y.astype(float) if kind == "logreg-mse" else y)
    fm = build_attack_model(kind, X.shape[1], K, hidden=16)
    member = membership_matrix(M, X.shape[0], 0)
    seeds = model_seeds(1, M)
    th0 = init_thetas(fm, seeds)
    sched = schedules(member, cfg, seeds)
    out = {}

    def loop():
        out["loop"] = train_models_reference(fm, th0, X, Y, sched, cfg)

    def batched():
        with torch.no_grad():
            out["batched"] = train_models(fm, th0, X, Y, sched, cfg)

    def generic():
        out["vmap"] = train_models(fm, th0, X, Y, sched, cfg, generic=True)

    t_loop = best_of(loop, 1)
    t_b = best_of(batched, 3)
    t_v = best_of(generic, 2)
    return {"model": kind, "d": fm.d, "steps": int(sched.shape[1]), "loop_s": t_loop,
            "batched_s": t_b, "vmap_s": t_v, "speedup": t_loop / t_b,
            "speedup_vmap": t_loop / t_v,
            "max_abs_diff": float((out["loop"] - out["batched"]).abs().max())}


def main(quick: bool = False) -> list[dict]:
    import torch

    from semi_core.sgd.momentum import SGDConfig

    torch.set_num_threads(1)
    M = 64
    epochs = 1.0 if quick else 3.0
    cfg = SGDConfig(lr=0.01, momentum=0.9, weight_decay=5e-4, batch_size=32, epochs=epochs)
    rows = []
    print(f"\n## Reference-model training: {M} models on digits, {epochs:g} epochs "
          f"(torch threads = {torch.get_num_threads()}); seconds for all {M} models")
    print(f"{'model':<11}{'d':>6}{'steps':>7}{'loop (torch.optim)':>20}{'batched':>10}"
          f"{'vmap':>9}{'speed-up':>10}{'vmap x':>8}{'max |diff|':>12}")
    for kind in ("logreg", "logreg-mse", "mlp"):
        row = _case(kind, cfg, M)
        rows.append(row)
        print(f"{kind:<11}{row['d']:>6}{row['steps']:>7}{row['loop_s']:>20.2f}"
              f"{row['batched_s']:>10.3f}{row['vmap_s']:>9.3f}{row['speedup']:>9.1f}x"
              f"{row['speedup_vmap']:>7.1f}x{row['max_abs_diff']:>12.1e}")
    return rows


def attack_case(epochs: float = 60.0, loo: bool = True) -> dict:
    """Wall and CPU seconds of one end-to-end :func:`run_attacks` call (best of 2), the models
    trained (the leave-one-out count depends on the seed streams) and an AUC."""
    import time

    import torch

    from semi_core.attacks.whitebox import AttackConfig, run_attacks
    from semi_core.sgd.momentum import SGDConfig

    torch.set_num_threads(1)
    cfg = AttackConfig(dataset="digits-odd", model="logreg-mse", n_models=64, n_targets=500,
                       target_models=1, loo_targets=20, loo_models=4,
                       sgd=SGDConfig(lr=0.01, momentum=0.9, weight_decay=5e-4, batch_size=32,
                                     epochs=epochs))
    attacks = ("iha", "loss", "sif", "lira-online", "lira-offline") + (
        ("l-attack", "lira-l") if loo else ())
    best, cpu, out = float("inf"), float("inf"), None
    for _ in range(2):
        t0, c0 = time.perf_counter(), time.process_time()
        out = run_attacks(cfg, attacks, seed=0)
        best = min(best, time.perf_counter() - t0)
        cpu = min(cpu, time.process_time() - c0)
    return {"seconds": best, "cpu_seconds": cpu, "rounds": int(out.result.rounds),
            "models_trained": 64 + int(out.setup.get("loo_models_trained", 0)),
            "auc_iha": float(out.metrics(n_bootstrap=10)["iha"]["auc"])}


def _attack_in(path: str | None, epochs: float, loo: bool) -> dict:
    """:func:`attack_case` in a fresh interpreter on the ``semi_core`` at ``path`` (this tree
    if None); this file is loaded by its path, so both sides run the same benchmark code."""
    tree = str(path or _ROOT)
    code = ("import importlib.util, json, sys; "
            f"sys.path.insert(0, {str(_ROOT)!r}); sys.path.insert(0, {tree!r}); "
            f"spec = importlib.util.spec_from_file_location('_bench_rm', {__file__!r}); "
            "mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod); "
            "import semi_core; assert semi_core.__file__.startswith(" f"{tree!r}), semi_core.__file__; "
            f"print(json.dumps(mod.attack_case({epochs!r}, {loo!r})))")
    out = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, PYTHONPATH=tree),
                         cwd="/tmp", check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def compare(before: str, *, repeat: int = 3, epochs: float = 60.0) -> list[dict]:
    """Alternate before / after runs ``repeat`` times; ratios of the best wall and CPU times
    (CPU time, single-threaded torch, is the less perturbed by other load on the machine).
    Two rows: the population game alone (the same work on both sides) and with the
    leave-one-out stage, whose number of models depends on the seed streams (which changed),
    so its ratio is also given per trained model."""
    rows = []
    for loo in (False, True):
        rb, ra = [], []
        for _ in range(repeat):
            rb.append(_attack_in(before, epochs, loo))
            ra.append(_attack_in(None, epochs, loo))
        row = {"loo": loo, "models_before": rb[0]["models_trained"],
               "models_after": ra[0]["models_trained"]}
        for key in ("seconds", "cpu_seconds"):
            row[f"before_{key}"] = min(r[key] for r in rb)
            row[f"after_{key}"] = min(r[key] for r in ra)
            row[f"ratio_{key}"] = row[f"after_{key}"] / row[f"before_{key}"]
        row["ratio_cpu_per_model"] = (row["ratio_cpu_seconds"] * row["models_before"]
                                      / row["models_after"])
        rows.append(row)
    print(f"\n## run_attacks end to end: 64 models, 500 targets, IHA/LOSS/SIF/LiRA on/off "
          f"(+ L-attack, LiRA-L on 20 records x 4 models), {epochs:g} epochs; best of {repeat} "
          "alternating runs")
    print(f"{'stage':<22}{'models b/a':>12}{'wall b':>8}{'wall a':>8}{'ratio':>7}{'CPU b':>8}"
          f"{'CPU a':>8}{'ratio':>7}{'per model':>10}")
    for r in rows:
        name = "+ leave-one-out" if r["loo"] else "population game"
        print(f"{name:<22}{r['models_before']:>6}/{r['models_after']:<5}"
              f"{r['before_seconds']:>8.2f}{r['after_seconds']:>8.2f}{r['ratio_seconds']:>7.3f}"
              f"{r['before_cpu_seconds']:>8.2f}{r['after_cpu_seconds']:>8.2f}"
              f"{r['ratio_cpu_seconds']:>7.3f}{r['ratio_cpu_per_model']:>10.3f}")
    return rows


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", default=None, help="tree of the code to compare against")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--epochs", type=float, default=60.0)
    ap.add_argument("--attack-only", action="store_true", help="skip the training table")
    a = ap.parse_args()
    if not a.attack_only:
        main()
    if a.before:
        compare(a.before, repeat=a.repeat, epochs=a.epochs)
    else:
        print(json.dumps(attack_case(a.epochs)))
