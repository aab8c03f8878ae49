"""The conformance suite: every mechanism of the package passes, broken ones fail by rule."""

import random

import numpy as np
import pytest

from semi_core.mechanisms import zoo
from semi_core.mechanisms.empirical_mean import EmpiricalMean
from semi_core.mechanisms.noisy_mean import NoisyMean
from semi_core.mechanisms.per_datum import AverageDatumMean, PerDatumMean, ProductLaw
from semi_core.testing import RULES, MechanismCheckError, check_mechanism


class Good:
    """Four members and a ground truth: o_t ~ N(a [B, t = tau], 1), mu = a-GDP."""

    T = 3

    def __init__(self, a=1.0, declared=None):
        self.a, self.declared = a, declared

    def release(self, member, tau, rng):
        out = rng.standard_normal((len(member), self.T))
        m = np.asarray(member, bool)
        out[m, np.asarray(tau)[m] - 1] += self.a
        return out[..., None]

    def log_lr_steps(self, releases):
        return self.a * releases[..., 0] - self.a**2 / 2

    def params(self):
        return {"mechanism": "good", "a": self.a}

    def epsilon(self, delta, tau=1):
        from semi_core.stats.gdp import gdp_epsilon

        return gdp_epsilon(self.a, delta) if self.declared is None else self.declared


def test_good_mechanism_passes_every_rule():
    rep = check_mechanism(Good())
    assert list(rep) == list(RULES) and all(v == "passed" for v in rep.values())


class WrongShape(Good):
    def release(self, member, tau, rng):
        return super().release(member, tau, rng)[:, :-1]


class ComplexRelease(Good):
    def release(self, member, tau, rng):
        return super().release(member, tau, rng) * (1 + 0j)


class GlobalRng(Good):
    def release(self, member, tau, rng):
        return super().release(member, tau, rng) + np.random.standard_normal()


class PythonRandom(Good):
    def release(self, member, tau, rng):
        return super().release(member, tau, rng) + random.random()


class NanLogLR(Good):
    def log_lr_steps(self, releases):
        out = super().log_lr_steps(releases)
        out[0, 0] = np.nan
        return out


class LogLRShape(Good):
    def log_lr_steps(self, releases):
        return super().log_lr_steps(releases)[:, :1]


class BatchNormalised(Good):
    """Releases standardised over the rounds of the call: a round depends on the others."""

    def release(self, member, tau, rng):
        out = super().release(member, tau, rng)
        return out - out.mean(axis=0, keepdims=True) if out.shape[0] > 1 else out


class CrossRound(Good):
    """log-LRs that read the other rounds (centred over the batch)."""

    def log_lr_steps(self, releases):
        lr = super().log_lr_steps(releases)
        return lr - lr.mean(axis=0, keepdims=True)


class OverClaims(Good):
    """Declares epsilon = 0.05 but the releases reveal membership (a = 4)."""

    def __init__(self):
        super().__init__(a=4.0, declared=0.05)


class NaNParam(Good):
    def params(self):
        return {"mechanism": "nan", "p": float("nan")}


class NotJson(Good):
    def params(self):
        return {"mechanism": object()}


class Deterministic(Good):
    def release(self, member, tau, rng):
        return np.zeros((len(member), self.T, 1))


class ShapeDrift(Good):
    def release(self, member, tau, rng):
        out = super().release(member, tau, rng)
        return np.concatenate([out] * 2, axis=-1) if len(member) == 1 else out


class NoParams:
    T = 2

    def release(self, member, tau, rng):
        return rng.standard_normal((len(member), 2, 1))

    def log_lr_steps(self, releases):
        return releases[..., 0]


class Unseeded(Good):
    """Fresh OS entropy on every call: not reproducible under a seed."""

    def release(self, member, tau, rng):
        return super().release(member, tau, np.random.default_rng())


class IncreasingEps(Good):
    def epsilon(self, delta, tau=1):
        return 1.0 + delta


@pytest.mark.parametrize("mech, rule", [
    (WrongShape(), "release_shape"),
    (ComplexRelease(), "release_shape"),
    (GlobalRng(), "global_rng"),
    (PythonRandom(), "global_rng"),
    (NanLogLR(), "log_lr_shape"),
    (LogLRShape(), "log_lr_shape"),
    (BatchNormalised(), "chunking"),
    (CrossRound(), "log_lr_rowwise"),
    (OverClaims(), "ground_truth"),
    (NaNParam(), "params"),
    (NotJson(), "params"),
    (Deterministic(), "seed_matters"),
    (ShapeDrift(), "release_shape_stable"),
    (NoParams(), "protocol"),
    (Unseeded(), "determinism"),
    (IncreasingEps(), "ground_truth"),
])
def test_broken_mechanisms_fail_naming_the_rule(mech, rule):
    with pytest.raises(MechanismCheckError, match=f"rule '{rule}' failed") as info:
        check_mechanism(mech)
    assert info.value.rule == rule


PACKAGE = [
    EmpiricalMean.isotropic(10, 5, distance=3.0),
    EmpiricalMean(n=[20, 5, 5], T=3, mu=0.0, cov=1.0, target=4.0),
    NoisyMean(10, 10, noise=0.5, data_mean=-1.0, data_std=0.1),
    PerDatumMean(ProductLaw.bernoulli(np.full(30, 0.3)), n=50, target=np.ones(30)),
    PerDatumMean(ProductLaw.bernoulli(np.full(30, 0.3)), n=50, target=np.ones(30), rho=0.5),
    PerDatumMean(ProductLaw.bernoulli(np.full(30, 0.3)), n=50, target=np.ones(30), rho=0.5,
                 inclusion="per-coordinate"),
    AverageDatumMean(ProductLaw.bernoulli(np.full(10, 0.3)), 20),
]


@pytest.mark.parametrize("mech", PACKAGE, ids=lambda m: type(m).__name__)
def test_package_mechanisms_pass(mech):
    rep = check_mechanism(mech)
    assert all(v == "passed" or v.startswith("skipped") for v in rep.values())


@pytest.mark.parametrize("name", sorted(zoo.ZOO))
def test_zoo_mechanisms_pass(name):
    rep = check_mechanism(zoo.make_zoo_mechanism(name, 1.0), rounds=60, truth_rounds=400)
    assert all(v == "passed" or v.startswith("skipped") for v in rep.values())


def test_bad_arguments():
    with pytest.raises(ValueError, match="rounds"):
        check_mechanism(Good(), rounds=5)
    with pytest.raises(ValueError, match="truth_rounds"):
        check_mechanism(Good(), truth_rounds=50)
