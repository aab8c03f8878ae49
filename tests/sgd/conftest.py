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


@pytest.fixture
def tiny_problem():
    """The factory :func:`_tiny_problem` (a fixture, so test modules need no import)."""
    return _tiny_problem


def _tiny_problem(kind: str, rng):
    """A float64 ``FunctionalModel`` (``logreg``: Linear(6, 4); ``mlp``: 6-5-4 ReLU), its
    linear stack and 11 reference records ``(fm, stack, ref_x, ref_y)``; torch seeded."""
    from torch import nn

    from semi_core.sgd.grads import FunctionalModel

    torch.manual_seed(1)
    module = (nn.Linear(6, 4) if kind == "logreg" else
              nn.Sequential(nn.Linear(6, 5), nn.ReLU(), nn.Linear(5, 4))).double()
    fm = FunctionalModel(module)
    ref_x = torch.as_tensor(rng.normal(size=(11, 6)))
    ref_y = torch.as_tensor(rng.integers(0, 4, 11))
    return fm, fm.linear_stack(), ref_x, ref_y
