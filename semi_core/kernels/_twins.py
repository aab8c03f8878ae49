"""NumPy twins of every compiled kernel (the reference the kernels are tested against)."""

from __future__ import annotations

import numpy as np

__all__ = ["quadform_whitened"]


def quadform_whitened(N: np.ndarray, A: np.ndarray, b: np.ndarray, c0: float, s: float,
                      out: np.ndarray | None = None) -> np.ndarray:
    """``c0 + b.(A N_i) + s |A N_i|^2`` for every row ``N_i`` (A upper triangular)."""
    W = N @ np.triu(A).T
    res = c0 + W @ b + s * np.einsum("ij,ij->i", W, W)
    if out is not None:
        out[...] = res
        return out
    return res
