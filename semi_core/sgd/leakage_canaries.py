r"""Per-datum leakage for DP-SGD: rank-based canaries (seed App. D Alg. 6) and the per-step
white-box score :math:`\max_t v^t` (Alg. 7), compared on the DP-SGD audit.

One DP-SGD step releases (through :math:`\theta_{t-1}-\theta_t`) the noisy mean of the clipped
batch gradients, so the per-datum analysis of the noisy empirical mean (seed §4.1, §4.4)
applies step by step with :math:`\hat\mu_t,\hat C_t` the mean and covariance of clipped
reference gradients at :math:`\theta_{t-1}`:

.. math::

    v^t=(\hat g^t-\hat\mu_t)^\top\tilde C_t^{-1}\Big(\tfrac1\eta(\theta_{t-1}-\theta_t)
        -\hat\mu_t\Big)-\frac{1}{2B}\|\hat g^t-\hat\mu_t\|^2_{\tilde C_t^{-1}},

the Eq. (10) statistic with sample size :math:`B=qn` (the batch size here: each record is used
in exactly one step). Corrections to the seed's printed score: Alg. 7 divides the quadratic
term by :math:`2q\eta` and §4.4 writes :math:`\tfrac1n(\theta_{t-1}-\theta_t)` (App. D: ``1/eta``
and ``1/(2qn)``) -- the Eq. (10) derivation gives ``1/eta`` and ``1/(2B)``; Alg. 6/7 estimate
:math:`\hat C_t` by the *uncentred* second moment :math:`\frac1r\sum\hat g\hat g^\top` while
centring the vectors at :math:`\hat\mu_t` -- we use the centred covariance with the toolkit's
shrinkage (:func:`~semi_core.sgd.gradstats.gradient_statistics`). The noise-aware variant
(``noise_aware=True``) uses :math:`\tilde C_t=\hat C_t+\sigma_{DP}^2C^2/B\,I` (seed §4.1:
:math:`C_\sigma+C_\gamma`; the update noise :math:`\xi/B`, :math:`\xi\sim\mathcal N(0,\sigma^2C^2I)`
is :math:`N/\sqrt B` with :math:`\gamma^2=\sigma^2C^2/B`); the literal variant ignores the noise.

Canary selection (Alg. 6): one DP-SGD run without canary on the private pool; at each step the
clipped gradients of that step's batch give :math:`\hat\mu_t,\hat C_t`; the candidates'
clipped gradients at :math:`\theta_{t-1}` are ranked by Mahalanobis distance and the ranks summed
over steps; the top-``m`` candidates are the canaries. The toolkit's default canary
(:func:`~semi_core.sgd.audit.select_canary`) is the largest Mahalanobis distance at
:math:`\theta_0` only.

:func:`compare_canaries` plays the *same* games (batches, slots, noise, membership bits from
one seed) for each canary and certifies :math:`\underline\varepsilon` with
:func:`semi_core.audit.epsilon_lower_bound` for SeMI-SGD (known :math:`\tau`), SeMI-max and
Alg. 7's :math:`\max_t v^t` (literal and noise-aware), with AUCs (DeLong SEs). The games are
:class:`~semi_core.sgd.mechanism.DPSGDMechanism` played by the one runner
(:func:`semi_core.game.play.play`); Alg. 7's scores are the :class:`WhiteBoxScores` scorer.
The low-rank solves are :func:`semi_core.sgd.gradstats.woodbury_solve` (their one home).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import torch

from semi_core._rng import as_seed_sequence
from semi_core._validation import check_int, check_probability, check_tau
from semi_core.audit import epsilon_lower_bound
from semi_core.audit.roc import auc
from semi_core.game.play import play

from .accounting import calibrate_sigma, dpsgd_epsilon
from .audit import AuditSetup, prepare_audit, select_canary
from .data import load_dataset
from .dpsgd import DPSGDConfig, draw_game, train_dpsgd
from .grads import clip_rows
from .gradstats import woodbury_solve
from .mechanism import DPSGDMechanism
from .scorers import ATTACK_TESTS, attack_names

__all__ = ["candidate_pool", "rank_canaries", "wb_scores", "WhiteBoxScores",
           "compare_canaries"]


def candidate_pool(dataset: str, seed, *, sizes=None, data_dir=None):
    """The candidate split :func:`~semi_core.sgd.audit.prepare_audit` draws for ``seed``.

    Parameters
    ----------
    dataset : str
        Dataset name.
    seed : int or numpy.random.SeedSequence
        Root seed of :func:`~semi_core.sgd.audit.prepare_audit`.
    sizes : tuple of 4 int, optional
        Split sizes.
    data_dir : str or os.PathLike, optional
        Directory of the user's files.

    Returns
    -------
    x, y : torch.Tensor
        The candidate records.
    """
    root = as_seed_sequence(seed)
    ss = np.random.SeedSequence(root.entropy, spawn_key=(*root.spawn_key, 7, 0))
    splits = load_dataset(dataset, data_dir=data_dir, sizes=sizes,
                          rng=np.random.Generator(np.random.PCG64(ss)))
    x, y = splits.candidates
    return torch.as_tensor(x, dtype=torch.float64), torch.as_tensor(y, dtype=torch.long)


def rank_canaries(setup: AuditSetup, cand_x, cand_y, *, m: int = 1, seed=0,
                  shrinkage: float | None = None, ridge: float | None = None):
    """Alg. 6: rank-sum of candidate Mahalanobis distances over the ``T`` steps of one run.

    Returns ``(indices of the top m, rank sums (r,), per-step distances (T, r))``.

    Parameters
    ----------
    setup : AuditSetup
        The audit's setup.
    cand_x, cand_y : torch.Tensor
        Candidate records (r of them).
    m : int
        Number of canaries returned, in 1..r.
    seed : int or numpy.random.SeedSequence
        Seed of the run.
    shrinkage : float, optional
        Weight of the identity target; None = the setup's.
    ridge : float, optional
        Relative ridge; None = the setup's.

    Returns
    -------
    top : ndarray of int, shape (m,)
        Indices of the top candidates.
    rank_sums : ndarray, shape (r,)
        Rank sums.
    distances : ndarray, shape (T, r)
        Per-step distances.
    """
    cfg, fm = setup.cfg, setup.fm
    r = int(cand_x.shape[0])
    m = check_int(m, "m", minimum=1, maximum=r)
    lam = setup.shrinkage if shrinkage is None else check_probability(
        shrinkage, "shrinkage", low_open=False, high_open=False)
    rid = setup.ridge if ridge is None else float(ridge)
    draw = draw_game(as_seed_sequence(seed), pool_size=setup.pool_x.shape[0], cfg=cfg,
                     d=fm.d, tau=None)
    with torch.no_grad():
        traj = train_dpsgd(fm, setup.theta0, draw, setup.pool_x, setup.pool_y,
                           (setup.canary_x, setup.canary_y), cfg)
    dist = np.empty((cfg.steps, r))
    score = np.zeros(r)
    for t in range(cfg.steps):
        theta = traj[t]
        idx = torch.as_tensor(draw.batches[t])
        gb = clip_rows(fm.per_sample_grads(theta, setup.pool_x[idx], setup.pool_y[idx]),
                       cfg.clip)
        gc = clip_rows(fm.per_sample_grads(theta, cand_x, cand_y), cfg.clip)
        _, xc, sol = woodbury_solve(gb.unsqueeze(0), gc.unsqueeze(0), shrinkage=lam,
                                    ridge=rid)
        dt = (xc * sol).sum(-1)[0].detach().numpy()
        dist[t] = dt
        score += np.argsort(np.argsort(dt, kind="stable"), kind="stable")  # ascending ranks
    top = np.argsort(-score, kind="stable")[:m]
    return top, score, dist


def wb_scores(setup: AuditSetup, traj, *, chunk: int = 32) -> dict[str, np.ndarray]:
    r"""Alg. 7's per-step scores :math:`v^t` (corrected, see the module docstring).

    ``traj`` are trajectories ``(R, T+1, d)``; reference gradients are those of ``setup.ref_x``
    at each run's own :math:`\theta_{t-1}`. Returns ``{"noise_aware": (R, T), "literal":
    (R, T)}`` (one pass: the gradients are shared).

    Parameters
    ----------
    setup : AuditSetup
        The audit's setup.
    traj : array_like, shape (R, T+1, d)
        Trajectories.
    chunk : int
        Runs per batched gradient call.

    Returns
    -------
    dict of str to ndarray
        ``noise_aware`` and ``literal`` scores, each (R, T).
    """
    cfg, fm = setup.cfg, setup.fm
    tr = torch.as_tensor(np.asarray(traj, dtype=float))
    if tr.ndim != 3 or tr.shape[1] != cfg.steps + 1 or tr.shape[2] != fm.d:
        raise ValueError(f"traj must have shape (R, {cfg.steps + 1}, {fm.d}), got "
                         f"{tuple(tr.shape)}")
    R, T = tr.shape[0], cfg.steps
    B = cfg.batch_size
    extras = {"noise_aware": (cfg.sigma_dp * cfg.clip) ** 2 / B, "literal": 0.0}
    out = {k: np.empty((R, T)) for k in extras}
    cx, cy = setup.canary_x.unsqueeze(0), setup.canary_y.reshape(1)
    with torch.no_grad():
        for lo in range(0, R, chunk):
            part = tr[lo:lo + chunk]
            for t in range(1, T + 1):
                prev = part[:, t - 1]
                ref = clip_rows(fm.per_sample_grads_batched(prev, setup.ref_x, setup.ref_y,
                                                            shared=True), cfg.clip)
                tgt = clip_rows(fm.per_sample_grads_batched(prev, cx, cy, shared=True),
                                cfg.clip)                       # (b, 1, d)
                for key, extra in extras.items():
                    mean, xc, sol = woodbury_solve(ref, tgt, shrinkage=setup.shrinkage,
                                                   ridge=setup.ridge, extra=extra)
                    u = (prev - part[:, t]) / cfg.lr - mean     # (b, d)
                    y = sol[:, 0]
                    v = (y * u).sum(-1) - (y * xc[:, 0]).sum(-1) / (2 * B)
                    out[key][lo:lo + part.shape[0], t - 1] = v.numpy()
    return out


@dataclass(frozen=True)
class WhiteBoxScores:
    """Scorer: Alg. 7's white-box scores on each released trajectory (:func:`wb_scores`):
    ``alg7_max`` (noise-aware :math:`\\max_t v^t`), ``alg7_literal_max`` (without the noise
    term) and ``alg7_at_tau`` (noise-aware :math:`v^\\tau` at the round's own :math:`\\tau`).

    Parameters
    ----------
    mech : DPSGDMechanism
        The mechanism whose releases are scored (its setup gives the canary and the
        reference data).
    """

    mech: DPSGDMechanism
    names: ClassVar[tuple[str, ...]] = ("alg7_max", "alg7_literal_max", "alg7_at_tau")
    tau_free: ClassVar[bool] = False

    def __call__(self, releases, tau, rng: np.random.Generator) -> dict[str, np.ndarray]:
        v = wb_scores(self.mech.setup, self.mech.trajectories(releases))
        rows = np.arange(v["noise_aware"].shape[0])
        return {"alg7_max": v["noise_aware"].max(axis=1),
                "alg7_literal_max": v["literal"].max(axis=1),
                "alg7_at_tau": v["noise_aware"][rows, np.asarray(tau, dtype=np.int64) - 1]}


def _attack_table(member, scores: dict, *, delta, failure_prob, seed) -> dict:
    out = {}
    for name, sc in scores.items():
        mem, non = sc[member], sc[~member]
        a, se = auc(mem, non, se=True)
        row = {"auc": float(a), "auc_se": float(se)}
        for meth in ("dkw", "cp"):
            row[f"eps_lb_{meth}"] = float(epsilon_lower_bound(
                mem, non, delta=delta, failure_prob=failure_prob, method=meth,
                seed=seed).epsilon_lower_bound)
        out[name] = row
    return out


def compare_canaries(*, dataset: str = "digits", model: str = "logreg",
                     epsilon: float | None = 4.0, rounds: int = 400, tau: int = 1,
                     delta: float = 1e-4, failure_prob: float = 0.05, seed=0,
                     batch_size: int = 64, steps: int = 10, lr: float = 0.5, clip: float = 1.0,
                     n_reference: int = 128, chunk_size: int = 64, executor=None,
                     progress=None) -> dict:
    """The canary comparison on the DP-SGD audit (same games for every canary).

    Canaries: ``mahalanobis_theta0`` (the toolkit's default), ``alg6_rank`` (played only when
    it differs from the default) and ``median_candidate`` (a typical record). Scores:
    ``semi_sgd`` (known tau), ``semi_max``, ``alg7_max`` (noise-aware :math:`\\max_t v^t`),
    ``alg7_literal_max`` (Alg. 7 without the noise term). Returns a JSON-ready dict with
    certified eps lower bounds (dkw, cp), AUCs, the ground truth and timings.

    Each canary's games are :class:`~semi_core.sgd.mechanism.DPSGDMechanism` played by the one
    runner (:func:`semi_core.game.play.play` with the :class:`WhiteBoxScores` scorer) from the
    same seed: the membership bits, batches, slots and noise are the same for every canary.
    ``executor`` says where the chunks run (the result does not depend on it).

    Parameters
    ----------
    dataset, model, n_reference
        As in :func:`~semi_core.sgd.audit.prepare_audit`.
    epsilon : float or None
        Target :math:`\\varepsilon`; None or ``inf`` = no noise.
    rounds : int
        Games per canary, >= 4.
    tau : int
        Insertion step.
    delta : float
        The :math:`\\delta` of the target and the bounds, in (0, 1).
    failure_prob : float
        Failure probability of each bound, in (0, 1).
    seed : int or numpy.random.SeedSequence
        Root seed (the same games for every canary).
    batch_size, steps, lr, clip
        DP-SGD hyper-parameters.
    chunk_size : int
        Games per runner chunk.
    executor : Executor, int or None
        Where the chunks run.
    progress : callable, optional
        Progress reporter.

    Returns
    -------
    dict
        Per canary and score: bounds, AUCs; the ground truth and timings.
    """
    rounds = check_int(rounds, "rounds", minimum=4)
    delta = check_probability(delta, "delta")
    if epsilon is None or not np.isfinite(epsilon):
        sigma, eps_true = 0.0, float("inf")
    else:
        sigma = calibrate_sigma(epsilon, delta)
        eps_true = dpsgd_epsilon(sigma, delta)
    cfg = DPSGDConfig(batch_size=batch_size, steps=steps, lr=lr, clip=clip, sigma_dp=sigma)
    tau = check_tau(tau, cfg.steps)
    root = as_seed_sequence(seed)
    ss_setup, ss_rank, ss_games = root.spawn(3)
    t0 = time.perf_counter()
    setup = prepare_audit(dataset=dataset, model=model, cfg=cfg, seed=ss_setup,
                          n_reference=n_reference)
    cand_x, cand_y = candidate_pool(dataset, ss_setup)
    top, rank_sum, dist = rank_canaries(setup, cand_x, cand_y, m=1, seed=ss_rank)
    k6 = int(top[0])
    k0, d0 = select_canary(setup.fm, setup.theta0, cand_x, cand_y, setup.ref_x, setup.ref_y,
                           clip=cfg.clip, shrinkage=setup.shrinkage, ridge=setup.ridge)
    kmed = int(np.argsort(d0, kind="stable")[len(d0) // 2])
    setups = {"mahalanobis_theta0": setup}
    if k6 != k0:
        setups["alg6_rank"] = AuditSetup(**{**setup.__dict__, "canary_x": cand_x[k6],
                                            "canary_y": cand_y[k6]})
    setups["median_candidate"] = AuditSetup(**{**setup.__dict__, "canary_x": cand_x[kmed],
                                               "canary_y": cand_y[kmed]})
    t_setup = time.perf_counter() - t0
    results = {}
    for name, s in setups.items():
        if progress is not None:
            progress(f"canary {name}")
        t1 = time.perf_counter()
        mech = DPSGDMechanism(s)
        game = attack_names(play(mech, rounds, ss_games, tau=tau,   # same games per canary
                                 tests=tuple(ATTACK_TESTS.values()),
                                 scorers=(WhiteBoxScores(mech),), chunk_size=chunk_size,
                                 executor=executor))
        results[name] = {"attacks": _attack_table(game.member, game.stats, delta=delta,
                                                  failure_prob=failure_prob, seed=0),
                         "seconds": time.perf_counter() - t1}
    return {"dataset": dataset, "model": model, "epsilon_target": epsilon,
            "epsilon_true": eps_true, "sigma_dp": sigma, "delta": delta,
            "failure_prob": failure_prob, "rounds": rounds, "tau": tau,
            "config": {"batch_size": batch_size, "steps": steps, "lr": lr, "clip": clip,
                       "n_reference": n_reference},
            "canaries": {"mahalanobis_theta0": {"index": int(k0),
                                                "mahalanobis_theta0": float(d0[k0]),
                                                "rank_sum": float(rank_sum[k0])},
                         "alg6_rank": {"index": k6, "rank_sum": float(rank_sum[k6]),
                                       "mahalanobis_theta0": float(d0[k6]),
                                       "mahalanobis_steps_mean": float(dist[:, k6].mean()),
                                       "same_as_mahalanobis_theta0": bool(k6 == k0)},
                         "median_candidate": {"index": kmed, "mahalanobis_theta0":
                                              float(d0[kmed]),
                                              "rank_sum": float(rank_sum[kmed])},
                         "candidates": int(cand_x.shape[0])},
            "results": results, "seconds_setup": t_setup,
            "seconds_total": time.perf_counter() - t0}
