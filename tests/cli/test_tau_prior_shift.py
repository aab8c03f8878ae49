"""The general game from the CLI: insertion-time priors and distribution shift (`--tau`, `--shift`)
for `power` (closed forms) and `simulate` (engine), checked against each other."""

import json

import numpy as np
import pytest

from semi_core.cli import main


def _run(capsys, *argv):
    code = main([*argv, "--json"])
    out = json.loads(capsys.readouterr().out)
    return code, out


@pytest.mark.parametrize(("extra", "test"), [
    (["--T", "4", "--tau", "0.5,0,0,0.5"], "semi-max"),
    (["--T", "4", "--tau", "0.5,0,0,0.5"], "semi-star"),
    (["--T", "10", "--tau", "5", "--shift", "0.3"], "semi-star"),
    (["--T", "10", "--tau", "0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1", "--shift", "-0.2"],
     "semi-max"),
])
def test_power_closed_form_equals_simulate(capsys, extra, test):
    """TPR at 1 % FPR: closed form (power) vs the engine (simulate, 200k games): within 4.5
    delta-method SE."""
    code, p = _run(capsys, "power", *extra, "--test", test, "--fpr", "0.01")
    assert code == 0
    code, s = _run(capsys, "simulate", *extra, "--rounds", "200000", "--mode", "sufficient",
                   "--seed", "3")
    assert code == 0
    mc = s["tests"][test]["tpr_at_fpr"]["0.01"]
    assert abs(mc["tpr"] - p["tpr"]) < 4.5 * mc["se"], (p["tpr"], mc)


def test_prior_is_validated_not_renormalised(capsys):
    code, out = _run(capsys, "simulate", "--T", "4", "--tau", "0.5,0,0,0.4", "--rounds", "10")
    assert code == 2 and "sum to 1" in out["error"]
    code, out = _run(capsys, "power", "--T", "3", "--tau", "0.5,0.5")
    assert code == 2 and "3 entries" in out["error"]
    code, out = _run(capsys, "power", "--T", "10", "--shift", "1e308")
    assert code == 2 and "--shift" in out["error"]


def test_prior_file(capsys, tmp_path):
    f = tmp_path / "prior.npy"
    np.save(f, np.array([0.25, 0.25, 0.5]))
    code, out = _run(capsys, "power", "--T", "3", "--tau", str(f), "--test", "semi-max")
    assert code == 0 and out["tau"] == [0.25, 0.25, 0.5]


def test_noisy_mean_audit_with_a_prior(capsys):
    """audit-game with an insertion-time prior: the Crafter draws tau from it; the ground truth is
    that of the earliest step in the support (an upper bound for the mixture), and every
    certified bound stays below it (a 1 - 0.05 event per test, fixed seed)."""
    from semi_core.audit.games import audit_mechanism
    from semi_core.mechanisms.noisy_mean import NoisyMean

    mech = NoisyMean(10, 4, noise=0.12, data_mean=-1.0, data_std=0.1)
    out = audit_mechanism(mech, 1500, 3, tau=np.array([0.0, 0.0, 0.5, 0.5]), delta=1e-5)
    assert out["tau_for_truth"] == 3
    assert out["epsilon_true_tau"] == pytest.approx(mech.epsilon(1e-5, 3))
    assert out["epsilon_true_tau"] < out["epsilon_true"]
    for r in out["tests"].values():
        assert r["epsilon_lower_bound"] <= out["epsilon_true_tau"]
    code, js = _run(capsys, "audit-game", "--T", "4", "--tau", "0.5,0,0,0.5", "--rounds", "400",
                    "--mu-levels", "2")
    assert code == 0 and js["tau"] == [0.5, 0.0, 0.0, 0.5]
    assert js["rows"][0]["tau_for_truth"] == 1
