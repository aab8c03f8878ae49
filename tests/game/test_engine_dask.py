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
            via_addr = simulate(mech, 3000, 32, executor=Executor(scheduler=cluster.scheduler_address,
                                                         small_jobs="cluster"), **kw)
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
    b = simulate(mech, 4000, 8, executor=Executor(workers=2, small_jobs="cluster"), **kw)
    assert b.backend == "dask-local:2"
    for k in a.stats:
        np.testing.assert_array_equal(a.stats[k], b.stats[k])


def test_local_cluster_leaves_port_8787_alone():
    """A local cluster asks the system for a free dashboard port: no 'Port 8787 is already in
    use' warning where another cluster holds it (a shared machine)."""
    import socket
    import warnings

    from semi_core.game.backends import run_tasks

    holder = socket.socket()
    try:
        holder.bind(("127.0.0.1", 8787))
        holder.listen(1)
    except OSError:
        pass  # taken already: the situation under test
    try:
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            out, _ = run_tasks(abs, [-1, -2], workers=1, small_jobs="cluster")
    finally:
        holder.close()
    assert out == [1, 2]
    assert not [w for w in got if "8787" in str(w.message)], [str(w.message) for w in got]
