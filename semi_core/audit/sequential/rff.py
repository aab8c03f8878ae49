r"""Random-Fourier-feature (RFF) witness: the OGA witness of Alg. 1 in :math:`O(N D)`.

The exact witness (:mod:`semi_core.kernels.witness`) touches every earlier pair at every step:
:math:`O(N^2 d)` for a run of :math:`N` pairs. With :math:`D` frequencies
:math:`w_j\sim N(0, h^{-2}I_d)` drawn before the test sees its data (Rahimi & Recht 2007), the
feature map :math:`z(x)=D^{-1/2}\,[\cos(w_j^\top x),\ \sin(w_j^\top x)]_{j\le D}\in\mathbb R^{2D}`
gives the kernel

.. math::

    K_D(x,y) = z(x)^\top z(y) = \frac1D\sum_{j=1}^D\cos\big(w_j^\top(x-y)\big),
    \qquad \mathbb E_w\,K_D(x,y) = e^{-\|x-y\|^2/(2h^2)},

positive definite with :math:`K_D(x,x)=1`, and the OGA witness lives in :math:`\mathbb R^{2D}`:
:math:`f_t` is a vector, :math:`v_t = f_t^\top(z(X_t)-z(Y_t))`, one step costs :math:`O(D)`.

**Validity.** :math:`K_D` takes values in :math:`[-1, 1]`, and Theorem 3.1 of the seed
(:math:`\mathrm{MMD}\le\sqrt2\,\mathrm{TV}`) assumes :math:`0\le K\le1`: its proof bounds
:math:`\|K(x,\cdot)-K(y,\cdot)\|^2 = 2-2K(x,y)\le 2`, which for :math:`K_D` is only
:math:`\le 4` (and :math:`\inf K_D=-1` for generic frequencies, by Kronecker's theorem). With
the threshold :math:`\tau` of Theorem 3.1 the RFF kernel itself would therefore not give a
valid test: a :math:`(0,\delta)`-DP pair :math:`P=(1-\delta)\nu+\delta\,\delta_0`,
:math:`Q=(1-\delta)\nu+\delta\,\delta_u` with :math:`K_D(0,u)\approx-1` has
:math:`\mathrm{MMD}_{K_D}\approx2\delta>\tau(0,\delta)=\sqrt2\,\delta`. For ``bound="new"`` we
use instead

.. math:: K^+_D(x,y) = \tfrac12\big(1 + K_D(x,y)\big)\in[0, 1],\qquad K^+_D(x,x) = 1,

a positive-definite kernel (a constant plus :math:`K_D/2`) that meets the theorem's assumption
exactly; its features are :math:`(1/\sqrt2,\ z(x)/\sqrt2)` and the constant cancels in
:math:`z(X_t)-z(Y_t)`, so the witness uses :math:`z/\sqrt2`. ``bound="auditorium"`` (DP-Auditorium
Thm 4.13) only needs :math:`K(x,x)\le1` and uses :math:`K_D` itself. In both cases
:math:`|f(x)|\le\|f\|\sqrt{K(x,x)}\le1`, so :math:`|v_t|\le2` as the betting range assumes,
and the test is exactly valid for any :math:`D` (the approximation of the Gaussian kernel only
affects power). The price of :math:`K^+_D`: its MMD is :math:`\mathrm{MMD}_{K_D}/\sqrt2`, about
the Gaussian kernel's :math:`/\sqrt2`, against the same :math:`\tau`.

The OGA recursion is that of the exact witness (same :math:`M_t`, :math:`\|g_t\|^2`,
:math:`\gamma_t`, rescaling), with :math:`f_t` stored unscaled as
:math:`f_t = s_t F_t` and :math:`F_{t+1} = F_t + (2/\sqrt{M_t})/s_t\,\Delta_t`,
:math:`s_{t+1} = \gamma_t s_t` (:mod:`semi_core.kernels.rff_witness`: Numba kernel + NumPy twin).
"""

from __future__ import annotations

import math

import numpy as np

from semi_core._rng import child_seed
from semi_core._validation import check_int
from semi_core.kernels.rff_witness import rff_block

__all__ = ["WITNESSES", "RFF_SEED_KEY", "check_features", "rff_frequencies", "rff_features", "rff_feature_differences",
           "new_rff_state", "rff_witness_values", "rff_kernel"]

#: Witness kinds of :func:`semi_core.audit.sequential.sequential_grid`.
WITNESSES = ("exact", "rff")
#: Spawn key (under the run's seed) of the stream that draws the RFF frequencies, apart from the
#: stream of pairs (so exact and RFF runs with one seed see the same pairs).
RFF_SEED_KEY = 0x5246
#: Largest number of frequencies (features are ``2 D`` floats per pair).
MAX_FEATURES = 1 << 16


def check_features(features) -> int:
    """``features``: an integer ``D`` in ``[1, 65536]``."""
    return check_int(features, "features", minimum=1, maximum=MAX_FEATURES)


def rff_frequencies(d: int, features: int, bandwidth: float, seed) -> np.ndarray:
    r"""``D`` frequencies :math:`w_j\sim N(0, h^{-2} I_d)`, shape ``(D, d)``, from
    :func:`semi_core._rng.child_seed` ``(seed, RFF_SEED_KEY)``."""
    features = check_features(features)
    if not (np.isfinite(bandwidth) and bandwidth > 0):
        raise ValueError(f"bandwidth must be finite and > 0, got {bandwidth}")
    rng = np.random.Generator(np.random.PCG64(child_seed(seed, RFF_SEED_KEY)))
    return rng.standard_normal((features, int(d))) / float(bandwidth)


def _scale(D: int, bound: str) -> float:
    return (1.0 / math.sqrt(2.0) if bound == "new" else 1.0) / math.sqrt(D)


def rff_features(X, W: np.ndarray, *, bound: str = "new") -> np.ndarray:
    r"""Feature rows :math:`c\,z(x)` of the points ``X`` (n, d): shape ``(n, 2D)``, with
    :math:`c = 1/\sqrt2` for ``bound="new"`` (kernel :math:`K^+_D`) and :math:`c=1` for
    ``"auditorium"`` (kernel :math:`K_D`)."""
    X = np.asarray(X, dtype=np.float64).reshape(len(X), -1)
    P = X @ W.T
    return np.concatenate([np.cos(P), np.sin(P)], axis=1) * _scale(W.shape[0], bound)


def rff_feature_differences(X, Y, W: np.ndarray, *, bound: str = "new") -> np.ndarray:
    r"""Rows :math:`\Delta_t = c\,(z(X_t) - z(Y_t))`, shape ``(n, 2D)``, with three
    trigonometric evaluations per pair and frequency instead of four: for :math:`a=w^\top x`,
    :math:`b=w^\top y`, :math:`s=(a+b)/2`, :math:`h=(a-b)/2`,

    .. math:: \cos a-\cos b = -2\sin s\,\sin h,\qquad \sin a-\sin b = 2\cos s\,\sin h.
    """
    X = np.asarray(X, dtype=np.float64).reshape(len(X), -1)
    Y = np.asarray(Y, dtype=np.float64).reshape(len(Y), -1)
    A, B = X @ W.T, Y @ W.T
    S = 0.5 * (A + B)
    H = np.sin(0.5 * (A - B))
    H *= 2.0 * _scale(W.shape[0], bound)
    out = np.empty((X.shape[0], 2 * W.shape[0]))
    np.multiply(np.sin(S), H, out=out[:, :W.shape[0]])
    np.negative(out[:, :W.shape[0]], out=out[:, :W.shape[0]])
    np.multiply(np.cos(S), H, out=out[:, W.shape[0]:])
    return out


def rff_kernel(A, B, W: np.ndarray, *, bound: str = "new") -> np.ndarray:
    r"""Gram matrix of the witness's kernel (:math:`K^+_D` or :math:`K_D`) between rows of
    ``A`` and ``B`` (tests and oracles)."""
    ZA, ZB = rff_features(A, W, bound=bound), rff_features(B, W, bound=bound)
    G = ZA @ ZB.T
    return G + 0.5 if bound == "new" else G


def new_rff_state(n_max: int, n_features: int) -> dict:
    """Buffers of one RFF OGA run: unscaled witness ``F`` (2D), ``[M, scale, ||f||^2]``, and
    the witness values ``v`` and squared norms ``k`` of every step."""
    return {"F": np.zeros(n_features), "state": np.array([0.0, 1.0, 0.0]),
            "v": np.zeros(n_max), "k": np.zeros(n_max)}


def rff_witness_values(X, Y, bandwidth: float, *, features: int = 256, seed=0,
                       bound: str = "new", backend: str = "auto"
                       ) -> tuple[np.ndarray, np.ndarray]:
    r"""RFF witness values :math:`v_t` and :math:`k_t=\|\Delta_t\|^2` of a whole stream.

    Parameters
    ----------
    X, Y : array_like, shape (n,) or (n, d)
        Paired outputs.
    bandwidth : float
        Gaussian-kernel bandwidth :math:`h > 0` (frequencies :math:`N(0, h^{-2}I)`).
    features : int
        Number of frequencies :math:`D` in ``[1, 65536]``.
    seed : int or SeedSequence
        Root of the frequency stream (``child_seed(seed, RFF_SEED_KEY)``).
    bound : {"new", "auditorium"}
        Kernel :math:`K^+_D` (Thm 3.1 needs :math:`K\ge0`) or :math:`K_D`.
    backend : {"auto", "numba", "numpy"}
        The recursion's kernel (:func:`semi_core.kernels.rff_witness.rff_block`).

    Returns
    -------
    v, k : ndarray, shape (n,)
    """
    if bound not in ("new", "auditorium"):
        raise ValueError(f"bound must be 'new' or 'auditorium', got {bound!r}")
    X = np.asarray(X, dtype=np.float64)
    Y = np.asarray(Y, dtype=np.float64)
    X = X.reshape(len(X), -1)
    Y = Y.reshape(len(Y), -1)
    if X.shape != Y.shape:
        raise ValueError(f"X and Y must have the same shape, got {X.shape} and {Y.shape}")
    W = rff_frequencies(X.shape[1], features, bandwidth, seed)
    buf = new_rff_state(X.shape[0], 2 * W.shape[0])
    if X.shape[0]:
        rff_block(rff_feature_differences(X, Y, W, bound=bound), 0, buf, backend=backend)
    return buf["v"], buf["k"]
