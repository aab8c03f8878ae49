r"""Time and memory of IHA's inverse-Hessian products, exact against conjugate gradient, at the
seed's model sizes on stand-in data of the seed's shapes (``iha_parameters_vs_loss`` §4.5.1
Table 6, App. D Table 7, App. D.1).

The seed's Purchase-100 is not bundled and nothing downloads, so the records are a stand-in of
the same shape (:func:`purchase_standin`: 600 binary features, 100 classes, each class a
Bernoulli prototype, the way Purchase-100 was made by clustering purchase vectors). Time and
memory depend on the shapes (features, widths, classes, training records), not on the values,
so these are the seed's workloads; the AUCs on the stand-in say nothing about the seed's.

Two paths to :math:`(\mathbf H+\epsilon\mathbf I)^{-1}\mathbf v`
(:mod:`semi_core.sgd.hessian`):

* exact: build :math:`\mathbf H` from :math:`d` Hessian-vector products (batches of 64
  columns), ``eigh`` it, then each iHVP is two :math:`d\times d` products:
  time :math:`\Theta(n d^2 + d^3)`, memory :math:`\Theta(d^2)`;
* CG: no matrix; each iHVP is one HVP over the :math:`n` training records per iteration:
  time :math:`\Theta(T_{\rm cg}\,n d)` per target, memory :math:`\Theta(n A + k d)`.

Each measurement runs in a fresh process (:func:`measure_in_subprocess`) so that its peak
resident memory (``ru_maxrss``) and CPU time are its own; a dense matrix product of the same
size is timed in the same process as the floor the ratios are taken against. The scaling law
:math:`t = c\,d^{\,p}` is fitted by least squares in log-log coordinates from at least five
measured sizes (:func:`fit_power_law`).
"""

from __future__ import annotations

import math
import resource
import time

import numpy as np

from semi_core._validation import check_int, check_positive

__all__ = ["PAPER_SETTINGS", "purchase_standin", "measure_ihvp", "measure_in_subprocess",
           "fit_power_law", "mlp_parameters", "resource_study"]

#: The seed's settings (features, hidden widths, classes, training records of one model: half
#: of the pool, each record in with probability 1/2 as in §4.1). MLP-2: Purchase-100 (80k
#: pool), d = 22,532; MLP-4: Purchase-100(S) (25k pool) with the authors' widths
#: 512-256-128-64 (``mib/models/mlp.py``), d = 486,692.
PAPER_SETTINGS = {
    "purchase100-mlp2": {"features": 600, "hidden": (32,), "classes": 100, "n_train": 40_000},
    "purchase100s-mlp2": {"features": 600, "hidden": (32,), "classes": 100, "n_train": 12_500},
    "purchase100s-mlp4": {"features": 600, "hidden": (512, 256, 128, 64), "classes": 100,
                          "n_train": 12_500},
}

#: Hessian columns per batched HVP call of the exact build.
BUILD_BATCH = 64


def mlp_parameters(features: int, hidden, classes: int) -> int:
    r"""Parameters of the MLP ``features -> hidden... -> classes`` (weights and biases):
    :math:`d=\sum_l (w_{l-1}+1)\,w_l`.

    Parameters
    ----------
    features, classes : int
        Input and output widths.
    hidden : int or sequence of int
        Hidden widths.

    Returns
    -------
    int
        :math:`d`.
    """
    widths = (features, *((hidden,) if isinstance(hidden, int) else tuple(hidden)), classes)
    return int(sum((a + 1) * b for a, b in zip(widths[:-1], widths[1:], strict=True)))


def purchase_standin(n: int, *, features: int = 600, classes: int = 100, density: float = 0.1,
                     seed=0):
    r"""Records of Purchase-100's shape: binary features drawn from one of ``classes``
    Bernoulli prototypes (:math:`p_{k,j}\sim\mathrm{Beta}(a, a(1-\rho)/\rho)` with mean
    :math:`\rho` = ``density``), the label being the prototype.

    Parameters
    ----------
    n : int
        Records, >= 2.
    features, classes : int
        600 and 100 for Purchase-100.
    density : float
        Mean fraction of ones, in (0, 1).
    seed : int or SeedSequence
        Seed of the numpy Generator.

    Returns
    -------
    x : torch.Tensor, shape (n, features), float64 in {0, 1}
    y : torch.Tensor, shape (n,), int64 in ``0..classes-1``
    """
    import torch

    n = check_int(n, "n", minimum=2)
    features = check_int(features, "features", minimum=1)
    classes = check_int(classes, "classes", minimum=2)
    if not 0.0 < float(density) < 1.0:
        raise ValueError(f"density must be in (0, 1), got {density!r}")
    rng = np.random.default_rng(seed)
    a = 0.5
    proto = rng.beta(a, a * (1 - density) / density, size=(classes, features))
    y = rng.integers(0, classes, n)
    x = (rng.random((n, features)) < proto[y]).astype(np.float64)
    return torch.as_tensor(x), torch.as_tensor(y.astype(np.int64))


def _status_kib(field: str) -> int | None:
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def _reset_peak() -> bool:
    """Reset the kernel's peak resident size of this process (Linux: ``5`` to
    ``/proc/self/clear_refs``), so that the next peak is the measured method's own."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def _peak_bytes() -> int:
    kib = _status_kib("VmHWM")
    if kib is None:       # no procfs: the lifetime peak (Linux and BSD report KiB)
        kib = int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
    return kib * 1024


def _current_bytes() -> int:
    kib = _status_kib("VmRSS")
    return _peak_bytes() if kib is None else kib * 1024


def _train(fm, x, y, *, epochs: float, batch: int, seed: int):
    """Heavy-ball SGD at the seed's (lr, momentum, weight decay) = (0.01, 0.9, 5e-4) for
    ``epochs`` passes of minibatches of ``batch`` (a briefly trained model: the Hessian of a
    model near a minimum, not the minimum itself)."""
    import torch
    from torch.func import functional_call, grad

    def loss(th, xb, yb):
        out = functional_call(fm.module, {**fm.frozen, **fm.unflatten(th)}, (xb,))
        return torch.nn.functional.cross_entropy(out, yb)

    g = grad(loss)
    theta = fm.theta()
    h = torch.zeros_like(theta)
    rng = np.random.default_rng(seed)
    n = x.shape[0]
    steps = max(1, int(math.ceil(epochs * n / batch)))
    for _ in range(steps):
        idx = torch.as_tensor(rng.choice(n, size=min(batch, n), replace=False))
        h = 0.9 * h + g(theta, x[idx], y[idx]) + 5e-4 * theta
        theta = theta - 0.01 * h
    return theta


def measure_ihvp(method: str, *, features: int = 600, hidden=(32,), classes: int = 100,
                 n_train: int = 1000, targets: int = 4, damping: float = 0.2, tol: float = 1e-5,
                 epochs: float = 2.0, train_batch: int = 32, build_columns: int | None = None,
                 reference: str = "square", threads: int | None = None, seed: int = 0) -> dict:
    r"""Time (wall and CPU) and peak resident memory of one iHVP path on a briefly trained
    MLP, in this process, with the floor of a dense product timed in the same process.

    Parameters
    ----------
    method : {"exact", "cg"}
        ``"exact"``: Hessian from HVP columns, ``eigh`` (:class:`~semi_core.sgd.hessian.
        EigenInverse`) and one solve per target; ``"cg"``: :func:`~semi_core.sgd.hessian.
        cg_solve` on the targets' gradients (batched).
    features, hidden, classes : int, tuple, int
        The MLP (``tanh``, :func:`~semi_core.sgd.reference_models.build_attack_model`).
    n_train : int
        Training records: the Hessian is that of their mean loss.
    targets : int
        Right-hand sides (gradients of the first ``targets`` records).
    damping : float
        :math:`\epsilon` (the seed's 0.2).
    tol : float
        CG relative residual (the authors' code: 1e-5).
    epochs, train_batch : float, int
        Training before the measurement.
    build_columns : int, optional
        Exact path only: build this many Hessian columns (the time scaled by ``d /
        build_columns``: every column is one HVP of the same cost) into the full allocated
        :math:`d\times d` matrix, and skip ``eigh``; None builds every column and decomposes.
    reference : {"square", "panel"}
        The floor: one :math:`d\times d` by :math:`d\times d` product, or (for sizes where
        that is too slow or too large) :math:`d\times k` by :math:`k\times 64`,
        :math:`k=\min(d, 4096)`.
    threads : int, optional
        ``torch.set_num_threads``; None leaves torch's default.
    seed : int
        Seed of the data, the initialisation and the minibatches.

    Returns
    -------
    dict
        ``d``, the phases' wall seconds (``build_s``, ``eigh_s``, ``solve_s``, ``cg_s``),
        ``wall_s`` and ``cpu_s`` of the method, ``peak_rss_bytes`` (the peak resident size
        during the method, the kernel's peak reset before it where procfs allows:
        ``peak_reset``), ``baseline_rss_bytes`` (resident before it), ``method_rss_bytes``
        (their difference), ``cg_iterations``, ``reference_s`` and the ratios.
    """
    import torch

    from semi_core.sgd.hessian import EigenInverse, cg_solve, hvp_operator
    from semi_core.sgd.reference_models import build_attack_model

    if method not in ("exact", "cg"):
        raise ValueError(f"method must be 'exact' or 'cg', got {method!r}")
    if reference not in ("square", "panel"):
        raise ValueError(f"reference must be 'square' or 'panel', got {reference!r}")
    n_train = check_int(n_train, "n_train", minimum=2)
    targets = check_int(targets, "targets", minimum=1, maximum=n_train)
    check_positive(tol, "tol")
    hidden = (hidden,) if isinstance(hidden, int) else tuple(hidden)
    if method == "exact" and build_columns is not None:   # refused before any work
        check_int(build_columns, "build_columns", minimum=1,
                  maximum=mlp_parameters(features, hidden, classes))
    if threads is not None:
        torch.set_num_threads(check_int(threads, "threads", minimum=1))
    torch.manual_seed(seed)
    x, y = purchase_standin(n_train, features=features, classes=classes, seed=seed)
    fm = build_attack_model("mlp", features, classes, hidden=hidden)
    d = int(fm.d)
    theta = _train(fm, x, y, epochs=epochs, batch=train_batch, seed=seed)
    hvp = hvp_operator(fm, theta, x, y)
    G = fm.per_sample_grads(theta, x[:targets], y[:targets])
    hvp(G[:1])                                         # warm-up (compile, allocator)
    out = {"method": method, "d": d, "features": features, "hidden": list(hidden),
           "classes": classes, "n_train": n_train, "targets": targets, "damping": damping,
           "threads": torch.get_num_threads()}
    base_rss = _current_bytes()
    out["peak_reset"] = _reset_peak()
    c0, w0 = time.process_time(), time.perf_counter()
    if method == "exact":
        cols = d if build_columns is None else check_int(build_columns, "build_columns",
                                                         minimum=1, maximum=d)
        H = torch.zeros(d, d, dtype=torch.float64)     # touched: the matrix is resident
        t0 = time.perf_counter()
        for s in range(0, cols, BUILD_BATCH):
            k = min(BUILD_BATCH, cols - s)
            E = torch.zeros(k, d, dtype=torch.float64)
            E[torch.arange(k), s + torch.arange(k)] = 1.0
            H[s:s + k] = hvp(E)
        out["build_s"] = (time.perf_counter() - t0) * d / cols
        out["build"] = "measured" if cols == d else f"measured on {cols} of {d} columns, scaled"
        if cols == d:
            t0 = time.perf_counter()
            try:
                inv = EigenInverse(H, epsilon=damping)
                out["damped_positive_definite"] = True
            except ValueError:                          # eigh ran; damping left a sigma <= 0
                inv = None
                out["damped_positive_definite"] = False
            out["eigh_s"] = time.perf_counter() - t0
            t0 = time.perf_counter()
            if inv is not None:
                inv.solve(G)
            out["solve_s_per_target"] = (time.perf_counter() - t0) / targets
            del inv
        del H
    else:
        t0 = time.perf_counter()
        try:
            _, info = cg_solve(hvp, G, damping=damping, tol=tol)
            out["cg_iterations"] = int(info.iterations)
            out["cg_converged"] = bool(info.converged)
            out["damped_positive_definite"] = True
        except ValueError:          # a direction of negative curvature: CG stopped there
            out["cg_iterations"] = None
            out["cg_converged"] = False
            out["damped_positive_definite"] = False
        out["cg_s"] = time.perf_counter() - t0
        out["cg_s_per_target"] = out["cg_s"] / targets
    out["wall_s"] = time.perf_counter() - w0
    out["cpu_s"] = time.process_time() - c0
    if method == "exact" and "build" in out and out["build"] != "measured":
        # wall/cpu of a partial build are scaled like the build itself
        f = out["build_s"] / max(out["wall_s"], 1e-12)
        out["wall_s"], out["cpu_s"] = out["build_s"], out["cpu_s"] * f
    out["peak_rss_bytes"] = _peak_bytes()
    out["baseline_rss_bytes"] = base_rss
    out["method_rss_bytes"] = out["peak_rss_bytes"] - base_rss
    k, m = _reference_shape(d, reference)
    A = torch.randn(d, k, dtype=torch.float64)
    B = torch.randn(k, m, dtype=torch.float64)
    A @ B[:, :8]
    ref = math.inf
    for _ in range(3):                  # best of three: the least perturbed by other load
        t0 = time.perf_counter()
        A @ B
        ref = min(ref, time.perf_counter() - t0)
    out["reference"] = f"one ({d} x {k}) @ ({k} x {m}) float64 product (best of 3)"
    out["reference_s"] = ref
    out["ratio_wall_over_reference"] = out["wall_s"] / out["reference_s"]
    return out


def _reference_shape(d: int, reference: str) -> tuple[int, int]:
    """``(k, m)`` of the floor product ``(d x k)(k x m)``: ``square`` is ``(d, d)``; ``panel``
    is ``(min(d, 4096), 64)``, so that no d x d matrix is allocated at the sizes where the
    exact path itself cannot be (the seed's 4-layer MLP: 8 d^2 = 1.9 TB)."""
    return (min(d, 4096), 64) if reference == "panel" else (d, d)


def _child(kw, q):
    try:
        q.put(measure_ihvp(**kw))
    except BaseException as exc:  # reported to the parent, which raises
        q.put({"error": f"{type(exc).__name__}: {exc}"})


def measure_in_subprocess(method: str, **kw) -> dict:
    """:func:`measure_ihvp` in a fresh ``spawn`` process, so that the peak resident memory and
    the CPU time are those of this measurement alone.

    Parameters
    ----------
    method : {"exact", "cg"}
        The path.
    **kw
        Options of :func:`measure_ihvp`.

    Returns
    -------
    dict
        Its result.

    Raises
    ------
    RuntimeError
        If the child failed or died (the message names the cause or the exit code).
    """
    import multiprocessing as mp

    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=_child, args=({"method": method, **kw}, q))
    p.start()
    try:
        res = q.get()
    finally:
        p.join()
    if "error" in res:
        raise RuntimeError(f"the {method} measurement failed: {res['error']}")
    return res


def fit_power_law(x, y) -> dict:
    r"""Least-squares fit of :math:`y = c\,x^{p}` in log-log coordinates.

    .. math::

        \log y_i = \log c + p\log x_i + e_i,\qquad
        \widehat{\rm se}(p)=\sqrt{\frac{\sum e_i^2/(m-2)}{\sum(\log x_i-\overline{\log x})^2}}

    Parameters
    ----------
    x, y : array_like
        At least five positive measured points (a law fitted from fewer is an extrapolation
        of too little).

    Returns
    -------
    dict
        ``c``, ``p``, ``p_se``, ``r2``, ``points`` and ``predict`` (a callable ``x -> c x^p``
        is not JSON: ``predict`` is omitted; use ``c * x**p``).

    Raises
    ------
    ValueError
        Fewer than five points, unequal lengths, a non-positive value, or fewer than two
        distinct ``x``.
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"x and y must be 1-d of equal length, got {x.shape} and {y.shape}")
    if x.size < 5:
        raise ValueError(f"a scaling law needs at least 5 measured points, got {x.size}")
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y)) and np.all(x > 0)
            and np.all(y > 0)):
        raise ValueError("x and y must be finite and > 0")
    lx, ly = np.log(x), np.log(y)
    sxx = float(((lx - lx.mean()) ** 2).sum())
    if sxx == 0.0:
        raise ValueError("x must take at least two distinct values")
    p = float(((lx - lx.mean()) * (ly - ly.mean())).sum() / sxx)
    logc = float(ly.mean() - p * lx.mean())
    res = ly - (logc + p * lx)
    sst = float(((ly - ly.mean()) ** 2).sum())
    return {"c": math.exp(logc), "p": p,
            "p_se": math.sqrt(float((res ** 2).sum()) / (x.size - 2) / sxx),
            "r2": 1.0 - float((res ** 2).sum()) / sst if sst > 0 else 1.0,
            "points": int(x.size)}


def _fits(rows) -> dict:
    ex = [r for r in rows if r["method"] == "exact"]
    cg = [r for r in rows if r["method"] == "cg"]
    out = {}
    for name, rs, key in (("exact_wall_s", ex, "wall_s"), ("exact_cpu_s", ex, "cpu_s"),
                          ("exact_build_s", ex, "build_s"), ("exact_eigh_s", ex, "eigh_s"),
                          ("exact_rss_bytes", ex, "method_rss_bytes"),
                          ("cg_wall_s_per_target", cg, "cg_s_per_target"),
                          ("cg_cpu_s", cg, "cpu_s"),
                          ("cg_rss_bytes", cg, "method_rss_bytes"),
                          ("reference_s", ex, "reference_s")):
        pts = [(r["d"], r[key]) for r in rs if r.get(key, 0) > 0]
        try:
            out[name] = fit_power_law(*zip(*pts, strict=True)) if pts else {
                "error": "no positive measurement"}
        except ValueError as exc:
            out[name] = {"error": str(exc)}
    return out


def _pred(fit: dict, d: float) -> float | None:
    return None if "error" in fit else fit["c"] * d ** fit["p"]


def resource_study(*, quick: bool = False, widths=(1, 2, 3, 4, 5), n_train: int = 500,
                   targets: int = 4, damping: float = 0.2, tol: float = 1e-5,
                   epochs: float = 2.0, threads: int | None = 2, purchase: bool = True,
                   purchase_n_train: int | None = None, build_columns: int = 1024,
                   full: bool = False, mlp4: bool = False, mlp4_n_train: int | None = None,
                   mlp4_dampings=(0.2, 0.5), progress=None, seed: int = 0,
                   isolate: bool = True) -> dict:
    r"""The seed's Table 6 (and App. D.1's CG) workloads: a sweep of MLP sizes for the scaling
    law, the Purchase MLP point and optionally the 4-layer MLP, each measurement in a fresh
    process (:func:`measure_in_subprocess`).

    Sweep: MLPs ``600-h-100`` for ``h`` in ``widths`` (>= 5 sizes; ``quick``: ``60-h-10``
    and 200 records), exact and CG; fits :math:`t=c\,d^p` and memory :math:`=c\,d^p`
    (:func:`fit_power_law`). Purchase point (:data:`PAPER_SETTINGS` ``purchase100-mlp2``,
    :math:`d=22{,}532`): CG measured; exact: the Hessian's build measured on
    ``build_columns`` columns of the allocated :math:`d\times d` matrix and scaled, its
    ``eigh`` from the sweep's fit unless ``full``. MLP-4 (``purchase100s-mlp4``,
    :math:`d=486{,}692`): CG for one target at each damping of ``mlp4_dampings``.

    Parameters
    ----------
    quick : bool
        Small shapes (seconds), no Purchase or MLP-4 point.
    widths : sequence of int
        Hidden widths of the sweep (at least five).
    n_train, targets, damping, tol, epochs, threads, seed
        As in :func:`measure_ihvp`.
    purchase : bool
        Measure the Purchase MLP point.
    purchase_n_train : int, optional
        Its training records (default ``n_train``).
    build_columns : int
        Hessian columns built at the Purchase point (``full``: all, and ``eigh``).
    full : bool
        Build and decompose the full Purchase Hessian (hours on two cores, ~16 GB).
    mlp4 : bool
        Measure the 4-layer MLP's CG.
    mlp4_n_train : int, optional
        Its training records (default the seed's 12,500).
    mlp4_dampings : sequence of float
        Dampings of the MLP-4 CG (App. D.1: 0.2 and 0.5).
    progress : callable, optional
        ``progress(message)`` before each measurement.
    isolate : bool
        One fresh process per measurement (its own peak memory and CPU time); False measures
        in this process (faster; the memory is then that of the process since the last
        reset of its peak).

    Returns
    -------
    dict
        ``rows`` (every measurement), ``fits``, and ``purchase`` / ``mlp4`` summaries.
    """
    say = progress or (lambda msg: None)
    measure = measure_in_subprocess if isolate else measure_ihvp
    widths = tuple(check_int(w, "widths", minimum=1) for w in widths)
    if len(set(widths)) < 5:
        raise ValueError(f"widths must hold at least 5 distinct sizes, got {widths}")
    shape = dict(features=60, classes=10) if quick else dict(features=600, classes=100)
    common = dict(targets=targets, damping=damping, tol=tol, epochs=epochs, threads=threads,
                  seed=seed, **shape)
    nt = 200 if quick else check_int(n_train, "n_train", minimum=2)
    rows = []
    for h in widths:
        for method in ("exact", "cg"):
            say(f"sweep: {method}, hidden width {h}")
            r = measure(method, hidden=(h,), n_train=nt, **common)
            r["stage"] = "sweep"
            rows.append(r)
    fits = _fits(rows)
    out: dict = {"rows": rows, "fits": fits, "quick": bool(quick)}
    if purchase and not quick:
        ps = PAPER_SETTINGS["purchase100-mlp2"]
        d = mlp_parameters(ps["features"], ps["hidden"], ps["classes"])
        pn = purchase_n_train or nt
        kw = dict(common, hidden=ps["hidden"], n_train=pn, reference="panel")
        say(f"Purchase MLP (d = {d}): CG")
        cg = measure("cg", **kw)
        say(f"Purchase MLP (d = {d}): exact")
        ex = measure("exact", build_columns=None if full else build_columns, **kw)
        cg["stage"] = ex["stage"] = "purchase"
        rows += [cg, ex]
        eigh = ex["eigh_s"] if "eigh_s" in ex else _pred(fits["exact_eigh_s"], d)
        mem_fit = _pred(fits["exact_rss_bytes"], d)
        pre = None if eigh is None else ex["build_s"] + eigh
        out["purchase"] = {
            "d": d, "n_train": pn, "exact_build_s": ex["build_s"], "exact_build": ex["build"],
            "exact_eigh_s": eigh,
            "exact_eigh": "measured" if "eigh_s" in ex else "fit c d^p of the sweep",
            "exact_precompute_s": pre,
            "exact_hessian_resident_bytes": ex["method_rss_bytes"],
            "exact_rss_fit_bytes": mem_fit,
            "cg_s_per_target": cg["cg_s_per_target"], "cg_iterations": cg["cg_iterations"],
            "cg_converged": cg["cg_converged"], "cg_cpu_s_per_target": cg["cpu_s"] / targets,
            "cg_rss_bytes": cg["method_rss_bytes"], "reference": cg["reference"],
            "reference_s": cg["reference_s"],
            "ratio_cg_per_target_over_reference": cg["cg_s_per_target"] / cg["reference_s"],
            "ratio_exact_precompute_over_cg_per_target": None if pre is None else
            pre / cg["cg_s_per_target"]}
    if mlp4 and not quick:
        ps = PAPER_SETTINGS["purchase100s-mlp4"]
        out["mlp4"] = {}
        for eps in mlp4_dampings:
            say(f"MLP-4: CG, damping {eps}")
            r = measure("cg", hidden=ps["hidden"], reference="panel",
                                      n_train=mlp4_n_train or ps["n_train"],
                                      **dict(common, targets=1, damping=eps, epochs=1.0))
            r["stage"] = f"mlp4 damping {eps}"
            rows.append(r)
            out["mlp4"][str(eps)] = {k: r[k] for k in (
                "d", "n_train", "cg_s_per_target", "cg_iterations", "cg_converged", "cpu_s",
                "method_rss_bytes", "reference_s")}
    return out
