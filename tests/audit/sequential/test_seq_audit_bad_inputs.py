"""Robustness table: every entry point of the sequential audit rejects bad input by name."""

from __future__ import annotations

import json

import numpy as np
import pytest

from semi_core.audit.sequential import (
    batch_mmd_test,
    mechanism_source,
    semi_stream_audit,
    sequential_grid,
    sequential_test,
    tau_mmd,
)
from semi_core.mechanisms.zoo import SEED_PAIR, NonDPLaplace1, RandomizedResponse


def _src():
    return mechanism_source(NonDPLaplace1(0.1), *SEED_PAIR)


def _nan_mech(dataset, rng):
    return float("nan") if len(dataset) == 2 else 0.0


def _shape_mech():
    state = {"n": 0}

    def f(dataset, rng):
        state["n"] += 1
        return np.zeros(1 if state["n"] < 30 else 2)

    return f


GOOD = dict(epsilon=0.1, delta=1e-5, failure_prob=0.05, max_obs=50)
CASES = [
    ("alpha=0", dict(failure_prob=0.0), ValueError, "failure_prob"),
    ("alpha=1", dict(failure_prob=1.0), ValueError, "failure_prob"),
    ("alpha=1.5", dict(failure_prob=1.5), ValueError, "failure_prob"),
    ("alpha=nan", dict(failure_prob=float("nan")), ValueError, "failure_prob"),
    ("alpha=str", dict(failure_prob="0.05"), TypeError, "failure_prob"),
    ("eps<0", dict(epsilon=-0.1), ValueError, "epsilon"),
    ("eps=inf", dict(epsilon=float("inf")), ValueError, "epsilon"),
    ("delta<0", dict(delta=-1e-5), ValueError, "delta"),
    ("delta=1", dict(delta=1.0), ValueError, "delta"),
    ("N_max=0", dict(max_obs=0), ValueError, "max_obs"),
    ("N_max=1.5", dict(max_obs=1.5), TypeError, "max_obs"),
    ("algorithm=3", dict(algorithm=3), ValueError, "algorithm"),
    ("bandwidth<=0", dict(bandwidth=-1.0), ValueError, "bandwidth"),
    ("bound", dict(bound="old"), ValueError, "bound"),
]


@pytest.mark.parametrize("label,bad,exc,name", CASES, ids=[c[0] for c in CASES])
def test_sequential_test_bad_input(label, bad, exc, name):
    with pytest.raises(exc, match=name):
        sequential_test(_src(), **{**GOOD, **bad})


@pytest.mark.parametrize("mech,msg", [(_nan_mech, "NaN"), (None, "shape")])
def test_mechanism_nan_or_shape_change(mech, msg):
    mech = mech or _shape_mech()
    with pytest.raises(ValueError, match=f"mechanism.*{msg}|{msg}.*mechanism|mechanism"):
        sequential_test(mechanism_source(mech, [0.0], [0.0, 1.0]), epsilon=0.1, delta=1e-5,
                        max_obs=200, block=16)


def test_grid_and_others_bad_input():
    with pytest.raises(ValueError, match="epsilons"):
        sequential_grid(_src(), [], delta=1e-5)
    with pytest.raises(ValueError, match="epsilon"):
        sequential_grid(_src(), [0.1, -1.0], delta=1e-5)
    with pytest.raises(ValueError, match="delta"):
        tau_mmd(0.1, 1.0)
    with pytest.raises(ValueError, match="epsilon"):
        tau_mmd(-0.1, 0.0)
    with pytest.raises(ValueError, match="failure_prob"):
        batch_mmd_test(_src(), epsilon=0.1, delta=0.0, failure_prob=0.0)
    with pytest.raises(ValueError, match="n must"):
        batch_mmd_test(_src(), epsilon=0.1, delta=0.0, n=0)
    rr = RandomizedResponse(1.0)
    for bad, name in ((dict(failure_prob=1.0), "failure_prob"), (dict(delta=-0.1), "delta"),
                      (dict(max_rounds=0), "max_rounds")):
        kw = dict(delta=0.0, failure_prob=0.05, max_rounds=10)
        kw.update(bad)
        with pytest.raises(ValueError, match=name):
            semi_stream_audit(rr, 1.0, **kw)
    with pytest.raises(ValueError, match="epsilon"):
        semi_stream_audit(rr, -1.0, delta=0.0)


CLI_CASES = [
    (["--failure-prob", "0"], "--failure-prob"),
    (["--failure-prob", "1.2"], "--failure-prob"),
    (["--epsilon", "-0.5"], "--epsilon"),
    (["--delta", "1"], "--delta"),
    (["--delta", "-0.1"], "--delta"),
    (["--max-obs", "0"], "--max-obs"),
    (["--runs", "0"], "--runs"),
    (["--algorithm", "3"], "--algorithm"),
    (["--bandwidth", "-2"], "--bandwidth"),
    (["--mechanism", "nope"], "mechanism"),
    (["--epsilon-grid", "0,a"], "--epsilon-grid"),
]


@pytest.mark.parametrize("extra,name", CLI_CASES, ids=[" ".join(c[0]) for c in CLI_CASES])
def test_cli_bad_input_json(extra, name, capsys):
    from semi_core.cli import main

    args = ["seq-audit", "--max-obs", "20", "--json"]
    if "--epsilon" not in extra and "--epsilon-grid" not in extra:
        args += ["--epsilon", "0.1"]
    assert main(args + extra) == 2
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1
    err = json.loads(out[0])["error"]
    assert name.lstrip("-") in err
