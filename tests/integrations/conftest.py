"""Small synthetic problem for the Opacus adapter and white-box tests (fast: d = 27)."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")


def make_problem(seed: int = 0, n_records: int = 400, features: int = 8, classes: int = 3):
    """``(model_fn, (X, y))``: a linear softmax model on Gaussian features whose last two
    features are zero in every record (isolated Dirac coordinates exist)."""
    rng = np.random.default_rng(seed)
    w = rng.normal(size=(features, classes))
    x = rng.normal(size=(n_records, features))
    x[:, -2:] = 0.0
    y = np.argmax(x @ w + rng.gumbel(size=(n_records, classes)), axis=1)
    gen = torch.Generator().manual_seed(seed)
    base = torch.nn.Linear(features, classes).double()
    with torch.no_grad():
        for p in base.parameters():
            p.copy_(0.1 * torch.randn(p.shape, generator=gen, dtype=p.dtype))
    state = {k: v.clone() for k, v in base.state_dict().items()}

    def model_fn():
        m = torch.nn.Linear(features, classes).double()
        m.load_state_dict(state)
        return m

    return model_fn, (torch.as_tensor(x), torch.as_tensor(y))


@pytest.fixture(scope="module")
def problem():
    return make_problem()
