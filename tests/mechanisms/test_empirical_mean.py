"""EmpiricalMean: log-LRs vs independent Gaussian densities, isolation, validation."""

import numpy as np
import pytest
from scipy.stats import multivariate_normal as mvn

from semi_core.mechanisms.empirical_mean import EmpiricalMean

pytestmark = pytest.mark.twin


def _spd(rng, d):
    M = rng.standard_normal((d, d))
    return M @ M.T + 0.5 * np.eye(d)


def _per_step_mech(rng, T=4, d=3):
    n = rng.integers(2, 12, size=T)
    mu = rng.standard_normal((T, d))
    cov = np.stack([_spd(rng, d) for _ in range(T)])
    return EmpiricalMean(n, T, mu=mu, cov=cov, target=rng.standard_normal(d) * 2)


def test_log_lr_steps_equals_density_ratio_per_step(rng):
    """log LR_t = log N(Xbar; mu+delta/n, (n-1)S/n^2) - log N(Xbar; mu, S/n), 100+ random points."""
    mech = _per_step_mech(rng)
    xb = rng.standard_normal((40, mech.T, mech.d)) + mech.mu_t
    lr = mech.batch_log_lr_steps(xb)
    for t in range(mech.T):
        n, S, mu, dl = mech.n_t[t], mech.cov_t[t], mech.mu_t[t], mech.delta_t[t]
        want = (mvn(mu + dl / n, (n - 1) * S / n**2).logpdf(xb[:, t])
                - mvn(mu, S / n).logpdf(xb[:, t]))
        np.testing.assert_allclose(lr[:, t], want, rtol=1e-10, atol=1e-10)


def test_log_lr_from_running_means_is_the_transition_density_ratio(rng):
    """Lemma 3.2: the full-sequence LR equals the ratio of the tau-th transition densities."""
    mech = _per_step_mech(rng, T=3, d=2)
    xb = rng.standard_normal((30, 3, 2)) + mech.mu_t
    rel = mech.releases(xb)
    lr = mech.log_lr_steps(rel)
    N = mech.cum_n
    for t in range(1, 3):  # transition mu_hat_{t} | mu_hat_{t-1}, t >= 2 (0-based t)
        prev = rel[:, t - 1]
        n, S = mech.n_t[t], mech.cov_t[t]
        base = (N[t - 1] * prev) / N[t]
        m0 = base + n * mech.mu_t[t] / N[t]
        m1 = base + ((n - 1) * mech.mu_t[t] + mech.target) / N[t]
        want = np.array([mvn(m1[i], (n - 1) * S / N[t] ** 2).logpdf(rel[i, t])
                         - mvn(m0[i], n * S / N[t] ** 2).logpdf(rel[i, t]) for i in range(30)])
        np.testing.assert_allclose(lr[:, t], want, rtol=1e-9, atol=1e-9)


def test_isolation_round_trip(rng):
    mech = _per_step_mech(rng)
    xb = rng.standard_normal((5, mech.T, mech.d))
    np.testing.assert_allclose(mech.batch_means(mech.releases(xb)), xb, atol=1e-12)


def test_final_log_lr_matches_densities(rng):
    mech = EmpiricalMean(7, 4, mu=[1.0, -1.0], cov=_spd(rng, 2), target=[3.0, 0.5])
    W = rng.standard_normal((25, 2)) * 0.3 + mech.final_mean
    N = mech.cum_n[-1]
    S = mech.cov_t[0]
    want = (mvn(mech.final_mean + mech.delta_t[0] / N, (N - 1) * S / N**2).logpdf(W)
            - mvn(mech.final_mean, S / N).logpdf(W))
    np.testing.assert_allclose(mech.final_release_log_lr(W), want, rtol=1e-10, atol=1e-10)
    # non-stationary covariance: general Gaussian pair (covariances not proportional)
    mech2 = _per_step_mech(rng, T=3, d=2)
    W2 = rng.standard_normal((10, 2)) * 0.3 + mech2.final_mean
    N2 = mech2.cum_n[-1]
    V0 = np.einsum("t,tij->ij", mech2.n_t.astype(float), mech2.cov_t) / N2**2
    V1 = V0 - mech2.cov_t[1] / N2**2
    want2 = (mvn(mech2.final_mean + mech2.delta_t[1] / N2, V1).logpdf(W2)
             - mvn(mech2.final_mean, V0).logpdf(W2))
    np.testing.assert_allclose(mech2.final_release_log_lr(W2, tau=2), want2, rtol=1e-9, atol=1e-9)
    with pytest.raises(ValueError, match="tau is required"):
        mech2.final_release_log_lr(W2)


def test_mahalanobis(rng):
    S = _spd(rng, 4)
    z = rng.standard_normal(4)
    mech = EmpiricalMean(5, 2, mu=np.zeros(4), cov=S, target=z)
    np.testing.assert_allclose(mech.m_t, z @ np.linalg.solve(S, z), rtol=1e-12)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(n=1, T=3), "n must be in 2"),
        (dict(n=[5, 1, 5], T=3), r"n\[1\] must be in 2"),
        (dict(n=5, T=0), "T must be in 1"),
        (dict(n=5, T=3, cov=-1.0), "variance"),
        (dict(n=5, T=3, cov=0.0), "variance"),
        (dict(n=5, T=3, target=[1.0, 2.0], cov=np.array([[1.0, 2.0], [2.0, 1.0]])), "positive definite"),
        (dict(n=5, T=3, target=[1.0, 2.0], cov=np.eye(3)), "must be 2x2"),
        (dict(n=5, T=3, target=np.nan), "NaN"),
        (dict(n=5, T=3, mu=[0.0, 1.0]), "mu must have 1 entries"),
        (dict(n=5.5, T=3), "integer"),
    ],
)
def test_bad_inputs(kwargs, match):
    kwargs.setdefault("target", 1.0)
    with pytest.raises((ValueError, TypeError), match=match):
        EmpiricalMean(**kwargs)


def test_bad_observations():
    mech = EmpiricalMean(5, 3, target=2.0)
    with pytest.raises(ValueError, match="NaN"):
        mech.batch_log_lr_steps([[0.0], [np.nan], [0.0]])
    with pytest.raises(ValueError, match="shape"):
        mech.batch_log_lr_steps(np.zeros((4, 2)))
    with pytest.raises(ValueError, match="tau must be in 1..3"):
        mech.final_release_log_lr(np.zeros(1), tau=4)
