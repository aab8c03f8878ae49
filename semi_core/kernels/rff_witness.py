r"""The OGA recursion of the random-Fourier-feature witness (Numba kernel + NumPy twin).

The witness :math:`f_t\in\mathbb R^{2D}` of :mod:`semi_core.audit.sequential.rff` is stored
unscaled, :math:`f_t = s_t F_t`. Given the feature differences
:math:`\Delta_t = c\,(z(X_t) - z(Y_t))` and :math:`k_t=\|\Delta_t\|^2`, step :math:`t` is the
exact witness's (:mod:`semi_core.kernels.witness`) in feature space:

.. math::

    v_t &= s_t F_t^\top\Delta_t,\qquad M_t = M_{t-1}+k_t,\qquad
    \|g_t\|^2 = \|f_t\|^2 + 4v_t/\sqrt{M_t} + 4k_t/M_t,\\
    \gamma_t &= \min\{1, 1/\|g_t\|\},\quad F_{t+1} = F_t + \frac{2/\sqrt{M_t}}{s_t}\Delta_t,
    \quad s_{t+1}=\gamma_t s_t,\quad \|f_{t+1}\|^2=\gamma_t^2\|g_t\|^2,

skipped while :math:`M_t = 0`; :math:`F` is renormalised before :math:`s` underflows. One step
is :math:`O(D)`. ``SEMI_CORE_FORCE_TWIN=1`` (or a missing Numba) dispatches to
:func:`rff_block_twin` (the same operations with NumPy vector calls).
"""

from __future__ import annotations

import math

import numpy as np

from ._jit import jit, use_twins

__all__ = ["rff_block", "rff_block_twin"]

#: Renormalise the unscaled witness when the running scale falls below this.
_RESCALE_BELOW = 1e-150


@jit
def _rff_block_nb(Dl, kk, t0, F, state, v_out, k_out):  # pragma: no cover - compiled
    M, scale, fn2 = state[0], state[1], state[2]
    m = Dl.shape[1]
    for j in range(Dl.shape[0]):
        t = t0 + j
        acc = 0.0
        for i in range(m):
            acc += F[i] * Dl[j, i]
        v = scale * acc
        k = kk[j]
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
            c = (2.0 / rs) / scale
            for i in range(m):
                F[i] += c * Dl[j, i]
            scale *= gam
            fn2 = gam * gam * g2
            if scale < _RESCALE_BELOW:
                for i in range(m):
                    F[i] *= scale
                scale = 1.0
    state[0] = M
    state[1] = scale
    state[2] = fn2


def rff_block_twin(Dl, kk, t0, F, state, v_out, k_out) -> None:
    """NumPy twin of the compiled kernel (same recursion; the dot product is NumPy's)."""
    M, scale, fn2 = float(state[0]), float(state[1]), float(state[2])
    for j in range(Dl.shape[0]):
        t = t0 + j
        dj = Dl[j]
        v = scale * float(F @ dj)
        k = float(kk[j])
        v_out[t], k_out[t] = v, k
        M += k
        if M > 0.0:
            rs = math.sqrt(M)
            g2 = max(fn2 + 4.0 * v / rs + 4.0 * k / M, 0.0)
            gam = 1.0 / math.sqrt(g2) if g2 > 1.0 else 1.0
            F += ((2.0 / rs) / scale) * dj
            scale *= gam
            fn2 = gam * gam * g2
            if scale < _RESCALE_BELOW:
                F *= scale
                scale = 1.0
    state[0], state[1], state[2] = M, scale, fn2


def rff_block(Dl: np.ndarray, t0: int, buffers: dict, *, backend: str = "auto") -> None:
    r"""Advance one RFF OGA run over the feature differences ``Dl`` (rows: steps ``t0 ..
    t0 + len(Dl) - 1``), in place.

    Parameters
    ----------
    Dl : ndarray, shape (b, 2D)
        :math:`\Delta_t` of the steps, C-contiguous float64.
    t0 : int
        Step of the first row; earlier steps must have been computed with the same buffers.
    buffers : dict
        ``F`` (2D,), ``state`` ``[M, scale, ||f||^2]``, ``v`` and ``k`` (n_max,).
    backend : {"auto", "numba", "numpy"}
        ``auto``: the compiled kernel unless ``SEMI_CORE_FORCE_TWIN`` is set.
    """
    Dl = np.ascontiguousarray(Dl, dtype=np.float64)
    kk = np.einsum("ij,ij->i", Dl, Dl)
    args = (Dl, kk, int(t0), buffers["F"], buffers["state"], buffers["v"], buffers["k"])
    if backend == "auto":
        backend = "numpy" if use_twins() else "numba"
    if backend == "numba":
        _rff_block_nb(*args)
    elif backend == "numpy":
        rff_block_twin(*args)
    else:
        raise ValueError(f"backend must be auto, numba or numpy, got {backend!r}")
