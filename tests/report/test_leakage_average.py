"""The report's average-datum rows (seed App. B, Alg. 3/4) against the limit and, for Gaussian
data, the exact finite-n moments of the log-LR."""

import numpy as np

from semi_core.mechanisms.per_datum import seed_bernoulli
from semi_core.report.leakage_section import AVG_NOISES, average_datum_rows, tables


def test_average_datum_rows_match_theory_and_render():
    n, R = 50, 4000
    law = seed_bernoulli(5 * n, seed=0)
    rows = average_datum_rows(law, n, R, seed=0)
    assert [r["data"] for r in rows] == ["bernoulli"] + ["gaussian"] * len(AVG_NOISES)
    # noiseless: M = d / n (Remark 3.3), Bernoulli and Gaussian alike
    assert abs(rows[0]["M"] - 5.0) < 1e-12 and abs(rows[1]["M"] - 5.0) < 1e-12
    Ms = [r["M"] for r in rows[1:]]
    assert all(a > b for a, b in zip(Ms, Ms[1:], strict=False))   # noise lowers M
    for r in rows[1:]:
        # Gaussian data: simulated log-LR moments equal the exact finite-n ones within 4 SE
        # (mean: sqrt(var / m); variance: var * sqrt(2 / (m - 1)), the log-LR being close to
        # normal, kurtosis excess O(1/d))
        m, e = r["moments_sim"], r["moments_exact"]
        for h, k in (("0", m["n0"]), ("1", m["n1"])):
            var = e["var" + h]
            assert abs(m["mean" + h] - e["mean" + h]) <= 4 * np.sqrt(var / k), (r, h)
            assert abs(m["var" + h] - var) <= 4 * var * np.sqrt(2 / (k - 1)), (r, h)
    for r in rows:
        # the limit leakage is reached at n = 50 within 4 SE of the simulated advantage (the
        # exact Gaussian moments differ from -+M/2, M by under 2 % of M in the mean, 6.2 % in
        # the variance)
        assert abs(r["advantage_sim"] - r["leakage_limit"]) <= 4 * r["advantage_sim_se"]
    md = tables({"alpha": 0.01, "n": n, "d": 5 * n, "rounds": R, "targets": {},
                 "subsample": [], "noise": [], "power_loss_alpha": 0.1,
                 "power_loss_target": "medium", "power_loss": [], "edgeworth": [],
                 "average": rows})
    assert "Average-datum game" in md and md.count("| gaussian |") == len(AVG_NOISES)
