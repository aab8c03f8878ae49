"""The entry point :func:`audit_opacus` (the package docstring describes the audit).
"""

from __future__ import annotations

import time

from semi_core._rng import as_seed_sequence
from semi_core.game.backends import Executor
from semi_core.integrations.opacus._common import _opacus, _torch_threads
from semi_core.integrations.opacus.claims import _claims
from semi_core.integrations.opacus.config import (
    OpacusAuditConfig,
    _check_audit_work,
    _check_resolution,
    _config,
)
from semi_core.integrations.opacus.mechanism import OpacusMechanism
from semi_core.integrations.opacus.prepare import prepare_opacus_setup
from semi_core.integrations.opacus.report import OpacusAuditReport, _certify, _refute
from semi_core.integrations.opacus.scorer import PoissonDiracScorer
from semi_core.sgd.bugs import get_bug
from semi_core.sgd.dirac import (
    WhiteBoxMechanism,
    WhiteBoxScorer,
    play_white_box,
)
from semi_core.sgd.dpsgd import DPSGDConfig

__all__ = ["audit_opacus"]


def audit_opacus(model_fn, train_dataset, config: OpacusAuditConfig | None = None, *, seed=0,
                 executor=None, progress=False, **options) -> OpacusAuditReport:
    """Audit Opacus DP-SGD on ``model_fn``/``train_dataset`` (module docstring).

    Parameters
    ----------
    model_fn : callable
        Returns a fresh ``nn.Module`` (logits); called once per chunk of runs (fixed batches)
        or per run (Poisson), its state replaced by the first call's (so :math:`\\theta_0` is
        common; pretrain inside ``model_fn``).
    train_dataset : (X, y) or map-style dataset of (x, y)
        Split into a private pool (batches), reference records (gradient statistics) and, for
        ``canary="gradient-mahalanobis"``, canary candidates.
    config : OpacusAuditConfig, optional
        The configuration; or give its fields as keywords (``**options``).
    seed : int or SeedSequence
        Root seed (setup split and the games).
    executor : Executor, int or None
        Where the runner plays the chunks of runs (:class:`~semi_core.game.backends.Executor`);
        the result does not depend on it.
    progress : bool
        Progress of the game on stderr.
    **options
        Fields of :class:`OpacusAuditConfig` (``noise_multiplier=...,
        max_grad_norm=..., batch_size=..., steps=..., canary=..., tau=..., rounds=...,
        delta=..., lr=..., sampler=..., bug=..., canaries_per_run=..., dirac_scale=...,
        failure_prob=..., engine=..., semi=..., n_reference=..., runs_per_chunk=...``), which
        also override the fields of a given ``config``:

        - ``noise_multiplier``, ``max_grad_norm``: :math:`\\sigma_{DP}` and :math:`C`;
        - ``batch_size``, ``steps``: ``n`` (``<= len(train_dataset)``) and ``T``;
        - ``canary``: ``"dirac"`` (white-box Dirac gradient canary), ``"gradient-mahalanobis"``
          (the candidate with the largest clipped-gradient Mahalanobis distance, seed §5.2) or
          ``"input"`` (a crafted input on the least-varying feature);
        - ``tau``: insertion step (``sampler="fixed"``);
        - ``rounds``: runs, bits i.i.d. Bernoulli(1/2); ``canaries_per_run`` Dirac games per run;
        - ``sampler``: ``"fixed"`` or ``"poisson"``; ``bug``: a bug of the zoo installed in
          Opacus' optimizer;
        - ``engine``: ``"opacus"`` or ``"batched"`` (the same games on semi_core's batched
          trainer, the reference path; ``sampler="fixed"`` only);
        - ``semi``: also SeMI-SGD and SeMI-max (slower); ``"tau"``: SeMI-SGD at ``tau`` only.

    Returns
    -------
    OpacusAuditReport

    Notes
    -----
    Every argument is validated before any model is trained: the configuration on
    construction, the dataset and model by :func:`prepare_opacus_setup`, every closed-form
    :math:`\\varepsilon` (accountants, ground truth, claim) and the work estimate before the
    game starts.
    """
    with _torch_threads(1):
        return _audit_opacus(model_fn, train_dataset, config, seed=seed, executor=executor,
                             progress=progress, **options)


def _audit_opacus(model_fn, train_dataset, config, *, seed, executor, progress,
                  **options) -> OpacusAuditReport:
    t_start = time.perf_counter()
    cfg = _config(config, options)
    ex = Executor.coerce(executor)
    _check_audit_work(cfg, ex)
    _opacus()
    root = as_seed_sequence(seed)
    the_bug = get_bug(cfg.bug)
    dcfg = DPSGDConfig(batch_size=cfg.batch_size, steps=cfg.steps, lr=cfg.lr,
                       clip=cfg.max_grad_norm, sigma_dp=cfg.noise_multiplier)
    ss_setup, ss_plan = root.spawn(2)
    ctx = prepare_opacus_setup(model_fn, train_dataset, cfg=dcfg, canary=cfg.canary,
                               sampler=cfg.sampler, canaries_per_run=cfg.canaries_per_run,
                               dirac_scale=cfg.dirac_scale, n_reference=cfg.n_reference,
                               seed=ss_setup)
    setup = ctx.setup
    _check_resolution(cfg, setup.theta0)
    if cfg.engine == "opacus":
        mech: WhiteBoxMechanism = OpacusMechanism(ctx, bug=the_bug)
    else:
        mech = WhiteBoxMechanism(setup, bug=the_bug)
    claims = _claims(cfg, mech, ctx.n_dataset)
    if cfg.sampler == "fixed":
        scorers = (WhiteBoxScorer(mech, cfg.semi),)
    elif setup.kind == "dirac":
        scorers = (PoissonDiracScorer(mech),)
    else:
        scorers = (WhiteBoxScorer(mech, False),)
    t0 = time.perf_counter()
    game = play_white_box(mech, rounds=cfg.rounds, tau=cfg.tau, seed=ss_plan, scorers=scorers,
                          runs_per_chunk=cfg.runs_per_chunk, executor=ex, progress=progress)
    t1 = time.perf_counter()
    member = game.member
    n1 = int(member.sum())
    if min(n1, member.size - n1) < 2:
        raise ValueError(f"rounds = {cfg.rounds} gave {n1} member and {member.size - n1} "
                         "non-member games; every bound needs >= 2 of each: increase rounds")
    game.seed = int(root.entropy) if isinstance(root.entropy, int) else None
    game.metadata.update(engine=cfg.engine, sampler=cfg.sampler, canary=cfg.canary, bug=cfg.bug)
    bounds, ceilings = _certify(game, delta=cfg.delta, failure_prob=cfg.failure_prob,
                                seed=ss_plan)
    valid = cfg.sampler == "fixed" and setup.kind == "dirac" and bool(
        setup.info.get("dirac_isolated", False))
    why = ("" if valid else "the Gaussian-score route needs a Dirac canary on an isolated "
           "coordinate and fixed batches (exactly Gaussian scores)")
    refutation = _refute(game, claims["claimed"], delta=cfg.delta, failure_prob=cfg.failure_prob,
                         seed=ss_plan, gaussian_valid=valid, reason=why)
    t2 = time.perf_counter()
    msgs = sorted(set(claims["warnings"]) | getattr(mech, "warnings_seen", set()))
    notes = []
    if any("Secure RNG" in m for m in msgs):
        notes.append("Opacus: secure RNG is off (secure_mode=False) -- needed for seeded, "
                     "reproducible noise; a production run should use secure_mode=True")
    if cfg.sampler == "fixed" and cfg.engine == "opacus":
        notes.append("Opacus ran with poisson_sampling=False on the Crafter's fixed batches: "
                     "its accountant's Poisson assumption does not hold for this run")
    if setup.kind == "dirac" and not setup.info.get("dirac_isolated", False):
        notes.append("the Dirac coordinates are not isolated (natural gradients reach them): "
                     "the Dirac score is not exactly Gaussian, the games of one run are not "
                     "independent and the audit is less tight")
    q_user = claims["q_user"]
    return OpacusAuditReport(
        bounds=bounds, ceilings=ceilings, game=game,
        epsilon_accountant=claims["epsilon_accountant"],
        epsilon_true=claims["epsilon_true"], epsilon_claimed=claims["claimed"],
        claim_refuted=refutation["nonparametric"]["refuted"],
        claim_refuted_gdp=refutation["gdp"]["refuted"], refutation=refutation,
        neighbouring_relation=claims["relation"],
        accountant_relation=("epsilon_accountant: Opacus RDP/PRV, add/remove, Poisson rate "
                             f"q = batch_size/N = {q_user:.4g}, {cfg.steps} steps; claim under "
                             f"test: {claims['claim_source']}"),
        warnings=notes + msgs,
        config={"noise_multiplier": cfg.noise_multiplier, "max_grad_norm": cfg.max_grad_norm,
                "batch_size": cfg.batch_size, "steps": cfg.steps, "lr": cfg.lr, "tau": cfg.tau,
                "rounds": cfg.rounds, "games": int(member.size), "delta": cfg.delta,
                "failure_prob": cfg.failure_prob, "canary": cfg.canary, "sampler": cfg.sampler,
                "bug": cfg.bug, "engine": cfg.engine, "canaries_per_run": mech.k,
                "runs_per_chunk": cfg.runs_per_chunk, "executor": ex.name},
        setup=setup.info,
        timing={"game_seconds": t1 - t0, "certify_seconds": t2 - t1,
                "total_seconds": time.perf_counter() - t_start})
