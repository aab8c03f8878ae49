"""The empirical-mean mechanism's whitened target offsets by forward substitution (no
``scipy.linalg`` import at construction) against SciPy's triangular solve."""

import numpy as np
import pytest
from scipy.linalg import solve_triangular

from semi_core.mechanisms.empirical_mean import EmpiricalMean, _forward_solve


@pytest.mark.parametrize("d", [1, 2, 3, 7, 40])
def test_forward_solve_meets_the_backward_error_bound(d):
    """Forward substitution is backward stable: the residual obeys the componentwise bound
    |b - L x| <= gamma_d |L| |x|, gamma_d = d eps / (1 - d eps) (Higham, Thm 8.5), here with a
    factor 2 of slack; the solution equals SciPy's to d eps times the condition number."""
    rng = np.random.default_rng(d)
    A = rng.standard_normal((3, d, d))
    L = np.linalg.cholesky(A @ A.transpose(0, 2, 1) + 0.5 * np.eye(d))
    b = 3.0 * rng.standard_normal((3, d))
    x = _forward_solve(L, b)
    eps = np.finfo(float).eps
    gamma = d * eps / (1 - d * eps)
    resid = np.abs(b - np.einsum("tij,tj->ti", L, x))
    assert np.all(resid <= 2 * gamma * np.einsum("tij,tj->ti", np.abs(L), np.abs(x)))
    ref = np.stack([solve_triangular(L[t], b[t], lower=True) for t in range(3)])
    cond = max(np.linalg.cond(L[t]) for t in range(3))
    np.testing.assert_allclose(x, ref, rtol=0, atol=4 * d * eps * cond * np.abs(ref).max())
    if d == 1:
        np.testing.assert_array_equal(x, ref)  # one division, as LAPACK does


def test_mechanism_offsets_match_scipy():
    mech = EmpiricalMean([2, 5, 3], 3, mu=[[0.0, 1.0], [0.5, 0.2], [1.0, -1.0]],
                         cov=[[[1.0, 0.2], [0.2, 0.5]], [[2.0, 0.0], [0.0, 1.0]],
                              [[0.3, -0.1], [-0.1, 0.9]]], target=[2.0, 0.0])
    ref = np.stack([solve_triangular(mech.chol_t[t], mech.delta_t[t], lower=True)
                    for t in range(3)])
    np.testing.assert_allclose(mech.u_t, ref, rtol=1e-14, atol=0)
    np.testing.assert_allclose(mech.m_t, np.einsum("ti,ti->t", ref, ref), rtol=1e-14)
