"""Bad inputs of the per-datum leakage entry points: a clear error naming the argument; under
``--json`` one JSON object with an ``error`` key and exit code 2."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from semi_core.attacks import leakage as A
from semi_core.cli import main
from semi_core.mechanisms.per_datum import PerDatumMean, ProductLaw, seed_bernoulli
from semi_core.stats import leakage as L

LAW = ProductLaw.bernoulli(np.array([0.3, 0.6, 0.5]))
Z = np.array([1.0, 0.0, 1.0])


def _mech(**kw):
    return PerDatumMean(LAW, 10, Z, **kw)


API = [
    (lambda: ProductLaw.bernoulli([0.2, 1.0]), ValueError, "p"),
    (lambda: ProductLaw.gaussian([0.0, 1.0], [1.0, -1.0]), ValueError, "std"),
    (lambda: ProductLaw.poisson([0.0]), ValueError, "lam"),
    (lambda: ProductLaw.custom([0.0], [1.0], "nope"), TypeError, "sampler"),
    (lambda: PerDatumMean("law", 10, Z), TypeError, "law"),
    (lambda: PerDatumMean(LAW, 1, Z), ValueError, "n"),
    (lambda: PerDatumMean(LAW, 10, Z[:2]), ValueError, "target"),
    (lambda: PerDatumMean(LAW, 10, [1.0, np.nan, 0.0]), ValueError, "target"),
    (lambda: _mech(noise_std=-1.0), ValueError, "noise_std"),
    (lambda: _mech(rho=0.0), ValueError, "rho"),
    (lambda: _mech(rho=0.1), ValueError, "rho"),
    (lambda: _mech(mode="fast"), ValueError, "mode"),
    (lambda: _mech(test="magic"), ValueError, "test"),
    (lambda: _mech(noise_std=1.0, test="exact"), ValueError, "exact"),
    (lambda: L.leakage(-1.0), ValueError, "m"),
    (lambda: L.power(0.0, 1.0), ValueError, "alpha"),
    (lambda: L.power(0.1, np.nan), ValueError, "m"),
    (lambda: L.gdp_delta(-1.0, 1.0), ValueError, "eps"),
    (lambda: L.gdp_delta(1.0, 0.0), ValueError, "m"),
    (lambda: L.sub_power(0.1, 1.0, 1.5), ValueError, "rho"),
    (lambda: L.sub_leakage(1.0, 0.5, form="exact"), ValueError, "form"),
    (lambda: L.leakage_score(Z, [0.3, 0.6], [0.2, 0.2], 10), ValueError, "mean"),
    (lambda: L.leakage_score(Z, [0.3, 0.6, 0.5], [0.2, 0.0, 0.2], 10), ValueError, "var"),
    (lambda: L.miss_advantage(1.0, 0.0), ValueError, "m_targ"),
    (lambda: L.plugin_effective_score(1.0, 0, 10), ValueError, "n0"),
    (lambda: A.simulate_leakage(_mech(), 1), ValueError, "rounds"),
    (lambda: A.simulate_leakage(_mech(), 10, attacks=("nope",)), ValueError, "attacks"),
    (lambda: A.simulate_leakage(_mech(), 10, attacks=("plugin",)), ValueError, "n0"),
    (lambda: A.simulate_leakage(_mech(), 10, attacks=("misspecified",)), ValueError, "z_targ"),
    (lambda: A.simulate_leakage("m", 10), TypeError, "mech"),
    (lambda: A.reference_moments(LAW, 1, 3, np.random.default_rng(0)), ValueError, "n0"),
    (lambda: A.plugin_lr_full(_mech(), np.zeros((1, 3, 1)), np.ones((4, 3))), ValueError,
     "releases"),
    (lambda: A.plugin_lr_full(_mech(), np.zeros((1, 1, 3)), np.ones((4, 2))), ValueError,
     "ref_rows"),
    (lambda: A.most_exposed(np.ones((5, 2))), ValueError, "X"),
    (lambda: A.most_exposed(np.eye(4), rank=9), ValueError, "rank"),
    (lambda: seed_bernoulli(10, a=0.6), ValueError, "a"),
]


@pytest.mark.parametrize("call,exc,word", API)
def test_api_bad_inputs(call, exc, word):
    with pytest.raises(exc, match=word):
        call()


CLI = [
    (["--fpr", "0"], "--fpr"),
    (["--fpr", "1.5"], "--fpr"),
    (["--subsample", "0"], "--subsample"),
    (["--subsample", "2"], "--subsample"),
    (["--noise", "-1"], "--noise"),
    (["--noise", "nan"], "--noise"),
    (["--delta", "1"], "--delta"),
    (["--target", "foo"], "--target"),
    (["--target", "/nonexistent/z.npy"], "z.npy"),
    (["--data", "gaussian", "--target", "easy"], "--target"),
    (["--n", "1"], "--n"),
    (["--n", "0"], "n"),
    (["--d", "-3"], "d"),
    (["--simulate", "1"], "--simulate"),
    (["--subsample", "0.001", "--n", "100"], "--subsample"),
    (["--dataset", "mnist"], "dataset"),
    (["--dataset", "wine", "--rank", "1000"], "--rank"),
    (["--seed", "-1"], "seed"),
    (["--data", "foo"], "--data"),
    (["--data", "bernoulli:1.5"], "--data bernoulli:1.5"),
    (["--data", "gaussian:0"], "--data"),
    (["--data", "gaussian:0,-1"], "std"),
    (["--data", "poisson:x"], "--data"),
    (["--data", "poisson:2", "--target", "easy"], "--target"),
    (["--data-file", "/nonexistent/pop.npy"], "--data-file"),
    (["--dataset", "wine", "--noise", "0.5"], "--noise"),
    (["--dataset", "wine", "--subsample", "0.5"], "--subsample"),
    (["--dataset", "wine", "--simulate", "100"], "--simulate"),
    (["--dataset", "wine", "--data", "gaussian"], "--data"),
    (["--dataset", "wine", "--game", "average"], "--game"),
    (["--inclusion", "rows"], "inclusion"),
    (["--game", "average", "--target", "easy"], "--target"),
    (["--game", "average", "--subsample", "0.5"], "--subsample"),
    (["--game", "average", "--data", "bernoulli", "--noise", "1"], "average-datum LR"),
]


@pytest.mark.parametrize("argv,word", CLI)
def test_cli_bad_inputs_json(capsys, argv, word):
    rc = main(["leakage", "--d", "50", "--n", "100", *argv, "--json"])
    out = capsys.readouterr().out.strip().splitlines()
    assert rc == 2
    assert len(out) == 1
    obj = json.loads(out[0])
    assert "error" in obj and word in obj["error"]


def test_cli_wrong_target_file(tmp_path, capsys):
    f = tmp_path / "z.npy"
    np.save(f, np.ones(7))
    rc = main(["leakage", "--d", "50", "--n", "100", "--target", str(f), "--json"])
    obj = json.loads(capsys.readouterr().out)
    assert rc == 2 and "length d = 50" in obj["error"]


def test_cli_good_inputs(tmp_path, capsys):
    rc = main(["leakage", "--d", "500", "--n", "100", "--target", "medium", "--simulate",
               "400", "--json"])
    obj = json.loads(capsys.readouterr().out)
    assert rc == 0
    for k in ("m_star", "leakage", "power", "threshold", "simulation"):
        assert k in obj
    assert obj["power"] == pytest.approx(L.power(0.01, obj["m_star"]))
    f = tmp_path / "z.npy"
    np.save(f, np.zeros(500))
    assert main(["leakage", "--d", "500", "--n", "100", "--target", str(f), "--subsample",
                 "0.5", "--json"]) == 0
    obj = json.loads(capsys.readouterr().out)
    assert obj["paper_approximation"]["power"] != obj["power"]
    assert main(["leakage", "--dataset", "wine", "--rank", "3", "--json"]) == 0
    obj = json.loads(capsys.readouterr().out)
    assert len(obj["index"]) == 3


def test_cli_user_data_law(tmp_path, capsys):
    rng = np.random.default_rng(0)
    X = (rng.random((300, 40)) < rng.uniform(0.2, 0.8, 40)).astype(float)
    f = tmp_path / "pop.npy"
    np.save(f, X)
    assert main(["leakage", "--data-file", str(f), "--n", "100", "--json"]) == 0
    obj = json.loads(capsys.readouterr().out)
    assert obj["d"] == 40 and obj["law"]["family"] == "custom" and obj["test"] == "approx"
    # m* from the population's mean and full covariance (the sample's columns are correlated)
    from semi_core.stats.leakage import mahalanobis_score

    mu, C = X.mean(0), np.cov(X.T, bias=True)
    row = X[np.random.default_rng(np.random.SeedSequence([0, 1306])).integers(300, size=1)[0]]
    assert obj["covariance"] == "full"
    assert obj["m_star"] == pytest.approx(float(mahalanobis_score(row, mu, C, 100)))
    np.save(f, np.c_[X, np.ones(300)])
    assert main(["leakage", "--data-file", str(f), "--json"]) == 2
    assert "constant columns [40]" in json.loads(capsys.readouterr().out)["error"]
    assert main(["leakage", "--data", "bernoulli:0.3", "--d", "50", "--n", "100", "--json"]) == 0
    obj = json.loads(capsys.readouterr().out)
    # easy target for constant p = .3: z = 1 everywhere, m* = d (1-p)^2 / (p(1-p)) / n
    assert obj["m_star"] == pytest.approx(50 * 0.7**2 / 0.21 / 100)


def test_cli_average_game_and_inclusion(capsys):
    assert main(["leakage", "--game", "average", "--data", "gaussian", "--d", "300", "--n",
                 "100", "--simulate", "2000", "--json"]) == 0
    obj = json.loads(capsys.readouterr().out)
    assert obj["M"] == pytest.approx(3.0) and obj["threshold_scale"] == "log_lr"
    ex, sim = obj["exact_moments"], obj["simulation"]["log_lr_moments"]
    # mean SE sqrt(var / 1000) ~ .055 per class; MC tolerance 4.5 SEs
    for k in ("mean0", "mean1"):
        assert abs(sim[k] - ex[k]) < 4.5 * math.sqrt(ex["var0"] / 900), k
    got = {}
    for inc in ("shared", "per-coordinate"):
        assert main(["leakage", "--d", "400", "--n", "200", "--subsample", "0.5",
                     "--inclusion", inc, "--json"]) == 0
        got[inc] = json.loads(capsys.readouterr().out)
    pc, sh = got["per-coordinate"], got["shared"]
    assert pc["power"] == pytest.approx(pc["paper_approximation"]["power"])   # Eq. 16 holds
    assert sh["power"] > sh["paper_approximation"]["power"] + 0.1             # and not here


def test_cli_average_game_infinite_log_lr_is_named_not_nan(capsys):
    # Bernoulli data, no noise, n = 5: the released mean is often impossible with the target
    # in, so the exact log-LR is -inf under H0 in some games; its mean is -inf (an atom) and
    # its variance undefined (null), named in a note, with no NaN and no NumPy warning
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert main(["leakage", "--game", "average", "--d", "10", "--n", "5", "--simulate",
                     "200", "--json"]) == 0
    out = capsys.readouterr().out
    assert "NaN" not in out
    sim = json.loads(out)["simulation"]
    mom = sim["log_lr_moments"]
    assert mom["infinite0"] > 0 and mom["mean0"] == "-inf" and mom["var0"] is None
    assert mom["infinite1"] == 0 and math.isfinite(mom["mean1"]) and mom["var1"] > 0
    assert f"-inf in {mom['infinite0']} of" in sim["log_lr_moments_note"]
    assert main(["leakage", "--game", "average", "--d", "300", "--n", "100", "--simulate",
                 "200", "--json"]) == 0
    sim = json.loads(capsys.readouterr().out)["simulation"]
    assert sim["log_lr_moments"]["infinite0"] == 0 and "log_lr_moments_note" not in sim
