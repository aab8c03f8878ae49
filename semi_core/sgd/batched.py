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

from collections.abc import Callable
from dataclasses import dataclass

import torch

from semi_core._validation import check_batch_size, check_positive

from .ghost import ghost_parts
from .gradstats import shrunk_parts, woodbury_factors, woodbury_quad, woodbury_quad_logdet

__all__ = ["batched_dpsgd_log_lr", "ghost_log_lr", "ghost_grads", "batched_mahalanobis",
           "ReferenceStats", "dense_reference_stats", "ghost_reference_stats",
           "log_lr_from_stats"]


@dataclass
class ReferenceStats:
    r"""Shrunk reference-gradient statistics at ``P`` parameter points (float64, torch).

    Attributes
    ----------
    mean : Tensor (P, d)
        :math:`\hat\mu_g` per point.
    gram : Tensor (P, m, m)
        :math:`W^\top W = G_cG_c^\top/(m-1)` per point.
    level : Tensor (P,)
        :math:`(\lambda+r)\nu` per point (:func:`~semi_core.sgd.gradstats.shrunk_parts`).
    project : callable
        ``project(xs)``: :math:`W^\top x` ``(G, m, k)`` for ``xs`` ``(G, d, k)`` -- one
        point per game (``G = P``) or one point shared by all games (``P = 1``).
    """

    mean: torch.Tensor
    gram: torch.Tensor
    level: torch.Tensor
    project: Callable[[torch.Tensor], torch.Tensor]

    @property
    def points(self) -> int:
        return int(self.gram.shape[0])


def dense_reference_stats(ref_grads: torch.Tensor, *, shrinkage: float = 0.1,
                          ridge: float = 1e-4) -> ReferenceStats:
    """:class:`ReferenceStats` of clipped reference gradients ``(P, m, d)``, ``m >= 2``.

    Parameters
    ----------
    ref_grads : torch.Tensor, shape (P, m, d)
        Clipped reference gradients at P points, m >= 2.
    shrinkage : float
        Weight of the identity target, in [0, 1].
    ridge : float
        Relative ridge, >= 0.

    Returns
    -------
    ReferenceStats
        Means, centred gradients' Gram matrices and identity levels.
    """
    m = ref_grads.shape[-2]
    if m < 2:
        raise ValueError("need at least m=2 reference gradients")
    mean, gc, gram, level = shrunk_parts(ref_grads, float(shrinkage), float(ridge))

    def project(xs):
        w = gc if gc.shape[0] == xs.shape[0] else gc.expand(xs.shape[0], -1, -1)
        return w @ xs / (m - 1) ** 0.5

    return ReferenceStats(mean=mean, gram=gram, level=level, project=project)


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
        Clipped reference gradients at each game's :math:`\\theta_{\\tau-1}`, ``m >= 2``
        (or ``(1, m, d)``: one point shared by every game).
    target_grads : Tensor (B, d)
        Clipped target gradient at :math:`\\theta_{\\tau-1}`.
    eta, n, sigma_dp, clip, shrinkage, ridge
        Learning rate, batch size (``>= 2``), noise multiplier (``>= 0``), clipping norm
        (only enters through :math:`\\sigma_{DP}C`), shrinkage in [0, 1], relative ridge.

    Returns
    -------
    torch.Tensor, shape (B,)
        The log-LR of each game.
    """
    _check_lr_args(eta, n, clip, sigma_dp, shrinkage)
    stats = dense_reference_stats(ref_grads, shrinkage=shrinkage, ridge=ridge)
    return log_lr_from_stats(updates, target_grads, stats, eta=eta, n=n, sigma_dp=sigma_dp,
                             clip=clip, shrinkage=shrinkage)


def _check_lr_args(eta, n, clip, sigma_dp, shrinkage):
    check_positive(eta, "eta")
    check_batch_size(n, "n")
    check_positive(clip, "clip")
    if not sigma_dp >= 0:
        raise ValueError(f"sigma_dp must be >= 0, got {sigma_dp}")
    if not 0.0 <= shrinkage <= 1.0:
        raise ValueError(f"shrinkage must be in [0, 1], got {shrinkage}")


def log_lr_from_stats(updates: torch.Tensor, target_grads: torch.Tensor,
                      stats: ReferenceStats, *, eta: float, n: int, sigma_dp: float,
                      clip: float, shrinkage: float = 0.1) -> torch.Tensor:
    r"""The DP-SGD log-LR of :func:`batched_dpsgd_log_lr` for ``G`` games from the reference
    statistics at their points (``stats.points == G``, or ``1``: every game at one point,
    e.g. the common :math:`\theta_0` at step 1, factorised once).

    With :math:`\tilde N = N/\eta = \Delta/\eta + \hat\mu_g` and
    :math:`V_a = \eta^2 A_a`, :math:`A_a = \alpha_a WW^\top + \beta_a I`,
    :math:`\alpha_a = a(1-\lambda)`, :math:`\beta_a = a(\lambda+r)\nu + s`,
    :math:`s = (\sigma_{DP}C/n)^2`,

    .. math::

       \log\mathrm{LR} = \tfrac12(\log\det A_0 - \log\det A_1)
       - \tfrac12 x_1^\top A_1^{-1}x_1 + \tfrac12 x_0^\top A_0^{-1}x_0,\quad
       x_0 = \tilde N,\ x_1 = \tilde N + (g^* - \hat\mu_g)/n

    (the :math:`\eta^2` factors cancel in the determinant ratio and the quadratic forms);
    both capacitance matrices of a point are factorised in one batched call
    (:func:`~semi_core.sgd.gradstats.woodbury_factors`).

    Parameters
    ----------
    updates : torch.Tensor, shape (G, d)
        :math:`\theta_\tau-\theta_{\tau-1}` per game.
    target_grads : torch.Tensor, shape (G, d)
        Clipped target gradient per game.
    stats : ReferenceStats
        Reference statistics at G points or at one shared point.
    eta : float
        Learning rate, > 0.
    n : int
        Batch size, >= 2.
    sigma_dp : float
        Noise multiplier, >= 0.
    clip : float
        Clipping norm, > 0.
    shrinkage : float
        Weight of the identity target, in [0, 1].

    Returns
    -------
    torch.Tensor, shape (G,)
        The log-LR of each game.
    """
    _check_lr_args(eta, n, clip, sigma_dp, shrinkage)
    G, d = updates.shape
    P = stats.points
    if P not in (1, G):
        raise ValueError(f"stats must hold 1 or {G} points, got {P}")
    s = (sigma_dp * clip / n) ** 2
    mean = stats.mean if P == G else stats.mean.expand(G, -1)
    N = updates / eta + mean                            # V_a = eta^2 A_a: work with N / eta
    shifted = N + (target_grads - mean) / n
    xs = torch.stack([N, shifted], dim=-1)              # (G, d, 2)
    proj = stats.project(xs)                            # (G, m, 2)
    xx = (xs * xs).sum(-2)                              # (G, 2)
    lam = float(shrinkage)
    a = (1.0 / n, (n - 1) / n**2)
    alphas = tuple(ai * (1 - lam) for ai in a)
    betas = torch.stack([ai * stats.level + s for ai in a])        # (2, P)
    chol, logdet = woodbury_factors(stats.gram, alphas, betas, d)  # (2, P, m, m), (2, P)
    q0 = woodbury_quad(chol[0], proj[..., 0], xx[:, 0], alphas[0], betas[0])
    q1 = woodbury_quad(chol[1], proj[..., 1], xx[:, 1], alphas[1], betas[1])
    return 0.5 * (logdet[0] - logdet[1]) - 0.5 * q1 + 0.5 * q0


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


def ghost_reference_stats(stack, thetas: torch.Tensor, ref_x: torch.Tensor,
                          ref_y: torch.Tensor, *, clip: float, shrinkage: float = 0.1,
                          ridge: float = 1e-4) -> ReferenceStats:
    r""":class:`ReferenceStats` of the clipped reference gradients of a stack of linear layers
    (:mod:`semi_core.sgd.ghost`) at ``P`` points ``thetas`` ``(P, d)``, without forming
    per-sample gradients.

    With clipping factors :math:`c_i = \min(1, C/\|g_i\|)` and the layer factors
    :math:`(\tilde a_{l,i}, b_{l,i})` of :func:`semi_core.sgd.ghost.ghost_parts`
    (:math:`\tilde b_{l,i} = c_ib_{l,i}`),

    .. math::

       (GG^\top)_{ij} = \sum_l (\tilde b_{l,i}^\top \tilde b_{l,j})
       (\tilde a_{l,i}^\top\tilde a_{l,j}),
       \quad (Gx)_i = \sum_l \tilde b_{l,i}^\top X_l\tilde a_{l,i},\quad
       G_c = HG,\ H = I - \tfrac1m\mathbf 1\mathbf 1^\top,

    i.e. :math:`O(m^2\sum_l(\mathrm{in}_l+\mathrm{out}_l))` per point instead of
    :math:`O(m^2 d)`. With one point shared by ``G`` games the projection is one product of
    the ``(m, d)`` per-sample gradients with the ``G`` vectors.

    Parameters
    ----------
    stack : LinearStack
        The model's linear layers (:func:`semi_core.sgd.ghost.linear_stack`).
    thetas : torch.Tensor, shape (P, d)
        Points at which the reference gradients are taken.
    ref_x : torch.Tensor, shape (m, ...)
        Reference inputs, m >= 2.
    ref_y : torch.Tensor, shape (m,)
        Reference targets.
    clip : float
        Clipping norm, > 0.
    shrinkage : float
        Weight of the identity target, in [0, 1].
    ridge : float
        Relative ridge, >= 0.

    Returns
    -------
    ReferenceStats
        The statistics at the P points.
    """
    P, d = thetas.shape
    m = ref_x.shape[0]
    if m < 2:
        raise ValueError("need at least m=2 reference gradients")
    acts, backs = ghost_parts(stack, thetas, ref_x, ref_y, shared=True)
    norm2 = sum((b * b).sum(-1) * _sq_norms(a) for a, b in zip(acts, backs, strict=True))
    c = clip / torch.clamp(torch.sqrt(norm2), min=clip)               # (P, m)
    bc = [b * c.unsqueeze(-1) for b in backs]                         # clipped factors
    raw = None                                                        # G G^T, in place
    for a, b in zip(acts, bc, strict=True):
        term = (b @ b.transpose(-1, -2)).mul_(_inner(a))
        raw = term if raw is None else raw.add_(term)
    # gram = H G G^T H / (m-1) = (raw - r 1^T - 1 r^T + t 1 1^T) / (m-1) with row means r
    # and grand mean t: the rank-2 correction [r, 1][1, r - t]^T in one pass (baddbmm)
    r = raw.mean(-1)                                                  # (P, m)
    t = r.mean(-1, keepdim=True)
    ones = torch.ones_like(r)
    gram = torch.baddbmm(raw, torch.stack([r, ones], -1), torch.stack([ones, r - t], 1),
                         beta=1.0 / (m - 1), alpha=-1.0 / (m - 1))
    nu = gram.diagonal(dim1=-2, dim2=-1).sum(-1) / d
    level = (float(shrinkage) + float(ridge)) * torch.where(nu > 0, nu, torch.ones_like(nu))
    mean = torch.empty(P, d, dtype=thetas.dtype, device=thetas.device)
    for lay, a, b in zip(stack.trainable, acts, bc, strict=True):
        # a layer input shared by every point (stride 0): one product, no expanded copy
        g = (b.transpose(-1, -2) @ a[0] if a.stride(0) == 0
             else torch.einsum("bmo,bmi->boi", b, a)) / m
        mean[:, lay.w_slice] = g[..., :-1].reshape(P, -1)
        mean[:, lay.b_slice] = g[..., -1]

    def project(xs):
        G, k = xs.shape[0], xs.shape[-1]
        gx = 0
        for lay, a, b in zip(stack.trainable, acts, bc, strict=True):
            o, i = lay.module.out_features, lay.module.in_features
            X = torch.cat([xs[:, lay.w_slice].reshape(G, o, i, k),
                           xs[:, lay.b_slice].reshape(G, o, 1, k)], dim=2)
            if P == G and a.stride(0) == 0:
                # the order opt_einsum picks for "bmo,boik,mi->bmk" (X with the shared inputs
                # first, one product), spelled out: the path search cost as much as the work
                u = (X.permute(0, 1, 3, 2).reshape(G, -1, i + 1) @ a[0].T).reshape(G, o, k, m)
                gx = gx + torch.einsum("bmo,bokm->bmk", b, u)
            elif P == G:
                gx = gx + torch.einsum("bmo,boik,bmi->bmk", b, X, a)
            else:  # one point: its (m, o(i+1)) per-sample gradients times all G vectors
                rows = (b[0].unsqueeze(-1) * a[0].unsqueeze(-2)).reshape(m, -1)
                prod = rows @ X.permute(1, 2, 0, 3).reshape(-1, G * k)
                gx = gx + prod.reshape(m, G, k).transpose(0, 1)
        return (gx - gx.mean(1, keepdim=True)) / (m - 1) ** 0.5

    return ReferenceStats(mean=mean, gram=gram, level=level, project=project)


def ghost_log_lr(updates: torch.Tensor, thetas: torch.Tensor, stack, ref_x: torch.Tensor,
                 ref_y: torch.Tensor, target_grads: torch.Tensor, *, eta: float, n: int,
                 sigma_dp: float, clip: float, shrinkage: float = 0.1,
                 ridge: float = 1e-4) -> torch.Tensor:
    r"""Same statistic as :func:`batched_dpsgd_log_lr` for a stack of linear layers, from
    :func:`ghost_reference_stats` (no per-sample reference gradients). ``thetas`` (B, d) are
    the parameters :math:`\theta_{\tau-1}` at which the reference gradients are taken (or
    ``(1, d)``: one point for every game); ``ref_x``, ``ref_y`` the reference data (shared).

    Parameters
    ----------
    updates : torch.Tensor, shape (B, d)
        :math:`\theta_\tau-\theta_{\tau-1}` per game.
    thetas : torch.Tensor, shape (B, d) or (1, d)
        :math:`\theta_{\tau-1}` per game, or one shared point.
    stack : LinearStack
        The model's linear layers.
    ref_x : torch.Tensor, shape (m, ...)
        Reference inputs.
    ref_y : torch.Tensor, shape (m,)
        Reference targets.
    target_grads : torch.Tensor, shape (B, d)
        Clipped target gradient per game.
    eta : float
        Learning rate, > 0.
    n : int
        Batch size, >= 2.
    sigma_dp : float
        Noise multiplier, >= 0.
    clip : float
        Clipping norm, > 0.
    shrinkage : float
        Weight of the identity target, in [0, 1].
    ridge : float
        Relative ridge, >= 0.

    Returns
    -------
    torch.Tensor, shape (B,)
        The log-LR of each game.
    """
    _check_lr_args(eta, n, clip, sigma_dp, shrinkage)
    stats = ghost_reference_stats(stack, thetas, ref_x, ref_y, clip=clip, shrinkage=shrinkage,
                                  ridge=ridge)
    return log_lr_from_stats(updates, target_grads, stats, eta=eta, n=n, sigma_dp=sigma_dp,
                             clip=clip, shrinkage=shrinkage)


def ghost_grads(stack, thetas: torch.Tensor, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    r"""Per-sample gradients ``(R, n, d)`` of a stack of linear layers at ``R`` parameter
    vectors ``thetas`` on shared samples ``x`` ``(n, in)``, from the layer factors of
    :func:`semi_core.sgd.ghost.ghost_parts`: :math:`\nabla_{W_l} = b_l\tilde a_l^\top`
    (same numbers as :meth:`~semi_core.sgd.grads.FunctionalModel.per_sample_grads_batched`
    without ``vmap``; the DP-SGD statistics use it for the target gradient at every step).

    Parameters
    ----------
    stack : LinearStack
        The model's linear layers.
    thetas : torch.Tensor, shape (R, d)
        Parameter vectors.
    x : torch.Tensor, shape (n, in)
        Shared inputs.
    y : torch.Tensor, shape (n,)
        Shared targets.

    Returns
    -------
    torch.Tensor, shape (R, n, d)
        Per-sample gradients at each parameter vector.
    """
    acts, backs = ghost_parts(stack, thetas, x, y, shared=True)
    R, n = thetas.shape[0], x.shape[0]
    out = torch.empty(R, n, thetas.shape[1], dtype=thetas.dtype, device=thetas.device)
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

    Parameters
    ----------
    ref_grads : torch.Tensor, shape (m, d)
        Reference gradients, m >= 2.
    grads : torch.Tensor, shape (k, d)
        Gradients to measure.
    shrinkage : float
        Weight of the identity target, in [0, 1].
    ridge : float
        Relative ridge, >= 0.

    Returns
    -------
    torch.Tensor, shape (k,)
        Squared Mahalanobis distances, >= 0.
    """
    m, d = ref_grads.shape
    mean, gc, gram, level = shrunk_parts(ref_grads, float(shrinkage), float(ridge))
    x = (grads - mean).T                                # (d, k)
    proj = (gc @ x / (m - 1) ** 0.5).unsqueeze(0)
    quad, _ = woodbury_quad_logdet(gram.unsqueeze(0), proj, (x * x).sum(0).unsqueeze(0),
                                   1 - float(shrinkage), level.reshape(1), d)
    return quad[0]
