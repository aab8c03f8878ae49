r"""Per-sample gradient structure of stacks of linear layers ("ghost" clipping and statistics).

For an ``nn.Sequential`` of ``nn.Linear`` layers and parameter-free layers (ReLU, Tanh, ...)
-- or a single ``nn.Linear`` -- with cross-entropy, the per-sample gradient of trainable layer
:math:`l` is an outer product, :math:`\partial\ell_i/\partial W_l = b_{l,i}\tilde a_{l,i}^\top`
with :math:`\tilde a_{l,i} = (a_{l,i}, 1)` the layer input (bias column appended) and
:math:`b_{l,i} = \partial\ell_i/\partial z_{l,i}` the gradient at the layer output. One batched
forward/backward of :math:`\sum_i \ell_i` gives every :math:`b_{l,i}` (samples are independent),
and then, without ever forming a per-sample gradient tensor,

.. math::

   \|g_i\|^2 = \sum_l \|b_{l,i}\|^2\|\tilde a_{l,i}\|^2,\qquad
   g_i^\top g_j = \sum_l (b_{l,i}^\top b_{l,j})(\tilde a_{l,i}^\top\tilde a_{l,j}),\qquad
   g_i^\top x = \sum_l b_{l,i}^\top X_l\,\tilde a_{l,i},

(:math:`X_l` = the slice of ``x`` belonging to layer ``l`` reshaped to ``out x (in+1)``). This is
what :func:`semi_core.sgd.batched.ghost_log_lr` and :func:`ghost_clipped_mean` use; the generic
``torch.func`` path is the oracle they are tested against. Frozen linear layers (the frozen
backbone) are applied with their fixed weights and contribute no gradient.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from semi_core._validation import check_positive

__all__ = ["LinearStack", "linear_stack", "ghost_parts", "ghost_clipped_mean"]


@dataclass
class _Layer:
    module: nn.Module
    trainable: bool = False
    w_slice: slice | None = None
    b_slice: slice | None = None


@dataclass
class LinearStack:
    """Layer plan of a supported model: which layers are linear, which are trainable, and where
    each trainable weight/bias sits in the flat parameter vector."""

    layers: list[_Layer]
    d: int

    @property
    def trainable(self) -> list[_Layer]:
        return [lay for lay in self.layers if lay.trainable]


def linear_stack(fm) -> LinearStack | None:
    """Return the :class:`LinearStack` of a :class:`~semi_core.sgd.grads.FunctionalModel`, or
    ``None`` when the model is not a stack of linear and parameter-free layers with
    cross-entropy whose trainable linear layers train both weight and bias.

    Parameters
    ----------
    fm : FunctionalModel
        The model.

    Returns
    -------
    LinearStack or None
        The stack, or None.
    """
    mod = fm.module
    if fm.loss_name != "cross_entropy":
        return None
    if isinstance(mod, nn.Linear):
        items = [("", mod)]
    elif isinstance(mod, nn.Sequential):
        items = [(f"{k}.", m) for k, m in mod.named_children()]
    else:
        return None
    offsets, start = {}, 0
    for name, size in zip(fm.names, fm.sizes, strict=True):
        offsets[name] = slice(start, start + size)
        start += size
    layers, used = [], 0
    for prefix, m in items:
        own = [n for n, _ in m.named_parameters()]
        if isinstance(m, nn.Linear):
            if m.bias is None:
                return None
            w, b = prefix + "weight", prefix + "bias"
            if w in offsets and b in offsets:
                layers.append(_Layer(m, True, offsets[w], offsets[b]))
                used += 2
            elif w in offsets or b in offsets:
                return None
            else:
                layers.append(_Layer(m))
        elif own:
            return None
        else:
            layers.append(_Layer(m))
    if used != len(fm.names) or not used:
        return None
    return LinearStack(layers=layers, d=fm.d)


def ghost_parts(stack: LinearStack, thetas: torch.Tensor, x: torch.Tensor, y: torch.Tensor, *,
                shared: bool = False):
    """Layer inputs with bias column ``A_l`` (R, n, in+1) and output gradients ``B_l``
    (R, n, out) of every trainable layer, for ``R`` parameter vectors ``thetas`` (R, d) on
    batches ``x`` (R, n, in) (or shared ``x`` (n, in) with ``shared=True``).

    Parameters
    ----------
    stack : LinearStack
        The model's layers.
    thetas : torch.Tensor, shape (R, d)
        Parameter vectors.
    x : torch.Tensor, shape (R, n, in) or (n, in)
        Inputs, per replica or shared.
    y : torch.Tensor, shape (R, n) or (n,)
        Targets, per replica or shared.
    shared : bool
        Whether ``x`` and ``y`` are shared.

    Returns
    -------
    acts : list of torch.Tensor
        ``A_l`` per trainable layer, shape (R, n, in+1).
    backs : list of torch.Tensor
        ``B_l`` per trainable layer, shape (R, n, out).
    """
    R = thetas.shape[0]
    # With shared inputs, everything before the first trainable layer is the same for every
    # replica: compute it once and hand out stride-0 expanded views.
    h = x
    replicated = not shared
    labels = y.expand(R, *y.shape) if shared else y
    acts, outs = [], []
    with torch.enable_grad():
        for lay in stack.layers:
            m = lay.module
            if lay.trainable:
                W = thetas[:, lay.w_slice].reshape(R, m.out_features, m.in_features)
                b = thetas[:, lay.b_slice]
                a = h.detach()
                a = torch.cat([a, torch.ones(*a.shape[:-1], 1, dtype=a.dtype, device=a.device)], dim=-1)
                acts.append(a if replicated else a.expand(R, *a.shape))
                if not replicated:
                    h = h.expand(R, *h.shape)
                    replicated = True
                # keep the graph through h (later layers back-propagate into earlier outputs)
                z = torch.einsum("rni,roi->rno", h, W) + b.unsqueeze(1)
                if not z.requires_grad:
                    z.requires_grad_(True)
                outs.append(z)
                h = z
            else:
                h = m(h)
        loss = nn.functional.cross_entropy(h.reshape(-1, h.shape[-1]), labels.reshape(-1),
                                           reduction="sum")
        backs = torch.autograd.grad(loss, outs)
    return acts, list(backs)


def ghost_clipped_mean(stack: LinearStack, thetas: torch.Tensor, x: torch.Tensor,
                       y: torch.Tensor, *, clip: float) -> torch.Tensor:
    r"""Clipped mean gradient :math:`\frac1n\sum_i \min(1, C/\|g_i\|)\,g_i` per replica,
    ``(R, d)``, from :func:`ghost_parts` (no per-sample gradient tensor).

    Parameters
    ----------
    stack : LinearStack
        The model's layers.
    thetas : torch.Tensor, shape (R, d)
        Parameter vectors.
    x : torch.Tensor, shape (R, n, in)
        Batches.
    y : torch.Tensor, shape (R, n)
        Targets.
    clip : float
        Clipping norm C, > 0.

    Returns
    -------
    torch.Tensor, shape (R, d)
        Clipped mean gradient of each replica.
    """
    clip = check_positive(clip, "clip")
    acts, backs = ghost_parts(stack, thetas, x, y)
    n = x.shape[1]
    norm2 = sum((b * b).sum(-1) * (a * a).sum(-1) for a, b in zip(acts, backs, strict=True))
    scale = (clip / torch.clamp(torch.sqrt(norm2), min=clip) / n).unsqueeze(-1)
    out = torch.empty_like(thetas)
    for lay, a, b in zip(stack.trainable, acts, backs, strict=True):
        g = torch.einsum("rno,rni->roi", b * scale, a)         # (R, out, in+1)
        out[:, lay.w_slice] = g[..., :-1].reshape(g.shape[0], -1)
        out[:, lay.b_slice] = g[..., -1]
    return out
