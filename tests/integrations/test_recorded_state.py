"""The one ``record`` of the user loops (:func:`semi_core.integrations.training.recorded_state`):
a model, a state dict and a flat vector give the same float64 vector; bad states are refused."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

from semi_core.integrations.training import recorded_state  # noqa: E402
from semi_core.sgd.grads import FunctionalModel  # noqa: E402


def _fm():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 2), nn.ReLU(), nn.Linear(2, 2)).double()
    return model, FunctionalModel(model)


def test_model_state_dict_and_flat_vector_agree():
    model, fm = _fm()
    a = recorded_state(fm, model, device="cpu", recorded=0, steps=2)
    b = recorded_state(fm, model.state_dict(), device="cpu", recorded=0, steps=2)
    c = recorded_state(fm, a.numpy().tolist(), device="cpu", recorded=1, steps=2)
    assert a.dtype == torch.float64 and a.shape == (fm.d,)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    np.testing.assert_array_equal(a.numpy(), c.numpy())
    # the prefix an Opacus wrapper adds is stripped
    wrapped = {f"_module.{k}": v for k, v in model.state_dict().items()}
    np.testing.assert_array_equal(
        recorded_state(fm, wrapped, device="cpu", recorded=0, steps=2).numpy(), a.numpy())


def test_bad_states_are_refused_with_what_is_wrong():
    model, fm = _fm()
    sd = model.state_dict()
    with pytest.raises(ValueError, match="lacks the trainable parameters"):
        recorded_state(fm, {k: v for k, v in list(sd.items())[1:]}, device="cpu", recorded=0,
                       steps=2)
    with pytest.raises(ValueError, match=rf"a flat state must have shape \({fm.d},\)"):
        recorded_state(fm, np.zeros(fm.d + 1), device="cpu", recorded=0, steps=2)
    with pytest.raises(ValueError, match="record called more than steps = 2 times"):
        recorded_state(fm, model, device="cpu", recorded=2, steps=2)
    bad = np.zeros(fm.d)
    bad[3] = np.nan
    with pytest.raises(ValueError, match="after step 2 hold NaN"):
        recorded_state(fm, bad, device="cpu", recorded=1, steps=2)
    wrong = {k: torch.zeros(v.numel() + 1) if i == 0 else v
             for i, (k, v) in enumerate(sd.items())}
    with pytest.raises(ValueError, match="parameters, the model"):
        recorded_state(fm, wrong, device="cpu", recorded=0, steps=2)
