"""Batched (over games) SeMI-SGD statistics in torch: reference stats + Woodbury log-LR.

For ``B`` games at once, given reference gradients ``(B, m, d)`` at each game's own
:math:`\\theta_{\\tau-1}`, this forms the shrunk covariance of :mod:`semi_core.sgd.gradstats` in
low-rank-plus-identity form and evaluates the DP-SGD log-LR of :mod:`semi_core.sgd.lr` with
one Gram matrix :math:`G_cG_c^\\top` per game (shared by :math:`V_0` and :math:`V_1`, which
differ only in their coefficients) and batched Cholesky factors of the :math:`m\\times m`
capacitance matrices (never a :math:`d\\times d` matrix, never an explicit inverse); the
low-rank solves themselves live in :mod:`semi_core.sgd.gradstats` (their one home).
Float64 throughout. The tests check it against the dense NumPy implementation.
"""

from __future__ import annotations

import torch

from semi_core._validation import check_batch_size, check_positive

from .ghost import ghost_parts
from .gradstats import shrunk_parts, woodbury_quad_logdet

__all__ = ["batched_dpsgd_log_lr", "ghost_log_lr", "ghost_grads", "batched_mahalanobis"]


def batched_dpsgd_log_lr(updates: torch.Tensor, ref_grads: torch.Tensor,
                         target_grads: torch.Tensor, *, eta: float, n: int, sigma_dp: float,
                         clip: float, shrinkage: float = 0.1, ridge: float = 1e-4) -> torch.Tensor:
    """DP-SGD SeMI log-LR for a batch of games (see :func:`semi_core.sgd.lr.dpsgd_log_lr`).

    .. math::

       \\log\\mathrm{LR} = \\tfrac12\\log\\frac{\\det V_0}{\\det V_1}
       - \\tfrac12 (N + \\eta\\delta_g/n)^\\top V_1^{-1}(N + \\eta\\delta_g/n)
       + \\tfrac12 N^\\top V_0^{-1}N,\\quad
       V_a = \\eta^2(a\\hat\\Sigma_g + \\sigma_{DP}^2C^2 n^{-2} I)

    with :math:`a_0 = 1/n`, :math:`a_1 = (n-1)/n^2` and :math:`\\hat\\Sigma_g` the shrunk
    covariance (seed §4.2 estimation, shrinkage stated in :mod:`semi_core.sgd.gradstats`).

    Parameters
    ----------
    updates : Tensor (B, d)
        :math:`\\theta_\\tau - \\theta_{\\tau-1}` per game.
    ref_grads : Tensor (B, m, d)
        Clipped reference gradients at each game's :math:`\\theta_{\\tau-1}`, ``m >= 2``.
    target_grads : Tensor (B, d)
        Clipped target gradient at :math:`\\theta_{\\tau-1}`.
    eta, n, sigma_dp, clip, shrinkage, ridge
        Learning rate, batch size (``>= 2``), noise multiplier (``>= 0``), clipping norm
        (only enters through :math:`\\sigma_{DP}C`), shrinkage in [0, 1], relative ridge.
    """
    _check_lr_args(eta, n, clip, sigma_dp, shrinkage)
    if ref_grads.shape[-2] < 2:
        raise ValueError("need at least m=2 reference gradients")
    m = ref_grads.shape[-2]
    mean, gc, gram, level = shrunk_parts(ref_grads, float(shrinkage), float(ridge))
    return _log_lr_core(updates, target_grads, mean, gram, level,
                        lambda xs: gc @ xs / (m - 1) ** 0.5, eta=eta, n=n, sigma_dp=sigma_dp,
                        clip=clip, shrinkage=shrinkage)


def _check_lr_args(eta, n, clip, sigma_dp, shrinkage):
    check_positive(eta, "eta")
    check_batch_size(n, "n")
    check_positive(clip, "clip")
    if not sigma_dp >= 0:
        raise ValueError(f"sigma_dp must be >= 0, got {sigma_dp}")
    if not 0.0 <= shrinkage <= 1.0:
        raise ValueError(f"shrinkage must be in [0, 1], got {shrinkage}")


def _log_lr_core(updates, target_grads, mean, gram, level, project, *, eta, n, sigma_dp, clip,
                 shrinkage):
    """Shared tail: ``project(xs)`` returns ``W^T xs`` (B, m, k) for ``xs`` (B, d, k)."""
    d = updates.shape[-1]
    s = (sigma_dp * clip / n) ** 2
    N = (updates + eta * mean) / eta                    # V_a = eta^2 A_a: work with N / eta
    shifted = N + (target_grads - mean) / n
    xs = torch.stack([N, shifted], dim=-1)              # (B, d, 2)
    proj = project(xs)
    xx = (xs * xs).sum(-2)                              # (B, 2)
    lam = float(shrinkage)
    a0, a1 = 1.0 / n, (n - 1) / n**2
    q0, ld0 = woodbury_quad_logdet(gram, proj[..., :1], xx[..., :1], a0 * (1 - lam),
                                   a0 * level + s, d)
    q1, ld1 = woodbury_quad_logdet(gram, proj[..., 1:], xx[..., 1:], a1 * (1 - lam),
                                   a1 * level + s, d)
    return 0.5 * (ld0 - ld1) - 0.5 * q1[..., 0] + 0.5 * q0[..., 0]


def _inner(a: torch.Tensor) -> torch.Tensor:
    """``a a^T`` per replica; once when ``a`` is the same for every replica (stride 0)."""
    if a.stride(0) == 0:
        return a[0] @ a[0].T
    return a @ a.transpose(-1, -2)


def _sq_norms(a: torch.Tensor) -> torch.Tensor:
    """Squared row norms of ``a`` (R, m, k); once when ``a`` is shared (stride 0)."""
    if a.stride(0) == 0:
        return (a[0] * a[0]).sum(-1).expand(a.shape[0], -1)
    return (a * a).sum(-1)


def ghost_log_lr(updates: torch.Tensor, thetas: torch.Tensor, stack, ref_x: torch.Tensor,
                 ref_y: torch.Tensor, target_grads: torch.Tensor, *, eta: float, n: int,
                 sigma_dp: float, clip: float, shrinkage: float = 0.1,
                 ridge: float = 1e-4) -> torch.Tensor:
    r"""Same statistic as :func:`batched_dpsgd_log_lr` for a stack of linear layers
    (:mod:`semi_core.sgd.ghost`), without forming per-sample reference gradients.

    With clipping factors :math:`c_i = \min(1, C/\|g_i\|)` and the layer factors
    :math:`(\tilde a_{l,i}, b_{l,i})` of :func:`semi_core.sgd.ghost.ghost_parts`,

    .. math::

       (GG^\top)_{ij} = c_ic_j\sum_l (b_{l,i}^\top b_{l,j})(\tilde a_{l,i}^\top\tilde a_{l,j}),
       \quad (Gx)_i = c_i\sum_l b_{l,i}^\top X_l\tilde a_{l,i},\quad
       G_c = HG,\ H = I - \tfrac1m\mathbf 1\mathbf 1^\top,

    i.e. :math:`O(m^2\sum_l(\mathrm{in}_l+\mathrm{out}_l))` per game instead of
    :math:`O(m^2 d)`. ``thetas`` (B, d) are the parameters :math:`\theta_{\tau-1}` at which
    the reference gradients are taken; ``ref_x``, ``ref_y`` the reference data (shared).
    """
    _check_lr_args(eta, n, clip, sigma_dp, shrinkage)
    B, d = thetas.shape
    m = ref_x.shape[0]
    if m < 2:
        raise ValueError("need at least m=2 reference gradients")
    acts, backs = ghost_parts(stack, thetas, ref_x, ref_y, shared=True)
    norm2 = sum((b * b).sum(-1) * _sq_norms(a) for a, b in zip(acts, backs, strict=True))
    c = clip / torch.clamp(torch.sqrt(norm2), min=clip)               # (B, m)
    raw = None                                                        # G G^T, in place
    for a, b in zip(acts, backs, strict=True):
        term = (b @ b.transpose(-1, -2)).mul_(_inner(a))
        raw = term if raw is None else raw.add_(term)
    raw.mul_(c.unsqueeze(-1)).mul_(c.unsqueeze(-2))
    rowmean = raw.mean(-1, keepdim=True)
    total = rowmean.mean(-2, keepdim=True)
    gram = raw.sub_(rowmean).sub_(rowmean.transpose(-1, -2)).add_(total).div_(m - 1)
    # gram = H G G^T H / (m-1)
    nu = gram.diagonal(dim1=-2, dim2=-1).sum(-1) / d
    level = (float(shrinkage) + float(ridge)) * torch.where(nu > 0, nu, torch.ones_like(nu))
    bc = [b * c.unsqueeze(-1) for b in backs]                         # clipped factors
    mean = torch.empty(B, d, dtype=thetas.dtype)
    for lay, a, b in zip(stack.trainable, acts, bc, strict=True):
        g = torch.einsum("bmo,bmi->boi", b, a) / m
        mean[:, lay.w_slice] = g[..., :-1].reshape(B, -1)
        mean[:, lay.b_slice] = g[..., -1]

    def project(xs):
        k = xs.shape[-1]
        gx = 0
        for lay, a, b in zip(stack.trainable, acts, bc, strict=True):
            mod = lay.module
            X = torch.cat([xs[:, lay.w_slice].reshape(B, mod.out_features, mod.in_features, k),
                           xs[:, lay.b_slice].reshape(B, mod.out_features, 1, k)], dim=2)
            gx = gx + torch.einsum("bmo,boik,bmi->bmk", b, X, a)
        return (gx - gx.mean(1, keepdim=True)) / (m - 1) ** 0.5

    return _log_lr_core(updates, target_grads, mean, gram, level, project, eta=eta, n=n,
                        sigma_dp=sigma_dp, clip=clip, shrinkage=shrinkage)


def ghost_grads(stack, thetas: torch.Tensor, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    r"""Per-sample gradients ``(R, n, d)`` of a stack of linear layers at ``R`` parameter
    vectors ``thetas`` on shared samples ``x`` ``(n, in)``, from the layer factors of
    :func:`semi_core.sgd.ghost.ghost_parts`: :math:`\nabla_{W_l} = b_l\tilde a_l^\top`
    (same numbers as :meth:`~semi_core.sgd.grads.FunctionalModel.per_sample_grads_batched`
    without ``vmap``; the DP-SGD statistics use it for the target gradient at every step).
    """
    acts, backs = ghost_parts(stack, thetas, x, y, shared=True)
    R, n = thetas.shape[0], x.shape[0]
    out = torch.empty(R, n, thetas.shape[1], dtype=thetas.dtype)
    for lay, a, b in zip(stack.trainable, acts, backs, strict=True):
        g = b.unsqueeze(-1) * a.unsqueeze(-2)                      # (R, n, out, in+1)
        out[..., lay.w_slice] = g[..., :-1].reshape(R, n, -1)
        out[..., lay.b_slice] = g[..., -1]
    return out


def batched_mahalanobis(ref_grads: torch.Tensor, grads: torch.Tensor, *, shrinkage: float = 0.1,
                        ridge: float = 1e-4) -> torch.Tensor:
    """Gradient Mahalanobis distances
    :math:`(g-\\hat\\mu_g)^\\top\\hat\\Sigma_g^{-1}(g-\\hat\\mu_g)`.

    ``ref_grads`` is ``(m, d)``, ``grads`` is ``(k, d)``; returns ``(k,)`` (Woodbury solve).
    """
    m, d = ref_grads.shape
    mean, gc, gram, level = shrunk_parts(ref_grads, float(shrinkage), float(ridge))
    x = (grads - mean).T                                # (d, k)
    proj = (gc @ x / (m - 1) ** 0.5).unsqueeze(0)
    quad, _ = woodbury_quad_logdet(gram.unsqueeze(0), proj, (x * x).sum(0).unsqueeze(0),
                                   1 - float(shrinkage), level.reshape(1), d)
    return quad[0]
