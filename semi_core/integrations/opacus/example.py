"""A bundled example: a model pretrained on a public split of scikit-learn's digits and the
other records as the private training set (:func:`digits_example`).
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from semi_core._rng import as_seed_sequence
from semi_core.integrations.opacus._common import _torch_threads

__all__ = ["digits_example", "DIGITS_TRAIN_RECORDS"]


#: Records of :func:`digits_example`'s training set (1797 digits minus the 600 public ones).
DIGITS_TRAIN_RECORDS = 1197


def digits_example(*, seed=0, model: str = "logreg", pretrain_epochs: int = 60):
    """``(model_fn, train_dataset)`` on scikit-learn's bundled digits: a model pretrained on a
    public split (600 records; :func:`semi_core.sgd.models.build_model`) and the other 1197
    records as the private training set. ``model_fn`` returns a fresh copy each call.

    Parameters
    ----------
    seed : int or numpy.random.SeedSequence
        Seed of the split and the pretraining.
    model : {"logreg", "mlp", "frozen"}
        Architecture (:func:`semi_core.sgd.models.build_model`).
    pretrain_epochs : int
        Epochs of public pretraining.

    Returns
    -------
    model_fn : callable
        Returns a fresh pretrained model.
    train_dataset : (torch.Tensor, torch.Tensor)
        The private records ``(X, y)`` (float64 and label tensors).
    """
    from semi_core.sgd.data import load_dataset
    from semi_core.sgd.models import build_model

    root = as_seed_sequence(seed)
    ss_split, ss_model = root.spawn(2)
    sp = load_dataset("digits", rng=np.random.Generator(np.random.PCG64(ss_split)))
    with _torch_threads(1):  # small tensors: more threads only spin (see _torch_threads)
        fm, _, _ = build_model(model, *sp.public, sp.n_classes, seed_seq=ss_model,
                               epochs=pretrain_epochs)
    state = {k: v.detach().clone() for k, v in fm.module.state_dict().items()}
    module0 = fm.module

    def model_fn() -> nn.Module:
        import copy

        m = copy.deepcopy(module0)  # in-memory copy of our own module, not an unpickled file
        m.load_state_dict(state)
        return m

    x = np.concatenate([sp.private[0], sp.reference[0], sp.candidates[0]])
    y = np.concatenate([sp.private[1], sp.reference[1], sp.candidates[1]])
    return model_fn, (torch.as_tensor(x, dtype=torch.float64), torch.as_tensor(y))
