"""SeMI-SGD log-LR: Theorem 4.1, the DP-SGD form, Woodbury/low-rank paths, batched torch paths."""

import numpy as np
import pytest
from scipy.stats import multivariate_normal

from semi_core.sgd.gradstats import LowRankPlusDiagonal, gradient_statistics
from semi_core.sgd.lr import dpsgd_log_lr, semi_max, semi_sgd_log_lr


def _point(rng, d=5, n=9):
    a = rng.normal(size=(d, d))
    sigma = a @ a.T / d + 0.3 * np.eye(d)
    return dict(mu=rng.normal(size=d), sigma=sigma, g=rng.normal(size=d) * 2,
                upd=rng.normal(size=(6, d)) * 0.2, eta=float(rng.uniform(0.05, 1.0)), n=n)


@pytest.mark.parametrize("sigma_dp", [0.0, 0.7, 3.0])
def test_dpsgd_log_lr_equals_difference_of_gaussian_logpdfs(sigma_dp, rng):
    for _ in range(5):
        p = _point(rng)
        d, n, eta, clip = p["mu"].size, p["n"], p["eta"], 1.3
        s = (sigma_dp * clip / n) ** 2
        v0 = eta**2 * (p["sigma"] / n + s * np.eye(d))
        v1 = eta**2 * ((n - 1) * p["sigma"] / n**2 + s * np.eye(d))
        N = p["upd"] + eta * p["mu"]
        ref = (multivariate_normal(-eta * (p["g"] - p["mu"]) / n, v1).logpdf(N)
               - multivariate_normal(np.zeros(d), v0).logpdf(N))
        got = dpsgd_log_lr(p["upd"], eta, p["mu"], p["sigma"], p["g"], n, sigma_dp=sigma_dp,
                           clip=clip)
        np.testing.assert_allclose(got, ref, rtol=1e-9, atol=1e-9)


def test_dpsgd_form_reduces_to_theorem_4_1_at_zero_noise(rng):
    for _ in range(5):
        p = _point(rng, d=7, n=int(rng.integers(2, 70)))
        thm = semi_sgd_log_lr(p["upd"], p["eta"], p["mu"], p["sigma"], p["g"], p["n"])
        dp = dpsgd_log_lr(p["upd"], p["eta"], p["mu"], p["sigma"], p["g"], p["n"], sigma_dp=0.0,
                          clip=1.0)
        np.testing.assert_allclose(dp, thm, rtol=1e-10, atol=1e-10)
        # and the noise matters once sigma_dp > 0
        noisy = dpsgd_log_lr(p["upd"], p["eta"], p["mu"], p["sigma"], p["g"], p["n"],
                             sigma_dp=2.0, clip=1.0)
        assert np.all(np.abs(noisy - thm) > 1e-6)


def test_log_lr_is_the_neyman_pearson_statistic_by_simulation(rng):
    """Under H0, E[LR] = 1 (change of measure); checked by Monte Carlo within 4 SE."""
    p = _point(rng, d=3, n=5)
    d, n, eta = 3, 5, p["eta"]
    sigma_dp, clip = 1.5, 1.0
    s = (sigma_dp * clip / n) ** 2
    v0 = eta**2 * (p["sigma"] / n + s * np.eye(d))
    N = rng.multivariate_normal(np.zeros(d), v0, size=200_000)
    lr = np.exp(dpsgd_log_lr(N - eta * p["mu"], eta, p["mu"], p["sigma"], p["g"], n,
                             sigma_dp=sigma_dp, clip=clip))
    se = lr.std() / np.sqrt(lr.size)
    assert abs(lr.mean() - 1.0) < 4 * se  # 4 Monte Carlo SE


def test_low_rank_plus_diagonal_matches_dense(rng):
    d, k = 40, 6
    diag, w = rng.uniform(0.5, 2.0, d), rng.normal(size=(d, k))
    lr = LowRankPlusDiagonal(diag, w)
    dense = np.diag(diag) + w @ w.T
    x = rng.normal(size=(d, 3))
    np.testing.assert_allclose(dense @ lr.solve(x), x, atol=1e-10)
    np.testing.assert_allclose(lr.logdet(), np.linalg.slogdet(dense)[1], rtol=1e-12)
    aff = lr.affine(0.3, 0.7)
    np.testing.assert_allclose(aff.dense(), 0.3 * dense + 0.7 * np.eye(d), atol=1e-12)
    with pytest.raises(ValueError, match="diag"):
        LowRankPlusDiagonal(np.zeros(d), w)


def test_gradient_statistics_dense_and_lowrank_agree(rng):
    g = rng.normal(size=(15, 30)) @ rng.normal(size=(30, 30))
    dense = gradient_statistics(g, form="dense", shrinkage=0.2, ridge=1e-3)
    low = gradient_statistics(g, form="lowrank", shrinkage=0.2, ridge=1e-3)
    np.testing.assert_allclose(dense.mean, g.mean(0))
    np.testing.assert_allclose(low.cov.dense(), dense.cov, atol=1e-10)
    s = np.cov(g.T)
    nu = np.trace(s) / 30
    np.testing.assert_allclose(dense.cov, 0.8 * s + (0.2 + 1e-3) * nu * np.eye(30), atol=1e-10)
    t = rng.normal(size=30)
    assert dense.mahalanobis(t) == pytest.approx(low.mahalanobis(t), rel=1e-10)


def test_lowrank_log_lr_matches_dense(rng):
    g = rng.normal(size=(12, 25))
    dense = gradient_statistics(g, form="dense")
    low = gradient_statistics(g, form="lowrank")
    upd, t = rng.normal(size=(4, 25)) * 0.1, rng.normal(size=25)
    for sdp in (0.0, 2.0):
        np.testing.assert_allclose(
            dpsgd_log_lr(upd, 0.3, dense.mean, low.cov, t, 9, sigma_dp=sdp, clip=1.0),
            dpsgd_log_lr(upd, 0.3, dense.mean, dense.cov, t, 9, sigma_dp=sdp, clip=1.0),
            rtol=1e-9)
    np.testing.assert_allclose(semi_sgd_log_lr(upd, 0.3, dense.mean, low.cov, t, 9),
                               semi_sgd_log_lr(upd, 0.3, dense.mean, dense.cov, t, 9), rtol=1e-9)


def test_batched_torch_log_lr_matches_numpy(rng):
    torch = pytest.importorskip("torch")
    from semi_core.sgd.batched import batched_dpsgd_log_lr, batched_mahalanobis

    B, m, d, n = 3, 10, 20, 8
    ref, upd, tgt = rng.normal(size=(B, m, d)), rng.normal(size=(B, d)) * 0.05, rng.normal(
        size=(B, d))
    for sdp in (0.0, 1.7):
        got = batched_dpsgd_log_lr(torch.as_tensor(upd), torch.as_tensor(ref),
                                   torch.as_tensor(tgt), eta=0.2, n=n, sigma_dp=sdp, clip=1.0,
                                   shrinkage=0.15, ridge=1e-3).numpy()
        exp = [dpsgd_log_lr(upd[b], 0.2, (st := gradient_statistics(
            ref[b], shrinkage=0.15, ridge=1e-3)).mean, st.cov, tgt[b], n, sigma_dp=sdp,
            clip=1.0) for b in range(B)]
        np.testing.assert_allclose(got, exp, rtol=1e-9)
    st = gradient_statistics(ref[0])
    md = batched_mahalanobis(torch.as_tensor(ref[0]), torch.as_tensor(tgt)).numpy()
    np.testing.assert_allclose(md, [st.mahalanobis(t) for t in tgt], rtol=1e-9)


@pytest.mark.parametrize("kind", ["logreg", "mlp"])
def test_ghost_statistics_match_generic_per_sample_path(kind, rng, tiny_problem):
    torch = pytest.importorskip("torch")

    from semi_core.sgd.batched import batched_dpsgd_log_lr, ghost_log_lr
    from semi_core.sgd.grads import clip_rows

    fm, stack, ref_x, ref_y = tiny_problem(kind, rng)
    th = fm.theta() + 0.3 * torch.as_tensor(rng.normal(size=(3, fm.d)))
    upd = 0.01 * torch.as_tensor(rng.normal(size=(3, fm.d)))
    for clip in (0.3, 30.0):
        ref = clip_rows(fm.per_sample_grads_batched(th, ref_x, ref_y, shared=True), clip)
        tgt = ref[:, 0] * 0.5
        for sdp in (0.0, 1.5):
            a = batched_dpsgd_log_lr(upd, ref, tgt, eta=0.5, n=16, sigma_dp=sdp, clip=clip)
            b = ghost_log_lr(upd, th, stack, ref_x, ref_y, tgt, eta=0.5, n=16, sigma_dp=sdp,
                             clip=clip)
            torch.testing.assert_close(a, b, rtol=1e-9, atol=1e-9)


def test_semi_max_and_bad_inputs(rng):
    x = rng.normal(size=(4, 6))
    np.testing.assert_array_equal(semi_max(x), x.max(1))
    p = _point(rng)
    with pytest.raises(ValueError, match="n must be"):
        semi_sgd_log_lr(p["upd"], 0.1, p["mu"], p["sigma"], p["g"], 1)
    with pytest.raises(ValueError, match="eta"):
        semi_sgd_log_lr(p["upd"], 0.0, p["mu"], p["sigma"], p["g"], 5)
    with pytest.raises(ValueError, match="clip"):
        dpsgd_log_lr(p["upd"], 0.1, p["mu"], p["sigma"], p["g"], 5, sigma_dp=1.0, clip=0.0)
    with pytest.raises(ValueError, match="sigma_dp"):
        dpsgd_log_lr(p["upd"], 0.1, p["mu"], p["sigma"], p["g"], 5, sigma_dp=-1.0, clip=1.0)
    with pytest.raises(ValueError, match="positive definite"):
        semi_sgd_log_lr(p["upd"], 0.1, p["mu"], -p["sigma"], p["g"], 5)
    with pytest.raises(ValueError, match="shrinkage"):
        gradient_statistics(rng.normal(size=(5, 3)), shrinkage=1.5)


def test_numpy_modules_do_not_import_torch():
    import subprocess
    import sys

    code = ("import sys, semi_core, semi_core.sgd, semi_core.sgd.lr, semi_core.sgd.linreg, "
            "semi_core.sgd.accounting, semi_core.sgd.gradstats, semi_core.cli.audit_dpsgd, "
            "semi_core.stats.update_combination, semi_core.report.dpsgd_section; "
            "assert 'torch' not in sys.modules, 'torch imported'")
    subprocess.run([sys.executable, "-c", code], check=True)
