"""The conformance suite's rules: a good mechanism passes each, broken ones fail naming the rule,
the LR-identity rule catches a log-LR scored in the wrong direction that passes the thirteen
others. Every mechanism of the package goes through every rule in tests/test_conformance.py."""

import math
import random

import numpy as np
import pytest
from scipy.stats import norm

from semi_core.testing import (
    CHECKS,
    RULES,
    MechanismCase,
    MechanismCheckError,
    check_lr_identity,
    check_mechanism,
    lr_identity_statistics,
    parametrize_with_checks,
)


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


BROKEN = [
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
]


@pytest.mark.parametrize("mech, rule", BROKEN)
def test_broken_mechanisms_fail_naming_the_rule(mech, rule):
    with pytest.raises(MechanismCheckError, match=f"rule '{rule}' failed") as info:
        check_mechanism(mech)
    assert info.value.rule == rule


@pytest.mark.parametrize("mech, rule", [b for b in BROKEN if b[1] != "ground_truth"])
def test_each_rule_alone_fails_its_broken_mechanism(mech, rule):
    """The rule's own function, called alone (no shared draws), fails the mechanism."""
    with pytest.raises(MechanismCheckError) as info:
        CHECKS[rule](mech)
    assert info.value.rule == rule


def test_each_rule_alone_passes_the_good_mechanism():
    assert list(CHECKS) == list(RULES)
    for rule, check in CHECKS.items():
        assert check(Good()) == "passed", rule


# ------------------------------------------------------------------- the LR identity rule
#: Shift of step t: a_t^2 = 0.1 (t - 1), so that the plain E_H1[1/LR_t] of the wrong-direction
#: log-LR is exp(2 a_t^2) = 1.22, 1.49, 1.82 at t = 2, 3, 4.
SHIFTS = np.sqrt(0.1 * np.arange(4))


class Shifted:
    """o_t ~ N(a_t [B, t = tau], 1), T = 4, with its exact log-LR a_t o_t - a_t^2 / 2 and its
    ground truth (mu-GDP with mu = max a_t, whatever tau)."""

    T = 4

    def release(self, member, tau, rng):
        out = rng.standard_normal((len(member), self.T))
        m = np.asarray(member, bool)
        t = np.asarray(tau)[m] - 1
        out[m, t] += SHIFTS[t]
        return out[..., None]

    def log_lr_steps(self, releases):
        return SHIFTS * releases[..., 0] - SHIFTS**2 / 2

    def params(self):
        return {"mechanism": "shifted", "shifts": SHIFTS.tolist()}

    def epsilon(self, delta, tau=1):
        from semi_core.stats.gdp import gdp_epsilon

        return gdp_epsilon(float(SHIFTS.max()), delta)


class WrongDirection(Shifted):
    """The shift scored in the opposite direction: -a_t o_t - a_t^2 / 2. It is the exact
    log-LR of N(-a_t, 1) against the true H0, so E_H0[LR] = 1 still holds; E_H1[1/LR] =
    exp(2 a_t^2) does not."""

    def log_lr_steps(self, releases):
        return -SHIFTS * releases[..., 0] - SHIFTS**2 / 2


def test_wrong_direction_passes_the_other_rules_and_fails_lr_identity():
    mech = WrongDirection()
    rep = check_mechanism(mech, expected_failures={"lr_identity": "scored the wrong way"})
    assert list(rep) == list(RULES)
    assert all(rep[r] == "passed" for r in RULES[:-1]), rep
    assert rep["lr_identity"].startswith("expected failure: scored the wrong way"), rep
    with pytest.raises(MechanismCheckError, match="rule 'lr_identity' failed") as info:
        check_mechanism(mech)
    assert info.value.rule == "lr_identity"
    assert check_mechanism(Shifted())["lr_identity"] == "passed"


def test_lr_identity_statistics_match_their_closed_forms():
    """Against the Gaussian closed forms (a = a_t): exact log-LR, A0 = A1 = 1 and the plain
    means are 1; wrong direction, A0 = Phi(-a/2) + 1 - Phi(3a/2), A1 = exp(2a^2) Phi(-5a/2)
    + Phi(a/2), E_H0[LR] = 1 and E_H1[1/LR] = exp(2a^2). A and B statistics within the rule's
    own tolerance (a bound that holds with probability >= 1 - 1e-4), plain means within 5 of
    their standard errors (finite variances: E_H1[LR^-2] = exp(5a^2) for the wrong direction)."""
    for mech, wrong in ((Shifted(), False), (WrongDirection(), True)):
        for s in lr_identity_statistics(mech, lr_rounds=20000, seed=3):
            a = SHIFTS[s.t - 1]
            want0 = norm.cdf(-a / 2) + norm.sf(3 * a / 2) if wrong else 1.0
            want1 = math.exp(2 * a * a) * norm.cdf(-5 * a / 2) + norm.cdf(a / 2) if wrong else 1.0
            assert abs(s.h0 - want0) <= s.h0_tol and abs(s.h1 - want1) <= s.h1_tol, s
            assert abs(s.mean_lr_h0 - 1.0) <= 5 * s.se_lr_h0 + 1e-12, s
            inv = math.exp(2 * a * a) if wrong else 1.0
            assert abs(s.mean_inv_lr_h1 - inv) <= 5 * s.se_inv_lr_h1 + 1e-12, s
            assert s.passed == (not wrong or s.t == 1), s   # a_1 = 0: no signal at t = 1


def test_lr_identity_is_skipped_for_a_declared_score_and_validated():
    class Score(WrongDirection):
        log_lr_exact = False

    assert check_lr_identity(Score()).startswith("skipped: the mechanism declares")
    assert check_lr_identity(WrongDirection(), lr_rounds=0) == "skipped: lr_rounds = 0"
    with pytest.raises(ValueError, match="lr_rounds"):
        check_lr_identity(Good(), lr_rounds=50)
    with pytest.raises(ValueError, match="lr_rounds"):
        check_mechanism(Good(), lr_rounds=-1)


# ------------------------------------------------------------------- expected failures, pytest
def test_expected_failures_are_validated():
    with pytest.raises(ValueError, match="expected_failures must name rules"):
        check_mechanism(Good(), expected_failures={"no_such_rule": "why"})
    with pytest.raises(ValueError, match="needs a reason"):
        check_mechanism(Good(), expected_failures={"chunking": " "})


def test_an_expected_failure_that_passes_reads_passed():
    rep = check_mechanism(Good(), truth_rounds=0, lr_rounds=0,
                          expected_failures={"chunking": "not really"})
    assert rep["chunking"] == "passed"


def test_parametrize_with_checks_ids_marks_and_factories():
    built = []

    def factory():
        built.append(1)
        return Good()

    deco = parametrize_with_checks(
        [Good(), MechanismCase(factory, "lazy", {"rounds": 20, "truth_rounds": 0},
                               {"lr_identity": "a declared reason"})], lr_rounds=0)
    names, params = deco.args
    assert names == "mechanism, check"
    assert [p.id for p in params] == [f"{m}-{r}" for m in ("Good", "lazy") for r in RULES]
    marks = {p.id: p.marks for p in params if p.marks}
    assert list(marks) == ["lazy-lr_identity"]
    assert marks["lazy-lr_identity"][0].kwargs["reason"] == "a declared reason"
    assert built == []                          # built when its first check runs, once
    for mech, check in (p.values for p in params if p.id.startswith("lazy")):
        if repr(check) == "check_lr_identity":
            with pytest.raises(pytest.skip.Exception, match="lr_rounds = 0"):
                check(mech)      # a rule that does not apply is a pytest skip, with its reason
        else:
            assert check(mech).startswith("passed"), check
    assert built == [1]
    with pytest.raises(ValueError, match="options must be drawn from"):
        parametrize_with_checks([Good()], round=20)
    one = parametrize_with_checks([MechanismCase(Good(), "one", rules=("lr_identity",))])
    assert [p.id for p in one.args[1]] == ["one-lr_identity"]
    with pytest.raises(ValueError, match="rules of 'bad' must be drawn from"):
        parametrize_with_checks([MechanismCase(Good(), "bad", rules=("no_such_rule",))])


def test_bad_arguments():
    with pytest.raises(ValueError, match="rounds"):
        check_mechanism(Good(), rounds=5)
    with pytest.raises(ValueError, match="truth_rounds"):
        check_mechanism(Good(), truth_rounds=50)
