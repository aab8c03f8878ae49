"""Per-sample gradients, clipping and a functional view of a torch model (seed §4, §4.2).

:class:`FunctionalModel` flattens the *trainable* parameters of an ``nn.Module`` into one vector
:math:`\\theta\\in\\mathbb R^d` (frozen parameters and buffers stay constants), so that DP-SGD,
gradient statistics and the SeMI-SGD statistic all work on flat vectors.

Per-sample gradients are computed with ``torch.func`` (``vmap`` over ``grad``);
:meth:`FunctionalModel.per_sample_grads_reference` is the slow, obviously correct oracle (one
``torch.autograd.grad`` call per sample) that the tests compare against.
"""

from __future__ import annotations

import copy
import itertools
import threading

import torch
from torch import nn
from torch.func import functional_call, grad, vmap

from semi_core._validation import check_positive

__all__ = ["FunctionalModel", "clip_rows", "clip_factors"]


class FunctionalModel:
    """Flat-parameter functional wrapper of an ``nn.Module`` with a cross-entropy loss.

    Parameters
    ----------
    module : torch.nn.Module
        Maps a batch of inputs ``(B, ...)`` to logits ``(B, K)``. Parameters with
        ``requires_grad=False`` are frozen (the frozen-backbone setting of seed §5.2).
    loss : {"cross_entropy", "mse"}
        Per-sample loss :math:`\\ell(\\theta; x, y)`; ``"mse"`` is
        :math:`\\tfrac12 (y - f_\\theta(x))^2` for a scalar output (linear regression, App. F).

    Raises
    ------
    ValueError
        If the module has no trainable parameter, or ``loss`` is unknown.
    """

    def __init__(self, module: nn.Module, *, loss: str = "cross_entropy"):
        if not isinstance(module, nn.Module):
            raise TypeError(f"module must be a torch.nn.Module, got {type(module).__name__}")
        if loss not in ("cross_entropy", "mse"):
            raise ValueError(f"loss must be 'cross_entropy' or 'mse', got {loss!r}")
        self.module = module
        self.loss_name = loss
        named = list(module.named_parameters())
        self.names = [k for k, p in named if p.requires_grad]
        if not self.names:
            raise ValueError("model has no trainable parameters (every parameter has "
                             "requires_grad=False); at least one is needed for SGD")
        self.shapes = [tuple(dict(named)[k].shape) for k in self.names]
        self.sizes = [int(torch.Size(s).numel()) for s in self.shapes]
        self.d = int(sum(self.sizes))
        self.frozen = {k: p.detach() for k, p in named if not p.requires_grad}
        self.frozen.update({k: b.detach() for k, b in module.named_buffers()})
        self.dtype = dict(named)[self.names[0]].dtype
        self._init_thread_state()

    # -- one module per thread -----------------------------------------------------------
    def _init_thread_state(self) -> None:
        self._local = threading.local()
        self._copy_lock = threading.Lock()

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        del state["_local"], state["_copy_lock"]
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._init_thread_state()

    def _thread_module(self) -> nn.Module:
        """This thread's own shell of :attr:`module` for ``functional_call``.

        ``torch.func.functional_call`` swaps the module's parameter entries for the tensors it
        is given (inside ``vmap``/``grad``: functorch ``TensorWrapper`` objects) and swaps the saved
        ones back afterwards. Two threads doing so on one module interleave: the second saves
        the first one's wrappers as "the originals" and restores them, so the shared module
        ends up holding a dead transform's ``TensorWrapper``, which cannot be pickled (Dask) --
        the numbers stay right, since every call replaces every tensor. Each thread therefore
        calls its own copy of the module's structure; the copy shares the parameter and buffer
        tensors themselves (``deepcopy`` memo), and only its entry dicts are swapped, so it
        costs no tensor memory and :attr:`module` itself is never swapped.
        """
        mod = getattr(self._local, "module", None)
        if mod is None:
            with self._copy_lock:
                memo = {id(t): t for t in itertools.chain(self.module.parameters(),
                                                          self.module.buffers())}
                mod = self._local.module = copy.deepcopy(self.module, memo)
        return mod

    # -- flat <-> dict -------------------------------------------------------------------
    def theta(self) -> torch.Tensor:
        """Current trainable parameters of the module as a flat vector (a copy).

        Returns
        -------
        torch.Tensor, shape (d,)
            The parameters, concatenated in ``names`` order.
        """
        params = dict(self.module.named_parameters())
        return torch.cat([params[k].detach().reshape(-1) for k in self.names]).clone()

    def unflatten(self, theta: torch.Tensor) -> dict[str, torch.Tensor]:
        """Split a flat vector ``(d,)`` into the named parameter tensors (views).

        Parameters
        ----------
        theta : torch.Tensor, shape (d,)
            Flat parameter vector.

        Returns
        -------
        dict of str to torch.Tensor
            Views of ``theta`` with the parameters' names and shapes.
        """
        out, start = {}, 0
        for k, shape, size in zip(self.names, self.shapes, self.sizes, strict=True):
            out[k] = theta[start:start + size].reshape(shape)
            start += size
        return out

    def load(self, theta: torch.Tensor) -> None:
        """Write a flat vector back into the module's trainable parameters.

        Parameters
        ----------
        theta : torch.Tensor, shape (d,)
            Flat parameter vector (copied into the module).
        """
        with torch.no_grad():
            params = dict(self.module.named_parameters())
            for k, v in self.unflatten(theta).items():
                params[k].copy_(v)

    def linear_stack(self):
        """The :class:`~semi_core.sgd.ghost.LinearStack` of this model, or ``None`` (see
        :mod:`semi_core.sgd.ghost`: fast clipped gradients and statistics).

        Returns
        -------
        LinearStack or None
            The stack of linear layers, or None when the model is not one.
        """
        from .ghost import linear_stack

        return linear_stack(self)

    # -- losses and gradients ------------------------------------------------------------
    def _sample_loss(self, theta: torch.Tensor, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        params = {**self.frozen, **self.unflatten(theta)}
        out = functional_call(self._thread_module(), params, (x.unsqueeze(0),))
        if self.loss_name == "cross_entropy":
            return nn.functional.cross_entropy(out, y.reshape(1))
        return 0.5 * (out.reshape(()) - y.reshape(())) ** 2

    def losses(self, theta: torch.Tensor, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """Per-sample losses :math:`\\ell(\\theta; x_i, y_i)`, shape ``(n,)``.

        Parameters
        ----------
        theta : torch.Tensor, shape (d,)
            Flat parameters.
        x : torch.Tensor, shape (n, ...)
            Inputs.
        y : torch.Tensor, shape (n,)
            Targets.

        Returns
        -------
        torch.Tensor, shape (n,)
            The loss of each sample.
        """
        return vmap(self._sample_loss, in_dims=(None, 0, 0))(theta, x, y)

    def per_sample_grads(self, theta: torch.Tensor, x: torch.Tensor,
                         y: torch.Tensor) -> torch.Tensor:
        """Per-sample gradients :math:`\\nabla_\\theta \\ell(\\theta; x_i)`, shape ``(n, d)``.

        ``torch.func.vmap(torch.func.grad(loss))`` over the samples.

        Parameters
        ----------
        theta : torch.Tensor, shape (d,)
            Flat parameters.
        x : torch.Tensor, shape (n, ...)
            Inputs.
        y : torch.Tensor, shape (n,)
            Targets.

        Returns
        -------
        torch.Tensor, shape (n, d)
            The gradient of each sample's loss.
        """
        return vmap(grad(self._sample_loss), in_dims=(None, 0, 0))(theta, x, y)

    def per_sample_grads_batched(self, thetas: torch.Tensor, x: torch.Tensor,
                                 y: torch.Tensor, *, shared: bool = False) -> torch.Tensor:
        """Per-sample gradients for ``R`` model replicas at once.

        ``thetas`` is ``(R, d)``; ``x`` is ``(R, n, ...)`` (one batch per replica) or, with
        ``shared=True``, ``(n, ...)`` (the same samples for every replica). Returns
        ``(R, n, d)``.

        Parameters
        ----------
        thetas : torch.Tensor, shape (R, d)
            Flat parameters of each replica.
        x : torch.Tensor, shape (R, n, ...) or (n, ...)
            Inputs, per replica or shared.
        y : torch.Tensor, shape (R, n) or (n,)
            Targets, per replica or shared.
        shared : bool
            Whether ``x`` and ``y`` are shared by every replica.

        Returns
        -------
        torch.Tensor, shape (R, n, d)
            The per-sample gradients of each replica.
        """
        inner = vmap(grad(self._sample_loss), in_dims=(None, 0, 0))
        if shared:
            return vmap(inner, in_dims=(0, None, None))(thetas, x, y)
        return vmap(inner, in_dims=(0, 0, 0))(thetas, x, y)

    def losses_batched(self, thetas: torch.Tensor, x: torch.Tensor,
                       y: torch.Tensor) -> torch.Tensor:
        """Losses of ``R`` replicas on shared samples: ``thetas (R, d)``, returns ``(R, n)``.

        Parameters
        ----------
        thetas : torch.Tensor, shape (R, d)
            Flat parameters of each replica.
        x : torch.Tensor, shape (n, ...)
            Shared inputs.
        y : torch.Tensor, shape (n,)
            Shared targets.

        Returns
        -------
        torch.Tensor, shape (R, n)
            The per-sample losses of each replica.
        """
        inner = vmap(self._sample_loss, in_dims=(None, 0, 0))
        return vmap(inner, in_dims=(0, None, None))(thetas, x, y)

    def per_sample_grads_reference(self, theta: torch.Tensor, x: torch.Tensor,
                              y: torch.Tensor) -> torch.Tensor:
        """Oracle: one ``torch.autograd.grad`` call per sample on the module itself.

        Parameters
        ----------
        theta : torch.Tensor, shape (d,)
            Flat parameters.
        x : torch.Tensor, shape (n, ...)
            Inputs.
        y : torch.Tensor, shape (n,)
            Targets.

        Returns
        -------
        torch.Tensor, shape (n, d)
            The per-sample gradients (slow; the reference of the vmap path).
        """
        rows = []
        for i in range(x.shape[0]):
            leaves = {k: v.detach().clone().requires_grad_(True)
                      for k, v in self.unflatten(theta).items()}
            out = functional_call(self._thread_module(), {**self.frozen, **leaves},
                                  (x[i:i + 1],))
            if self.loss_name == "cross_entropy":
                loss = nn.functional.cross_entropy(out, y[i:i + 1])
            else:
                loss = 0.5 * (out.reshape(()) - y[i].reshape(())) ** 2
            gs = torch.autograd.grad(loss, [leaves[k] for k in self.names])
            rows.append(torch.cat([g.reshape(-1) for g in gs]))
        return torch.stack(rows)


def clip_factors(grads: torch.Tensor, clip: float) -> torch.Tensor:
    """Per-row factors :math:`\\min(1, C/\\|g_i\\|_2)` (last axis is the parameter axis).

    Parameters
    ----------
    grads : torch.Tensor, shape (..., d)
        Per-sample gradients.
    clip : float
        Clipping norm C, > 0.

    Returns
    -------
    torch.Tensor, shape (..., 1)
        The factors, in (0, 1].
    """
    clip = check_positive(clip, "clip")
    norms = torch.linalg.vector_norm(grads, dim=-1, keepdim=True)
    return clip / torch.clamp(norms, min=clip)


def clip_rows(grads: torch.Tensor, clip: float) -> torch.Tensor:
    """Per-sample L2 clipping :math:`\\mathrm{clip}_C(g) = g\\,\\min(1, C/\\|g\\|_2)`.

    Parameters
    ----------
    grads : torch.Tensor
        ``(..., d)`` per-sample gradients.
    clip : float
        Clipping norm :math:`C > 0`.

    Returns
    -------
    torch.Tensor, shape (..., d)
        The clipped gradients (norm <= C).
    """
    return grads * clip_factors(grads, clip)

