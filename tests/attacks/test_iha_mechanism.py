"""The one-shot trained model as a T = 1 Mechanism releasing parameters, scored with Thm 3.2's
log-LR, played through the generic SeMI game and audited."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from semi_core.attacks.whitebox.mechanism import TrainedModelMechanism  # noqa: E402
from semi_core.audit.games import audit_game_result  # noqa: E402
from semi_core.audit.roc import auc  # noqa: E402
from semi_core.game.play import play  # noqa: E402
from semi_core.mechanisms.base import GroundTruthUnknown, is_mechanism  # noqa: E402
from semi_core.sgd.data import load_bundled  # noqa: E402
from semi_core.sgd.momentum import SGDConfig  # noqa: E402
from semi_core.sgd.reference_models import build_attack_model  # noqa: E402


@pytest.fixture(scope="module")
def mech():
    torch.set_num_threads(1)
    x, y, _ = load_bundled("digits-odd")
    x, y = x[:121].copy(), y[:121].astype(float)
    y[120] = 1 - y[120]                       # a mislabeled canary: strongly exposed
    fm = build_attack_model("logreg-mse", 64, 2)
    return TrainedModelMechanism(fm, torch.as_tensor(x), torch.as_tensor(y), np.arange(120), 120,
                                 SGDConfig(lr=0.05, batch_size=16, epochs=20))


def test_game_and_audit(mech):
    assert is_mechanism(mech) and mech.T == 1
    res = play(mech, 30, seed=1, tau=1, tests=("semi-star",))
    again = play(mech, 30, seed=1, tau=1, tests=("semi-star",))
    np.testing.assert_array_equal(res.stats["semi-star"], again.stats["semi-star"])
    m, nm = res.scores("semi-star")
    assert np.isfinite(res.stats["semi-star"]).all()
    assert auc(m, nm) > 0.6                  # the Thm 3.2 log-LR separates the canary
    cert = audit_game_result(res, delta=1e-5, method="cp")
    assert cert["semi-star"]["epsilon_lower_bound"] >= 0
    with pytest.raises(GroundTruthUnknown):
        mech.epsilon(1e-5)
    assert mech.params()["n_base"] == 120


@pytest.mark.parametrize("kw, match", [
    (dict(base=[0]), "at least 2 records"),
    (dict(base=[0, 500]), "base indices must lie in"),
    (dict(canary=3), "must not be one of the base"),
    (dict(canary=999), "canary must be in"),
    (dict(damping=0.0), "damping must be finite and > 0"),
])
def test_bad_inputs(mech, kw, match):
    args = dict(base=np.arange(120), canary=120, damping=0.2)
    args.update(kw)
    with pytest.raises(ValueError, match=match):
        TrainedModelMechanism(mech.fm, mech.x, mech.y, args["base"], args["canary"], mech.cfg,
                              damping=args["damping"])
    with pytest.raises(ValueError, match="releases must have shape"):
        mech.log_lr_steps(np.zeros((2, 1, 3)))
