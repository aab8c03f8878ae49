r"""Model updates of Jagielski et al. (``combining_mi_updates`` §3.2-3.3, Alg. 1) on the torch layer.

A learner trains :math:`f_0 = A_{\mathrm{train}}(D_0)` and then :math:`k` updates
:math:`f_i = A_{\mathrm{up}}(f_{i-1}; D_i,\dots,D_0)` with

* **SGD-New**: mini-batch SGD from :math:`f_{i-1}` on the new set :math:`D_i` only
  (small learning rate, few epochs);
* **SGD-Full**: mini-batch SGD from :math:`f_{i-1}` on :math:`D_0\cup\dots\cup D_i`.

Every snapshot :math:`f_0..f_k` is recorded. ``R`` independent runs (trials, the attacker's shadow
runs and the offline-LiRA reference runs) are trained at once as *replicas*: parameter vectors
``(R, d)`` of one :class:`~semi_core.sgd.grads.FunctionalModel` with per-replica data, batches
and shuffles (``torch.func.vmap``), so a run gives the same snapshots whether it is trained
alone or in a batch. Optionally the update is DP-SGD (per-sample clipping to ``clip`` and
Gaussian noise :math:`\sigma_{DP}C/B` on the clipped batch mean, as in
:mod:`semi_core.sgd.dpsgd`); clipped gradients use the "ghost" path of
:mod:`semi_core.sgd.ghost` when the model is a stack of linear layers.

Privacy of a DP update (replace-one neighbours, the MI game's relation): with the update set
partitioned into batches every epoch (no subsampling amplification is claimed), a record is used
in exactly ``epochs`` steps of the update, each a Gaussian mechanism with sensitivity :math:`2C`
and noise :math:`\sigma_{DP}C`, so the update is :math:`\mu`-GDP with
:math:`\mu = 2\sqrt{E}/\sigma_{DP}` (GDP composition; :mod:`semi_core.sgd.accounting`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch.func import grad, vmap

from semi_core._validation import check_int, check_positive
from semi_core.sgd.ghost import ghost_clipped_mean
from semi_core.sgd.grads import FunctionalModel, clip_rows

__all__ = ["UPDATES", "OPTIMIZERS", "MAX_UPDATE_MU", "MAX_NOISE_STD", "TrainConfig", "train_replicas", "run_updates",
           "update_mu"]

UPDATES = ("sgd-new", "sgd-full")
#: Optimizers of a training phase: mini-batch SGD, or Adam (the seed's choice for its transfer-
#: learning data sets, CIFAR-10 and IMDb, §5.1) with a fresh state per phase.
OPTIMIZERS = ("sgd", "adam")
#: Adam's constants (Kingma & Ba; PyTorch's defaults).
ADAM_BETAS, ADAM_EPS = (0.9, 0.999), 1e-8

#: Largest GDP parameter of a DP update accepted (:math:`\varepsilon(10^{-5})\approx\mu^2/2
#: \approx 5\cdot10^{11}`): beyond it the noise protects nothing and the privacy profile is
#: not worth computing (``sigma_dp = 1e-300`` would give :math:`\mu = 2\cdot10^{300}`).
MAX_UPDATE_MU = 1e6
#: Largest noise standard deviation :math:`\sigma_{DP}C` of a step accepted (parameters
#: would overflow float64 long before a meaningful audit).
MAX_NOISE_STD = 1e6


@dataclass(frozen=True)
class TrainConfig:
    r"""One SGD procedure: epochs, learning rate, batch size, optional DP-SGD clipping/noise.

    ``clip=None`` is plain SGD (``sigma_dp`` must then be 0). ``optimizer="adam"`` steps with
    Adam on the (clipped, noised) mean gradient instead, its moments reset at the start of the
    phase; a DP update stays :math:`\mu`-GDP (Adam post-processes the noisy gradients).
    """

    epochs: int
    lr: float
    batch_size: int = 32
    clip: float | None = None
    sigma_dp: float = 0.0
    optimizer: str = "sgd"

    def __post_init__(self):
        if self.optimizer not in OPTIMIZERS:
            raise ValueError(f"optimizer must be one of {OPTIMIZERS}, got {self.optimizer!r}")
        check_int(self.epochs, "epochs", minimum=0)
        check_positive(self.lr, "lr")
        check_int(self.batch_size, "batch_size", minimum=1)
        if self.clip is not None:
            check_positive(self.clip, "clip")
        if not (np.isfinite(self.sigma_dp) and self.sigma_dp >= 0):
            raise ValueError(f"sigma_dp must be finite and >= 0, got {self.sigma_dp}")
        if self.sigma_dp > 0 and self.clip is None:
            raise ValueError("sigma_dp > 0 needs a clipping norm clip (DP-SGD)")
        if self.clip is not None and not np.isfinite(self.clip):
            raise ValueError(f"clip must be finite and > 0, got {self.clip}")
        if self.sigma_dp > 0 and self.sigma_dp * self.clip > MAX_NOISE_STD:
            raise ValueError(f"sigma_dp * clip (the noise standard deviation of a step's clipped "
                             f"gradient sum) must be <= {MAX_NOISE_STD:g}, got sigma_dp = "
                             f"{self.sigma_dp:g}, clip = {self.clip:g} (float64 training "
                             "would overflow)")
        if self.sigma_dp > 0 and update_mu(self) > MAX_UPDATE_MU:
            lo = 2.0 * np.sqrt(max(self.epochs, 1)) / MAX_UPDATE_MU
            raise ValueError(f"sigma_dp must be 0 (plain SGD) or >= {lo:.3g} with {self.epochs} "
                             f"epochs, got {self.sigma_dp:g}: the update would be mu-GDP with mu "
                             f"= 2 sqrt(epochs)/sigma_dp = {update_mu(self):.3g} > "
                             f"{MAX_UPDATE_MU:g} (no privacy left to audit)")


def update_mu(cfg: TrainConfig) -> float:
    r"""GDP parameter of one DP update: :math:`\mu = 2\sqrt{E}/\sigma_{DP}` (``inf`` without
    noise). Each record is in one batch per epoch; replace-one sensitivity :math:`2C`.

    Parameters
    ----------
    cfg : TrainConfig
        The update's training configuration.

    Returns
    -------
    float
        :math:`\mu`, > 0 (``inf`` without noise).
    """
    if cfg.sigma_dp == 0:
        return float("inf")
    return 2.0 * np.sqrt(cfg.epochs) / cfg.sigma_dp


def _mean_grads(fm: FunctionalModel, stack, thetas, xb, yb, cfg: TrainConfig) -> torch.Tensor:
    """Mean (optionally clipped) gradient of each replica's batch, ``(R, d)``."""
    if cfg.clip is None:
        def batch_loss(theta, x, y):
            return fm.losses(theta, x, y).mean()

        return vmap(grad(batch_loss))(thetas, xb, yb)
    if stack is not None:
        return ghost_clipped_mean(stack, thetas, xb, yb, clip=cfg.clip)
    return clip_rows(fm.per_sample_grads_batched(thetas, xb, yb), cfg.clip).mean(1)


def train_replicas(fm: FunctionalModel, thetas: torch.Tensor, x: torch.Tensor, y: torch.Tensor,
                   cfg: TrainConfig, rngs: list[np.random.Generator]) -> torch.Tensor:
    r"""Mini-batch (DP-)SGD of ``R`` replicas, each on its own data, from ``thetas`` ``(R, d)``.

    Every epoch each replica shuffles its ``n`` records (its own generator in ``rngs``) and
    takes :math:`\lceil n/B\rceil` steps :math:`\theta \leftarrow \theta - \eta(\bar g + \xi)`,
    :math:`\xi\sim\mathcal N(0,\sigma_{DP}^2C^2/B^2 I)` (``xi = 0`` without DP); with Adam
    (``cfg.optimizer``) the step is on :math:`g = \bar g + \xi`,

    .. math::

       m_t = \beta_1 m_{t-1} + (1-\beta_1) g,\quad v_t = \beta_2 v_{t-1} + (1-\beta_2) g^2,\quad
       \theta \leftarrow \theta - \eta\,\frac{m_t/(1-\beta_1^t)}{\sqrt{v_t/(1-\beta_2^t)}
       + \epsilon}.

    Parameters
    ----------
    fm : FunctionalModel
        The model.
    thetas : Tensor (R, d)
        Initial parameters of each replica.
    x : Tensor (R, n, p)
        Each replica's inputs.
    y : Tensor (R, n)
        Each replica's labels.
    cfg : TrainConfig
        Epochs, batch size, learning rate and DP noise.
    rngs : list of numpy Generator
        One per replica (shuffles and noise).

    Returns
    -------
    Tensor (R, d)
    """
    R, n = x.shape[0], x.shape[1]
    if len(rngs) != R or thetas.shape[0] != R or y.shape[:2] != (R, n):
        raise ValueError(f"need one generator, one theta and one label row per replica (R={R})")
    if n == 0:
        raise ValueError("each replica needs at least one training record")
    stack = fm.linear_stack() if cfg.clip is not None else None
    B = min(cfg.batch_size, n)
    theta = thetas.clone()
    rows = torch.arange(R).unsqueeze(1)
    adam = cfg.optimizer == "adam"
    if adam:
        (b1, b2), t = ADAM_BETAS, 0
        m1, m2 = torch.zeros_like(theta), torch.zeros_like(theta)
    for _ in range(cfg.epochs):
        perm = torch.as_tensor(np.stack([g.permutation(n) for g in rngs]))
        for s in range(0, n, B):
            idx = perm[:, s:s + B]
            xb, yb = x[rows, idx], y[rows, idx]
            g = _mean_grads(fm, stack, theta, xb, yb, cfg)
            if cfg.sigma_dp > 0:
                noise = torch.as_tensor(np.stack([r.standard_normal(fm.d) for r in rngs]),
                                        dtype=theta.dtype)
                g = g + (cfg.sigma_dp * cfg.clip / idx.shape[1]) * noise
            if adam:
                t += 1
                m1 = b1 * m1 + (1 - b1) * g
                m2 = b2 * m2 + (1 - b2) * g * g
                g = (m1 / (1 - b1**t)) / (torch.sqrt(m2 / (1 - b2**t)) + ADAM_EPS)
            theta = theta - cfg.lr * g
    return theta


def run_updates(fm: FunctionalModel, theta_init: torch.Tensor, base_x, base_y, update_x,
                update_y, *, update: str, base_cfg: TrainConfig, update_cfg: TrainConfig,
                rngs: list[np.random.Generator]) -> torch.Tensor:
    r"""Alg. 1 of the seed for ``R`` replicas; returns every snapshot ``(R, k+1, d)``.

    Parameters
    ----------
    fm : FunctionalModel
    theta_init : Tensor (d,) or (R, d)
        Initial parameters of :math:`A_{\mathrm{train}}`.
    base_x, base_y : Tensor (R, n0, p), (R, n0)
        :math:`D_0` of each replica.
    update_x, update_y : Tensor (R, k, n_up, p), (R, k, n_up)
        :math:`D_1..D_k` of each replica.
    update : {"sgd-new", "sgd-full"}
    base_cfg, update_cfg : TrainConfig
        :math:`A_{\mathrm{train}}` and :math:`A_{\mathrm{up}}` (DP, if any, in ``update_cfg``).
    rngs : list of numpy Generator, one per replica.

    Returns
    -------
    torch.Tensor, shape (R, k+1, d)
        Parameters after the base training and after each update.
    """
    if update not in UPDATES:
        raise ValueError(f"update must be one of {UPDATES}, got {update!r}")
    R = base_x.shape[0]
    k = update_x.shape[1]
    theta = theta_init.expand(R, -1).clone() if theta_init.dim() == 1 else theta_init.clone()
    theta = train_replicas(fm, theta, base_x, base_y, base_cfg, rngs)
    snaps = [theta]
    for i in range(k):
        if update == "sgd-new":
            xs, ys = update_x[:, i], update_y[:, i]
        else:
            p = update_x.shape[3:]
            xs = torch.cat([base_x, update_x[:, :i + 1].reshape(R, -1, *p)], dim=1)
            ys = torch.cat([base_y, update_y[:, :i + 1].reshape(R, -1)], dim=1)
        theta = train_replicas(fm, theta, xs, ys, update_cfg, rngs)
        snaps.append(theta)
    return torch.stack(snaps, dim=1)
