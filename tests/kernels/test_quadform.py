"""Compiled quadratic-form kernels vs their NumPy twins on awkward inputs (bottleneck-style)."""

import numpy as np
import pytest

from semi_core import kernels
from semi_core.kernels import QuadraticForm, _twins

pytestmark = pytest.mark.twin


def _spd(rng, d):
    M = rng.standard_normal((d, d))
    return M @ M.T + d * np.eye(d)


@pytest.mark.parametrize("d", [1, 2, 7, 50])
@pytest.mark.parametrize("layout", ["c", "fortran", "strided", "float32"])
def test_cholsolve_matches_twin(rng, d, layout):
    L = np.linalg.cholesky(_spd(rng, d))
    b = rng.standard_normal(d)
    N = rng.standard_normal((301, 2 * d))
    if layout == "c":
        N = np.ascontiguousarray(N[:, :d])
    elif layout == "fortran":
        N = np.asfortranarray(N[:, :d])
    elif layout == "strided":
        N = N[:, ::2]
    else:
        N = N[:, :d].astype(np.float32)
    got = kernels.quadform_cholsolve(N, L, b, 0.25, -0.6)
    want = _twins.quadform_cholsolve(np.asarray(N, float), L, b, 0.25, -0.6)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    # and against the definition with an independent solver
    w = np.linalg.solve(L, np.asarray(N, float).T).T
    np.testing.assert_allclose(got, 0.25 + w @ b - 0.6 * (w * w).sum(1), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("d", [1, 3, 20])
def test_whitened_matches_twin(rng, d):
    A = np.triu(rng.standard_normal((d, d)))
    b = rng.standard_normal(d)
    N = rng.standard_normal((99, d))[::-1]  # negative strides
    got = kernels.quadform_whitened(N, A, b, -1.0, 2.0)
    np.testing.assert_allclose(got, _twins.quadform_whitened(N, A, b, -1.0, 2.0), rtol=1e-12)


def test_empty_and_nan(rng):
    L = np.linalg.cholesky(_spd(rng, 3))
    assert kernels.quadform_cholsolve(np.empty((0, 3)), L, np.ones(3), 0.0, 1.0).shape == (0,)
    N = rng.standard_normal((4, 3))
    N[2, 1] = np.nan
    got = kernels.quadform_cholsolve(N, L, np.ones(3), 0.0, 1.0)
    want = _twins.quadform_cholsolve(N, L, np.ones(3), 0.0, 1.0)
    assert np.isnan(got[2]) and np.isnan(want[2])
    np.testing.assert_allclose(np.delete(got, 2), np.delete(want, 2), rtol=1e-12)


def test_threads_do_not_change_result(rng):
    L = np.linalg.cholesky(_spd(rng, 5))
    N = rng.standard_normal((10_000, 5))
    one = kernels.quadform_cholsolve(N, L, np.ones(5), 0.1, -0.5, num_threads=1)
    two = kernels.quadform_cholsolve(N, L, np.ones(5), 0.1, -0.5, num_threads=2)
    np.testing.assert_array_equal(one, two)


def test_quadratic_form_two_representations_agree(rng):
    d = 6
    S = _spd(rng, d)
    L = np.linalg.cholesky(S)
    q = QuadraticForm.from_covariance(0.7, rng.standard_normal(d), L, -0.55)
    q2 = QuadraticForm(q.c0, q.c1, q.C2)
    N = rng.standard_normal((50, d))
    np.testing.assert_allclose(q(N), q2(N), rtol=1e-9)
    np.testing.assert_allclose(q(N), q.c0 + N @ q.c1 + np.einsum("ij,jk,ik->i", N, q.C2, N),
                               rtol=1e-9)


def test_bad_inputs(rng):
    L = np.linalg.cholesky(_spd(rng, 3))
    with pytest.raises(ValueError, match="L must have shape"):
        kernels.quadform_cholsolve(np.ones((2, 3)), np.eye(2), np.ones(3), 0, 1)
    with pytest.raises(ValueError, match="b must have shape"):
        kernels.quadform_cholsolve(np.ones((2, 3)), L, np.ones(2), 0, 1)
    with pytest.raises(ValueError, match="positive diagonal"):
        kernels.quadform_cholsolve(np.ones((2, 3)), -L, np.ones(3), 0, 1)
    with pytest.raises(ValueError, match="definite"):
        QuadraticForm(0.0, np.ones(2), np.array([[1.0, 0], [0, -1.0]]))


def test_backend_switch_reported():
    assert kernels.BACKEND in ("cython", "numpy")
    assert kernels.compiled_available() == (kernels.BACKEND == "cython")


def test_environment_switch_forces_twin():
    import os
    import subprocess
    import sys

    env = dict(os.environ, SEMI_CORE_FORCE_TWIN="1")
    out = subprocess.run([sys.executable, "-c", "import semi_core.kernels as k; print(k.BACKEND)"],
                         env=env, capture_output=True, text=True, check=True).stdout.strip()
    assert out == "numpy"


def test_compiled_extension_is_built_unless_twin_forced():
    import os

    if os.environ.get("SEMI_CORE_FORCE_TWIN", "") not in ("", "0"):
        assert kernels.BACKEND == "numpy"
    else:
        # `make test` builds semi_core_ext; a silent fallback would hide a broken build.
        assert kernels.BACKEND == "cython"
