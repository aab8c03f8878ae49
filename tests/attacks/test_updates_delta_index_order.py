"""Delta's ``index-order`` collision rule (the authors' published loop, without its refill
slip) against a slow loop that states the rule literally, and against a loop written from the
authors' description wherever that loop yields a partition."""

from __future__ import annotations

import numpy as np
import pytest

from semi_core.claims.combining_mi_updates.evaluation import authors_delta_loop as _authors_loop
from semi_core.stats.update_combination import COLLISION_RULES, assign_top_n


def _slow_index_order(s, n_up):
    """Update j = 1..k in turn takes, going down its own ranking (ties: lower index first), the
    first n_up points no earlier update took."""
    N, k = s.shape
    out = [0] * N
    for j in range(k):
        ranked = sorted(range(N), key=lambda i: (-s[i][j], i))
        taken = 0
        for i in ranked:
            if taken == n_up:
                break
            if out[i] == 0:
                out[i] = j + 1
                taken += 1
    return np.array(out)


def _cases(n_cases=300, seed=0, ties=False):
    rng = np.random.default_rng(seed)
    for _ in range(n_cases):
        k = int(rng.integers(1, 6))
        n_up = int(rng.integers(1, 6))
        N = int(rng.integers(k * n_up, 3 * k * n_up + 1))
        s = rng.integers(0, 4, size=(N, k)).astype(float) if ties else rng.normal(size=(N, k))
        yield s, n_up


@pytest.mark.parametrize("ties", [False, True])
def test_index_order_equals_the_slow_loop(ties):
    assert "index-order" in COLLISION_RULES
    for s, n_up in _cases(ties=ties, seed=1 + ties):
        a = assign_top_n(s, n_up, collisions="index-order")
        np.testing.assert_array_equal(a, _slow_index_order(s, n_up))
        counts = np.bincount(a, minlength=s.shape[1] + 1)[1:]
        assert (counts == n_up).all()           # exactly n_up per update, each point once


def test_index_order_is_the_authors_loop_where_that_loop_is_a_partition():
    dup = agree = 0
    differs_argmax = differs_exclusive = 0
    for s, n_up in _cases(seed=3):
        picks = _authors_loop(s, n_up)
        flat = [i for ch in picks for i in ch]
        if len(set(flat)) < len(flat):
            dup += 1                            # the refill slip: one point in two updates
            continue
        ref = np.zeros(s.shape[0], dtype=np.int64)
        for j, ch in enumerate(picks):
            ref[ch] = j + 1
        np.testing.assert_array_equal(assign_top_n(s, n_up, collisions="index-order"), ref)
        agree += 1
        differs_argmax += not np.array_equal(ref, assign_top_n(s, n_up, collisions="argmax"))
        differs_exclusive += not np.array_equal(ref, assign_top_n(s, n_up))
    # the slip is common and the rule is neither of the other two
    assert dup > 0 and agree > 0 and differs_argmax > 0 and differs_exclusive > 0


def test_the_three_rules_on_one_collision():
    # point 0 tops both updates, far better for update 2; point 1 is second in both
    s = np.array([[2.0, 9.0], [1.0, 8.0], [0.0, 0.0]])
    assert assign_top_n(s, 1, collisions="index-order").tolist() == [1, 2, 0]  # update 1 first
    assert assign_top_n(s, 1, collisions="exclusive").tolist() == [2, 1, 0]    # best pair first
    assert assign_top_n(s, 1, collisions="argmax").tolist() == [2, 0, 0]       # own top only
