"""The SGD games on the one runner (their mechanisms' conformance: tests/test_conformance.py):
the same seed giving the same DP-SGD audit in-process, on threads and on a Dask cluster."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from semi_core.game.backends import Executor  # noqa: E402
from semi_core.game.play import play  # noqa: E402
from semi_core.sgd.audit import ATTACKS, audit_games  # noqa: E402
from semi_core.sgd.linreg import H2Config, LinRegSGDMechanism, simulate_h2  # noqa: E402
from semi_core.sgd.scorers import LossBaselines  # noqa: E402


def _same(a, b):
    assert list(a) == list(b)
    for tau in a:
        np.testing.assert_array_equal(a[tau].member, b[tau].member)
        np.testing.assert_array_equal(a[tau].tau, b[tau].tau)
        assert list(a[tau].stats) == list(b[tau].stats)
        for k in a[tau].stats:
            np.testing.assert_array_equal(a[tau].stats[k], b[tau].stats[k])


def test_linreg_game_is_the_runner_game():
    """simulate_h2 is play on the mechanism plus the loss scorer, with attack names."""
    cfg = H2Config(steps=4)
    res = simulate_h2(cfg, tau=2, rounds=50, seed=3)
    mech = LinRegSGDMechanism(cfg)
    ref = play(mech, 50, 3, tau=2, tests=("semi-star", "semi-max"),
               scorers=(LossBaselines(mech),))
    assert list(res.stats) == list(ATTACKS)
    np.testing.assert_array_equal(res.member, ref.member)
    np.testing.assert_array_equal(res.stats["semi_sgd"], ref.stats["semi-star"])
    np.testing.assert_array_equal(res.stats["delta_diff"], ref.stats["delta_diff"])
    with pytest.raises(TypeError, match="H2Config"):
        LinRegSGDMechanism({"d": 5})
    with pytest.raises(ValueError, match="releases"):
        mech.log_lr_steps(np.zeros((2, 3)))


def test_dpsgd_audit_identical_in_process_threads_and_dask(small_setup, dask_client):
    kw = dict(rounds=8, taus=[1, 3], seed=11, chunk_size=4)
    a = audit_games(small_setup, **kw)
    b = audit_games(small_setup, executor=Executor(threads=2), **kw)
    c = audit_games(small_setup, executor=Executor(client=dask_client), **kw)
    _same(a, b)
    _same(a, c)
    assert c[1].metadata["executor"] == "dask-client"
    assert list(a[1].stats) == list(ATTACKS)
    d = audit_games(small_setup, **{**kw, "seed": 12})
    assert not np.array_equal(a[1].stats["semi_max"], d[1].stats["semi_max"])
