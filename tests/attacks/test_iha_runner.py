"""IHA / LiRA on the one game runner: TrainedModelMechanism as a pool mechanism
(the protocol checks of ``check_mechanism`` that apply to ``release_pool``; as a one-shot
Mechanism it is in tests/test_conformance.py), the attacks as pool scorers, the same GameResult on every
executor, and sizes refused instead of clipped."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from semi_core.attacks.whitebox import (  # noqa: E402
    AttackConfig,
    LeaveOneOutScorer,
    LiRAScorer,
    TrainedModelMechanism,
    WhiteBoxScorer,
    run_attacks,
)
from semi_core.game.backends import Executor  # noqa: E402
from semi_core.game.play import PoolView, play_pool  # noqa: E402
from semi_core.sgd.data import load_bundled  # noqa: E402
from semi_core.sgd.momentum import SGDConfig  # noqa: E402
from semi_core.sgd.reference_models import build_attack_model  # noqa: E402

SGD = SGDConfig(lr=0.05, batch_size=16, epochs=3)


@pytest.fixture(scope="module")
def data():
    torch.set_num_threads(1)
    x, y, _ = load_bundled("digits-odd")
    x, y = x[:81].copy(), y[:81].astype(float)
    y[80] = 1 - y[80]                          # a mislabeled canary
    return build_attack_model("logreg-mse", 64, 2), torch.as_tensor(x), torch.as_tensor(y)


@pytest.fixture(scope="module")
def pool(data):
    fm, x, y = data
    return TrainedModelMechanism.pool(fm, x, y, SGD, base=np.arange(10))


def _gen(seed):
    return np.random.Generator(np.random.PCG64(seed))


def _rows(m, n, seed=0):
    return _gen(seed).random((m, n)) < 0.5


def _global_states():
    return (json.dumps(np.random.get_state(legacy=False), default=str, sort_keys=True),
            random.getstate(), torch.random.get_rng_state().clone())


# ---------------------------------------------------------------- the pool protocol
def test_pool_protocol(pool):
    """check_mechanism's rules that apply to a pool mechanism: n_records, JSON params, real
    finite releases of a stable shape, determinism under a seed, seeds matter, no global RNG."""
    assert pool.n_records == 71 and pool.steps == SGD.steps(10 + 71 / 2)
    p = pool.params()
    assert json.loads(json.dumps(p, allow_nan=False)) == p
    assert p["canary"] is None and p["damping"] is None and p["n_records"] == 71
    before = _global_states()
    a = pool.release_pool(_rows(5, 71), _gen(1))
    after = _global_states()
    assert before[0] == after[0] and before[1] == after[1] and torch.equal(before[2], after[2])
    assert a.shape == (5, pool.fm.d) and a.dtype == np.float64 and np.isfinite(a).all()
    b = pool.release_pool(_rows(2, 71, seed=3), _gen(2))
    assert b.shape[1:] == a.shape[1:] and b.dtype == a.dtype
    np.testing.assert_array_equal(pool.release_pool(_rows(5, 71), _gen(1)), a)
    assert not np.array_equal(pool.release_pool(_rows(5, 71), _gen(9)), a)


def test_pool_training_sets(pool):
    """Row i trains on base plus the candidates it selects: a model's weights depend on its
    row (same seed, one record flipped -> different weights)."""
    row = _rows(1, 71)[0]
    ts = pool.training_set(row)
    np.testing.assert_array_equal(ts, np.union1d(np.arange(10), 10 + np.flatnonzero(row)))
    flip = row.copy()
    flip[0] = not flip[0]
    w = pool.release_pool(np.stack([row, flip]), _gen(4))
    w1 = pool.release_pool(np.stack([row, row]), _gen(4))
    np.testing.assert_array_equal(w[0], w1[0])
    assert not np.array_equal(w[1], w1[1])


@pytest.mark.parametrize("rows, match", [
    (np.zeros((2, 70), dtype=bool), r"rows must be a bool array of shape \(m, 71\)"),
    (np.zeros((2, 71)), "rows must be a bool array"),
    (np.zeros(71, dtype=bool), "rows must be a bool array"),
])
def test_pool_bad_rows(pool, rows, match):
    with pytest.raises(ValueError, match=match):
        pool.release_pool(rows, _gen(0))


def test_pool_mode_refuses_the_one_shot_game(pool, data):
    fm, x, y = data
    with pytest.raises(ValueError, match="needs the one-shot game"):
        pool.release(np.array([True]), np.array([1]), _gen(0))
    with pytest.raises(ValueError, match="needs the one-shot game"):
        pool.log_lr_steps(np.zeros((1, 1, fm.d)))
    for kw, match in [(dict(candidates=[3, 3]), "distinct and not in base"),
                      (dict(candidates=[5], base=[5, 6]), "distinct and not in base"),
                      (dict(candidates=[81]), "candidates must lie in"),
                      (dict(candidates=[]), "at least 1 record"),
                      (dict(steps=0), "steps must be in 1")]:
        with pytest.raises(ValueError, match=match):
            TrainedModelMechanism.pool(fm, x, y, SGD, **kw)
    with pytest.raises(ValueError, match="either canary"):
        TrainedModelMechanism(fm, x, y, np.arange(10), 80, SGD, candidates=[80])
    with pytest.raises(TypeError, match="cfg must be an SGDConfig"):
        TrainedModelMechanism.pool(fm, x, y, {"lr": 0.1})


# ---------------------------------------------------------------- the one-shot Mechanism
def test_one_shot_game_releases_through_the_pool(data):
    """release() is release_pool() with the canary the only candidate (one training path)."""
    fm, x, y = data
    mech = TrainedModelMechanism(fm, x, y, np.arange(80), 80, SGD)
    member = np.array([True, False, True])
    rel = mech.release(member, np.ones(3, dtype=np.int64), _gen(5))
    np.testing.assert_array_equal(rel[:, 0], mech.release_pool(member[:, None], _gen(5)))
    assert mech.n_records == 1


# ---------------------------------------------------------------- scorers
class _CodedPool:
    """Stub pool mechanism: model i's loss on every record is i, its confidence -i."""

    n_records = 4
    candidates = np.arange(4)

    def losses(self, thetas, idx):
        return np.repeat(np.asarray(thetas)[:, :1], len(idx), axis=1)

    def confidences(self, thetas, idx):
        return -self.losses(thetas, idx)


def test_leave_one_out_scorer_picks_the_models_without_the_record():
    """Reference models of record z: the rows equal to the target's with z left out (D itself
    for a non-member); checked against hand-chosen rows."""
    is_mem = np.array([True, False, True, False])
    rows = [is_mem] * 2                                # models 0, 1: D
    for j in (0, 2):
        r = is_mem.copy()
        r[j] = False
        rows += [r] * 2                                # models 2, 3: D\{z0}; 4, 5: D\{z2}
    models = np.arange(6, dtype=float)[:, None]
    view = PoolView(_CodedPool(), models, np.stack(rows))
    target_losses = np.array([2.5, -0.5, 4.5, 1.5])
    sc = LeaveOneOutScorer(("l-attack", "lira-l"), target_losses, -target_losses)
    out = sc(view, 0, np.arange(4), _gen(0))
    # L-attack: fraction of reference losses above the target's (ties count 1/2)
    np.testing.assert_allclose(out["l-attack"], [0.5, 1.0, 0.5, 0.0])
    assert np.isfinite(out["lira-l"]).all()
    with pytest.raises(ValueError, match="attacks must be drawn from"):
        LeaveOneOutScorer(("iha",), target_losses, target_losses)
    with pytest.raises(ValueError, match="attacks must be drawn from"):
        WhiteBoxScorer(("lira-online",))
    with pytest.raises(ValueError, match="hessian must be"):
        WhiteBoxScorer(("iha",), hessian="lissa")
    with pytest.raises(ValueError, match="damping must be finite"):
        WhiteBoxScorer(("iha",), damping=float("nan"))
    with pytest.raises(ValueError, match="attacks must be drawn from"):
        LiRAScorer(())


def test_scorers_on_play_pool(pool):
    """The white-box and LiRA scorers on play_pool directly (the runner, no experiment code)."""
    res, view = play_pool(pool, 16, 3, target_models=2, records_per_model=12, chunk_size=6,
                          scorers=[WhiteBoxScorer(("iha-exact", "iha-cg", "loss")),
                                   LiRAScorer(("lira-online", "lira-offline-global"))])
    assert res.rounds == 24 and set(res.stats) == {"iha-exact", "iha-cg", "loss",
                                                   "lira-online", "lira-offline-global"}
    np.testing.assert_allclose(res.stats["iha-cg"], res.stats["iha-exact"], rtol=1e-6,
                               atol=1e-8)
    assert [r.size for r in view.records] == [12, 12]
    for t in range(2):
        np.testing.assert_array_equal(res.member[12 * t:12 * (t + 1)],
                                      view.membership[t, view.records[t]])
    assert res.metadata["mechanism"]["mechanism"] == "TrainedModelMechanism"


# ---------------------------------------------------------------- run_attacks on executors
SMALL = AttackConfig(dataset="breast-cancer", model="logreg", n_models=16, n_targets=20,
                     target_models=2, loo_targets=6, loo_models=2,
                     sgd=SGDConfig(batch_size=32, epochs=2))
ATT = ("iha", "loss", "sif", "lira-online", "lira-offline-global", "l-attack", "lira-l")


def _same(a, b):
    np.testing.assert_array_equal(a.member, b.member)
    np.testing.assert_array_equal(a.tau, b.tau)
    assert list(a.stats) == list(b.stats)
    for k in a.stats:
        np.testing.assert_array_equal(a.stats[k], b.stats[k], err_msg=k)


def test_same_seed_identical_in_process_threads_and_dask(dask_client):
    """The reference-model (LiRA) game and the leave-one-out game: the same seed gives
    identical results in-process, on 2 threads and on a 2-worker Dask LocalCluster (5 models
    per training task, so tasks really are spread)."""
    torch.set_num_threads(1)
    a = run_attacks(SMALL, ATT, seed=11, chunk_size=5)
    b = run_attacks(SMALL, ATT, seed=11, chunk_size=5, executor=Executor(threads=2))
    c = run_attacks(SMALL, ATT, seed=11, chunk_size=5, executor=Executor(client=dask_client))
    for other in (b, c):
        _same(a.result, other.result)
        _same(a.loo_result, other.loo_result)
        np.testing.assert_array_equal(a.view.models, other.view.models)
    assert c.result.metadata["executor"] == "dask-client"
    # white-box quantities are recomputed here after a Dask run, identical to the kept ones
    np.testing.assert_array_equal(a.whitebox[1].losses, c.whitebox[1].losses)
    assert a.result.rounds == 40 and a.loo_result.rounds == 6
    d = run_attacks(SMALL, ATT, seed=12, chunk_size=5)
    assert not np.array_equal(a.result.stats["lira-online"], d.result.stats["lira-online"])


@pytest.mark.parametrize("kw, attacks, match", [
    (dict(n_targets=570), ("loss",), r"n_targets must be in 2\.\.569, got 570"),
    (dict(pool_size=600), ("loss",), r"pool_size must be in 4\.\.569, got 600"),
    (dict(loo_targets=21), ("loss", "l-attack"), r"loo_targets must be in 2\.\.20, got 21"),
])
def test_sizes_refused_not_clipped(kw, attacks, match):
    cfg = AttackConfig(**{**SMALL.__dict__, "sgd": SMALL.sgd, **kw})
    with pytest.raises(ValueError, match=match):
        run_attacks(cfg, attacks, seed=0)


def test_pool_size_equal_to_the_pool_and_all_targets():
    cfg = AttackConfig(**{**SMALL.__dict__, "sgd": SMALL.sgd, "pool_size": 569,
                          "n_targets": None, "target_models": 1})
    run = run_attacks(cfg, ("loss",), seed=0)
    assert run.result.rounds == 569 and run.setup["targets_per_model"] == 569
    np.testing.assert_array_equal(run.targets[0], np.arange(569))
