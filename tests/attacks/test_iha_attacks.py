"""IHA and the LiRA family (``iha_parameters_vs_loss``): hand derivations, scipy
references, exact vs CG, the experiment as a GameResult, agreement matrices, bad inputs."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats

torch = pytest.importorskip("torch")

from torch import nn  # noqa: E402

from semi_core.attacks.whitebox import (  # noqa: E402
    AttackConfig,
    agreement_matrix,
    iha_score,
    iha_terms,
    l_attack,
    lira_l,
    lira_offline,
    lira_online,
    logit_confidence,
    normal_logpdf,
    parse_attacks,
    run_attacks,
)
from semi_core.sgd.grads import FunctionalModel  # noqa: E402
from semi_core.sgd.hessian import EigenInverse, mean_loss_hessian  # noqa: E402
from semi_core.sgd.momentum import SGDConfig  # noqa: E402


def test_iha_one_parameter_hand_derivation():
    r"""d = 1, l(w; x, y) = (w x - y)^2 / 2: H = mean x_i^2, g = x (w x - y); Eq. 8 by hand."""
    rng = np.random.default_rng(0)
    n = 40
    x = rng.normal(size=n)
    y = 0.7 * x + 0.3 * rng.normal(size=n)
    w = 0.65
    lr, mom, wd, eps = 0.05, 0.9, 0.01, 0.2
    fm = FunctionalModel(nn.Linear(1, 1, bias=False).double(), loss="mse")
    theta = torch.tensor([w], dtype=torch.float64)
    X, Y = torch.as_tensor(x[:, None]), torch.as_tensor(y)
    H = mean_loss_hessian(fm, theta, X, Y)
    assert float(H) == pytest.approx(np.mean(x**2), rel=1e-12)
    grads_all = x * (w * x - y)
    gl1 = grads_all.mean()
    tg = np.array([3, 17])                     # two members
    xz, yz = np.array([x[3], x[17], 1.3]), np.array([y[3], y[17], -0.4])   # + a non-member
    member = np.array([True, True, False])
    g = xz * (w * xz - yz)
    loss = 0.5 * (w * xz - yz) ** 2
    c = lr * wd / (1 + mom)
    h = np.mean(x**2) + eps
    u = g / h
    v0 = (gl1 - member * g / n) / h
    I1 = (1 - c) / n * u**2
    I2 = 2 * (1 - c) * v0 * u
    I3 = wd / (2 * n) * (2 - c) * u**2 / h
    I4 = wd * (2 - c) * v0 * u / h
    hand = loss / (1 + mom) - (I1 + I2 + I3 + I4) / lr
    G = fm.per_sample_grads(theta, torch.as_tensor(xz[:, None]), torch.as_tensor(yz))
    terms = iha_terms(EigenInverse(H, epsilon=eps), G, loss, n=n, lr=lr, momentum=mom,
                      weight_decay=wd, grad_l1=torch.as_tensor([gl1]), member=member)
    np.testing.assert_allclose(iha_score(terms, lr=lr), hand, rtol=1e-12)
    np.testing.assert_allclose(terms["I2"], I2, rtol=1e-12)
    np.testing.assert_allclose(iha_score(terms, lr=lr, use=("I1", "I2")), -(I1 + I2) / lr,
                               rtol=1e-12)
    # explicit grad_l0 rows give the same terms as the member shortcut
    g0 = torch.as_tensor((gl1 - member * g / n)[:, None])
    t2 = iha_terms(EigenInverse(H, epsilon=eps), G, loss, n=n, lr=lr, momentum=mom,
                   weight_decay=wd, grad_l0=g0)
    for k in terms:
        np.testing.assert_allclose(t2[k], terms[k], rtol=1e-12)
    assert tg.size == 2


def test_lira_against_scipy():
    rng = np.random.default_rng(1)
    k, R = 30, 40
    ref = rng.normal(size=(k, R)) * rng.uniform(0.5, 2, (k, 1)) + rng.normal(size=(k, 1))
    inn = rng.random((k, R)) < 0.5
    phi = rng.normal(size=k)
    assert np.allclose(normal_logpdf(phi, 0.3, 1.7), stats.norm.logpdf(phi, 0.3, 1.7))
    mi = np.array([ref[j][inn[j]].mean() for j in range(k)])
    si = np.array([ref[j][inn[j]].std(ddof=1) for j in range(k)])
    mo = np.array([ref[j][~inn[j]].mean() for j in range(k)])
    so = np.array([ref[j][~inn[j]].std(ddof=1) for j in range(k)])
    np.testing.assert_allclose(lira_online(phi, ref, inn),
                               stats.norm.logpdf(phi, mi, si) - stats.norm.logpdf(phi, mo, so),
                               rtol=1e-12)
    np.testing.assert_allclose(lira_offline(phi, ref, inn), stats.norm.logcdf(phi, mo, so),
                               rtol=1e-10)
    sg = np.sqrt(np.mean(so**2))
    np.testing.assert_allclose(lira_offline(phi, ref, inn, variance="global"),
                               stats.norm.logcdf(phi, mo, sg), rtol=1e-10)
    full = np.array([ref[j].std(ddof=1) for j in range(k)])
    np.testing.assert_allclose(lira_l(phi, ref), stats.norm.logcdf(phi, ref.mean(1), full),
                               rtol=1e-10)
    assert np.allclose(l_attack([1.0, 2.0], [[0.5, 1.0, 3.0, 4.0], [3, 3, 3, 3]]),
                       [0.625, 1.0])


def test_logit_confidence_exact():
    z = torch.tensor([[2.0, -1.0, 0.5], [40.0, -40.0, 0.0]], dtype=torch.float64)
    y = torch.tensor([0, 1])
    p = torch.softmax(z, -1)
    phi = logit_confidence(z, y, kind="logits")
    assert float(phi[0]) == pytest.approx(float(torch.log(p[0, 0] / (1 - p[0, 0]))), rel=1e-12)
    assert np.isfinite(phi.numpy()).all() and float(phi[1]) == pytest.approx(-80.0, abs=1e-9)
    s = torch.tensor([3.0, -2.0], dtype=torch.float64)
    assert torch.equal(logit_confidence(s, torch.tensor([1.0, 1.0]), kind="binary"), s)


@pytest.fixture(scope="module")
def small_run():
    torch.set_num_threads(1)
    cfg = AttackConfig(dataset="breast-cancer", model="logreg", n_models=24, n_targets=80,
                       target_models=2, loo_targets=10, loo_models=3,
                       sgd=SGDConfig(batch_size=32, epochs=6))
    return run_attacks(cfg, parse_attacks("iha-exact,iha-cg,loss,sif,lira-online,"
                                          "lira-offline-global,l-attack,lira-l"), seed=5)


def test_exact_and_cg_agree(small_run):
    r = small_run.result
    np.testing.assert_allclose(r.stats["iha-cg"], r.stats["iha-exact"], rtol=1e-6, atol=1e-8)
    m = small_run.metrics(n_bootstrap=20)
    assert abs(m["iha-cg"]["auc"] - m["iha-exact"]["auc"]) < 1e-9


def test_run_is_a_game_result(small_run):
    from semi_core.audit.games import audit_game_result
    from semi_core.game.result import GameResult

    r = small_run.result
    assert isinstance(r, GameResult) and r.rounds == 160 and (r.tau == 1).all()
    assert 0 < r.member.mean() < 1
    assert set(small_run.loo_result.stats) >= {"l-attack", "lira-l", "loss"}
    cert = audit_game_result(r, delta=1e-5, failure_prob=0.05, method="cp", tests=["loss"])
    assert cert["loss"]["epsilon_lower_bound"] >= 0
    m = small_run.metrics(n_bootstrap=20)
    for v in m.values():
        lo, hi = v["auc_interval"]
        assert lo <= v["auc"] <= hi and set(v["tpr_at_fpr"]) == {"0.01", "0.001"}
    json.dumps(m)
    # same seed, same scores
    again = run_attacks(small_run.config, ["loss", "lira-online"], seed=5)
    np.testing.assert_array_equal(again.result.stats["loss"], r.stats["loss"])


def test_agreement_matrix(small_run):
    r = small_run.result
    a = agreement_matrix(r, ["loss", "lira-online", "iha-exact"], fpr=0.3)
    for side in ("members", "nonmembers"):
        mat = a[side]
        assert all(mat[x][x] == 1.0 for x in mat)
        assert mat["loss"]["lira-online"] == mat["lira-online"]["loss"]
    # GT agreement among non-members is 1 - empirical FPR <= 0.3
    assert a["nonmembers"]["loss"]["GT"] >= 0.7
    m, nm = r.scores("loss")
    thr = np.sort(nm)[::-1][int(np.floor(0.3 * nm.size))]
    assert a["members"]["loss"]["GT"] == pytest.approx(np.mean(m > thr))


@pytest.mark.parametrize("call, match", [
    (lambda: parse_attacks("iha,nope"), "attacks must be drawn from"),
    (lambda: parse_attacks(""), "attacks must be drawn from"),
    (lambda: AttackConfig(dataset="mnist"), "dataset must be one of"),
    (lambda: AttackConfig(model="cnn"), "model must be one of"),
    (lambda: AttackConfig(hessian="lissa"), "hessian must be"),
    (lambda: AttackConfig(damping=-1.0), "damping must be"),
    (lambda: AttackConfig(n_models=3), "n_models must be in"),
    (lambda: AttackConfig(target_models=100), "target_models must be in"),
    (lambda: lira_online([0.0], [[1.0, 2.0, 3.0]], [[True, False, False]]), ">= 2 reference"),
    (lambda: lira_online([0.0], [[1.0, 2.0]], [[True]]), "equal shape"),
    (lambda: lira_offline([0.0], [[1.0, 1.0, 2.0]], [[False] * 3], variance="fixed"),
     "variance must be"),
    (lambda: normal_logpdf(0.0, 0.0, 0.0), "sigma must be > 0"),
    (lambda: l_attack([1.0, 2.0], [[1.0]]), "ref_losses must be"),
    (lambda: iha_score({"loss": np.zeros(2)}, lr=0.1, use=("I9",)), "use must be"),
    (lambda: iha_score({"loss": np.zeros(2)}, lr=0.0), "lr must be finite and > 0"),
    (lambda: logit_confidence(torch.zeros(2), torch.zeros(2), kind="probit"), "kind must be"),
    (lambda: agreement_matrix(None, [], fpr=1.5), "fpr must be in"),
])
def test_bad_inputs(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call()


def test_tables_beside_the_seed(small_run):
    from semi_core.attacks.whitebox.tables import (
        SEED,
        TABLE4_ROWS,
        agreement_tables,
        damping_sweep,
        exact_vs_cg,
        loo_fraction_curve,
        markdown_main,
        markdown_sweeps,
        term_ablation,
    )

    kw = dict(n_bootstrap=10, seed=0)
    ev = exact_vs_cg(small_run, **kw)
    assert ev["max_relative_score_difference"] < 1e-6
    damp = damping_sweep(small_run, epsilons=(0.1, 0.2), **kw)
    assert damp["damping"][0.2]["auc"] == pytest.approx(
        small_run.metrics(**kw)["iha-exact"]["auc"])
    abl = term_ablation(small_run, **kw)
    assert set(abl) == set(TABLE4_ROWS)
    assert abl["all"]["auc"] == pytest.approx(ev["exact"]["auc"])
    frac = loo_fraction_curve(small_run, fractions=(0.5, 1.0), **kw)
    assert frac[1.0]["auc"] == pytest.approx(ev["exact"]["auc"])
    agree = agreement_tables(small_run, fprs=(0.3,))
    md = markdown_main(small_run.metrics(**kw), setting="bc", seed_col="Purchase-100")
    md2 = markdown_sweeps(ev, damp, abl, frac, agree, seed_col="Purchase-100")
    assert "0.703, 13.69, 7.52" in md  # iha-exact / iha-cg sit beside the seed's IHA row
    assert f"{SEED['table3']['Purchase-100'][1][0]:.3f}" in md2 and "Table 9" in md2


def _write_idx(path, arr):
    arr = np.asarray(arr, dtype=np.uint8)
    header = bytes([0, 0, 0x08, arr.ndim]) + b"".join(
        int(s).to_bytes(4, "big") for s in arr.shape)
    path.write_bytes(header + arr.tobytes())


def test_file_datasets(tmp_path):
    """IDX (MNIST-Odd style) and CSV (Purchase-100 style, labels 1..K) pools end to end."""
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 10, 60)
    images = (rng.random((60, 4, 4)) * 255 + labels[:, None, None] * 3).clip(0, 255)
    _write_idx(tmp_path / "train-images-idx3-ubyte", images)
    _write_idx(tmp_path / "train-labels-idx1-ubyte", labels)
    sgd = SGDConfig(batch_size=8, epochs=2)
    cfg = AttackConfig(dataset="idx-odd", model="logreg-mse", data_path=str(tmp_path),
                       n_models=6, n_targets=20, sgd=sgd, pool_size=50)
    run = run_attacks(cfg, ["iha", "loss"], seed=0)
    assert run.setup["n_pool"] == 50 and run.setup["d"] == 17 and run.result.rounds == 20
    table = np.column_stack([rng.integers(1, 4, 50), rng.normal(size=(50, 5))])
    np.savetxt(tmp_path / "purchase.csv", table, delimiter=",")
    cfg = AttackConfig(dataset="file", model="logreg", data_path=str(tmp_path / "purchase.csv"),
                       n_models=6, n_targets=20, sgd=sgd)
    run = run_attacks(cfg, ["iha", "sif"], seed=0)
    assert run.setup["d"] == 3 * 5 + 3
    with pytest.raises(ValueError, match="data_path is needed exactly"):
        AttackConfig(dataset="file")
    with pytest.raises(ValueError, match="data_path is needed exactly"):
        AttackConfig(dataset="digits", data_path="x.csv")
