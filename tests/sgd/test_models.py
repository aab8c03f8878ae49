"""Public pretraining (:func:`semi_core.sgd.models.pretrain`)."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from semi_core.sgd.models import _init, pretrain  # noqa: E402


@pytest.mark.parametrize("hidden", [0, 16])
def test_pretrain_is_torch_sgd_bit_for_bit(hidden):
    """The pretraining loop's own update equals ``torch.optim.SGD`` (no momentum) bit for bit:
    the same shuffles, gradients and ``p += -lr * g`` (so every pretrained theta_0 is the one
    the optimizer would give)."""
    rng = np.random.default_rng(3)
    x = torch.as_tensor(rng.normal(size=(70, 6)))
    y = torch.as_tensor(rng.integers(0, 3, size=70))

    def model():
        m = (torch.nn.Linear(6, 3) if hidden == 0 else torch.nn.Sequential(
            torch.nn.Linear(6, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, 3))).double()
        _init(m, torch.Generator().manual_seed(1))
        return m

    ours, ref = model(), model()
    acc = pretrain(ours, x, y, epochs=4, lr=0.3, batch_size=16,
                   gen=torch.Generator().manual_seed(2))
    gen = torch.Generator().manual_seed(2)
    opt = torch.optim.SGD(ref.parameters(), lr=0.3)
    for _ in range(4):
        perm = torch.randperm(70, generator=gen)
        for s in range(0, 70, 16):
            idx = perm[s:s + 16]
            opt.zero_grad()
            torch.nn.functional.cross_entropy(ref(x[idx]), y[idx]).backward()
            opt.step()
    for a, b in zip(ours.parameters(), ref.parameters(), strict=True):
        assert torch.equal(a, b)
    assert not torch.equal(next(ours.parameters()), next(model().parameters()))  # it trained
    with torch.no_grad():
        assert acc == float((ref(x).argmax(-1) == y).double().mean())
