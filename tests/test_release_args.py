"""``check_release_args`` is the one check of a mechanism's ``release(member, tau, rng)``
arguments: the releases that call it refuse an insertion step outside 1..T the same way and
read the same arguments as before."""

import numpy as np
import pytest

from semi_core._validation import check_release_args


def test_check_release_args():
    m, t = check_release_args([[True, False, True]], 2, 3)
    assert m.dtype == bool and m.shape == (3,) and t.dtype == np.int64
    np.testing.assert_array_equal(t, [2, 2, 2])
    m, t = check_release_args(np.array([1, 0]), np.array([1, 3]), 3)
    np.testing.assert_array_equal(m, [True, False])
    np.testing.assert_array_equal(t, [1, 3])
    for bad in (0, 4, [1, 4]):
        with pytest.raises(ValueError, match=r"tau must be in 1\.\.3"):
            check_release_args([True, False], bad, 3)
    assert check_release_args([], 99, 3)[1].size == 0        # no rounds, nothing to check


def test_releases_refuse_an_out_of_range_step():
    from semi_core.attacks.updates.gap import SufficientEmpiricalMean
    from semi_core.mechanisms.empirical_mean import EmpiricalMean

    em = EmpiricalMean(n=[10, 10], T=2, mu=0.0, cov=1.0, target=np.r_[1.0, 0.0])
    rng = np.random.default_rng(0)
    for mech in (em, SufficientEmpiricalMean(n=[10, 10], T=2, mu=0.0, cov=1.0,
                                             target=np.r_[1.0, 0.0])):
        with pytest.raises(ValueError, match=r"tau must be in 1\.\.2"):
            mech.release([True, False], 3, rng)
    a = em.release([True, False, True], [1, 2, 2], np.random.default_rng(5))
    b = em.release(np.array([1, 0, 1]), np.array([1, 2, 2]), np.random.default_rng(5))
    np.testing.assert_array_equal(a, b)
