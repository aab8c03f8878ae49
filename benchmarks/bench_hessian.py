"""Exact Hessian vs conjugate gradient for IHA: scaling in d and the seed's Purchase MLP size.

``iha_parameters_vs_loss`` §4.5.1 Table 6 (time and memory of exact IHA and IHA (Approx), the
2-layer MLP on Purchase-100: 600 features, 32 hidden units, 100 classes, d = 22,532), App. D
Table 7 / D.1 (the 4-layer MLP 512-256-128-64 on Purchase-100(S), d = 486,692, CG only).
Stand-in records of Purchase-100's shape (:func:`semi_core.attacks.whitebox.costs.
purchase_standin`); every measurement in a fresh process (peak resident memory reset before
the method, CPU time of the process) with a dense product of the same size timed in that
process as the floor of the printed ratios (:mod:`semi_core.attacks.whitebox.costs`).

1. Sweep: MLPs 600-h-100 for the hidden widths ``--widths`` (>= 5 sizes), exact (Hessian
   from HVP columns + ``eigh`` + one solve per target) and CG per target; fitted
   ``t = c d^p`` and ``memory = c d^p`` from the measured points.
2. Purchase MLP (d = 22,532): CG measured; the exact path's Hessian build measured on
   ``--build-columns`` columns of the full, allocated d x d matrix (scaled by d / columns:
   each column is one HVP of the same cost), its ``eigh`` from the sweep's fit (``--full``
   measures it: hours on two cores, about 16 GB).
3. ``--mlp4``: CG per target on the seed's 4-layer MLP at damping 0.2 and 0.5 (App. D.1).

    python -m benchmarks.bench_hessian                # sweep + Purchase point (~10 min, 2 cores)
    python -m benchmarks.bench_hessian --mlp4         # adds the 4-layer MLP (~10 min more)
    python -m benchmarks.bench_hessian --quick        # small shapes, seconds
"""

from __future__ import annotations

import argparse
import json

from semi_core.attacks.whitebox.costs import PAPER_SETTINGS, resource_study

MB = 1e6


def main(argv=None, quick: bool = False) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--widths", default="1,2,3,4,5", help="hidden widths of the sweep (>= 5)")
    ap.add_argument("--n-train", type=int, default=500)
    ap.add_argument("--targets", type=int, default=4)
    ap.add_argument("--tol", type=float, default=1e-5, help="CG tolerance (authors' code)")
    ap.add_argument("--damping", type=float, default=0.2)
    ap.add_argument("--epochs", type=float, default=2.0)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--build-columns", type=int, default=1024)
    ap.add_argument("--no-purchase", action="store_true", help="skip the d = 22,532 point")
    ap.add_argument("--purchase-n-train", type=int, default=None,
                    help="training records at the Purchase point (default --n-train)")
    ap.add_argument("--full", action="store_true", help="build and eigh the full Hessian")
    ap.add_argument("--mlp4", action="store_true", help="the 4-layer MLP's CG (App. D.1)")
    ap.add_argument("--mlp4-n-train", type=int,
                    default=PAPER_SETTINGS["purchase100s-mlp4"]["n_train"])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args([] if argv is None else argv)
    study = resource_study(
        quick=quick or a.quick, widths=[int(v) for v in a.widths.split(",")],
        n_train=a.n_train, targets=a.targets, damping=a.damping, tol=a.tol, epochs=a.epochs,
        threads=a.threads, purchase=not a.no_purchase, purchase_n_train=a.purchase_n_train,
        build_columns=a.build_columns, full=a.full, mlp4=a.mlp4, mlp4_n_train=a.mlp4_n_train,
        progress=None if a.json else (lambda m: print(f"[{m}]", flush=True)))
    if a.json:
        print(json.dumps({k: v for k, v in study.items()}, indent=1, default=str))
    else:
        from semi_core.attacks.whitebox.tables import markdown_resources

        print(markdown_resources(study))
    return study["rows"] + [{"fits": study["fits"], **{k: study[k] for k in ("purchase", "mlp4")
                                                       if k in study}}]


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
