"""The attack experiment's pool of records: bundled data or the user's file, subsampled.
"""

from __future__ import annotations

import numpy as np
import torch

from semi_core._validation import check_int
from semi_core.attacks.whitebox.experiment.config import AttackConfig
from semi_core.sgd.data import load_bundled, load_fashion_mnist, load_tabular


def _load_pool(cfg: AttackConfig, seed_seq):
    """``(x, y, n_classes)`` of the pool: bundled, IDX or tabular file, optionally subsampled to
    ``pool_size`` records (seeded); file labels are mapped to ``0..K-1`` in sorted order."""
    if cfg.dataset in ("idx", "idx-odd"):
        x, y = load_fashion_mnist(cfg.data_path)
        y = y % 2 if cfg.dataset == "idx-odd" else y
    elif cfg.dataset == "file":
        x, y = load_tabular(cfg.data_path)
    else:
        x, y, _ = load_bundled(cfg.dataset)
    _, y = np.unique(y, return_inverse=True)
    if cfg.pool_size is not None:
        check_int(cfg.pool_size, "pool_size", minimum=4, maximum=x.shape[0])
    if cfg.pool_size is not None and cfg.pool_size < x.shape[0]:
        rng = np.random.Generator(np.random.PCG64(seed_seq))
        keep = np.sort(rng.choice(x.shape[0], size=cfg.pool_size, replace=False))
        x, y = x[keep], y[keep]
    K = int(y.max()) + 1
    if K < 2:
        raise ValueError(f"the pool of dataset {cfg.dataset!r} has a single class")
    return x, y.astype(np.int64), K


def _pool_tensors(cfg: AttackConfig, seed_seq):
    x, y, K = _load_pool(cfg, seed_seq)
    X = torch.as_tensor(x, dtype=torch.float64)
    Y = torch.as_tensor(y.astype(np.float64) if cfg.model == "logreg-mse" else y)
    return X, Y, K
