"""Timing of the two training engines on the same draws (:func:`time_engines`): Opacus' loop
against the batched trainer, and the scoring. The report's timing table and
``python -m benchmarks opacus`` read it.
"""

from __future__ import annotations

import time

import numpy as np
import torch

from semi_core._rng import as_seed_sequence
from semi_core._validation import check_int
from semi_core.integrations.opacus._common import _torch_threads
from semi_core.integrations.opacus.config import OpacusAuditConfig, _config
from semi_core.integrations.opacus.mechanism import OpacusMechanism
from semi_core.integrations.opacus.prepare import prepare_opacus_setup
from semi_core.sgd.dirac import WhiteBoxMechanism, WhiteBoxScorer, draw_runs
from semi_core.sgd.dpsgd import DPSGDConfig
from semi_core.sgd.gradstats import woodbury_factors

__all__ = ["time_engines", "TIMING_DEFAULTS"]

#: The configuration :func:`time_engines` times where no ``config`` is given (besides
#: ``noise_multiplier``, which is always needed): the report's and the benchmark's set-up.
TIMING_DEFAULTS = {"rounds": 1000, "max_grad_norm": 1.0, "batch_size": 64, "steps": 10,
                   "tau": 5, "runs_per_chunk": 128}


def _factorisation_seconds(points: int, m: int, clock, block: int = 16) -> float:
    """Seconds of the two ``m x m`` capacitance factorisations of ``points`` parameter points
    (:func:`semi_core.sgd.gradstats.woodbury_factors`, in blocks of ``block`` points as the
    scorer runs them) on a fixed well-conditioned Gram matrix: the part of SeMI-SGD/SeMI-max
    scoring that no reorganisation removes."""
    g = torch.as_tensor(np.random.default_rng(0).normal(size=(block, m, 2 * m)))
    gram = g @ g.transpose(-1, -2) / (2 * m)
    betas = torch.ones(2, block, dtype=gram.dtype)
    t0 = clock()
    for lo in range(0, points, block):
        p = min(block, points - lo)
        woodbury_factors(gram[:p], (0.01, 0.0099), betas[:, :p], m)
    return clock() - t0


def time_engines(model_fn, train_dataset, config: OpacusAuditConfig | None = None, *, seed=0,
                 opacus_rounds: int | None = None, clock=time.process_time,
                 **options) -> dict:
    """Seconds to train ``rounds`` Dirac games at one ``tau`` through Opacus
    (:class:`OpacusMechanism`, one ``make_private`` per chunk) and through the batched trainer
    (:class:`~semi_core.sgd.dirac.WhiteBoxMechanism`), on the same Crafter draws, in chunks of
    ``runs_per_chunk`` runs as the runner plays them; and to score the batched releases with
    :class:`~semi_core.sgd.dirac.WhiteBoxScorer`, chunk by chunk (``semi``: the mode of
    ``scoring_seconds``; ``scoring_by_semi`` has every mode: ``True``, ``"tau"``, ``False``).

    ``opacus_rounds`` (default ``rounds``) times Opacus on a prefix of the runs and scales the
    time linearly to ``rounds`` (runs are independent and equally costly); the payload says so.
    ``clock`` is ``time.process_time`` by default (CPU seconds of this process: the work is
    single-threaded, and CPU time is not inflated by other load on the machine).

    Parameters
    ----------
    model_fn, train_dataset
        As for :func:`~semi_core.integrations.opacus.audit_opacus`.
    config : OpacusAuditConfig, optional
        What is timed (validated as for an audit); or its fields as keywords (``options``:
        ``noise_multiplier=..., rounds=..., max_grad_norm=..., batch_size=..., steps=...,
        tau=..., runs_per_chunk=..., semi=..., lr=..., dirac_scale=..., n_reference=...``),
        which also override a given ``config``'s. Without ``config``, the fields not given
        are those of :data:`TIMING_DEFAULTS`. Correct Dirac runs on fixed batches are timed
        (``canary="dirac"``, ``sampler="fixed"``, no ``bug``, one canary per run);
        ``delta``, ``failure_prob`` and ``engine`` do not change what is timed.
    seed : int or SeedSequence
        Root seed (set-up split and the Crafter's draws).
    opacus_rounds : int >= 1, optional
        Runs timed through Opacus (default ``rounds``), scaled linearly to ``rounds``.
    clock : callable
        Returns seconds (default ``time.process_time``).
    **options
        Fields of :class:`OpacusAuditConfig`.

    Returns
    -------
    dict
        Seconds, the ratios and where the time goes in each path.
    """
    cfg_a = _config(config, {**TIMING_DEFAULTS, **options} if config is None else options)
    for name, want in (("canary", "dirac"), ("sampler", "fixed"), ("bug", None),
                       ("canaries_per_run", 1)):
        if getattr(cfg_a, name) != want:
            raise ValueError(f"{name} must be {want!r} for time_engines (correct Dirac runs on "
                             f"fixed batches are timed), got {getattr(cfg_a, name)!r}")
    rounds, runs_per_chunk, tau, semi = cfg_a.rounds, cfg_a.runs_per_chunk, cfg_a.tau, cfg_a.semi
    steps = cfg_a.steps
    cfg = DPSGDConfig(batch_size=cfg_a.batch_size, steps=steps, lr=cfg_a.lr,
                      clip=cfg_a.max_grad_norm, sigma_dp=cfg_a.noise_multiplier)
    ss_setup, ss_plan = as_seed_sequence(seed).spawn(2)
    with _torch_threads(1):
        ctx = prepare_opacus_setup(model_fn, train_dataset, cfg=cfg, canary="dirac",
                                   dirac_scale=cfg_a.dirac_scale,
                                   n_reference=cfg_a.n_reference, seed=ss_setup)
        rng = np.random.Generator(np.random.PCG64(ss_plan))
        member = rng.random(rounds) < 0.5
        t0 = clock()
        runs = draw_runs(ctx.setup, member, tau, rng)
        t_plan = clock() - t0
        k = rounds if opacus_rounds is None else min(rounds, check_int(
            opacus_rounds, "opacus_rounds", minimum=1))
        split_o: dict = {}
        split_b: dict = {}
        mech_o = OpacusMechanism(ctx, timings=split_o)
        mech_b = WhiteBoxMechanism(ctx.setup, timings=split_b)
        chunks = [slice(lo, min(rounds, lo + runs_per_chunk))
                  for lo in range(0, rounds, runs_per_chunk)]
        t0 = clock()
        for lo in range(0, k, runs_per_chunk):
            mech_o.train_runs(runs.take(slice(lo, min(k, lo + runs_per_chunk))))
        t_o = (clock() - t0) * rounds / k
        t0 = clock()
        trajs = [mech_b.train_runs(runs.take(sl)) for sl in chunks]
        t_b = clock() - t0
        releases = [mech_b.pack_releases(tr, sl.stop - sl.start)
                    for tr, sl in zip(trajs, chunks, strict=True)]
        t_modes = {}
        for mode in dict.fromkeys((semi, True, "tau", False)):
            scorer = WhiteBoxScorer(mech_b, mode)
            t0 = clock()
            for rel in releases:
                scorer(rel, np.full(rel.shape[0], tau))
            t_modes[str(mode)] = clock() - t0
        t_s = t_modes[str(semi)]
        # the floor of exact SeMI-max scoring: two m x m factorisations per parameter point
        # (every (run, step) pair after step 1, plus step 1's common theta_0 once per chunk)
        m_ref = int(ctx.setup.ref_x.shape[0])
        points = rounds * (steps - 1) + len(chunks)
        t_f = _factorisation_seconds(points, m_ref, clock)
    return {"rounds": rounds, "opacus_rounds_timed": k, "opacus_seconds": t_o,
            "factorisation_seconds": t_f, "points": points, "n_reference": m_ref,
            "batched_seconds": t_b, "ratio": t_o / t_b, "plan_seconds": t_plan,
            "scoring_seconds": t_s, "scoring_ratio": t_s / t_b, "semi": semi,
            "scoring_by_semi": t_modes,
            "opacus_split": {key: v * rounds / k for key, v in split_o.items()},
            "batched_split": split_b, "threads": 1,
            "clock": getattr(clock, "__name__", str(clock))}
