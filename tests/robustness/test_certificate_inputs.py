"""What the certifying entry points accept: array-likes, one-run class sizes, named assumptions.

Array-likes: every array-like a user can pass is either accepted exactly (the same bound as the
plain float64 array of its values) or refused with its type named; a masked array with a masked
entry is refused, never silently unmasked (the old validator dropped the mask: null data
certified eps = 1.40 with band, 1.56 with cp, 0.63 with one-run). Checked through every
certifying method (band, cp split, cp ranks, cp at thresholds, dkw, one-run, gdp trade-off,
gdp gaussian) and entry (``epsilon_lower_bound``, ``audit_batch``, ``audit_game_result``).
One-run: it refuses class sizes incompatible with Bernoulli(1/2) inclusion (900 vs 100
certified eps 1.55-2.28 from null scores) and its false-certificate rate under the theorem's
design stays below the failure probability. Assumptions: every result names its assumption.
"""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from semi_core._validation import as_score_array, check_scores
from semi_core.audit import audit_batch, epsilon_lower_bound, epsilon_lower_bound_from_counts
from semi_core.audit.bounds import ASSUMPTIONS
from semi_core.audit.games import audit_game_result
from semi_core.audit.one_run import (
    BALANCE_LEVEL,
    check_inclusion_balance,
    inclusion_balance_p_value,
)
from semi_core.audit.roc import split_scores
from semi_core.game.result import GameResult

#: (label, epsilon_lower_bound keyword arguments, assumption key)
METHODS = [
    ("band", {"method": "band"}, "iid-games"),
    ("joint", {"method": "joint"}, "iid-games"),
    ("dkw", {"method": "dkw"}, "iid-games"),
    ("cp-split", {"method": "cp"}, "iid-games"),
    ("cp-ranks", {"method": "cp", "thresholds": "ranks"}, "iid-games"),
    ("cp-thresholds", {"method": "cp", "thresholds": [0.0, 1.0]}, "iid-games+preregistered"),
    ("one-run", {"method": "one-run"}, "one-run-bernoulli-half"),
    ("one-run-guesses", {"method": "one-run", "guesses": (20, 20)}, "one-run-bernoulli-half"),
    ("gdp", {"method": "gdp"}, "mu-gdp"),
    ("gdp-gaussian", {"method": "gdp", "gdp_fit": "gaussian"}, "gaussian-scores"),
]
METHOD_IDS = [m[0] for m in METHODS]
DELTA = 1e-5


def _bound(member, nonmember, kw):
    return epsilon_lower_bound(member, nonmember, delta=DELTA, **kw).epsilon_lower_bound


def _null(n=200, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=n), rng.normal(size=n)


# -- array-likes: masked arrays --------------------------------------------------------------------
def _hidden(n=200, k=60, seed=0):
    """Null scores plus k masked entries hiding huge member values: unmasked, they certify."""
    m, nm = _null(n, seed)
    data = np.concatenate([m, np.full(k, 1e6)])
    mask = np.concatenate([np.zeros(n, bool), np.ones(k, bool)])
    return np.ma.array(data, mask=mask), np.ma.array(nm, mask=np.zeros(n, bool))


def test_the_reported_masked_exploit_certifies_when_unmasked():
    """The hidden values are what the old validator certified from (so the refusal matters)."""
    mem, non = _hidden()
    for label, kw, _ in METHODS:
        if label == "one-run-guesses":
            continue
        if label.startswith("one-run"):  # one-run needs balanced classes: hide both ways
            continue
        assert _bound(np.ma.getdata(mem), np.ma.getdata(non), kw) > 0.2, label


@pytest.mark.parametrize("label,kw,_a", METHODS, ids=METHOD_IDS)
@pytest.mark.parametrize("where", ["member", "nonmember", "both"])
@pytest.mark.parametrize("entry", ["direct", "batch", "batch-list", "split"])
def test_masked_entries_are_refused(label, kw, _a, where, entry):
    m, nm = _null()
    mm = np.ma.array(m, mask=np.arange(m.size) % 7 == 0) if where != "nonmember" else m
    mn = np.ma.array(nm, mask=np.arange(nm.size) % 5 == 0) if where != "member" else nm
    with pytest.raises(TypeError, match="masked"):
        if entry == "direct":
            epsilon_lower_bound(mm, mn, delta=DELTA, **kw)
        elif entry == "batch":
            audit_batch(mm, mn, delta=DELTA, **kw)
        elif entry == "batch-list":
            audit_batch([mm], [mn], delta=DELTA, **kw)
        else:
            scores = np.ma.concatenate([np.ma.asarray(mm), np.ma.asarray(mn)])
            split_scores(scores, np.r_[np.ones(m.size, bool), np.zeros(nm.size, bool)])


@pytest.mark.parametrize("label,kw,_a", METHODS, ids=METHOD_IDS)
def test_masked_without_masked_entries_is_its_data(label, kw, _a):
    m, nm = _null(seed=3)
    ref = _bound(m, nm, kw)
    assert _bound(np.ma.array(m), np.ma.array(nm, mask=False), kw) == ref
    assert float(audit_batch(np.ma.array(m[None]), nm[None], delta=DELTA, **kw)[0]) == ref


def test_game_result_refuses_masked_stats():
    mem, non = _hidden()
    stats = np.ma.concatenate([mem, non])
    member = np.r_[np.ones(mem.size, bool), np.zeros(non.size, bool)]
    with pytest.raises(TypeError, match="masked"):
        res = GameResult(member=member, tau=1, stats={"s": stats})
        audit_game_result(res, delta=DELTA, method="band")


@pytest.mark.parametrize("label,kw,_a", METHODS, ids=METHOD_IDS)
def test_audit_game_result_validates_like_the_direct_entry(label, kw, _a):
    m, nm = _null(seed=4)
    res = GameResult(member=np.r_[np.ones(m.size, bool), np.zeros(nm.size, bool)], tau=1,
                     stats={"s": np.concatenate([m, nm])})
    out = audit_game_result(res, delta=DELTA, **kw)["s"]
    assert out["epsilon_lower_bound"] == _bound(m, nm, kw)
    assert out["assumption"] == _a


# -- array-likes: every array-like, accepted exactly or refused with its type named ----------------
class ArrayLike:
    """An xarray/pandas-like object exposing ``__array__`` only."""

    def __init__(self, arr):
        self._arr = arr

    def __array__(self, dtype=None, copy=None):
        return self._arr if dtype is None else self._arr.astype(dtype)


def _torch():
    return pytest.importorskip("torch")


def _pandas():
    return pytest.importorskip("pandas")


BASE = np.array([-1.5, -0.25, 0.0, 0.5, 1.0, 2.0, 3.0, -2.0] * 25)
INTS = np.round(BASE * 4).astype(np.int64)

#: name -> (factory(values) -> user input, values it must equal, or the refused type's name)
ACCEPTED = {
    "ndarray-f64": (lambda v: v, BASE),
    "ndarray-f32": (lambda v: v.astype(np.float32), BASE.astype(np.float32)),
    "ndarray-f16": (lambda v: v.astype(np.float16), BASE.astype(np.float16)),
    "ndarray-int64": (lambda v: INTS, INTS),
    "ndarray-uint8": (lambda v: (INTS - INTS.min()).astype(np.uint8),
                      (INTS - INTS.min()).astype(np.uint8)),
    "ndarray-bool": (lambda v: v > 0, BASE > 0),
    "list": (lambda v: v.tolist(), BASE),
    "tuple": (lambda v: tuple(v.tolist()), BASE),
    "list-of-int": (lambda v: INTS.tolist(), INTS),
    "range": (lambda v: range(len(v)), np.arange(len(BASE))),
    "fractions": (lambda v: [Fraction(x).limit_denominator() for x in v.tolist()], BASE),
    "object-floats": (lambda v: v.astype(object), BASE),
    "masked-none": (lambda v: np.ma.array(v, mask=np.zeros(v.size, bool)), BASE),
    "__array__": (lambda v: ArrayLike(v), BASE),
    "matrix-row-as-list": (lambda v: list(np.asarray(v)), BASE),
    "torch": (lambda v: _torch().tensor(v), BASE),
    "torch-f32": (lambda v: _torch().tensor(v, dtype=_torch().float32), BASE.astype(np.float32)),
    "torch-detached": (lambda v: _torch().tensor(v, requires_grad=True).detach(), BASE),
    "pandas-series": (lambda v: _pandas().Series(v), BASE),
    "pandas-series-int": (lambda v: _pandas().Series(INTS), INTS),
    "pandas-series-nullable": (lambda v: _pandas().Series(INTS, dtype="Int64"), INTS),
}
REFUSED = {
    "masked-one": (lambda v: np.ma.array(v, mask=np.arange(v.size) == 3), "masked"),
    "__array__-masked": (lambda v: ArrayLike(np.ma.array(v, mask=np.arange(v.size) == 0)),
                         "masked"),
    "list-with-masked-constant": (lambda v: [*v.tolist()[:-1], np.ma.masked], "masked|NaN"),
    "generator": (lambda v: (x for x in v), "generator"),
    "iterator": (lambda v: iter(v.tolist()), "iterator"),
    "str": (lambda v: ",".join(map(str, v)), "str"),
    "bytes": (lambda v: v.tobytes(), "bytes"),
    "bytearray": (lambda v: bytearray(v.tobytes()), "bytearray"),
    "string-array": (lambda v: v.astype(str), "dtype <U"),
    "bytes-array": (lambda v: v.astype("S8"), r"dtype \|S8"),
    "datetime": (lambda v: np.arange(v.size).astype("datetime64[D]"), "datetime64"),
    "timedelta": (lambda v: np.arange(v.size).astype("timedelta64[s]"), "timedelta64"),
    "complex": (lambda v: v + 1j, "complex"),
    "object-None": (lambda v: np.array([*v.tolist()[:-1], None], dtype=object), "NoneType"),
    "object-str": (lambda v: np.array([*v.tolist()[:-1], "1.0"], dtype=object), "str"),
    "decimal": (lambda v: [Decimal(str(x)) for x in v], "Decimal"),
    "set": (lambda v: set(v.tolist()), "set"),
    "dict": (lambda v: dict(enumerate(v)), "dict"),
    "ragged": (lambda v: [v.tolist(), [1.0]], "list"),
    "scalar": (lambda v: 1.5, "float"),
    "0-d": (lambda v: np.array(1.5), r"shape \(\)"),
    "2-D": (lambda v: v.reshape(2, -1), r"shape \(2,"),
    "none": (lambda v: None, "NoneType"),
    "nan": (lambda v: np.r_[v[:-1], np.nan], "NaN"),
    "empty": (lambda v: np.empty(0), "empty"),
    "huge-int": (lambda v: [10 ** 400] + v.tolist()[1:], "too large"),
    "torch-requires-grad": (lambda v: _torch().tensor(v, requires_grad=True), "torch"),
    "pandas-dataframe": (lambda v: _pandas().DataFrame({"s": v}), "DataFrame"),
    "pandas-nullable-NA": (lambda v: _pandas().Series([*INTS.tolist()[:-1], None],
                                                      dtype="Int64"), "NaN|NAType"),
    "pandas-series-nan": (lambda v: _pandas().Series(np.r_[v[:-1], np.nan]), "NaN"),
}


@pytest.mark.parametrize("label,kw,_a", METHODS, ids=METHOD_IDS)
@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_array_likes_accepted_exactly(name, label, kw, _a):
    make, values = ACCEPTED[name]
    nm = np.random.default_rng(1).normal(size=BASE.size)
    ref_m = np.asarray(values, dtype=float)
    user = make(BASE)
    assert np.array_equal(check_scores(user, "member_scores"), ref_m)
    assert _bound(user, nm, kw) == _bound(ref_m, nm, kw)
    # the same input as the non-member side (fresh object: generators etc. are consumed)
    assert _bound(nm, make(BASE), kw) == _bound(nm, ref_m, kw)


@pytest.mark.parametrize("label,kw,_a", METHODS, ids=METHOD_IDS)
@pytest.mark.parametrize("name", sorted(REFUSED))
def test_array_likes_refused_with_type_named(name, label, kw, _a):
    make, pattern = REFUSED[name]
    nm = np.random.default_rng(1).normal(size=BASE.size)
    for args, arg_name in (((make(BASE), nm), "member_scores"),
                           ((nm, make(BASE)), "nonmember_scores")):
        with pytest.raises((TypeError, ValueError), match=pattern) as err:
            epsilon_lower_bound(*args, delta=DELTA, **kw)
        assert arg_name in str(err.value)


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_array_likes_refused_by_batch_too(name):
    make, pattern = REFUSED[name]
    if name in ("scalar", "0-d", "2-D", "ragged", "pandas-dataframe"):  # rows for audit_batch
        return
    nm = np.random.default_rng(1).normal(size=BASE.size)
    with pytest.raises((TypeError, ValueError), match=pattern):
        audit_batch(make(BASE), nm, delta=DELTA, method="dkw")


@settings(max_examples=150, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(n1=st.integers(2, 60), n0=st.integers(2, 60), seed=st.integers(0, 2**31 - 1),
       p_mask=st.sampled_from([0.0, 0.0, 0.02, 0.3, 1.0]),
       method=st.sampled_from(range(len(METHODS))))
def test_masks_hypothesis(n1, n0, seed, p_mask, method):
    """Refused iff any entry is masked; otherwise exactly the data's bound."""
    label, kw, key = METHODS[method]
    if label == "one-run-guesses":
        kw = {"method": "one-run", "guesses": (1, 1)}
    if label == "cp-split":
        kw = {**kw, "seed": seed}
    rng = np.random.default_rng(seed)
    m = rng.normal(0.5, 1.0, n1)
    nm = rng.normal(0.0, 1.0, n0)
    mask = rng.random(n1) < p_mask
    mm = np.ma.array(m, mask=mask)
    try:
        ref = epsilon_lower_bound(m, nm, delta=DELTA, **kw)
    except ValueError as exc:  # an input the method refuses anyway (e.g. one-run sizes)
        with pytest.raises((ValueError, TypeError)):
            epsilon_lower_bound(mm, nm, delta=DELTA, **kw)
        assert "masked" not in str(exc)
        return
    assert ref.assumption == key and ref.assumption_text == ASSUMPTIONS[key]
    if mask.any():
        with pytest.raises(TypeError, match="masked"):
            epsilon_lower_bound(mm, nm, delta=DELTA, **kw)
    else:
        got = epsilon_lower_bound(mm, nm, delta=DELTA, **kw).to_dict()
        assert got.keys() == ref.to_dict().keys()
        for k, v in ref.to_dict().items():  # one-run reports nan confidence bounds
            assert got[k] == v or (v != v and got[k] != got[k]), k


def test_as_score_array_never_returns_a_masked_array():
    out = as_score_array(np.ma.array([1.0, 2.0]), "x")
    assert type(out) is np.ndarray and out.dtype == float


# -- one-run: class sizes and the false-certificate rate -------------------------------------------
@pytest.mark.parametrize("guesses", [None, (100, 0), (900, 0), (50, 10), (200, 100), (10, 10),
                                     [(100, 0), (50, 50)]])
@pytest.mark.parametrize("seed", range(6))
def test_one_run_refuses_the_reported_unbalanced_classes(guesses, seed):
    """900 members / 100 non-members, both N(0,1): the old code certified eps 1.55-2.28."""
    rng = np.random.default_rng(seed)
    with pytest.raises(ValueError, match="probability 1/2"):
        epsilon_lower_bound(rng.normal(size=900), rng.normal(size=100), delta=DELTA,
                            method="one-run", guesses=guesses)
    with pytest.raises(ValueError, match="probability 1/2"):
        audit_batch(rng.normal(size=(2, 900)), rng.normal(size=(2, 100)), delta=DELTA,
                    method="one-run", guesses=guesses)


def test_balance_p_value_is_the_exact_two_sided_binomial_test():
    from scipy.stats import binomtest

    for n1, n0 in [(5, 5), (6, 4), (9, 1), (30, 70), (550, 450), (480, 520), (1, 0)]:
        ref = binomtest(n1, n1 + n0, 0.5).pvalue
        assert inclusion_balance_p_value(n1, n0) == pytest.approx(ref, rel=1e-9, abs=1e-300)
    assert 0 < inclusion_balance_p_value(900, 100) < 1e-150  # log space: no underflow to 0
    assert check_inclusion_balance(520, 480) == pytest.approx(binomtest(520, 1000).pvalue)
    with pytest.raises(ValueError, match="p = "):
        check_inclusion_balance(560, 440)


def test_one_run_result_states_its_assumption_and_balance():
    rng = np.random.default_rng(0)
    r = epsilon_lower_bound(rng.normal(size=480), rng.normal(size=520), delta=DELTA,
                            method="one-run", guesses=(100, 0))
    d = r.to_dict()
    assert d["assumption"] == "one-run-bernoulli-half"
    assert "probability 1/2" in d["assumption_text"]
    assert d["inclusion_balance_p_value"] == pytest.approx(inclusion_balance_p_value(480, 520))


#: guess rules of the false-certificate check (None = the pre-registered family)
RULES = {"default": None, "all-in": lambda m: (m, 0), "in-10%": lambda m: (m // 10, 0),
         "out-10%": lambda m: (0, m // 10), "in20-out5": lambda m: (m // 5, m // 20)}


@pytest.mark.parametrize("rule", sorted(RULES))
@pytest.mark.parametrize("m", [20, 200])
def test_one_run_false_certificate_rate_under_the_design(rule, m):
    """Bernoulli(1/2) inclusion, scores independent of it (a 0-DP run: eps = 0): the rate of
    eps_LB > 0 must stay <= xi. 400 runs at xi = 0.1: binomial s.e. 0.015, allowed 0.1 + 3 s.e."""
    xi, reps = 0.1, 400
    rng = np.random.default_rng(np.random.SeedSequence([21, m, len(rule)]))
    false = refused = 0
    for _ in range(reps):
        s = rng.random(m) < 0.5
        if s.all() or not s.any():
            continue
        sc = rng.normal(size=m)
        g = RULES[rule]
        try:
            e = epsilon_lower_bound(sc[s], sc[~s], delta=DELTA, failure_prob=xi,
                                    method="one-run", guesses=None if g is None else g(m),
                                    seed=int(rng.integers(2**31))).epsilon_lower_bound
        except ValueError:
            refused += 1
            continue
        false += e > 0
    se = np.sqrt(xi * (1 - xi) / reps)
    assert false / reps <= xi + 3 * se, (rule, m, false / reps)
    assert refused / reps <= BALANCE_LEVEL + 3 * np.sqrt(BALANCE_LEVEL / reps)


# -- the assumption of every result ----------------------------------------------------------------
@pytest.mark.parametrize("label,kw,key", METHODS, ids=METHOD_IDS)
def test_every_method_names_its_assumption(label, kw, key):
    m, nm = _null(seed=7)
    d = epsilon_lower_bound(m + 1.0, nm, delta=DELTA, **kw).to_dict()
    assert d["assumption"] == key and d["assumption_text"] == ASSUMPTIONS[key]


@pytest.mark.parametrize("method,key", [("cp", "iid-games+preregistered"),
                                        ("dkw", "iid-games+preregistered"), ("gdp", "mu-gdp")])
def test_counts_results_name_their_assumption(method, key):
    r = epsilon_lower_bound_from_counts(90, 10, 10, 90, delta=DELTA, method=method)
    assert r.assumption == key and r.to_dict()["assumption_text"] == ASSUMPTIONS[key]


def test_audit_result_refuses_an_unknown_assumption():
    r = epsilon_lower_bound(*_null(), delta=DELTA, method="dkw")
    from dataclasses import replace

    with pytest.raises(ValueError, match="assumption"):
        replace(r, assumption="none")
