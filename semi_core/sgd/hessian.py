r"""Hessian of the mean training loss and inverse-Hessian-vector products (iHVPs).

IHA and SIF (``iha_parameters_vs_loss`` §3.3, §4, App. E) need
:math:`\mathbf H_*^{-1}\mathbf v` for the Hessian of the *unregularised* mean training loss
:math:`L(\mathbf w)=\frac1n\sum_{i}\ell(\mathbf w,\mathbf z_i)` at the trained weights. Two paths:

Exact (:func:`mean_loss_hessian` + :class:`EigenInverse`)
    :math:`\mathbf H=\mathbf U\operatorname{diag}(\sigma)\mathbf U^\top` by ``eigh``; the
    near-zero and small negative eigenvalues are conditioned (App. E, Table 8) either by
    *damping*, :math:`(\mathbf H+\epsilon\mathbf I)^{-1}=\mathbf U\operatorname{diag}
    (1/(\sigma_i+\epsilon))\mathbf U^\top`, or by a *low-rank* pseudo-inverse that keeps only
    the eigenpairs with :math:`\sigma_i>\epsilon`.
Matrix-free (:func:`hvp_operator` + :class:`CGInverse` / :func:`lissa_solve`)
    Hessian-vector products :math:`\mathbf H\mathbf v` by forward-over-reverse differentiation
    (``torch.func.jvp`` of ``torch.func.grad``, ``vmap`` over many vectors), then conjugate
    gradient on :math:`(\mathbf H+\epsilon\mathbf I)\mathbf x=\mathbf v` for all right-hand sides
    at once (Koh & Liang 2017), or the LiSSA recursion (Agarwal et al. 2017).

Both paths solve the same damped system, so they agree to the CG tolerance (tested to 1e-8
against a dense solve).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch.func import functional_call, grad, jvp, vmap

from semi_core._validation import check_int, check_positive

from .grads import FunctionalModel

__all__ = ["mean_loss_hessian", "hvp_operator", "EigenInverse", "CGInverse", "cg_solve",
           "lissa_solve", "CGInfo"]


def _mean_loss(fm: FunctionalModel, x: torch.Tensor, y: torch.Tensor, *, total: int | None = None):
    """``theta -> sum_i l(theta; x_i, y_i) / total`` with one batched forward (the loss of
    :class:`~semi_core.sgd.grads.FunctionalModel`, without its per-sample ``vmap``: several
    times faster under ``jvp``/``hessian``; tested equal to ``fm.losses``)."""
    n = x.shape[0] if total is None else total

    def f(theta):
        out = functional_call(fm.module, {**fm.frozen, **fm.unflatten(theta)}, (x,))
        if fm.loss_name == "cross_entropy":
            return torch.nn.functional.cross_entropy(out, y, reduction="sum") / n
        return 0.5 * ((out.reshape(-1) - y.reshape(-1)) ** 2).sum() / n
    return f


def mean_loss_hessian(fm: FunctionalModel, theta: torch.Tensor, x: torch.Tensor,
                      y: torch.Tensor, *, chunk: int = 512) -> torch.Tensor:
    r"""Exact Hessian :math:`\nabla^2 L(\mathbf w)=\frac1n\sum_i\nabla^2\ell(\mathbf w,\mathbf z_i)`,
    shape ``(d, d)`` (``torch.func.hessian`` over chunks of ``chunk`` records, summed).

    Parameters
    ----------
    fm : FunctionalModel
    theta : Tensor, shape (d,)
    x, y : Tensor
        The training set (``n >= 1`` records).
    chunk : int
        Records per ``hessian`` call (memory bound).

    Returns
    -------
    torch.Tensor, shape (d, d)
        The Hessian of the mean loss.
    """
    n = int(x.shape[0])
    if n < 1:
        raise ValueError("x must hold at least one record")
    chunk = check_int(chunk, "chunk", minimum=1)
    H = torch.zeros(fm.d, fm.d, dtype=theta.dtype)
    for a in range(0, n, chunk):
        H += torch.func.hessian(_mean_loss(fm, x[a:a + chunk], y[a:a + chunk], total=n))(
            theta.detach())
    return 0.5 * (H + H.T)


def hvp_operator(fm: FunctionalModel, theta: torch.Tensor, x: torch.Tensor,
                 y: torch.Tensor) -> Callable[[torch.Tensor], torch.Tensor]:
    r"""Matrix-free :math:`\mathbf V\mapsto\mathbf V\mathbf H` for rows ``V`` of shape
    ``(k, d)`` (or one vector ``(d,)``): ``vmap`` over the rows of
    ``jvp(grad(L), (w,), (v,))``, never forming :math:`\mathbf H`.

    Parameters
    ----------
    fm : FunctionalModel
        The model.
    theta : torch.Tensor, shape (d,)
        The point of the Hessian.
    x : torch.Tensor, shape (n, ...)
        Training inputs.
    y : torch.Tensor, shape (n,)
        Training targets.

    Returns
    -------
    callable
        ``V -> V H`` for ``V`` of shape ``(k, d)`` or ``(d,)``.
    """
    g = grad(_mean_loss(fm, x, y))
    w = theta.detach()

    def one(v):
        return jvp(g, (w,), (v,))[1]

    batched = vmap(one)

    def apply(V: torch.Tensor) -> torch.Tensor:
        return one(V) if V.ndim == 1 else batched(V)
    return apply


def _rows(V: torch.Tensor) -> tuple[torch.Tensor, bool]:
    return (V.unsqueeze(0), True) if V.ndim == 1 else (V, False)


class EigenInverse:
    r"""Conditioned inverse of a symmetric matrix from its eigendecomposition.

    .. math::

        \text{damping:}\ \ \mathbf U\operatorname{diag}\Big(\frac1{\sigma_i+\epsilon}\Big)
        \mathbf U^\top,\qquad
        \text{low-rank:}\ \ \sum_{\sigma_i>\epsilon}\frac{\mathbf u_i\mathbf u_i^\top}{\sigma_i}.

    Parameters
    ----------
    H : Tensor, shape (d, d)
        Symmetric (the symmetric part is used).
    epsilon : float
        Damping :math:`\epsilon\ge0` or the low-rank threshold :math:`\epsilon>0` (seed App. E;
        its main results use damping 0.2).
    method : {"damping", "lowrank"}

    Raises
    ------
    ValueError
        If damping leaves an eigenvalue :math:`\sigma_i+\epsilon\le0` (the damped matrix is not
        positive definite), or the low-rank threshold keeps no eigenvalue.
    """

    def __init__(self, H: torch.Tensor, *, epsilon: float = 0.2, method: str = "damping"):
        if method not in ("damping", "lowrank"):
            raise ValueError(f"method must be 'damping' or 'lowrank', got {method!r}")
        if H.ndim != 2 or H.shape[0] != H.shape[1]:
            raise ValueError(f"H must be a square matrix, got shape {tuple(H.shape)}")
        if not torch.isfinite(H).all():
            raise ValueError("H contains NaN or infinite values")
        eps = float(epsilon)
        if not (eps == eps and eps >= 0 and eps != float("inf")):
            raise ValueError(f"epsilon must be finite and >= 0, got {epsilon!r}")
        self.method, self.epsilon = method, eps
        self.eigvals, self.eigvecs = torch.linalg.eigh(0.5 * (H + H.T))
        if method == "damping":
            shifted = self.eigvals + eps
            if (shifted <= 0).any():
                raise ValueError(f"epsilon = {eps} leaves eigenvalue "
                                 f"{float(shifted.min()):.3g} <= 0 after damping; increase the "
                                 f"damping above {float(-self.eigvals.min()):.3g}")
            self.inv_vals = 1.0 / shifted
        else:
            if eps <= 0:
                raise ValueError("epsilon must be > 0 for the low-rank pseudo-inverse")
            keep = self.eigvals > eps
            if not keep.any():
                raise ValueError(f"epsilon = {eps} keeps no eigenvalue (largest "
                                 f"{float(self.eigvals.max()):.3g})")
            self.inv_vals = torch.where(keep, 1.0 / torch.where(keep, self.eigvals, 1.0), 0.0)
        self.rank = int((self.inv_vals != 0).sum())

    def solve(self, V: torch.Tensor, power: int = 1) -> torch.Tensor:
        r""":math:`\mathbf H_\epsilon^{-p}\mathbf v` for each row of ``V`` (``(k, d)`` or ``(d,)``).

        Parameters
        ----------
        V : torch.Tensor, shape (k, d) or (d,)
            Right-hand sides.
        power : int
            Power p of the inverse.

        Returns
        -------
        torch.Tensor
            :math:`\mathbf H_\epsilon^{-p}\mathbf v` per row, shape of ``V``.
        """
        R, squeeze = _rows(V)
        out = ((R @ self.eigvecs) * self.inv_vals ** int(power)) @ self.eigvecs.T
        return out[0] if squeeze else out


@dataclass
class CGInfo:
    """Convergence record of a batched CG solve."""

    iterations: int
    max_relative_residual: float
    converged: bool


def cg_solve(matvec: Callable[[torch.Tensor], torch.Tensor], B: torch.Tensor, *,
             damping: float = 0.0, tol: float = 1e-10, maxiter: int | None = None
             ) -> tuple[torch.Tensor, CGInfo]:
    r"""Conjugate gradient on :math:`(\mathbf H+\epsilon\mathbf I)\mathbf x_j=\mathbf b_j` for
    every row :math:`\mathbf b_j` of ``B`` at once.

    Each column runs its own CG recursion (step sizes per row); a row stops updating once
    :math:`\|\mathbf r_j\|\le\mathrm{tol}\,\|\mathbf b_j\|`.

    Parameters
    ----------
    matvec : callable
        Rows ``(k, d) -> (k, d)``, :math:`\mathbf V\mapsto\mathbf V\mathbf H` (symmetric).
    B : Tensor, shape (k, d) or (d,)
    damping : float
        :math:`\epsilon\ge0`.
    tol : float
        Relative residual tolerance (> 0).
    maxiter : int, optional
        Default ``2 d``.

    Returns
    -------
    X, CGInfo
    """
    tol = check_positive(tol, "tol")
    damping = float(damping)
    if not (damping >= 0 and damping != float("inf")):
        raise ValueError(f"damping must be finite and >= 0, got {damping!r}")
    Bm, squeeze = _rows(B)
    d = Bm.shape[1]
    maxiter = 2 * d if maxiter is None else check_int(maxiter, "maxiter", minimum=1)
    X = torch.zeros_like(Bm)
    Rr = Bm.clone()
    P = Rr.clone()
    rs = (Rr * Rr).sum(1)
    bnorm = torch.sqrt(rs).clamp_min(torch.finfo(Bm.dtype).tiny)
    active = torch.sqrt(rs) > tol * bnorm
    it = 0
    while active.any() and it < maxiter:
        AP = matvec(P) + damping * P
        pAp = (P * AP).sum(1)
        if (pAp[active] <= 0).any():
            raise ValueError("the damped Hessian is not positive definite along a CG direction; "
                             "increase the damping")
        alpha = torch.where(active, rs / torch.where(active, pAp, 1.0), 0.0)
        X = X + alpha[:, None] * P
        Rr = Rr - alpha[:, None] * AP
        rs_new = (Rr * Rr).sum(1)
        beta = torch.where(active, rs_new / torch.where(active, rs, 1.0), 0.0)
        P = torch.where(active[:, None], Rr + beta[:, None] * P, P)
        rs = torch.where(active, rs_new, rs)
        active = active & (torch.sqrt(rs) > tol * bnorm)
        it += 1
    rel = float((torch.sqrt(rs) / bnorm).max())
    info = CGInfo(iterations=it, max_relative_residual=rel, converged=not bool(active.any()))
    return (X[0] if squeeze else X), info


def lissa_solve(matvec: Callable[[torch.Tensor], torch.Tensor], B: torch.Tensor, *,
                damping: float = 0.0, scale: float, depth: int = 1000) -> torch.Tensor:
    r"""LiSSA (Agarwal et al. 2017): the truncated Neumann series of
    :math:`(\mathbf H+\epsilon\mathbf I)^{-1}` with full-batch HVPs,

    .. math::

        \mathbf x_0=\mathbf b,\quad
        \mathbf x_{j+1}=\mathbf b+\Big(\mathbf I-\frac{\mathbf H+\epsilon\mathbf I}{s}\Big)
        \mathbf x_j,\qquad (\mathbf H+\epsilon\mathbf I)^{-1}\mathbf b\approx\mathbf x_J/s,

    which converges when ``scale`` :math:`s` exceeds the largest eigenvalue of
    :math:`\mathbf H+\epsilon\mathbf I` (and that matrix is positive definite); the error
    decays like :math:`(1-(\sigma_{\min}+\epsilon)/s)^J`.

    Parameters
    ----------
    matvec : callable
        ``V -> V H`` (:func:`hvp_operator`).
    B : torch.Tensor, shape (k, d) or (d,)
        Right-hand sides.
    damping : float
        :math:`\epsilon`, >= 0.
    scale : float
        :math:`s`, > 0, above the largest eigenvalue of :math:`\mathbf H+\epsilon\mathbf I`.
    depth : int
        Number of iterations J, >= 1.

    Returns
    -------
    torch.Tensor
        The approximate solutions, shape of ``B``.
    """
    scale = check_positive(scale, "scale")
    depth = check_int(depth, "depth", minimum=1)
    Bm, squeeze = _rows(B)
    X = Bm.clone()
    for _ in range(depth):
        X = Bm + X - (matvec(X) + damping * X) / scale
    X = X / scale
    return X[0] if squeeze else X


class CGInverse:
    """Matrix-free damped inverse: :meth:`solve` runs :func:`cg_solve` on an HVP operator and
    records the convergence of every call in :attr:`infos` (same interface as
    :class:`EigenInverse`)."""

    def __init__(self, matvec: Callable[[torch.Tensor], torch.Tensor], *, damping: float = 0.2,
                 tol: float = 1e-10, maxiter: int | None = None):
        self.matvec, self.damping, self.tol, self.maxiter = matvec, float(damping), tol, maxiter
        self.infos: list[CGInfo] = []

    def solve(self, V: torch.Tensor, power: int = 1) -> torch.Tensor:
        r""":math:`\mathbf H_\epsilon^{-p}\mathbf v` for each row of ``V`` by ``power`` conjugate-gradient solves.

        Parameters
        ----------
        V : torch.Tensor, shape (k, d) or (d,)
            Right-hand sides.
        power : int
            Power p of the inverse, >= 1.

        Returns
        -------
        torch.Tensor
            The solutions, shape of ``V``.
        """
        out = V
        for _ in range(check_int(power, "power", minimum=1)):
            out, info = cg_solve(self.matvec, out, damping=self.damping, tol=self.tol,
                                 maxiter=self.maxiter)
            self.infos.append(info)
        return out
