"""The DP-SGD fine-tuning audit (seed §5.2, Fig. 3, App. H.4-H.5) with batched replicas.

Protocol. Pretrain on the public split with SGD (:func:`semi_core.sgd.models.build_model`),
select the canary from a candidate pool by the largest clipped-gradient Mahalanobis distance at
:math:`\\theta_0` (held-out reference set), then play ``rounds`` SeMI games per insertion time
:math:`\\tau`: each game draws :math:`B\\sim\\mathrm{Bernoulli}(1/2)`, runs ``T`` DP-SGD steps on
fresh batches of the private pool (the canary replacing a uniform element of batch
:math:`\\tau` when :math:`B=1`), and records :math:`\\theta_0..\\theta_T`.

Every run is simulated in full (all ``T`` steps, all checkpoints), whatever a statistic needs:

- **SeMI-SGD** (known :math:`\\tau`): the DP-SGD log-LR at step :math:`\\tau` with
  :math:`\\hat\\mu_g,\\hat\\Sigma_g` from clipped reference gradients at that run's own
  :math:`\\theta_{\\tau-1}` (:func:`semi_core.sgd.batched.batched_dpsgd_log_lr`);
- **SeMI-max**: :math:`\\max_t \\log\\mathrm{LR}_t` over all ``T`` steps (each at its own
  :math:`\\theta_{t-1}`);
- the four loss-based baselines of :mod:`semi_core.stats.update_combination`.

H0 runs do not depend on :math:`\\tau`, so one stream of H0 runs serves every :math:`\\tau`: game
``r`` of insertion time :math:`\\tau` with :math:`B=0` uses H0 run number
:math:`\\#\\{r' < r: B_{r'} = 0\\}`. For each :math:`\\tau` the non-member runs are therefore i.i.d.
H0 runs, as the game requires; bounds for different :math:`\\tau` are dependent, which only
matters for the (reported, flagged) best-:math:`\\tau` maximum.

Bounds: :func:`semi_core.audit.epsilon_lower_bound` (``dkw`` and ``cp``) per :math:`\\tau` and
method; averaged over :math:`\\tau` (seed Fig. 3) and the best :math:`\\tau` (seed H.5). The
best-:math:`\\tau` value is chosen post hoc among ``T`` bounds, each valid with probability
``1 - failure_prob``; it is only a valid bound at level ``1 - T * failure_prob`` (the seed's
H.5 does not correct for this), so a Bonferroni version (each bound at ``failure_prob / T``) is
reported as well.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import torch

from semi_core._rng import as_seed_sequence
from semi_core._validation import check_int, check_probability, check_tau
from semi_core.game.result import GameResult
from semi_core.stats.statistics import semi_max
from semi_core.stats.update_combination import BASELINES

from .batched import batched_dpsgd_log_lr, batched_mahalanobis, ghost_log_lr
from .dpsgd import DPSGDConfig, GameDraw, draw_game, train_dpsgd, train_dpsgd_batched
from .grads import FunctionalModel, clip_rows

__all__ = ["AuditSetup", "GameRecords", "select_canary", "run_games", "score_games",
           "audit_bounds", "ATTACKS", "prepare_audit"]

ATTACKS = ("semi_sgd", "semi_max", *BASELINES)


@dataclass
class AuditSetup:
    """Everything the games need: model, :math:`\\theta_0`, data tensors, canary, config."""

    fm: FunctionalModel
    theta0: torch.Tensor
    pool_x: torch.Tensor
    pool_y: torch.Tensor
    ref_x: torch.Tensor
    ref_y: torch.Tensor
    canary_x: torch.Tensor
    canary_y: torch.Tensor
    cfg: DPSGDConfig
    shrinkage: float = 0.1
    ridge: float = 1e-4
    info: dict = field(default_factory=dict)


def select_canary(fm: FunctionalModel, theta: torch.Tensor, cand_x, cand_y, ref_x, ref_y, *,
                  clip: float, shrinkage: float = 0.1, ridge: float = 1e-4):
    """Canary = candidate with the largest clipped-gradient Mahalanobis distance (seed §5.2).

    .. math::

       m^*(z) = (\\bar g_z - \\hat\\mu_g)^\\top \\hat\\Sigma_g^{-1}(\\bar g_z - \\hat\\mu_g),\\quad
       \\bar g_z = \\mathrm{clip}_C\\nabla_\\theta\\ell(\\theta; z)

    with :math:`\\hat\\mu_g,\\hat\\Sigma_g` from the held-out reference set. Returns
    ``(index, distances)``.
    """
    ref = clip_rows(fm.per_sample_grads(theta, ref_x, ref_y), clip)
    cand = clip_rows(fm.per_sample_grads(theta, cand_x, cand_y), clip)
    dist = batched_mahalanobis(ref, cand, shrinkage=shrinkage, ridge=ridge)
    return int(torch.argmax(dist)), dist.detach().cpu().numpy()


@dataclass
class GameRecords:
    """Per-run records: canary losses ``(runs, T+1)`` and per-step log-LRs ``(runs, T)``."""

    losses: np.ndarray
    log_lrs: np.ndarray
    b: dict[int, np.ndarray]          # tau -> B_r for r = 1..R
    run_index: dict[int, np.ndarray]  # tau -> index into the run arrays for each game
    seconds: float = 0.0


def _run_chunk(setup: AuditSetup, draws: list[GameDraw], *, batched: bool,
               fast_stats: bool = True):
    """Train the runs of one chunk and compute canary losses and per-step log-LRs.

    ``batched=False`` is the per-run reference: each run trained on its own with the generic
    per-sample-gradient trainer, then its statistics computed on its own.
    """
    cfg, fm = setup.cfg, setup.fm
    canary = (setup.canary_x, setup.canary_y)
    if batched:
        traj = train_dpsgd_batched(fm, setup.theta0, draws, setup.pool_x, setup.pool_y, canary,
                                   cfg, fast=fast_stats)
    else:
        traj = torch.stack([train_dpsgd(fm, setup.theta0, dr, setup.pool_x, setup.pool_y, canary,
                                        cfg) for dr in draws])
    return trajectory_scores(setup, traj, fast_stats=fast_stats)


def trajectory_scores(setup: AuditSetup, traj: torch.Tensor, *, fast_stats: bool = True):
    r"""The auditor's side for recorded trajectories :math:`\theta_0..\theta_T` (``(R, T+1, d)``):
    the canary's losses ``(R, T+1)`` and the per-step DP-SGD log-LRs ``(R, T)`` (NumPy arrays).
    """
    cfg, fm = setup.cfg, setup.fm
    stack = fm.linear_stack() if fast_stats else None
    B, T1, d = traj.shape
    cx, cy = setup.canary_x.unsqueeze(0), setup.canary_y.reshape(1)
    losses = fm.losses_batched(traj.reshape(B * T1, d), cx, cy).reshape(B, T1)
    lrs = torch.empty(B, T1 - 1, dtype=traj.dtype)
    for t in range(1, T1):
        prev = traj[:, t - 1]
        tgt = clip_rows(fm.per_sample_grads_batched(prev, cx, cy, shared=True)[:, 0], cfg.clip)
        common = dict(eta=cfg.lr, n=cfg.batch_size, sigma_dp=cfg.sigma_dp, clip=cfg.clip,
                      shrinkage=setup.shrinkage, ridge=setup.ridge)
        if stack is not None:
            lrs[:, t - 1] = ghost_log_lr(traj[:, t] - prev, prev, stack, setup.ref_x,
                                         setup.ref_y, tgt, **common)
        else:
            ref = clip_rows(fm.per_sample_grads_batched(prev, setup.ref_x, setup.ref_y,
                                                        shared=True), cfg.clip)
            lrs[:, t - 1] = batched_dpsgd_log_lr(traj[:, t] - prev, ref, tgt, **common)
    return losses.detach().numpy(), lrs.detach().numpy()


def run_games(setup: AuditSetup, *, rounds: int, taus, seed, chunk_size: int = 64,
              batched: bool = True, fast_stats: bool = True, progress=None) -> GameRecords:
    """Play ``rounds`` games for each insertion time in ``taus`` (see the module docstring).

    Parameters
    ----------
    setup : AuditSetup
    rounds : int >= 2
        Games per :math:`\\tau` (``R``).
    taus : iterable of int
        Insertion times in ``1..T``.
    seed : int or SeedSequence
        Root seed: game ``B`` draws, H0 runs and H1 runs each get their own child sequences.
    chunk_size : int
        Runs trained together as replicas (``batched=True``); the per-run loop trains one at
        a time with identical randomness (benchmark reference).
    fast_stats : bool
        For stacks of linear layers use the outer-product structure of the per-sample
        gradients (:func:`~semi_core.sgd.ghost.ghost_clipped_mean`,
        :func:`~semi_core.sgd.batched.ghost_log_lr`: same numbers, no per-sample gradient
        tensors); ``False`` forces the generic ``torch.func`` path.
    """
    rounds = check_int(rounds, "rounds", minimum=2)
    chunk_size = check_int(chunk_size, "chunk_size", minimum=1)
    T = setup.cfg.steps
    taus = sorted({check_tau(t, T) for t in taus})
    if not taus:
        raise ValueError("taus must contain at least one insertion time in 1..T")
    root = as_seed_sequence(seed)
    d = setup.fm.d
    pool = setup.pool_x.shape[0]

    def child(*key):
        return np.random.SeedSequence(root.entropy, spawn_key=tuple(root.spawn_key) + key)

    b = {tau: np.random.Generator(np.random.PCG64(child(0, tau))).integers(0, 2, rounds)
         for tau in taus}
    n_h0 = max(int((bb == 0).sum()) for bb in b.values())
    specs: list[tuple[int | None, np.random.SeedSequence]] = [(None, child(1, k))
                                                               for k in range(n_h0)]
    run_index = {}
    for tau in taus:
        idx = np.empty(rounds, dtype=np.int64)
        h0 = np.cumsum(b[tau] == 0) - 1
        for r in range(rounds):
            if b[tau][r] == 0:
                idx[r] = h0[r]
            else:
                idx[r] = len(specs)
                specs.append((tau, child(2, tau, r)))
        run_index[tau] = idx
    losses = np.empty((len(specs), T + 1))
    log_lrs = np.empty((len(specs), T))
    t0 = time.perf_counter()
    step = chunk_size if batched else 1
    for s in range(0, len(specs), step):
        part = specs[s:s + step]
        draws = [draw_game(ss, pool_size=pool, cfg=setup.cfg, d=d, tau=tau) for tau, ss in part]
        with torch.no_grad():
            losses[s:s + len(part)], log_lrs[s:s + len(part)] = _run_chunk(
                setup, draws, batched=batched, fast_stats=fast_stats)
        if progress is not None:
            progress(f"runs {s + len(part)}/{len(specs)}")
    return GameRecords(losses=losses, log_lrs=log_lrs, b=b, run_index=run_index,
                       seconds=time.perf_counter() - t0)


def score_games(rec: GameRecords, tau: int) -> GameResult:
    """The ``R`` games of insertion time ``tau`` as a :class:`~semi_core.game.result.GameResult`
    (``stats``: one score array per attack of :data:`ATTACKS`)."""
    idx = rec.run_index[tau]
    losses, lrs = rec.losses[idx], rec.log_lrs[idx]
    scores = {"semi_sgd": lrs[:, tau - 1], "semi_max": semi_max(lrs)}
    for name, fn in BASELINES.items():
        scores[name] = fn(losses)
    return GameResult(member=rec.b[tau].astype(bool), tau=tau, stats=scores,
                      metadata={"game": "dp-sgd", "seconds": rec.seconds})


def audit_bounds(rec: GameRecords, *, delta: float, failure_prob: float = 0.05,
                 methods=("dkw", "cp"), fpr_levels=(0.01, 0.1), seed=0) -> dict:
    """eps lower bounds, AUC and TPR at FPR per attack: per tau, averaged, best tau.

    Returns ``{"per_tau": {tau: {attack: {...}}}, "summary": {attack: {...}}}`` where the
    summary holds, per bound method, ``mean`` over tau, ``best`` (post hoc max) and
    ``best_bonferroni`` (each tau's bound at ``failure_prob / len(taus)``).
    """
    from semi_core.audit import auc, epsilon_lower_bound, tpr_at_fpr
    from semi_core.audit.selection import certifiable_epsilon_max

    delta = check_probability(delta, "delta", low_open=False)
    taus = sorted(rec.b)
    per_tau: dict = {}
    for tau in taus:
        game = score_games(rec, tau)
        per_tau[tau] = {}
        for name in game.stats:
            mem, non = game.scores(name)
            entry = {"auc": float(auc(mem, non)),
                     "tpr_at_fpr": {str(f): float(tpr_at_fpr(mem, non, f)) for f in fpr_levels},
                     "n_member": int(mem.size), "n_nonmember": int(non.size)}
            for meth in methods:
                res = epsilon_lower_bound(mem, non, delta=delta, failure_prob=failure_prob,
                                          method=meth, seed=seed)
                entry[f"eps_lb_{meth}"] = float(res.epsilon_lower_bound)
                entry[f"eps_max_{meth}"] = certifiable_epsilon_max(
                    mem.size, non.size, delta=delta, failure_prob=failure_prob, method=meth)
                if len(taus) > 1:
                    bon = epsilon_lower_bound(mem, non, delta=delta, method=meth, seed=seed,
                                              failure_prob=failure_prob / len(taus))
                    entry[f"eps_lb_{meth}_bonferroni"] = float(bon.epsilon_lower_bound)
            per_tau[tau][name] = entry
    summary = {}
    for name in ATTACKS:
        s = {"auc_mean": float(np.mean([per_tau[t][name]["auc"] for t in taus]))}
        for meth in methods:
            vals = np.array([per_tau[t][name][f"eps_lb_{meth}"] for t in taus])
            s[f"eps_lb_{meth}_mean"] = float(vals.mean())
            s[f"eps_max_{meth}"] = float(min(per_tau[t][name][f"eps_max_{meth}"] for t in taus))
            s[f"eps_lb_{meth}_best"] = float(vals.max())
            s[f"eps_lb_{meth}_best_tau"] = int(taus[int(vals.argmax())])
            if len(taus) > 1:
                bon = [per_tau[t][name][f"eps_lb_{meth}_bonferroni"] for t in taus]
                s[f"eps_lb_{meth}_best_bonferroni"] = float(np.max(bon))
        summary[name] = s
    return {"per_tau": per_tau, "summary": summary}


def prepare_audit(*, dataset: str = "digits", model: str = "logreg", cfg: DPSGDConfig,
                  seed=0, data_dir=None, pretrain_epochs: int = 60, pretrain_lr: float = 0.1,
                  shrinkage: float = 0.1, ridge: float = 1e-4, sizes=None,
                  n_reference: int | None = None) -> AuditSetup:
    """Load data, pretrain on the public split, select the canary, return an :class:`AuditSetup`.

    ``n_reference`` caps the reference gradients used per statistic (default: all of the
    held-out reference split).
    """
    from .data import load_dataset
    from .models import build_model

    root = as_seed_sequence(seed)
    ss_split, ss_model = np.random.SeedSequence(root.entropy, spawn_key=(*root.spawn_key, 7, 0)), \
        np.random.SeedSequence(root.entropy, spawn_key=(*root.spawn_key, 7, 1))
    splits = load_dataset(dataset, data_dir=data_dir, sizes=sizes,
                          rng=np.random.Generator(np.random.PCG64(ss_split)))
    fm, theta0, acc = build_model(model, *splits.public, splits.n_classes, seed_seq=ss_model,
                                  epochs=pretrain_epochs, lr=pretrain_lr)

    def tx(a):
        return torch.as_tensor(a, dtype=torch.float64)

    def ty(a):
        return torch.as_tensor(a, dtype=torch.long)

    ref_x, ref_y = tx(splits.reference[0]), ty(splits.reference[1])
    if n_reference is not None:
        n_reference = check_int(n_reference, "n_reference", minimum=2)
        ref_x, ref_y = ref_x[:n_reference], ref_y[:n_reference]
    cand_x, cand_y = tx(splits.candidates[0]), ty(splits.candidates[1])
    k, dist = select_canary(fm, theta0, cand_x, cand_y, ref_x, ref_y, clip=cfg.clip,
                            shrinkage=shrinkage, ridge=ridge)
    return AuditSetup(fm=fm, theta0=theta0, pool_x=tx(splits.private[0]),
                      pool_y=ty(splits.private[1]), ref_x=ref_x, ref_y=ref_y,
                      canary_x=cand_x[k], canary_y=cand_y[k], cfg=cfg, shrinkage=shrinkage,
                      ridge=ridge,
                      info={"dataset": dataset, "model": model, "d": fm.d,
                            "public_accuracy": acc, "canary_mahalanobis": float(dist[k]),
                            "candidate_mahalanobis_median": float(np.median(dist)),
                            "n_reference": int(ref_x.shape[0]),
                            "pool_size": int(len(splits.private[0]))})


def run_audit(*, dataset: str = "digits", model: str = "logreg", epsilon: float | None = 1.0,
              rounds: int = 1000, taus=None, delta: float = 1e-4, seed=0,
              batch_size: int = 64, steps: int = 10, lr: float = 0.5, clip: float = 1.0,
              failure_prob: float = 0.05, n_reference: int | None = 128, data_dir=None,
              chunk_size: int = 64, setup: AuditSetup | None = None, progress=None) -> dict:
    """One Fig. 3 point: calibrate :math:`\\sigma_{DP}` to ``epsilon``, play, bound, compare.

    ``epsilon=None`` (or ``inf``) audits clipped SGD without noise (ground truth ``inf``).
    ``taus=None`` means all of ``1..T``. The ground truth is exact for the game's neighbouring
    relation (one record replaced, each record used once: :math:`\\mu = 2/\\sigma_{DP}`-GDP,
    :mod:`semi_core.sgd.accounting`). Returns a JSON-ready ``dict``.
    """
    from .accounting import calibrate_sigma, dp_accounting_epsilon, dpsgd_epsilon

    delta = check_probability(delta, "delta")
    if epsilon is None or np.isinf(epsilon):
        sigma_dp, eps_true, eps_check = 0.0, float("inf"), float("inf")
    else:
        sigma_dp = calibrate_sigma(epsilon, delta)
        eps_true = dpsgd_epsilon(sigma_dp, delta)
        eps_check = dp_accounting_epsilon(sigma_dp, delta)
    cfg = DPSGDConfig(batch_size=batch_size, steps=steps, lr=lr, clip=clip, sigma_dp=sigma_dp)
    taus = list(range(1, cfg.steps + 1)) if taus is None else list(taus)
    root = as_seed_sequence(seed)
    ss_setup, ss_games = root.spawn(2)
    if setup is None:
        setup = prepare_audit(dataset=dataset, model=model, cfg=cfg, seed=ss_setup,
                              data_dir=data_dir, n_reference=n_reference)
    else:
        setup = AuditSetup(**{**setup.__dict__, "cfg": cfg})
    rec = run_games(setup, rounds=rounds, taus=taus, seed=ss_games, chunk_size=chunk_size,
                    progress=progress)
    bounds = audit_bounds(rec, delta=delta, failure_prob=failure_prob)
    attacks = {}
    for name in ATTACKS:
        s = bounds["summary"][name]
        per = [bounds["per_tau"][t][name] for t in taus]
        attacks[name] = {
            "epsilon_lower_bound": {m: s[f"eps_lb_{m}_mean"] for m in ("dkw", "cp")},
            "epsilon_lower_bound_best_tau": {m: s[f"eps_lb_{m}_best"] for m in ("dkw", "cp")},
            "auc": s["auc_mean"],
            "tpr_at_fpr": {f: float(np.mean([p["tpr_at_fpr"][f] for p in per]))
                           for f in per[0]["tpr_at_fpr"]},
        }
        if len(taus) > 1:
            attacks[name]["epsilon_lower_bound_best_tau_bonferroni"] = {
                m: s[f"eps_lb_{m}_best_bonferroni"] for m in ("dkw", "cp")}
    return {
        "dataset": setup.info.get("dataset", dataset), "model": setup.info.get("model", model),
        "epsilon_target": None if epsilon is None or np.isinf(epsilon) else float(epsilon),
        "epsilon_true": eps_true, "epsilon_dp_accounting": eps_check, "sigma_dp": sigma_dp,
        "delta": delta, "failure_prob": failure_prob, "rounds_per_tau": rounds, "taus": taus,
        "config": {"batch_size": batch_size, "steps": steps, "lr": lr, "clip": clip,
                   "shrinkage": setup.shrinkage, "ridge": setup.ridge},
        "neighbouring_relation": "one record replaced; each record used in exactly one step",
        "setup": setup.info, "runs_trained": int(rec.losses.shape[0]),
        "seconds_games": rec.seconds, "attacks": attacks, "per_tau": bounds["per_tau"],
    }
