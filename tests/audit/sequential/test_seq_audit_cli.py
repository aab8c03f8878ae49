"""``semi-core seq-audit``: one JSON object with runs, summary and paths."""

from __future__ import annotations

import json

from semi_core.cli import main


def _run(capsys, argv):
    assert main(argv) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1
    return json.loads(out[0])


def test_single_epsilon(capsys):
    obj = _run(capsys, ["seq-audit", "--mechanism", "nondp-laplace-1", "--epsilon", "0.01",
                        "--delta", "1e-5", "--failure-prob", "0.05", "--max-obs", "2000",
                        "--runs", "3", "--algorithm", "2", "--seed", "0", "--json"])
    assert len(obj["runs"]) == 3
    for r in obj["runs"]:
        assert r["rejected"] is True and r["stopped_at"] >= 1 and r["log_wealth"]
    s = obj["summary"]
    assert s["rejection_rate"] == 1.0 and s["rejection_rate_se"] == 0.0
    assert s["mean_stop"] > 0 and s["mean_stop_se"] >= 0
    # same seed, same result
    again = _run(capsys, ["seq-audit", "--mechanism", "nondp-laplace-1", "--epsilon", "0.01",
                          "--max-obs", "2000", "--runs", "3", "--algorithm", "2", "--json"])
    assert [r["stopped_at"] for r in again["runs"]] == [r["stopped_at"] for r in obj["runs"]]


def test_epsilon_grid(capsys):
    obj = _run(capsys, ["seq-audit", "--mechanism", "nondp-gaussian-1", "--mech-epsilon",
                        "0.01", "--epsilon-grid", "0,0.05,0.1,0.4,2", "--max-obs", "1500",
                        "--json"])
    lb = obj["epsilon_lower_bound"]
    assert 0.05 <= lb < 2
    assert len(obj["runs"][0]["tests"]) == 5 and obj["runs"][0]["lower_bound_path"]


def test_semi_stream(capsys):
    obj = _run(capsys, ["seq-audit", "--stream", "semi", "--mechanism", "noisy-mean",
                        "--epsilon", "0.5", "--max-obs", "3000", "--runs", "2", "--json"])
    assert obj["stream"] == "semi"
    assert obj["summary"]["rejection_rate"] == [1.0]


def test_text_mode_progress(capsys, monkeypatch):
    # a line even for a short run: with the kernels compiled (an earlier test), the two runs
    # take a few milliseconds, so the interval is shorter still
    monkeypatch.setenv("SEMI_CORE_PROGRESS_INTERVAL", "0.0005")
    assert main(["seq-audit", "--claimed-epsilon", "0.01", "--max-obs", "2000", "--runs",
                 "2"]) == 0
    cap = capsys.readouterr()
    assert "rejection rate" in cap.out and "seq-audit" in cap.err


def test_a_type1_figure_carries_its_power(capsys):
    """A DP mechanism audited at its claimed epsilon: the rejection rate is a Type-I figure, and
    the power at the known non-DP alternative (same tester, the Type-I runs' median bandwidth,
    seed child ``runs``) comes beside it, in the JSON and the text."""
    import numpy as np

    from semi_core.audit.sequential.experiments import power_at_alternative

    argv = ["seq-audit", "--mechanism", "dp-gaussian", "--claimed-epsilon", "1",
            "--max-obs", "400", "--runs", "2", "--power-runs", "3", "--seed", "5",
            "--no-progress"]
    obj = _run(capsys, [*argv, "--json"])
    pw = obj["summary"]["power_at_alternative"]
    bandwidth = float(np.median([r["bandwidth"] for r in obj["runs"]]))
    direct = power_at_alternative("dp-gaussian", 1.0, bandwidth=bandwidth, runs=3, delta=1e-5,
                                  failure_prob=0.05, max_obs=400,
                                  seed=np.random.SeedSequence(5).spawn(3)[-1])
    assert pw == json.loads(json.dumps(direct))
    assert pw["alternative"] == "nondp-gaussian-2" and pw["runs"] == 3
    assert 0 <= pw["rejection_rate"] <= 1
    assert main(argv) == 0
    assert "power at nondp-gaussian-2" in capsys.readouterr().out
    skipped = _run(capsys, [*argv[:-3], "--power-runs", "0", "--json"])
    assert skipped["summary"]["power_at_alternative"]["runs"] == 0
    assert "skipped" in skipped["summary"]["power_at_alternative"]


def test_power_runs_refused_where_no_type1_figure(capsys):
    code = main(["seq-audit", "--mechanism", "nondp-laplace-1", "--claimed-epsilon", "0.1",
                 "--max-obs", "50", "--power-runs", "2", "--json"])
    assert code == 2
    err = json.loads(capsys.readouterr().out)
    assert "--power-runs" in err["error"] and err["kind"] == "invalid_argument"
