r"""Where the torch layer computes: the ``device`` argument of trainers and statistics.

One home for the rule every ``device`` argument follows:

* ``device=None`` means the device of the user's model (its first parameter; CPU for a model
  without parameters). Tensors stay there: batches, noise, per-sample gradients and the
  recorded parameters are created on it; only the scalar scores come back to the host (NumPy).
* A device that holds no data (``"meta"``) or is not present on this machine (``"cuda"``
  without a GPU, ``"cuda:3"`` on a one-GPU machine, ``"mps"`` off Apple silicon) is refused
  before any work, with an error naming the argument.
* Training runs in the model's dtype (float32 models train in float32). Statistics whose
  derivation divides small differences or sums many terms are computed in float64
  (:data:`STATS_DTYPE`): each caller says where in its docstring.
"""

from __future__ import annotations

import copy
import dataclasses

import torch
from torch import nn

__all__ = ["resolve_device", "model_device", "move_setup", "STATS_DTYPE"]

#: dtype of the statistics (log-LRs, gradient moments, standardised updates).
STATS_DTYPE = torch.float64


def model_device(model: nn.Module) -> torch.device:
    """Device of ``model``'s first parameter (first buffer if none; CPU if neither).

    Parameters
    ----------
    model : torch.nn.Module

    Returns
    -------
    torch.device
    """
    for t in model.parameters():
        return t.device
    for t in model.buffers():
        return t.device
    return torch.device("cpu")


def resolve_device(device=None, model: nn.Module | None = None, *,
                   name: str = "device") -> torch.device:
    """The ``torch.device`` a computation runs on, checked before any work.

    Parameters
    ----------
    device : None, str or torch.device
        ``None``: ``model``'s device (CPU without a model). Otherwise ``"cpu"``, ``"cuda"``,
        ``"cuda:K"``, ``"mps"``, ... that must exist on this machine.
    model : torch.nn.Module, optional
        The user's model: its parameters must already live on ``device`` (the toolkit never
        moves a user's model; ``model.to(device)`` is theirs to call), and may not be ``meta``
        tensors.
    name : str
        The argument's name in error messages.

    Returns
    -------
    torch.device

    Raises
    ------
    ValueError
        For an unknown device string, a ``meta`` device (no data to train or score), a device
        that is not available here, or a model on another device.
    """
    if device is None:
        dev = model_device(model) if model is not None else torch.device("cpu")
        where = f"the model's device ({dev})"
    else:
        if not isinstance(device, str | torch.device):
            raise TypeError(f"{name} must be None, a string or a torch.device, got "
                            f"{type(device).__name__}")
        try:
            dev = torch.device(device)
        except RuntimeError as exc:
            raise ValueError(f"{name}={device!r} is not a torch device ({exc}); use e.g. "
                             "'cpu', 'cuda' or 'cuda:0'") from None
        where = f"{name}={str(device)!r}"
    if dev.type == "meta":
        raise ValueError(f"{where} is 'meta': meta tensors hold no data, so nothing can be "
                         f"trained or scored on them; pass {name}='cpu' or a GPU (and a model "
                         "with real parameters)")
    if dev.type == "cuda":
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        index = 0 if dev.index is None else dev.index
        if index >= count:
            raise ValueError(f"{where} is not available: this machine has {count} CUDA "
                             f"device(s) (torch.cuda.is_available() is "
                             f"{torch.cuda.is_available()}); pass {name}='cpu' or a device "
                             f"in 'cuda:0'..'cuda:{count - 1}'" if count else
                             f"{where} is not available: torch sees no CUDA device here "
                             f"(torch.cuda.is_available() is False); pass {name}='cpu'")
    elif dev.type == "mps":
        mps = getattr(torch.backends, "mps", None)
        if mps is None or not mps.is_available():
            raise ValueError(f"{where} is not available on this machine "
                             f"(torch.backends.mps.is_available() is False); pass "
                             f"{name}='cpu'")
    if model is not None:
        have = model_device(model)
        if have.type == "meta":
            raise ValueError("the model's parameters are on the 'meta' device (no data): "
                             "materialise them (model.to_empty(device=...) and load weights) "
                             f"before auditing; {name} cannot move them")
        if _key(have) != _key(dev):
            raise ValueError(f"{where} but the model's parameters are on {have}: move the "
                             f"model first (model.to({str(dev)!r})) or leave {name}=None to "
                             "use the model's device")
    return dev


def _key(dev: torch.device) -> tuple[str, int]:
    """``cuda`` and ``cuda:0`` are the same device when the current device is 0."""
    if dev.type == "cuda" and dev.index is None:
        return ("cuda", torch.cuda.current_device() if torch.cuda.is_available() else 0)
    return (dev.type, 0 if dev.index is None else dev.index)


def move_setup(setup, device):
    """A copy of an audit setup dataclass (:class:`~semi_core.sgd.dirac.WhiteBoxSetup`,
    :class:`~semi_core.sgd.mechanism.AuditSetup`) with its model and every tensor field on
    ``device`` (checked by :func:`resolve_device`); the setup itself when already there.
    Dtypes are kept (training stays in the model's dtype).

    Parameters
    ----------
    setup : dataclass
        With a ``fm`` (:class:`~semi_core.sgd.grads.FunctionalModel`) and a ``theta0`` field.
    device : str or torch.device

    Returns
    -------
    The moved copy (or ``setup``).
    """
    from .grads import FunctionalModel

    dev = resolve_device(device)
    if setup.theta0.device == dev:
        return setup
    changes = {}
    for f in dataclasses.fields(setup):
        v = getattr(setup, f.name)
        if isinstance(v, torch.Tensor):
            changes[f.name] = v.to(dev)
        elif isinstance(v, FunctionalModel):
            changes[f.name] = FunctionalModel(copy.deepcopy(v.module).to(dev), loss=v.loss_name)
        elif isinstance(v, dict):
            changes[f.name] = dict(v)
    return dataclasses.replace(setup, **changes)
