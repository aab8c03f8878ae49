r"""Many small models trained at once: the reference ("shadow") models of LiRA and the L-attack.

The seed (``iha_parameters_vs_loss`` §4.1, after Carlini et al. 2022) trains 128 models, each
record of the pool in a model's training set independently with probability 1/2. Here every
model is a flat parameter vector; :func:`train_models` stacks ``M`` of them and runs the
heavy-ball SGD of :mod:`semi_core.sgd.momentum` on all at once with
``torch.func.vmap(torch.func.grad(...))`` over the stacked parameters (``functional_call`` inside
:class:`~semi_core.sgd.grads.FunctionalModel`). :func:`train_models_reference` is the slow
oracle: one model at a time with ``torch.optim.SGD`` on a copy of the module, the same initial
weights and the same batch schedule; the tests assert both give the same weights.

Randomness: model ``m`` draws its initial weights and batch schedule from the ``m``-th child of
the root ``SeedSequence`` (:func:`model_seeds`), so results do not depend on the chunking.
"""

from __future__ import annotations

import copy

import numpy as np
import torch
from torch.func import grad, vmap

from semi_core._rng import as_seed_sequence
from semi_core._validation import check_int, check_probability

from .grads import FunctionalModel
from .models import _init, torch_generator
from .momentum import SGDConfig, batch_schedule

__all__ = ["membership_matrix", "model_seeds", "init_thetas", "schedules", "train_models",
           "train_models_reference", "build_attack_model", "ATTACK_MODELS"]

#: Model kinds of the attack experiments (seed §4.1 analogues).
ATTACK_MODELS = ("logreg-mse", "logreg", "mlp")


def build_attack_model(kind: str, in_dim: int, n_classes: int, *,
                       hidden: int | tuple[int, ...] = 16) -> FunctionalModel:
    r"""A float64 model of the attack experiments (weights to be set by :func:`init_thetas`).

    ``"logreg-mse"``: ``Linear(in, 1) -> Sigmoid`` with :math:`\tfrac12(\sigma(w^\top x+b)-y)^2`
    (binary labels 0/1; the seed's MNIST-Odd model); ``"logreg"``: ``Linear(in, K)`` with
    cross-entropy; ``"mlp"``: ``Linear(in, hidden) -> Tanh -> Linear(hidden, K)`` with
    cross-entropy (the seed's 2-layer MLPs; ``tanh`` keeps the loss twice differentiable);
    ``hidden`` a sequence of widths gives one ``Linear -> Tanh`` per width (``(w1, w2, w3)``:
    a 4-layer MLP, seed App. D.1).

    Parameters
    ----------
    kind : {"logreg-mse", "logreg", "mlp"}
        The architecture.
    in_dim : int
        Number of input features, >= 1.
    n_classes : int
        Number of classes, >= 2.
    hidden : int or tuple of int
        Hidden width(s) of ``"mlp"``.

    Returns
    -------
    FunctionalModel
        The model (float64).
    """
    from torch import nn

    in_dim = check_int(in_dim, "in_dim", minimum=1)
    n_classes = check_int(n_classes, "n_classes", minimum=2)
    if kind == "logreg-mse":
        if n_classes != 2:
            raise ValueError(f"model 'logreg-mse' needs a binary task, got {n_classes} classes")
        return FunctionalModel(nn.Sequential(nn.Linear(in_dim, 1), nn.Sigmoid()).double(),
                               loss="mse")
    if kind == "logreg":
        return FunctionalModel(nn.Linear(in_dim, n_classes).double())
    if kind == "mlp":
        widths = [check_int(h, "hidden", minimum=1) for h in
                  (hidden if isinstance(hidden, tuple | list) else (hidden,))]
        if not widths:
            raise ValueError("hidden must hold at least one width")
        layers, prev = [], in_dim
        for w in widths:
            layers += [nn.Linear(prev, w), nn.Tanh()]
            prev = w
        return FunctionalModel(nn.Sequential(*layers, nn.Linear(prev, n_classes)).double())
    raise ValueError(f"model must be one of {ATTACK_MODELS}, got {kind!r}")


def membership_matrix(n_models: int, n_records: int, seed, *, p: float = 0.5) -> np.ndarray:
    """Boolean ``(n_models, n_records)``: record ``i`` is in model ``m``'s training set with
    probability ``p`` independently (seed §4.1: ``p = 1/2``).

    Parameters
    ----------
    n_models : int
        Number of models M, >= 1.
    n_records : int
        Number of records N, >= 1.
    seed : int or numpy.random.SeedSequence
        Seed of the draw.
    p : float
        Inclusion probability, in (0, 1).

    Returns
    -------
    ndarray of bool, shape (n_models, n_records)
        The membership bits.
    """
    n_models = check_int(n_models, "n_models", minimum=1)
    n_records = check_int(n_records, "n_records", minimum=1)
    p = check_probability(p, "p")
    rng = np.random.Generator(np.random.PCG64(as_seed_sequence(seed)))
    return rng.random((n_models, n_records)) < p


def model_seeds(seed, n_models: int) -> list[np.random.SeedSequence]:
    """One child ``SeedSequence`` per model (model ``m`` always gets child ``m``).

    Parameters
    ----------
    seed : int or numpy.random.SeedSequence
        Root seed.
    n_models : int
        Number of models, >= 1.

    Returns
    -------
    list of numpy.random.SeedSequence
        One child per model.
    """
    return as_seed_sequence(seed).spawn(check_int(n_models, "n_models", minimum=1))


def init_thetas(fm: FunctionalModel, seeds: list[np.random.SeedSequence]) -> torch.Tensor:
    r"""Initial flat parameters ``(M, d)``, model ``m`` from ``seeds[m]`` (uniform
    :math:`\pm 1/\sqrt{\text{fan-in}}` weights, :math:`\pm 0.01` biases).

    Parameters
    ----------
    fm : FunctionalModel
        The model (its module is copied, not modified).
    seeds : list of numpy.random.SeedSequence
        One seed per model.

    Returns
    -------
    torch.Tensor, shape (M, d)
        Initial parameters of each model.
    """
    module = copy.deepcopy(fm.module)
    rows = []
    for s in seeds:
        _init(module, torch_generator(s.spawn(1)[0]))
        params = dict(module.named_parameters())
        rows.append(torch.cat([params[k].detach().reshape(-1) for k in fm.names]))
    return torch.stack(rows)


def schedules(member: np.ndarray, cfg: SGDConfig, seeds: list[np.random.SeedSequence], *,
              steps: int | None = None) -> np.ndarray:
    """Batch indices ``(M, steps, S)`` into the pool, model ``m`` drawing from its members.

    ``steps`` defaults to ``cfg.steps(mean training-set size)`` so every model runs the same
    number of steps (:func:`semi_core.sgd.momentum.batch_schedule`).

    Parameters
    ----------
    member : ndarray of bool, shape (M, N)
        Membership bits, at least one member per model.
    cfg : SGDConfig
        Batch size and epochs.
    seeds : list of numpy.random.SeedSequence
        One seed per model.
    steps : int, optional
        Steps per model; None = ``cfg.steps`` of the mean training-set size.

    Returns
    -------
    ndarray of int64, shape (M, steps, S)
        Batch indices into the pool.
    """
    member = np.asarray(member, dtype=bool)
    if member.ndim != 2 or member.shape[0] != len(seeds):
        raise ValueError(f"member must be (M, N) with M = {len(seeds)} models, got {member.shape}")
    if (member.sum(axis=1) == 0).any():
        raise ValueError("every model needs at least one training record (a row of member is "
                         "all False)")
    steps = cfg.steps(float(member.sum(axis=1).mean())) if steps is None else steps
    out = np.empty((member.shape[0], steps, cfg.batch_size), dtype=np.int64)
    for m, s in enumerate(seeds):
        rng = np.random.Generator(np.random.PCG64(s.spawn(2)[1]))
        out[m] = batch_schedule(np.flatnonzero(member[m]), steps, cfg.batch_size, rng)
    return out


def _linear_plan(fm: FunctionalModel):
    """``[(module, w_slice, b_slice) | (module, None, None)]`` for an ``nn.Linear`` or an
    ``nn.Sequential`` of ``nn.Linear`` (all trainable, with bias) and parameter-free layers;
    ``None`` for any other model (the generic ``vmap`` path is used then)."""
    from torch import nn

    mod = fm.module
    items = [("", mod)] if isinstance(mod, nn.Linear) else (
        [(f"{k}.", m) for k, m in mod.named_children()] if isinstance(mod, nn.Sequential)
        else None)
    if items is None or fm.frozen:
        return None
    offsets, start = {}, 0
    for name, size in zip(fm.names, fm.sizes, strict=True):
        offsets[name] = slice(start, start + size)
        start += size
    plan = []
    for prefix, m in items:
        if isinstance(m, nn.Linear):
            w, b = prefix + "weight", prefix + "bias"
            if m.bias is None or w not in offsets or b not in offsets:
                return None
            plan.append((m, offsets[w], offsets[b]))
        elif any(True for _ in m.parameters()):
            return None
        else:
            plan.append((m, None, None))
    return plan


def _stacked_losses(fm: FunctionalModel, plan, thetas: torch.Tensor, xb: torch.Tensor,
                    yb: torch.Tensor) -> torch.Tensor:
    """Per-sample losses ``(M, S)`` of ``M`` stacked linear-stack models (batched matmuls)."""
    from torch import nn

    h = xb
    M = thetas.shape[0]
    for m, ws, bs in plan:
        if ws is None:
            h = m(h)
        else:
            W = thetas[:, ws].reshape(M, m.out_features, m.in_features)
            h = torch.baddbmm(thetas[:, bs].unsqueeze(1), h, W.transpose(1, 2))
    if fm.loss_name == "cross_entropy":
        return nn.functional.cross_entropy(h.reshape(-1, h.shape[-1]), yb.reshape(-1),
                                           reduction="none").reshape(yb.shape)
    return 0.5 * (h.reshape(yb.shape) - yb) ** 2


def _act_grad(m, out: torch.Tensor):
    """Derivative of a parameter-free activation from its output, or ``None`` if unsupported."""
    from torch import nn

    if isinstance(m, nn.Tanh):
        return 1 - out * out
    if isinstance(m, nn.Sigmoid):
        return out * (1 - out)
    if isinstance(m, nn.ReLU):
        return (out > 0).to(out.dtype)
    if isinstance(m, nn.Identity):
        return torch.ones_like(out)
    return None


def _manual_supported(fm: FunctionalModel, plan) -> bool:
    from torch import nn

    acts_ok = all(ws is not None or isinstance(m, nn.Tanh | nn.Sigmoid | nn.ReLU | nn.Identity)
                  for m, ws, _ in plan)
    return plan is not None and acts_ok and fm.loss_name in ("cross_entropy", "mse")


def _manual_grads(fm: FunctionalModel, plan, thetas: torch.Tensor, xb: torch.Tensor,
                  yb: torch.Tensor) -> torch.Tensor:
    r"""Mean mini-batch gradients ``(M, d)`` of ``M`` linear-stack models by explicit
    back-propagation (``bmm`` only; no autograd graph): for a linear layer
    :math:`\partial L/\partial W=\delta^\top a`, :math:`\partial L/\partial b=\sum\delta`,
    :math:`\delta\leftarrow\delta W`; activations multiply by their derivative."""
    M, S = thetas.shape[0], xb.shape[1]
    h = xb
    saved = []
    for m, ws, bs in plan:
        if ws is None:
            h = m(h)
            saved.append(h)
        else:
            W = thetas[:, ws].reshape(M, m.out_features, m.in_features)
            saved.append((h, W))
            h = torch.baddbmm(thetas[:, bs].unsqueeze(1), h, W.transpose(1, 2))
    if fm.loss_name == "cross_entropy":
        # exp / sum by hand: torch.softmax is several times slower for a short last axis
        delta = torch.exp(h - h.amax(-1, keepdim=True))
        delta = delta / delta.sum(-1, keepdim=True)
        delta.scatter_add_(-1, yb.unsqueeze(-1), -torch.ones_like(yb, dtype=h.dtype).unsqueeze(-1))
    else:
        delta = h - yb.reshape(h.shape)
    delta = delta / S
    out = torch.empty_like(thetas)
    for (m, ws, bs), sv in zip(reversed(plan), reversed(saved), strict=True):
        if ws is None:
            delta = delta * _act_grad(m, sv)
        else:
            a, W = sv
            out[:, ws] = torch.bmm(delta.transpose(1, 2), a).reshape(M, -1)
            out[:, bs] = delta.sum(1)
            delta = torch.bmm(delta, W)
    return out


def train_models(fm: FunctionalModel, thetas0: torch.Tensor, x: torch.Tensor, y: torch.Tensor,
                 sched: np.ndarray, cfg: SGDConfig, *, chunk: int = 64,
                 log: list | None = None, generic: bool = False,
                 manual: bool = True) -> torch.Tensor:
    r"""Train ``M`` models at once; returns the final weights ``(M, d)``.

    Every step computes the ``M`` mini-batch gradients at once -- for stacks of linear layers
    and tanh/sigmoid/ReLU with one batched forward (``baddbmm``) and explicit batched
    back-propagation (``manual=True``; ``manual=False``: autograd of :math:`\sum_m L^{(m)}`),
    for any other model with one ``vmap(grad(batch loss))`` call over the stacked parameters
    (``generic=True`` forces the latter) -- then the update of
    :mod:`semi_core.sgd.momentum` on the stack:

    .. math:: \mathbf H_t=\mu\mathbf H_{t-1}+\nabla L_{\mathcal B^{(m)}_t}(\mathbf W_{t-1})
        +\alpha\mathbf W_{t-1},\quad \mathbf W_t=\mathbf W_{t-1}-\lambda\mathbf H_t .

    Parameters
    ----------
    fm : FunctionalModel
        The model.
    thetas0 : Tensor, shape (M, d)
        Initial parameters of each model.
    x, y : Tensor
        The pool (``sched`` indexes into it).
    sched : ndarray of int, shape (M, steps, S)
        Batch indices of each model.
    cfg : SGDConfig
        Learning rate, momentum, weight decay.
    chunk : int
        Models per ``vmap`` call (memory bound).
    log : list, optional
        Receives ``{"models": (a, b), "step": t, "mean_batch_loss": ...}`` every
        ``cfg.log_every`` steps.
    generic : bool
        Force the ``vmap(grad)`` path for any model.
    manual : bool
        Explicit batched back-propagation for linear stacks (False = autograd).

    Returns
    -------
    torch.Tensor, shape (M, d)
        Final parameters of each model.
    """
    sched = np.asarray(sched, dtype=np.int64)
    if sched.ndim != 3 or sched.shape[0] != thetas0.shape[0]:
        raise ValueError(f"sched must be (M, steps, S) with M = {thetas0.shape[0]}, "
                         f"got {sched.shape}")
    chunk = check_int(chunk, "chunk", minimum=1)

    def batch_loss(theta, xb, yb):
        return fm.losses(theta, xb, yb).mean()

    plan = None if generic else _linear_plan(fm)
    if plan is None:
        g_fn = vmap(grad(batch_loss))
        l_fn = vmap(batch_loss)
    elif _manual_supported(fm, plan) and manual:
        def l_fn(theta, xb, yb):
            return _stacked_losses(fm, plan, theta, xb, yb).mean(1)

        def g_fn(theta, xb, yb):
            return _manual_grads(fm, plan, theta, xb, yb)
    else:
        def l_fn(theta, xb, yb):
            return _stacked_losses(fm, plan, theta, xb, yb).mean(1)

        def g_fn(theta, xb, yb):
            with torch.enable_grad():
                leaf = theta.detach().requires_grad_(True)
                (g,) = torch.autograd.grad(l_fn(leaf, xb, yb).sum(), leaf)
            return g
    out = []
    for a in range(0, sched.shape[0], chunk):
        b = min(a + chunk, sched.shape[0])
        idx = torch.as_tensor(sched[a:b])
        theta = thetas0[a:b].detach().clone()
        buf = torch.zeros_like(theta)
        for t in range(idx.shape[1]):
            xb, yb = x[idx[:, t]], y[idx[:, t]]
            if log is not None and (t + 1) % cfg.log_every == 0:
                log.append({"models": (a, b), "step": t + 1,
                            "mean_batch_loss": float(l_fn(theta, xb, yb).mean())})
            g = g_fn(theta, xb, yb)
            if cfg.weight_decay:
                g = g + cfg.weight_decay * theta
            buf = cfg.momentum * buf + g
            theta = theta - cfg.lr * buf
        out.append(theta)
    return torch.cat(out)


def train_models_reference(fm: FunctionalModel, thetas0: torch.Tensor, x: torch.Tensor,
                           y: torch.Tensor, sched: np.ndarray, cfg: SGDConfig) -> torch.Tensor:
    """Slow oracle of :func:`train_models`: one model at a time with ``torch.optim.SGD``.

    Parameters
    ----------
    fm : FunctionalModel
        The model.
    thetas0 : torch.Tensor, shape (M, d)
        Initial parameters.
    x : torch.Tensor
        Pool inputs.
    y : torch.Tensor
        Pool targets.
    sched : ndarray of int, shape (M, steps, S)
        Batch indices.
    cfg : SGDConfig
        Optimiser settings.

    Returns
    -------
    torch.Tensor, shape (M, d)
        Final parameters of each model.
    """
    from .momentum import train_sgd_torch

    rows = []
    for m in range(thetas0.shape[0]):
        module = copy.deepcopy(fm.module)
        FunctionalModel(module, loss=fm.loss_name).load(thetas0[m])
        train_sgd_torch(module, x, y, sched[m], cfg, loss=fm.loss_name)
        rows.append(FunctionalModel(module, loss=fm.loss_name).theta())
    return torch.stack(rows)
