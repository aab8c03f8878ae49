"""The update attacks and the per-datum leakage games on the one game runner.

* (every new mechanism passes the conformance suite: tests/test_conformance.py);
* the same seed gives an identical :class:`GameResult` (and :class:`UpdateRun`) in-process, on
  two threads and on a Dask ``LocalCluster`` with two workers;
* the ``updates`` / ``leakage`` commands at the extremes of their value flags give a clean error
  or a result, never an internal error (``--sigma-dp 1e-300`` was one), and leakage names the
  scale of its threshold.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from semi_core.attacks.leakage import leakage_scorers, simulate_leakage
from semi_core.attacks.updates.gap import (
    SufficientEmpiricalMean,
    UpdateMeanGame,
    multi_update_game,
    play_update_game,
    update_game_mechanism,
)
from semi_core.game.backends import Executor
from semi_core.game.play import play
from semi_core.mechanisms.per_datum import PerDatumMean, ProductLaw, seed_bernoulli
from tests.conftest import MC_SIGMAS, binomial_se

GAME = UpdateMeanGame(n0=30, n1=4, d=5, sigma=1.0, distance=3.0, c=0.05)
TINY = dict(n0=60, trials=2, n_ref=2, base_epochs=4, new_epochs=2, full_epochs=1, n_up=4)


@pytest.fixture(autouse=True)
def _one_torch_thread():
    """Torch on one thread (the project's setting for replicas; no oversubscription)."""
    try:
        import torch  # lazy: heavy optional dependency
    except ImportError:  # pragma: no cover - numpy-only install
        yield
        return
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def _same(a, b):
    np.testing.assert_array_equal(a.member, b.member)
    np.testing.assert_array_equal(a.tau, b.tau)
    assert a.stats.keys() == b.stats.keys()
    for k in a.stats:
        np.testing.assert_array_equal(a.stats[k], b.stats[k])


def _per_datum(d=30, n=50, rho=1.0, noise=0.0):
    law = seed_bernoulli(d, seed=1)
    z = (law.mean <= 0.5).astype(float)
    return PerDatumMean(law, n, z, noise_std=noise, rho=rho)


def test_sufficient_release_has_the_exact_law():
    """Sufficient and exact releases of the update game: SeMI* at tau = 2 has the same mean
    under H0 and H1 (4.5 MC sigma of the difference of two means, 6000 rounds each)."""
    ex, su = update_game_mechanism(GAME, "exact"), update_game_mechanism(GAME, "sufficient")
    assert isinstance(su, SufficientEmpiricalMean)
    for member in (False, True):
        vals = []
        for i, mech in enumerate((ex, su)):
            rel = mech.release(np.full(6000, member), np.full(6000, 2),
                               np.random.default_rng(10 + i))
            vals.append(mech.log_lr_steps(rel)[:, 1])
        a, b = vals
        se = np.sqrt(a.var() / a.size + b.var() / b.size)
        assert abs(a.mean() - b.mean()) <= MC_SIGMAS * se


def test_update_game_b_is_bernoulli_half():
    res = play_update_game(GAME, 4000, 3, chunk=1000)
    assert res.metadata["game"] == "update-empirical-mean" and set(np.unique(res.tau)) == {2}
    p = res.member.mean()
    assert abs(p - 0.5) <= MC_SIGMAS * binomial_se(0.5, res.rounds)


# ----------------------------------------------------------------------------- executors

def test_numpy_games_identical_on_every_executor(dask_client):
    exs = (None, Executor(threads=2), Executor(client=dask_client))
    a = [play_update_game(GAME, 600, 5, chunk=200, executor=e) for e in exs]
    b = [multi_update_game(n0=20, n_up=3, k=3, d=4, distance=3.0, rounds=600, seed=6,
                           chunk_size=200, executor=e) for e in exs]
    mech = _per_datum()
    c = [simulate_leakage(mech, 600, 7, attacks=("exact", "approx", "scalar", "plugin"), n0=20,
                          chunk_size=200, executor=e) for e in exs]
    for res in (a, [x["result"] for x in b], c):
        _same(res[0], res[1])
        _same(res[0], res[2])
    assert b[0]["entry_among_members"] == b[2]["entry_among_members"]
    assert c[2].metadata["executor"] == "dask-client"
    d = simulate_leakage(mech, 600, 8, attacks=("scalar",), chunk_size=200)
    assert not np.array_equal(c[0].stats["scalar"], d.stats["scalar"])


def test_torch_games_identical_on_every_executor(dask_client):
    pytest.importorskip("torch")
    from semi_core.attacks.updates import UpdateConfig, run_experiment
    from semi_core.attacks.updates.dp import dp_game

    cfg = UpdateConfig(clip=1.0, sigma_dp=1.0, k=2, **TINY)
    exs = (None, Executor(threads=2), Executor(client=dask_client))
    games = [dp_game(cfg, 12, chunk_size=4, executor=e) for e in exs]
    _same(games[0], games[1])
    _same(games[0], games[2])
    runs = [run_experiment(cfg, scores=("loss", "lira"), chunk_size=1, executor=e) for e in exs]
    for r in runs[1:]:
        for s in ("loss", "lira"):
            np.testing.assert_array_equal(runs[0].scores[s], r.scores[s])
            np.testing.assert_array_equal(runs[0].shadow[s], r.shadow[s])
            np.testing.assert_array_equal(runs[0].rank_out[s], r.rank_out[s])
        np.testing.assert_array_equal(runs[0].correct_final, r.correct_final)


def test_update_runs_follow_the_fig2_layout():
    """IN slots fill the updates in order; a run released alone equals the same run in a batch
    (replicas), so the chunking does not matter beyond the seeding."""
    pytest.importorskip("torch")
    from semi_core.attacks.updates import UpdateConfig
    from semi_core.attacks.updates.experiment import UpdateRunPool
    from semi_core.attacks.updates.experiment.data import _pools
    from semi_core.sgd.models import build_model

    cfg = UpdateConfig(k=2, **TINY)
    x, y, src, pools = _pools(cfg, np.random.default_rng(0))
    fm, th, _ = build_model("logreg", x[:32], y[:32], 10, seed_seq=np.random.SeedSequence(1),
                            epochs=0)
    mech = UpdateRunPool(cfg, fm, th, x, y, src, pools["learner"])
    row = np.r_[np.ones(8, bool), np.zeros(8, bool)]
    out = mech.release_pool(np.tile(row, (2, 1)), np.random.default_rng(3))
    assert out.shape == (2, 3 * fm.d + 16)
    cand = mech.candidates(out)
    assert np.isin(cand, pools["learner"]).all() and len(set(cand[0].tolist())) == 16
    with pytest.raises(ValueError, match="exactly k \\* n_up"):
        mech.release_pool(np.ones((1, 16), bool), np.random.default_rng(0))


def test_leakage_scorers_validate():
    mech = _per_datum()
    with pytest.raises(ValueError, match="n0"):
        leakage_scorers(mech, ("plugin",))
    with pytest.raises(ValueError, match="z_targ"):
        leakage_scorers(mech, ("misspecified",), z_targ=np.zeros(3))
    with pytest.raises(ValueError, match="repeat"):
        leakage_scorers(mech, ("approx", "approx"))
    noisy = PerDatumMean(ProductLaw.bernoulli(np.full(5, 0.5)), 20, np.ones(5), noise_std=0.5)
    with pytest.raises(ValueError, match="exact density"):
        leakage_scorers(noisy, ("exact",))
    # scorers are plain runner scorers: play accepts them directly
    res = play(mech, 300, 1, tau=1, tests=(), scorers=leakage_scorers(mech, ("approx",)))
    assert res.tests == ("approx",)


# ----------------------------------------------------------------------------- robustness

def _cli(argv, capsys):
    from semi_core.cli import main

    code = main([*argv, "--json"])
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1, out
    return code, json.loads(out[0])


@pytest.mark.parametrize("sigma", ["1e-300", "1e-7", "1e300", "nan", "inf", "-1"])
def test_updates_sigma_dp_extremes_are_clean_errors(sigma, capsys):
    pytest.importorskip("torch")
    code, obj = _cli(["updates", "--trials", "2", "--n0", "40", "--n-up", "2", "--sigma-dp",
                      sigma], capsys)
    assert code == 2 and obj["kind"] != "internal" and "sigma" in obj["error"], obj


def test_updates_library_refuses_unauditable_noise():
    pytest.importorskip("torch")
    from semi_core.attacks.updates import TrainConfig, UpdateConfig

    with pytest.raises(ValueError, match="sigma_dp must be 0 .* or >= .*mu = 2 sqrt"):
        UpdateConfig(clip=1.0, sigma_dp=1e-300)
    with pytest.raises(ValueError, match="sigma_dp \\* clip"):
        TrainConfig(1, 0.1, clip=1e300, sigma_dp=1.0)
    with pytest.raises(ValueError, match="clip must be finite"):
        TrainConfig(1, 0.1, clip=float("inf"))


@pytest.mark.parametrize("argv,needle", [
    (["--clip", "2"], "--clip applies only"),
    (["--trials", "1000000000"], "trials"),
    (["--n-ref", "1000000000", "--score", "lira"], "reference runs"),
    (["--sigma-dp", "1", "--clip", "nan"], "--clip"),
])
def test_updates_cli_refusals(argv, needle, capsys):
    pytest.importorskip("torch")
    code, obj = _cli(["updates", *argv], capsys)
    assert code == 2 and needle in obj["error"], obj


@pytest.mark.parametrize("argv,needle", [
    (["--noise", "1e300"], "--noise"),
    (["--noise", "nan"], "--noise"),
    (["--simulate", "1000000000", "--dim", "5000"], "--simulate"),
    (["--rank", "5"], "--rank applies only"),
    (["--threads", "2"], "apply only to the games of --simulate"),
    (["--workers", "1000000"], "apply only to the games of --simulate"),
    (["--fpr", "1e300"], "--fpr"),
    (["--subsample", "1e-300"], "--subsample"),
])
def test_leakage_cli_refusals(argv, needle, capsys):
    code, obj = _cli(["leakage", "--n", "20", "--dim", "20", *argv], capsys)
    assert code == 2 and needle in obj["error"], obj


def test_leakage_threshold_scale_is_named(capsys):
    from semi_core.stats import leakage as L

    _, full = _cli(["leakage", "--n", "100", "--dim", "50"], capsys)
    _, sub = _cli(["leakage", "--n", "100", "--dim", "50", "--subsample", "0.5"], capsys)
    assert full["threshold_scale"] == "log_lr" and sub["threshold_scale"] == "log_lr"
    # the documented formulas: log-LR threshold at m*; mixed threshold at (m_in q, q)
    assert full["threshold"] == pytest.approx(float(L.threshold(full["fpr"], full["m_star"])))
    q = sub["k"] / sub["n"]
    assert sub["threshold"] == pytest.approx(float(L.sub_threshold(sub["fpr"], sub["m_in"] * q,
                                                                   q)))


def test_leakage_simulation_on_threads(capsys):
    code, a = _cli(["leakage", "--n", "100", "--dim", "30", "--simulate", "400"], capsys)
    _, b = _cli(["leakage", "--n", "100", "--dim", "30", "--simulate", "400", "--threads", "2"],
                capsys)
    assert code == 0
    assert a["simulation"]["attacks"] == b["simulation"]["attacks"]


def test_shared_executor_bounds_local_workers():
    from semi_core.attacks.updates.experiment import shared_executor

    with pytest.raises(ValueError, match="workers must be in 1..*--scheduler"):
        with shared_executor(Executor(workers=10**12)):  # refused by the Executor itself
            pass  # pragma: no cover - refused before the cluster starts
    with shared_executor(2) as ex:  # not a local cluster: passed through
        assert ex.threads == 2 and ex.workers is None
