r"""The OGA recursion of the random-Fourier-feature witness (Numba kernel + NumPy twin).

The witness of :mod:`semi_core.audit.sequential.rff` lives in the feature space of the squared
RFF kernel :math:`K_D(x,y)^2 = (z(x)^\top z(y))^2 = \langle z(x)z(x)^\top, z(y)z(y)^\top
\rangle_F`, so it is an :math:`m\times m` symmetric matrix (:math:`m = 2D`), stored unscaled:
:math:`f_t = s_t F_t`. With :math:`x = z(X_t)`, :math:`y = z(Y_t)` and
:math:`\Delta_t = xx^\top - yy^\top`, step :math:`t` is the exact witness's
(:mod:`semi_core.kernels.witness`) in this space:

.. math::

    v_t &= s_t\,(x^\top F_t x - y^\top F_t y),\qquad
    k_t = \|\Delta_t\|_F^2 = \|x\|^4 + \|y\|^4 - 2(x^\top y)^2,\qquad M_t = M_{t-1}+k_t,\\
    \|g_t\|^2 &= \|f_t\|^2 + 4v_t/\sqrt{M_t} + 4k_t/M_t,\qquad
    \gamma_t = \min\{1, 1/\|g_t\|\},\\
    F_{t+1} &= F_t + \frac{2/\sqrt{M_t}}{s_t}\,\Delta_t,\qquad s_{t+1}=\gamma_t s_t,\qquad
    \|f_{t+1}\|^2=\gamma_t^2\|g_t\|^2,

skipped while :math:`M_t = 0`; :math:`F` is renormalised before :math:`s` underflows. One step
is :math:`O(m^2)` and reads only :math:`F` and the two feature rows (no :math:`m^2` feature
vector per pair is ever formed). ``SEMI_CORE_FORCE_TWIN=1`` (or a missing Numba) dispatches to
:func:`rff_block_twin` (the same recursion with NumPy matrix-vector products).
"""

from __future__ import annotations

import numpy as np

from ._jit import jit, use_twins
from ._witness_const import _RESCALE_BELOW, oga_step

__all__ = ["rff_block", "rff_block_twin"]

#: The scalar OGA step, compiled into the kernel.
_oga_step_nb = jit(oga_step, inline="always")


@jit
def _rff_block_nb(ZX, ZY, t0, F, state, v_out, k_out):  # pragma: no cover - compiled
    M, scale, fn2 = state[0], state[1], state[2]
    m = ZX.shape[1]
    fx = np.empty(m)
    fy = np.empty(m)
    for j in range(ZX.shape[0]):
        t = t0 + j
        x = ZX[j]
        y = ZY[j]
        for a in range(m):
            sx = 0.0
            sy = 0.0
            for b in range(m):
                sx += F[a, b] * x[b]
                sy += F[a, b] * y[b]
            fx[a] = sx
            fy[a] = sy
        qx = 0.0
        qy = 0.0
        nx = 0.0
        ny = 0.0
        xy = 0.0
        for a in range(m):
            qx += x[a] * fx[a]
            qy += y[a] * fy[a]
            nx += x[a] * x[a]
            ny += y[a] * y[a]
            xy += x[a] * y[a]
        v = scale * (qx - qy)
        k = nx * nx + ny * ny - 2.0 * xy * xy
        if k < 0.0:  # rounding only: ||Delta||^2 >= 0 exactly
            k = 0.0
        v_out[t] = v
        k_out[t] = k
        M += k
        if M > 0.0:
            step, gam, fn2 = _oga_step_nb(M, v, k, fn2)
            c = step / scale
            for a in range(m):
                cx = c * x[a]
                cy = c * y[a]
                for b in range(m):
                    F[a, b] += cx * x[b] - cy * y[b]
            scale *= gam
            if scale < _RESCALE_BELOW:
                for a in range(m):
                    for b in range(m):
                        F[a, b] *= scale
                scale = 1.0
    state[0] = M
    state[1] = scale
    state[2] = fn2


def rff_block_twin(ZX, ZY, t0, F, state, v_out, k_out) -> None:
    """NumPy twin of the compiled kernel (same recursion with NumPy products).

    Parameters
    ----------
    ZX, ZY : ndarray, shape (k, 2D)
        Base features of the block's pairs.
    t0 : int
        Step of the first pair.
    F : ndarray, shape (2D, 2D)
        Unscaled witness, updated in place.
    state : ndarray, shape (3,)
        ``[M, scale, ||f||^2]``, updated in place.
    v_out : ndarray
        Receives the witness values.
    k_out : ndarray
        Receives the squared norms.
    """
    M, scale, fn2 = float(state[0]), float(state[1]), float(state[2])
    for j in range(ZX.shape[0]):
        t = t0 + j
        x, y = ZX[j], ZY[j]
        v = scale * (float(x @ (F @ x)) - float(y @ (F @ y)))
        nx, ny, xy = float(x @ x), float(y @ y), float(x @ y)
        k = max(nx * nx + ny * ny - 2.0 * xy * xy, 0.0)
        v_out[t], k_out[t] = v, k
        M += k
        if M > 0.0:
            step, gam, fn2 = oga_step(M, v, k, fn2)
            c = step / scale
            F += np.outer(c * x, x) - np.outer(c * y, y)
            scale *= gam
            if scale < _RESCALE_BELOW:
                F *= scale
                scale = 1.0
    state[0], state[1], state[2] = M, scale, fn2


def rff_block(ZX: np.ndarray, ZY: np.ndarray, t0: int, buffers: dict, *,
              backend: str = "auto") -> None:
    r"""Advance one RFF OGA run over the feature rows ``ZX``, ``ZY`` (:math:`z(X_t)`,
    :math:`z(Y_t)` of steps ``t0 .. t0 + len(ZX) - 1``), in place.

    Parameters
    ----------
    ZX, ZY : ndarray, shape (b, m)
        Base features of the pairs.
    t0 : int
        Step of the first row; earlier steps must have been computed with the same buffers.
    buffers : dict
        ``F`` (m, m), ``state`` ``[M, scale, ||f||^2]``, ``v`` and ``k`` (n_max,).
    backend : {"auto", "numba", "numpy"}
        ``auto``: the compiled kernel unless ``SEMI_CORE_FORCE_TWIN`` is set.
    """
    ZX = np.ascontiguousarray(ZX, dtype=np.float64)
    ZY = np.ascontiguousarray(ZY, dtype=np.float64)
    args = (ZX, ZY, int(t0), buffers["F"], buffers["state"], buffers["v"], buffers["k"])
    if backend == "auto":
        backend = "numpy" if use_twins() else "numba"
    if backend == "numba":
        _rff_block_nb(*args)
    elif backend == "numpy":
        rff_block_twin(*args)
    else:
        raise ValueError(f"backend must be auto, numba or numpy, got {backend!r}")
