"""Model-update runs (Jagielski et al. Alg. 1) trained as batched replicas vs one run at a time.

Rows: base training + one SGD-New update of logistic regression / the MLP on digits (n0 = 300,
n_up = 10), per run; the reference is the same trainer called with one replica at a time (same
generators, same numbers), so the ratio is what batching the trials buys.
"""

from __future__ import annotations

import numpy as np

from benchmarks._timing import best_of


def main(quick: bool = False) -> list[dict]:
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
    return rows


if __name__ == "__main__":
    main()
