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

The games are played by the one runner: the run is a
:class:`~semi_core.sgd.mechanism.DPSGDMechanism` (each chunk of runs trained together as
batched replicas), the loss baselines a :class:`~semi_core.sgd.scorers.LossBaselines` scorer,
and :func:`semi_core.game.play.play_sweep` plays them on any executor (in-process, threads,
Dask; same seed, same result). H0 runs do not depend on :math:`\\tau`, so one stream of H0 runs
serves every :math:`\\tau`: game ``r`` of insertion time :math:`\\tau` with :math:`B=0` uses H0
run number :math:`\\#\\{r' < r: B_{r'} = 0\\}`. For each :math:`\\tau` the non-member runs are
therefore i.i.d. H0 runs, as the game requires; bounds for different :math:`\\tau` are dependent,
which only matters for the (reported, flagged) best-:math:`\\tau` maximum.

Bounds: :func:`semi_core.audit.epsilon_lower_bound` (``dkw`` and ``cp``) per :math:`\\tau` and
method; averaged over :math:`\\tau` (seed Fig. 3) and the best :math:`\\tau` (seed H.5). The
best-:math:`\\tau` value is chosen post hoc among ``T`` bounds, each valid with probability
``1 - failure_prob``; it is only a valid bound at level ``1 - T * failure_prob`` (the seed's
H.5 does not correct for this), so a Bonferroni version (each bound at ``failure_prob / T``) is
reported as well.
"""

from __future__ import annotations

import numpy as np
import torch

from semi_core._rng import as_seed_sequence
from semi_core._validation import check_int, check_probability
from semi_core.audit import auc, epsilon_lower_bound, tpr_at_fpr
from semi_core.audit.report import AuditReport, refutation_bounds
from semi_core.audit.roc import fpr_resolution, resolvable
from semi_core.audit.selection import certifiable_epsilon_max
from semi_core.game.play import play_sweep
from semi_core.game.result import GameResult

from .accounting import calibrate_sigma, dp_accounting_epsilon, dpsgd_epsilon
from .batched import batched_mahalanobis
from .data import load_dataset
from .dpsgd import DPSGDConfig
from .grads import FunctionalModel, clip_rows
from .mechanism import AuditSetup, DPSGDMechanism
from .models import build_model
from .scorers import ATTACK_TESTS, ATTACKS, LossBaselines, attack_names

__all__ = ["AuditSetup", "select_canary", "audit_games", "audit_bounds", "ATTACKS",
           "DPSGDAuditReport",
           "prepare_audit", "run_audit"]


def select_canary(fm: FunctionalModel, theta: torch.Tensor, cand_x, cand_y, ref_x, ref_y, *,
                  clip: float, shrinkage: float = 0.1, ridge: float = 1e-4):
    """Canary = candidate with the largest clipped-gradient Mahalanobis distance (seed §5.2).

    .. math::

       m^*(z) = (\\bar g_z - \\hat\\mu_g)^\\top \\hat\\Sigma_g^{-1}(\\bar g_z - \\hat\\mu_g),\\quad
       \\bar g_z = \\mathrm{clip}_C\\nabla_\\theta\\ell(\\theta; z)

    with :math:`\\hat\\mu_g,\\hat\\Sigma_g` from the held-out reference set. Returns
    ``(index, distances)``.

    Parameters
    ----------
    fm : FunctionalModel
        The model.
    theta : torch.Tensor, shape (d,)
        Parameters at which the gradients are taken.
    cand_x, cand_y : torch.Tensor
        Candidate records.
    ref_x, ref_y : torch.Tensor
        Held-out reference records (at least 2).
    clip : float
        Clipping norm, > 0.
    shrinkage : float
        Weight of the identity target, in [0, 1].
    ridge : float
        Relative ridge, >= 0.

    Returns
    -------
    index : int
        Index of the chosen candidate.
    distances : ndarray, shape (r,)
        Every candidate's squared Mahalanobis distance.
    """
    ref = clip_rows(fm.per_sample_grads(theta, ref_x, ref_y), clip)
    cand = clip_rows(fm.per_sample_grads(theta, cand_x, cand_y), clip)
    dist = batched_mahalanobis(ref, cand, shrinkage=shrinkage, ridge=ridge)
    return int(torch.argmax(dist)), dist.detach().cpu().numpy()


def audit_games(setup: AuditSetup, *, rounds: int, taus, seed, chunk_size: int = 64,
                fast_stats: bool = True, executor=None, progress=None,
                on_interrupt: str = "raise") -> dict[int, GameResult]:
    """Play ``rounds`` games for each insertion time in ``taus`` (see the module docstring).

    The DP-SGD run is a :class:`~semi_core.sgd.mechanism.DPSGDMechanism` played by the one
    runner, :func:`semi_core.game.play.play_sweep` (H0 runs shared across :math:`\\tau`);
    SeMI-SGD and SeMI-max are the runner's SeMI* and SeMI-max statistics, the four loss
    baselines the :class:`~semi_core.sgd.scorers.LossBaselines` scorer.

    Parameters
    ----------
    setup : AuditSetup
    rounds : int >= 2
        Games per :math:`\\tau` (``R``).
    taus : iterable of int
        Insertion times in ``1..T``.
    seed : int or SeedSequence
        Root seed of the runner's streams (bits, H0 runs and H1 runs each their own).
    chunk_size : int
        Runs trained together as replicas (the runner's chunk; part of the seeding).
    fast_stats : bool
        See :class:`~semi_core.sgd.mechanism.DPSGDMechanism`.
    executor : Executor, int or None
        Where chunks run (in-process, threads, Dask); the result does not depend on it.
    progress, on_interrupt
        As in :func:`semi_core.game.play.play_sweep`.

    Returns
    -------
    dict of int -> GameResult
        Per :math:`\\tau`, one score array per attack of :data:`ATTACKS`; ``metadata`` holds
        ``seconds`` and ``rounds_released`` (runs trained).
    """
    rounds = check_int(rounds, "rounds", minimum=2)
    mech = DPSGDMechanism(setup, fast_stats=fast_stats)
    games = play_sweep(mech, rounds, taus, seed, tests=tuple(ATTACK_TESTS.values()),
                       scorers=(LossBaselines(mech),), chunk_size=chunk_size,
                       executor=executor, progress=progress, on_interrupt=on_interrupt)
    return {tau: attack_names(g) for tau, g in games.items()}


def audit_bounds(games: dict[int, GameResult], *, delta: float, failure_prob: float = 0.05,
                 methods=("dkw", "cp"), fpr_levels=(0.01, 0.1), seed=0) -> dict:
    """eps lower bounds, AUC and TPR at FPR per attack: per tau, averaged, best tau.

    ``games`` maps each insertion time to its :class:`~semi_core.game.result.GameResult`
    (:func:`audit_games`).

    Returns ``{"per_tau": {tau: {attack: {...}}}, "summary": {attack: {...}}}`` where the
    summary holds, per bound method, ``mean`` over tau, ``best`` (post hoc max) and
    ``best_bonferroni`` (each tau's bound at ``failure_prob / len(taus)``).

    Parameters
    ----------
    games : dict of int to GameResult
        Games of each insertion time.
    delta : float
        The :math:`\\delta` of the bounds, in [0, 1).
    failure_prob : float
        Failure probability of each bound, in (0, 1).
    methods : sequence of str
        Bound methods (:func:`semi_core.audit.epsilon_lower_bound`).
    fpr_levels : sequence of float
        FPRs at which the TPR is reported.
    seed : int or numpy.random.SeedSequence
        Seed of the methods that draw.

    Returns
    -------
    dict
        ``per_tau`` and ``summary`` as above.
    """
    return _sweep_bounds(games, delta=delta, failure_prob=failure_prob, methods=methods,
                         fpr_levels=fpr_levels, seed=seed)[0]


def _sweep_bounds(games, *, delta, failure_prob, methods, fpr_levels, seed):
    """:func:`audit_bounds`' table, and the sweep's bounds as a report holds them: per
    ``attack@tau=t`` and method the :class:`~semi_core.audit.bounds.AuditResult` at
    ``failure_prob / len(taus)`` (Bonferroni over the insertion times, so any of them, and
    their maximum, is valid at ``failure_prob``), with its largest certifiable value."""
    delta = check_probability(delta, "delta", low_open=False)
    if not games:
        raise ValueError("games must hold the games of at least one insertion time")
    taus = sorted(games)
    per_tau: dict = {}
    results: dict = {}
    ceilings: dict = {}
    for tau in taus:
        game = games[tau]
        per_tau[tau] = {}
        for name in game.stats:
            mem, non = game.scores(name)
            entry = {"auc": float(auc(mem, non)),
                     "tpr_at_fpr": {str(f): float(tpr_at_fpr(mem, non, f)) for f in fpr_levels},
                     "tpr_resolvable": {str(f): bool(ok) for f, ok in
                                        zip(fpr_levels, resolvable(fpr_levels, non.size),
                                            strict=True)},
                     "fpr_resolution": fpr_resolution(non.size),
                     "n_member": int(mem.size), "n_nonmember": int(non.size)}
            key = f"{name}@tau={tau}"
            results[key], ceilings[key] = {}, {}
            for meth in methods:
                res = epsilon_lower_bound(mem, non, delta=delta, failure_prob=failure_prob,
                                          method=meth, seed=seed)
                entry[f"eps_lb_{meth}"] = float(res.epsilon_lower_bound)
                entry[f"eps_max_{meth}"] = certifiable_epsilon_max(
                    mem.size, non.size, delta=delta, failure_prob=failure_prob, method=meth)
                bon, top = res, entry[f"eps_max_{meth}"]
                if len(taus) > 1:
                    bon = epsilon_lower_bound(mem, non, delta=delta, method=meth, seed=seed,
                                              failure_prob=failure_prob / len(taus))
                    entry[f"eps_lb_{meth}_bonferroni"] = float(bon.epsilon_lower_bound)
                    top = certifiable_epsilon_max(mem.size, non.size, delta=delta, method=meth,
                                                  failure_prob=failure_prob / len(taus))
                results[key][meth], ceilings[key][meth] = bon, float(top)
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
    return {"per_tau": per_tau, "summary": summary}, results, ceilings


class DPSGDAuditReport(AuditReport):
    r"""Outcome of :func:`run_audit`: an :class:`~semi_core.audit.report.AuditReport` of the
    DP-SGD sweep (seed §5, Fig. 3) whose ``to_dict()`` is the audit's JSON (settings, ground
    truth, per-attack summaries over :math:`\tau`, the per-:math:`\tau` table).

    Its bounds are per test ``"<attack>@tau=<t>"`` and method (``dkw``, ``cp``), each at
    ``failure_prob / len(taus)`` (Bonferroni over the insertion times): every bound, and
    :meth:`best` over them, holds at ``failure_prob``. ``against`` is the exact
    :math:`\varepsilon` of the audited run's relation (``epsilon_true``; ``None`` without
    noise), so ``refuted`` lists the bounds that would show the run less private than its
    accounting — a defect of the trainer or of the accounting — each at ``failure_prob / K``
    over the ``K`` (attack, insertion time, method) triples (:attr:`refuting`), so that the
    whole list is empty with probability at least ``1 - failure_prob`` for a correct run.
    """

    def _entries(self) -> dict:
        return dict(self.header)


def prepare_audit(*, dataset: str = "digits", model: str = "logreg", cfg: DPSGDConfig,
                  seed=0, data_dir=None, pretrain_epochs: int = 60, pretrain_lr: float = 0.1,
                  shrinkage: float = 0.1, ridge: float = 1e-4, sizes=None,
                  n_reference: int | None = None) -> AuditSetup:
    """Load data, pretrain on the public split, select the canary, return an :class:`AuditSetup`.

    ``n_reference`` caps the reference gradients used per statistic (default: all of the
    held-out reference split).

    Parameters
    ----------
    dataset : {"digits", "fashion-mnist"}
        The data (:func:`~semi_core.sgd.data.load_dataset`).
    model : str
        Architecture name.
    cfg : DPSGDConfig
        The audited DP-SGD run.
    seed : int or numpy.random.SeedSequence
        Root seed of the splits and the pretraining.
    data_dir : str or os.PathLike, optional
        Directory of the user's Fashion-MNIST files.
    pretrain_epochs : int
        Epochs of public pretraining.
    pretrain_lr : float
        Learning rate of the pretraining.
    shrinkage : float
        Weight of the identity target of the gradient covariance, in [0, 1].
    ridge : float
        Relative ridge, >= 0.
    sizes : tuple of 4 int, optional
        Split sizes; None = the dataset's defaults.
    n_reference : int, optional
        Cap on the reference gradients; None = all.

    Returns
    -------
    AuditSetup
        Model, pretrained parameters, data, canary and configuration.
    """
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
              chunk_size: int = 64, setup: AuditSetup | None = None, executor=None,
              progress=None) -> dict:
    """One Fig. 3 point: calibrate :math:`\\sigma_{DP}` to ``epsilon``, play, bound, compare.

    ``epsilon=None`` (or ``inf``) audits clipped SGD without noise (ground truth ``inf``).
    ``taus=None`` means all of ``1..T``. The ground truth is exact for the game's neighbouring
    relation (one record replaced, each record used once: :math:`\\mu = 2/\\sigma_{DP}`-GDP,
    :mod:`semi_core.sgd.accounting`). ``executor`` (:class:`~semi_core.game.backends.Executor`,
    an int thread count or None) says where the games run (:func:`audit_games`); the result
    does not depend on it. Returns a :class:`DPSGDAuditReport` (``to_dict()``: the JSON).

    Parameters
    ----------
    dataset, model, data_dir, n_reference
        As in :func:`prepare_audit`.
    epsilon : float or None
        Target :math:`\\varepsilon` (> 0) of the audited run; None or ``inf`` = no noise.
    rounds : int
        Games per insertion time.
    taus : sequence of int, optional
        Insertion times; None = 1..T.
    delta : float
        The :math:`\\delta` of the target and the bounds, in (0, 1).
    seed : int or numpy.random.SeedSequence
        Root seed.
    batch_size, steps, lr, clip
        DP-SGD hyper-parameters.
    failure_prob : float
        Failure probability of each bound, in (0, 1).
    chunk_size : int
        Games per runner chunk.
    setup : AuditSetup, optional
        A prepared setup (skips :func:`prepare_audit`).
    executor : Executor, int or None
        Where the games run.
    progress : callable, optional
        Progress reporter.

    Returns
    -------
    DPSGDAuditReport
        The sweep's bounds per attack, insertion time and method; ``to_dict()`` (and
        ``report[key]``) the settings, ground truth, the bounds of :func:`audit_bounds` and
        timings.
    """
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
    games = audit_games(setup, rounds=rounds, taus=taus, seed=ss_games, chunk_size=chunk_size,
                        executor=executor, progress=progress)
    meta = next(iter(games.values())).metadata
    bounds, results, ceilings = _sweep_bounds(games, delta=delta, failure_prob=failure_prob,
                                              methods=("dkw", "cp"), fpr_levels=(0.01, 0.1),
                                              seed=0)
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
            "tpr_resolvable": {f: all(p["tpr_resolvable"][f] for p in per)
                               for f in per[0]["tpr_at_fpr"]},
            "fpr_resolution": max(p["fpr_resolution"] for p in per),
        }
        if len(taus) > 1:
            attacks[name]["epsilon_lower_bound_best_tau_bonferroni"] = {
                m: s[f"eps_lb_{m}_best_bonferroni"] for m in ("dkw", "cp")}
    payload = {
        "dataset": setup.info.get("dataset", dataset), "model": setup.info.get("model", model),
        "epsilon_target": None if epsilon is None or np.isinf(epsilon) else float(epsilon),
        "epsilon_true": eps_true, "epsilon_dp_accounting": eps_check, "sigma_dp": sigma_dp,
        "delta": delta, "failure_prob": failure_prob, "rounds_per_tau": rounds, "taus": taus,
        "config": {"batch_size": batch_size, "steps": steps, "lr": lr, "clip": clip,
                   "shrinkage": setup.shrinkage, "ridge": setup.ridge},
        "neighbouring_relation": "one record replaced; each record used in exactly one step",
        "setup": setup.info, "runs_trained": int(meta["rounds_released"]),
        "seconds_games": float(meta["seconds"]), "attacks": attacks, "per_tau": bounds["per_tau"],
    }
    against = None if np.isinf(eps_true) else float(eps_true)
    refuting = {}
    if against is not None:  # every (attack, tau, method) together at failure_prob
        refuting = refutation_bounds({key: games[int(key.rsplit("=", 1)[1])].scores(
            key.rsplit("@", 1)[0]) for key in results}, ("dkw", "cp"), delta=delta,
            failure_prob=failure_prob, seed=0)
    return DPSGDAuditReport(bounds=results, ceilings=ceilings, header=payload,
                            against=against, refuting=refuting)
