r"""The DP-SGD log-LR across a gap of ``k`` training steps (checkpoints saved every ``k`` steps).

Between two saved checkpoints :math:`\theta_a` and :math:`\theta_b`, :math:`b = a + k`, the
``k`` unobserved DP-SGD steps are
:math:`\theta_s = \theta_{s-1} - \eta(\bar g_s + \xi_s)` with the clipped batch mean
:math:`\bar g_s` of ``n`` per-sample gradients and :math:`\xi_s\sim\mathcal N(0, sI)`,
:math:`s = (\sigma_{DP}C/n)^2` (SeMI seed §4.1-4.2 for one step). **Assumption (frozen
gradients):** at every intermediate step :math:`s\in(a, b]` the clipped per-sample gradients
have the law they have at :math:`\theta_a` -- mean :math:`\mu_g`, covariance :math:`\Sigma_g`,
the target's clipped gradient :math:`g^*` -- and the batches of different steps are
independent. Then, with :math:`N_k = \Delta/\eta + k\mu_g`, :math:`\Delta = \theta_b-\theta_a`
and the target inserted at exactly one step of the gap under :math:`H_1`,

.. math::

   N_k \mid H_0 \sim \mathcal N\big(0,\ \tfrac kn\Sigma_g + k s I\big),\qquad
   N_k \mid H_1 \sim \mathcal N\big(-\delta_g/n,\ \tfrac{kn-1}{n^2}\Sigma_g + k s I\big),

(``k`` independent Gaussian steps add their means and covariances; under :math:`H_1` one of
them has the target's gradient in place of a random one:
:math:`(k-1)(\Sigma_g/n + sI) + ((n-1)\Sigma_g/n^2 + sI)`), :math:`\delta_g = g^*-\mu_g`. The
log-LR is the two-covariance Gaussian log-LR of these laws
(:math:`A_0 = a_0\hat\Sigma_g + ksI`, :math:`A_1 = a_1\hat\Sigma_g + ksI`,
:math:`a_0 = k/n`, :math:`a_1 = (kn-1)/n^2`):

.. math::

   \log\mathrm{LR}_k = \tfrac12\log\frac{\det A_0}{\det A_1}
   - \tfrac12 x_1^\top A_1^{-1}x_1 + \tfrac12 x_0^\top A_0^{-1}x_0,\qquad
   x_0 = N_k,\ x_1 = N_k + \delta_g/n.

At ``k = 1`` it is the per-step statistic (:func:`semi_core.sgd.batched.batched_dpsgd_log_lr`).
It is **exact** (the true likelihood ratio of the gap's update) when the per-sample gradient
law does not depend on :math:`\theta` -- gradients that are fixed functions of the record, as
in a linear loss, or a Dirac gradient canary with a constant batch-gradient law -- and the
Gaussian batch-gradient model holds; otherwise it is the frozen-gradient approximation, whose
error grows with :math:`k\eta` times the gradients' Lipschitz constant. Its use as an audit
score is valid whatever the error (a certified bound needs a fixed score, not a correct one);
only the power changes. The symbolic twin is :mod:`semi_core.symbolic.sgd_stride`.

Reference statistics are kept in one of two forms of the same shrunk covariance
:math:`\hat\Sigma_g = (1-\lambda)S + (\lambda+r)\nu I` (:mod:`semi_core.sgd.gradstats`):
low-rank (an :math:`m\times m` Gram matrix; :class:`semi_core.sgd.batched.ReferenceStats`) when
:math:`m \le d`, or dense :math:`d\times d` (:class:`DenseMoments`, built by streaming the
reference gradients in chunks, memory :math:`O(d^2 + cd)` whatever :math:`m`) when
:math:`m > d`: the memory is never quadratic in the number of reference records.
Float64 throughout.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from semi_core._validation import check_batch_size, check_int, check_positive

from .batched import ReferenceStats
from .gradstats import woodbury_factors, woodbury_quad

__all__ = ["stride_coefficients", "DenseMoments", "streamed_moments", "stride_log_lr_dense",
           "stride_log_lr_lowrank"]


def stride_coefficients(k, n: int, sigma_dp: float, clip: float) -> tuple:
    r"""Coefficients :math:`(a_0, a_1, ks)` of the gap's covariances (module docstring).

    .. math:: a_0 = k/n,\qquad a_1 = (kn-1)/n^2,\qquad ks = k(\sigma_{DP}C/n)^2

    Parameters
    ----------
    k : int
        Training steps in the gap, ``>= 1`` (any size: only :math:`k` as a float enters).
    n, sigma_dp, clip : int, float, float
        Batch size (``>= 2``), noise multiplier (``>= 0``), clipping norm (``> 0``).

    Returns
    -------
    tuple of float
        ``(a0, a1, noise)``.
    """
    n = check_batch_size(n, "n")
    check_positive(clip, "clip")
    if not sigma_dp >= 0:
        raise ValueError(f"sigma_dp must be >= 0, got {sigma_dp}")
    kf = float(check_int(k, "k", minimum=1))
    return kf / n, (kf * n - 1) / n**2, kf * (sigma_dp * clip / n) ** 2


@dataclass
class DenseMoments:
    r"""Mean and sample covariance of clipped reference gradients at ``P`` points (dense).

    Attributes
    ----------
    mean : Tensor (P, d)
        :math:`\hat\mu_g`.
    cov : Tensor (P, d, d)
        :math:`S = \frac1{m-1}\sum_i (g_i-\hat\mu_g)(g_i-\hat\mu_g)^\top`.
    m : int
        Number of reference gradients.
    """

    mean: torch.Tensor
    cov: torch.Tensor
    m: int

    def level(self, shrinkage: float, ridge: float) -> torch.Tensor:
        r""":math:`(\lambda+r)\nu`, :math:`\nu = \mathrm{tr}S/d` (1 where :math:`S = 0`), as in
        :func:`semi_core.sgd.gradstats.shrunk_parts`.

        Parameters
        ----------
        shrinkage : float
            Weight :math:`\lambda` of the identity target, in [0, 1].
        ridge : float
            Relative ridge r, >= 0.

        Returns
        -------
        torch.Tensor
            The identity level per point.
        """
        d = self.cov.shape[-1]
        nu = self.cov.diagonal(dim1=-2, dim2=-1).sum(-1) / d
        nu = torch.where(nu > 0, nu, torch.ones_like(nu))
        return (float(shrinkage) + float(ridge)) * nu


def streamed_moments(grads: Callable[[int, int], torch.Tensor], m: int, chunk: int
                     ) -> DenseMoments:
    r"""Mean and covariance of ``m`` gradients produced in chunks, in one pass.

    ``grads(lo, hi)`` returns the gradients of reference rows ``lo:hi`` at ``P`` points,
    ``(P, hi-lo, d)``. Chunks are merged with the pairwise update of Chan, Golub and LeVeque
    (centred sums of squares, no cancellation of raw second moments):

    .. math::

       \bar g = \bar g_A + (\bar g_B - \bar g_A)\tfrac{m_B}{m},\qquad
       M = M_A + M_B + \tfrac{m_Am_B}{m}(\bar g_B - \bar g_A)(\bar g_B - \bar g_A)^\top,

    :math:`S = M/(m-1)`. Memory: ``P`` :math:`d\times d` matrices and one chunk.

    Parameters
    ----------
    grads : callable
        ``grads(lo, hi) -> Tensor (P, hi - lo, d)``.
    m : int
        Number of rows, ``>= 2``.
    chunk : int
        Rows per call, ``>= 1``.

    Returns
    -------
    DenseMoments
    """
    m = check_int(m, "m", minimum=2)
    chunk = check_int(chunk, "chunk", minimum=1)
    mean = scatter = None
    count = 0
    for lo in range(0, m, chunk):
        hi = min(m, lo + chunk)
        g = grads(lo, hi)
        mb = hi - lo
        mu_b = g.mean(dim=-2)
        gc = g - mu_b.unsqueeze(-2)
        m_b = gc.transpose(-1, -2) @ gc
        if mean is None:
            mean, scatter = mu_b, m_b
        else:
            diff = mu_b - mean
            tot = count + mb
            mean = mean + diff * (mb / tot)
            scatter = scatter + m_b
            scatter += (count * mb / tot) * (diff.unsqueeze(-1) * diff.unsqueeze(-2))
        count += mb
        del g, gc, m_b
    return DenseMoments(mean=mean, cov=scatter / (m - 1), m=m)


def stride_log_lr_dense(updates: torch.Tensor, target_grads: torch.Tensor,
                        moments: DenseMoments, *, k, eta: float, n: int, sigma_dp: float,
                        clip: float, shrinkage: float = 0.1, ridge: float = 1e-4
                        ) -> torch.Tensor:
    r"""The gap log-LR (module docstring) from dense moments, ``G`` games at their own points.

    .. math::

       \log\mathrm{LR}_k = \sum_i\log (L_0)_{ii} - \sum_i\log (L_1)_{ii}
       - \tfrac12\|L_1^{-1}x_1\|^2 + \tfrac12\|L_0^{-1}x_0\|^2,\qquad A_h = L_hL_h^\top

    with :math:`A_h = \alpha_h S + \beta_h I`, :math:`\alpha_h = a_h(1-\lambda)`,
    :math:`\beta_h = a_h(\lambda+r)\nu + ks` (two batched ``d x d`` Cholesky factors per
    game; no inverse).

    Parameters
    ----------
    updates : Tensor (G, d)
        :math:`\theta_b - \theta_a` per game.
    target_grads : Tensor (G, d)
        Clipped target gradient at :math:`\theta_a`.
    moments : DenseMoments
        At each game's :math:`\theta_a` (``P = G``) or one point for all (``P = 1``).
    k : int
        Training steps in the gap (the same for every game).
    eta, n, sigma_dp, clip, shrinkage, ridge
        As in :func:`semi_core.sgd.batched.batched_dpsgd_log_lr`.

    Returns
    -------
    Tensor (G,)
    """
    G, d = updates.shape
    a0, a1, noise = stride_coefficients(k, n, sigma_dp, clip)
    check_positive(eta, "eta")
    mean = moments.mean.expand(G, -1)
    level = moments.level(shrinkage, ridge).expand(G)
    x0 = updates / eta + k * mean
    x1 = x0 + (target_grads - mean) / n
    lam = float(shrinkage)
    eye = torch.eye(d, dtype=updates.dtype, device=updates.device)
    cov = moments.cov.expand(G, -1, -1)
    out = torch.zeros(G, dtype=updates.dtype, device=updates.device)
    for a, x, sign in ((a0, x0, 1.0), (a1, x1, -1.0)):
        A = (a * (1 - lam)) * cov + (a * level + noise).reshape(-1, 1, 1) * eye
        chol, info = torch.linalg.cholesky_ex(A)
        if bool((info != 0).any()):
            raise ValueError("a gap covariance a S + b I is not positive definite (non-finite "
                             "reference gradients?)")
        z = torch.linalg.solve_triangular(chol, x.unsqueeze(-1), upper=False)[..., 0]
        logdet_half = torch.log(chol.diagonal(dim1=-2, dim2=-1)).sum(-1)
        out += sign * (logdet_half + 0.5 * (z * z).sum(-1))
    return out


def stride_log_lr_lowrank(updates: torch.Tensor, target_grads: torch.Tensor,
                          stats: ReferenceStats, *, k, eta: float, n: int, sigma_dp: float,
                          clip: float, shrinkage: float = 0.1) -> torch.Tensor:
    r"""The gap log-LR (module docstring) from low-rank reference statistics (Woodbury).

    Same statistic as :func:`stride_log_lr_dense`, with
    :math:`A_h = \alpha_h WW^\top + \beta_h I` factorised through the :math:`m\times m`
    capacitance matrices (:func:`semi_core.sgd.gradstats.woodbury_factors`); at ``k = 1`` it is
    :func:`semi_core.sgd.batched.log_lr_from_stats`.

    Parameters
    ----------
    updates, target_grads : Tensor (G, d)
    stats : ReferenceStats
        ``P = G`` points or ``P = 1``.
    k : int
    eta, n, sigma_dp, clip, shrinkage
        As in :func:`stride_log_lr_dense`.

    Returns
    -------
    Tensor (G,)
    """
    G, d = updates.shape
    P = stats.points
    if P not in (1, G):
        raise ValueError(f"stats must hold 1 or {G} points, got {P}")
    a0, a1, noise = stride_coefficients(k, n, sigma_dp, clip)
    check_positive(eta, "eta")
    mean = stats.mean if P == G else stats.mean.expand(G, -1)
    x0 = updates / eta + k * mean
    x1 = x0 + (target_grads - mean) / n
    xs = torch.stack([x0, x1], dim=-1)                  # (G, d, 2)
    proj = stats.project(xs)                            # (G, m, 2)
    xx = (xs * xs).sum(-2)                              # (G, 2)
    lam = float(shrinkage)
    alphas = (a0 * (1 - lam), a1 * (1 - lam))
    betas = torch.stack([a0 * stats.level + noise, a1 * stats.level + noise])   # (2, P)
    chol, logdet = woodbury_factors(stats.gram, alphas, betas, d)
    q0 = woodbury_quad(chol[0], proj[..., 0], xx[:, 0], alphas[0], betas[0])
    q1 = woodbury_quad(chol[1], proj[..., 1], xx[:, 1], alphas[1], betas[1])
    return 0.5 * (logdet[0] - logdet[1]) - 0.5 * q1 + 0.5 * q0
