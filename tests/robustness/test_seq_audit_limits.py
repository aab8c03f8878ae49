"""seq-audit: unbounded work refused up front, inapplicable options refused by name, nothing
substituted (no delta or epsilon clamping)."""

from __future__ import annotations

import json
import time

import pytest

from semi_core.audit.sequential import mechanism_source, semi_stream_audit, sequential_grid
from semi_core.audit.sequential.semi_stream import fixed_r_rejection_rate
from semi_core.audit.sequential.tester import sequential_work
from semi_core.cli import main
from semi_core.mechanisms.zoo import SEED_PAIR, NonDPLaplace1, RandomizedResponse


def _err(capsys, argv):
    t0 = time.perf_counter()
    rc = main(["seq-audit", *argv, "--json"])
    out = capsys.readouterr().out.strip().splitlines()
    assert time.perf_counter() - t0 < 30  # refused up front, not after the work
    assert rc == 2 and len(out) == 1
    obj = json.loads(out[0])
    assert set(obj) >= {"error", "kind"}
    return obj


@pytest.mark.parametrize("argv, kind", [
    (["--epsilon", "0.1", "--max-obs", "1000000000000"], "resource"),
    (["--epsilon", "0.1", "--runs", "1000000"], "resource"),
    (["--epsilon", "0.1", "--warmup", "100000"], "resource"),
    (["--epsilon", "0.1", "--algorithm", "2", "--max-obs", "100000000"], "resource"),
    (["--stream", "semi", "--mechanism", "randomized-response", "--epsilon", "1",
      "--max-obs", "100000000000"], "resource"),
    (["--stream", "semi", "--mechanism", "noisy-mean", "--epsilon", "1",
      "--runs", "100000000"], "resource"),
])
def test_unbounded_work_refused_up_front(capsys, argv, kind):
    obj = _err(capsys, argv)
    assert obj["kind"] == kind and "--max-obs" in obj["error"]


def test_time_limit_env_refuses(capsys, monkeypatch):
    monkeypatch.setenv("SEMI_CORE_MAX_SECONDS", "1")
    obj = _err(capsys, ["--epsilon", "0.1", "--max-obs", "100000"])
    assert obj["kind"] == "resource" and "SEMI_CORE_MAX_SECONDS" in obj["error"]


@pytest.mark.parametrize("argv, flag", [
    (["--stream", "semi", "--mechanism", "noisy-mean", "--algorithm", "2"], "--algorithm"),
    (["--stream", "semi", "--mechanism", "noisy-mean", "--bound", "new"], "--bound"),
    (["--stream", "semi", "--mechanism", "noisy-mean", "--bandwidth", "1"], "--bandwidth"),
    (["--stream", "semi", "--mechanism", "noisy-mean", "--warmup", "30"], "--warmup"),
    (["--stream", "semi", "--mechanism", "noisy-mean", "--evalue", "max"], "--evalue"),
    (["--stream", "semi", "--mechanism", "randomized-response", "--noise", "1"], "--noise"),
    (["--stream", "semi", "--mechanism", "noisy-mean", "--mech-epsilon", "1"], "--mech-epsilon"),
    (["--noise", "0.5"], "--noise"),
    (["--evalue", "mixture"], "--evalue"),
    (["--algorithm", "1", "--evalue", "mixture"], "--evalue"),
    (["--bandwidth", "0.5", "--warmup", "10"], "--warmup"),
])
def test_inapplicable_options_refused(capsys, argv, flag):
    obj = _err(capsys, ["--epsilon", "0.1", "--max-obs", "10", *argv])
    assert obj["kind"] == "invalid_argument"
    assert obj["error"].startswith(f"ValueError: {flag} ") and "not apply" in obj["error"]


@pytest.mark.parametrize("argv, flag", [
    (["--mechanism", "dp-gaussian", "--delta", "0"], "--delta"),
    (["--stream", "semi", "--mechanism", "nondp-gaussian-1", "--delta", "0"], "--delta"),
    (["--stream", "semi", "--mechanism", "dp-laplace", "--epsilon", "0"], "--mech-epsilon"),
    (["--mech-epsilon", "1e-300"], "--mech-epsilon"),
    (["--epsilon", "1e300"], "--mech-epsilon"),
    (["--epsilon", "710", "--bound", "auditorium", "--mech-epsilon", "1"], "--claimed-epsilon"),
    (["--stream", "semi", "--mechanism", "randomized-response", "--epsilon", "1e6"],
     "--claimed-epsilon"),
    (["--stream", "semi", "--mechanism", "noisy-mean", "--noise", "1e-300"], "--noise"),
    (["--stream", "semi", "--mechanism", "noisy-mean", "--noise", "nan"], "--noise"),
    (["--warmup", "1"], "--warmup"),
    (["--epsilon-grid", "0.1,nan", "--epsilon", None], "--epsilon-grid"),
])
def test_no_substitution(capsys, argv, flag):
    base = ["--epsilon", "0.1", "--max-obs", "10"]
    if None in argv:  # replace --epsilon
        argv = [a for a in argv if a is not None]
        base = ["--max-obs", "10", "--mech-epsilon", "1"]
        argv = argv[:-1]
    obj = _err(capsys, [*base, *argv])
    assert obj["kind"] == "invalid_argument" and flag in obj["error"]


def test_library_work_checks(monkeypatch):
    nb, sec = sequential_work(10**6, n_eps=2, algorithm=2)
    assert nb > 1e9 and sec > 3e4  # Alg. 2 holds K ~ N/2 nodes per block row
    src = mechanism_source(NonDPLaplace1(0.1), *SEED_PAIR)
    monkeypatch.setenv("SEMI_CORE_MAX_SECONDS", "0.001")
    from semi_core._validation import ResourceLimitError

    with pytest.raises(ResourceLimitError, match="sequential audit"):
        sequential_grid(src, [0.1], delta=1e-5, max_obs=10**5)
    with pytest.raises(ResourceLimitError, match="SeMI stream audit"):
        semi_stream_audit(RandomizedResponse(1.0), 0.5, delta=0.0, max_rounds=10**6)
    with pytest.raises(ResourceLimitError, match="fixed-R"):
        fixed_r_rejection_rate(RandomizedResponse(1.0), 10**4, epsilon=0.5, delta=0.0,
                               audits=10**4)


def test_fixed_r_refuses_instead_of_clamping():
    with pytest.raises(ValueError, match="failure_prob"):
        fixed_r_rejection_rate(RandomizedResponse(1.0), 20, epsilon=0.5, delta=0.0,
                               failure_prob=0.7, audits=2)
    with pytest.raises(ValueError, match="method"):
        fixed_r_rejection_rate(RandomizedResponse(1.0), 20, epsilon=0.5, delta=0.0,
                               method="band", audits=2)


@pytest.mark.parametrize("kw, name", [(dict(tau=2), "tau"), (dict(test="nope"), "test"),
                                      (dict(threshold="x"), "threshold"),
                                      (dict(threshold=float("nan")), "threshold"),
                                      (dict(block=0), "block")])
def test_semi_stream_arguments(kw, name):
    with pytest.raises((TypeError, ValueError), match=name):
        semi_stream_audit(RandomizedResponse(1.0), 0.5, delta=0.0, max_rounds=10, **kw)
