"""Fixtures of the torch-layer tests (small models, float64)."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")


@pytest.fixture(scope="module")
def small_setup():
    """A logistic-regression audit setup on digits (short pretraining, 32 reference points)."""
    from semi_core.sgd.audit import prepare_audit
    from semi_core.sgd.dpsgd import DPSGDConfig

    torch.set_num_threads(1)
    cfg = DPSGDConfig(batch_size=16, steps=4, lr=0.5, clip=1.0, sigma_dp=1.0)
    return prepare_audit(model="logreg", cfg=cfg, seed=3, pretrain_epochs=5, n_reference=32)


@pytest.fixture
def rng():
    return np.random.default_rng(20261122)
