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

from ._jit import use_twins
from ._witness_const import _RESCALE_BELOW, _XCUT, oga_step

__all__ = ["witness_block", "witness_block_twin", "witness_block_python", "new_state",
           "witness_values", "choose_witness_backend", "TWIN_EXCESS_LIMIT_S"]

#: The compiled names, defined in :mod:`._witness_nb` (imported on first use: importing this
#: module does not import Numba).
_COMPILED = ("_kexp", "_exp_neg", "_vexp_neg", "_witness_block_nb", "_as_float64", "_fma")


def __getattr__(name: str):
    if name in _COMPILED:
        from . import _witness_nb

        return getattr(_witness_nb, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


#: Largest estimated CPU the NumPy twin may cost over the compiled kernel, in seconds, for
#: ``backend="auto"`` to choose the twin (:func:`choose_witness_backend`).
TWIN_EXCESS_LIMIT_S = 0.4

# The twin's excess over the compiled kernel per run of N steps, d coordinates (measured,
# one core, N in {100, 300, 1000, 3000}, d in {1, 10}): about 60-320 us per step (NumPy calls)
# plus 0.02-0.14 us per (past pair, coordinate), the larger values at the smaller sizes.
_TWIN_US_PER_STEP = 100.0
_TWIN_US_PER_PAIR_COORD = 0.14


def choose_witness_backend(max_obs: int, d: int, *, runs: int = 1,
                           backend: str = "auto") -> str:
    r"""The witness kernel a sequential audit of ``runs`` runs of ``max_obs`` steps uses.

    A process that runs the compiled kernel first imports Numba and loads the cached kernel:
    :math:`L \approx 0.5` to :math:`0.8` s of CPU (``semi-core seq-audit --max-obs 100``: 8 ms
    of witness work behind it). The NumPy twin costs more per step; its excess over the
    compiled kernel was measured (``witness_values``, one core; N = 100 to 3,000, d = 1 and 10)
    at :math:`a \le 100` us per step plus :math:`b \le 0.14` us per past pair and coordinate,
    so a run of :math:`N` steps costs the twin at most
    :math:`E = a N + b\,d\,N^2/2` more (an upper bound at every measured size, e.g. 0.17 s
    modelled, 0.07 s measured at N = 1,000, d = 1). ``auto`` runs the twin while the whole job's
    :math:`R\,E` stays below :data:`TWIN_EXCESS_LIMIT_S` = 0.4 s (under :math:`L`), e.g. one
    run of up to about 1,750 steps at d = 1, or 20 runs of 175; above, the compiled kernel.

    The choice depends on the arguments alone (not on what the process has run before), so a
    seed gives one result. The twin and the kernel agree to a few ulp, not bit for bit
    (the twin uses NumPy's ``exp``, the kernel its polynomial, error <= 2 ulp): a result
    records which ran.

    Parameters
    ----------
    max_obs : int
        Steps per run, :math:`N \ge 1`.
    d : int
        Coordinates per output, :math:`\ge 1`.
    runs : int
        Runs the process plays with this configuration (each pays the twin's excess; Numba's
        start-up is paid once).
    backend : {"auto", "numba", "numpy", "python"}
        ``auto``: the rule above; anything else is returned as given (validated).
        ``SEMI_CORE_FORCE_TWIN=1`` (or a missing Numba) gives ``numpy`` for ``auto`` and
        ``numba``.

    Returns
    -------
    str
        ``"numba"``, ``"numpy"`` or ``"python"``.
    """
    if backend not in ("auto", "numba", "numpy", "python"):
        raise ValueError(f"backend must be auto, numba, numpy or python, got {backend!r}")
    if backend == "python":
        return backend
    if use_twins():
        return "numpy"
    if backend != "auto":
        return backend
    n, d, r = float(max_obs), float(d), float(runs)
    excess = r * (_TWIN_US_PER_STEP * n + _TWIN_US_PER_PAIR_COORD * d * n * n / 2.0) * 1e-6
    return "numpy" if excess < TWIN_EXCESS_LIMIT_S else "numba"



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




def _kexp_np(x):
    return np.where(x < _XCUT, np.exp(-np.minimum(x, _XCUT)), 0.0)


def _kexp_py(x):
    return math.exp(-x) if x < _XCUT else 0.0


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
            step, gam, fn2 = oga_step(M, v, k, fn2)
            coef[t] = step / scale
            scale *= gam
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
            step, gam, fn2 = oga_step(M, v, k, fn2)
            coef[t] = step / scale
            scale *= gam
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
        from ._witness_nb import _witness_block_nb

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
