"""Compiled SeMI chunk kernel == its NumPy twin (same Generator stream) on awkward inputs."""

import dataclasses

import numpy as np
import pytest

from semi_core._rng import child_seed
from semi_core.game.engine import build_params, play_chunk
from semi_core.kernels import _twins
from semi_core.kernels.engine_kernels import semi_chunk
from semi_core.mechanisms.empirical_mean import EmpiricalMean

pytestmark = pytest.mark.twin


def _both(params, rounds, seed=0):
    a = play_chunk(params, child_seed(seed, 0), rounds, twin=False)
    b = play_chunk(params, child_seed(seed, 0), rounds, twin=True)
    return a, b


def _assert_same(a, b):
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    # identical draws; only summation order differs (BLAS/einsum vs loops): 1e-12 relative
    np.testing.assert_allclose(a[2], b[2], rtol=1e-12, atol=1e-12, equal_nan=True)


MECHS = {
    "d1": lambda: EmpiricalMean(10, 5, mu=0.0, cov=1.0, target=3.0),
    "d4-full": lambda: EmpiricalMean(3, 4, mu=np.arange(4.0), cov=np.eye(4) + 0.3,
                                     target=np.ones(4) * 2),
    "per-step": lambda: EmpiricalMean([2, 5, 3], 3, mu=[[0.0, 1.0], [0.5, 0.2], [1.0, -1.0]],
                                      cov=[[[1.0, 0.2], [0.2, 0.5]], [[2.0, 0.0], [0.0, 1.0]],
                                           [[0.3, -0.1], [-0.1, 0.9]]], target=[2.0, 0.0]),
    "T1": lambda: EmpiricalMean(2, 1, mu=0.0, cov=2.0, target=-1.0),
}
DATA = ["gaussian", "laplace", "student-t:4.5", "bernoulli:0.2", "exponential"]


@pytest.mark.parametrize("mech_name", list(MECHS))
@pytest.mark.parametrize("data", DATA)
def test_exact_twin(mech_name, data):
    p = build_params(MECHS[mech_name](), data=data, tau="uniform")
    _assert_same(*_both(p, 300))


@pytest.mark.parametrize("mech_name", list(MECHS))
def test_sufficient_twin(mech_name):
    p = build_params(MECHS[mech_name](), mode="sufficient", tau=1, p_member=0.3)
    _assert_same(*_both(p, 300))


def test_empty_chunk():
    p = build_params(MECHS["d1"](), tau=2)
    a, b = _both(p, 0)
    assert a[2].shape == b[2].shape == (4, 0)


def test_float32_and_noncontiguous_params():
    p = build_params(MECHS["per-step"](), data="laplace", tau="uniform")
    ref = play_chunk(p, child_seed(1, 0), 200, twin=False)
    s = p.setup
    u_nc = np.asfortranarray(s.u)  # non-contiguous rows
    q = dataclasses.replace(p, setup=s._replace(
        u=u_nc, fo_A=s.fo_A.transpose(0, 2, 1).copy().transpose(0, 2, 1),
        llr_c0=s.llr_c0[::-1].copy()[::-1], n_t=s.n_t.astype(np.int32)))
    for twin in (False, True):
        out = play_chunk(q, child_seed(1, 0), 200, twin=twin)
        np.testing.assert_array_equal(out[0], ref[0])
        np.testing.assert_allclose(out[2], ref[2], rtol=1e-12, atol=1e-12)
    # float32 arrays are accepted and give the float64 result to float32 accuracy
    r32 = dataclasses.replace(p, setup=s._replace(u=s.u.astype(np.float32)))
    a, b = _both(r32, 200, seed=1)
    _assert_same(a, b)
    np.testing.assert_allclose(a[2], ref[2], rtol=1e-5, atol=1e-5)


def test_nan_propagates_identically():
    p = build_params(MECHS["d1"](), tau="uniform")
    u = p.setup.u.copy()
    u[2, 0] = np.nan
    a, b = _both(dataclasses.replace(p, setup=p.setup._replace(u=u)), 100)
    _assert_same(a, b)
    assert np.isnan(a[2][1]).all() and np.isnan(a[2][2]).all()  # every round sees step 3
    assert np.isnan(a[2][0][a[1] == 3]).all() and np.isfinite(a[2][0][a[1] != 3]).all()


def test_direct_kernel_call_matches_twin():
    """Call the raw kernel and twin with identical arguments (no dispatcher)."""
    p = build_params(MECHS["d4-full"](), data="exponential", tau=[0.1, 0.2, 0.3, 0.4])
    outs = []
    for fn in (semi_chunk, _twins.semi_chunk):
        gen = np.random.Generator(np.random.PCG64(5))
        m, t, s = np.empty(50, bool), np.empty(50, np.int64), np.empty((4, 50))
        fn(gen, 50, p.kernel_setup(), m, t, s)
        outs.append((m, t, s, gen.random()))  # same number of draws consumed
    _assert_same(outs[0][:3], outs[1][:3])
    assert outs[0][3] == outs[1][3]


def test_engine_params_hold_the_one_setup_record():
    """EngineParams keeps the kernel's fields in the set-up record (one field list), adding
    only what the engine alone reads."""
    from semi_core.game.engine import EngineParams
    from semi_core.kernels._records import SemiChunkSetup

    own = {f.name for f in dataclasses.fields(EngineParams)}
    assert own == {"setup", "data_spec", "mode", "kernel"} and not own & set(SemiChunkSetup._fields)
    p = build_params(MECHS["d4-full"](), data="exponential", tau="uniform")
    assert isinstance(p.setup, SemiChunkSetup)
    assert (p.T, p.d, p.exact) == (p.setup.n_t.size, p.setup.u.shape[1], p.setup.exact)
