"""DP-Auditorium's MeanMechanism reading of the seed's mean mechanisms (``reading="auditorium"``)
and the notebook's censored mean stopping time."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from semi_core.audit.sequential.conventions import (
    READINGS,
    AuditoriumMean,
    make_reading_mechanism,
)
from semi_core.audit.sequential.experiments import censored_mean_stop, seed_mean_over_rejecting
from semi_core.mechanisms.zoo import SEED_PAIR


def test_count_noise_is_laplace_for_the_gaussian_mechanisms():
    """NonDPGaussian2 on S = {0}: the output is exactly s/n = 0 iff the noisy count n + W < 0
    (the noise scale is floored at 1e-12). DP-Auditorium's Laplace(2/eps) count noise gives
    P = e^{-eps/2}/2; the zoo's scale reading (Gaussian count noise) gives Phi(-1/sigma).
    Tolerance: 4.5 binomial SE at 40,000 draws."""
    eps, n = 1.0, 40_000
    rng = np.random.default_rng(1)
    m = make_reading_mechanism("nondp-gaussian-2", eps, 1e-5, reading="auditorium")
    o = m.sample(SEED_PAIR[0], n, rng)[:, 0]
    p_hat = float(np.mean(np.abs(o) < 1e-9))
    p = 0.5 * math.exp(-eps / 2)
    se = math.sqrt(p * (1 - p) / n)
    assert abs(p_hat - p) < 4.5 * se
    zoo = make_reading_mechanism("nondp-gaussian-2", eps, 1e-5, reading="scale")
    p_zoo = float(stats.norm.cdf(-1.0 / zoo.scale))
    assert abs(p_zoo - p) > 20 * se  # the two readings differ at this precision


def test_classical_sigma_and_budget():
    """NonDPGaussian1 (no noisy count, whole budget): N(s/n, (sqrt(2 log(1.25/delta))/(eps n))^2);
    the sample variance on S = {0} within 4.5 SE (SE of a normal variance: var sqrt(2/n))."""
    eps, delta, n = 0.5, 1e-5, 40_000
    m = AuditoriumMean(eps, noise="gaussian", variant="nondp1", delta=delta)
    sd = math.sqrt(2 * math.log(1.25 / delta)) / eps
    o = m.sample(SEED_PAIR[0], n, np.random.default_rng(2))[:, 0]
    v = float(o.var())
    assert abs(v - sd * sd) < 4.5 * sd * sd * math.sqrt(2 / n)
    lap = AuditoriumMean(eps, noise="laplace", variant="dp")
    assert lap.scale == pytest.approx(2 / eps) and lap.count_scale == pytest.approx(2 / eps)


def test_dp_variant_divides_by_the_noisy_count():
    """DPLaplace on S' = {0, 1}: where the count is positive the output is (1 + Z)/(2 + W)."""
    m = AuditoriumMean(1.0, variant="dp")
    rng = np.random.default_rng(3)
    o = m.sample(SEED_PAIR[1], 5, rng)[:, 0]
    rng = np.random.default_rng(3)
    w = rng.laplace(0, 2.0, 5)
    z = rng.laplace(0, 1.0, 5)
    want = 1 / (2 + w) + np.maximum(1e-12, 2.0 / (2 + w)) * z
    np.testing.assert_allclose(o, want, rtol=1e-12)


def test_bad_readings_and_names():
    assert READINGS == ("count", "scale", "auditorium")
    with pytest.raises(ValueError, match="reading"):
        make_reading_mechanism("dp-laplace", 0.1, reading="floor")
    with pytest.raises(ValueError, match="mechanism"):
        make_reading_mechanism("dp-lapl", 0.1, reading="auditorium")
    with pytest.raises(ValueError, match="delta"):
        AuditoriumMean(0.1, noise="gaussian", delta=0.0)
    with pytest.raises(ValueError, match="dataset"):
        AuditoriumMean(0.1).sample([2.0], 3, np.random.default_rng(0))


def test_censored_mean_decodes_table1():
    """Table 1, NonDPGaussian2 at eps = 0.1: rate .05 (1 of 20), N-bar 4776 +- 219.0 with
    N_max = 5000. Read as the notebook's censored mean, the one rejecting run stopped at 501 and
    the SE (ddof 0) is 219.3: the printed SE to rounding."""
    t = seed_mean_over_rejecting(0.05, 4776, 20, 5000)
    assert t == pytest.approx(501.0)
    mean, se = censored_mean_stop([501], 20, 5000)
    assert mean == pytest.approx(4776.0) and abs(se - 219.0) < 0.5
    with pytest.raises(ValueError, match="runs"):
        censored_mean_stop([1, 2, 3], 2, 10)
    with pytest.raises(ValueError, match="rate"):
        seed_mean_over_rejecting(0.0, 10, 20, 100)


def test_cli_refuses_auditorium_for_the_semi_stream(capsys):
    from semi_core.cli import main

    rc = main(["seq-audit", "--stream", "semi", "--mechanism", "nondp-laplace-2",
               "--claimed-epsilon", "1", "--noise-floor", "auditorium", "--json"])
    assert rc != 0 and "--noise-floor auditorium" in capsys.readouterr().out


def test_cli_shows_the_seed_cell_and_the_censored_mean(capsys):
    import json

    from semi_core.cli import main

    rc = main(["seq-audit", "--mechanism", "nondp-gaussian-2", "--claimed-epsilon", "0.01",
               "--noise-floor", "auditorium", "--max-obs", "200", "--runs", "2", "--json",
               "--no-progress"])
    d = json.loads(capsys.readouterr().out)
    assert rc == 0 and d["mechanism"]["floor"] == "auditorium"
    s = d["summary"]
    stops = [r["stopped_at"] for r in d["runs"] if r["rejected"]]
    assert s["censored_mean_stop"] == pytest.approx(censored_mean_stop(stops, 2, 200)[0])
    sv = s["seed_value"]
    assert sv["mean_stop_censored"] == 1139 and sv["max_obs"] == 2000
    assert sv["mean_stop_over_rejecting"] == pytest.approx(986.88, abs=0.01)
    rc = main(["seq-audit", "--mechanism", "nondp-gaussian-2", "--claimed-epsilon", "0.02",
               "--max-obs", "100", "--runs", "1", "--json", "--no-progress"])
    assert "seed_value" not in json.loads(capsys.readouterr().out)["summary"]
