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
"""

from __future__ import annotations

from benchmarks._timing import best_of


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


if __name__ == "__main__":
    main()
