"""Dask backend: a 2-worker LocalCluster gives results identical to the local run."""

import numpy as np
import pytest

from semi_core.game.backends import Executor
from semi_core.game.engine import simulate
from semi_core.mechanisms.empirical_mean import EmpiricalMean

distributed = pytest.importorskip("distributed")


def test_dask_localcluster_identical_to_local():
    mech = EmpiricalMean(10, 6, mu=0.0, cov=1.0, target=3.0)
    kw = dict(tau="uniform", chunk_size=1500, data="laplace")
    local = simulate(mech, 6000, 31, **kw)
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None)
    try:
        with distributed.Client(cluster) as client:
            remote = simulate(mech, 6000, 31, executor=Executor(client=client), **kw)
            # the scheduler-address path of the same backend
            via_addr = simulate(mech, 3000, 32, executor=Executor(scheduler=cluster.scheduler_address), **kw)
    finally:
        cluster.close()
    assert remote.backend == "dask-client" and via_addr.backend.startswith("dask:")
    np.testing.assert_array_equal(local.member, remote.member)
    np.testing.assert_array_equal(local.tau, remote.tau)
    for k in local.stats:
        np.testing.assert_array_equal(local.stats[k], remote.stats[k])
    again = simulate(mech, 3000, 32, executor=2, **kw)
    np.testing.assert_array_equal(again.stats["semi-unif"], via_addr.stats["semi-unif"])


@pytest.mark.slow
def test_dask_workers_flag_identical_to_local():
    """``workers=2`` starts (and closes) its own LocalCluster."""
    mech = EmpiricalMean(5, 4, mu=0.0, cov=2.0, target=-3.0)
    kw = dict(tau=2, chunk_size=1000, mode="sufficient")
    a = simulate(mech, 4000, 8, **kw)
    b = simulate(mech, 4000, 8, executor=Executor(workers=2), **kw)
    assert b.backend == "dask-local:2"
    for k in a.stats:
        np.testing.assert_array_equal(a.stats[k], b.stats[k])
