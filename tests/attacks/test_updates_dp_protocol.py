"""The seed's DP protocol (§5.7): precision -> epsilon with Clopper-Pearson, its RDP accounting
beside our GDP accounting, and the sigma sweep."""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("torch")

from semi_core.attacks.updates import UpdateConfig  # noqa: E402
from semi_core.attacks.updates.dp import (  # noqa: E402
    dp_protocol_sweep,
    paper_rdp_epsilon,
    precision_epsilon,
)


def test_precision_epsilon_closed_form():
    # all 400 called IN are members: p_L = 0.02 ** (1 / 400) (one-sided CP at 98 %)
    out = precision_epsilon(400, 400, confidence=0.98)
    p = 0.02 ** (1 / 400)
    assert out["precision_lower"] == pytest.approx(p, rel=1e-9)
    assert out["epsilon_lower_bound"] == pytest.approx(math.log(p / (1 - p)), rel=1e-9)
    assert precision_epsilon(20, 40)["epsilon_lower_bound"] == 0.0   # p_L < 1/2
    with pytest.raises(ValueError, match="exceeds called_in"):
        precision_epsilon(5, 4)
    with pytest.raises(ValueError, match="confidence"):
        precision_epsilon(1, 4, confidence=1.0)


def test_paper_rdp_accounting_beside_ours():
    pytest.importorskip("opacus")
    cfg = UpdateConfig(sigma_dp=16.0, clip=0.5, n_up=20)
    eps = paper_rdp_epsilon(cfg, 1e-4)
    assert 0 < eps < 5
    # more noise, less epsilon
    assert paper_rdp_epsilon(UpdateConfig(sigma_dp=64.0, clip=0.5, n_up=20), 1e-4) < eps
    with pytest.raises(ValueError, match="sigma_dp > 0"):
        paper_rdp_epsilon(UpdateConfig(), 1e-4)


def test_sweep_rows_are_complete_and_bounded():
    pytest.importorskip("opacus")
    cfg = UpdateConfig(n0=60, trials=2, base_epochs=4, new_epochs=2, n_up=10)
    out = dp_protocol_sweep(cfg, [64.0])
    (row,) = out["rows"]
    assert row["models"] == 2 and np.isfinite(row["epsilon_ours_gdp"])
    for att in row["attacks"].values():
        # 2 models x 2 calls (10 % of 20): even 4/4 right gives p_L = 0.02 ** (1/4) < 1/2 at
        # 98 % confidence, so no epsilon can be certified
        assert att["called_in"] == 4 and 0.02 ** (1 / 4) < 0.5
        assert att["epsilon_lower_bound"] == 0.0


def test_fig8_update_never_hurts_the_np_attack():
    from semi_core.attacks.updates.gap import fig8_sweep

    out = fig8_sweep((5, 200), rounds=4000, seed=1)
    for r in out["rows"]:
        # the LR of both releases is at least as good as the final one's; 3 binomial SEs
        tol = 3 * (r["optimal"]["se"] + r["final"]["se"])
        assert r["optimal"]["accuracy"] >= r["final"]["accuracy"] - tol
    small, large = out["rows"]
    assert small["optimal"]["accuracy"] > large["optimal"]["accuracy"]   # n1 = 5 leaks more
    assert out["distance"] == pytest.approx(0.1 * np.sqrt(250))
