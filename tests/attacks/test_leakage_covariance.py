"""Per-datum leakage with a full covariance (``leakage --data-file``): SymPy, numeric, Monte Carlo."""

from __future__ import annotations

import json

import numpy as np
import pytest
import sympy as sp

from semi_core.attacks.leakage import CovarianceMean, simulate_leakage, summarize_leakage
from semi_core.cli import main
from semi_core.mechanisms.per_datum import ProductLaw
from semi_core.stats import leakage as L
from semi_core.symbolic.leakage_cov import full_covariance_log_lr


def _near_copies(rows=500, d=40, seed=1):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((rows, 1)) + 0.05 * rng.standard_normal((rows, d))


def test_sympy_laws_are_the_limit_experiment():
    """The derived log-LR is N(-+m/2, m) with m = delta^T Sigma^-1 delta / n (dims 2, 3)."""
    for dim in (2, 3):
        r = full_covariance_log_lr(dim)
        m = r["m"]
        assert sp.simplify(r["mean0"] + m / 2) == 0
        assert sp.simplify(r["mean1"] - m / 2) == 0
        assert sp.simplify(r["var0"] - m) == 0


def test_numeric_equals_sympy_and_diagonal_form():
    r = full_covariance_log_lr(3)
    sym = r["symbols"]
    rng = np.random.default_rng(0)
    A = rng.standard_normal((3, 3))
    S = A @ A.T + 0.1 * np.eye(3)
    delta, n = rng.standard_normal(3), 7
    subs = {sym["n"]: n}
    subs.update({sym["delta"][i]: delta[i] for i in range(3)})
    subs.update({sym["sigma"][i, j]: S[i, j] for i in range(3) for j in range(3)})
    want = float(r["m"].subs(subs))
    got = float(L.mahalanobis_score(delta, np.zeros(3), S, n))
    assert got == pytest.approx(want, rel=1e-12)
    # a diagonal covariance gives the seed's independent-columns form
    v = np.diag(S)
    assert float(L.mahalanobis_score(delta, 0 * delta, np.diag(v), n, noise_var=0.3)) == \
        pytest.approx(float(L.leakage_score(delta, 0 * delta, v, n, noise_var=0.3)), rel=1e-12)


def test_singular_covariance_is_refused_naming_the_column():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((200, 3))
    X = np.column_stack([x, x[:, 0] + x[:, 1]])       # column 3 = column 0 + column 1
    C = np.cov(X.T, bias=True)
    with pytest.raises(ValueError, match="singular.*linearly dependent"):
        L.covariance_factor(C)
    # noise makes the release's covariance regular
    assert np.all(np.isfinite(L.covariance_factor(C, noise_var=0.5)))


def _cli(argv):
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = main(argv)
    return rc, json.loads(out.getvalue())


def test_cli_data_file_uses_full_covariance(tmp_path):
    X = _near_copies()
    f = tmp_path / "near.npy"
    np.save(f, X)
    z = X[17]
    np.save(tmp_path / "z.npy", z)
    rc, out = _cli(["leakage", "--data-file", str(f), "--target", str(tmp_path / "z.npy"),
                    "--n", "200", "--fpr", "0.1", "--json"])
    assert rc == 0 and out["covariance"] == "full"
    mu, C = X.mean(0), np.cov(X.T, bias=True)
    m_full = float(L.mahalanobis_score(z, mu, C, 200))
    m_diag = float(L.leakage_score(z, mu, X.var(0), 200))
    assert out["m_star"] == pytest.approx(m_full, rel=1e-9)
    assert abs(np.log(m_diag / m_full)) > np.log(2)   # the independent-columns form is off
    assert out["power"] == pytest.approx(float(L.power(0.1, m_full)), rel=1e-9)


@pytest.mark.parametrize("extra, flag", [(["--d", "40"], "--d"),
                                         (["--subsample", "0.5", "--inclusion",
                                           "per-coordinate"], "--inclusion")])
def test_cli_data_file_refuses_flags_it_would_ignore(tmp_path, extra, flag):
    f = tmp_path / "near.npy"
    np.save(f, _near_copies(rows=50, d=5))
    rc, out = _cli(["leakage", "--data-file", str(f), *extra, "--json"])
    assert rc != 0 and out["error"].split(": ", 1)[1].startswith(flag)


def test_closed_form_matches_monte_carlo():
    """Simulated power and advantage of the full-covariance Eq. 10 test on near-copies rows
    (row by row, 3000 games) match the closed forms within 4 binomial SEs (a 0.01 allowance for
    the finite-n gap of the limit experiment)."""
    X = _near_copies()
    law = ProductLaw.from_rows(X)
    rng = np.random.default_rng(3)
    z = X[rng.integers(X.shape[0])]
    mech = CovarianceMean(law, np.cov(X.T, bias=True), 200, z)
    th = mech.theory(0.1)
    res = simulate_leakage(mech, 3000, 5, attacks=("approx",), chunk_size=500)
    s = summarize_leakage(res, (0.1,))["approx"]
    assert abs(s["tpr_at_fpr"]["0.1"] - th["power"]) < 4 * s["tpr_se"]["0.1"] + 0.01
    assert abs(s["bayes_advantage"] - th["leakage"]) < 4 * s["bayes_advantage_se"] + 0.01
