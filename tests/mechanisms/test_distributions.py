"""Data families: parsing, errors, exact moments (semi_core.mechanisms.distributions)."""

import math

import numpy as np
import pytest

from semi_core.mechanisms.distributions import (
    DataDistribution,
    DataFamily,
    bernoulli,
    parse_data,
    student_t,
)

SIGMAS = 5.0  # tolerance in standard errors (8 families x 2 moments; false alarm ~1e-5)


@pytest.mark.parametrize("spec,name,param", [
    ("gaussian", "gaussian", None), ("Laplace", "laplace", None),
    ("student-t:5", "student-t", 5.0), ("bernoulli:0.3", "bernoulli", 0.3),
    ("exponential", "exponential", None), ("normal", "gaussian", None),
    ("t:7.5", "student-t", 7.5),
])
def test_parse(spec, name, param):
    fam = parse_data(spec)
    assert fam.name == name
    if param is not None:
        assert fam.param == param
    assert parse_data(fam.spec) == fam


@pytest.mark.parametrize("spec,match", [
    ("cauchy", "unknown distribution"),
    ("bernoulli:0", r"bernoulli p must be in \(0, 1\)"),
    ("bernoulli:1", r"bernoulli p must be in \(0, 1\)"),
    ("bernoulli:-0.2", r"bernoulli p must be in \(0, 1\)"),
    ("student-t:2", "nu must be > 2"),
    ("student-t:1.5", "nu must be > 2"),
    ("student-t", "needs a parameter"),
    ("bernoulli:abc", "must be a number"),
    ("gaussian:3", "takes no parameter"),
])
def test_parse_errors(spec, match):
    with pytest.raises(ValueError, match=match):
        parse_data(spec)


def test_type_errors():
    with pytest.raises(TypeError, match="data must be a string"):
        parse_data(3)
    with pytest.raises(TypeError, match="nu must be a real number"):
        student_t("5")
    with pytest.raises(ValueError, match="bernoulli p"):
        bernoulli(1.2)
    with pytest.raises(ValueError, match="unknown distribution"):
        DataFamily("uniform")
    with pytest.raises(TypeError, match="Generator"):
        parse_data("gaussian").standardized(np.random.RandomState(0), 3)


@pytest.mark.parametrize("spec", ["gaussian", "laplace", "student-t:10", "bernoulli:0.3",
                                  "bernoulli:0.05", "exponential"])
def test_standardised_moments(spec):
    fam = parse_data(spec)
    N = 400_000
    e = fam.standardized(np.random.default_rng(11), N)
    # mean: SE 1/sqrt(N); variance: SE sqrt((mu4 - 1)/N) with mu4 = 3 + excess kurtosis
    assert abs(e.mean()) < SIGMAS / math.sqrt(N)
    se_var = math.sqrt((fam.excess_kurtosis + 2.0) / N)
    assert abs(e.var() - 1.0) < SIGMAS * se_var
    k = ((e**4).mean() - 3.0) if fam.name != "student-t" else None
    if k is not None and fam.name in ("gaussian", "laplace", "exponential"):
        # excess kurtosis is finite with finite 8th moment: loose 10% check of the table value
        assert abs(k - fam.excess_kurtosis) < 0.1 * max(1.0, fam.excess_kurtosis) + 0.05


def test_bernoulli_two_values():
    fam = bernoulli(0.3)
    e = fam.standardized(np.random.default_rng(0), 1000)
    vals = np.unique(e)
    np.testing.assert_allclose(vals, [-0.3 / math.sqrt(0.21), 0.7 / math.sqrt(0.21)])


def test_distribution_mean_cov():
    A = np.array([[2.0, 0.3, 0.0], [0.3, 1.0, -0.4], [0.0, -0.4, 0.5]])
    mu = np.array([1.0, -2.0, 0.5])
    dist = DataDistribution("exponential", mu, A)
    N = 200_000
    x = dist.sample(np.random.default_rng(5), N)
    assert x.shape == (N, 3)
    # sample mean SE = sqrt(diag(A)/N)
    assert np.all(np.abs(x.mean(0) - mu) < SIGMAS * np.sqrt(np.diag(A) / N))
    C = np.cov(x.T)
    # entry SE <= sqrt((kurtosis-bounded) var / N); 9 * A_ii A_jj bounds Var(x_i x_j) here
    se = np.sqrt(9.0 * np.outer(np.diag(A), np.diag(A)) / N)
    assert np.all(np.abs(C - A) < SIGMAS * se)


def test_distribution_errors():
    with pytest.raises(ValueError, match="positive definite"):
        DataDistribution("gaussian", [0.0, 0.0], [[1.0, 2.0], [2.0, 1.0]])
    with pytest.raises(ValueError, match="must be > 0"):
        DataDistribution("gaussian", 0.0, -1.0)
    with pytest.raises(ValueError, match="NaN"):
        DataDistribution("gaussian", [np.nan], 1.0)
