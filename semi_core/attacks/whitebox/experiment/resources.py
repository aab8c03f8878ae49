"""Checks made before any model is trained: the sizes the pool can give and the memory and
time every attack's path needs.
"""

from __future__ import annotations

import math

from semi_core._validation import check_int, check_work
from semi_core.attacks._budget import attack_budget, model_shape
from semi_core.attacks.whitebox.experiment.config import LOO_ATTACKS, AttackConfig


def _big(v) -> float:
    """``float(v)``, or ``inf`` for an integer beyond the float range (an overflowed estimate
    is refused by :func:`~semi_core._validation.check_work`)."""
    try:
        return float(v)
    except OverflowError:
        return math.inf


def _check_resources(cfg: AttackConfig, N: int, fm, attacks, n_features: int,
                     n_classes: int) -> None:
    """Refuse up front (``ResourceLimitError``) what would not fit in memory or time: what
    each of ``attacks`` allocates on its path (:func:`semi_core.attacks._budget.attack_budget`:
    a dense Hessian only for the exact IHA/SIF path, none for CG, LOSS, LiRA or RMIA)."""
    try:
        steps = _big(cfg.sgd.steps(max(cfg.member_prob * N, 1.0)))
    except OverflowError:                # epochs * n overflows
        steps = math.inf
    k = N if cfg.n_targets is None else min(_big(cfg.n_targets), N)
    _, act = model_shape(cfg.model, n_features, n_classes, cfg.hidden)
    nbytes, seconds, _ = attack_budget(
        attacks, hessian=cfg.hessian, n_models=cfg.n_models, n_records=N, n_targets=k,
        d=fm.d, act=act, target_models=cfg.target_models, steps=steps,
        batch_size=cfg.sgd.batch_size, member_prob=cfg.member_prob,
        loo_targets=cfg.loo_targets, loo_models=cfg.loo_models)
    check_work(f"the attack experiment ({cfg.n_models} models x {steps:.0f} steps, d = {fm.d}, "
               f"{k:.0f} targets, attacks {','.join(attacks)}, hessian {cfg.hessian})",
               nbytes=nbytes, seconds=seconds,
               hint="use fewer --models / --targets / --loo-targets / --loo-models / --epochs, "
                    "--pool-size, or --hessian cg (no d x d Hessian)")


def _check_sizes(cfg: AttackConfig, N: int, attacks) -> int:
    """Targets per model ``k`` (refusing, not clipping, what the pool cannot give)."""
    k = N if cfg.n_targets is None else check_int(cfg.n_targets, "n_targets", minimum=2,
                                                  maximum=N)
    if any(a in LOO_ATTACKS for a in attacks):
        check_int(cfg.loo_targets, "loo_targets", minimum=2, maximum=k)
    return k
