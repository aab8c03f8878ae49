r"""The attack experiment of ``iha_parameters_vs_loss`` §4 on bundled data.

Protocol (seed §4.1, after Carlini et al. 2022): ``M`` models are trained with heavy-ball SGD
(:mod:`semi_core.sgd.momentum`; seed: :math:`\lambda=0.01,\ \mu=0.9,\ \alpha=5\cdot10^{-4}`),
each pool record in a model's training set with probability 1/2 (batched:
:mod:`semi_core.sgd.reference_models`). Model ``t`` (``t < target_models``) is a target; the
other ``M - 1`` are its reference models. Every attack scores the same target records; the
member bits and scores form one :class:`~semi_core.game.result.GameResult` (a one-shot, ``T = 1``
membership game), so ROC metrics (:func:`semi_core.audit.roc.roc_metrics`) and certified
:math:`\underline\varepsilon` (:func:`semi_core.audit.games.audit_game_result`) apply as for
any other game. The leave-one-out attacks (L-attack, LiRA-L) train ``loo_models`` reference
models on :math:`D\setminus\{z\}` for each of ``loo_targets`` records of target model 0 and
come as a second result on that subset (with every other attack's scores on it).
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field, replace

import numpy as np
import torch
from torch.func import functional_call, vmap

from semi_core._rng import as_seed_sequence
from semi_core._validation import check_int, check_memory, check_positive, check_probability
from semi_core.audit.roc import roc_metrics
from semi_core.game.result import GameResult
from semi_core.sgd.data import ATTACK_DATASETS, load_bundled, load_fashion_mnist, load_tabular
from semi_core.sgd.grads import FunctionalModel
from semi_core.sgd.hessian import CGInverse, EigenInverse, hvp_operator, mean_loss_hessian
from semi_core.sgd.momentum import SGDConfig
from semi_core.sgd.reference_models import (
    ATTACK_MODELS,
    build_attack_model,
    init_thetas,
    membership_matrix,
    schedules,
    train_models,
)

from .scores import (
    iha_score,
    iha_terms,
    l_attack,
    lira_l,
    lira_offline,
    lira_online,
    logit_confidence,
    loss_score,
    sif_score,
)

__all__ = ["ATTACKS", "LOO_ATTACKS", "AttackConfig", "TrainedPool", "WhiteBox", "AttackRun",
           "default_sgd", "train_pool", "run_attacks", "attack_metrics", "agreement_matrix",
           "parse_attacks"]

#: Attack names (``iha`` uses ``AttackConfig.hessian``; ``-global``: one variance per side).
ATTACKS = ("iha", "iha-exact", "iha-cg", "loss", "sif", "lira-online", "lira-online-global",
           "lira-offline", "lira-offline-global", "l-attack", "lira-l")
#: Datasets read from local files (``data_path``): IDX train files (MNIST / Fashion-MNIST;
#: ``idx-odd``: label mod 2, the seed's MNIST-Odd) and CSV / npz tables (Purchase-100 style).
FILE_DATASETS = ("idx", "idx-odd", "file")

#: Attacks that need leave-one-out reference models (scored on the LOO subset only).
LOO_ATTACKS = ("l-attack", "lira-l")


def parse_attacks(value) -> tuple[str, ...]:
    """A comma-separated string or sequence of names from :data:`ATTACKS` (order kept)."""
    items = value.split(",") if isinstance(value, str) else list(value)
    out = tuple(dict.fromkeys(str(v).strip() for v in items if str(v).strip()))
    bad = [a for a in out if a not in ATTACKS]
    if not out or bad:
        raise ValueError(f"attacks must be drawn from {list(ATTACKS)}, got {list(bad or out)}")
    return out


def default_sgd(dataset: str, model: str) -> SGDConfig:
    """The seed's :math:`(\\lambda,\\mu,\\alpha)=(0.01,0.9,5\\cdot10^{-4})`, batch 32, and enough
    epochs for the bundled settings to reach the stationary regime (loss flat in the log)."""
    epochs = {"logreg-mse": 60.0, "logreg": 40.0, "mlp": 80.0}.get(model, 40.0)
    if dataset in ("breast-cancer", "wine"):
        epochs *= 2
    return SGDConfig(lr=0.01, momentum=0.9, weight_decay=5e-4, batch_size=32, epochs=epochs)


@dataclass(frozen=True)
class AttackConfig:
    """Everything that defines one attack experiment (JSON metadata of its results)."""

    dataset: str = "digits-odd"
    model: str = "logreg-mse"
    n_models: int = 64
    n_targets: int | None = 500
    target_models: int = 1
    hessian: str = "exact"
    damping: float = 0.2
    hidden: int = 16
    loo_targets: int = 100
    loo_models: int = 8
    cg_tol: float = 1e-10
    member_prob: float = 0.5
    sgd: SGDConfig | None = None
    data_path: str | None = None
    pool_size: int | None = None

    def __post_init__(self):
        if self.dataset not in ATTACK_DATASETS + FILE_DATASETS:
            raise ValueError(f"dataset must be one of {ATTACK_DATASETS + FILE_DATASETS}, got "
                             f"{self.dataset!r}")
        if (self.dataset in FILE_DATASETS) != (self.data_path is not None):
            raise ValueError(f"data_path is needed exactly for the file datasets {FILE_DATASETS} "
                             f"(dataset {self.dataset!r}, data_path {self.data_path!r})")
        if self.pool_size is not None:
            check_int(self.pool_size, "pool_size", minimum=4)
        if self.model not in ATTACK_MODELS:
            raise ValueError(f"model must be one of {ATTACK_MODELS}, got {self.model!r}")
        check_int(self.n_models, "n_models", minimum=5)
        if self.n_targets is not None:
            check_int(self.n_targets, "n_targets", minimum=2)
        check_int(self.target_models, "target_models", minimum=1, maximum=self.n_models - 4)
        if self.hessian not in ("exact", "cg"):
            raise ValueError(f"hessian must be 'exact' or 'cg', got {self.hessian!r}")
        if not (isinstance(self.damping, int | float) and np.isfinite(self.damping)
                and self.damping >= 0):
            raise ValueError(f"damping must be finite and >= 0, got {self.damping!r}")
        check_int(self.hidden, "hidden", minimum=1)
        check_int(self.loo_targets, "loo_targets", minimum=2)
        check_int(self.loo_models, "loo_models", minimum=2)
        check_positive(self.cg_tol, "cg_tol")
        check_probability(self.member_prob, "member_prob")
        if self.sgd is None:
            object.__setattr__(self, "sgd", default_sgd(self.dataset, self.model))

    def to_dict(self) -> dict:
        out = asdict(self)
        out["sgd"] = self.sgd.to_dict()
        return out


@dataclass
class TrainedPool:
    """The pool, the model family, the membership matrix and the trained weights."""

    x: torch.Tensor
    y: torch.Tensor
    fm: FunctionalModel
    member: np.ndarray
    thetas: torch.Tensor
    kind: str
    seconds: float
    log: list = field(default_factory=list)


def _load_pool(cfg: AttackConfig, seed_seq):
    """``(x, y, n_classes)`` of the pool: bundled, IDX or tabular file, optionally subsampled to
    ``pool_size`` records (seeded); file labels are mapped to ``0..K-1`` in sorted order."""
    if cfg.dataset in ("idx", "idx-odd"):
        x, y = load_fashion_mnist(cfg.data_path)
        y = y % 2 if cfg.dataset == "idx-odd" else y
    elif cfg.dataset == "file":
        x, y = load_tabular(cfg.data_path)
    else:
        x, y, _ = load_bundled(cfg.dataset)
    _, y = np.unique(y, return_inverse=True)
    if cfg.pool_size is not None and cfg.pool_size < x.shape[0]:
        rng = np.random.Generator(np.random.PCG64(seed_seq))
        keep = np.sort(rng.choice(x.shape[0], size=cfg.pool_size, replace=False))
        x, y = x[keep], y[keep]
    K = int(y.max()) + 1
    if K < 2:
        raise ValueError(f"the pool of dataset {cfg.dataset!r} has a single class")
    return x, y.astype(np.int64), K


def _pool_tensors(cfg: AttackConfig, seed_seq):
    x, y, K = _load_pool(cfg, seed_seq)
    X = torch.as_tensor(x, dtype=torch.float64)
    Y = torch.as_tensor(y.astype(np.float64) if cfg.model == "logreg-mse" else y)
    return X, Y, K


def _check_resources(cfg: AttackConfig, N: int, d: int) -> None:
    """Refuse up front (``ResourceLimitError``) what would not fit in memory: batch schedules,
    stacked weights, per-sample gradients, the exact Hessian (with ``hessian`` intermediates)
    and the leave-one-out models."""
    n = cfg.member_prob * N
    steps = cfg.sgd.steps(max(n, 1.0))
    k = N if cfg.n_targets is None else min(cfg.n_targets, N)
    chunk = min(cfg.n_models, 64)
    loo = (min(cfg.loo_targets, k) + 1) * cfg.loo_models
    nbytes = 8.0 * (cfg.n_models * steps * cfg.sgd.batch_size      # schedules
                    + 3 * cfg.n_models * d + cfg.n_models * N       # weights, confidences
                    + chunk * cfg.sgd.batch_size * max(d, 64) * 2   # one training step
                    + (n + k) * d                                   # per-sample gradients
                    + 4 * d * d                                     # Hessian, eigh
                    + loo * (steps * cfg.sgd.batch_size + d))        # leave-one-out models
    check_memory(nbytes, f"the attack experiment ({cfg.n_models} models x {steps} steps, "
                         f"d = {d}, {k} targets)",
                 hint="use fewer --models / --targets / --loo-targets, or --pool-size")


def train_pool(cfg: AttackConfig, seed) -> TrainedPool:
    """Train ``cfg.n_models`` models on random halves of the pool (batched, reproducible)."""
    root = as_seed_sequence(seed)
    s_member, s_models, s_pool = root.spawn(3)   # children 0, 1 as before; 2 for pool_size
    X, Y, K = _pool_tensors(cfg, s_pool)
    fm = build_attack_model(cfg.model, X.shape[1], K, hidden=cfg.hidden)
    _check_resources(cfg, X.shape[0], fm.d)
    member = membership_matrix(cfg.n_models, X.shape[0], s_member, p=cfg.member_prob)
    seeds = s_models.spawn(cfg.n_models)
    t0 = time.perf_counter()
    log: list = []
    with torch.no_grad():
        thetas = train_models(fm, init_thetas(fm, seeds), X, Y, schedules(member, cfg.sgd, seeds),
                              cfg.sgd, log=log)
    return TrainedPool(X, Y, fm, member, thetas, "binary" if cfg.model == "logreg-mse"
                       else "logits", time.perf_counter() - t0, log)


def _scores_fn(fm: FunctionalModel, kind: str):
    """``theta, x -> confidence-relevant outputs``: class logits, or the pre-sigmoid score."""
    module = fm.module[:-1] if kind == "binary" else fm.module

    def f(theta, x):
        return functional_call(module, {**fm.frozen, **fm.unflatten(theta)}, (x,))
    return f


def confidences(pool: TrainedPool, thetas: torch.Tensor, idx) -> torch.Tensor:
    """Logit-scaled confidences ``(M, k)`` of models ``thetas`` on pool records ``idx``."""
    idx = torch.as_tensor(np.asarray(idx, dtype=np.int64))
    out = vmap(_scores_fn(pool.fm, pool.kind), in_dims=(0, None))(thetas, pool.x[idx])
    return logit_confidence(out, pool.y[idx].expand(thetas.shape[0], -1), kind=pool.kind)


class WhiteBox:
    r"""White-box quantities of one target model, computed once and cached: losses and
    per-sample gradients of the targets, the mean training gradient :math:`\nabla L_1`, the
    per-sample training gradients (for the LOO-fraction variant), the exact Hessian of the mean
    training loss and the matrix-free HVP operator."""

    def __init__(self, pool: TrainedPool, cfg: AttackConfig, t: int, targets: np.ndarray):
        self.pool, self.cfg, self.t = pool, cfg, t
        self.targets = np.asarray(targets, dtype=np.int64)
        self.theta = pool.thetas[t]
        self.train_idx = np.flatnonzero(pool.member[t])
        self.n = int(self.train_idx.size)
        self.member = pool.member[t, self.targets]
        fm, x, y = pool.fm, pool.x, pool.y
        with torch.no_grad():
            xt, yt = x[self.targets], y[self.targets]
            self.losses = fm.losses(self.theta, xt, yt).numpy()
            self.grads = fm.per_sample_grads(self.theta, xt, yt)
            self.train_grads = fm.per_sample_grads(self.theta, x[self.train_idx],
                                                   y[self.train_idx])
        self.grad_l1 = self.train_grads.mean(0)
        self._H = None
        self.seconds: dict[str, float] = {}

    def hessian(self) -> torch.Tensor:
        """Exact :math:`\\nabla^2L` on the target's training set (cached)."""
        if self._H is None:
            t0 = time.perf_counter()
            self._H = mean_loss_hessian(self.pool.fm, self.theta, self.pool.x[self.train_idx],
                                        self.pool.y[self.train_idx])
            self.seconds["hessian"] = time.perf_counter() - t0
        return self._H

    def inverse(self, method: str = "exact", *, epsilon: float | None = None,
                lowrank: bool = False):
        """``EigenInverse`` (damping or low-rank) or a ``CGInverse`` on the HVP operator."""
        eps = self.cfg.damping if epsilon is None else epsilon
        if method == "exact":
            return EigenInverse(self.hessian(), epsilon=eps,
                                method="lowrank" if lowrank else "damping")
        if method == "cg":
            hvp = hvp_operator(self.pool.fm, self.theta, self.pool.x[self.train_idx],
                               self.pool.y[self.train_idx])
            return CGInverse(hvp, damping=eps, tol=self.cfg.cg_tol)
        raise ValueError(f"method must be 'exact' or 'cg', got {method!r}")

    def iha_terms(self, inv, *, loo_fraction: float = 1.0, rng=None) -> dict[str, np.ndarray]:
        r"""Eq. 8 terms; ``loo_fraction < 1`` estimates :math:`\nabla L_0` from a random
        fraction of :math:`D\setminus\{z\}` per target (App. F, Table 9), scaled to the full
        :math:`1/n` normalisation."""
        sgd = self.cfg.sgd
        kw = dict(n=self.n, lr=sgd.lr, momentum=sgd.momentum, weight_decay=sgd.weight_decay)
        if loo_fraction >= 1.0:
            return iha_terms(inv, self.grads, self.losses, grad_l1=self.grad_l1,
                             member=self.member, **kw)
        loo_fraction = check_probability(loo_fraction, "loo_fraction")
        rng = np.random.default_rng(0) if rng is None else rng
        pos = {int(r): i for i, r in enumerate(self.train_idx)}
        rows = np.zeros((self.targets.size, self.n))
        for j, rec in enumerate(self.targets):
            avail = np.ones(self.n, dtype=bool)
            if int(rec) in pos:
                avail[pos[int(rec)]] = False
            cand = np.flatnonzero(avail)
            k = max(1, int(round(loo_fraction * cand.size)))
            pick = rng.choice(cand, size=k, replace=False)
            rows[j, pick] = cand.size / (k * self.n)   # unbiased for (1/n) sum over D \ {z}
        g0 = torch.as_tensor(rows) @ self.train_grads
        return iha_terms(inv, self.grads, self.losses, grad_l0=g0, **kw)

    def sif(self, inv) -> np.ndarray:
        return sif_score(inv, self.grads)


@dataclass
class AttackRun:
    """Result of :func:`run_attacks`."""

    config: AttackConfig
    result: GameResult
    loo_result: GameResult | None
    seconds: dict[str, float]
    setup: dict
    whitebox: list = field(default_factory=list, repr=False)
    pool: TrainedPool | None = field(default=None, repr=False)

    def metrics(self, *, fpr=(0.01, 0.001), n_bootstrap: int = 200, seed: int = 0) -> dict:
        """Per attack: AUC, TPR at ``fpr`` with intervals (LOO attacks on the LOO subset)."""
        out = {}
        for name in self.result.stats:
            out[name] = attack_metrics(self.result, name, fpr=fpr, n_bootstrap=n_bootstrap,
                                       seed=seed)
        if self.loo_result is not None:
            for name in self.loo_result.stats:
                key = name if name in LOO_ATTACKS else f"{name}@loo-subset"
                out[key] = attack_metrics(self.loo_result, name, fpr=fpr,
                                          n_bootstrap=n_bootstrap, seed=seed)
        return out


def attack_metrics(result: GameResult, name: str, *, fpr=(0.01, 0.001), n_bootstrap: int = 200,
                   seed: int = 0) -> dict:
    """AUC and TPR at each FPR level with 95 % bootstrap intervals
    (:func:`semi_core.audit.roc.roc_metrics`), plus the class sizes."""
    m, nm = result.scores(name)
    r = roc_metrics(m, nm, fpr=fpr, interval="bootstrap", n_bootstrap=n_bootstrap, seed=seed)
    return {"auc": r.auc, "auc_interval": list(r.auc_interval),
            "tpr_at_fpr": {f"{f:g}": v for f, v in zip(r.fpr_levels, r.tpr_at_fpr, strict=True)},
            "tpr_at_fpr_interval": {f"{f:g}": list(iv) for f, iv in
                                    zip(r.fpr_levels, r.tpr_at_fpr_interval, strict=True)},
            "n_member": r.n_member, "n_nonmember": r.n_nonmember}


def agreement_matrix(result: GameResult, names, *, fpr: float) -> dict:
    """Agreement rates between attacks' decisions and the ground truth (seed Table 5).

    Each attack thresholds at the largest score level whose empirical FPR is ``<= fpr``; the
    returned ``members[a][b]`` / ``nonmembers[a][b]`` are the fractions of members /
    non-members on which ``a`` and ``b`` decide alike (``b = "GT"``: the ground truth, i.e. TPR
    and 1 - FPR).
    """
    fpr = check_probability(fpr, "fpr")
    names = list(names)
    pred = {}
    for a in names:
        s = result.stats[a]
        neg = np.sort(s[~result.member])[::-1]
        k = int(np.floor(fpr * neg.size))
        thr = neg[min(k, neg.size - 1)]
        pred[a] = s > thr
    pred["GT"] = result.member.copy()
    out = {}
    for side, mask in (("members", result.member), ("nonmembers", ~result.member)):
        out[side] = {a: {b: float(np.mean(pred[a][mask] == pred[b][mask])) for b in pred}
                     for a in pred}
    out["fpr"] = fpr
    return out


def _loo_models(pool: TrainedPool, cfg: AttackConfig, targets: np.ndarray, seed_seq):
    """Leave-one-out reference models for target model 0: ``loo_models`` per member target on
    :math:`D\\setminus\\{z\\}`, and one shared set on :math:`D` for all non-member targets.
    Returns per-target ``(losses (k, K), confidences (k, K))``."""
    base = pool.member[0]
    is_mem = base[targets]
    groups = [t for t in targets if base[t]]
    K = cfg.loo_models
    rows = []
    for t in groups:
        r = base.copy()
        r[t] = False
        rows.extend([r] * K)
    rows.extend([base] * K)                 # D itself: the LOO set of every non-member
    member = np.stack(rows)
    seeds = seed_seq.spawn(member.shape[0])
    with torch.no_grad():
        thetas = train_models(pool.fm, init_thetas(pool.fm, seeds), pool.x, pool.y,
                              schedules(member, cfg.sgd, seeds), cfg.sgd)
    k = targets.size
    losses = np.empty((k, K))
    phis = np.empty((k, K))
    mem_pos = {t: i for i, t in enumerate(groups)}
    with torch.no_grad():
        for j, t in enumerate(targets):
            blk = mem_pos[t] if is_mem[j] else len(groups)
            th = thetas[blk * K:(blk + 1) * K]
            xt, yt = pool.x[t:t + 1], pool.y[t:t + 1]
            losses[j] = pool.fm.losses_batched(th, xt, yt)[:, 0].numpy()
            phis[j] = confidences(pool, th, [t])[:, 0].numpy()
    return losses, phis, int(member.shape[0])


def run_attacks(cfg: AttackConfig, attacks=("iha", "loss", "sif", "lira-online", "lira-offline"),
                *, seed=0, pool: TrainedPool | None = None, progress=None) -> AttackRun:
    """Train the models (unless ``pool`` is given), score every target with every attack.

    Returns an :class:`AttackRun` whose ``result`` pools the targets of the first
    ``cfg.target_models`` models (tau = 1: a one-shot release).
    """
    attacks = parse_attacks(attacks)
    say = progress or (lambda msg: None)
    root = as_seed_sequence(seed)
    s_pool, s_targets, s_loo = root.spawn(3)
    if pool is None:
        say("training models")
        pool = train_pool(cfg, s_pool)
    N = pool.x.shape[0]
    rng = np.random.Generator(np.random.PCG64(s_targets))
    k = N if cfg.n_targets is None else min(cfg.n_targets, N)
    seconds = {"train_models": pool.seconds}
    members, stats, wbs = [], {a: [] for a in attacks if a not in LOO_ATTACKS}, []
    all_idx = np.arange(cfg.n_models)
    for t in range(cfg.target_models):
        targets = np.sort(rng.choice(N, size=k, replace=False))
        say(f"target model {t}: white-box quantities")
        t0 = time.perf_counter()
        wb = WhiteBox(pool, cfg, t, targets)
        seconds["gradients"] = seconds.get("gradients", 0.0) + time.perf_counter() - t0
        wbs.append(wb)
        members.append(wb.member)
        refs = all_idx[all_idx != t]
        need_ref = any(a.startswith("lira-o") for a in attacks)
        if need_ref:
            with torch.no_grad():
                phi_all = confidences(pool, pool.thetas, targets).numpy()   # (M, k)
            phi, ref_phi = phi_all[t], phi_all[refs].T
            ref_in = pool.member[np.ix_(refs, targets)].T
        invs: dict[str, object] = {}
        for a in stats:
            t0 = time.perf_counter()
            if a in ("iha", "iha-exact", "iha-cg", "sif"):
                method = {"iha-exact": "exact", "iha-cg": "cg"}.get(a, cfg.hessian)
                if method not in invs:
                    invs[method] = wb.inverse(method)
                inv = invs[method]
                s = wb.sif(inv) if a == "sif" else iha_score(wb.iha_terms(inv), lr=cfg.sgd.lr)
            elif a == "loss":
                s = loss_score(wb.losses)
            elif a.startswith("lira-online"):
                s = lira_online(phi, ref_phi, ref_in,
                                variance="global" if a.endswith("global") else "per-example")
            else:
                s = lira_offline(phi, ref_phi, ref_in,
                                 variance="global" if a.endswith("global") else "per-example")
            seconds[a] = seconds.get(a, 0.0) + time.perf_counter() - t0
            stats[a].append(np.asarray(s, dtype=float))
        if "hessian" in wb.seconds:
            seconds[f"hessian@model{t}"] = wb.seconds["hessian"]
    member = np.concatenate(members)
    result = GameResult(member=member, tau=np.ones(member.size, dtype=np.int64),
                        stats={a: np.concatenate(v) for a, v in stats.items()},
                        seed=int(root.entropy) if isinstance(root.entropy, int) else None,
                        metadata={"config": cfg.to_dict(), "attacks": list(attacks),
                                  "game": "one-shot membership game (T = 1)"})
    loo_result = None
    loo = [a for a in attacks if a in LOO_ATTACKS]
    setup = {"n_pool": int(N), "d": int(pool.fm.d), "n_train_target": int(wbs[0].n),
             "targets_per_model": int(k)}
    if loo:
        say("leave-one-out reference models")
        t0 = time.perf_counter()
        wb = wbs[0]
        sub = np.arange(min(cfg.loo_targets, wb.targets.size))
        losses, phis, n_loo = _loo_models(pool, cfg, wb.targets[sub], s_loo)
        seconds["train_loo_models"] = time.perf_counter() - t0
        phi0 = confidences(pool, pool.thetas[:1], wb.targets[sub])[0].numpy()
        loo_stats = {a: result.stats[a][sub] for a in result.stats}
        if "l-attack" in loo:
            loo_stats["l-attack"] = l_attack(wb.losses[sub], losses)
        if "lira-l" in loo:
            loo_stats["lira-l"] = lira_l(phi0, phis)
        loo_result = GameResult(member=wb.member[sub], tau=np.ones(sub.size, dtype=np.int64),
                                stats=loo_stats, seed=result.seed,
                                metadata={**result.metadata, "subset": "leave-one-out targets",
                                          "loo_models_trained": n_loo})
        setup["loo_models_trained"] = n_loo
    return AttackRun(config=cfg, result=result, loo_result=loo_result, seconds=seconds,
                     setup=setup, whitebox=wbs, pool=pool)


def with_overrides(cfg: AttackConfig, **kw) -> AttackConfig:
    """A copy of ``cfg`` with fields replaced (validated again)."""
    return replace(cfg, **kw)
