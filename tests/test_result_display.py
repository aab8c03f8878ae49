"""Every result type is pleasant in a terminal and a notebook: a one-line repr without arrays,
a summary() Table (also as HTML), a JSON-safe to_dict() and a tidy to_frame()."""

from __future__ import annotations

import json

import numpy as np
import pytest

from semi_core._table import Table


def _game():
    from semi_core.game.play import play
    from semi_core.mechanisms.empirical_mean import EmpiricalMean

    return play(EmpiricalMean(5, 3, mu=np.zeros(2), cov=np.eye(2), target=np.ones(2)), 200, seed=1)


def _engine():
    from semi_core.game.engine import simulate
    from semi_core.mechanisms.empirical_mean import EmpiricalMean

    return simulate(EmpiricalMean(5, 3, mu=np.zeros(2), cov=np.eye(2), target=np.ones(2)), 200, seed=1)


def _scores():
    rng = np.random.default_rng(0)
    return rng.normal(1, 1, 300), rng.normal(0, 1, 300)


def _roc():
    from semi_core.audit import roc_metrics

    return roc_metrics(*_scores(), n_bootstrap=20)


def _audit():
    from semi_core.audit import epsilon_lower_bound

    return epsilon_lower_bound(*_scores(), delta=1e-5)


def _claim():
    from semi_core.claims import get_claim, verify_claim

    return verify_claim(get_claim("semi_sequential_mi:lem2.1"))


def _attack():
    from semi_core.attacks.whitebox.experiment import AttackConfig, parse_attacks, run_attacks
    from semi_core.sgd.momentum import SGDConfig

    cfg = AttackConfig(dataset="breast-cancer", model="logreg", n_models=12, n_targets=40,
                       target_models=1, loo_targets=6, loo_models=3,
                       sgd=SGDConfig(batch_size=32, epochs=2))
    return run_attacks(cfg, parse_attacks("loss,l-attack"), seed=5)


def _sequential():
    from semi_core.audit.sequential import mechanism_source, sequential_test
    from semi_core.mechanisms.zoo import SEED_PAIR, DPLaplace

    return sequential_test(mechanism_source(DPLaplace(0.01), *SEED_PAIR), epsilon=0.01,
                           delta=1e-5, max_obs=200, seed=0)


def _grid():
    from semi_core.audit.sequential import mechanism_source, sequential_grid
    from semi_core.mechanisms.zoo import SEED_PAIR, NonDPLaplace2

    return sequential_grid(mechanism_source(NonDPLaplace2(0.01, floor="scale"), *SEED_PAIR),
                           [0.0, 0.05], delta=1e-5, max_obs=200, seed=0)


def _stream():
    from semi_core.audit.sequential.semi_stream import semi_stream_audit
    from semi_core.mechanisms.noisy_mean import NoisyMean

    return semi_stream_audit(NoisyMean(10, 1, noise=0.1, data_mean=-1.0, data_std=0.1), [0.5],
                             delta=1e-5, max_rounds=200, seed=0)


def _updates():
    from semi_core.attacks.updates.experiment import UpdateConfig, run_experiment

    return run_experiment(UpdateConfig(n0=60, trials=2, n_ref=2, base_epochs=4, new_epochs=2,
                                       full_epochs=1, n_up=4))


RESULTS = {"UpdateRun": _updates, "SequentialResult": _sequential, "GridResult": _grid,
           "SemiStreamResult": _stream, "AttackRun": _attack, "GameResult": _game,
           "EngineResult": _engine, "RocMetrics": _roc, "AuditResult": _audit,
           "ClaimResult": _claim}


@pytest.mark.parametrize("name", sorted(RESULTS))
def test_result_displays(name):
    res = RESULTS[name]()
    assert type(res).__name__ == name
    text = repr(res)
    assert "\n" not in text and len(text) < 240 and "array(" not in text, text
    table = res.summary()
    assert isinstance(table, Table) and len(table) >= 1
    assert res._repr_html_().startswith("<table>")
    json.dumps(res.to_dict())  # JSON-safe
    pd = pytest.importorskip("pandas")
    frame = res.to_frame()
    assert isinstance(frame, pd.DataFrame) and len(frame) >= 1


def test_mixin_defaults_for_a_new_result_type():
    """A new result type gets a repr, a summary table and a frame from _repr_fields alone."""
    from dataclasses import dataclass

    from semi_core._table import ResultDisplay

    @dataclass(repr=False)
    class Tiny(ResultDisplay):
        _repr_fields = ("eps", "n")
        eps: float
        n: int
        arr: object = None

    t = Tiny(1.5, 10, np.zeros(3))
    assert repr(t) == "Tiny(eps=1.5000, n=10)"
    assert t.to_dict() == {"eps": 1.5, "n": 10}
    assert [r["quantity"] for r in t.summary()] == ["eps", "n"]
    assert t._repr_html_().startswith("<table>")
