"""The diagonal and full-covariance leakage scores share one path (``_quadratic_score``): the
diagonal score is the previous expression to the bit, the full form with a diagonal covariance
equals it to rounding, and both refuse the same bad inputs the same way."""

import numpy as np
import pytest
from scipy.linalg import solve_triangular

from semi_core.stats.leakage import leakage_score, mahalanobis_score


def _data(seed=0, d=7):
    rng = np.random.default_rng(seed)
    return (rng.normal(size=(4, 3, d)), rng.normal(size=d), rng.uniform(0.2, 2.0, d),
            rng.uniform(0.0, 0.5, d))


def test_diagonal_is_the_previous_expression_and_the_full_forms_special_case():
    z, mu, v, g = _data()
    got = leakage_score(z, mu, v, 30, noise_var=g)
    np.testing.assert_array_equal(got, np.sum((z - mu) ** 2 / (v + g), axis=-1) / 30)
    full = mahalanobis_score(z, mu, np.diag(v), 30, noise_var=g)
    assert full.shape == got.shape == (4, 3)
    # triangular solve against a ratio: rounding only (1e-13 relative)
    np.testing.assert_allclose(full, got, rtol=1e-13, atol=0)


def test_full_form_is_the_previous_triangular_solve():
    z, mu, _, g = _data(1)
    A = np.random.default_rng(2).normal(size=(7, 7))
    C = A @ A.T + 0.5 * np.eye(7)
    L = np.linalg.cholesky(C + np.diag(g))
    w = solve_triangular(L, (z - mu).reshape(-1, 7).T, lower=True)
    want = (np.sum(w * w, axis=0) / 11).reshape(4, 3)
    np.testing.assert_allclose(mahalanobis_score(z, mu, C, 11, noise_var=g), want,
                               rtol=1e-12, atol=0)
    assert leakage_score(1.0, [0.0], [1.0], 2).shape == ()


@pytest.mark.parametrize("fn", ["diag", "full"])
def test_same_refusals(fn):
    z, mu, v, _ = _data(3)

    def call(z=z, mu=mu, n=5):
        if fn == "diag":
            return leakage_score(z, mu, v, n)
        return mahalanobis_score(z, mu, np.diag(v), n)

    with pytest.raises(ValueError, match=r"mean must have shape \(7,\)"):
        call(mu=mu[:3])
    with pytest.raises(ValueError, match="n"):
        call(n=1)
    with pytest.raises(ValueError, match="z"):
        call(z=np.full(7, np.nan))
