"""Hypothesis-driven bad and edge inputs to the Python API: clear errors or correct answers.

Classes of bad input: (1) no false certificate — every certifying entry point validates
scores with the one validator and so accepts/refuses identically; (2) closed forms at the
extremes give a right answer or raise, never NaN or a floor; (6) untrusted files (IDX, CSV,
``.npy``) give ``ValueError``/``TypeError``/``FileNotFoundError`` only; (8) no silent
reinterpretation. Every example must end in a value that satisfies its contract or in one of
the documented exception types; any other exception fails the test.
"""

from __future__ import annotations

import gzip
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from semi_core._validation import (
    check_covariance,
    check_delta,
    check_failure_prob,
    check_finite_array,
    check_int,
    check_positive,
    check_probability,
    check_scores,
)
from semi_core.audit import audit_batch, epsilon_lower_bound
from semi_core.audit.games import audit_game_result
from semi_core.game.result import GameResult

USER_ERRORS = (ValueError, TypeError)
FAST = settings(max_examples=60, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

# -- (1) every certifying entry validates identically ------------------------------------------

CERT_METHODS = ("dkw", "cp", "gdp")


def _entries(member, nonmember, method):
    """The certifying entries, each given the same (member, nonmember) scores."""

    def direct():
        return epsilon_lower_bound(member, nonmember, delta=1e-5, method=method).epsilon_lower_bound

    def batch():
        return float(audit_batch(np.asarray(member)[None] if np.ndim(member) == 1 else member,
                                 np.asarray(nonmember)[None] if np.ndim(nonmember) == 1
                                 else nonmember, delta=1e-5, method=method)[0])

    def game():
        m, n = np.atleast_1d(np.asarray(member)), np.atleast_1d(np.asarray(nonmember))
        res = GameResult(member=np.r_[np.ones(m.size, bool), np.zeros(n.size, bool)],
                         tau=1, stats={"s": np.concatenate([m, n])})
        return audit_game_result(res, delta=1e-5, method=method)["s"]["epsilon_lower_bound"]

    return {"epsilon_lower_bound": direct, "audit_batch": batch, "audit_game_result": game}


def _outcome(fn):
    try:
        return ("ok", fn())
    except USER_ERRORS as exc:
        return ("error", type(exc).__name__)


@FAST
@given(nan_frac=st.floats(0.01, 1.0), method=st.sampled_from(CERT_METHODS),
       seed=st.integers(0, 2**16), which=st.sampled_from(["member", "nonmember", "both"]))
def test_nan_scores_are_refused_by_every_certifying_entry(nan_frac, method, seed, which):
    """No false certificate: NaN-laced scores from identical laws must never certify."""
    rng = np.random.default_rng(seed)
    m, n = rng.normal(size=300), rng.normal(size=300)
    k = max(1, int(nan_frac * 300))
    if which in ("member", "both"):
        m[:k] = np.nan
    if which in ("nonmember", "both"):
        n[:k] = np.nan
    outcomes = {name: _outcome(fn) for name, fn in _entries(m, n, method).items()
                if not (name == "audit_game_result" and which == "both" and nan_frac == 1.0)}
    assert all(o == ("error", "ValueError") for o in outcomes.values()), outcomes


BAD_SCORES = [
    ("empty", np.array([]), np.ones(5)),
    ("complex", np.ones(5) * (1 + 1j), np.ones(5)),
    ("strings", np.array(["a", "b"]), np.ones(5)),
    ("none", None, np.ones(5)),
    ("nan-nonmember", np.ones(5), np.array([0.0, np.nan])),
    ("object", np.array([{}, {}], dtype=object), np.ones(5)),
]


@pytest.mark.parametrize("method", CERT_METHODS)
@pytest.mark.parametrize("name, member, nonmember", BAD_SCORES, ids=[b[0] for b in BAD_SCORES])
def test_bad_scores_same_refusal_everywhere(name, member, nonmember, method):
    outcomes = {k: _outcome(fn) for k, fn in _entries(member, nonmember, method).items()}
    kinds = {o[0] for o in outcomes.values()}
    assert kinds == {"error"}, outcomes


@FAST
@given(method=st.sampled_from(CERT_METHODS), seed=st.integers(0, 2**16),
       shift=st.floats(0, 3), n=st.integers(20, 200))
def test_valid_scores_same_answer_everywhere(method, seed, shift, n):
    rng = np.random.default_rng(seed)
    m, nm = rng.normal(shift, 1, n), rng.normal(0, 1, n)
    vals = {k: fn() for k, fn in _entries(m, nm, method).items()}
    assert all(np.isfinite(v) and v >= 0 for v in vals.values()), vals
    assert max(vals.values()) - min(vals.values()) < 1e-9, vals


@FAST
@given(delta=st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.none(), st.text()),
       xi=st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.booleans()))
def test_delta_and_failure_prob_validated_identically(delta, xi):
    m, n = np.linspace(0, 2, 50), np.linspace(-1, 1, 50)
    outs = []
    for fn in (lambda: epsilon_lower_bound(m, n, delta=delta, failure_prob=xi),
               lambda: audit_batch(m[None], n[None], delta=delta, failure_prob=xi,
                                   method="dkw")):
        outs.append(_outcome(fn)[0])
    ok = (isinstance(delta, float) and math.isfinite(delta) and 0 <= delta < 1
          and not isinstance(xi, bool) and isinstance(xi, float) and 0 < xi <= 0.5)
    assert outs == (["ok", "ok"] if ok else ["error", "error"])


def test_unknown_gdp_fit_refused_for_every_method():
    m, n = np.linspace(0, 2, 50), np.linspace(-1, 1, 50)
    for method in CERT_METHODS:
        with pytest.raises(ValueError, match="gdp_fit"):
            epsilon_lower_bound(m, n, delta=1e-5, method=method, gdp_fit="nope")


# -- validators: a valid value out, or ValueError/TypeError ------------------------------------

ANY = st.one_of(st.none(), st.booleans(), st.integers(-10**20, 10**20),
                st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=5),
                st.complex_numbers(allow_nan=True), st.lists(st.floats(), max_size=3))


@settings(max_examples=150, deadline=None, derandomize=True)
@given(value=ANY)
def test_scalar_validators(value):
    checks = [
        (lambda v: check_int(v, "x", minimum=0, maximum=10), lambda r: 0 <= r <= 10),
        (lambda v: check_positive(v, "x"), lambda r: math.isfinite(r) and r > 0),
        (lambda v: check_probability(v, "x"), lambda r: 0 < r < 1),
        (lambda v: check_delta(v), lambda r: 0 <= r < 1),
        (lambda v: check_failure_prob(v), lambda r: 0 < r <= 0.5),
    ]
    for fn, ok in checks:
        try:
            r = fn(value)
        except USER_ERRORS:
            continue
        assert ok(r), (value, r)


@settings(max_examples=100, deadline=None, derandomize=True)
@given(arr=st.one_of(
    st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=6),
    st.lists(st.lists(st.floats(-1e3, 1e3), min_size=2, max_size=2), min_size=2, max_size=2),
    st.lists(st.complex_numbers(max_magnitude=10), min_size=1, max_size=4),
    st.text(max_size=4)))
def test_array_validators(arr):
    for fn, ok in [
        (lambda a: check_scores(a, "s"), lambda r: r.ndim == 1 and r.size and not np.isnan(r).any()),
        (lambda a: check_finite_array(a, "a"), lambda r: np.all(np.isfinite(r))),
        (lambda a: check_covariance(a, "cov")[0],
         lambda r: np.all(np.linalg.eigvalsh(r) > 0)),
    ]:
        try:
            r = fn(arr)
        except USER_ERRORS:
            continue
        assert ok(r), (arr, r)


def test_complex_covariance_is_refused_not_truncated():
    with pytest.raises(TypeError, match="real"):
        check_covariance(np.eye(2) * (1 + 1e-3j), "cov")


# -- (2) closed forms at the extremes ---------------------------------------------------------

@settings(max_examples=80, deadline=None, derandomize=True)
@given(log_n=st.floats(np.log10(2), 13), log_dist=st.floats(-3, 7), d=st.sampled_from([1, 2]),
       T=st.integers(1, 3), fpr=st.floats(1e-4, 0.5),
       test=st.sampled_from(["semi-star", "final", "semi-max"]))
def test_power_is_a_valid_lr_power_or_an_error(log_n, log_dist, d, T, fpr, test):
    """TPR at FPR of an LR test is in [FPR, 1] (Neyman-Pearson), never NaN or a 1e-16 floor."""
    from semi_core.mechanisms.empirical_mean import EmpiricalMean
    from semi_core.stats import errors as E

    n = max(2, int(10**log_n))
    mech = EmpiricalMean.isotropic(n, T, distance=10**log_dist, d=d)
    try:
        tpr = float(E.tpr_at_fpr(mech, fpr, test, T))
        gamma = float(E.threshold(mech, fpr, test, T))
    except ValueError as exc:  # only the documented refusal
        assert "double precision" in str(exc) or "not computable" in str(exc), exc
        return
    assert np.isfinite(tpr) and np.isfinite(gamma)
    assert fpr * (1 - 1e-6) - 1e-12 <= tpr <= 1.0 + 1e-12, (n, log_dist, tpr)
    assert float(E.alpha(mech, gamma, test, T)) == pytest.approx(fpr, rel=1e-5, abs=1e-12)


@pytest.mark.parametrize("kw, expect", [
    (dict(n=10, T=10, sigma=1e-5, distance=3e5), 1.0),   # `power --sigma 1e-5 --target 3`
    (dict(n=10, T=10, distance=100.0), 1.0),             # far target
    (dict(n=10**12, T=10, distance=3.0), 0.01),           # huge n: TPR -> FPR from above
])
def test_issue_extremes(kw, expect):
    from semi_core.mechanisms.empirical_mean import EmpiricalMean
    from semi_core.stats import errors as E

    mech = EmpiricalMean.isotropic(**kw)
    tpr = float(E.tpr_at_fpr(mech, 0.01, "semi-star", 5))
    assert tpr >= 0.01 and tpr == pytest.approx(expect, abs=1e-4)


def test_auc_of_a_separable_test_is_one_not_a_floor():
    from semi_core.mechanisms.empirical_mean import EmpiricalMean
    from semi_core.stats import errors as E

    assert E.auc(EmpiricalMean.isotropic(10, 3, distance=1e3), "semi-star", 2) == pytest.approx(1)


def test_nan_threshold_is_an_error_not_never_reject():
    from semi_core.mechanisms.empirical_mean import EmpiricalMean
    from semi_core.stats import errors as E

    mech = EmpiricalMean.isotropic(10, 3)
    for fn in (E.alpha, E.beta):
        with pytest.raises(ValueError, match="NaN"):
            fn(mech, np.nan, "semi-star", 1)


def test_unrepresentable_target_raises():
    from semi_core.game.engine import simulate
    from semi_core.mechanisms.empirical_mean import EmpiricalMean
    from semi_core.stats import errors as E

    mech = EmpiricalMean(10, 2, mu=0.0, cov=1.0, target=1e200)
    with pytest.raises(ValueError, match="too far|double precision"):
        E.tpr_at_fpr(mech, 0.01, "semi-star", 1)
    with pytest.raises(ValueError, match="too far"):
        simulate(mech, 100, 0, tau=1)


# -- (8) silent reinterpretation --------------------------------------------------------------

@FAST
@given(sigma=st.floats(allow_nan=True, allow_infinity=True),
       distance=st.floats(allow_nan=True, allow_infinity=True))
def test_isotropic_refuses_what_it_would_reinterpret(sigma, distance):
    from semi_core.mechanisms.empirical_mean import EmpiricalMean

    try:
        mech = EmpiricalMean.isotropic(10, 2, sigma=sigma, distance=distance)
    except USER_ERRORS:
        var = sigma * sigma if math.isfinite(sigma) else math.inf
        assert not (math.isfinite(sigma) and sigma > 0 and math.isfinite(distance)
                    and distance >= 0) or not 0 < var < math.inf or not math.isfinite(
                        distance * sigma) or not math.isfinite(distance * distance)
        return
    assert sigma > 0 and distance >= 0
    assert float(mech.m_t[0]) == pytest.approx(distance * distance, rel=1e-9, abs=1e-300)


def test_calibrate_sigma_never_returns_an_off_target_sigma():
    from semi_core.sgd.accounting import calibrate_sigma
    from semi_core.stats.gdp import gdp_epsilon

    for eps in (1e-6, 0.1, 1.0, 8.0, 200.0):
        s = calibrate_sigma(eps, 1e-5)
        assert gdp_epsilon(2.0 / s, 1e-5) == pytest.approx(eps, rel=1e-6)
    with pytest.raises(ValueError):
        calibrate_sigma(1e9, 1e-5)


# -- (6) untrusted files ----------------------------------------------------------------------

@settings(max_examples=120, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(raw=st.binary(max_size=64), gz=st.booleans(), cut=st.integers(0, 40))
def test_read_idx_fuzz(tmp_path, raw, gz, cut):
    from semi_core.sgd.data import read_idx

    p = tmp_path / ("f.idx.gz" if gz else "f.idx")
    data = gzip.compress(raw) if gz else raw
    if gz and cut:
        data = data[: max(len(data) - cut, 1)]  # a truncated / corrupt stream
    p.write_bytes(data)
    try:
        arr = read_idx(p, max_bytes=10_000)
    except ValueError:
        return
    ndim = raw[3]
    dims = tuple(int.from_bytes(raw[4 + 4 * i: 8 + 4 * i], "big") for i in range(ndim))
    assert arr.shape == dims


def test_idx_header_bigger_than_cap_is_refused_before_reading(tmp_path):
    from semi_core.sgd.data import read_idx

    head = bytes([0, 0, 8, 3]) + b"".join(v.to_bytes(4, "big") for v in (60000, 28, 28))
    p = tmp_path / "bomb.gz"
    p.write_bytes(gzip.compress(head + bytes(50_000_000)))  # 47 MB inflated, ~50 kB on disk
    with pytest.raises(ValueError, match="limit"):
        read_idx(p, max_bytes=1_000_000)


@settings(max_examples=150, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(alphabet=st.sampled_from(list("score,member01\n\r\t ;.-eEnaINF\ufeff\"")),
                    max_size=80))
def test_read_scores_csv_fuzz(tmp_path, text):
    from semi_core.cli.audit import read_scores_csv

    p = tmp_path / "s.csv"
    p.write_text(text, encoding="utf-8")
    try:
        m, n = read_scores_csv(str(p))
    except ValueError:
        return
    assert m.dtype == float and n.dtype == float


@settings(max_examples=80, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(raw=st.binary(max_size=200))
def test_load_npy_fuzz(tmp_path, raw):
    from semi_core.cli._common import load_npy

    p = tmp_path / "x.npy"
    p.write_bytes(b"\x93NUMPY" + raw if raw[:1] == b"\x01" else raw)
    try:
        arr = load_npy(str(p), "--cov")
    except USER_ERRORS:
        return
    assert arr.dtype == float


# -- engine: refusals up front, bounded memory ---------------------------------------------------

@FAST
@given(p_member=st.floats(allow_nan=True), rounds=st.integers(-5, 300),
       chunk=st.integers(-2, 64), mode=st.sampled_from(["exact", "sufficient", "nope"]))
def test_simulate_arguments(p_member, rounds, chunk, mode):
    from semi_core.game.engine import simulate
    from semi_core.mechanisms.empirical_mean import EmpiricalMean

    mech = EmpiricalMean.isotropic(4, 2)
    try:
        res = simulate(mech, rounds, 0, p_member=p_member, chunk_size=chunk, mode=mode, tau=1)
    except USER_ERRORS:
        assume(True)
        return
    assert 0 < p_member < 1 and rounds >= 1 and chunk >= 1 and mode in ("exact", "sufficient")
    assert all(np.all(np.isfinite(v)) for v in res.stats.values())


def test_resource_refusal_says_what_would_work():
    from semi_core._validation import ResourceLimitError
    from semi_core.game.engine import simulate
    from semi_core.mechanisms.empirical_mean import EmpiricalMean

    with pytest.raises(ResourceLimitError, match="sufficient"):
        simulate(EmpiricalMean.isotropic(10**6, 10), 10**7, 0)
    with pytest.raises(ResourceLimitError, match="simulate_streaming"):
        simulate(EmpiricalMean.isotropic(10, 10), 10**11, 0, mode="sufficient",
                 max_variates=1e15)
