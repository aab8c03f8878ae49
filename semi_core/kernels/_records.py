"""Typed argument records shared by a compiled kernel and its NumPy twin.

A kernel with many set-up arrays takes them as one :class:`typing.NamedTuple` (Numba compiles
heterogeneous named tuples to a struct, passed by value with no copy of the arrays), so the
kernel, its twin and the caller agree on one field list instead of twenty positional slots.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = ["SemiChunkSetup"]


class SemiChunkSetup(NamedTuple):
    r"""Set-up of one SeMI chunk (:func:`semi_core.kernels.engine_kernels.semi_chunk`).

    Every array is C-contiguous (``n_t`` int64, the others float64) so that one compiled
    signature serves every call; :meth:`semi_core.game.engine.EngineParams.kernel_setup`
    builds it.

    Attributes
    ----------
    exact : bool
        Simulate every datum (True) or draw whitened batch means directly (Gaussian only).
    code, fparam, scale : int, float, float
        Standardised data family (see :mod:`semi_core.mechanisms.distributions`), its
        parameter and precomputed scale constant.
    n_t : int64 array (T,)
        Batch sizes.
    u : array (T, d)
        Whitened target offsets :math:`u_t = L_t^{-1}(z^*-\mu_t)`.
    llr_c0, llr_k : arrays (T,)
        :math:`\log LR_t = c_{0,t} + k_t(u_t^\top w_t - \|w_t\|^2/2)`.
    log_w_unif : array (T,)
        Log weights of SeMI-Unif (``-inf`` allowed).
    p_member : float
        :math:`\nu_B(1)`.
    tau_cdf : array (T,)
        CDF of :math:`\nu_\tau`.
    fo_stationary : bool
        Stationary covariance: the Final Observation uses whitened coordinates.
    fo_A, fo_C0, fo_logdet0, fo_C1, fo_m1, fo_logdet1 : arrays and float
        Non-stationary Final Observation: :math:`W=\sum_t A_t w_t`, lower Cholesky factors of
        the H0 / H1(tau) covariances of W, their log-determinants and the H1 means.
    fo_N : float
        Total number of data points :math:`N_T`.
    """

    exact: bool
    code: int
    fparam: float
    scale: float
    n_t: np.ndarray
    u: np.ndarray
    llr_c0: np.ndarray
    llr_k: np.ndarray
    log_w_unif: np.ndarray
    p_member: float
    tau_cdf: np.ndarray
    fo_stationary: bool
    fo_A: np.ndarray
    fo_C0: np.ndarray
    fo_logdet0: float
    fo_C1: np.ndarray
    fo_m1: np.ndarray
    fo_logdet1: np.ndarray
    fo_N: float
