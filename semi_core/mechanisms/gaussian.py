r"""The one two-covariance Gaussian log-likelihood ratio of the toolkit.

.. math::

    \log\mathrm{LR}(x)=\log\mathcal N(x;m_1,V_1)-\log\mathcal N(x;m_0,V_0)
    =\tfrac12\log\frac{\det V_0}{\det V_1}-\tfrac12(x-m_1)^\top V_1^{-1}(x-m_1)
     +\tfrac12(x-m_0)^\top V_0^{-1}(x-m_0).

Every Gaussian LR between laws with non-proportional covariances uses it: Final Observation
with varying :math:`\Sigma_t` (:class:`~semi_core.mechanisms.empirical_mean.EmpiricalMean`), the
noisy mean's full-sequence and Final Observation statistics
(:class:`~semi_core.mechanisms.noisy_mean.NoisyMean`) and the DP-SGD SeMI log-LR
(:func:`semi_core.sgd.lr.dpsgd_log_lr`). Dense covariances are Cholesky-whitened and evaluated by
the compiled kernel :func:`~semi_core.kernels.quadform_cholsolve` (no inverse is formed);
structured covariances (any object with ``solve(x)``, ``logdet()`` and ``d``, e.g.
:class:`~semi_core.sgd.gradstats.LowRankPlusDiagonal`) use their own solves. The torch twin for
batches of games is :func:`semi_core.sgd.batched.batched_dpsgd_log_lr` (tested equal).
Derivation: :func:`semi_core.symbolic.gaussian.gaussian_log_lr`.
"""

from __future__ import annotations

import numpy as np

from semi_core._validation import check_covariance, check_finite_array
from semi_core.kernels import quadform_cholsolve

__all__ = ["GaussianPairLogLR", "factor_covariance"]


class _Dense:
    def __init__(self, V, name: str, d: int | None):
        _, self.L = check_covariance(V, name, d=d)
        self.d = self.L.shape[0]
        self.half_logdet = float(np.log(np.diag(self.L)).sum())


class _Structured:
    def __init__(self, V):
        self.V = V
        self.d = int(V.d)
        self.half_logdet = 0.5 * float(V.logdet())

    def quad(self, flat: np.ndarray) -> np.ndarray:
        return np.einsum("ij,ji->i", flat, self.V.solve(flat.T))


def factor_covariance(V, name: str = "V", d: int | None = None) -> _Dense:
    r"""Validate and Cholesky-factor a dense covariance once, for several log-LRs.

    A family of tests :math:`H_1^\tau` vs one :math:`H_0` shares :math:`V_0`; passing this
    factor as ``V0`` of every :class:`GaussianPairLogLR` validates and factors it once
    (:math:`V_0 = LL^\top`, :math:`\tfrac12\log\det V_0=\sum_i\log L_{ii}`).

    Parameters
    ----------
    V : array_like, shape (d, d)
        Symmetric positive-definite covariance.
    name : str
        Argument name used in error messages.
    d : int, optional
        Required dimension.

    Returns
    -------
    object
        The factor (``L``, ``d``, ``half_logdet``), accepted as ``V0`` or ``V1``.
    """
    return _Dense(V, name, d)


def _factor(V, name: str, d: int | None):
    if isinstance(V, _Dense):
        if d is not None and V.d != d:
            raise ValueError(f"{name} must be {d}x{d}, got a factor of dimension {V.d}")
        return V
    return _Structured(V) if hasattr(V, "solve") and hasattr(V, "logdet") else _Dense(V, name, d)


class GaussianPairLogLR:
    r"""Callable :math:`x\mapsto\log\mathcal N(x;m_1,V_1)-\log\mathcal N(x;m_0,V_0)` (last axis).

    Parameters
    ----------
    m0, m1 : array_like, shape (d,)
        Means under :math:`H_0` and :math:`H_1`.
    V0, V1 : array_like (d, d), structured covariance, or :func:`factor_covariance`
        Positive-definite covariances (dense: validated and Cholesky-factored once; a
        :func:`factor_covariance` result is used as is).
    """

    def __init__(self, m0, V0, m1, V1):
        self.f0 = _factor(V0, "V0", None)
        self.f1 = _factor(V1, "V1", self.f0.d)
        if self.f1.d != self.f0.d:
            raise ValueError(f"V1 must be {self.f0.d}x{self.f0.d} to match V0")
        d = self.f0.d
        self.m0 = check_finite_array(np.broadcast_to(np.asarray(m0, float), (d,)), "m0")
        self.m1 = check_finite_array(np.broadcast_to(np.asarray(m1, float), (d,)), "m1")
        self.const = self.f0.half_logdet - self.f1.half_logdet

    @property
    def d(self) -> int:
        """Dimension."""
        return self.f0.d

    def _quad(self, f, flat):
        if isinstance(f, _Structured):
            return f.quad(flat)

        return quadform_cholsolve(flat, f.L, np.zeros(self.d), 0.0, 1.0)

    def __call__(self, x) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        if x.shape[-1:] != (self.d,):
            raise ValueError(f"x must have last dimension d={self.d}, got shape {x.shape}")
        flat = x.reshape(-1, self.d)
        out = self.const - 0.5 * self._quad(self.f1, flat - self.m1) \
            + 0.5 * self._quad(self.f0, flat - self.m0)
        return out.reshape(x.shape[:-1])
