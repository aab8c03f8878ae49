"""Models of the audit (seed §5.2): multinomial logistic regression, a 128-hidden-unit MLP, and a
frozen feature extractor with one trainable layer, each pretrained on the public split with SGD.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from semi_core._validation import check_int, check_positive

from .grads import FunctionalModel

__all__ = ["build_model", "pretrain", "torch_generator", "MODEL_KINDS"]

MODEL_KINDS = ("logreg", "mlp", "frozen")


def torch_generator(seed_seq: np.random.SeedSequence) -> torch.Generator:
    """A ``torch.Generator`` seeded from a NumPy ``SeedSequence`` (64 bits of its state).

    Parameters
    ----------
    seed_seq : numpy.random.SeedSequence
        The stream.

    Returns
    -------
    torch.Generator
        A CPU generator.
    """
    gen = torch.Generator()
    gen.manual_seed(int(seed_seq.generate_state(1, dtype=np.uint64)[0] >> np.uint64(1)))
    return gen


def _init(module: nn.Module, gen: torch.Generator) -> None:
    with torch.no_grad():
        for p in module.parameters():
            bound = 1.0 / np.sqrt(p.shape[-1]) if p.dim() > 1 else 0.01
            p.copy_((torch.rand(p.shape, generator=gen, dtype=p.dtype) * 2 - 1) * bound)


def pretrain(module: nn.Module, x: torch.Tensor, y: torch.Tensor, *, epochs: int, lr: float,
             batch_size: int, gen: torch.Generator) -> float:
    """Plain mini-batch SGD on the public split; returns the final training accuracy.

    Parameters
    ----------
    module : torch.nn.Module
        The model, trained in place.
    x : torch.Tensor
        Public inputs.
    y : torch.Tensor
        Public labels.
    epochs : int
        Number of passes, >= 0.
    lr : float
        Learning rate, > 0.
    batch_size : int
        Mini-batch size.
    gen : torch.Generator
        Source of the shuffles.

    Returns
    -------
    float
        Training accuracy in [0, 1].
    """
    epochs = check_int(epochs, "epochs", minimum=0)
    lr = check_positive(lr, "lr")
    params = [p for p in module.parameters() if p.requires_grad]
    for _ in range(epochs):
        perm = torch.randperm(x.shape[0], generator=gen)
        for s in range(0, x.shape[0], batch_size):
            idx = perm[s:s + batch_size]
            grads = torch.autograd.grad(nn.functional.cross_entropy(module(x[idx]), y[idx]),
                                        params)
            # torch.optim.SGD's step without momentum, bit for bit (p += -lr * g), without its
            # per-step wrappers (half the loop's CPU time on this model)
            with torch.no_grad():
                for p, g in zip(params, grads, strict=True):
                    p.add_(g, alpha=-lr)
    with torch.no_grad():
        return float((module(x).argmax(-1) == y).double().mean())


def build_model(kind: str, public_x: np.ndarray, public_y: np.ndarray, n_classes: int, *,
                seed_seq: np.random.SeedSequence, epochs: int = 60, lr: float = 0.1,
                hidden: int = 128) -> tuple[FunctionalModel, torch.Tensor, float]:
    """Build and pretrain a model; return ``(functional_model, theta0, public_accuracy)``.

    ``kind``: ``"logreg"`` (``Linear``), ``"mlp"`` (``Linear-ReLU-Linear`` with ``hidden`` units),
    ``"frozen"`` (an MLP feature extractor pretrained on the public split, then frozen; only the
    last linear layer is trainable: the seed's frozen-backbone setting).

    Parameters
    ----------
    kind : {"logreg", "mlp", "frozen"}
        The architecture.
    public_x : ndarray
        Public inputs.
    public_y : ndarray
        Public labels.
    n_classes : int
        Number of classes.
    seed_seq : numpy.random.SeedSequence
        Stream of the initialisation and the pretraining.
    epochs : int
        Pretraining epochs.
    lr : float
        Pretraining learning rate.
    hidden : int
        Hidden units of ``"mlp"`` and ``"frozen"``.

    Returns
    -------
    fm : FunctionalModel
        The model.
    theta0 : torch.Tensor, shape (d,)
        Its pretrained trainable parameters.
    public_accuracy : float
        Accuracy on the public split.
    """
    if kind not in MODEL_KINDS:
        raise ValueError(f"model must be one of {MODEL_KINDS}, got {kind!r}")
    gen = torch_generator(seed_seq)
    x = torch.as_tensor(public_x, dtype=torch.float64)
    y = torch.as_tensor(public_y, dtype=torch.long)
    in_dim = x.shape[1]
    if kind == "logreg":
        module = nn.Linear(in_dim, n_classes)
    elif kind == "mlp":
        module = nn.Sequential(nn.Linear(in_dim, hidden), nn.ReLU(), nn.Linear(hidden, n_classes))
    else:
        module = nn.Sequential(nn.Linear(in_dim, hidden), nn.ReLU(), nn.Linear(hidden, 32),
                               nn.ReLU(), nn.Linear(32, n_classes))
    module = module.double()
    _init(module, gen)
    acc = pretrain(module, x, y, epochs=epochs, lr=lr, batch_size=32, gen=gen)
    if kind == "frozen":
        for p in list(module.parameters())[:-2]:
            p.requires_grad_(False)
    fm = FunctionalModel(module)
    return fm, fm.theta(), acc
