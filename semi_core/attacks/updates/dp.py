r"""Auditing a DP-SGD update with the update attacks (``combining_mi_updates`` §5.7, Q6).

One *fixed* canary per run makes the runs i.i.d. draws of one membership game (the seed instead
pools many points of the same model, which are not independent): each of ``rounds`` runs trains
its own :math:`f_0`, draws a fresh update set, and with probability 1/2 the canary replaces one
of its records (replace-one neighbours); the update is DP-SGD
(:mod:`semi_core.attacks.updates.training`). The attack score is ScoreDiff/ScoreRatio of the
canary's loss between :math:`f_0` and :math:`f_1` (and the no-update loss on :math:`f_1`). The
game goes through :func:`semi_core.audit.games.audit_game_result` (the one certifying entry
point :func:`semi_core.audit.bounds.epsilon_lower_bound` per test), and the bounds are
compared with the update's exact :math:`\varepsilon(\delta)` (:math:`\mu`-GDP, :math:`\mu = 2\sqrt{E}/\sigma_{DP}`).

The canary is a record of the attacker's pool with its label changed to the class the base
model finds least likely on average (a "mislabeled" canary: a strong, standard audit choice).
"""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np
import torch

from semi_core._rng import as_seed_sequence
from semi_core._validation import check_int
from semi_core.audit.games import audit_game_result
from semi_core.audit.roc import roc_metrics
from semi_core.game.result import GameResult
from semi_core.sgd.models import build_model
from semi_core.stats.gdp import gdp_epsilon
from semi_core.stats.update_combination import combine

from .experiment import UpdateConfig, _draw, _pools
from .training import run_updates, update_mu

__all__ = ["dp_game", "dp_audit"]


def dp_game(cfg: UpdateConfig, rounds: int = 200, *, combiner: str = "diff") -> GameResult:
    """Play ``rounds`` single-update games with one fixed canary; a :class:`GameResult` with
    stats ``update-<combiner>`` and ``final-loss`` (higher = member)."""
    rounds = check_int(rounds, "rounds", minimum=4)
    cfg = replace(cfg, k=1)
    root = as_seed_sequence(cfg.seed)
    s_split, s_runs, s_model, s_b = root.spawn(4)
    x_all, y_all, src, pools = _pools(cfg, np.random.default_rng(s_split))
    n_classes = int(y_all.max()) + 1
    canary_idx = int(pools["shadow"][0])
    cx = torch.as_tensor(x_all[canary_idx][None, None], dtype=torch.float64)
    member = np.random.default_rng(s_b).random(rounds) < 0.5
    seqs = s_runs.spawn(rounds)
    base, upd = [], []
    for r in range(rounds):
        d0, cand = _draw(np.random.default_rng(seqs[r]), pools["learner"], src, cfg,
                         2 * cfg.n_up)
        base.append(d0)
        upd.append(cand[:cfg.n_up])
    rngs = [np.random.default_rng(s) for s in seqs]
    fm, theta_init, _ = build_model(cfg.model, x_all[:32], y_all[:32], n_classes,
                                    seed_seq=s_model, epochs=0, hidden=cfg.hidden)
    bx = torch.as_tensor(x_all[np.stack(base)], dtype=torch.float64)
    by = torch.as_tensor(y_all[np.stack(base)], dtype=torch.long)
    ux = torch.as_tensor(x_all[np.stack(upd)], dtype=torch.float64).unsqueeze(1)
    uy = torch.as_tensor(y_all[np.stack(upd)], dtype=torch.long).unsqueeze(1)
    # label of the canary: the class a model trained on one base set finds least likely
    from .training import train_replicas
    probe = train_replicas(fm, theta_init[None], bx[:1], by[:1], cfg.base_cfg, [
        np.random.default_rng(0)])
    with torch.no_grad():
        losses = torch.stack([fm.losses(probe[0], cx[0], torch.tensor([c]))[0]
                              for c in range(n_classes)])
    cy = int(torch.argmax(losses))
    mem_t = torch.as_tensor(member)
    ux[mem_t, 0, 0] = cx[0, 0]
    uy[mem_t, 0, 0] = cy
    t0 = time.perf_counter()
    snaps = run_updates(fm, theta_init, bx, by, ux, uy, update=cfg.update, base_cfg=cfg.base_cfg,
                        update_cfg=cfg.update_cfg, rngs=rngs)
    with torch.no_grad():
        lab = torch.tensor([cy])
        l0 = np.array([float(fm.losses(snaps[r, 0], cx[0], lab)[0]) for r in range(rounds)])
        l1 = np.array([float(fm.losses(snaps[r, 1], cx[0], lab)[0]) for r in range(rounds)])
    return GameResult(member=member, tau=np.ones(rounds, np.int64),
                      stats={f"update-{combiner}": combine(l0, l1, combiner, c=cfg.c),
                             "final-loss": -l1},
                      seed=cfg.seed,
                      metadata={"game": "dp-update-canary", "update": cfg.update,
                                "sigma_dp": cfg.sigma_dp, "clip": cfg.clip,
                                "update_mu": update_mu(cfg.update_cfg), "canary": canary_idx,
                                "canary_label": cy, "seconds": time.perf_counter() - t0})


def dp_audit(cfg: UpdateConfig, *, delta: float = 1e-4, rounds: int = 200,
             combiner: str = "diff", failure_prob: float = 0.05) -> dict:
    r"""Certified :math:`\underline\varepsilon` (DKW and Clopper-Pearson split) of the update
    attack and of the no-update loss, against the exact :math:`\varepsilon(\delta)`."""
    res = dp_game(cfg, rounds, combiner=combiner)
    mu = res.metadata["update_mu"]
    out = {"epsilon_true": gdp_epsilon(mu, delta) if np.isfinite(mu) else float("inf"),
           "update_mu": mu, "delta": delta, "rounds": rounds, "attacks": {}}
    audits = {meth: audit_game_result(res, delta=delta, failure_prob=failure_prob, method=meth)
              for meth in ("dkw", "cp")}
    for name in res.tests:
        m_, n_ = res.scores(name)
        rm = roc_metrics(m_, n_, fpr=(0.01, 0.1), interval="binomial")
        out["attacks"][name] = {
            "epsilon_lower_bound": {k: a[name]["epsilon_lower_bound"] for k, a in audits.items()},
            "epsilon_max_certifiable": {k: a[name].get("epsilon_max_certifiable")
                                        for k, a in audits.items()},
            "auc": rm.auc,
            "tpr_at_fpr": dict(zip(("0.01", "0.1"), rm.tpr_at_fpr, strict=True))}
    out["seconds"] = res.metadata["seconds"]
    return out
