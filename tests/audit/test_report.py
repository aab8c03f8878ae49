"""The one audit report (:mod:`semi_core.audit.report`): typed reads, the refutation split by
assumption, several methods on one game, and ``to_dict`` equal to the entry points' JSON."""

import json

import numpy as np
import pytest

from semi_core._json import to_jsonable
from semi_core.audit.bounds import ASSUMPTIONS, epsilon_lower_bound
from semi_core.audit.games import audit_game_result
from semi_core.audit.report import (
    DISTRIBUTION_FREE,
    AuditReport,
    certify_game,
    method_specs,
    refutation_bounds,
)
from semi_core.audit.selection import certifiable_epsilon_max
from semi_core.game.result import GameResult

DELTA = 1e-5


def _game(seed=0, n=300, shift=2.0):
    """Two statistics: ``s`` separates the classes (mean shift), ``null`` does not."""
    rng = np.random.default_rng(seed)
    member = np.r_[np.ones(n, bool), np.zeros(n, bool)]
    s = rng.normal(0.0, 1.0, 2 * n) + shift * member
    null = rng.normal(0.0, 1.0, 2 * n)
    return GameResult(member=member, tau=np.ones(2 * n, int), stats={"s": s, "null": null})


def test_game_result_report_is_the_direct_bound_and_its_json():
    res = _game()
    rep = audit_game_result(res, delta=DELTA, method="dkw")
    assert isinstance(rep, AuditReport) and rep.tests == ["s", "null"] and rep.methods == ["dkw"]
    m, nm = res.scores("s")
    direct = epsilon_lower_bound(m, nm, delta=DELTA, method="dkw")
    top = certifiable_epsilon_max(m.size, nm.size, delta=DELTA, method="dkw")
    assert rep.epsilon_lower_bound("s") == direct.epsilon_lower_bound
    assert rep.result("s", "dkw") == direct
    assert rep.epsilon_max_certifiable("s") == top
    # the JSON of before: {test: AuditResult dict + epsilon_max_certifiable}
    assert rep.to_dict()["s"] == {**direct.to_dict(), "epsilon_max_certifiable": top}
    assert rep["s"] == rep.to_dict()["s"] and list(rep.keys()) == ["s", "null"]
    json.dumps(to_jsonable(rep.to_dict()))


def test_several_methods_on_one_game_equal_one_method_at_a_time():
    res = _game(1)
    bounds, tops = certify_game(res, ["band", "cp", "gdp"], delta=DELTA)
    for method in ("band", "cp", "gdp"):
        one = audit_game_result(res, delta=DELTA, method=method)
        for t in res.stats:
            assert bounds[t][method] == one.result(t)
            assert tops[t][method] == one.epsilon_max_certifiable(t)
    # named variants of a method (the Opacus table's "gdp_gaussian")
    b2, _ = certify_game(res, {"g": {"method": "gdp", "gdp_fit": "gaussian"}}, delta=DELTA)
    assert b2["s"]["g"].assumption == "gaussian-scores"


def test_refutation_is_split_by_assumption():
    res = _game(2, shift=3.0)
    bounds, tops = certify_game(res, ["band", "gdp"], delta=DELTA)
    refuting = refutation_bounds(res, ["band", "gdp"], delta=DELTA)
    lb_band = refuting["s"]["band"].epsilon_lower_bound
    lb_gdp = refuting["s"]["gdp"].epsilon_lower_bound
    assert 0 < lb_band < lb_gdp   # the parametric fit certifies more: it assumes more
    against = (lb_band + lb_gdp) / 2
    rep = AuditReport(bounds=bounds, ceilings=tops, against=against, refuting=refuting)
    assert rep.refuted == [] and rep.refuted_under_assumption == ["s/gdp"]
    rep = AuditReport(bounds=bounds, ceilings=tops, against=lb_band / 2, refuting=refuting)
    assert rep.refuted == ["s/band"] and rep.refuted_under_assumption == ["s/gdp"]
    assert rep.best() == bounds["s"]["band"].epsilon_lower_bound
    assert rep.argbest() == ("s", "band")
    assert rep.best(distribution_free=False) == bounds["s"]["gdp"].epsilon_lower_bound
    d = rep.to_dict()
    assert list(d) == ["epsilon_lower_bound", "refuted", "refuted_under_assumption", "refutation"]
    assert d["refuted"] == ["s/band"] and d["refutation"]["bonferroni_k"] == 4
    row = {(r["test"], r["method"]): r for r in rep.summary()}
    assert row["s", "band"]["refutes"] and row["s", "gdp"]["refutes"]
    assert not row["null", "band"]["refutes"]
    # no epsilon to check against: no refutation entries
    assert "refuted" not in AuditReport(bounds=bounds).to_dict()


def test_refutation_is_corrected_over_every_pair():
    """K pairs on one game: each refuting bound is the pair's bound at failure_prob / K, so
    "some pair exceeds a true claim" has probability <= failure_prob (union bound)."""
    res = _game(3, shift=3.0)
    methods = ["band", "cp", "gdp"]
    K = len(res.stats) * len(methods)
    refuting = refutation_bounds(res, methods, delta=DELTA, failure_prob=0.05)
    for t in res.stats:
        m, nm = res.scores(t)
        for meth in methods:
            direct = epsilon_lower_bound(m, nm, delta=DELTA, failure_prob=0.05 / K, method=meth)
            assert refuting[t][meth] == direct
    # from score arrays too (the one-run audits hold scores, not a game)
    scores = {t: res.scores(t) for t in res.stats}
    assert refutation_bounds(scores, methods, delta=DELTA, failure_prob=0.05) == refuting
    bounds, _ = certify_game(res, methods, delta=DELTA, failure_prob=0.05)
    # a claim between the corrected and the uncorrected bound is not refuted
    b, r = bounds["s"]["band"].epsilon_lower_bound, refuting["s"]["band"].epsilon_lower_bound
    assert r < b
    rep = AuditReport(bounds=bounds, against=(r + b) / 2, refuting=refuting)
    assert "s/band" not in rep.refuted
    # several pairs and a claim without the corrected bounds: refused
    with pytest.raises(ValueError, match="refuting"):
        AuditReport(bounds=bounds, against=1.0)
    # one pair: its own bound is the refutation's
    one = {"s": {"band": bounds["s"]["band"]}}
    assert AuditReport(bounds=one, against=b / 2).refuted == ["s/band"]
    with pytest.raises(ValueError, match="every"):
        AuditReport(bounds=bounds, against=1.0, refuting={"s": refuting["s"]})


def test_distribution_free_set_names_known_assumptions():
    assert DISTRIBUTION_FREE <= set(ASSUMPTIONS)
    # the parametric ones say what they assume
    for key in set(ASSUMPTIONS) - DISTRIBUTION_FREE:
        assert "gdp" in key or "gaussian" in key


def test_reads_name_what_is_missing():
    bounds, _ = certify_game(_game(3), ["band", "dkw"], delta=DELTA)
    rep = AuditReport(bounds=bounds)
    with pytest.raises(ValueError, match="name one"):
        rep.epsilon_lower_bound("s")
    with pytest.raises(KeyError, match="'nope' not in this report"):
        rep.result("nope", "band")
    with pytest.raises(KeyError, match="method 'cp'"):
        rep.result("s", "cp")
    assert rep.epsilon_max_certifiable("s", "band") is None   # not computed
    with pytest.raises(ValueError, match="one method per test"):
        AuditReport(bounds=bounds, per_method=False)
    with pytest.raises(ValueError, match="against must be an epsilon"):
        AuditReport(bounds=bounds, against=float("nan"))   # would refute nothing, silently
    with pytest.raises(TypeError, match="AuditResult"):
        AuditReport(bounds={"s": {"band": 0.3}})
    with pytest.raises(ValueError, match="methods must be drawn from"):
        method_specs(["band", "nope"])
    assert "tests=2" in repr(rep) and "<table" in rep._repr_html_()


def test_layout_header_bounds_trailer():
    bounds, tops = certify_game(_game(4), "band", delta=DELTA)
    rep = AuditReport(bounds=bounds, ceilings=tops, header={"rounds": 600}, trailer={"x": 1},
                      bounds_key="tests", per_method=False, game=_game(4))
    d = rep.to_dict()
    assert list(d) == ["rounds", "tests", "x"]
    assert d["tests"]["s"]["epsilon_max_certifiable"] == tops["s"]["band"]
    assert rep["game"].rounds == 600 and "game" not in d   # the game object is not JSON


def test_mechanism_report_keeps_its_json_layout():
    """audit-game's rows: the keys and their order of the JSON before the report type."""
    from semi_core.audit.games import noisy_mean_audit_table

    row = noisy_mean_audit_table(rounds=200, mu_levels=(1.0,), seed=0)[0]
    d = row.to_dict()
    assert list(d) == ["mechanism", "epsilon_true", "epsilon_true_tau", "tau_for_truth", "truth",
                       "rounds", "tau", "delta", "failure_prob", "method", "tests", "mu",
                       "mu_tau", "noise"]
    assert list(d["tests"]) == row.tests == ["semi-star", "semi-max", "final"]
    t = d["tests"]["semi-star"]
    assert t["epsilon_lower_bound"] == row.epsilon_lower_bound("semi-star")
    assert t["epsilon_max_certifiable"] == row.epsilon_max_certifiable("semi-star")
    assert row["noise"] == d["noise"] and row["epsilon_true"] == d["epsilon_true"]
