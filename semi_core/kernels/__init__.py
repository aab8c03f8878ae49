"""Kernel dispatch: compiled ``semi_core_ext`` when available, else the NumPy twins.

Set ``SEMI_CORE_FORCE_TWIN=1`` to force the twins (the test suite runs in both modes).
Every compiled kernel has a twin in :mod:`semi_core.kernels._twins`, tested equal on
awkward inputs (d=1, empty, non-contiguous, float32).
"""

from __future__ import annotations

import os

import numpy as np

from . import _twins
from ._trace import note_kernel_use

__all__ = [
    "BACKEND",
    "QuadraticForm",
    "quadform_whitened",
    "quadform_cholsolve",
    "compiled_available",
]


def _load_compiled():
    if os.environ.get("SEMI_CORE_FORCE_TWIN", "").strip() not in ("", "0"):
        return None
    try:
        from semi_core_ext import _quadform
    except ImportError:
        return None
    return _quadform


_compiled = _load_compiled()
BACKEND = "cython" if _compiled is not None else "numpy"


def compiled_available() -> bool:
    """Whether the Cython extension is importable and not disabled by the environment.

    Returns
    -------
    bool
        Whether the compiled kernels are used.
    """
    return _compiled is not None


def _prep(N, M, b, mname: str):
    N = np.asarray(N, dtype=np.float64)
    if N.ndim == 1:
        N = N[:, None]
    if N.ndim != 2:
        raise ValueError(f"N must be 2-D (m, d), got shape {N.shape}")
    d = N.shape[1]
    M = np.ascontiguousarray(np.asarray(M, dtype=np.float64))
    b = np.ascontiguousarray(np.asarray(b, dtype=np.float64).reshape(-1))
    if M.shape != (d, d):
        raise ValueError(f"{mname} must have shape ({d}, {d}) to match N, got {M.shape}")
    if b.shape != (d,):
        raise ValueError(f"b must have shape ({d},), got {b.shape}")
    return N, M, b


def _dispatch(name: str, N, M, b, c0, s, num_threads) -> np.ndarray:
    """Run the compiled kernel ``name`` (or its NumPy twin when forced, missing, or empty)."""
    note_kernel_use()
    if _compiled is None or N.shape[0] == 0:
        return getattr(_twins, name)(N, M, b, float(c0), float(s))
    out = np.empty(N.shape[0], dtype=np.float64)
    getattr(_compiled, name)(np.ascontiguousarray(N), M, b, float(c0), float(s), out,
                             int(num_threads))
    return out


def quadform_whitened(N, A, b, c0: float, s: float, *, num_threads: int = 0) -> np.ndarray:
    """Evaluate ``c0 + b.(A N_i) + s |A N_i|^2`` for each row of ``N`` (A upper triangular).

    Parameters
    ----------
    N : array_like, shape (m, d)
        Rows to evaluate; any float dtype and memory layout (copied to C-contiguous float64).
    A : array_like, shape (d, d)
        Upper-triangular factor (entries below the diagonal are ignored).
    b : array_like, shape (d,)
        Linear coefficients in whitened coordinates.
    c0, s : float
        Constant and the scale of the squared norm.
    num_threads : int
        OpenMP threads for the compiled kernel (0 = runtime default).

    Returns
    -------
    ndarray, shape (m,)
    """
    N, A, b = _prep(N, A, b, "A")
    return _dispatch("quadform_whitened", N, np.ascontiguousarray(np.triu(A)), b, c0, s,
                     num_threads)


def quadform_cholsolve(N, L, b, c0: float, s: float, *, num_threads: int = 0) -> np.ndarray:
    r"""Evaluate :math:`c_0 + b^\top w_i + s\|w_i\|^2` with :math:`L w_i = N_i` for each row.

    ``L`` is the lower Cholesky factor of a covariance :math:`\Sigma = LL^\top`, so
    :math:`\|w_i\|^2 = N_i^\top\Sigma^{-1}N_i` without forming :math:`\Sigma^{-1}`
    (forward substitution per row).

    Parameters
    ----------
    N : array_like, shape (m, d)
    L : array_like, shape (d, d)
        Lower-triangular with positive diagonal (entries above the diagonal are ignored).
    b : array_like, shape (d,)
    c0, s : float
    num_threads : int
        OpenMP threads for the compiled kernel (0 = runtime default).

    Returns
    -------
    ndarray, shape (m,)
    """
    N, L, b = _prep(N, L, b, "L")
    L = np.ascontiguousarray(np.tril(L))
    if not np.all(np.diag(L) > 0):
        raise ValueError("L must have a strictly positive diagonal (a Cholesky factor)")
    return _dispatch("quadform_cholsolve", N, L, b, c0, s, num_threads)


class QuadraticForm:
    r"""A quadratic form :math:`q(N) = c_0 + c_1^\top N + N^\top C_2 N` with definite :math:`C_2`.

    Two factored representations, both evaluated by compiled kernels without inverses:

    * from coefficients (``QuadraticForm(c0, c1, C2)``): :math:`\pm C_2 = R R^\top` (Cholesky),
      :math:`A = R^\top`, :math:`q = c_0 + b^\top(AN) + s\|AN\|^2`, :math:`b = A^{-\top}c_1`;
    * from a covariance (``QuadraticForm.from_covariance``): :math:`C_2 = s\,\Sigma^{-1}`,
      :math:`\Sigma = LL^\top`, :math:`w = L^{-1}N` by forward substitution,
      :math:`q = c_0 + b^\top w + s\|w\|^2` — the form of every SeMI log-LR (seed Cor. B.3).

    Parameters
    ----------
    c0 : float
    c1 : array_like, shape (d,)
    C2 : array_like, shape (d, d)
        Symmetric and either positive or negative definite.
    """

    def __init__(self, c0: float, c1, C2):
        from scipy.linalg import solve_triangular

        C2 = np.atleast_2d(np.asarray(C2, dtype=np.float64))
        c1 = np.asarray(c1, dtype=np.float64).reshape(-1)
        if C2.shape != (c1.size, c1.size):
            raise ValueError(f"C2 must be {c1.size}x{c1.size} to match c1, got {C2.shape}")
        if not np.allclose(C2, C2.T, rtol=1e-10, atol=0):
            raise ValueError("C2 must be symmetric")
        sign = -1.0 if np.trace(C2) < 0 else 1.0
        try:
            R = np.linalg.cholesky(sign * C2)
        except np.linalg.LinAlgError:
            raise ValueError("C2 must be positive or negative definite") from None
        self._mode = "upper"
        self.factor = np.ascontiguousarray(R.T)
        self.b = solve_triangular(self.factor, c1, trans="T", lower=False)
        self.c0, self.scale = float(c0), sign
        self._c1, self._C2 = c1, C2

    @classmethod
    def from_covariance(cls, c0: float, b, L, scale: float) -> QuadraticForm:
        r"""Build :math:`q(N) = c_0 + b^\top L^{-1}N + s\|L^{-1}N\|^2` from a Cholesky factor.

        Parameters
        ----------
        c0 : float
        b : array_like, shape (d,)
            Linear coefficients in whitened coordinates.
        L : array_like, shape (d, d)
            Lower Cholesky factor of the covariance.
        scale : float
            :math:`s`; :math:`C_2 = s\,\Sigma^{-1}`.

        Returns
        -------
        QuadraticForm
            The form.
        """
        L = np.ascontiguousarray(np.tril(np.atleast_2d(np.asarray(L, dtype=np.float64))))
        b = np.asarray(b, dtype=np.float64).reshape(-1)
        if L.shape != (b.size, b.size):
            raise ValueError(f"L must be {b.size}x{b.size} to match b, got {L.shape}")
        obj = cls.__new__(cls)
        obj._mode = "lower"
        obj.factor, obj.b, obj.c0, obj.scale = L, b, float(c0), float(scale)
        obj._c1 = obj._C2 = None  # formed only on request (evaluation never needs them)
        return obj

    @property
    def c1(self) -> np.ndarray:
        """Linear coefficients :math:`c_1` in the original coordinates."""
        if self._c1 is None:
            from scipy.linalg import solve_triangular

            self._c1 = solve_triangular(self.factor, self.b, trans="T", lower=True)
        return self._c1

    @property
    def C2(self) -> np.ndarray:
        """Quadratic coefficient matrix :math:`C_2` (for inspection; evaluation never forms it)."""
        if self._C2 is None:
            from scipy.linalg import cho_solve

            self._C2 = self.scale * cho_solve((self.factor, True), np.eye(self.dim))
        return self._C2

    @property
    def dim(self) -> int:
        """Dimension d of the argument."""
        return self.b.size

    def __call__(self, N, *, num_threads: int = 0) -> np.ndarray:
        """Evaluate on the last axis of ``N`` (shape (..., d); for d = 1 also shape (...))."""
        N = np.asarray(N, dtype=np.float64)
        if self.dim == 1 and (N.ndim == 0 or N.shape[-1] != 1):
            shape, flat = N.shape, N.reshape(-1, 1)
        else:
            if N.shape[-1] != self.dim:
                raise ValueError(f"N must have last axis {self.dim}, got shape {N.shape}")
            shape, flat = N.shape[:-1], N.reshape(-1, self.dim)
        kernel = quadform_cholsolve if self._mode == "lower" else quadform_whitened
        out = kernel(flat, self.factor, self.b, self.c0, self.scale, num_threads=num_threads)
        return out.reshape(shape)
