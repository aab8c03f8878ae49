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

This module is the one home of the toolkit's low-rank (Woodbury) solves:

- :class:`LowRankPlusDiagonal` -- one matrix :math:`\\mathrm{diag}(D)+WW^\\top` in NumPy (solve,
  log-determinant); :mod:`semi_core.sgd.lr` and the per-datum plug-in attack
  (:func:`semi_core.attacks.leakage.plugin_lr_full`) use it;
- :func:`shrunk_parts`, :func:`woodbury_quad_logdet` and :func:`woodbury_solve` -- the same
  identities for a batch of shrunk covariances in torch (one per game, each at its own
  :math:`\\theta_{t-1}`), used by the batched DP-SGD statistics (:mod:`semi_core.sgd.batched`)
  and the Alg. 6/7 canary scores (:mod:`semi_core.sgd.leakage_canaries`). torch is imported
  lazily there (a heavy optional dependency); the rest of the module is NumPy/SciPy only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import linalg

from semi_core._validation import check_finite_array, check_int

__all__ = ["LowRankPlusDiagonal", "GradientStatistics", "gradient_statistics",
           "DENSE_MAX_DIM", "shrunk_parts", "woodbury_quad_logdet", "woodbury_solve",
           "woodbury_factors", "woodbury_quad"]

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
        """Return :math:`aA + cI` in the same form (``a > 0``, ``c >= 0``).

        Parameters
        ----------
        a : float
            Scale, > 0.
        c : float
            Added multiple of the identity, >= 0.

        Returns
        -------
        LowRankPlusDiagonal
            :math:`aA + cI`.
        """
        if a <= 0 or c < 0:
            raise ValueError(f"need a > 0 and c >= 0, got a={a}, c={c}")
        return LowRankPlusDiagonal(a * self.diag + c, np.sqrt(a) * self.factor)

    def solve(self, x) -> np.ndarray:
        """:math:`A^{-1}x` for ``x`` of shape ``(d,)`` or ``(d, r)`` by Woodbury.

        Parameters
        ----------
        x : array_like, shape (d,) or (d, r)
            Right-hand side(s).

        Returns
        -------
        ndarray
            :math:`A^{-1}x`, shape of ``x``.
        """
        x = np.asarray(x, dtype=float)
        xd = x / (self.diag if x.ndim == 1 else self.diag[:, None])
        inner = linalg.cho_solve(self._cap_chol, self.factor.T @ xd)
        return xd - self._w_over_d @ inner

    def logdet(self) -> float:
        """:math:`\\log\\det A` by the matrix-determinant lemma.

        Returns
        -------
        float
            :math:`\\log\\det A`.
        """
        return float(np.log(self.diag).sum() + 2 * np.log(np.diag(self._cap_chol[0])).sum())

    def dense(self) -> np.ndarray:
        """The dense matrix (for tests and small ``d`` only).

        Returns
        -------
        ndarray, shape (d, d)
            :math:`A`.
        """
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
        """:math:`m^* = (g-\\hat\\mu_g)^\\top\\hat\\Sigma_g^{-1}(g-\\hat\\mu_g)` (no inverse).

        Parameters
        ----------
        g : array_like, shape (d,)
            A gradient.

        Returns
        -------
        float
            Its squared Mahalanobis distance from the mean, >= 0.
        """
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

    Returns
    -------
    GradientStatistics
        The mean and the shrunk covariance (dense or low-rank-plus-diagonal).
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


# ------------------------------------------------------------------ batched (torch) solves
def shrunk_parts(ref_grads, shrinkage: float, ridge: float):
    """Parts of the shrunk covariance of a batch of reference samples (torch, float64).

    ``ref_grads`` is ``(..., m, d)``; returns the mean ``(..., d)``, the centred gradients
    :math:`G_c` ``(..., m, d)``, the Gram matrix :math:`G_cG_c^\\top/(m-1)` ``(..., m, m)`` (the
    only :math:`O(m^2d)` product) and the identity level :math:`(\\lambda+r)\\nu` with
    :math:`\\nu=\\mathrm{tr}S/d` (1 where the sample is degenerate), so that
    :math:`\\hat\\Sigma_g=(1-\\lambda)W W^\\top+(\\lambda+r)\\nu I`,
    :math:`W^\\top W=G_cG_c^\\top/(m-1)`, as in :func:`gradient_statistics`.

    Parameters
    ----------
    ref_grads : torch.Tensor, shape (..., m, d)
        Reference samples, m >= 2.
    shrinkage : float
        Weight :math:`\\lambda` of the identity target, in [0, 1].
    ridge : float
        Relative ridge r, >= 0.

    Returns
    -------
    mean : torch.Tensor, shape (..., d)
        Sample mean.
    gc : torch.Tensor, shape (..., m, d)
        Centred samples.
    gram : torch.Tensor, shape (..., m, m)
        :math:`G_cG_c^\\top/(m-1)`.
    level : torch.Tensor, shape (...)
        Identity level :math:`(\\lambda+r)\\nu`.
    """
    import torch  # lazy: heavy optional dependency

    m, d = ref_grads.shape[-2], ref_grads.shape[-1]
    mean = ref_grads.mean(dim=-2)
    gc = ref_grads - mean.unsqueeze(-2)
    gram = gc @ gc.transpose(-1, -2) / (m - 1)
    nu = gram.diagonal(dim1=-2, dim2=-1).sum(-1) / d
    nu = torch.where(nu > 0, nu, torch.ones_like(nu))
    return mean, gc, gram, (shrinkage + ridge) * nu


def woodbury_quad_logdet(gram, proj, xx, alpha: float, beta, d: int):
    """Quadratic forms and log-determinant of :math:`A=\\beta I+\\alpha WW^\\top`, batched
    (torch), with :math:`W^\\top W` = ``gram`` ``(B, m, m)``.

    ``proj`` is :math:`W^\\top x` ``(B, m, k)`` for ``k`` vectors with squared norms ``xx``
    ``(B, k)``; ``beta`` is ``(B,)``:

    .. math:: x^\\top A^{-1}x = \\|x\\|^2/\\beta - \\tfrac{\\alpha}{\\beta^2}
              y^\\top K^{-1} y,\\quad K = I + \\tfrac{\\alpha}{\\beta}W^\\top W,\\quad
              \\log\\det A = d\\log\\beta + \\log\\det K

    (one :math:`m\\times m` Cholesky factor per game, never a :math:`d\\times d` matrix).

    Parameters
    ----------
    gram : torch.Tensor, shape (B, m, m)
        :math:`W^\\top W`.
    proj : torch.Tensor, shape (B, m, k)
        :math:`W^\\top x` of the k vectors.
    xx : torch.Tensor, shape (B, k)
        Their squared norms.
    alpha : float
        Weight of :math:`WW^\\top`, >= 0.
    beta : torch.Tensor, shape (B,)
        Identity level, > 0.
    d : int
        Dimension of the vectors.

    Returns
    -------
    quad : torch.Tensor, shape (B, k)
        :math:`x^\\top A^{-1}x`.
    logdet : torch.Tensor, shape (B,)
        :math:`\\log\\det A`.
    """
    import torch  # lazy: heavy optional dependency

    b = beta.reshape(-1, 1, 1)
    cap = (alpha / b) * gram
    cap.diagonal(dim1=-2, dim2=-1).add_(1.0)
    chol = torch.linalg.cholesky(cap)
    z = torch.linalg.solve_triangular(chol, proj, upper=False)
    quad = xx / beta.unsqueeze(-1) - (alpha / beta**2).unsqueeze(-1) * (z * z).sum(-2)
    logdet = d * torch.log(beta) + 2 * torch.log(chol.diagonal(dim1=-2, dim2=-1)).sum(-1)
    return quad, logdet


#: LAPACK's ``dpotrf`` as linked into torch (resolved on first use; False where unavailable).
_POTRF = None


def _torch_potrf():
    """The ``dpotrf_`` routine that ``torch.linalg.cholesky`` runs on CPU, from torch's own
    library (the same LAPACK, the same integer width: torch calls it with 32-bit ints), or
    None where that library does not export it. It is used only after it reproduced
    ``torch.linalg.cholesky_ex`` bit for bit on a test matrix. Why call it directly: on CPU,
    ``cholesky_ex`` first copies the input's triangle into a fresh column-major matrix,
    element by element in row order -- that copy cost more than the factorisation at m = 128."""
    global _POTRF
    if _POTRF is None:
        _POTRF = False
        try:
            import ctypes
            from pathlib import Path

            import torch  # lazy: heavy optional dependency

            libs = sorted((Path(torch.__file__).parent / "lib").glob("*torch_cpu.*"))
            fn = ctypes.CDLL(str(libs[0])).dpotrf_ if libs else None
            if fn is not None:
                fn.restype = None
                fn.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_int), ctypes.c_void_p,
                               ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int)]
                g = torch.linspace(-1.0, 1.0, 7 * 7, dtype=torch.float64).reshape(7, 7)
                spd = g @ g.T + torch.eye(7, dtype=torch.float64)
                buf = spd.clone()
                if _potrf_rows(fn, buf.reshape(1, 7, 7)) == 0 and torch.equal(
                        buf.tril(), torch.linalg.cholesky_ex(spd, upper=True)[0].mT):
                    _POTRF = fn
        except (OSError, AttributeError, IndexError):
            pass
    return _POTRF or None


def _potrf_rows(fn, buf) -> int:
    """Factor each matrix of ``buf`` ``(B, s, s)`` (contiguous float64) in place with LAPACK
    ``dpotrf('U')`` on its column-major reading (the row-major transpose): the factor
    :math:`L = U^\top` lands in the lower triangle; returns the first non-zero ``info``."""
    import ctypes

    B, s = buf.shape[0], buf.shape[-1]
    n, info, bad = ctypes.c_int(s), ctypes.c_int(0), 0
    base, step = buf.data_ptr(), s * s * buf.element_size()
    for k in range(B):
        fn(b"U", ctypes.byref(n), base + k * step, ctypes.byref(n), ctypes.byref(info))
        bad = bad or info.value
    return bad


def woodbury_factors(gram, alphas, betas, d: int):
    r"""Cholesky factors and log-determinants of :math:`A_h=\beta_h I+\alpha_h WW^\top` for
    ``H`` coefficient pairs on each of ``P`` Gram matrices, in one batched factorisation.

    ``gram`` is :math:`W^\top W` ``(P, m, m)``, ``alphas`` ``H`` floats, ``betas`` ``(H, P)``.
    Returns the lower factors :math:`L_h` of the capacitance matrices
    :math:`K_h = I + \tfrac{\alpha_h}{\beta_h}W^\top W` ``(H, P, m, m)`` and

    .. math:: \log\det A_h = d\log\beta_h + \log\det K_h
              = d\log\beta_h + 2\textstyle\sum_i \log (L_h)_{ii}

    ``(H, P)`` (matrix-determinant lemma, as :func:`woodbury_quad_logdet`). The DP-SGD
    log-LR needs :math:`H = 2` (:math:`V_0, V_1`); their capacitance matrices differ by a
    full-rank multiple of :math:`W^\top W` (not a low-rank term), so each gets its own factor.
    Cholesky rather than LU: torch's batched CPU LU runs the batch in parallel around a
    threaded LAPACK, which has deadlocked after the thread count was changed.

    On CPU in float64 the factorisation is LAPACK's ``dpotrf`` as torch links it, called in
    place on the transposed capacitance matrices (:func:`_torch_potrf`): the routine and the
    triangle of ``torch.linalg.cholesky_ex(K, upper=True)``, so the same factors bit for bit,
    without its element-by-element copy into a fresh column-major matrix (which cost more than
    the factorisation at m = 128); elsewhere ``cholesky_ex`` itself.

    Parameters
    ----------
    gram : torch.Tensor, shape (P, m, m)
        :math:`W^\top W`.
    alphas : sequence of float
        The H weights :math:`\alpha_h`.
    betas : torch.Tensor, shape (H, P)
        Identity levels :math:`\beta_h`, > 0.
    d : int
        Dimension.

    Returns
    -------
    chol : torch.Tensor, shape (H, P, m, m)
        Lower Cholesky factors of the capacitance matrices.
    logdet : torch.Tensor, shape (H, P)
        :math:`\log\det A_h`.
    """
    import torch  # lazy: heavy optional dependency

    c = torch.as_tensor(alphas, dtype=gram.dtype, device=gram.device).reshape(-1, 1) / betas      # (H, P)
    H, (P, m) = c.shape[0], gram.shape[-3:-1]
    potrf = (_torch_potrf() if gram.device.type == "cpu" and gram.dtype == torch.float64
             else None)
    if potrf is not None:
        # written transposed: the column-major reading LAPACK takes is then K itself
        cap = gram.new_empty(H, P, m, m)
        torch.mul(c.reshape(H, P, 1, 1), gram.mT.unsqueeze(0), out=cap)
    else:
        cap = c.reshape(H, P, 1, 1) * gram.unsqueeze(0)
    cap.diagonal(dim1=-2, dim2=-1).add_(1.0)
    if potrf is not None:
        bad = _potrf_rows(potrf, cap.reshape(H * P, m, m))
        chol = cap.tril_()
    else:
        # the upper factor U = L^T, without torch's error check: ~10 % faster on CPU (torch
        # zeroes the other triangle of its column-major result, cheaper this way round)
        upper, info = torch.linalg.cholesky_ex(cap, upper=True)
        bad = bool((info != 0).any())
        chol = upper.mT
    if bad:
        raise ValueError("a capacitance matrix I + (alpha/beta) W^T W is not positive "
                         "definite (non-finite Gram matrix or coefficients)")
    logdet = d * torch.log(betas) + 2 * torch.log(chol.diagonal(dim1=-2, dim2=-1)).sum(-1)
    return chol, logdet


def woodbury_quad(chol, proj, xx, alpha: float, beta):
    r""":math:`x_g^\top A^{-1}x_g` for ``G`` vectors from one hypothesis' factors
    :func:`woodbury_factors`.

    ``chol`` ``(P, m, m)`` and ``beta`` ``(P,)`` hold one factor per vector (``P = G``) or
    one factor shared by all of them (``P = 1``: one triangular solve with ``G`` right-hand
    sides); ``proj`` is :math:`y_g = W^\top x_g` ``(G, m)`` and ``xx`` :math:`\|x_g\|^2`
    ``(G,)``:

    .. math:: x^\top A^{-1}x = \|x\|^2/\beta - \tfrac{\alpha}{\beta^2}\,\|L^{-1}y\|^2.

    Parameters
    ----------
    chol : torch.Tensor, shape (P, m, m)
        Lower capacitance factors of one hypothesis (P = G or 1).
    proj : torch.Tensor, shape (G, m)
        :math:`W^\top x_g`.
    xx : torch.Tensor, shape (G,)
        :math:`\|x_g\|^2`.
    alpha : float
        Weight of :math:`WW^\top`.
    beta : torch.Tensor, shape (P,)
        Identity levels, > 0.

    Returns
    -------
    torch.Tensor, shape (G,)
        The quadratic forms.
    """
    import torch  # lazy: heavy optional dependency

    G = proj.shape[0]
    if chol.shape[0] == 1:
        z = torch.linalg.solve_triangular(chol, proj.T.unsqueeze(0), upper=False)  # (1, m, G)
        zz = (z * z).sum(-2).reshape(G)
    else:
        z = torch.linalg.solve_triangular(chol, proj.unsqueeze(-1), upper=False)  # (G, m, 1)
        zz = (z * z).sum((-2, -1))
    return xx / beta - (alpha / beta**2) * zz


def woodbury_solve(ref, x, *, shrinkage: float, ridge: float, extra: float = 0.0):
    r"""``(mean, x - mean, A^{-1}(x - mean))`` for a batch of shrunk covariances (torch).

    ``ref`` is ``(B, m, d)`` reference gradients, ``x`` is ``(B, k, d)``;
    :math:`A=(1-\lambda)S+((\lambda+r)\,\mathrm{tr}S/d+\text{extra})I` (``extra``: e.g. the
    DP noise variance), solved by Woodbury with an :math:`m\times m` Cholesky factor:

    .. math:: A^{-1}v = v/\beta - \tfrac{\alpha}{\beta^2}W K^{-1}W^\top v,\quad
              K = I+\tfrac{\alpha}{\beta}W^\top W.

    Parameters
    ----------
    ref : torch.Tensor, shape (B, m, d)
        Reference gradients.
    x : torch.Tensor, shape (B, k, d)
        Vectors to solve for.
    shrinkage : float
        Weight :math:`\lambda`, in [0, 1].
    ridge : float
        Relative ridge r, >= 0.
    extra : float
        Added identity level (e.g. the DP noise variance), >= 0.

    Returns
    -------
    mean : torch.Tensor, shape (B, d)
        Mean of the reference gradients.
    xc : torch.Tensor, shape (B, k, d)
        ``x - mean``.
    sol : torch.Tensor, shape (B, k, d)
        :math:`A^{-1}(x - \text{mean})`.
    """
    import torch  # lazy: heavy optional dependency

    m = ref.shape[-2]
    mean, gc, gram, level = shrunk_parts(ref, float(shrinkage), float(ridge))
    beta = level + float(extra)                                 # (B,)
    alpha = 1.0 - float(shrinkage)
    xc = x - mean.unsqueeze(-2)                                 # (B, k, d)
    w = gc / (m - 1) ** 0.5                                     # (B, m, d): S = W^T W
    cap = (alpha / beta).reshape(-1, 1, 1) * gram
    cap.diagonal(dim1=-2, dim2=-1).add_(1.0)
    chol = torch.linalg.cholesky(cap)
    inner = torch.cholesky_solve(w @ xc.transpose(-1, -2), chol)   # K^{-1} W x
    b = beta.reshape(-1, 1, 1)
    sol = xc / b - (alpha / b**2) * (inner.transpose(-1, -2) @ w)
    return mean, xc, sol
