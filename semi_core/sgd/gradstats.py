"""Gradient statistics from reference data (seed §4.2 "Estimation with Reference Data").

The auditor estimates, at :math:`\\theta_{\\tau-1}`, the per-sample gradient mean
:math:`\\hat\\mu_g` and covariance :math:`\\hat\\Sigma_g` from ``m`` reference gradients
:math:`G\\in\\mathbb R^{m\\times d}`. The seed uses the plain sample covariance ``S`` (rank
:math:`\\le m-1`, singular whenever :math:`m \\le d`); we use the stated shrinkage towards a
scaled identity (Ledoit-Wolf-type target)

.. math::

   \\hat\\Sigma_g = (1-\\lambda)\\,S + (\\lambda + r)\\,\\nu I,\\qquad
   S = \\frac{1}{m-1}\\sum_i (g_i-\\hat\\mu_g)(g_i-\\hat\\mu_g)^\\top,\\quad
   \\nu = \\mathrm{tr}(S)/d,

(``shrinkage`` :math:`\\lambda\\in[0,1]`, relative ``ridge`` :math:`r \\ge 0`, which keeps
:math:`\\hat\\Sigma_g` positive definite at :math:`\\lambda = 0`). When ``d`` is too large for a
dense :math:`d\\times d` matrix the same matrix is kept as :class:`LowRankPlusDiagonal`
:math:`D + WW^\\top` with :math:`D = (\\lambda+r)\\nu` and
:math:`W = \\sqrt{(1-\\lambda)/(m-1)}\\,G_c^\\top`, and every solve/log-determinant goes through
the Woodbury identity and the matrix-determinant lemma (a :math:`k\\times k` Cholesky,
:math:`k \\le m`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import linalg

from semi_core._validation import check_finite_array, check_int

__all__ = ["LowRankPlusDiagonal", "GradientStatistics", "gradient_statistics",
           "DENSE_MAX_DIM"]

#: Above this many parameters ``form="auto"`` switches to the low-rank-plus-diagonal form.
DENSE_MAX_DIM = 2000


class LowRankPlusDiagonal:
    """Symmetric positive-definite :math:`A = \\mathrm{diag}(D) + W W^\\top` (never formed densely).

    .. math::

       A^{-1} = D^{-1} - D^{-1}W K^{-1} W^\\top D^{-1},\\quad K = I_k + W^\\top D^{-1} W,
       \\qquad \\log\\det A = \\textstyle\\sum_j \\log D_j + \\log\\det K.

    Parameters
    ----------
    diag : array_like, shape (d,)
        Strictly positive diagonal.
    factor : array_like, shape (d, k)
        Low-rank factor ``W``.
    """

    def __init__(self, diag, factor):
        self.diag = check_finite_array(diag, "diag", ndim=1)
        if (self.diag <= 0).any():
            raise ValueError("diag must be strictly positive (use shrinkage or ridge > 0)")
        self.factor = check_finite_array(factor, "factor", ndim=2)
        if self.factor.shape[0] != self.diag.size:
            raise ValueError(f"factor must have {self.diag.size} rows, got {self.factor.shape}")
        self.d = self.diag.size
        w_over_d = self.factor / self.diag[:, None]
        cap = np.eye(self.factor.shape[1]) + self.factor.T @ w_over_d
        self._cap_chol = linalg.cho_factor(cap, lower=True)
        self._w_over_d = w_over_d

    def affine(self, a: float, c: float) -> LowRankPlusDiagonal:
        """Return :math:`aA + cI` in the same form (``a > 0``, ``c >= 0``)."""
        if a <= 0 or c < 0:
            raise ValueError(f"need a > 0 and c >= 0, got a={a}, c={c}")
        return LowRankPlusDiagonal(a * self.diag + c, np.sqrt(a) * self.factor)

    def solve(self, x) -> np.ndarray:
        """:math:`A^{-1}x` for ``x`` of shape ``(d,)`` or ``(d, r)`` by Woodbury."""
        x = np.asarray(x, dtype=float)
        xd = x / (self.diag if x.ndim == 1 else self.diag[:, None])
        inner = linalg.cho_solve(self._cap_chol, self.factor.T @ xd)
        return xd - self._w_over_d @ inner

    def logdet(self) -> float:
        """:math:`\\log\\det A` by the matrix-determinant lemma."""
        return float(np.log(self.diag).sum() + 2 * np.log(np.diag(self._cap_chol[0])).sum())

    def dense(self) -> np.ndarray:
        """The dense matrix (for tests and small ``d`` only)."""
        return np.diag(self.diag) + self.factor @ self.factor.T


@dataclass
class GradientStatistics:
    """Reference-gradient statistics at one parameter vector.

    Attributes
    ----------
    mean : ndarray, shape (d,)
        :math:`\\hat\\mu_g`.
    cov : ndarray (d, d) or LowRankPlusDiagonal
        :math:`\\hat\\Sigma_g` with the shrinkage of the module docstring.
    m : int
        Number of reference gradients.
    shrinkage, ridge : float
        :math:`\\lambda` and the relative ridge :math:`r`.
    """

    mean: np.ndarray
    cov: np.ndarray | LowRankPlusDiagonal
    m: int
    shrinkage: float
    ridge: float

    @property
    def d(self) -> int:
        return self.mean.size

    def mahalanobis(self, g) -> float:
        """:math:`m^* = (g-\\hat\\mu_g)^\\top\\hat\\Sigma_g^{-1}(g-\\hat\\mu_g)` (no inverse)."""
        delta = np.asarray(g, dtype=float) - self.mean
        if isinstance(self.cov, LowRankPlusDiagonal):
            return float(delta @ self.cov.solve(delta))
        chol = linalg.cholesky(self.cov, lower=True)
        z = linalg.solve_triangular(chol, delta, lower=True)
        return float(z @ z)


def gradient_statistics(grads, *, shrinkage: float = 0.1, ridge: float = 1e-4,
                        form: str = "auto") -> GradientStatistics:
    """Estimate :math:`\\hat\\mu_g, \\hat\\Sigma_g` from per-sample reference gradients.

    .. math::

       \\hat\\mu_g = \\frac1m\\sum_i g_i,\\qquad
       \\hat\\Sigma_g = (1-\\lambda)S + (\\lambda + r)\\,\\frac{\\mathrm{tr}\\,S}{d}\\,I

    (seed §4.2 uses :math:`\\lambda = r = 0`, which is singular for :math:`m \\le d`).

    Parameters
    ----------
    grads : array_like, shape (m, d)
        Reference per-sample gradients (already clipped for DP-SGD), ``m >= 2``.
    shrinkage : float in [0, 1]
        Weight :math:`\\lambda` of the scaled-identity target.
    ridge : float >= 0
        Relative ridge :math:`r`.
    form : {"auto", "dense", "lowrank"}
        ``"auto"`` is dense up to :data:`DENSE_MAX_DIM` parameters, low-rank-plus-diagonal above.
    """
    g = check_finite_array(grads, "grads", ndim=2)
    m, d = g.shape
    check_int(m, "number of reference gradients m", minimum=2)
    if not (0.0 <= float(shrinkage) <= 1.0):
        raise ValueError(f"shrinkage must be in [0, 1], got {shrinkage}")
    if not (float(ridge) >= 0.0 and np.isfinite(ridge)):
        raise ValueError(f"ridge must be finite and >= 0, got {ridge}")
    if form not in ("auto", "dense", "lowrank"):
        raise ValueError(f"form must be 'auto', 'dense' or 'lowrank', got {form!r}")
    if form == "auto":
        form = "dense" if d <= DENSE_MAX_DIM else "lowrank"
    mean = g.mean(axis=0)
    gc = g - mean
    var = np.einsum("ij,ij->j", gc, gc) / (m - 1)
    nu = float(var.mean()) if var.mean() > 0 else 1.0
    lam = float(shrinkage)
    level = (lam + float(ridge)) * nu
    if level <= 0:
        raise ValueError("shrinkage + ridge must be > 0 (the sample covariance is singular)")
    if form == "dense":
        cov = (1 - lam) * (gc.T @ gc) / (m - 1)
        cov[np.diag_indices(d)] += level
    else:
        cov = LowRankPlusDiagonal(np.full(d, level), np.sqrt((1 - lam) / (m - 1)) * gc.T)
    return GradientStatistics(mean=mean, cov=cov, m=m, shrinkage=lam, ridge=float(ridge))
