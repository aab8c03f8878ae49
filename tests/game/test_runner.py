"""The one runner: executors, plain-class mechanisms, scorers, sweeps, pools, interrupts."""

import itertools
import time

import numpy as np
import pytest
from scipy.stats import norm

from semi_core.audit.games import audit_mechanism
from semi_core.game.backends import Executor
from semi_core.game.play import play, play_pool, play_sweep, scorer
from semi_core.mechanisms.empirical_mean import EmpiricalMean
from semi_core.mechanisms.noisy_mean import NoisyMean
from semi_core.stats import errors
from tests.conftest import MC_SIGMAS, binomial_se


class Shift:
    """A plain class with exactly the protocol's four members: o_t = x_t + a [t = tau]."""

    def __init__(self, T=3, a=2.0):
        self.T, self.a = T, a

    def release(self, member, tau, rng):
        out = rng.standard_normal((len(member), self.T))
        out[np.asarray(member), np.asarray(tau)[np.asarray(member)] - 1] += self.a
        return out[..., None]

    def log_lr_steps(self, releases):
        o = releases[..., 0]
        return self.a * o - self.a**2 / 2

    def params(self):
        return {"mechanism": "shift", "T": self.T, "a": self.a}


def _loss(releases, tau, rng):
    """A loss-like baseline: minus the distance of the last release to 0 (higher = member)."""
    return -np.abs(releases[:, -1, 0])


def _noise(releases, tau, rng):
    return rng.standard_normal(releases.shape[0])


def _same(a, b):
    np.testing.assert_array_equal(a.member, b.member)
    np.testing.assert_array_equal(a.tau, b.tau)
    assert a.stats.keys() == b.stats.keys()
    for k in a.stats:
        np.testing.assert_array_equal(a.stats[k], b.stats[k])


def test_plain_class_is_played_and_audited_with_every_default():
    """A four-member class (no subclassing, no final_log_lr, no epsilon) gets the defaults."""
    mech = Shift()
    res = play(mech, 3000, seed=1)
    assert set(res.stats) == {"semi-star", "semi-unif", "semi-max"}
    out = audit_mechanism(mech, 3000, 2)
    assert set(out["tests"]) == {"semi-star", "semi-max"}
    assert out["epsilon_true"] is None
    assert out["tests"]["semi-star"]["epsilon_lower_bound"] > 0.3
    # SeMI* is exactly the z-test at the known tau: TPR at 1 % FPR is Phi(a - z_0.99)
    s1, s0 = res.scores("semi-star")
    thr = np.quantile(s0, 0.99)
    tpr, want = float((s1 > thr).mean()), float(norm.cdf(2.0 - norm.ppf(0.99)))
    assert abs(tpr - want) <= MC_SIGMAS * 2 * binomial_se(want, s1.size)


def test_same_seed_identical_in_process_threads_and_dask(dask_client):
    sc = [scorer(_loss, "loss", tau_free=True), scorer(_noise, "noise")]
    for mech in (EmpiricalMean.isotropic(8, 4, distance=2.0, d=3),
                 NoisyMean(10, 5, noise=0.3, data_mean=-1.0, data_std=0.1)):
        kw = dict(tau="uniform", chunk_size=700, scorers=sc)
        a = play(mech, 3000, 17, **kw)
        b = play(mech, 3000, 17, executor=Executor(threads=2), **kw)
        c = play(mech, 3000, 17, executor=Executor(client=dask_client), **kw)
        _same(a, b)
        _same(a, c)
        assert c.metadata["executor"] == "dask-client" and b.metadata["executor"] == "threads:2"
        d = play(mech, 3000, 18, **kw)
        assert not np.array_equal(a.stats["noise"], d.stats["noise"])


def test_scorer_streams_are_independent_of_the_crafter():
    mech = EmpiricalMean.isotropic(6, 3, distance=2.0)
    a = play(mech, 500, 3, chunk_size=100)
    b = play(mech, 500, 3, chunk_size=100, scorers=[scorer(_noise, "noise")])
    for k in a.stats:  # adding a scorer does not move the Crafter's or the releases' streams
        np.testing.assert_array_equal(a.stats[k], b.stats[k])


def test_play_reproduces_the_closed_form():
    mech = EmpiricalMean.isotropic(10, 6, distance=3.0)
    res = play(mech, 40_000, 9, tau=4, executor=2)
    s1, s0 = res.scores("semi-star")
    tpr = float((s1 > np.quantile(s0, 0.99)).mean())
    want = float(errors.tpr_at_fpr(mech, 0.01, "semi-star"))
    assert abs(tpr - want) <= MC_SIGMAS * 2 * binomial_se(want, s1.size)


class _Broken(Shift):
    def __init__(self, how):
        super().__init__()
        self.how, self.count = how, itertools.count(1)

    def release(self, member, tau, rng):
        call = next(self.count)  # atomic under the GIL: each call gets its own number
        out = super().release(member, tau, rng)
        if self.how == "shape" and call > 2:
            return np.concatenate([out, out], axis=-1)
        if self.how == "complex":
            return out + 1j
        if self.how == "list":
            return out.tolist()
        if self.how == "rounds":
            return out[:-1]
        return out


@pytest.mark.parametrize("how, exc, match", [
    ("shape", ValueError, "changed shape"),
    ("complex", TypeError, "real numbers"),
    ("list", TypeError, "numpy array"),
    ("rounds", ValueError, "must return shape"),
])
def test_bad_releases_are_refused(how, exc, match):
    with pytest.raises(exc, match=match):
        play(_Broken(how), 500, 0, chunk_size=100)


class _InterruptAt(Shift):
    """Raises ``KeyboardInterrupt`` in the chunk whose rounds are ``(member, tau)``: the chunk is
    recognised by its own draws, never by the order in which threads happen to call (a call
    count made the 3rd call raise, which under load could be chunk 0's: nothing finished, and
    the runner's KeyboardInterrupt escaped the test)."""

    def __init__(self, member, tau):
        super().__init__()
        self.member, self.tau = np.asarray(member), np.asarray(tau)

    def release(self, member, tau, rng):
        if np.array_equal(member, self.member) and np.array_equal(tau, self.tau):
            raise KeyboardInterrupt
        return super().release(member, tau, rng)


@pytest.mark.parametrize("executor", [None, Executor(threads=2)])
def test_interrupt_partial_or_raise(executor):
    full = play(Shift(), 1000, 0, chunk_size=100)
    # chunk 3 is interrupted; the chunks before it were handed to threads first (a FIFO queue)
    # and an interrupt lets running chunks finish, so the partial result is exactly chunks 0-2
    # whatever the scheduling
    mech = _InterruptAt(full.member[300:400], full.tau[300:400])
    assert len({full.member[k:k + 100].tobytes() for k in range(0, 1000, 100)}) == 10
    res = play(mech, 1000, 0, chunk_size=100, executor=executor, on_interrupt="partial")
    assert res.partial and res.metadata["partial"]
    assert res.rounds == 300
    # the partial result is the first chunks of an uninterrupted run, bit for bit
    np.testing.assert_array_equal(res.stats["semi-star"], full.stats["semi-star"][:300])
    np.testing.assert_array_equal(res.member, full.member[:300])
    with pytest.raises(KeyboardInterrupt):
        play(mech, 1000, 0, chunk_size=100, executor=executor)
    # interrupted in chunk 0: nothing finished, so "partial" has nothing to return and the
    # interrupt propagates (caught here: it must never reach pytest)
    first = _InterruptAt(full.member[:100], full.tau[:100])
    with pytest.raises(KeyboardInterrupt, match="before any chunk finished"):
        play(first, 1000, 0, chunk_size=100, executor=executor, on_interrupt="partial")


def test_sweep_shares_h0_rounds_and_matches_the_closed_form():
    mech = EmpiricalMean.isotropic(10, 5, distance=3.0)
    sweep = play_sweep(mech, 20_000, [1, 3, 5], 4, chunk_size=2048)
    meta = sweep[1].metadata
    assert meta["rounds_released"] < 3 * 20_000  # non-member rounds are released once
    want = float(errors.tpr_at_fpr(mech, 0.01, "semi-star"))
    for t, res in sweep.items():
        assert res.rounds == 20_000 and set(res.tau.tolist()) == {t}
        s1, s0 = res.scores("semi-star")
        tpr = float((s1 > np.quantile(s0, 0.99)).mean())
        assert abs(tpr - want) <= MC_SIGMAS * 2 * binomial_se(want, s1.size)
    # H0 round h serves game r of every tau: SeMI-max (tau-free) agrees on shared rounds
    b1, b3 = ~sweep[1].member, ~sweep[3].member
    n = min(b1.sum(), b3.sum())
    np.testing.assert_array_equal(sweep[1].stats["semi-max"][b1][:n],
                                  sweep[3].stats["semi-max"][b3][:n])


def test_sweep_identical_across_executors(dask_client):
    mech = NoisyMean(10, 4, noise=0.4, data_mean=-1.0, data_std=0.1)
    sc = [scorer(_loss, "loss", tau_free=True)]
    a = play_sweep(mech, 600, [1, 4], 2, chunk_size=128, scorers=sc)
    b = play_sweep(mech, 600, [1, 4], 2, chunk_size=128, scorers=sc, executor=2)
    c = play_sweep(mech, 600, [1, 4], 2, chunk_size=128, scorers=sc,
                   executor=Executor(client=dask_client))
    for t in (1, 4):
        _same(a[t], b[t])
        _same(a[t], c[t])


class GaussPool:
    """Pool mechanism: model i releases the mean of its records plus N(0, s^2) noise."""

    def __init__(self, n_records=40, d=2, noise=0.05, seed=0):
        self.x = np.random.default_rng(seed).standard_normal((n_records, d))
        self.n_records, self.noise = n_records, noise

    def release_pool(self, rows, rng):
        cnt = np.maximum(rows.sum(1, keepdims=True), 1)
        return rows @ self.x / cnt + self.noise * rng.standard_normal((rows.shape[0],
                                                                       self.x.shape[1]))

    def params(self):
        return {"mechanism": "gauss-pool", "n_records": self.n_records}


class DotScorer:
    names = ("dot", "dot-offline")

    def __call__(self, view, t, records, rng):
        refs = view.models[view.reference_models(t)]
        x = view.mech.x[records]
        own = x @ view.models[t]
        return {"dot": own, "dot-offline": own - (x @ refs.T).mean(1)}


def test_pool_game_rounds_and_executors():
    mech = GaussPool()
    res, view = play_pool(mech, 30, 5, target_models=3, records_per_model=20,
                          scorers=[DotScorer()], chunk_size=7)
    assert res.rounds == 60 and view.models.shape == (30, 2)
    again, _ = play_pool(mech, 30, 5, target_models=3, records_per_model=20,
                         scorers=[DotScorer()], chunk_size=7, executor=2)
    _same(res, again)
    # the recorded membership is the training set: members score higher on average
    m, n = res.scores("dot-offline")
    assert m.mean() > n.mean()
    assert "not independent" in res.metadata["independence"]


def test_executor_validation():
    for kw, match in [(dict(threads=0), "threads"), (dict(workers=0), "workers"),
                      (dict(workers=2, scheduler="tcp://x:1"), "either"),
                      (dict(connect_timeout=0), "connect_timeout"),
                      (dict(worker_timeout=float("inf")), "worker_timeout")]:
        with pytest.raises(ValueError, match=match):
            Executor(**kw)
    with pytest.raises(TypeError, match="executor"):
        play(Shift(), 10, executor="dask")


def test_scheduler_without_workers_times_out():
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=0, dashboard_address=None, processes=False)
    try:
        t0 = time.perf_counter()
        with pytest.raises(TimeoutError, match="no worker"):
            play(Shift(), 100, 0, executor=Executor(scheduler=cluster.scheduler_address,
                                                    worker_timeout=1.0,
                                                    small_jobs="cluster"))
        assert time.perf_counter() - t0 < 30
    finally:
        cluster.close()
