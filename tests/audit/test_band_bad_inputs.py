"""Bad inputs of the new audit methods (band, cp ranks, one-run, gdp at delta = 0): each gives a
clear error naming the argument, through both entry points (epsilon_lower_bound, audit_batch)."""

import numpy as np
import pytest

from semi_core.audit import audit_batch, epsilon_lower_bound, epsilon_lower_bound_from_counts
from semi_core.audit.one_run import one_run_counts, one_run_epsilon, one_run_gdp_mu

M, N = [1.0, 2.0, 3.0, 2.5], [0.0, 1.0, 0.5, -1.0]


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        ({"method": "band", "member_scores": []}, ValueError, "member_scores is empty"),
        ({"method": "band", "nonmember_scores": [0.0, float("nan")]}, ValueError,
         "nonmember_scores contains NaN"),
        ({"method": "band", "member_scores": [1 + 1j]}, TypeError, "real-valued"),
        ({"method": "band", "thresholds": [0.5]}, ValueError, "only used by method='cp'"),
        ({"method": "band", "failure_prob": 0.7}, ValueError, "failure_prob"),
        ({"method": "band", "sides": "both"}, ValueError, "sides"),
        ({"method": "band", "guesses": (1, 1)}, ValueError, "guesses is only used"),
        ({"method": "cp", "thresholds": "rank"}, ValueError, "thresholds must be None, 'ranks'"),
        ({"method": "gdp", "delta": 0.0}, ValueError, "delta must be > 0 for method='gdp'"),
        ({"method": "one-run", "guesses": (5, 4)}, ValueError, "guesses must be a pair"),
        ({"method": "one-run", "guesses": (1.5, 1)}, ValueError, "guesses must be a pair"),
        ({"method": "one-run", "guesses": [(1, 1, 1)]}, ValueError, "guesses must be a pair"),
        ({"method": "one-run", "thresholds": 0.5}, ValueError, "only used by method='cp'"),
        ({"method": "one-run", "member_scores": []}, ValueError, "member_scores is empty"),
        ({"method": "Band"}, ValueError, "method must be one of"),
    ],
)
def test_bad_inputs_both_entry_points(kwargs, exc, match):
    args = {"member_scores": M, "nonmember_scores": N, "delta": 1e-5, "failure_prob": 0.05}
    args.update(kwargs)
    m, n = args.pop("member_scores"), args.pop("nonmember_scores")
    with pytest.raises(exc, match=match):
        epsilon_lower_bound(m, n, **args)
    renamed = {"member_scores": "member", "nonmember_scores": "nonmember"}
    match_b = match
    for old, new in renamed.items():
        match_b = match_b.replace(old, new)
    with pytest.raises(exc, match=match_b):
        audit_batch(np.atleast_2d(m) if len(m) else np.empty((1, 0)),
                    np.atleast_2d(n) if len(n) else np.empty((1, 0)), **args)


def test_counts_reject_score_only_methods_and_gdp_at_delta_zero():
    with pytest.raises(ValueError, match="method must be one of"):
        epsilon_lower_bound_from_counts(5, 5, 5, 5, delta=0.1, method="band")
    with pytest.raises(ValueError, match="delta must be > 0"):
        epsilon_lower_bound_from_counts(5, 5, 5, 5, delta=0.0, method="gdp")


@pytest.mark.parametrize(("fn", "args", "kw", "match"), [
    (one_run_epsilon, (10, 5, 3), {"delta": 0.0, "failure_prob": 0.0}, "failure_prob"),
    (one_run_epsilon, (10, 5, 3), {"delta": -0.1}, "delta"),
    (one_run_gdp_mu, (10, 5, 6), {}, "v <= r"),
    (one_run_gdp_mu, (10, 5, 3), {"n_eps": 1}, "n_eps"),
    (one_run_counts, ([1.0], [0.0], 2, 1), {}, "k_plus"),
    (one_run_counts, ([1.0], [0.0], -1, 0), {}, "k_plus"),
])
def test_one_run_function_bad_inputs(fn, args, kw, match):
    with pytest.raises(ValueError, match=match):
        fn(*args, **kw)
