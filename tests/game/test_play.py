"""The reference SeMI game (seed Alg. 1-2)."""

import numpy as np
import pytest

from semi_core.game.play import crafter, play
from semi_core.mechanisms.base import statistics
from semi_core.mechanisms.empirical_mean import EmpiricalMean
from semi_core.stats.statistics import TEST_NAMES
from tests.conftest import MC_SIGMAS, binomial_se


def test_same_seed_same_result_and_seed_matters():
    mech = EmpiricalMean.isotropic(5, 4, distance=2.0, d=2)
    a = play(mech, 3000, seed=11, chunk_size=500)
    b = play(mech, 3000, seed=11, chunk_size=500)
    c = play(mech, 3000, seed=12, chunk_size=500)
    for k in TEST_NAMES:
        np.testing.assert_array_equal(a.stats[k], b.stats[k])
    assert not np.array_equal(a.stats["semi-star"], c.stats["semi-star"])
    assert set(a.stats) == set(TEST_NAMES)


def test_crafter_inserts_target_in_batch_tau():
    """With sigma tiny the batch mean of tau under B=1 is ((n-1) mu + z*)/n exactly."""
    mech = EmpiricalMean(4, 3, mu=1.0, cov=1e-16, target=9.0)
    B, tau, rel = crafter(mech, np.random.default_rng(0), 200, p_member=0.5)
    xb = mech.batch_means(rel)[..., 0]
    expect = np.where((B[:, None]) & (tau[:, None] == np.arange(1, 4)), (3 * 1.0 + 9.0) / 4, 1.0)
    np.testing.assert_allclose(xb, expect, atol=1e-6)
    assert 0.4 < B.mean() < 0.6 and set(np.unique(tau)) == {1, 2, 3}


def test_membership_and_tau_laws(rng):
    mech = EmpiricalMean.isotropic(3, 4)
    B, tau, _ = crafter(mech, rng, 40_000, p_member=0.3, tau_pmf=[0.1, 0.2, 0.3, 0.4])
    assert abs(B.mean() - 0.3) <= MC_SIGMAS * binomial_se(0.3, B.size)
    for t, p in enumerate([0.1, 0.2, 0.3, 0.4], start=1):
        assert abs((tau == t).mean() - p) <= MC_SIGMAS * binomial_se(p, tau.size)


def test_T1_all_tests_coincide():
    mech = EmpiricalMean.isotropic(10, 1, distance=3.0)
    r = play(mech, 2000, seed=1)
    for k in ("semi-unif", "semi-max", "final"):
        np.testing.assert_allclose(r.stats[k], r.stats["semi-star"], rtol=1e-10, atol=1e-10)


def test_scores_are_from_releases_only(rng):
    mech = EmpiricalMean.isotropic(6, 5, distance=2.0)
    B, tau, rel = crafter(mech, rng, 100)
    s = statistics(mech, rel, tau)
    lr = mech.log_lr_steps(rel)
    np.testing.assert_allclose(s["semi-star"], lr[np.arange(100), tau - 1])
    np.testing.assert_allclose(s["semi-max"], lr.max(1))


def test_unif_power_between_final_and_star():
    """Seed §3.3 ordering (measured): SeMI* >= SeMI-Unif >= Final Observation at T = 10."""
    from semi_core.stats import errors as E

    mech = EmpiricalMean.isotropic(10, 10, distance=3.0)
    r = play(mech, 40_000, seed=5, tau=None)
    s1, s0 = r.scores("semi-unif")
    thr = np.quantile(s0, 0.99)
    tpr_unif = (s1 > thr).mean()
    star = float(E.tpr_at_fpr(mech, 0.01, "semi-star"))
    final = float(E.tpr_at_fpr(mech, 0.01, "final"))
    se = binomial_se(tpr_unif, s1.size)
    assert final - MC_SIGMAS * se <= tpr_unif <= star + MC_SIGMAS * se


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(rounds=0), "rounds must be in 1"),
        (dict(rounds=10, p_member=1.0), r"p_member must be in \(0, 1\)"),
        (dict(rounds=10, tau=0), "tau must be in 1..3"),
        (dict(rounds=10, tau=[0.5, 0.6, -0.1]), "non-negative"),
        (dict(rounds=10, chunk_size=0), "chunk_size"),
    ],
)
def test_bad_inputs(kwargs, match):
    with pytest.raises(ValueError, match=match):
        play(EmpiricalMean.isotropic(4, 3), **kwargs)


def test_notebook_forms():
    """Short repr, a summary table (text and HTML), tidy long frame, JSON-safe dict."""
    import json

    from semi_core._json import to_jsonable

    r = play(EmpiricalMean.isotropic(10, 5, distance=3.0), 2000, seed=0)
    text = repr(r)
    assert text.startswith("GameResult(rounds=2000") and len(text) < 200 and "array" not in text
    tab = r.summary()
    assert [row["test"] for row in tab] == list(r.stats)
    star = tab[0]
    assert star["members"] + star["non_members"] == 2000 and star["separation"] > 0.5
    assert r._repr_html_().startswith("<table>")
    json.dumps(to_jsonable(r.to_dict()))
    pd = pytest.importorskip("pandas")
    df = r.to_frame()
    assert isinstance(df, pd.DataFrame) and df.shape == (4 * 2000, 5)
    assert set(df["test"]) == set(r.stats)
    np.testing.assert_array_equal(df[df["test"] == "final"]["score"].to_numpy(),
                                  r.stats["final"])
