"""Running the experiment: the trials, shadow and reference runs as population games on the
one runner, and the attacker's scoring (:func:`run_experiment`).
"""

from __future__ import annotations

import time
from functools import partial

import numpy as np
import torch

from semi_core._rng import as_seed_sequence, child_seed
from semi_core.attacks.updates.experiment.config import SCORES, UpdateConfig
from semi_core.attacks.updates.experiment.data import _pools
from semi_core.attacks.updates.experiment.pool import CandidateLossScorer, UpdateRunPool
from semi_core.attacks.updates.experiment.resources import check_training_work
from semi_core.attacks.updates.experiment.result import UpdateRun
from semi_core.attacks.updates.experiment.scores import _ce_losses, _phi, lira_offline_loss
from semi_core.game.backends import shared
from semi_core.game.play import play_pool
from semi_core.game.result import GameResult
from semi_core.sgd.models import build_model

from ..training import update_mu

__all__ = ["run_experiment", "shared_executor"]


#: One home for a cluster shared by several games: :func:`semi_core.game.backends.shared`.
shared_executor = shared


def _losses_by_snapshot(res: GameResult, T: int, runs: int) -> np.ndarray:
    """``loss@i`` of a pool game whose rounds are every slot of each run: ``(runs, T, N)``."""
    return np.stack([res.stats[f"loss@{i}"].reshape(runs, -1) for i in range(T)], axis=1)


def run_experiment(cfg: UpdateConfig, *, scores=("loss",), progress=None, chunk_size: int = 64,
                   executor=None) -> UpdateRun:
    """Train all trials, shadow runs (and LiRA reference runs) and score every candidate.

    Three population games on the one runner (:func:`semi_core.game.play.play_pool`, pool
    mechanism :class:`UpdateRunPool`, scorer :class:`CandidateLossScorer`): the trials on the
    learner's pool, the shadow runs on the attacker's shadow pool (Transfer threshold, and their
    OUT candidates are the Rank threshold's known-OUT points) and, for ``lira``, the reference
    runs on the reference pool. Every run has the Fig. 2 layout: ``k n_up`` IN candidates
    (update ``i`` holds IN slots ``(i-1) n_up .. i n_up - 1``) and ``k n_up`` OUT.

    Parameters
    ----------
    cfg : UpdateConfig
    scores : sequence of {"loss", "lira"}
    progress : callable, optional
        Called with short status strings.
    chunk_size : int
        Runs trained together per chunk (the unit of work and seeding).
    executor : Executor, int or None
        Where the chunks run (:class:`~semi_core.game.backends.Executor`); the result does
        not depend on it.

    Returns
    -------
    UpdateRun
        Scores of every candidate, membership and the run's metadata.
    """
    scores = tuple(scores)
    for s in scores:
        if s not in SCORES:
            raise ValueError(f"score must be one of {SCORES}, got {s!r}")
    want_lira = "lira" in scores
    check_training_work(cfg, 2 * cfg.trials + (cfg.n_ref if want_lira else 0),
                        "updates: training the trials, shadow" +
                        (" and reference runs" if want_lira else " runs"))
    t0 = time.perf_counter()
    root = as_seed_sequence(cfg.seed)
    x_all, y_all, src, pools = _pools(cfg, np.random.default_rng(child_seed(root, 0)))
    R, k, n_up = cfg.trials, cfg.k, cfg.n_up
    M = cfg.n_ref if want_lira else 0
    n_classes = int(y_all.max()) + 1
    if cfg.data is not None:  # the user's dimensions, now known
        check_training_work(cfg, 2 * R + M, "updates: training the runs on the data",
                            features=x_all.shape[1], classes=n_classes)
    fm, theta_init, _ = build_model(cfg.model, x_all[:32], y_all[:32], n_classes,
                                    seed_seq=child_seed(root, 3), epochs=0, hidden=cfg.hidden)

    def mech(pool, replace_ok=False):
        return UpdateRunPool(cfg, fm, theta_init, x_all, y_all, src, pools[pool],
                             replace_ok=replace_ok)

    member = np.r_[np.ones(k * n_up, bool), np.zeros(k * n_up, bool)]
    if progress:
        progress(f"training {2 * R + M} runs ({cfg.update}, k={k}, n_up={n_up})")
    with shared_executor(executor) as ex:
        return _attack_runs(cfg, scores, mech, partial(
            _pool_game, root=root, member=member, chunk_size=chunk_size, executor=ex),
            t0, progress)


def _pool_game(m, runs, key, targets, *, root, member, chunk_size, executor):
    return play_pool(m, runs, child_seed(root, key), membership=np.tile(member, (runs, 1)),
                     target_models=targets, scorers=(CandidateLossScorer(m),),
                     chunk_size=chunk_size, executor=executor)


def _attack_runs(cfg, scores, mech, game, t0, progress):
    """The pool games of :func:`run_experiment` (``game``) and the attacker's scoring."""
    R, k, n_up = cfg.trials, cfg.k, cfg.n_up
    want_lira = "lira" in scores
    M = cfg.n_ref if want_lira else 0
    member = np.r_[np.ones(k * n_up, bool), np.zeros(k * n_up, bool)]
    entry = np.r_[np.repeat(np.arange(1, k + 1), n_up), np.zeros(k * n_up, np.int64)]
    m_t, m_s = mech("learner"), mech("shadow")
    fm, x_all, y_all = m_t.fm, m_t.x, m_t.y
    res_t, view_t = game(m_t, R, 1, R)
    res_s, view_s = game(m_s, R, 2, R)
    own = np.concatenate([_losses_by_snapshot(res_t, k + 1, R),
                          _losses_by_snapshot(res_s, k + 1, R)])          # (2R, k+1, N)
    # Rank: the attacker's known-OUT points (shadow OUT candidates) on the target snapshots
    snaps_t = m_t.snapshots(view_t.models)                                # (R, k+1, d)
    rank_idx = m_s.candidates(view_s.models)[:, ~member]                  # (R, k n_up)
    rx = torch.as_tensor(x_all[rank_idx], dtype=torch.float64)
    ry = torch.as_tensor(y_all[rank_idx], dtype=torch.long)
    rank_l = np.stack([_ce_losses(fm, snaps_t[:, i], rx, ry).numpy() for i in range(k + 1)],
                      axis=1)
    out_scores = {"loss": own}
    out_rank = {"loss": rank_l}
    if want_lira:
        if progress:
            progress("offline LiRA: reference confidences")
        m_r = mech("ref", replace_ok=True)
        _, view_r = game(m_r, M, 5, 1)
        snaps_r = m_r.snapshots(view_r.models)                            # (M, k+1, d)
        cand = np.concatenate([m_t.candidates(view_t.models), m_s.candidates(view_s.models)])
        flat_idx = np.concatenate([cand.ravel(), rank_idx.ravel()])
        flat_x = torch.as_tensor(x_all[flat_idx], dtype=torch.float64)
        flat_y = torch.as_tensor(y_all[flat_idx], dtype=torch.long)
        with torch.no_grad():
            ref_l = np.stack([fm.losses_batched(snaps_r[:, i], flat_x, flat_y).numpy()
                              for i in range(k + 1)], axis=1)             # (M, k+1, P)
        n_c = cand.size
        lira_own = np.empty_like(own)
        lira_rank = np.empty_like(rank_l)
        for i in range(k + 1):
            ref_phi = _phi(ref_l[:, i])
            lira_own[:, i] = lira_offline_loss(_phi(own[:, i]).reshape(1, -1),
                                               ref_phi[:, :n_c]).reshape(own[:, i].shape)
            lira_rank[:, i] = lira_offline_loss(_phi(rank_l[:, i]).reshape(1, -1),
                                                ref_phi[:, n_c:]).reshape(rank_l[:, i].shape)
        out_scores["lira"] = lira_own
        out_rank["lira"] = lira_rank

    cand_t = m_t.candidates(view_t.models)                                # (R, N)
    correct = res_t.stats["gap"].reshape(R, -1) > 0.5
    # accuracy of the final target models on their OUT candidates (utility, for the record)
    test_acc = {"final_model_accuracy_on_test_points": float(correct[:, ~member].mean())}
    return UpdateRun(cfg=cfg, scores={s: out_scores[s][:R] for s in scores},
                     shadow={s: out_scores[s][R:] for s in scores},
                     rank_out={s: out_rank[s] for s in scores}, member=member, entry=entry,
                     correct_final=correct, test_accuracy=test_acc,
                     seconds=time.perf_counter() - t0,
                     extra={"replicas": 2 * R + M, "d": fm.d,
                            "update_mu": update_mu(cfg.update_cfg),
                            "executor": res_t.metadata["executor"],
                            # per trial and candidate: its label and whether it comes from
                            # the source distribution (False: a shifted / target record)
                            "candidate_label": m_t.y[cand_t],
                            "candidate_source": m_t.src[cand_t]})
