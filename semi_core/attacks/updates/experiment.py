r"""The seed's membership / entry-inference experiment with model updates on digits
(``combining_mi_updates`` §3.3 Fig. 2, §4, §5.2-5.6), trained with the project's torch layer.

Protocol (one *trial*; ``trials`` of them are trained at once as replicas):

1. the learner draws :math:`D_0` (``n0`` records), :math:`k` update sets :math:`D_1..D_k`
   (``n_up`` each) and :math:`k\,n_{up}` test points (the OUT points of the game) from its pool,
   and runs Alg. 1 (:func:`~semi_core.attacks.updates.training.run_updates`), recording
   :math:`f_0..f_k`;
2. the attacker scores every candidate (update and test points, balanced as in Fig. 2) on every
   snapshot with a *loss-like* score :math:`\ell_i(x)` (low = member): cross-entropy, or the
   offline-LiRA loss :math:`-\log\Phi((\phi_i(x)-\hat\mu_i(x))/\hat\sigma_i)` with
   :math:`\phi = \log(p_y/(1-p_y))` and the OUT Gaussian fitted on ``n_ref`` reference runs of
   the same procedure on the attacker's own data (per-example mean, pooled variance: few
   reference models, Carlini et al.'s fixed-variance variant);
3. single update / Back-Front: :func:`~semi_core.stats.update_combination.combine` of
   :math:`(\ell_0, \ell_k)`; Delta: pair scores and top-``n_up`` assignment without repetition
   (:func:`~semi_core.stats.update_combination.assign_top_n`);
4. thresholds: **Batch** (quantile of the trial's unlabeled candidates), **Transfer** (the same
   rule on a *shadow* run of the procedure on the attacker's data, whose split it knows),
   **Rank** (quantile of known-OUT points -- the attacker's own records -- scored on the target
   snapshots). Accuracy uses the median (``fraction_in = 0.5``), precision the seed's 10 %.

Data: scikit-learn's bundled digits, or the user's own file (``data``, :func:`load_update_data`:
a ``.csv`` / ``.txt`` with a label column, an ``.npz`` with ``X`` and ``y``, or a directory with
an IDX pair ``train-images-idx3-ubyte`` / ``train-labels-idx1-ubyte``), cut once per seed into a
learner pool, a shadow pool and a reference pool (disjoint). Distribution shift (§5.6,
BREEDS-like subpopulation shift; digits or any 10-class data): with ``shift_alpha > 0`` the
task is the binary "label >= 5"; :math:`D_0` comes from the source subclasses
{0,1,2 | 5,6,7}, update *and* test points from
:math:`(1-\alpha)\mathcal D_S + \alpha\mathcal D_T` with target subclasses {3,4 | 8,9}.

Per-trial metrics are averaged with standard errors over trials; AUC and TPR at low FPR are
also computed on the scores pooled over trials with bootstrap intervals
(:func:`semi_core.audit.roc.roc_metrics`).
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field, replace
from functools import partial
from typing import Any

import numpy as np
import torch

from semi_core._rng import as_seed_sequence, child_seed
from semi_core._table import ResultDisplay, Table
from semi_core._validation import check_int, check_positive, check_work
from semi_core.audit.roc import auc as roc_auc
from semi_core.audit.roc import roc_metrics
from semi_core.game.backends import shared
from semi_core.game.play import play_pool
from semi_core.game.result import GameResult
from semi_core.sgd.data import load_digits, load_fashion_mnist, load_tabular
from semi_core.sgd.models import build_model
from semi_core.stats.update_combination import (
    COLLISION_RULES,
    COMBINERS,
    assign_top_n,
    back_front_scores,
    batch_threshold,
    decision_metrics,
    entry_accuracy,
    entry_baselines,
    pair_scores,
    rank_threshold,
)

from .training import UPDATES, TrainConfig, run_updates, update_mu

__all__ = ["UpdateConfig", "UpdateRun", "UpdateRunPool", "CandidateLossScorer", "run_experiment",
           "check_training_work", "shared_executor", "summarize", "SCORES", "THRESHOLDS",
           "DATASETS", "MODELS", "load_update_data"]

SCORES = ("loss", "lira")
THRESHOLDS = ("batch", "transfer", "rank")
DATASETS = ("digits", "file")
MODELS = ("logreg", "mlp")
_SRC, _TGT = (0, 1, 2, 5, 6, 7), (3, 4, 8, 9)
#: Distribution-shift settings (§5.6, ``shift_alpha > 0``): BREEDS-like subpopulation shift on
#: fixed digit subclasses; its Hard / Easy pairs; covariate shift, Hard / Easy.
SHIFTS = ("subpopulation", "subpop-hard", "subpop-easy", "covariate-hard", "covariate-easy")


@dataclass(frozen=True)
class UpdateConfig:
    """Everything that defines one experiment (validated; errors name the field).

    Defaults mirror the seed's FMNIST setting scaled to digits: logistic regression, ``n0``
    = 300, SGD-New 10 epochs at a tenth of the base rate... rescaled so that the update moves
    the model (digits features in [0, 1]); SGD-Full fewer epochs on the union at the base rate.
    """

    dataset: str = "digits"
    model: str = "logreg"
    update: str = "sgd-new"
    k: int = 1
    n_up: int = 10
    n0: int = 300
    trials: int = 20
    n_ref: int = 8
    c: float = 1e-3
    base_epochs: int = 30
    base_lr: float = 0.2
    new_epochs: int = 10
    new_lr: float = 0.05
    full_epochs: int = 3
    full_lr: float = 0.2
    batch_size: int = 32
    hidden: int = 64
    shift_alpha: float = 0.0
    shift: str = "subpopulation"
    data: str | None = None
    label_column: int | str = 0
    clip: float | None = None
    sigma_dp: float = 0.0
    seed: int = 0

    def __post_init__(self):
        if self.dataset not in DATASETS:
            raise ValueError(f"dataset must be one of {DATASETS}, got {self.dataset!r}")
        if (self.dataset == "file") != (self.data is not None):
            raise ValueError("data (a file or IDX directory) is needed exactly with dataset "
                             f"'file', got dataset {self.dataset!r} and data {self.data!r}")
        if not isinstance(self.label_column, int | np.integer | str) or \
                isinstance(self.label_column, bool):
            raise ValueError("label_column must be an integer or a header name, got "
                             f"{self.label_column!r}")
        if self.model not in MODELS:
            raise ValueError(f"model must be one of {MODELS}, got {self.model!r}")
        if self.update not in UPDATES:
            raise ValueError(f"update must be one of {UPDATES}, got {self.update!r}")
        check_int(self.k, "k", minimum=1, maximum=50)
        check_int(self.n_up, "n_up", minimum=2)
        check_int(self.n0, "n0", minimum=10)
        check_int(self.trials, "trials", minimum=2)
        check_int(self.n_ref, "n_ref", minimum=2)
        check_positive(self.c, "c")
        for f in ("base_epochs", "new_epochs", "full_epochs"):
            check_int(getattr(self, f), f, minimum=1)
        for f in ("base_lr", "new_lr", "full_lr"):
            check_positive(getattr(self, f), f)
        check_int(self.batch_size, "batch_size", minimum=1)
        check_int(self.hidden, "hidden", minimum=1)
        if not (0.0 <= self.shift_alpha <= 1.0):
            raise ValueError(f"shift_alpha must be in [0, 1], got {self.shift_alpha}")
        if self.shift not in SHIFTS:
            raise ValueError(f"shift must be one of {SHIFTS}, got {self.shift!r}")
        check_int(self.seed, "seed", minimum=0)
        TrainConfig(1, 1.0, clip=self.clip, sigma_dp=self.sigma_dp)  # validates clip/sigma_dp

    @property
    def update_cfg(self) -> TrainConfig:
        """:math:`A_{\\mathrm{up}}`: SGD-New or SGD-Full hyper-parameters (+ DP)."""
        if self.update == "sgd-new":
            return TrainConfig(self.new_epochs, self.new_lr, self.batch_size, self.clip,
                               self.sigma_dp)
        return TrainConfig(self.full_epochs, self.full_lr, self.batch_size, self.clip,
                           self.sigma_dp)

    @property
    def base_cfg(self) -> TrainConfig:
        """:math:`A_{\\mathrm{train}}` on :math:`D_0` (plain SGD)."""
        return TrainConfig(self.base_epochs, self.base_lr, self.batch_size)


@dataclass(repr=False)
class UpdateRun(ResultDisplay):
    """Raw outcome: loss-like scores of every candidate on every snapshot, per score type.

    ``scores[s]`` is ``(trials, k+1, N)`` for the trial candidates, ``shadow[s]`` the same for the
    shadow runs' candidates, ``rank_out[s]`` ``(trials, k+1, M)`` for the attacker's known-OUT
    points on the *target* snapshots; ``member`` / ``entry`` ``(N,)`` the candidates' truth (same
    layout every trial), ``correct_final`` ``(trials, N)`` whether :math:`f_k` classifies each
    candidate correctly (the Gap baseline).

    Prints as one line; ``summary()`` is a table per score type (trials, candidates, models'
    test accuracy); the attack metrics are :func:`summarize`'s.
    """

    cfg: UpdateConfig
    scores: dict[str, np.ndarray]
    shadow: dict[str, np.ndarray]
    rank_out: dict[str, np.ndarray]
    member: np.ndarray
    entry: np.ndarray
    correct_final: np.ndarray
    test_accuracy: dict[str, float]
    seconds: float
    extra: dict[str, Any] = field(default_factory=dict)

    def __repr__(self) -> str:
        c = self.cfg
        return (f"UpdateRun(update={c.update!r}, k={c.k}, n_up={c.n_up}, trials={c.trials}, "
                f"scores={list(self.scores)}, seconds={self.seconds:.1f})")

    def summary(self) -> Table:
        """One row per score type: ``score, trials, candidates, members, test accuracy``."""
        rows = [{"score": name, "trials": int(v.shape[0]), "snapshots": int(v.shape[1]),
                 "candidates": int(v.shape[2]), "members": int(self.member.sum()),
                 **{f"test_acc_{k}": float(a) for k, a in self.test_accuracy.items()}}
                for name, v in self.scores.items()]
        return Table(rows, title=repr(self))

    def to_dict(self) -> dict[str, Any]:
        """Configuration, sizes, test accuracy and time (JSON-safe; no score arrays)."""
        return {"config": asdict(self.cfg), "scores": list(self.scores),
                "candidates": int(self.member.size), "members": int(self.member.sum()),
                "test_accuracy": dict(self.test_accuracy), "seconds": self.seconds}


# --------------------------------------------------------------------------------------------
# data
# --------------------------------------------------------------------------------------------

def load_update_data(path, *, label_column: int | str = 0) -> tuple[np.ndarray, np.ndarray]:
    """The user's data for the update experiment: ``X`` (N, p) float64, ``y`` (N,) in 0..K-1.

    Read with the project's loaders (nothing is downloaded, nothing unpickled): a directory
    holds an IDX pair ``train-images-idx3-ubyte`` / ``train-labels-idx1-ubyte`` (``.gz`` allowed;
    MNIST / Fashion-MNIST layout, pixels scaled to [0, 1]:
    :func:`semi_core.sgd.data.load_fashion_mnist`); a ``.csv`` / ``.txt`` (comma-separated
    numbers, the label in column ``label_column``, an index or, with a header line of column
    names, a name; Purchase-100 style) or an ``.npz`` with
    ``X`` and ``y`` (:func:`semi_core.sgd.data.load_tabular`). Features are used as given (the
    default learning rates are tuned for features in [0, 1], like digits); labels are mapped to
    ``0..K-1`` in sorted order.

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    ValueError
        On a malformed file (the message names it) or fewer than two classes.
    """
    from pathlib import Path

    p = Path(path)
    if p.is_dir():
        x, y = load_fashion_mnist(p)
    else:
        x, y = load_tabular(p, label_column=label_column)
    _, y = np.unique(y, return_inverse=True)
    if int(y.max()) + 1 < 2:
        raise ValueError(f"data {p}: the labels hold a single class")
    return x, y.astype(np.int64)


def _pools(cfg: UpdateConfig, rng: np.random.Generator):
    if cfg.data is not None:
        x, y = load_update_data(cfg.data, label_column=cfg.label_column)
    else:
        x, y = load_digits()
    if cfg.shift_alpha > 0 and cfg.shift.startswith("covariate"):
        x, y, src = _covariate(x, y, cfg.shift, rng)
        n = len(y) // 2
        perm = rng.permutation(n)
        cut1, cut2 = int(0.45 * n), int(0.78 * n)
        pools = {k: np.concatenate([p, p + n]) for k, p in
                 (("learner", perm[:cut1]), ("shadow", perm[cut1:cut2]), ("ref", perm[cut2:]))}
        return x, y, src, pools
    if cfg.shift_alpha > 0:
        if int(y.max()) + 1 != 10:
            raise ValueError(f"shift_alpha > 0 with shift {cfg.shift!r} needs a 10-class task "
                             f"(digit subclasses); the data have {int(y.max()) + 1} classes")
        if cfg.shift == "subpopulation":
            src = np.isin(y, _SRC)
            y = (y >= 5).astype(np.int64)
        else:
            x, y, src = _subpop_pairs(x, y, cfg.shift)
    else:
        src = np.ones(len(y), dtype=bool)
    perm = rng.permutation(len(y))
    cut1, cut2 = int(0.45 * len(y)), int(0.78 * len(y))
    pools = {"learner": perm[:cut1], "shadow": perm[cut1:cut2], "ref": perm[cut2:]}
    return x, y, src, pools


#: Source classes (A, V) of the Hard / Easy subpopulation pairs.
_PAIR_SOURCES = (0, 1)


def subpop_targets(x, y, shift: str) -> list[int]:
    """Targets ``[t_a, t_v]`` of the Hard / Easy pairs for sources :data:`_PAIR_SOURCES`
    (digits: Hard 0 -> 7, 1 -> 6; Easy 0 -> 9, 1 -> 8)."""
    classes = np.unique(y)
    means = {c: x[y == c].mean(axis=0) for c in classes}
    used = set(_PAIR_SOURCES)
    tgt = []
    for s_ in _PAIR_SOURCES:
        cand = [c for c in classes if c not in used]
        dist = [np.linalg.norm(means[c] - means[s_]) for c in cand]
        t = int(cand[int(np.argmax(dist) if shift == "subpop-hard" else np.argmin(dist))])
        used.add(t)
        tgt.append(t)
    return tgt


def _subpop_pairs(x, y, shift: str):
    r"""Hard / Easy subpopulation pairs :math:`(s_a \to t_a), (s_v \to t_v)` (§5.6): sources
    digits 0 and 1; each target is the remaining digit whose mean image is farthest from
    (Hard: the source model does poorly on it) or nearest to (Easy) its source's, chosen
    greedily without reuse. Binary task A = {s_a, t_a} vs V = {s_v, t_v}; only these four
    digits are kept (the returned ``x``, ``y`` are subsets, ``src`` marks the sources)."""
    tgt = subpop_targets(x, y, shift)
    keep = np.isin(y, [*_PAIR_SOURCES, *tgt])
    xa, ya = x[keep], y[keep]
    lab = np.isin(ya, [_PAIR_SOURCES[1], tgt[1]]).astype(np.int64)
    return xa, lab, np.isin(ya, _PAIR_SOURCES)


def _covariate(x, y, shift: str, rng):
    r"""Covariate shift (§5.6; the seed's is CIFAR-10 <-> ImageNet): every record gets a
    shifted twin with the same label, index ``i + N``. Hard: inverted intensities
    :math:`1 - x` (a model trained on the source does poorly on them); Easy: additive
    :math:`\mathcal N(0, 0.1^2)` pixel noise (it does well). Features are expected in [0, 1]."""
    if shift == "covariate-hard":
        xt = 1.0 - x
    else:
        xt = x + 0.1 * rng.standard_normal(x.shape)
    return (np.concatenate([x, xt]), np.concatenate([y, y]),
            np.r_[np.ones(len(y), bool), np.zeros(len(y), bool)])


def _draw(rng, pool, src, cfg: UpdateConfig, n_cand: int, *, replace_ok: bool = False):
    """D0 (source subclasses) and ``n_cand`` candidates from the update distribution."""
    psrc = pool[src[pool]]
    if len(psrc) < cfg.n0 and not replace_ok:
        raise ValueError(f"n0 = {cfg.n0} exceeds the {len(psrc)} source records of a data pool")
    d0 = rng.choice(psrc, size=cfg.n0, replace=len(psrc) < cfg.n0)
    rest = np.setdiff1d(pool, d0)
    if cfg.shift_alpha > 0 and cfg.shift.startswith("covariate"):  # no twin of a D0 record
        n = len(src) // 2
        rest = rest[~np.isin(rest % n, d0 % n)]
    if cfg.shift_alpha > 0:
        n_t = int(rng.binomial(n_cand, cfg.shift_alpha))
        r_src, r_tgt = rest[src[rest]], rest[~src[rest]]
        need = [(r_src, n_cand - n_t, "source"), (r_tgt, n_t, "target")]
    else:
        need = [(rest, n_cand, "")]
    parts = []
    for avail, m, what in need:
        if m > len(avail) and not replace_ok:
            raise ValueError(f"k * n_up = {n_cand // 2} needs {m} {what} candidate records, a "
                             f"data pool has {len(avail)} left after D0 (lower --k / --n-up "
                             "or n0)")
        parts.append(rng.choice(avail, size=m, replace=m > len(avail)))
    cand = np.concatenate(parts)
    return d0, rng.permutation(cand)


# --------------------------------------------------------------------------------------------
# scores
# --------------------------------------------------------------------------------------------

def _ce_losses(fm, thetas, x, y):
    """Cross-entropy of per-replica points: thetas (R, d), x (R, N, p) -> (R, N)."""
    with torch.no_grad():
        return torch.func.vmap(fm.losses)(thetas, x, y)


def _phi(loss: np.ndarray) -> np.ndarray:
    r"""Logit-scaled confidence from cross-entropy: :math:`\phi=\log p-\log(1-p)`,
    :math:`p=e^{-\ell}`, i.e. :math:`-\ell-\log(-\mathrm{expm1}(-\ell))`."""
    ell = np.maximum(loss, 1e-300)  # a loss of exactly 0 would be p = 1: phi = +inf
    return -ell - np.log(-np.expm1(-ell))


def lira_offline_loss(phi_target, phi_ref) -> np.ndarray:
    r"""Offline LiRA as a loss-like score (low = member).

    .. math::

       \ell_{\mathrm{LiRA}}(x) = -\log\Phi\!\Big(\frac{\phi(x)-\hat\mu_{\mathrm{out}}(x)}
       {\hat\sigma_{\mathrm{out}}}\Big) \;\ge 0

    with :math:`\hat\mu_{\mathrm{out}}(x)` the mean of :math:`\phi` over the reference (OUT)
    models and :math:`\hat\sigma^2_{\mathrm{out}}` the per-example variances averaged over
    examples: minus :func:`semi_core.attacks.whitebox.scores.lira_offline` with
    ``variance="global"`` (the project's one LiRA; every reference model is OUT here).

    Parameters
    ----------
    phi_target : array_like (..., N) with N = ``phi_ref.shape[1]`` values in all.
    phi_ref : array_like (M, N), ``M >= 2`` reference models.
    """
    from semi_core.attacks.whitebox.scores import lira_offline

    ref = np.asarray(phi_ref, dtype=float)
    if ref.ndim != 2 or ref.shape[0] < 2:
        raise ValueError(f"phi_ref must be (M >= 2, N), got shape {ref.shape}")
    tgt = np.asarray(phi_target, dtype=float)
    if tgt.size != ref.shape[1]:
        raise ValueError(f"phi_target has {tgt.size} values, phi_ref has N = {ref.shape[1]}")
    if not ref.var(0, ddof=1).mean() > 0:
        raise ValueError("reference models give identical confidences: the OUT variance is 0")
    out = lira_offline(tgt.ravel(), ref.T, np.zeros(ref.T.shape, dtype=bool), variance="global")
    return -out.reshape(tgt.shape)


# --------------------------------------------------------------------------------------------
# the experiment
# --------------------------------------------------------------------------------------------

#: Seconds per replica and per record-epoch of SGD (upper-side, one core; logistic regression,
#: the MLP), from ``benchmarks/bench_updates.py``.
_SECONDS_PER_RECORD_EPOCH = {"logreg": 2e-6, "mlp": 2e-5}


def check_training_work(cfg: UpdateConfig, runs: int, what: str, *, features: int = 64,
                        classes: int = 10) -> None:
    r"""Refuse up front (:func:`semi_core._validation.check_work`) training that cannot be meant.

    .. math::

        \text{bytes} \approx 8\,r\,\big((n_0 + 2kn_{up})\,p + (k+1)\,d_\theta\big),\qquad
        \text{seconds} \approx r\,c\,\big(E_0 n_0 + k E_{up} n_{up}'\big)

    for ``r`` runs of ``p`` features (``features``; 64 for digits), :math:`d_\theta` parameters and ``c`` seconds per
    record-epoch (:math:`n_{up}' = n_0 + k n_{up}` for SGD-Full).
    """
    k, n_up, n0 = cfg.k, cfg.n_up, cfg.n0
    p = check_int(features, "features", minimum=1)
    classes = check_int(classes, "classes", minimum=2)
    d_theta = (p + 1) * classes if cfg.model == "logreg" else \
        (p + 1) * cfg.hidden + (cfg.hidden + 1) * classes
    nbytes = 8.0 * runs * ((n0 + 2 * k * n_up) * p + (k + 1) * d_theta)
    upd = cfg.update_cfg
    per_update = upd.epochs * (n_up if cfg.update == "sgd-new" else n0 + k * n_up)
    seconds = runs * _SECONDS_PER_RECORD_EPOCH[cfg.model] * (cfg.base_epochs * n0 +
                                                              k * per_update)
    check_work(f"{what} ({runs} runs of n0 = {n0}, k = {k}, n_up = {n_up})", nbytes=nbytes,
               seconds=seconds, hint="use fewer trials / reference runs (--trials, --n-ref) or "
                                     "smaller sets")


#: One home for a cluster shared by several games: :func:`semi_core.game.backends.shared`.
shared_executor = shared


class UpdateRunPool:
    r"""Pool mechanism of the update experiment: one run of Alg. 1 per model (:func:`play_pool`).

    The pool's records are the ``2 k n_up`` *candidate slots* of a run. For each membership row
    (exactly ``k n_up`` slots IN), the run draws, from its own generator, :math:`D_0` and one
    candidate record per slot from its data pool (:func:`_draw`); the IN slots, in slot order,
    fill :math:`D_1,\dots,D_k` (``n_up`` each: IN slot ``i`` goes to update
    :math:`\lfloor i/n_{up}\rfloor+1`), the OUT slots are the run's test points. The release of
    a run is its snapshots :math:`f_0..f_k` (flattened) followed by the candidates' record
    indices: what the attacker observes (the models and the candidate set, not which are IN).
    Runs of one chunk are trained together as replicas, each as if alone.
    """

    def __init__(self, cfg: UpdateConfig, fm, theta_init, x_all, y_all, src, pool, *,
                 replace_ok: bool = False):
        self.cfg, self.fm, self.theta_init = cfg, fm, theta_init
        self.x, self.y = x_all, y_all
        self.src = np.asarray(src, dtype=bool)
        self.pool = np.asarray(pool, dtype=np.int64)
        self.replace_ok = bool(replace_ok)
        self.n_records = 2 * cfg.k * cfg.n_up
        self.T = cfg.k + 1

    def params(self) -> dict:
        """Validated parameters (JSON)."""
        return {"mechanism": "update-runs", "update": self.cfg.update, "model": self.cfg.model,
                "k": self.cfg.k, "n_up": self.cfg.n_up, "n0": self.cfg.n0,
                "pool_size": int(self.pool.size), "d": self.fm.d}

    def release_pool(self, rows, rng: np.random.Generator) -> np.ndarray:
        """Train one run per row; ``(m, (k+1) d + 2 k n_up)`` (snapshots, candidate indices)."""
        rows = np.asarray(rows, dtype=bool)
        cfg, k, n_up = self.cfg, self.cfg.k, self.cfg.n_up
        if rows.ndim != 2 or rows.shape[1] != self.n_records or \
                (rows.sum(axis=1) != k * n_up).any():
            raise ValueError(f"each membership row must hold {self.n_records} candidate slots, "
                             f"exactly k * n_up = {k * n_up} of them IN")
        m = rows.shape[0]
        rngs = [np.random.default_rng(s) for s in
                np.random.SeedSequence(rng.integers(2**63, size=4).tolist()).spawn(m)]
        base, upd, cand = [], [], []
        for r, g in enumerate(rngs):  # each run's data from its own generator (not a game loop)
            d0, c = _draw(g, self.pool, self.src, cfg, self.n_records, replace_ok=self.replace_ok)
            base.append(d0)
            upd.append(c[rows[r]])
            cand.append(c)
        tx = lambda idx: torch.as_tensor(self.x[np.stack(idx)], dtype=torch.float64)  # noqa: E731
        ty = lambda idx: torch.as_tensor(self.y[np.stack(idx)], dtype=torch.long)  # noqa: E731
        snaps = run_updates(self.fm, self.theta_init, tx(base), ty(base),
                            tx(upd).reshape(m, k, n_up, -1), ty(upd).reshape(m, k, n_up),
                            update=cfg.update, base_cfg=cfg.base_cfg, update_cfg=cfg.update_cfg,
                            rngs=rngs)
        return np.concatenate([snaps.numpy().reshape(m, -1),
                               np.stack(cand).astype(np.float64)], axis=1)

    def snapshots(self, models) -> torch.Tensor:
        """The snapshots :math:`f_0..f_k` of released runs, ``(m, k+1, d)``."""
        models = np.asarray(models, dtype=np.float64)
        return torch.as_tensor(models[:, :self.T * self.fm.d].reshape(-1, self.T, self.fm.d))

    def candidates(self, models) -> np.ndarray:
        """The candidates' record indices of released runs, ``(m, 2 k n_up)``."""
        return np.asarray(models)[:, self.T * self.fm.d:].astype(np.int64)


@dataclass(frozen=True)
class CandidateLossScorer:
    """Pool scorer of :class:`UpdateRunPool`: the cross-entropy ``loss@i`` of each candidate on
    snapshot :math:`f_i` (``i = 0..k``; loss-like, low = member: the combiners of
    :mod:`semi_core.stats.update_combination` turn them into scores) and ``gap`` (1 when the
    final model classifies the candidate correctly, the Gap baseline)."""

    mech: UpdateRunPool

    @property
    def names(self) -> tuple[str, ...]:
        return (*(f"loss@{i}" for i in range(self.mech.T)), "gap")

    def __call__(self, view, t, records, rng) -> dict[str, np.ndarray]:
        mech = self.mech
        th = mech.snapshots(view.models[t:t + 1])[0]                        # (k+1, d)
        idx = mech.candidates(view.models[t:t + 1])[0][records]
        x = torch.as_tensor(mech.x[idx], dtype=torch.float64)
        y = torch.as_tensor(mech.y[idx], dtype=torch.long)
        with torch.no_grad():
            out = {f"loss@{i}": mech.fm.losses(th[i], x, y).numpy() for i in range(mech.T)}
            pred = _forward(mech.fm, th[-1], x).argmax(-1)
        out["gap"] = (pred == y).numpy().astype(float)
        return out


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
                            "executor": res_t.metadata["executor"]})


def _forward(fm, theta, x):
    params = {**fm.frozen, **fm.unflatten(theta)}
    return torch.func.functional_call(fm.module, params, (x,))


# --------------------------------------------------------------------------------------------
# attacks and metrics
# --------------------------------------------------------------------------------------------

def _mean_se(vals) -> dict[str, float]:
    v = np.asarray([x for x in vals if x is not None], dtype=float)
    if v.size == 0:
        return {"mean": None, "se": None, "n": 0}
    se = float(v.std(ddof=1) / np.sqrt(v.size)) if v.size > 1 else None
    return {"mean": float(v.mean()), "se": se, "n": int(v.size)}


#: What the no-update baselines are (the seed's "Loss" column is this median rule, not Yeom et
#: al.'s threshold at the average training loss).
NO_UPDATE_RULES = {
    "loss": "median threshold on the final model's cross-entropy: the half of the trial's "
            "candidates with the lowest loss on f_k called IN (top 10 % for precision); not "
            "Yeom et al.'s threshold at the average training loss",
    "gap": "Gap attack (Yeom et al.'s baseline): IN iff f_k classifies the candidate correctly",
}


def fewer_trials_notes(summary: dict, trials: int) -> list[str]:
    """One line per metric of ``summary`` averaged over fewer than ``trials`` trials (precision
    is undefined in a trial whose threshold calls no candidate IN: that trial is skipped)."""
    notes = []

    def walk(d, path):
        for key, v in d.items():
            if isinstance(v, dict) and {"mean", "se", "n"} <= set(v):
                if v["n"] < trials:
                    notes.append(f"{'.'.join((*path, key))} is averaged over {v['n']} of "
                                 f"{trials} trials (undefined in the others: no candidate "
                                 "called IN)")
            elif isinstance(v, dict) and key != "config":
                walk(v, (*path, key))

    walk(summary, ())
    return notes


def _threshold(rule: str, r: int, own_bf, shadow_bf, rank_bf, fraction_in: float) -> float:
    if rule == "batch":
        return batch_threshold(own_bf[r], fraction_in)
    if rule == "transfer":
        return batch_threshold(shadow_bf[r], fraction_in)
    return rank_threshold(rank_bf[r], fraction_in)


def summarize(run: UpdateRun, *, score: str = "loss", combiner: str = "diff",
              threshold: str = "batch", fpr=(0.01, 0.1), n_bootstrap: int = 200,
              collisions: str = "exclusive") -> dict[str, Any]:
    """Every metric the issue asks for, for one (score, combiner, threshold) choice.

    Returns a JSON-ready dict: ``mi_accuracy`` (Back-Front at the chosen threshold, median
    rule), ``precision`` / ``recall`` at the seed's 10 % rule for Batch/Transfer/Rank,
    ``delta_mi_accuracy``, ``entry_accuracy`` with its ``entry_baselines``, ``auc`` (mean and SE
    over trials, plus pooled with a bootstrap interval), ``tpr_at_fpr`` (pooled, intervals), the
    no-update baselines ``loss`` / ``gap`` / ``lira`` on :math:`f_k` and the run time. All
    means come with standard errors over trials.

    Threshold rules: ``batch`` and ``transfer`` call the top half (accuracy) / top 10 %
    (precision) of the trial's (resp. the shadow run's) candidates IN; ``rank`` puts the
    threshold at the OUT median (accuracy, FPR 0.5) / the OUT 90th percentile (precision, the
    seed's "top 10 % of the test data") of the attacker's known-OUT points on the target
    snapshots. ``collisions``: Delta's rule for a point several updates would take
    (:func:`~semi_core.stats.update_combination.assign_top_n`).
    """
    if score not in run.scores:
        raise ValueError(f"score must be one of {tuple(run.scores)}, got {score!r}")
    if combiner not in COMBINERS:
        raise ValueError(f"combiner must be one of {COMBINERS}, got {combiner!r}")
    if threshold not in THRESHOLDS:
        raise ValueError(f"threshold must be one of {THRESHOLDS}, got {threshold!r}")
    if collisions not in COLLISION_RULES:
        raise ValueError(f"collisions must be one of {COLLISION_RULES}, got {collisions!r}")
    cfg = run.cfg
    L, Ls, Lr = run.scores[score], run.shadow[score], run.rank_out[score]
    c = cfg.c
    bf = back_front_scores(np.moveaxis(L, 1, -1), combiner, c=c)                       # (R, N)
    bf_sh = back_front_scores(np.moveaxis(Ls, 1, -1), combiner, c=c)
    bf_rk = back_front_scores(np.moveaxis(Lr, 1, -1), combiner, c=c)
    m = run.member
    R = L.shape[0]
    acc, prec10, rec10, aucs, d_acc, ent, bf_tpr = [], [], [], [], [], [], []
    no_upd_loss, gap, loss_p10, loss_r10 = [], [], [], []
    for r in range(R):
        thr = _threshold(threshold, r, bf, bf_sh, bf_rk, 0.5)
        dm = decision_metrics(bf[r, m], bf[r, ~m], thr)
        acc.append(dm["accuracy"])
        bf_tpr.append(dm["recall"])
        d10 = decision_metrics(bf[r, m], bf[r, ~m],
                               _threshold(threshold, r, bf, bf_sh, bf_rk, 0.1))
        prec10.append(d10["precision"])
        rec10.append(d10["recall"])
        aucs.append(roc_auc(bf[r, m], bf[r, ~m]))
        ps = pair_scores(np.moveaxis(L[r], 0, -1), combiner, c=c)                     # (N, k)
        assigned = assign_top_n(ps, cfg.n_up, collisions=collisions)
        d_acc.append(float(np.mean((assigned > 0) == m)))
        ent.append(entry_accuracy(assigned, run.entry))
        fin = -L[r, -1]
        no_upd_loss.append(decision_metrics(fin[m], fin[~m], batch_threshold(fin, 0.5))
                           ["accuracy"])
        l10 = decision_metrics(fin[m], fin[~m], batch_threshold(fin, 0.1))
        loss_p10.append(l10["precision"])
        loss_r10.append(l10["recall"])
        cor = run.correct_final[r]
        gap.append(0.5 * (cor[m].mean() + 1.0 - cor[~m].mean()))
    pooled_m = bf[:, m].ravel()
    pooled_n = bf[:, ~m].ravel()
    rm = roc_metrics(pooled_m, pooled_n, fpr=fpr, n_bootstrap=n_bootstrap, seed=cfg.seed)
    p_mi = float(np.mean(bf_tpr))
    out = {
        "config": asdict(cfg),
        "attack": {"score": score, "combiner": combiner, "threshold": threshold,
                   "multi_update": "back-front (membership), delta (entry)",
                   "delta_collisions": collisions},
        "mi_accuracy": _mean_se(acc),
        "precision_at_10pct": _mean_se(prec10),
        "recall_at_10pct": _mean_se(rec10),
        "delta_mi_accuracy": _mean_se(d_acc),
        "entry_accuracy": _mean_se(ent),
        "entry_baselines": entry_baselines(cfg.k, p_mi),
        "auc": {**_mean_se(aucs), "pooled": rm.auc, "pooled_interval": rm.auc_interval},
        "tpr_at_fpr": {f"{f:g}": {"tpr": t, "interval": iv, "resolvable": ok} for f, t, iv, ok in
                       zip(rm.fpr_levels, rm.tpr_at_fpr, rm.tpr_at_fpr_interval, rm.resolvable,
                           strict=True)},
        "fpr_resolution": rm.fpr_resolution,
        "no_update": {"loss": _mean_se(no_upd_loss), "gap": _mean_se(gap),
                      "loss_precision_at_10pct": _mean_se(loss_p10),
                      "loss_recall_at_10pct": _mean_se(loss_r10),
                      "rules": NO_UPDATE_RULES},
        "utility": run.test_accuracy,
        "trials": R,
        "per_trial": {"mi_accuracy": [float(v) for v in acc],
                      "no_update_loss": [float(v) for v in no_upd_loss],
                      "no_update_gap": [float(v) for v in gap]},
        "seconds": run.seconds,
    }
    out["notes"] = fewer_trials_notes(out, R)
    if "lira" in run.scores:
        fin = -run.scores["lira"][:, -1]
        out["no_update"]["lira"] = _mean_se(
            [decision_metrics(fin[r, m], fin[r, ~m], batch_threshold(fin[r], 0.5))["accuracy"]
             for r in range(R)])
    return out


def game_result(run: UpdateRun, *, score: str = "loss", combiner: str = "diff") -> GameResult:
    """The candidates of every trial as one membership game (:class:`GameResult`).

    ``member`` is the candidate's truth, ``tau`` its update index (1..k; OUT candidates get the
    index the Fig. 2 experiment draws for them, uniform on 1..k from the run's seed), stats:
    ``back-front`` (the chosen combiner), ``final-loss`` (no update, :math:`-\\ell_k`).
    """
    L = run.scores[score]
    R = L.shape[0]
    bf = back_front_scores(np.moveaxis(L, 1, -1), combiner, c=run.cfg.c)
    rng = np.random.default_rng(as_seed_sequence(run.cfg.seed).spawn(5)[4])
    tau = np.where(run.member[None, :], run.entry[None, :],
                   rng.integers(1, run.cfg.k + 1, size=(R, run.member.size)))
    return GameResult(member=np.tile(run.member, R), tau=tau.ravel(),
                      stats={"back-front": bf.ravel(), "final-loss": -L[:, -1].ravel()},
                      seed=run.cfg.seed,
                      metadata={"game": "model-updates", "score": score, "combiner": combiner,
                                **{k_: v for k_, v in asdict(run.cfg).items()}})


def with_overrides(cfg: UpdateConfig, **kw) -> UpdateConfig:
    """A copy of ``cfg`` with some fields replaced (validated again)."""
    return replace(cfg, **kw)
