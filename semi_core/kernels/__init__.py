"""Kernel dispatch: compiled ``semi_core_ext`` when available, else the NumPy twins.

Set ``SEMI_CORE_FORCE_TWIN=1`` to force the twins (the test suite runs in both modes).
Every compiled kernel has a twin in :mod:`semi_core.kernels._twins`, tested equal on
awkward inputs (d=1, empty, non-contiguous, float32).
"""

from __future__ import annotations

import os

import numpy as np

from . import _twins

__all__ = ["BACKEND", "QuadraticForm", "quadform_whitened", "compiled_available"]


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
    """Whether the Cython extension is importable and not disabled by the environment."""
    return _compiled is not None


def quadform_whitened(N, A, b, c0: float, s: float, *, num_threads: int = 0) -> np.ndarray:
    """Evaluate ``c0 + b.(A N_i) + s |A N_i|^2`` for each row of ``N``.

    Parameters
    ----------
    N : array_like, shape (m, d)
        Rows to evaluate; any float dtype and memory layout (copied to C-contiguous float64).
    A : array_like, shape (d, d)
        Upper-triangular whitening factor (entries below the diagonal are ignored).
    b : array_like, shape (d,)
        Linear coefficients in whitened coordinates.
    c0, s : float
        Constant and the sign/scale of the squared norm.
    num_threads : int
        OpenMP threads for the compiled kernel (0 = runtime default).

    Returns
    -------
    ndarray, shape (m,)
    """
    N = np.asarray(N, dtype=np.float64)
    if N.ndim == 1:
        N = N[:, None]
    if N.ndim != 2:
        raise ValueError(f"N must be 2-D (m, d), got shape {N.shape}")
    d = N.shape[1]
    A = np.ascontiguousarray(np.triu(np.asarray(A, dtype=np.float64)))
    b = np.ascontiguousarray(np.asarray(b, dtype=np.float64).reshape(-1))
    if A.shape != (d, d):
        raise ValueError(f"A must have shape ({d}, {d}) to match N, got {A.shape}")
    if b.shape != (d,):
        raise ValueError(f"b must have shape ({d},), got {b.shape}")
    if _compiled is None or N.shape[0] == 0:
        return _twins.quadform_whitened(N, A, b, float(c0), float(s))
    N = np.ascontiguousarray(N)
    out = np.empty(N.shape[0], dtype=np.float64)
    _compiled.quadform_whitened(N, A, b, float(c0), float(s), out, int(num_threads))
    return out


class QuadraticForm:
    r"""A quadratic form :math:`q(N) = c_0 + c_1^\top N + N^\top C_2 N` with definite ``C2``.

    ``C2`` is factored once by Cholesky, :math:`C_2 = s\,A^\top A` with :math:`s=\pm1` and
    ``A`` upper triangular, so evaluation never forms an inverse:
    :math:`q = c_0 + b^\top (A N) + s\|A N\|^2` with :math:`b = A^{-\top} c_1`.

    Parameters
    ----------
    c0 : float
    c1 : array_like, shape (d,)
    C2 : array_like, shape (d, d)
        Symmetric and either positive or negative definite.
    """

    def __init__(self, c0: float, c1, C2):
        C2 = np.atleast_2d(np.asarray(C2, dtype=np.float64))
        c1 = np.asarray(c1, dtype=np.float64).reshape(-1)
        if C2.shape != (c1.size, c1.size):
            raise ValueError(f"C2 must be {c1.size}x{c1.size} to match c1, got {C2.shape}")
        if not np.allclose(C2, C2.T, rtol=1e-10, atol=0):
            raise ValueError("C2 must be symmetric")
        self.sign = -1.0 if np.trace(C2) < 0 else 1.0
        try:
            L = np.linalg.cholesky(self.sign * C2)
        except np.linalg.LinAlgError:
            raise ValueError("C2 must be positive or negative definite") from None
        self.A = np.ascontiguousarray(L.T)
        from scipy.linalg import solve_triangular

        self.b = solve_triangular(self.A, c1, trans="T", lower=False)
        self.c0 = float(c0)
        self.c1 = c1
        self.C2 = C2

    @classmethod
    def from_whitened(cls, c0: float, b, A, sign: float) -> QuadraticForm:
        """Build directly from the whitened parts (A upper triangular)."""
        A = np.ascontiguousarray(np.triu(np.asarray(A, dtype=np.float64)))
        b = np.asarray(b, dtype=np.float64).reshape(-1)
        obj = cls.__new__(cls)
        obj.A, obj.b, obj.c0, obj.sign = A, b, float(c0), float(sign)
        obj.c1 = A.T @ b
        obj.C2 = sign * (A.T @ A)
        return obj

    @property
    def dim(self) -> int:
        """Dimension d of the argument."""
        return self.b.size

    def __call__(self, N, *, num_threads: int = 0) -> np.ndarray:
        """Evaluate on rows of ``N`` (shape (m, d), or (m,) when d = 1)."""
        N = np.asarray(N, dtype=np.float64)
        shape = N.shape[:-1] if (N.ndim >= 2 and N.shape[-1] == self.dim) else N.shape
        if self.dim == 1 and (N.ndim == 0 or N.shape[-1] != 1):
            flat = N.reshape(-1, 1)
            shape = N.shape
        else:
            flat = N.reshape(-1, self.dim)
        out = quadform_whitened(flat, self.A, self.b, self.c0, self.sign, num_threads=num_threads)
        return out.reshape(shape)
