r"""The compiled half of :mod:`semi_core.kernels.witness`: the Numba OGA witness kernel and the
branch-free ``exp(-x)`` it (and the SeMI engine's kernels) vectorise.

Kept apart so that importing :mod:`semi_core.kernels.witness` (its NumPy twin, buffers and
dispatcher) does not import Numba: the dispatcher imports this module the first time the
compiled kernel runs (a small sequential audit runs on the twin, see
:func:`semi_core.kernels.witness.choose_witness_backend`).
"""

from __future__ import annotations

import math

import numpy as np

from ._jit import jit
from ._witness_const import _RESCALE_BELOW, _XCUT, oga_step

__all__: list[str] = []


@jit(inline="always")
def _kexp(x):  # pragma: no cover - compiled
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


#: The scalar OGA step, compiled into each kernel that calls it.
_oga_step_nb = jit(oga_step, inline="always")


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
            step, gam, fn2 = _oga_step_nb(M, v, k, fn2)
            coef[t] = step / scale
            scale *= gam
            if scale < _RESCALE_BELOW:
                for i in range(t + 1):
                    coef[i] *= scale
                scale = 1.0
        else:
            coef[t] = 0.0
    state[0] = M
    state[1] = scale
    state[2] = fn2
