"""Loss-like scores of the candidates (low = member): cross-entropy and offline LiRA as a loss.
"""

from __future__ import annotations

import numpy as np
import torch

__all__ = ["lira_offline_loss"]


def _ce_losses(fm, thetas, x, y):
    """Cross-entropy of per-replica points: thetas (R, d), x (R, N, p) -> (R, N)."""
    with torch.no_grad():
        return torch.func.vmap(fm.losses)(thetas, x, y)


def _phi(loss: np.ndarray) -> np.ndarray:
    r"""Logit-scaled confidence from cross-entropy: :math:`\phi=\log p-\log(1-p)`,
    :math:`p=e^{-\ell}`, i.e. :math:`-\ell-\log(-\mathrm{expm1}(-\ell))`."""
    ell = np.maximum(loss, 1e-300)  # a loss of exactly 0 would be p = 1: phi = +inf
    return -ell - np.log(-np.expm1(-ell))


def lira_offline_loss(phi_target, phi_ref) -> np.ndarray:
    r"""Offline LiRA as a loss-like score (low = member).

    .. math::

       \ell_{\mathrm{LiRA}}(x) = -\log\Phi\!\Big(\frac{\phi(x)-\hat\mu_{\mathrm{out}}(x)}
       {\hat\sigma_{\mathrm{out}}}\Big) \;\ge 0

    with :math:`\hat\mu_{\mathrm{out}}(x)` the mean of :math:`\phi` over the reference (OUT)
    models and :math:`\hat\sigma^2_{\mathrm{out}}` the per-example variances averaged over
    examples: minus :func:`semi_core.attacks.whitebox.scores.lira_offline` with
    ``variance="global"`` (the project's one LiRA; every reference model is OUT here).

    Parameters
    ----------
    phi_target : array_like (..., N) with N = ``phi_ref.shape[1]`` values in all.
    phi_ref : array_like (M, N), ``M >= 2`` reference models.

    Returns
    -------
    ndarray
        The score, shape of ``phi_target`` (>= 0).
    """
    from semi_core.attacks.whitebox.scores import lira_offline

    ref = np.asarray(phi_ref, dtype=float)
    if ref.ndim != 2 or ref.shape[0] < 2:
        raise ValueError(f"phi_ref must be (M >= 2, N), got shape {ref.shape}")
    tgt = np.asarray(phi_target, dtype=float)
    if tgt.size != ref.shape[1]:
        raise ValueError(f"phi_target has {tgt.size} values, phi_ref has N = {ref.shape[1]}")
    if not ref.var(0, ddof=1).mean() > 0:
        raise ValueError("reference models give identical confidences: the OUT variance is 0")
    out = lira_offline(tgt.ravel(), ref.T, np.zeros(ref.T.shape, dtype=bool), variance="global")
    return -out.reshape(tgt.shape)
