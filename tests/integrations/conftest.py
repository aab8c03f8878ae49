"""Shared set-up of the torch tests of this directory (the Opacus adapter, the white-box game,
the user-loop audits): a small synthetic problem (fast: d = 27), its DP-SGD configuration and
white-box set-up, and one torch thread per module."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from semi_core.sgd.dirac import WhiteBoxSetup, dirac_coordinates  # noqa: E402
from semi_core.sgd.dpsgd import DPSGDConfig  # noqa: E402
from semi_core.sgd.grads import FunctionalModel, clip_rows  # noqa: E402


@pytest.fixture(autouse=True, scope="module")
def _one_torch_thread():
    """Tiny models: torch's intra-op threads only add contention (2 shared cores); the results
    do not depend on it."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


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


def dpsgd_cfg(sigma: float, *, clip: float = 1.0, steps: int = 3, n: int = 16) -> DPSGDConfig:
    """The DP-SGD configuration of these tests: ``n`` records per batch, ``steps`` steps,
    learning rate 0.5, clip norm ``clip``, noise multiplier ``sigma``."""
    return DPSGDConfig(batch_size=n, steps=steps, lr=0.5, clip=clip, sigma_dp=sigma)


def white_box_setup(problem, *, sigma: float = 2.0, clip: float = 1.0, steps: int = 3,
                    n: int = 16, kind: str = "dirac", k: int = 1, scale: float = 4.0):
    """``(WhiteBoxSetup, second moments)`` on :func:`make_problem`'s data: records 100.. are the
    private pool, the first 100 the reference; ``kind="dirac"`` puts ``k`` Dirac canaries on the
    coordinates :func:`~semi_core.sgd.dirac.dirac_coordinates` picks (their second moments
    returned), ``kind="input"`` a crafted input canary (``None`` returned beside it)."""
    model_fn, (x, y) = problem
    fm = FunctionalModel(model_fn())
    theta0 = fm.theta()
    common = dict(fm=fm, theta0=theta0, pool_x=x[100:], pool_y=y[100:], ref_x=x[:100],
                  ref_y=y[:100], cfg=dpsgd_cfg(sigma, clip=clip, steps=steps, n=n))
    if kind == "dirac":
        coords, mom = dirac_coordinates(clip_rows(fm.per_sample_grads(theta0, x[100:], y[100:]),
                                                  clip), k)
        return WhiteBoxSetup(**common, coords=coords, scale=scale), mom
    return WhiteBoxSetup(**common, kind="input", canary_x=x[0] * 3,
                         canary_y=(y[0] + 1) % 3), None
