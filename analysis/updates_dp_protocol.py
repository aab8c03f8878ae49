"""Q6 (Fig. 6) of ``combining_mi_updates`` with the seed's own protocol: a noise sweep of the
single DP-SGD update (clip 0.5), precision at the 10 % Batch rule pooled over the models turned
into an epsilon lower bound with Clopper-Pearson at 98 %, and the update's epsilon from the
seed's RDP accounting (Poisson, add/remove) beside ours (exact GDP of the shuffled, replace-one
update that runs).

Usage::

    python analysis/updates_dp_protocol.py --trials 20 --n-up 20 \
        --sigmas 2 4 8 16 32 64 128 --out analysis/updates_outputs/dp_protocol.json
"""

from __future__ import annotations

import argparse
import json
import warnings
from pathlib import Path

import torch

from semi_core._json import to_jsonable
from semi_core.attacks.updates import UpdateConfig
from semi_core.attacks.updates.dp import dp_protocol_sweep


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=20)
    ap.add_argument("--n-up", type=int, default=20)
    ap.add_argument("--sigmas", type=float, nargs="+", default=[2, 4, 8, 16, 32, 64, 128])
    ap.add_argument("--updates", nargs="+", default=["sgd-new", "sgd-full"])
    ap.add_argument("--data", default=None)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="analysis/updates_outputs/dp_protocol.json")
    a = ap.parse_args()
    torch.set_num_threads(1)
    warnings.filterwarnings("ignore", message="Optimal order is the largest alpha")
    res = {}
    print("| update | sigma | eps RDP (seed) | eps GDP (ours) | accuracy | attack: precision -> "
          "eps_LB |")
    for upd in a.updates:
        cfg = UpdateConfig(update=upd, n_up=a.n_up, trials=a.trials, seed=a.seed,
                           dataset="file" if a.data else "digits", data=a.data)
        res[upd] = dp_protocol_sweep(cfg, a.sigmas)
        for r in res[upd]["rows"]:
            print(f"| {upd} | {r['sigma_dp']:g} | {r['epsilon_paper_rdp']:.3f} | "
                  f"{r['epsilon_ours_gdp']:.3f} | {r['final_model_accuracy']:.3f} | " +
                  "; ".join(f"{k}: {v['precision'] if v['precision'] is None else round(v['precision'], 3)}"
                            f" -> {v['epsilon_lower_bound']:.3f}" for k, v in r["attacks"].items())
                  + " |", flush=True)
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(to_jsonable(res), indent=1))


if __name__ == "__main__":
    main()
