"""Opacus' loop vs semi_core's batched trainer on the same audit games, same run.

R audit games at one tau (Dirac canary, logistic regression pretrained on digits, T = 10,
n = 64, C = 1, sigma for eps = 4): (a) the Opacus adapter looped -- per run ``model_fn()``,
``PrivacyEngine.make_private`` and T steps of Opacus' hooks-based per-sample gradients,
clipping and noise (:class:`semi_core.integrations.opacus.OpacusMechanism`); (b) the batched
trainer of :class:`semi_core.sgd.dirac.WhiteBoxMechanism` -- all runs of a chunk (128) as
replicas, outer-product ("ghost") clipped means on the canary-free steps, ``torch.func``
per-sample gradients on the canary step. Both train exactly the same Crafter draws
(:func:`semi_core.sgd.dirac.draw_runs`: batches, slots, bits), chunk by chunk as the game runner
plays them; one torch thread. Quick mode times 100 runs (Opacus on 40 of them, scaled linearly: runs are
independent and equally costly); full mode 1,000 runs through both.
"""

from __future__ import annotations


def main(quick: bool = False) -> list[dict]:
    import torch

    from semi_core.integrations.opacus import digits_example, time_engines
    from semi_core.sgd.accounting import calibrate_sigma

    torch.set_num_threads(1)
    model_fn, data = digits_example(seed=0, pretrain_epochs=20)
    rounds, opacus_rounds = (100, 40) if quick else (1000, 1000)
    res = time_engines(model_fn, data, noise_multiplier=calibrate_sigma(4.0, 1e-5),
                       rounds=rounds, opacus_rounds=opacus_rounds, seed=0)
    so, sb = res["opacus_split"], res["batched_split"]
    print(f"\n## Opacus loop vs batched trainer: {rounds} Dirac audit games at tau = 5 "
          f"(logreg/digits, d = 650, T = 10, n = 64; torch threads = {res['threads']})")
    print(f"{'path':<34} {'seconds':>9} {'ms/run':>8}   where the time goes")
    print(f"{'Opacus adapter, looped':<34} {res['opacus_seconds']:>9.2f} "
          f"{1e3 * res['opacus_seconds'] / rounds:>8.2f}   make_private "
          f"{so['make_private']:.2f} s, T steps {so['steps']:.2f} s"
          + ("" if res["opacus_rounds_timed"] == rounds
             else f" (timed on {res['opacus_rounds_timed']} runs, scaled)"))
    print(f"{'batched trainer (reference)':<34} {res['batched_seconds']:>9.2f} "
          f"{1e3 * res['batched_seconds'] / rounds:>8.2f}   data {sb['batches']:.2f} s, "
          f"canary step {sb['canary_step']:.2f} s, other steps {sb['other_steps']:.2f} s")
    print(f"speed-up (Opacus / batched): {res['ratio']:.1f}x; plan (Crafter draws) "
          f"{res['plan_seconds']:.2f} s, shared by both")
    return [res]


if __name__ == "__main__":
    main()
