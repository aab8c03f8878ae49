"""Seed ``iha_parameters_vs_loss`` Tables 2-5, 8, 9 analogues on bundled data (full mode).

For each setting (digits-odd / logreg-mse for MNIST-Odd; breast-cancer / mlp for Purchase-100)
trains the models, runs every attack (IHA exact and CG, LOSS, SIF, LiRA online/offline with
per-example and global variance, L-attack, LiRA-L), the damping sweep, the term ablation, the
LOO-fraction curve and the agreement matrices, and writes ``iha_tables.md``,
``iha_tables.json`` and one ROC figure per setting under ``--out``. Usage::

    python analysis/iha_tables.py --out results/iha            # 64 models, 4 target models
    python analysis/iha_tables.py --quick --out results/iha    # the report's quick sizes

The seed's own datasets from files the user supplies (never downloaded): ``--data
DATASET:MODEL:SEED_COLUMN:PATH`` (repeatable), e.g. ::

    --data idx-odd:logreg-mse:MNIST-Odd:/data/mnist            # MNIST IDX train files
    --data idx:mlp:FashionMNIST:/data/fashion --hidden 6        # Fashion-MNIST IDX files
    --data file:mlp:Purchase-100:/data/purchase.npz --hidden 32 --pool-size 20000

with ``--pool-size`` to subsample the pool (the exact Hessian is d x d: the Purchase MLP's
d = 22,532 needs about 12 GB for ``eigh``; ``benchmarks/bench_hessian.py`` measures it).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="results/iha")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--models", type=int, default=None, help="override the model count")
    parser.add_argument("--target-models", type=int, default=None)
    parser.add_argument("--settings", default="digits-odd,breast-cancer",
                        help="comma-separated datasets of report.attack_section.SETTINGS "
                             "('' for none)")
    parser.add_argument("--data", action="append", default=[],
                        metavar="DATASET:MODEL:SEED_COLUMN:PATH",
                        help="a setting on local files (dataset idx, idx-odd or file)")
    parser.add_argument("--hidden", default=None, help="MLP widths, comma-separated")
    parser.add_argument("--pool-size", type=int, default=None)
    parser.add_argument("--targets", type=int, default=None)
    args = parser.parse_args(argv)
    import torch

    from semi_core.cli._common import to_jsonable
    from semi_core.report.attack_section import SETTINGS, plot_roc, run_setting

    torch.set_num_threads(1)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    chosen = set(args.settings.split(","))
    overrides = {}
    if args.models is not None:
        overrides["n_models"] = args.models
    if args.target_models is not None:
        overrides["target_models"] = args.target_models
    md, data = [], {}
    settings = [(d, m, c, q, {}) for d, m, c, q in SETTINGS if d in chosen]
    for spec in args.data:
        parts = spec.split(":", 3)
        if len(parts) != 4 or parts[0] not in ("idx", "idx-odd", "file"):
            raise SystemExit(f"--data must be DATASET:MODEL:SEED_COLUMN:PATH with DATASET idx, "
                             f"idx-odd or file, got {spec!r}")
        extra = {"data_path": parts[3]}
        if args.pool_size is not None:
            extra["pool_size"] = args.pool_size
        if args.hidden is not None:
            widths = tuple(int(v) for v in args.hidden.split(","))
            extra["hidden"] = widths[0] if len(widths) == 1 else widths
        settings.append((parts[0], parts[1], parts[2], args.targets, extra))
    for dataset, model, col, quick_targets, extra in settings:
        t0 = time.perf_counter()
        res = run_setting(dataset, model, col, quick=args.quick, seed=args.seed,
                          progress=lambda m: print(m, flush=True),
                          n_targets=quick_targets if (args.quick or extra) else None,
                          **overrides, **extra)
        run = res.pop("run")
        fig = out / f"roc_{dataset}_{model}.png"
        plot_roc(run, fig, title=f"{dataset} / {model}")
        res["wall_seconds"] = time.perf_counter() - t0
        md += [f"## {dataset} / {model} (seed: {col})", "",
               f"setup {res['setup']}; wall {res['wall_seconds']:.0f} s; seconds "
               f"{ {k: round(v, 2) for k, v in res['seconds'].items()} }", "",
               res.pop("markdown"), ""]
        data[f"{dataset}/{model}"] = res
        (out / "iha_tables.md").write_text("\n".join(md))
        (out / "iha_tables.json").write_text(json.dumps(to_jsonable(data), indent=1))
    print("\n".join(md))
    return data


if __name__ == "__main__":
    main()
