"""RMIA (Zarifzadeh et al. 2024) as a pool scorer on the IHA experiment's reference models:
the score against a direct pairwise evaluation of its definition, the offline marginal, a small
pool where it beats LOSS, and the same seed giving the same result on every executor."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from semi_core.attacks.whitebox import AttackConfig, RMIAScorer, rmia, run_attacks  # noqa: E402
from semi_core.attacks.whitebox.scores import rmia_marginal  # noqa: E402
from semi_core.audit.roc import auc  # noqa: E402
from semi_core.game.backends import Executor  # noqa: E402
from semi_core.sgd.momentum import SGDConfig  # noqa: E402


def _sig(x):
    return 1.0 / (1.0 + np.exp(-x))


def test_rmia_matches_pairwise_definition():
    rng = np.random.default_rng(0)
    k, Z, R = 7, 11, 6
    phi, pop_phi = rng.normal(size=k), rng.normal(size=Z)
    ref, pop_ref = rng.normal(size=(k, R)), rng.normal(size=(Z, R))
    rin, pin = rng.random((k, R)) < 0.5, rng.random((Z, R)) < 0.5
    rin[:, 0] = pin[:, 0] = False                        # >= 1 OUT model each
    exclude = np.full(k, -1)
    exclude[2] = 4
    for a in (None, 0.0, 0.3, 1.0):
        for gamma in (0.5, 1.0, 2.0):
            got = rmia(phi, ref, rin, pop_phi, pop_ref, pin, gamma=gamma, offline_a=a,
                       exclude=exclude)
            if a is None:
                px, pz = _sig(ref).mean(1), _sig(pop_ref).mean(1)
            else:
                po = lambda s, m: np.array([_sig(s[i][~m[i]]).mean() for i in range(len(s))])  # noqa: E731
                px = 0.5 * ((1 + a) * po(ref, rin) + (1 - a))
                pz = 0.5 * ((1 + a) * po(pop_ref, pin) + (1 - a))
            want = []
            for i in range(k):
                zs = [j for j in range(Z) if j != exclude[i]]
                lr = [(_sig(phi[i]) / px[i]) / (_sig(pop_phi[j]) / pz[j]) for j in zs]
                want.append(np.mean(np.array(lr) >= gamma))
            np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    # a = 1 is the plain OUT mean; bad arguments are refused
    np.testing.assert_allclose(rmia_marginal(ref, rin, offline_a=1.0),
                               [_sig(ref[i][~rin[i]]).mean() for i in range(k)])
    with pytest.raises(ValueError, match="offline_a"):
        rmia_marginal(ref, rin, offline_a=1.5)
    with pytest.raises(ValueError, match="gamma"):
        rmia(phi, ref, rin, pop_phi, pop_ref, pin, gamma=0.0)
    with pytest.raises(ValueError, match="attacks"):
        RMIAScorer(("lira-online",))
    with pytest.raises(ValueError, match="rmia_a"):
        AttackConfig(rmia_a=-0.1)


SGD = SGDConfig(lr=0.05, momentum=0.9, weight_decay=5e-4, batch_size=16, epochs=10.0)
CFG = AttackConfig(dataset="digits", model="logreg", n_models=12, n_targets=None,
                   target_models=3, pool_size=120, sgd=SGD)


@pytest.fixture(scope="module")
def run():
    torch.set_num_threads(1)
    return run_attacks(CFG, ("loss", "rmia", "rmia-offline"), seed=0)


def test_rmia_beats_loss_on_a_small_pool(run):
    # 360 scores (3 target models x 120 records); seed 0 gives AUC .79 (rmia) vs .65 (loss).
    # Tolerance: the gap must exceed 3 standard errors of the difference, bounded above by
    # sqrt(se_rmia^2 + se_loss^2) (DeLong; the two scores are positively correlated).
    a_r, se_r = auc(*run.result.scores("rmia"), se=True)
    a_l, se_l = auc(*run.result.scores("loss"), se=True)
    assert a_r - a_l > 3 * np.hypot(se_r, se_l), (a_r, a_l)
    s = run.result.stats["rmia"]
    assert ((s >= 0) & (s <= 1)).all()
    assert "rmia" in run.seconds


def test_rmia_same_seed_same_result(run):
    again = run_attacks(CFG, ("loss", "rmia", "rmia-offline"), seed=0,
                        executor=Executor(threads=2))
    np.testing.assert_array_equal(again.result.member, run.result.member)
    for k in run.result.stats:
        np.testing.assert_array_equal(again.result.stats[k], run.result.stats[k])
