"""Exact Hessian vs conjugate gradient for IHA at the size of the seed's Purchase MLP.

``iha_parameters_vs_loss`` §4.2 / Table 6: the 2-layer MLP on Purchase-100 (600 features,
32 tanh hidden units, 100 classes: d = 600*32 + 32 + 32*100 + 100 = 22,532 parameters). IHA
needs :math:`(\\mathbf H+\\epsilon\\mathbf I)^{-1}\\mathbf v` per target; two ways
(:mod:`semi_core.sgd.hessian`):

- exact: build :math:`\\mathbf H` (d Hessian-vector products, one per column; here in batches of
  ``--batch`` columns), ``eigh`` it, then each iHVP is two (d x d) mat-vecs;
- CG: no matrix; each iHVP is ``iterations`` HVPs (batched over targets).

Measured in this run, on random Purchase-like data (binary features, ``--n-train`` records)
and a briefly trained model: the time of one batch of ``--batch`` HVPs at full d (so the
Hessian build time is ``d / batch`` times that, stated as an extrapolation unless ``--full``),
``eigh`` at sizes ``--eigh-sizes`` (fitted as c d^3 and extrapolated to d unless ``--full``),
and CG per target (iterations to ``--tol`` and seconds, averaged over ``--targets``). Memory:
the Hessian is 8 d^2 bytes (float64; ``eigh`` needs about twice that again for the
eigenvectors and workspace); CG holds a few (k, d) blocks. Printed ratios: CG time per target
/ exact iHVP time per target, and the number of targets above which the exact path's
precomputation pays for itself. ``--full`` builds and decomposes the full Hessian (about
12 GB of memory at d = 22,532; use a large machine or ``--device cuda``)::

    python -m benchmarks.bench_hessian                 # CPU, extrapolated Hessian + eigh
    python -m benchmarks.bench_hessian --full --device cuda
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import torch

from benchmarks._timing import best_of
from semi_core.sgd.hessian import EigenInverse, cg_solve, hvp_operator
from semi_core.sgd.reference_models import build_attack_model


def _sync(dev):
    if dev.type == "cuda":
        torch.cuda.synchronize()


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--features", type=int, default=600)
    ap.add_argument("--hidden", type=int, default=32)
    ap.add_argument("--classes", type=int, default=100)
    ap.add_argument("--n-train", type=int, default=2000)
    ap.add_argument("--batch", type=int, default=64, help="HVP columns per batch")
    ap.add_argument("--targets", type=int, default=8, help="targets of the CG timing")
    ap.add_argument("--tol", type=float, default=1e-6, help="CG relative tolerance")
    ap.add_argument("--damping", type=float, default=0.2)
    ap.add_argument("--eigh-sizes", default="1000,2000,3000")
    ap.add_argument("--full", action="store_true", help="build and eigh the full Hessian")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    dev = torch.device(a.device)
    torch.manual_seed(a.seed)
    rng = np.random.default_rng(a.seed)
    fm = build_attack_model("mlp", a.features, a.classes, hidden=a.hidden)
    fm.module.to(dev)
    d = fm.d
    x = torch.as_tensor(rng.random((a.n_train, a.features)) < 0.1, dtype=torch.float64,
                        device=dev)
    y = torch.as_tensor(rng.integers(0, a.classes, a.n_train), device=dev)
    theta = fm.theta().to(dev)
    # a few full-batch gradient steps so the Hessian is that of a trained-ish model
    loss_fn = torch.func.grad(lambda th: torch.nn.functional.cross_entropy(
        torch.func.functional_call(fm.module, {**fm.frozen, **fm.unflatten(th)}, (x,)), y))
    for _ in range(20):
        theta = theta - 0.5 * loss_fn(theta)
    hvp = hvp_operator(fm, theta, x, y)
    E = torch.zeros(a.batch, d, dtype=torch.float64, device=dev)
    E[torch.arange(a.batch), torch.arange(a.batch)] = 1.0
    hvp(E[:2])

    def batch():
        hvp(E)
        _sync(dev)
    t_batch = best_of(batch, repeat=2)
    t_hess = t_batch * d / a.batch
    out = {"device": str(dev), "d": int(d), "n_train": a.n_train,
           "hvp_batch": a.batch, "hvp_batch_s": t_batch,
           "hessian_build_s": t_hess, "hessian_build": "extrapolated (d / batch HVP batches)",
           "hessian_bytes": 8 * d * d, "eigh_bytes_approx": 3 * 8 * d * d}
    if a.full:
        t0 = time.perf_counter()
        H = torch.empty(d, d, dtype=torch.float64, device=dev)
        for s in range(0, d, a.batch):
            k = min(a.batch, d - s)
            Eb = torch.zeros(k, d, dtype=torch.float64, device=dev)
            Eb[torch.arange(k), s + torch.arange(k)] = 1.0
            H[s:s + k] = hvp(Eb)
        _sync(dev)
        out["hessian_build_s"], out["hessian_build"] = time.perf_counter() - t0, "measured"
        t0 = time.perf_counter()
        inv = EigenInverse(H, epsilon=a.damping)
        _sync(dev)
        out["eigh_s"], out["eigh"] = time.perf_counter() - t0, "measured"
        out["top_eigenvalue"] = float(inv.eigvals[-1])
        del H
    else:
        sizes = [int(v) for v in a.eigh_sizes.split(",")]
        ts = []
        torch.linalg.eigh(torch.eye(64, dtype=torch.float64, device=dev))   # warm-up
        for m in sizes:
            A = torch.randn(m, m, dtype=torch.float64, device=dev)
            A = A @ A.T / m

            def one(A=A):
                torch.linalg.eigh(A)
                _sync(dev)
            ts.append(best_of(one, repeat=2))
        c = float(np.exp(np.mean(np.log(np.array(ts) / np.array(sizes, float) ** 3))))
        out["eigh_fit"] = {str(m): t for m, t in zip(sizes, ts, strict=True)}
        out["eigh_s"], out["eigh"] = c * float(d) ** 3, "extrapolated (c d^3 fit)"
        inv = None
    # CG per target: gradients of `targets` records, batched CG
    xt, yt = x[:a.targets], y[:a.targets]
    G = fm.per_sample_grads(theta, xt, yt)
    _sync(dev)
    t0 = time.perf_counter()
    X, info = cg_solve(hvp, G, damping=a.damping, tol=a.tol)
    _sync(dev)
    t_cg = time.perf_counter() - t0
    out.update({"cg_targets": a.targets, "cg_tol": a.tol, "cg_iterations": info.iterations,
                "cg_converged": info.converged, "cg_s_per_target": t_cg / a.targets})
    if inv is not None:
        t0 = time.perf_counter()
        Xe = inv.solve(G)
        _sync(dev)
        out["exact_ihvp_s_per_target"] = (time.perf_counter() - t0) / a.targets
        out["cg_vs_exact_max_rel_diff"] = float(((X - Xe).norm(dim=1) / Xe.norm(dim=1)).max())
    else:  # two (d x d) mat-vecs per target at 2 d^2 flops each; time a (d x d) product here
        A = torch.randn(d, a.batch, dtype=torch.float64, device=dev)
        B = torch.randn(a.batch, a.batch, dtype=torch.float64, device=dev)
        t0 = time.perf_counter()
        A @ B
        _sync(dev)
        flops_rate = 2 * d * a.batch * a.batch / max(time.perf_counter() - t0, 1e-9)
        out["exact_ihvp_s_per_target"] = 4 * d * d / flops_rate
    pre = out["hessian_build_s"] + out["eigh_s"]
    out["precompute_s"] = pre
    out["ratio_cg_over_exact_per_target"] = out["cg_s_per_target"] / out["exact_ihvp_s_per_target"]
    out["break_even_targets"] = pre / max(out["cg_s_per_target"] - out["exact_ihvp_s_per_target"],
                                          1e-12)
    out["cg_bytes_approx"] = 8 * 6 * a.targets * d
    out["ratio_memory_exact_over_cg"] = out["eigh_bytes_approx"] / out["cg_bytes_approx"]
    if a.json:
        print(json.dumps(out, indent=1))
    else:
        for k, v in out.items():
            print(f"{k:>34}: {v}")
    return out


if __name__ == "__main__":
    main()
