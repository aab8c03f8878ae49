"""Shared test helpers."""

import numpy as np
import pytest


def binomial_se(p: float, n: int) -> float:
    """Standard error of a binomial proportion p estimated from n trials (floored at 1/n)."""
    return max(np.sqrt(p * (1 - p) / n), 1.0 / n)


#: Monte Carlo tolerance in standard errors. With ~100 comparisons per run the chance that any
#: one exceeds 4.5 SE under a correct formula is < 1e-3 (two-sided normal tail 6.8e-6 each).
MC_SIGMAS = 4.5


@pytest.fixture
def rng():
    return np.random.default_rng(20261122)


@pytest.fixture(scope="session")
def dask_client():
    """One 2-worker Dask ``LocalCluster`` (processes) shared by every test that needs one."""
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None)
    client = distributed.Client(cluster)
    yield client
    client.close()
    cluster.close()
