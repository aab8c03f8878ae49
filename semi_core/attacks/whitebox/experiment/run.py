"""Running the experiment: the population game and the leave-one-out game on the one runner
(:func:`run_attacks`).
"""

from __future__ import annotations

import time

import numpy as np

from semi_core._rng import as_seed_sequence, child_seed
from semi_core._validation import check_int
from semi_core.attacks.whitebox.experiment.config import (
    LIRA_ATTACKS,
    LOO_ATTACKS,
    RMIA_ATTACKS,
    TRAIN_CHUNK,
    WHITEBOX_ATTACKS,
    AttackConfig,
    parse_attacks,
)
from semi_core.attacks.whitebox.experiment.data import _pool_tensors
from semi_core.attacks.whitebox.experiment.resources import _check_resources, _check_sizes
from semi_core.attacks.whitebox.experiment.result import AttackRun
from semi_core.attacks.whitebox.experiment.scorers import (
    LeaveOneOutScorer,
    LiRAScorer,
    RMIAScorer,
    WhiteBoxScorer,
)
from semi_core.game.backends import Executor
from semi_core.game.play import PoolView, play_pool
from semi_core.game.result import GameResult
from semi_core.sgd.reference_models import build_attack_model

from ..mechanism import TrainedModelMechanism

__all__ = ["run_attacks"]


def _loo_game(view: PoolView, records: np.ndarray, attacks, cfg: AttackConfig, seed, *,
              chunk_size: int, executor) -> tuple[GameResult, int]:
    r"""The leave-one-out population game on ``records`` of target model 0 (module
    docstring): ``loo_models`` models on :math:`D` and on :math:`D\setminus\{z\}` per member
    :math:`z`, scored by :class:`LeaveOneOutScorer`."""
    mech: TrainedModelMechanism = view.mech
    row0 = view.membership[0]
    idx = mech.candidates[records]
    is_mem = row0[records]
    K = cfg.loo_models
    rows = [is_mem] * K                         # D itself: the LOO set of every non-member
    for j in np.flatnonzero(is_mem):
        r = is_mem.copy()
        r[j] = False
        rows.extend([r] * K)
    membership = np.stack(rows)
    loo_mech = TrainedModelMechanism.pool(mech.fm, mech.x, mech.y, mech.cfg,
                                          base=np.setdiff1d(mech.training_set(row0), idx),
                                          candidates=idx, steps=mech.steps)
    theta0 = view.models[:1]
    scorer = LeaveOneOutScorer(tuple(attacks), mech.losses(theta0, idx)[0],
                               mech.confidences(theta0, idx)[0])
    res, _ = play_pool(loo_mech, membership.shape[0], seed, target_models=1,
                       scorers=[scorer], chunk_size=chunk_size, executor=executor,
                       membership=membership)
    return res, int(membership.shape[0])


def run_attacks(cfg: AttackConfig, attacks=("iha", "loss", "sif", "lira-online", "lira-offline"),
                *, seed=0, progress=None, executor=None,
                chunk_size: int = TRAIN_CHUNK) -> AttackRun:
    """Play the population game of the seed's §4 and score every target with every attack.

    Parameters
    ----------
    cfg : AttackConfig
    attacks : str or sequence of str
        Names from :data:`ATTACKS`.
    seed : int or SeedSequence
    progress : callable, optional
        ``progress(message)`` before each stage.
    executor : Executor, int or None
        Where the runner's tasks run (training chunks, target models); the result does not
        depend on it (:class:`~semi_core.game.backends.Executor`).
    chunk_size : int
        Models trained per task (part of the seeding).

    Returns
    -------
    AttackRun
        ``result`` pools the targets of the first ``cfg.target_models`` models (tau = 1: a
        one-shot release); ``loo_result`` the leave-one-out subset when an attack needs it.
    """
    attacks = parse_attacks(attacks)
    say = progress or (lambda msg: None)
    ex = Executor.coerce(executor)
    chunk_size = check_int(chunk_size, "chunk_size", minimum=1)
    root = as_seed_sequence(seed)
    X, Y, K = _pool_tensors(cfg, child_seed(root, 0))
    N = int(X.shape[0])
    k = _check_sizes(cfg, N, attacks)
    fm = build_attack_model(cfg.model, X.shape[1], K, hidden=cfg.hidden)
    _check_resources(cfg, N, fm, attacks, int(X.shape[1]), K)
    mech = TrainedModelMechanism.pool(fm, X, Y, cfg.train_sgd(),
                                      steps=cfg.sgd.steps(max(cfg.member_prob * N, 1.0)))
    wb_attacks = tuple(a for a in attacks if a in WHITEBOX_ATTACKS)
    lira = tuple(a for a in attacks if a in LIRA_ATTACKS)
    rm = tuple(a for a in attacks if a in RMIA_ATTACKS)
    loo = tuple(a for a in attacks if a in LOO_ATTACKS)
    wbs = WhiteBoxScorer(wb_attacks or ("loss",), hessian=cfg.hessian, damping=cfg.damping,
                         cg_tol=cfg.cg_tol, loss_scale=cfg.loss_scale, sgd=cfg.sgd)
    scorers = [wbs] + ([LiRAScorer(lira)] if lira else []) + \
        ([RMIAScorer(rm, gamma=cfg.rmia_gamma, offline_a=cfg.rmia_a)] if rm else [])
    say("training models and scoring the target models")
    res, view = play_pool(mech, cfg.n_models, child_seed(root, 1), p_member=cfg.member_prob,
                          target_models=cfg.target_models,
                          records_per_model=None if k == N else k, scorers=scorers,
                          chunk_size=chunk_size, executor=ex)
    res.stats = {a: res.stats[a] for a in attacks if a in res.stats}   # caller's order, no
    # "loss" when only leave-one-out attacks were asked for (model 0 is still a target)
    res.seed = int(root.entropy) if isinstance(root.entropy, int) else None
    res.metadata.update({"config": cfg.to_dict(), "attacks": list(attacks),
                         "membership_game": "one-shot membership game (T = 1)"})
    targets = list(view.records)             # records of each target model, in round order
    seconds: dict[str, float] = {"train_models": res.metadata["seconds_train"],
                                 "score": res.metadata["seconds_score"]}
    for t in range(cfg.target_models):
        parts = [wbs.kept.get(t, (None, {}))[1]] + [s.kept.get(t, {}) for s in scorers[1:]]
        for part in parts:
            for key, v in part.items():
                if key in wb_attacks or key in lira or key in rm or \
                        key in ("gradients", "confidences") or key.startswith("hessian@"):
                    seconds[key] = seconds.get(key, 0.0) + v
    run = AttackRun(config=cfg, result=res, loo_result=None, seconds=seconds,
                    setup={"n_pool": N, "d": int(fm.d),
                           "n_train_target": int(mech.training_set(view.membership[0]).size),
                           "targets_per_model": int(k)},
                    view=view, targets=targets,
                    _whitebox={t: wb for t, (wb, _) in wbs.kept.items()})
    if loo:
        sub = np.arange(cfg.loo_targets)
        n_in = int(res.member[sub].sum())
        if n_in in (0, sub.size):   # known before training: refuse instead of failing later
            raise ValueError(f"loo_targets: the {sub.size} leave-one-out records of target "
                             f"model 0 are all {'members' if n_in else 'non-members'}; the "
                             f"attacks need both (use more, up to {k})")
        say("leave-one-out reference models")
        t0 = time.perf_counter()
        loo_res, n_loo = _loo_game(view, targets[0][sub], loo, cfg, child_seed(root, 2),
                                   chunk_size=chunk_size, executor=ex)
        seconds["train_loo_models"] = time.perf_counter() - t0
        loo_stats = {a: res.stats[a][sub] for a in res.stats}
        loo_stats.update({a: loo_res.stats[a] for a in loo})
        run.loo_result = GameResult(member=res.member[sub], tau=np.ones(sub.size, dtype=np.int64),
                                    stats=loo_stats, seed=res.seed,
                                    metadata={**res.metadata, "subset": "leave-one-out targets",
                                              "loo_models_trained": n_loo,
                                              "loo_game": loo_res.metadata})
        if not np.array_equal(loo_res.member, run.loo_result.member):
            raise AssertionError("leave-one-out game out of step with target model 0")
        run.setup["loo_models_trained"] = n_loo
    return run
