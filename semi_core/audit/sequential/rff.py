r"""Random-Fourier-feature (RFF) witness: the OGA witness of Alg. 1 in :math:`O(N D^2)`.

The exact witness (:mod:`semi_core.kernels.witness`) touches every earlier pair at every step:
:math:`O(N^2 d)` for a run of :math:`N` pairs. With :math:`D` frequencies
:math:`w_j\sim N(0, h^{-2}I_d)` drawn before the test sees its data (Rahimi & Recht 2007), the
map :math:`z(x)=D^{-1/2}\,[\cos(w_j^\top x),\ \sin(w_j^\top x)]_{j\le D}\in\mathbb R^{2D}` gives

.. math::

    K_D(x,y) = z(x)^\top z(y) = \frac1D\sum_{j=1}^D\cos\big(w_j^\top(x-y)\big),
    \qquad \mathbb E_w\,K_D(x,y) = e^{-\|x-y\|^2/(2h^2)},

positive definite with :math:`\|z(x)\|=1`. The witness is learned in a finite-dimensional
feature space, so :math:`f_t` is a vector and one OGA step costs the feature dimension.

**Which kernel.** Theorem 3.1 of the seed (:math:`\mathrm{MMD}\le\sqrt2\,\mathrm{TV}`) assumes
:math:`0\le K\le1`: its proof bounds :math:`\|K(x,\cdot)-K(y,\cdot)\|^2=2-2K(x,y)\le2`. The
RFF kernel :math:`K_D` takes values in :math:`[-1,1]` (and :math:`\inf K_D=-1` for generic
frequencies, by Kronecker's theorem), so with the threshold :math:`\tau` of Theorem 3.1 it does
*not* give a valid test: the :math:`(0,\delta)`-DP pair :math:`P=(1-\delta)\nu+\delta\,
\mathbb 1_0`, :math:`Q=(1-\delta)\nu+\delta\,\mathbb 1_u` with :math:`K_D(0,u)\approx-1` has
:math:`\mathrm{MMD}_{K_D}\approx2\delta>\tau(0,\delta)=\sqrt2\,\delta`. The shifted kernel
:math:`(1+K_D)/2\in[0,1]` is valid but its MMD is :math:`\mathrm{MMD}_{K_D}/\sqrt2`: against
the same :math:`\tau` it needs 1.3-1.7x the pairs of the exact witness on Tables 1-2. We use

.. math::

    K^{(2)}_D(x,y) = K_D(x,y)^2 = \phi(x)^\top\phi(y)\in[0,1],\qquad K^{(2)}_D(x,x)=1,

positive definite (Schur product), with the features
:math:`\phi(x)=(z_i(x)^2,\ \sqrt2\,z_i(x)z_j(x))_{i<j}` of dimension :math:`m(m+1)/2`,
:math:`m=2D`. It meets the theorem's assumption exactly (and DP-Auditorium's
:math:`K(x,x)\le1`), so the test is exactly valid for any :math:`D`; :math:`|f(x)|\le
\|f\|\,\|\phi(x)\|\le1` gives :math:`|v_t|\le2` as the betting range assumes. Its mean,
:math:`e^{-\|x-y\|^2/h^2}` plus a positive-definite :math:`O(1/D)` term, is the Gaussian kernel
at bandwidth :math:`h/\sqrt2`: on Tables 1-2 its witness drifts as fast as the exact witness's
(``benchmarks/bench_witness.py`` measures the rejection rates and stopping times), already at
:math:`D = 16`.

The OGA recursion is that of the exact witness (same :math:`M_t`, :math:`\|g_t\|^2`,
:math:`\gamma_t`, rescaling) in feature space, where :math:`\phi(x)` is the symmetric matrix
:math:`z(x)z(x)^\top` (Frobenius inner product: the same geometry as the vector :math:`\phi`),
so a step costs :math:`O(D^2)` from the two rows :math:`z(X_t), z(Y_t)`
(:mod:`semi_core.kernels.rff_witness`: Numba kernel + NumPy twin).
"""

from __future__ import annotations

import math

import numpy as np

from semi_core._rng import child_seed
from semi_core._validation import check_int

__all__ = ["WITNESSES", "RFF_SEED_KEY", "MAX_FEATURES", "DEFAULT_FEATURES", "check_features",
           "rff_frequencies", "rff_base_features", "rff_features", "rff_feature_differences",
           "rff_feature_dim", "new_rff_state", "rff_witness_values", "rff_kernel"]

#: Witness kinds of :func:`semi_core.audit.sequential.sequential_grid`.
WITNESSES = ("exact", "rff")
#: Spawn key (under the run's seed) of the stream that draws the RFF frequencies, apart from the
#: stream of pairs (so exact and RFF runs with one seed see the same pairs).
RFF_SEED_KEY = 0x5246
#: Largest number of frequencies D (the feature dimension is D (2D + 1)).
MAX_FEATURES = 128
#: Default number of frequencies.
DEFAULT_FEATURES = 16


def check_features(features) -> int:
    """``features``: an integer number of frequencies ``D`` in ``[1, MAX_FEATURES]``.

    Parameters
    ----------
    features : int
        Number of frequencies.

    Returns
    -------
    int
        The validated number.
    """
    return check_int(features, "features", minimum=1, maximum=MAX_FEATURES)


def rff_feature_dim(features: int) -> int:
    """Dimension :math:`m(m+1)/2` of :math:`\\phi` for :math:`D` frequencies (:math:`m=2D`).

    Parameters
    ----------
    features : int
        Number of frequencies D.

    Returns
    -------
    int
        :math:`D(2D+1)`.
    """
    m = 2 * int(features)
    return m * (m + 1) // 2


def rff_frequencies(d: int, features: int, bandwidth: float, seed) -> np.ndarray:
    r"""``D`` frequencies :math:`w_j\sim N(0, h^{-2} I_d)`, shape ``(D, d)``, from
    :func:`semi_core._rng.child_seed` ``(seed, RFF_SEED_KEY)``.

    Parameters
    ----------
    d : int
        Output dimension.
    features : int
        Number of frequencies D.
    bandwidth : float
        RBF bandwidth h, > 0.
    seed : int or numpy.random.SeedSequence
        Root seed.

    Returns
    -------
    ndarray, shape (D, d)
        The frequencies.
    """
    features = check_features(features)
    if not (np.isfinite(bandwidth) and bandwidth > 0):
        raise ValueError(f"bandwidth must be finite and > 0, got {bandwidth}")
    rng = np.random.Generator(np.random.PCG64(child_seed(seed, RFF_SEED_KEY)))
    return rng.standard_normal((features, int(d))) / float(bandwidth)


def rff_base_features(X, W: np.ndarray) -> np.ndarray:
    r"""Rows :math:`z(x)` of the points ``X`` (n, d): shape ``(n, 2D)``, unit norm.

    Parameters
    ----------
    X : array_like, shape (n, d)
        Points.
    W : ndarray, shape (D, d)
        Frequencies.

    Returns
    -------
    ndarray, shape (n, 2D)
        The features.
    """
    X = np.asarray(X, dtype=np.float64).reshape(len(X), -1)
    P = X @ W.T
    return np.concatenate([np.cos(P), np.sin(P)], axis=1) / math.sqrt(W.shape[0])


def _pairs(m: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    iu, ju = np.triu_indices(m)
    return iu, ju, np.where(iu == ju, 1.0, math.sqrt(2.0))


def rff_features(X, W: np.ndarray) -> np.ndarray:
    r"""Rows :math:`\phi(x)` (the features of :math:`K_D^2`), shape ``(n, D(2D+1))``.

    Parameters
    ----------
    X : array_like, shape (n, d)
        Points.
    W : ndarray, shape (D, d)
        Frequencies.

    Returns
    -------
    ndarray, shape (n, D(2D+1))
        The features.
    """
    Z = rff_base_features(X, W)
    iu, ju, c = _pairs(Z.shape[1])
    return Z[:, iu] * Z[:, ju] * c


def rff_feature_differences(X, Y, W: np.ndarray) -> np.ndarray:
    r"""Rows :math:`\Delta_t = \phi(X_t) - \phi(Y_t)`, shape ``(n, D(2D+1))``.

    Parameters
    ----------
    X, Y : array_like, shape (n, d)
        Paired points.
    W : ndarray, shape (D, d)
        Frequencies.

    Returns
    -------
    ndarray, shape (n, D(2D+1))
        The differences.
    """
    return rff_features(X, W) - rff_features(Y, W)


def rff_kernel(A, B, W: np.ndarray, *, squared: bool = True) -> np.ndarray:
    r"""Gram matrix between rows of ``A`` and ``B`` of the witness's kernel :math:`K_D^2`
    (``squared=False``: the plain RFF kernel :math:`K_D`; tests and oracles).

    Parameters
    ----------
    A : array_like, shape (n, d)
        Points.
    B : array_like, shape (m, d)
        Points.
    W : ndarray, shape (D, d)
        Frequencies.
    squared : bool
        :math:`K_D^2` (True) or :math:`K_D`.

    Returns
    -------
    ndarray, shape (n, m)
        The Gram matrix.
    """
    G = rff_base_features(A, W) @ rff_base_features(B, W).T
    return G * G if squared else G


def new_rff_state(n_max: int, features: int) -> dict:
    """Buffers of one RFF OGA run with ``features`` frequencies: the unscaled witness ``F``
    (a symmetric ``2D x 2D`` matrix, :mod:`semi_core.kernels.rff_witness`),
    ``[M, scale, ||f||^2]``, and the witness values ``v`` and squared norms ``k`` of every
    step.

    Parameters
    ----------
    n_max : int
        Largest number of steps.
    features : int
        Number of frequencies D.

    Returns
    -------
    dict
        ``F``, ``state``, ``v`` and ``k``.
    """
    m = 2 * int(features)
    return {"F": np.zeros((m, m)), "state": np.array([0.0, 1.0, 0.0]),
            "v": np.zeros(n_max), "k": np.zeros(n_max)}


def rff_witness_values(X, Y, bandwidth: float, *, features: int = DEFAULT_FEATURES, seed=0,
                       backend: str = "auto") -> tuple[np.ndarray, np.ndarray]:
    r"""RFF witness values :math:`v_t` and :math:`k_t=\|\Delta_t\|^2` of a whole stream.

    Parameters
    ----------
    X, Y : array_like, shape (n,) or (n, d)
        Paired outputs.
    bandwidth : float
        Bandwidth :math:`h > 0` of the frequencies :math:`N(0, h^{-2}I)`.
    features : int
        Number of frequencies :math:`D` in ``[1, 128]``.
    seed : int or SeedSequence
        Root of the frequency stream (``child_seed(seed, RFF_SEED_KEY)``).
    backend : {"auto", "numba", "numpy"}
        The recursion's kernel (:func:`semi_core.kernels.rff_witness.rff_block`).

    Returns
    -------
    v, k : ndarray, shape (n,)
    """
    X = np.asarray(X, dtype=np.float64)
    Y = np.asarray(Y, dtype=np.float64)
    X = X.reshape(len(X), -1)
    Y = Y.reshape(len(Y), -1)
    if X.shape != Y.shape:
        raise ValueError(f"X and Y must have the same shape, got {X.shape} and {Y.shape}")
    W = rff_frequencies(X.shape[1], features, bandwidth, seed)
    buf = new_rff_state(X.shape[0], W.shape[0])
    if X.shape[0]:
        from semi_core.kernels.rff_witness import rff_block  # imports Numba

        rff_block(rff_base_features(X, W), rff_base_features(Y, W), 0, buf, backend=backend)
    return buf["v"], buf["k"]
