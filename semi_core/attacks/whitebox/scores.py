r"""Membership scores of one trained model ("static" attacks; ``iha_parameters_vs_loss``).

Higher score = member, for every function here.

IHA (seed Eq. 8, Thm 3.2; derivation in :mod:`semi_core.symbolic.iha`)
    .. math::

        \mathrm{IHA}(\mathbf z_1)=\frac{\ell(\mathbf w,\mathbf z_1)}{1+\mu}
            -\frac1\lambda(I_1+I_2+I_3+I_4),\qquad c=\frac{\lambda\alpha}{1+\mu},

        I_1=\tfrac{1-c}{n}\|\mathbf u\|^2,\quad
        I_2=2(1-c)\,\mathbf v_0^\top\mathbf u,\quad
        I_3=\tfrac{\alpha(2-c)}{2n}\,\mathbf u^\top\mathbf H^{-1}\mathbf u,\quad
        I_4=\alpha(2-c)\,\mathbf v_0^\top\mathbf H^{-1}\mathbf u,

    with :math:`\mathbf u=\mathbf H^{-1}\nabla\ell(\mathbf w,\mathbf z_1)` and
    :math:`\mathbf v_0=\mathbf H^{-1}\nabla L_0(\mathbf w)`, :math:`\nabla L_0` the training
    gradient without the target (App. E: :math:`\nabla L_1-\nabla\ell/n` for a member).
LOSS (Yeom et al. 2018)
    :math:`-\ell(\mathbf w,\mathbf z)`.
SIF (Cohen & Giryes 2024; seed §4.1 uses the self-influence directly)
    :math:`-\nabla\ell^\top\mathbf H^{-1}\nabla\ell` (training points are fitted: small
    self-influence means member).
LiRA (Carlini et al. 2022) on the logit-scaled confidence :math:`\phi=\log\frac{p_y}{1-p_y}`
    online :math:`\log\mathcal N(\phi;\mu_{\rm in},\sigma_{\rm in}^2)-\log\mathcal N(\phi;
    \mu_{\rm out},\sigma_{\rm out}^2)`; offline :math:`\log\Phi((\phi-\mu_{\rm out})/
    \sigma_{\rm out})`; per-example or global ("fixed") variance.
RMIA (Zarifzadeh et al. 2024, "Low-cost high-power membership inference attacks", §3)
    pairwise likelihood ratio of the target model's probability of the true label
    :math:`p_\theta(x)` against population samples :math:`z` (known non-members),

    .. math::

        \mathrm{LR}_\theta(x,z)=\frac{p_\theta(x)/\Pr(x)}{p_\theta(z)/\Pr(z)},\qquad
        \mathrm{Score}(x)=\Pr_{z}\big(\mathrm{LR}_\theta(x,z)\ge\gamma\big),

    :math:`\Pr(\cdot)` the mean of :math:`p_{\theta'}(\cdot)` over the reference models
    (online: all of them, half IN); offline (OUT models only) the paper's linear correction
    :math:`\Pr(x)=\tfrac12\big((1+a)\Pr_{\rm OUT}(x)+(1-a)\big)`.
L-attack (Ye et al. 2022) and LiRA-L (seed §4.1)
    with leave-one-out reference models: the fraction of reference losses above the target's
    loss; LiRA offline on the leave-one-out confidences.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from scipy.special import expit, log_ndtr

from semi_core._validation import check_int, check_positive

__all__ = ["IHA_TERMS", "iha_terms", "iha_score", "loss_score", "sif_score", "normal_logpdf",
           "lira_online", "lira_offline", "l_attack", "lira_l", "logit_confidence", "rmia",
           "rmia_marginal"]

#: Terms of Eq. 8 (the term switches of the seed's Table 4 ablation).
IHA_TERMS = ("loss", "I1", "I2", "I3", "I4")


def _as_np(t) -> np.ndarray:
    return t.detach().cpu().numpy() if isinstance(t, torch.Tensor) else np.asarray(t, float)


def iha_terms(inv, grads: torch.Tensor, losses, *, n: int, lr: float, momentum: float,
              weight_decay: float, grad_l1: torch.Tensor | None = None, member=None,
              grad_l0: torch.Tensor | None = None) -> dict[str, np.ndarray]:
    r"""The five terms of Eq. 8 for ``k`` targets (see the module docstring).

    Parameters
    ----------
    inv : EigenInverse or CGInverse
        ``inv.solve(V)`` returns :math:`\mathbf H_\epsilon^{-1}` applied to the rows of ``V``.
    grads : Tensor, shape (k, d)
        :math:`\nabla\ell(\mathbf w,\mathbf z_j)`.
    losses : array_like, shape (k,)
    n : int
        Training-set size of the target model (the :math:`1/n` of App. E).
    lr, momentum, weight_decay : float
        :math:`\lambda>0,\ \mu\in[0,1),\ \alpha\ge0` of the target's training run.
    grad_l1, member
        Exact leave-one-out gradient (App. E): :math:`\nabla L_0=\nabla L_1-[\text{member}]\,
        \nabla\ell/n` with :math:`\nabla L_1` the mean training gradient ``(d,)``; one extra
        solve in total (linearity).
    grad_l0 : Tensor, shape (k, d), optional
        Per-target :math:`\nabla L_0` instead (the LOO-fraction variant of App. F, Table 9).

    Returns
    -------
    dict
        ``{"loss": l/(1+mu), "I1": ..., "I2": ..., "I3": ..., "I4": ...}`` as float arrays.
    """
    n = check_int(n, "n", minimum=1)
    lr = check_positive(lr, "lr")
    if not 0 <= momentum < 1:
        raise ValueError(f"momentum must be in [0, 1), got {momentum!r}")
    if not (weight_decay >= 0 and math.isfinite(weight_decay)):
        raise ValueError(f"weight_decay must be finite and >= 0, got {weight_decay!r}")
    if grads.ndim != 2:
        raise ValueError(f"grads must be (k, d), got shape {tuple(grads.shape)}")
    k = grads.shape[0]
    losses = _as_np(losses).reshape(-1)
    if losses.shape != (k,):
        raise ValueError(f"losses must have shape ({k},), got {losses.shape}")
    u = inv.solve(grads)
    if grad_l0 is not None:
        if tuple(grad_l0.shape) != tuple(grads.shape):
            raise ValueError(f"grad_l0 must have shape {tuple(grads.shape)}")
        v0 = inv.solve(grad_l0)
    else:
        if grad_l1 is None or member is None:
            raise ValueError("pass grad_l1 and member (exact leave-one-out) or grad_l0")
        m = torch.as_tensor(np.asarray(member, dtype=bool).reshape(-1), dtype=grads.dtype)
        if m.shape != (k,):
            raise ValueError(f"member must have shape ({k},)")
        v0 = inv.solve(grad_l1.reshape(1, -1)) - m[:, None] * u / n
    c = lr * weight_decay / (1 + momentum)
    out = {"loss": losses / (1 + momentum),
           "I1": _as_np((1 - c) / n * (u * u).sum(1)),
           "I2": _as_np(2 * (1 - c) * (v0 * u).sum(1))}
    if weight_decay > 0:
        uu = inv.solve(u)
        out["I3"] = _as_np(weight_decay / (2 * n) * (2 - c) * (u * uu).sum(1))
        out["I4"] = _as_np(weight_decay * (2 - c) * (v0 * uu).sum(1))
    else:
        out["I3"] = np.zeros(k)
        out["I4"] = np.zeros(k)
    return out


def iha_score(terms: dict[str, np.ndarray], *, lr: float, use=IHA_TERMS) -> np.ndarray:
    r"""Eq. 8 from its terms, keeping only those in ``use`` (Table 4 ablation):
    :math:`[\text{loss}]\,\ell/(1+\mu)-\frac1\lambda\sum_{I\in\text{use}}I`.

    Parameters
    ----------
    terms : dict of str to ndarray
        Eq. 8's terms per target (``loss``, ``I1`` .. ``I4``), each of shape (k,).
    lr : float
        Learning rate :math:`\lambda`, > 0.
    use : sequence of str
        Terms kept.

    Returns
    -------
    ndarray, shape (k,)
        The IHA score (higher = member).
    """
    lr = check_positive(lr, "lr")
    use = tuple(use)
    bad = [t for t in use if t not in IHA_TERMS]
    if bad or not use:
        raise ValueError(f"use must be a non-empty subset of {IHA_TERMS}, got {list(use)}")
    k = next(iter(terms.values())).shape
    s = np.zeros(k)
    for t in use:
        s = s + terms[t] if t == "loss" else s - terms[t] / lr
    return s


def loss_score(losses) -> np.ndarray:
    """LOSS attack: :math:`-\\ell(\\mathbf w,\\mathbf z)`.

    Parameters
    ----------
    losses : array_like or torch.Tensor
        Per-record losses.

    Returns
    -------
    ndarray
        Negated losses (higher = member).
    """
    return -_as_np(losses)


def sif_score(inv, grads: torch.Tensor) -> np.ndarray:
    r"""SIF: :math:`-\nabla\ell^\top\mathbf H_\epsilon^{-1}\nabla\ell` per row of ``grads``.

    Parameters
    ----------
    inv : EigenInverse or CGInverse
        The damped inverse Hessian.
    grads : torch.Tensor, shape (k, d)
        Per-record gradients.

    Returns
    -------
    ndarray, shape (k,)
        The SIF score.
    """
    return -_as_np((grads * inv.solve(grads)).sum(1))


def normal_logpdf(x, mu, sigma) -> np.ndarray:
    r""":math:`\log\mathcal N(x;\mu,\sigma^2)=-\tfrac12((x-\mu)/\sigma)^2-\log\sigma-
    \tfrac12\log2\pi` (``sigma > 0``; equals ``scipy.stats.norm.logpdf``).

    Parameters
    ----------
    x : array_like
        Points.
    mu : array_like
        Means.
    sigma : array_like
        Standard deviations, > 0.

    Returns
    -------
    ndarray
        The log-densities, broadcast over the inputs.
    """
    x, mu, sigma = np.broadcast_arrays(*(np.asarray(a, dtype=float) for a in (x, mu, sigma)))
    if not np.all(sigma > 0):
        raise ValueError("sigma must be > 0 (a reference distribution with zero spread)")
    z = (x - mu) / sigma
    return -0.5 * z * z - np.log(sigma) - 0.5 * math.log(2 * math.pi)


def _ref_stats(ref_phi: np.ndarray, ref_in: np.ndarray, want_in: bool, variance: str):
    """Per-target means and standard deviations of the reference confidences."""
    phi = np.asarray(ref_phi, dtype=float)
    inn = np.asarray(ref_in, dtype=bool)
    if phi.ndim != 2 or inn.shape != phi.shape:
        raise ValueError(f"ref_phi and ref_in must be (k, R) of equal shape, got {phi.shape} and "
                         f"{inn.shape}")
    if variance not in ("per-example", "global"):
        raise ValueError(f"variance must be 'per-example' or 'global', got {variance!r}")
    out = {}
    for side, mask in (("in", inn), ("out", ~inn)):
        if side == "in" and not want_in:
            continue
        cnt = mask.sum(1)
        if (cnt < 2).any():
            raise ValueError(f"every target needs >= 2 reference models {side} its training set; "
                             f"the smallest count is {int(cnt.min())} (train more models, e.g. --models 64)")
        mean = np.where(mask, phi, 0).sum(1) / cnt
        var = np.where(mask, (phi - mean[:, None]) ** 2, 0).sum(1) / (cnt - 1)
        if variance == "global":
            var = np.full_like(var, var.mean())
        out[side] = (mean, np.sqrt(var))
    return out


def lira_online(phi, ref_phi, ref_in, *, variance: str = "per-example") -> np.ndarray:
    r"""LiRA online: :math:`\log\mathcal N(\phi;\hat\mu_{\rm in},\hat\sigma_{\rm in}^2)-
    \log\mathcal N(\phi;\hat\mu_{\rm out},\hat\sigma_{\rm out}^2)`.

    ``phi`` (k,): the target model's confidences; ``ref_phi`` (k, R): reference models'
    confidences on the same records; ``ref_in`` (k, R): whether the record was in that
    reference model's training set. ``variance="global"``: one variance per side, the mean of
    the per-example variances (Carlini et al.'s fixed variance).

    Parameters
    ----------
    phi : array_like, shape (k,)
        The target model's logit confidences.
    ref_phi : array_like, shape (k, R)
        Reference models' confidences on the same records.
    ref_in : array_like of bool, shape (k, R)
        Whether each record was in each reference model's training set.
    variance : {"per-example", "global"}
        Per-record variances or one per side.

    Returns
    -------
    ndarray, shape (k,)
        The score (higher = member).
    """
    st = _ref_stats(ref_phi, ref_in, True, variance)
    x = np.asarray(phi, dtype=float)
    return normal_logpdf(x, *st["in"]) - normal_logpdf(x, *st["out"])


def lira_offline(phi, ref_phi, ref_in, *, variance: str = "per-example") -> np.ndarray:
    r"""LiRA offline (one-sided): :math:`\log\Phi\big((\phi-\hat\mu_{\rm out})/\hat\sigma_{\rm
    out}\big)` from the OUT reference models only.

    Parameters
    ----------
    phi : array_like, shape (k,)
        The target model's logit confidences.
    ref_phi : array_like, shape (k, R)
        Reference models' confidences.
    ref_in : array_like of bool, shape (k, R)
        Membership in the reference models (only OUT models are used).
    variance : {"per-example", "global"}
        Per-record variances or one.

    Returns
    -------
    ndarray, shape (k,)
        The score (higher = member).
    """
    mean, sd = _ref_stats(ref_phi, ref_in, False, variance)["out"]
    return log_ndtr((np.asarray(phi, dtype=float) - mean) / sd)


def l_attack(loss, ref_losses) -> np.ndarray:
    r"""L-attack (Ye et al. 2022): the fraction of leave-one-out reference losses above the
    target model's loss, ties counted one half:
    :math:`\frac1R\sum_r\big(\mathbb 1[\ell_r>\ell]+\tfrac12\mathbb 1[\ell_r=\ell]\big)`.

    Parameters
    ----------
    loss : array_like, shape (k,)
        The target model's losses.
    ref_losses : array_like, shape (k, R)
        Leave-one-out reference models' losses.

    Returns
    -------
    ndarray, shape (k,)
        The score in [0, 1].
    """
    ref = np.asarray(ref_losses, dtype=float)
    x = np.asarray(loss, dtype=float).reshape(-1, 1)
    if ref.ndim != 2 or ref.shape[0] != x.shape[0] or ref.shape[1] < 1:
        raise ValueError(f"ref_losses must be (k, R >= 1) with k = {x.shape[0]}, got {ref.shape}")
    return ((ref > x).sum(1) + 0.5 * (ref == x).sum(1)) / ref.shape[1]


def lira_l(phi, ref_phi, *, variance: str = "per-example") -> np.ndarray:
    """LiRA-L: LiRA offline with leave-one-out reference models (all of them "out").

    Parameters
    ----------
    phi : array_like, shape (k,)
        The target model's logit confidences.
    ref_phi : array_like, shape (k, R)
        Leave-one-out reference models' confidences.
    variance : {"per-example", "global"}
        Per-record variances or one.

    Returns
    -------
    ndarray, shape (k,)
        The score.
    """
    ref = np.asarray(ref_phi, dtype=float)
    return lira_offline(phi, ref, np.zeros(ref.shape, dtype=bool), variance=variance)


def logit_confidence(outputs: torch.Tensor, y: torch.Tensor, *, kind: str) -> torch.Tensor:
    r"""Logit-scaled confidence :math:`\phi=\log p_y-\log(1-p_y)` (Carlini et al. 2022).

    ``kind="logits"``: ``outputs`` (..., K) are class logits,
    :math:`\phi=z_y-\log\sum_{k\ne y}e^{z_k}`; ``kind="binary"``: ``outputs`` (...) are the
    pre-sigmoid scores :math:`s` of class 1, :math:`\phi=s` for ``y = 1`` and :math:`-s` for
    ``y = 0``. Both are exact (no clipping of :math:`p_y`).

    Parameters
    ----------
    outputs : torch.Tensor
        Logits (..., K) or pre-sigmoid scores (...).
    y : torch.Tensor
        Labels.
    kind : {"logits", "binary"}
        What ``outputs`` are.

    Returns
    -------
    torch.Tensor
        :math:`\phi`, shape of ``y``.
    """
    if kind == "binary":
        sign = 2.0 * y.to(outputs.dtype) - 1.0
        return sign * outputs.reshape(sign.shape)
    if kind != "logits":
        raise ValueError(f"kind must be 'logits' or 'binary', got {kind!r}")
    zy = outputs.gather(-1, y.unsqueeze(-1)).squeeze(-1)
    others = outputs.scatter(-1, y.unsqueeze(-1), -math.inf)
    return zy - torch.logsumexp(others, dim=-1)


def rmia_marginal(ref_phi, ref_in, *, offline_a: float | None = None) -> np.ndarray:
    r""":math:`\Pr(x)` of RMIA from reference models' logit confidences ``ref_phi`` (k, R).

    Online (``offline_a=None``): :math:`\frac1R\sum_r\sigma(\phi_r)` over every reference
    model; offline: only the OUT models (``~ref_in``) and
    :math:`\tfrac12((1+a)\overline{p}_{\rm OUT}+(1-a))` (Zarifzadeh et al. 2024, §3,
    offline variant; ``a`` in ``[0, 1]``, ``a = 1`` is the plain OUT mean).

    Parameters
    ----------
    ref_phi : array_like, shape (k, R)
        Reference models' logit confidences.
    ref_in : array_like of bool, shape (k, R)
        Membership in the reference models.
    offline_a : float, optional
        Offline parameter a in [0, 1]; None = online.

    Returns
    -------
    ndarray, shape (k,)
        :math:`\Pr(x)`, in (0, 1).
    """
    phi = np.asarray(ref_phi, dtype=float)
    inn = np.asarray(ref_in, dtype=bool)
    if phi.ndim != 2 or inn.shape != phi.shape or phi.shape[1] < 1:
        raise ValueError(f"ref_phi and ref_in must be (k, R >= 1) of equal shape, got "
                         f"{phi.shape} and {inn.shape}")
    p = expit(phi)
    if offline_a is None:
        return p.mean(1)
    if not (isinstance(offline_a, int | float) and 0.0 <= offline_a <= 1.0):
        raise ValueError(f"offline_a must be in [0, 1], got {offline_a!r}")
    cnt = (~inn).sum(1)
    if (cnt < 1).any():
        raise ValueError(f"offline RMIA needs >= 1 reference model OUT of every record's "
                         f"training set; {int((cnt < 1).sum())} records have none (train more "
                         f"models, e.g. --models 64)")
    out_mean = np.where(~inn, p, 0.0).sum(1) / cnt
    return 0.5 * ((1.0 + offline_a) * out_mean + (1.0 - offline_a))


def rmia(phi, ref_phi, ref_in, pop_phi, pop_ref_phi, pop_ref_in, *, gamma: float = 1.0,
         offline_a: float | None = None, exclude=None) -> np.ndarray:
    r"""RMIA score (module docstring): the fraction of population samples :math:`z` with
    :math:`\mathrm{LR}_\theta(x,z)\ge\gamma`.

    Parameters
    ----------
    phi : array_like, shape (k,)
        Target model's logit confidences :math:`\log\frac{p}{1-p}` on the scored records.
    ref_phi, ref_in : array_like, shape (k, R)
        Reference models' confidences on them and whether the record was in their training set.
    pop_phi, pop_ref_phi, pop_ref_in : shapes (Z,), (Z, R), (Z, R)
        The same for the population samples :math:`z`.
    gamma : float
        :math:`\gamma>0` of the pairwise test.
    offline_a : float or None
        ``None``: online marginal; else the offline variant's ``a`` in ``[0, 1]``.
    exclude : array_like of int, shape (k,), optional
        For each record, the index of the same record in the population (``-1``: none); that
        pair is left out (a record is not compared with itself).

    Returns
    -------
    ndarray, shape (k,)
    """
    gamma = check_positive(gamma, "gamma")
    px = expit(np.asarray(phi, dtype=float)).reshape(-1)
    pz = expit(np.asarray(pop_phi, dtype=float)).reshape(-1)
    rx = px / rmia_marginal(ref_phi, ref_in, offline_a=offline_a)
    rz = pz / rmia_marginal(pop_ref_phi, pop_ref_in, offline_a=offline_a)
    if rx.shape[0] != np.asarray(ref_phi).shape[0] or rz.shape[0] != np.asarray(pop_ref_phi).shape[0]:
        raise ValueError("phi / pop_phi must have one entry per row of ref_phi / pop_ref_phi")
    # LR(x, z) >= gamma  <=>  rz <= rx / gamma: count with one sort (O((k + Z) log Z))
    zs = np.sort(rz)
    counts = np.searchsorted(zs, rx / gamma, side="right").astype(float)
    total = np.full(rx.shape, float(zs.size))
    if exclude is not None:
        ex = np.asarray(exclude, dtype=np.int64).reshape(-1)
        if ex.shape != rx.shape or (ex >= zs.size).any() or (ex < -1).any():
            raise ValueError(f"exclude must be (k,) indices into the population or -1, got "
                             f"shape {ex.shape}")
        has = ex >= 0
        counts[has] -= (rz[ex[has]] <= rx[has] / gamma)
        total[has] -= 1
    if (total < 1).any():
        raise ValueError("RMIA needs >= 1 population sample per record (besides the record)")
    return counts / total
