r"""Online-gradient-ascent MMD witness in the RKHS of an RBF kernel (Numba kernel + NumPy twin).

The hot loop of the sequential DP audit (sequential_dp_auditing seed, Alg. 1 line 10, Alg. 4,
App. E.3). With :math:`\Delta_t = K(X_t,\cdot) - K(Y_t,\cdot)` and the OGA iterate
:math:`f_t=\sum_{i<t} c_i\Delta_i` (:math:`f_1 = 0`), step :math:`t` computes

.. math::

    v_t &= \langle f_t, \Delta_t\rangle
         = \sum_{i<t} c_i\,[K(X_i,X_t) - K(X_i,Y_t) - K(Y_i,X_t) + K(Y_i,Y_t)],\\
    k_t &= \|\Delta_t\|^2 = K(X_t,X_t) + K(Y_t,Y_t) - 2K(X_t,Y_t),\qquad M_t = M_{t-1} + k_t,\\
    \|g_t\|^2 &= \|f_t\|^2 + 4 v_t/\sqrt{M_t} + 4 k_t/M_t,\qquad
    \gamma_t = \min\{1, 1/\|g_t\|\},\\
    f_{t+1} &= \gamma_t\,(f_t + 2\Delta_t/\sqrt{M_t}),\qquad
    \|f_{t+1}\|^2 = \gamma_t^2\|g_t\|^2 ,

i.e. projected OGA on the unit ball with the adaptive step :math:`\eta_t = D/\sqrt{M_t}`,
:math:`D = 2` (Theorem E.2). The running :math:`\|f_t\|^2` replaces the seed's unrolled sum
(App. E.3, whose product index is misprinted, see the claims registry), so each step is
:math:`O(t)`: one pass over the past pairs for :math:`v_t`. The coefficients are stored
unscaled with one running scale (the product of the :math:`\gamma_j`), renormalised before it
underflows.

Degenerate case (discrete outputs with :math:`X_i = Y_i`): while :math:`M_t = 0` every gradient
is the zero function, the step is skipped (:math:`f` stays :math:`0`), never ``0/0``.

The compiled kernel computes the kernel row of step :math:`t` by straight loops over the past
pairs (coordinates transposed, four squared-distance rows, then :math:`e^{-x}` by range
reduction and a degree-13 polynomial, error :math:`\le 2` ulp): without SVML a libm ``exp`` call
stops LLVM vectorising, and the vectorised row is about 3x the NumPy twin at N = 5,000, d = 1
(``benchmarks/bench_witness.py``).

``SEMI_CORE_FORCE_TWIN=1`` (or a missing Numba) dispatches to the twin :func:`witness_block_twin`,
which performs the same operations vectorised over the past pairs with NumPy's ``exp`` (the
backends agree to a few ulp).
"""

from __future__ import annotations

import math

import numpy as np

from ._jit import jit, use_twins

__all__ = ["witness_block", "witness_block_twin", "witness_block_python", "new_state",
           "witness_values"]

#: Renormalise the stored coefficients when the running scale falls below this.
_RESCALE_BELOW = 1e-150


def new_state(n_max: int, d: int) -> dict:
    """Buffers of one OGA run: coefficients (unscaled), ``[M, scale, ||f||^2]``, witness values.

    Parameters
    ----------
    n_max : int
        Largest number of steps.
    d : int
        Output dimension.

    Returns
    -------
    dict
        ``coef``, ``state``, ``v`` and ``k``.
    """
    return {"coef": np.zeros(n_max), "state": np.array([0.0, 1.0, 0.0]),
            "v": np.zeros(n_max), "k": np.zeros(n_max)}


#: Kernel values exp(-x) for x above this are set to 0 (< 1e-304): exp would otherwise return
#: denormals, whose arithmetic is ~10x slower (heavy-tailed outputs hit this constantly).
_XCUT = 700.0


@jit(inline="always")
def _kexp(x):  # pragma: no cover - compiled
    return math.exp(-x) if x < _XCUT else 0.0


def _kexp_np(x):
    return np.where(x < _XCUT, np.exp(-np.minimum(x, _XCUT)), 0.0)


def _kexp_py(x):
    return math.exp(-x) if x < _XCUT else 0.0


# exp(-x) for x in [0, _XCUT) without a libm call, so that LLVM vectorises the loop (there is no
# SVML): x = n ln2 + r, |r| <= ln2/2, exp(-x) = 2^-n exp(-r), exp(-r) by its Taylor polynomial of
# degree 13 (truncation < 5e-18 relative) evaluated by Estrin's scheme with fused multiply-adds
# (independent products, so successive terms overlap in the pipeline instead of one chain of 26
# dependent operations), 2^-n built from its IEEE bits. Error <= 2 ulp (at most 1.0 ulp measured
# against an 80-bit exp in 10^6 arguments; tests/kernels/test_witness_exp.py).
_LOG2E = 1.4426950408889634
_LN2_HI = 0.6931471803691238  # ln 2 split so that n * _LN2_HI is exact for n < 2^21
_LN2_LO = 1.9082149292705877e-10
_INV_FACT = tuple(1.0 / math.factorial(k) for k in range(14))


# Two LLVM operations Numba does not expose: the IEEE bits of an int64 read as a float64 in a
# register (a bitcast), and the fused multiply-add a * b + c rounded once (llvm.fma: one
# instruction on x86-64 with FMA3 and on ARM64; elsewhere a correctly rounded libm call, slower
# but with the same result).
try:
    from llvmlite import ir as _ir
    from numba import types as _nbtypes
    from numba.extending import intrinsic as _intrinsic
except ImportError:  # pragma: no cover - no Numba: the twins run; plain-Python stand-ins
    def _as_float64(bits):
        return float(np.array(bits, dtype=np.int64).view(np.float64))

    def _fma(a, b, c):  # not fused (only the compiled kernels use the fused operation)
        return a * b + c
else:
    @_intrinsic
    def _as_float64(typingctx, bits):  # pragma: no cover - compiled
        def codegen(context, builder, signature, args):
            return builder.bitcast(args[0], _ir.DoubleType())

        return _nbtypes.float64(_nbtypes.int64), codegen

    @_intrinsic
    def _fma(typingctx, a, b, c):  # pragma: no cover - compiled
        def codegen(context, builder, signature, args):
            f64 = _ir.DoubleType()
            fn = builder.module.declare_intrinsic("llvm.fma", [f64],
                                                  _ir.FunctionType(f64, [f64, f64, f64]))
            return builder.call(fn, args)

        f = _nbtypes.float64
        return f(f, f, f), codegen


@jit(inline="always")
def _exp_neg(x):  # pragma: no cover - compiled
    """``exp(-x)`` for ``x >= 0`` (0 where ``x >= _XCUT``), branch-free so that a loop calling
    it vectorises."""
    c = _INV_FACT
    xc = min(x, _XCUT)
    nf = np.floor(_fma(xc, _LOG2E, 0.5))  # a float: no round trip through an integer register
    r = _fma(nf, _LN2_LO, _fma(nf, _LN2_HI, -xc))  # = -(x - n ln 2), |r| <= ln2/2 + 1e-16
    r2 = r * r
    r4 = r2 * r2
    r8 = r4 * r4
    a0 = _fma(c[3], r, c[2])
    a1 = _fma(c[5], r, c[4])
    a2 = _fma(c[7], r, c[6])
    a3 = _fma(c[9], r, c[8])
    a4 = _fma(c[11], r, c[10])
    a5 = _fma(c[13], r, c[12])
    tail = _fma(_fma(a5, r2, a4), r8, _fma(_fma(a3, r2, a2), r4, _fma(a1, r2, a0)))
    p = 1.0 + _fma(r2, tail, r)
    p = p if x < _XCUT else 0.0
    return p * _as_float64(np.int64(1023.0 - nf) << 52)  # times 2^-n, built from its bits


@jit(inline="always")
def _vexp_neg(q, n, scale):  # pragma: no cover - compiled
    """``q[i] = exp(-scale q[i])`` for ``i < n`` (0 where ``scale q[i] >= _XCUT``), one straight
    loop that LLVM vectorises."""
    for i in range(n):
        q[i] = _exp_neg(q[i] * scale)


@jit
def _witness_block_nb(X, Y, t0, t1, inv2h2, coef, state, v_out, k_out):  # pragma: no cover
    # Vectorisable layout: the past pairs' coordinates transposed (d, t1), four distance rows
    # and the kernel row computed by straight loops over the past pairs (no call, no branch).
    d = X.shape[1]
    XT = np.ascontiguousarray(X[:t1].T)
    YT = np.ascontiguousarray(Y[:t1].T)
    qa = np.empty(t1)
    qb = np.empty(t1)
    qc = np.empty(t1)
    qd = np.empty(t1)
    kx = np.empty(t1)
    M, scale, fn2 = state[0], state[1], state[2]
    for t in range(t0, t1):
        for i in range(t):
            qa[i] = 0.0
            qb[i] = 0.0
            qc[i] = 0.0
            qd[i] = 0.0
        for j in range(d):
            xt = X[t, j]
            yt = Y[t, j]
            xr = XT[j]
            yr = YT[j]
            for i in range(t):
                a = xr[i] - xt
                b = xr[i] - yt
                e = yr[i] - xt
                g = yr[i] - yt
                qa[i] += a * a
                qb[i] += b * b
                qc[i] += e * e
                qd[i] += g * g
        for i in range(t):
            kx[i] = (_exp_neg(qa[i] * inv2h2) - _exp_neg(qb[i] * inv2h2)
                     - _exp_neg(qc[i] * inv2h2) + _exp_neg(qd[i] * inv2h2))
        acc = 0.0
        for i in range(t):
            acc += coef[i] * kx[i]
        v = scale * acc
        dself = 0.0
        for j in range(d):
            a = X[t, j] - Y[t, j]
            dself += a * a
        k = 2.0 - 2.0 * _kexp(dself * inv2h2)
        v_out[t] = v
        k_out[t] = k
        M += k
        if M > 0.0:
            rs = math.sqrt(M)
            g2 = fn2 + 4.0 * v / rs + 4.0 * k / M
            if g2 < 0.0:  # rounding only: ||g||^2 >= 0 exactly
                g2 = 0.0
            gam = 1.0
            if g2 > 1.0:
                gam = 1.0 / math.sqrt(g2)
            coef[t] = (2.0 / rs) / scale
            scale *= gam
            fn2 = gam * gam * g2
            if scale < _RESCALE_BELOW:
                for i in range(t + 1):
                    coef[i] *= scale
                scale = 1.0
        else:
            coef[t] = 0.0
    state[0] = M
    state[1] = scale
    state[2] = fn2


def witness_block_twin(X, Y, t0, t1, inv2h2, coef, state, v_out, k_out) -> None:
    """NumPy twin of the compiled kernel (same arithmetic, vectorised over past pairs).

    Parameters
    ----------
    X, Y : ndarray, shape (n, d)
        Paired outputs.
    t0, t1 : int
        First and one-past-last step.
    inv2h2 : float
        :math:`1/(2h^2)` of the RBF kernel.
    coef : ndarray, shape (n,)
        Unscaled coefficients, updated in place.
    state : ndarray, shape (3,)
        ``[M, scale, ||f||^2]``, updated in place.
    v_out : ndarray, shape (n,)
        Receives the witness values.
    k_out : ndarray, shape (n,)
        Receives the squared norms.
    """
    M, scale, fn2 = float(state[0]), float(state[1]), float(state[2])
    for t in range(t0, t1):
        if t > 0:
            Xi, Yi = X[:t], Y[:t]
            xt, yt = X[t], Y[t]
            kx = (_kexp_np(np.sum((Xi - xt) ** 2, axis=1) * inv2h2)
                  - _kexp_np(np.sum((Xi - yt) ** 2, axis=1) * inv2h2)
                  - _kexp_np(np.sum((Yi - xt) ** 2, axis=1) * inv2h2)
                  + _kexp_np(np.sum((Yi - yt) ** 2, axis=1) * inv2h2))
            v = scale * float(coef[:t] @ kx)
        else:
            v = 0.0
        k = 2.0 - 2.0 * _kexp_py(float(np.sum((X[t] - Y[t]) ** 2)) * inv2h2)
        v_out[t], k_out[t] = v, k
        M += k
        if M > 0.0:
            rs = math.sqrt(M)
            g2 = max(fn2 + 4.0 * v / rs + 4.0 * k / M, 0.0)
            gam = 1.0 / math.sqrt(g2) if g2 > 1.0 else 1.0
            coef[t] = (2.0 / rs) / scale
            scale *= gam
            fn2 = gam * gam * g2
            if scale < _RESCALE_BELOW:
                coef[: t + 1] *= scale
                scale = 1.0
        else:
            coef[t] = 0.0
    state[0], state[1], state[2] = M, scale, fn2


def witness_block_python(X, Y, t0, t1, inv2h2, coef, state, v_out, k_out) -> None:
    """Plain-Python reference loop (benchmarks and tests only: slow).

    Parameters
    ----------
    X, Y : ndarray, shape (n, d)
        Paired outputs.
    t0, t1 : int
        First and one-past-last step.
    inv2h2 : float
        :math:`1/(2h^2)` of the RBF kernel.
    coef : ndarray, shape (n,)
        Unscaled coefficients, updated in place.
    state : ndarray, shape (3,)
        ``[M, scale, ||f||^2]``, updated in place.
    v_out : ndarray, shape (n,)
        Receives the witness values.
    k_out : ndarray, shape (n,)
        Receives the squared norms.
    """
    d = X.shape[1]
    M, scale, fn2 = float(state[0]), float(state[1]), float(state[2])
    Xl, Yl = X.tolist(), Y.tolist()
    for t in range(t0, t1):
        acc = 0.0
        xt, yt = Xl[t], Yl[t]
        for i in range(t):
            c = coef[i]
            if c == 0.0:
                continue
            xi, yi = Xl[i], Yl[i]
            dxx = sum((xi[j] - xt[j]) ** 2 for j in range(d))
            dxy = sum((xi[j] - yt[j]) ** 2 for j in range(d))
            dyx = sum((yi[j] - xt[j]) ** 2 for j in range(d))
            dyy = sum((yi[j] - yt[j]) ** 2 for j in range(d))
            acc += c * (_kexp_py(dxx * inv2h2) - _kexp_py(dxy * inv2h2)
                        - _kexp_py(dyx * inv2h2) + _kexp_py(dyy * inv2h2))
        v = scale * acc
        k = 2.0 - 2.0 * _kexp_py(sum((xt[j] - yt[j]) ** 2 for j in range(d)) * inv2h2)
        v_out[t], k_out[t] = v, k
        M += k
        if M > 0.0:
            rs = math.sqrt(M)
            g2 = max(fn2 + 4.0 * v / rs + 4.0 * k / M, 0.0)
            gam = 1.0 / math.sqrt(g2) if g2 > 1.0 else 1.0
            coef[t] = (2.0 / rs) / scale
            scale *= gam
            fn2 = gam * gam * g2
            if scale < _RESCALE_BELOW:
                for i in range(t + 1):
                    coef[i] *= scale
                scale = 1.0
        else:
            coef[t] = 0.0
    state[0], state[1], state[2] = M, scale, fn2


def _as_points(A, name: str) -> np.ndarray:
    A = np.asarray(A, dtype=np.float64)
    if A.ndim == 1:
        A = A[:, None]
    if A.ndim != 2:
        raise ValueError(f"{name} must be 1-D (scalar outputs) or 2-D (n, d), got shape {A.shape}")
    return np.ascontiguousarray(A)


def witness_block(X, Y, t0: int, t1: int, bandwidth: float, buffers: dict, *,
                  backend: str = "auto") -> None:
    r"""Advance one OGA run from step ``t0`` to ``t1`` (0-based, exclusive), in place.

    Parameters
    ----------
    X, Y : ndarray, shape (n_max, d)
        Outputs on :math:`S` and :math:`S'`; rows ``< t1`` must be filled (C-contiguous float64).
    t0, t1 : int
        Steps to compute; earlier steps must have been computed with the same ``buffers``.
    bandwidth : float
        RBF bandwidth :math:`h`: :math:`K(x,y) = \exp(-\|x-y\|^2/(2h^2))`.
    buffers : dict
        From :func:`new_state`; ``buffers["v"][t]`` receives :math:`v_t = f_t(X_t)-f_t(Y_t)`.
    backend : {"auto", "numba", "numpy", "python"}
        ``auto``: the compiled kernel unless ``SEMI_CORE_FORCE_TWIN`` is set.
    """
    inv2h2 = 1.0 / (2.0 * float(bandwidth) ** 2)
    args = (X, Y, int(t0), int(t1), inv2h2, buffers["coef"], buffers["state"], buffers["v"],
            buffers["k"])
    if backend == "auto":
        backend = "numpy" if use_twins() else "numba"
    if backend == "numba":
        _witness_block_nb(*args)
    elif backend == "numpy":
        witness_block_twin(*args)
    elif backend == "python":
        witness_block_python(*args)
    else:
        raise ValueError(f"backend must be auto, numba, numpy or python, got {backend!r}")


def witness_values(X, Y, bandwidth: float, *, backend: str = "auto") -> tuple[np.ndarray, np.ndarray]:
    r"""Witness values :math:`v_t` and :math:`k_t=\|\Delta_t\|^2` for a whole stream.

    Parameters
    ----------
    X, Y : array_like, shape (n,) or (n, d)
        Paired outputs (any float dtype and layout; copied to C-contiguous float64).
    bandwidth : float
        RBF bandwidth, > 0.
    backend : {"auto", "numba", "numpy", "python"}

    Returns
    -------
    v, k : ndarray, shape (n,)
    """
    X, Y = _as_points(X, "X"), _as_points(Y, "Y")
    if X.shape != Y.shape:
        raise ValueError(f"X and Y must have the same shape, got {X.shape} and {Y.shape}")
    if not (np.isfinite(bandwidth) and bandwidth > 0):
        raise ValueError(f"bandwidth must be finite and > 0, got {bandwidth}")
    buf = new_state(X.shape[0], X.shape[1])
    if X.shape[0]:
        witness_block(X, Y, 0, X.shape[0], bandwidth, buf, backend=backend)
    return buf["v"], buf["k"]
