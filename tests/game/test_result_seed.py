"""A result names the seed it was played with (seed 0 included, which is falsy)."""

import pytest

from semi_core.game.engine import reference_per_round, simulate, simulate_streaming
from semi_core.mechanisms.empirical_mean import EmpiricalMean


@pytest.mark.parametrize("seed", [0, 7])
def test_engine_results_carry_the_seed(seed):
    mech = EmpiricalMean.isotropic(5, 3)
    res = simulate(mech, 500, seed)
    assert res.seed == seed and f"seed={seed})" in repr(res)
    assert reference_per_round(mech, 20, seed).seed == seed
    assert simulate_streaming(mech, 500, seed)["seed"] == seed
