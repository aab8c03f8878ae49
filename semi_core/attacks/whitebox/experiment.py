r"""The attack experiment of ``iha_parameters_vs_loss`` §4 on bundled data, played by the one
game runner (:func:`semi_core.game.play.play_pool`).

Protocol (seed §4.1, after Carlini et al. 2022): ``M`` models are trained with heavy-ball SGD
(:mod:`semi_core.sgd.momentum`; seed: :math:`\lambda=0.01,\ \mu=0.9,\ \alpha=5\cdot10^{-4}`),
each pool record in a model's training set with probability 1/2: the pool mechanism is a
:class:`~semi_core.attacks.whitebox.mechanism.TrainedModelMechanism` (batched training,
:mod:`semi_core.sgd.reference_models`). Model ``t`` (``t < target_models``) is a target; the
other ``M - 1`` are its reference models. The attacks are pool scorers: :class:`WhiteBoxScorer`
(IHA with exact or CG iHVPs, LOSS, SIF) and :class:`LiRAScorer` (LiRA online/offline). The
member bits and scores form one :class:`~semi_core.game.result.GameResult` (a one-shot,
``T = 1`` membership game), so ROC metrics (:func:`semi_core.audit.roc.roc_metrics`) and
certified :math:`\underline\varepsilon` (:func:`semi_core.audit.games.audit_game_result`)
apply as for any other game.

The leave-one-out attacks (L-attack, LiRA-L) are a second population game on the same runner:
its records are the first ``loo_targets`` targets of model 0, the rest of model 0's training set
is in every training set, and its membership matrix (chosen, not drawn) holds ``loo_models``
rows :math:`D` (model 0's own row: the leave-one-out set of every non-member) and
``loo_models`` rows :math:`D\setminus\{z\}` per member :math:`z`. :class:`LeaveOneOutScorer`
compares model 0's loss / confidence on :math:`z` with those models'. The result on that subset
(with every other attack's scores on it) is ``AttackRun.loo_result``.

Seeds: the pool subsample from stream ``(seed, 0)``, the population game from ``(seed, 1)``,
the leave-one-out game from ``(seed, 2)`` (:func:`semi_core._rng.child_seed`); the same seed
gives the same result on every executor (the result depends on ``chunk_size``, the models
trained per task).
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field, replace
from typing import ClassVar

import numpy as np
import torch

from semi_core._rng import as_seed_sequence, child_seed
from semi_core._table import ResultDisplay, Table
from semi_core._validation import check_int, check_positive, check_probability, check_work
from semi_core.attacks._budget import _C_ACT, attack_budget, hvp_rows, model_shape
from semi_core.audit.roc import roc_metrics
from semi_core.game.backends import Executor
from semi_core.game.play import PoolView, play_pool
from semi_core.game.result import GameResult
from semi_core.sgd.data import ATTACK_DATASETS, load_bundled, load_fashion_mnist, load_tabular
from semi_core.sgd.hessian import CGInverse, EigenInverse, hvp_operator, mean_loss_hessian
from semi_core.sgd.momentum import SGDConfig
from semi_core.sgd.reference_models import ATTACK_MODELS, build_attack_model

from .mechanism import FORWARD_AD_LOCK, TrainedModelMechanism
from .scores import (
    iha_score,
    iha_terms,
    l_attack,
    lira_l,
    lira_offline,
    lira_online,
    loss_score,
    rmia,
    sif_score,
)

__all__ = ["ATTACKS", "LOO_ATTACKS", "WHITEBOX_ATTACKS", "LIRA_ATTACKS", "AttackConfig",
           "WhiteBox", "WhiteBoxScorer", "LiRAScorer", "RMIAScorer", "LeaveOneOutScorer",
           "AttackRun", "RMIA_ATTACKS",
           "default_sgd", "run_attacks", "attack_metrics", "agreement_matrix", "parse_attacks",
           "TRAIN_CHUNK"]

#: Attack names (``iha`` uses ``AttackConfig.hessian``; ``-global``: one variance per side).
ATTACKS = ("iha", "iha-exact", "iha-cg", "loss", "sif", "lira-online", "lira-online-global",
           "lira-offline", "lira-offline-global", "rmia", "rmia-offline", "l-attack", "lira-l")
#: Datasets read from local files (``data_path``): IDX train files (MNIST / Fashion-MNIST;
#: ``idx-odd``: label mod 2, the seed's MNIST-Odd) and CSV / npz tables (Purchase-100 style).
FILE_DATASETS = ("idx", "idx-odd", "file")

#: Attacks that need leave-one-out reference models (scored on the LOO subset only).
LOO_ATTACKS = ("l-attack", "lira-l")
#: Attacks of :class:`WhiteBoxScorer` (the target model's weights only).
WHITEBOX_ATTACKS = ("iha", "iha-exact", "iha-cg", "loss", "sif")
#: Attacks of :class:`LiRAScorer` (the target and its reference models' confidences).
LIRA_ATTACKS = ("lira-online", "lira-online-global", "lira-offline", "lira-offline-global")
#: Loss conventions of ``logreg-mse``: the auditor's loss over the package's
#: :math:`\tfrac12(\sigma-y)^2`. ``"half"``: the package's; ``"mean"``: the authors' code
#: (``torch.nn.MSELoss``, :math:`(\sigma-y)^2`), with lr and weight decay as declared for it.
MSE_CONVENTIONS = {"half": 1.0, "mean": 2.0}
#: Attacks of :class:`RMIAScorer` (Zarifzadeh et al. 2024 on the same reference models).
RMIA_ATTACKS = ("rmia", "rmia-offline")
#: Models trained per task of the runner (one batched training call; part of the seeding).
TRAIN_CHUNK = 64


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
    hidden: int | tuple[int, ...] = 16
    loo_targets: int = 100
    loo_models: int = 8
    cg_tol: float = 1e-10
    member_prob: float = 0.5
    rmia_gamma: float = 1.0
    rmia_a: float = 0.3
    mse_convention: str = "half"
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
        if isinstance(self.hidden, list):
            object.__setattr__(self, "hidden", tuple(self.hidden))
        for h in (self.hidden if isinstance(self.hidden, tuple) else (self.hidden,)):
            check_int(h, "hidden", minimum=1)
        if isinstance(self.hidden, tuple) and not self.hidden:
            raise ValueError("hidden must hold at least one width")
        check_int(self.loo_targets, "loo_targets", minimum=2)
        check_int(self.loo_models, "loo_models", minimum=2)
        check_positive(self.cg_tol, "cg_tol")
        check_probability(self.member_prob, "member_prob")
        check_positive(self.rmia_gamma, "rmia_gamma")
        if self.mse_convention not in MSE_CONVENTIONS:
            raise ValueError(f"mse_convention must be one of {list(MSE_CONVENTIONS)}, got "
                             f"{self.mse_convention!r}")
        if self.mse_convention != "half" and self.model != "logreg-mse":
            raise ValueError("mse_convention applies only to model 'logreg-mse'")
        if not (isinstance(self.rmia_a, int | float) and 0.0 <= self.rmia_a <= 1.0):
            raise ValueError(f"rmia_a must be in [0, 1], got {self.rmia_a!r}")
        if self.sgd is None:
            object.__setattr__(self, "sgd", default_sgd(self.dataset, self.model))

    @property
    def loss_scale(self) -> float:
        """The auditor's loss over the trained loss (:data:`MSE_CONVENTIONS`)."""
        return MSE_CONVENTIONS[self.mse_convention]

    def train_sgd(self) -> SGDConfig:
        r"""The configuration the models are trained with, on the package's loss
        :math:`\ell=\tfrac12(\sigma-y)^2`: for ``mse_convention="mean"`` (SGD with
        :math:`(\lambda,\alpha)` on :math:`2\ell`) the identical run
        :math:`(2\lambda,\alpha/2)` on :math:`\ell` (momentum buffer scaled by 2, same
        weights)."""
        s = self.loss_scale
        return self.sgd if s == 1.0 else replace(self.sgd, lr=s * self.sgd.lr,
                                                  weight_decay=self.sgd.weight_decay / s)

    def to_dict(self) -> dict:
        out = asdict(self)
        out["sgd"] = self.sgd.to_dict()
        return out


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
    if cfg.pool_size is not None:
        check_int(cfg.pool_size, "pool_size", minimum=4, maximum=x.shape[0])
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


#: Training records per per-sample-gradient call of :attr:`WhiteBox.grad_l1`.
_GRAD_CHUNK = 256


class _RowChunks:
    """``V -> matvec(V)`` applied to ``rows`` rows at a time (bounds the batched HVP's
    activations, :func:`semi_core.attacks._budget.hvp_rows`; each row's product is its own)."""

    def __init__(self, matvec, rows: int):
        self.matvec, self.rows = matvec, int(rows)

    def __call__(self, V):
        if V.ndim == 1 or V.shape[0] <= self.rows:
            return self.matvec(V)
        return torch.cat([self.matvec(V[a:a + self.rows])
                          for a in range(0, V.shape[0], self.rows)])


def _model_shape_of(fm) -> tuple[int, int]:
    """``(d, A)`` of a built model (:func:`semi_core.attacks._budget.model_shape`): features,
    hidden widths and outputs read from its ``Linear`` layers."""
    lin = [m for m in fm.module.modules() if isinstance(m, torch.nn.Linear)]
    widths = tuple(m.out_features for m in lin)
    return int(fm.d), lin[0].in_features + _C_ACT * sum(widths)


class _Scaled:
    """``V -> scale * matvec(V)``."""

    def __init__(self, matvec, scale: float):
        self.matvec, self.scale = matvec, scale

    def __call__(self, V):
        return self.scale * self.matvec(V)


class WhiteBox:
    r"""White-box quantities of one target model, computed once and cached: losses and
    per-sample gradients of the targets, the mean training gradient :math:`\nabla L_1`, the
    per-sample training gradients (for the LOO-fraction variant), the exact Hessian of the mean
    training loss and the matrix-free HVP operator.

    Parameters
    ----------
    view : PoolView
        The population game (its mechanism a :class:`TrainedModelMechanism`).
    t : int
        The target model.
    records : array_like of int
        Pool records scored (indices into the mechanism's candidates).
    damping, cg_tol : float
        Default damping of the inverse Hessians and the CG tolerance.
    loss_scale : float
        The auditor's loss is ``loss_scale`` times the model's (``2``: the authors' MSE
        convention :math:`(\sigma-y)^2` for a model trained on :math:`\tfrac12(\sigma-y)^2`):
        losses, gradients, the Hessian and HVPs are scaled by it, so the damping applies to the
        scaled Hessian (:data:`MSE_CONVENTIONS`).
    sgd : SGDConfig, optional
        The hyper-parameters :math:`(\lambda,\mu,\alpha)` of Eq. 8 in the auditor's loss
        convention (default: the mechanism's training configuration).
    """

    def __init__(self, view: PoolView, t: int, records, *, damping: float = 0.2,
                 cg_tol: float = 1e-10, loss_scale: float = 1.0, sgd: SGDConfig | None = None):
        mech = view.mech
        self.mech, self.t = mech, int(t)
        self.fm = fm = mech.local_model()        # this object's own module (thread safety)
        self.sgd: SGDConfig = mech.cfg if sgd is None else sgd
        self.loss_scale = check_positive(loss_scale, "loss_scale")
        self.damping, self.cg_tol = float(damping), float(cg_tol)
        records = np.asarray(records, dtype=np.int64)
        self.targets = mech.candidates[records]
        self.theta = torch.as_tensor(view.models[self.t])
        self.train_idx = mech.training_set(view.membership[self.t])
        self.n = int(self.train_idx.size)
        self.member = view.membership[self.t, records]
        with torch.no_grad():
            self.losses = self.loss_scale * fm.losses(
                self.theta, mech.x[self.targets], mech.y[self.targets]).numpy()
        self._grads = self._train_grads = self._grad_l1 = None
        self._H = None
        self.seconds: dict[str, float] = {}

    # gradients are computed on first use: LOSS needs none, IHA and SIF the targets' and the
    # mean training gradient, only the LOO-fraction variant every training record's
    @property
    def grads(self) -> torch.Tensor:
        """Per-sample gradients of the targets ``(k, d)`` (cached)."""
        if self._grads is None:
            x, y = self.mech.x[self.targets], self.mech.y[self.targets]
            with torch.no_grad():
                self._grads = self.loss_scale * self.fm.per_sample_grads(self.theta, x, y)
        return self._grads

    @property
    def train_grads(self) -> torch.Tensor:
        """Per-sample gradients of the training set ``(n, d)`` (cached)."""
        if self._train_grads is None:
            x, y = self.mech.x[self.train_idx], self.mech.y[self.train_idx]
            with torch.no_grad():
                self._train_grads = self.loss_scale * self.fm.per_sample_grads(self.theta, x, y)
        return self._train_grads

    @property
    def grad_l1(self) -> torch.Tensor:
        r"""Mean training gradient :math:`\nabla L_1` ``(d,)``, summed over chunks of
        :data:`_GRAD_CHUNK` records (no ``n x d`` array)."""
        if self._grad_l1 is None:
            if self._train_grads is not None:
                self._grad_l1 = self._train_grads.mean(0)
            else:
                total = torch.zeros(self.fm.d, dtype=self.theta.dtype)
                with torch.no_grad():
                    for a in range(0, self.n, _GRAD_CHUNK):
                        rows = self.train_idx[a:a + _GRAD_CHUNK]
                        total += self.fm.per_sample_grads(self.theta, self.mech.x[rows],
                                                          self.mech.y[rows]).sum(0)
                self._grad_l1 = self.loss_scale * total / self.n
        return self._grad_l1

    def hessian(self) -> torch.Tensor:
        """Exact :math:`\\nabla^2L` on the target's training set (cached)."""
        if self._H is None:
            t0 = time.perf_counter()
            self._H = self.loss_scale * mean_loss_hessian(
                self.fm, self.theta, self.mech.x[self.train_idx], self.mech.y[self.train_idx])
            self.seconds["hessian"] = time.perf_counter() - t0
        return self._H

    def inverse(self, method: str = "exact", *, epsilon: float | None = None,
                lowrank: bool = False):
        """``EigenInverse`` (damping or low-rank) or a ``CGInverse`` on the HVP operator."""
        eps = self.damping if epsilon is None else epsilon
        if method == "exact":
            return EigenInverse(self.hessian(), epsilon=eps,
                                method="lowrank" if lowrank else "damping")
        if method == "cg":
            hvp = hvp_operator(self.fm, self.theta, self.mech.x[self.train_idx],
                               self.mech.y[self.train_idx])
            if self.loss_scale != 1.0:
                hvp = _Scaled(hvp, self.loss_scale)
            _, act = _model_shape_of(self.fm)
            return CGInverse(_RowChunks(hvp, hvp_rows(self.n, act)), damping=eps,
                             tol=self.cg_tol)
        raise ValueError(f"method must be 'exact' or 'cg', got {method!r}")

    def iha_terms(self, inv, *, loo_fraction: float = 1.0, rng=None) -> dict[str, np.ndarray]:
        r"""Eq. 8 terms; ``loo_fraction < 1`` estimates :math:`\nabla L_0` from a random
        fraction of :math:`D\setminus\{z\}` per target (App. F, Table 9), scaled to the full
        :math:`1/n` normalisation."""
        sgd = self.sgd
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


# --------------------------------------------------------------------------------- scorers
def _iha_method(name: str, default: str) -> str:
    return {"iha-exact": "exact", "iha-cg": "cg"}.get(name, default)


class _AttackScorer:
    """What the pool scorers of this module share: ``attacks``, drawn from the class's
    ``FAMILY``, are also the names of the scores they return."""

    FAMILY: ClassVar[tuple[str, ...]] = ()
    attacks: tuple[str, ...]

    def _check_attacks(self) -> None:
        self.attacks = tuple(self.attacks)
        bad = [a for a in self.attacks if a not in self.FAMILY]
        if not self.attacks or bad:
            raise ValueError(f"attacks must be drawn from {list(self.FAMILY)}, got "
                             f"{list(bad or self.attacks)}")

    @property
    def names(self) -> tuple[str, ...]:
        return self.attacks


@dataclass
class WhiteBoxScorer(_AttackScorer):
    r"""Pool scorer of the white-box attacks on target model ``t``: IHA (seed Eq. 8; ``iha``
    with ``hessian``, ``iha-exact`` / ``iha-cg`` explicitly), LOSS and SIF. One
    :class:`WhiteBox` per target model serves every attack (gradients and the inverse Hessian
    are computed once). Calls hold :data:`~semi_core.attacks.whitebox.mechanism.FORWARD_AD_LOCK`
    (forward-mode AD is process-wide in PyTorch), so on threads the white-box scoring of target
    models runs one at a time; on Dask workers (processes) it runs in parallel.

    ``kept`` receives ``t -> (WhiteBox, seconds per attack)`` where the scorer runs in this
    process (in-process or threads; a Dask worker's copy is not sent back).
    """

    FAMILY: ClassVar[tuple[str, ...]] = WHITEBOX_ATTACKS
    attacks: tuple[str, ...]
    hessian: str = "exact"
    damping: float = 0.2
    cg_tol: float = 1e-10
    loss_scale: float = 1.0
    sgd: SGDConfig | None = None
    kept: dict = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self):
        self._check_attacks()
        if self.hessian not in ("exact", "cg"):
            raise ValueError(f"hessian must be 'exact' or 'cg', got {self.hessian!r}")
        if not (np.isfinite(self.damping) and self.damping >= 0):
            raise ValueError(f"damping must be finite and >= 0, got {self.damping!r}")
        check_positive(self.cg_tol, "cg_tol")

    def __call__(self, view: PoolView, t: int, records, rng) -> dict[str, np.ndarray]:
        with FORWARD_AD_LOCK:   # the Hessian, HVPs and CG use forward-mode AD (process-wide)
            return self._score(view, t, records)

    def _score(self, view: PoolView, t: int, records) -> dict[str, np.ndarray]:
        t0 = time.perf_counter()
        wb = WhiteBox(view, t, records, damping=self.damping, cg_tol=self.cg_tol,
                      loss_scale=self.loss_scale, sgd=self.sgd)
        seconds = {"gradients": time.perf_counter() - t0}
        invs: dict[str, object] = {}
        out = {}
        for a in self.attacks:
            t0 = time.perf_counter()
            if a == "loss":
                s = loss_score(wb.losses)
            else:
                method = _iha_method(a, self.hessian)
                if method not in invs:
                    invs[method] = wb.inverse(method)
                inv = invs[method]
                s = wb.sif(inv) if a == "sif" else iha_score(wb.iha_terms(inv), lr=wb.sgd.lr)
            seconds[a] = time.perf_counter() - t0
            out[a] = np.asarray(s, dtype=float)
        seconds.update({f"hessian@model{t}": v for k, v in wb.seconds.items() if k == "hessian"})
        self.kept[int(t)] = (wb, seconds)
        return out


@dataclass
class LiRAScorer(_AttackScorer):
    r"""Pool scorer of LiRA (Carlini et al. 2022; seed §4.1) on target model ``t``: the
    logit-scaled confidences of every model on the records, the other models as reference
    models, IN / OUT by the membership matrix; online (Gaussian LR) or offline (OUT tail),
    per-example or ``-global`` variance (:func:`~semi_core.attacks.whitebox.scores.lira_online`,
    :func:`~semi_core.attacks.whitebox.scores.lira_offline`)."""

    FAMILY: ClassVar[tuple[str, ...]] = LIRA_ATTACKS
    attacks: tuple[str, ...]
    kept: dict = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self):
        self._check_attacks()

    def __call__(self, view: PoolView, t: int, records, rng) -> dict[str, np.ndarray]:
        mech = view.mech
        records = np.asarray(records, dtype=np.int64)
        t0 = time.perf_counter()
        phi_all = mech.confidences(view.models, mech.candidates[records])   # (M, k)
        refs = view.reference_models(t)
        phi, ref_phi = phi_all[t], phi_all[refs].T
        ref_in = view.membership[np.ix_(refs, records)].T
        seconds = {"confidences": time.perf_counter() - t0}
        out = {}
        for a in self.attacks:
            t0 = time.perf_counter()
            fn = lira_online if a.startswith("lira-online") else lira_offline
            out[a] = np.asarray(fn(phi, ref_phi, ref_in, variance="global" if
                                   a.endswith("global") else "per-example"), dtype=float)
            seconds[a] = time.perf_counter() - t0
        self.kept[int(t)] = seconds
        return out


@dataclass
class RMIAScorer(_AttackScorer):
    r"""Pool scorer of RMIA (Zarifzadeh et al. 2024) on target model ``t``, on the same
    reference models as LiRA (every other model of the population game; IN / OUT by the
    membership matrix): :func:`~semi_core.attacks.whitebox.scores.rmia` with ``rmia`` the
    online marginal (all reference models) and ``rmia-offline`` the OUT models with the
    paper's ``a`` correction.

    Population samples :math:`z`: the pool records outside target ``t``'s training set (the
    auditor's known non-members; a scored record is never compared with itself), at most
    ``population`` of them drawn with the scorer's ``rng`` (``None``: all); offline, those
    with no OUT reference model are left out of the population (a scored record without one is
    refused). Probabilities are
    :math:`\sigma(\phi)` of the logit-scaled confidences LiRA uses.
    """

    FAMILY: ClassVar[tuple[str, ...]] = RMIA_ATTACKS
    attacks: tuple[str, ...]
    gamma: float = 1.0
    offline_a: float = 0.3
    population: int | None = None
    kept: dict = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self):
        self._check_attacks()
        check_positive(self.gamma, "gamma")
        if not (isinstance(self.offline_a, int | float) and 0.0 <= self.offline_a <= 1.0):
            raise ValueError(f"offline_a must be in [0, 1], got {self.offline_a!r}")
        if self.population is not None:
            check_int(self.population, "population", minimum=1)

    def __call__(self, view: PoolView, t: int, records, rng) -> dict[str, np.ndarray]:
        mech = view.mech
        records = np.asarray(records, dtype=np.int64)
        t0 = time.perf_counter()
        pop = np.flatnonzero(~view.membership[t])
        if self.population is not None and self.population < pop.size:
            pop = np.sort(rng.choice(pop, size=self.population, replace=False))
        if pop.size < 2:
            raise ValueError(f"RMIA needs >= 2 population records outside target model {t}'s "
                             f"training set, got {pop.size}")
        union, inv = np.unique(np.concatenate([records, pop]), return_inverse=True)
        phi_all = mech.confidences(view.models, mech.candidates[union])   # (M, u)
        refs = view.reference_models(t)
        ix, iz = inv[:records.size], inv[records.size:]
        pos = {int(r): j for j, r in enumerate(pop)}
        exclude = np.array([pos.get(int(r), -1) for r in records], dtype=np.int64)
        ref_in = view.membership[np.ix_(refs, union)].T
        out, seconds = {}, {"confidences": time.perf_counter() - t0}
        for a in self.attacks:
            t0 = time.perf_counter()
            keep = np.ones(iz.size, dtype=bool)
            if a == "rmia-offline":   # population samples need an OUT model (all, in practice)
                keep = (~ref_in[iz]).any(axis=1)
            renum = np.cumsum(keep) - 1
            ex = np.where((exclude >= 0) & keep[np.maximum(exclude, 0)],
                          renum[np.maximum(exclude, 0)], -1)
            out[a] = rmia(phi_all[t, ix], phi_all[refs][:, ix].T, ref_in[ix],
                          phi_all[t, iz[keep]], phi_all[refs][:, iz[keep]].T, ref_in[iz[keep]],
                          gamma=self.gamma,
                          offline_a=self.offline_a if a == "rmia-offline" else None,
                          exclude=ex)
            seconds[a] = time.perf_counter() - t0
        self.kept[int(t)] = seconds
        return out


@dataclass
class LeaveOneOutScorer(_AttackScorer):
    r"""Pool scorer of the leave-one-out attacks (seed §4.4) on the leave-one-out game.

    For record :math:`z` the reference models are those trained on
    :math:`D\setminus\{z\}`: the rows of the membership matrix equal to row ``t``'s with
    :math:`z` left out (:math:`D` itself for a non-member). The L-attack compares the attacked
    model's loss ``target_losses`` on :math:`z` with theirs, LiRA-L its confidence
    ``target_phi`` with a Gaussian fit of theirs (:func:`~semi_core.attacks.whitebox.scores.
    l_attack`, :func:`~semi_core.attacks.whitebox.scores.lira_l`).
    """

    FAMILY: ClassVar[tuple[str, ...]] = LOO_ATTACKS
    attacks: tuple[str, ...]
    target_losses: np.ndarray
    target_phi: np.ndarray

    def __post_init__(self):
        self._check_attacks()

    def __call__(self, view: PoolView, t: int, records, rng) -> dict[str, np.ndarray]:
        mech = view.mech
        records = np.asarray(records, dtype=np.int64)
        if records.shape != self.target_losses.shape:
            raise ValueError(f"the leave-one-out scorer holds {self.target_losses.size} target "
                             f"scores, asked for {records.size} records")
        memb = view.membership[:, records]
        refs = []
        for j in range(records.size):   # models trained on D \ {z_j}
            want = memb[t].copy()
            want[j] = False
            refs.append(np.flatnonzero((memb == want).all(axis=1)))
        if len({r.size for r in refs}) != 1 or refs[0].size < 2:
            raise ValueError(f"every record needs the same number (>= 2) of leave-one-out "
                             f"models, got {sorted({r.size for r in refs})}")
        refs = np.stack(refs)                                    # (k, K)
        cols = np.arange(records.size)[:, None]
        idx = mech.candidates[records]
        out = {}
        if "l-attack" in self.attacks:
            out["l-attack"] = l_attack(self.target_losses,
                                       mech.losses(view.models, idx)[refs, cols])
        if "lira-l" in self.attacks:
            out["lira-l"] = lira_l(self.target_phi,
                                   mech.confidences(view.models, idx)[refs, cols])
        return out


# --------------------------------------------------------------------------------- result
@dataclass(repr=False)
class AttackRun(ResultDisplay):
    """Result of :func:`run_attacks`.

    Prints as one line; ``summary()`` is a table with one row per attack (AUC and TPR at FPR
    1 % and 0.1 % with exact binomial intervals, the LOO attacks on their subset),
    ``to_frame()`` the same as a ``DataFrame``, ``to_dict()`` the configuration, sizes and
    times (JSON-safe).

    ``view`` is the population game (the mechanism, every model's weights, the membership
    matrix) and ``targets[t]`` the records scored on target model ``t``; :attr:`whitebox`
    gives each target model's :class:`WhiteBox` (kept from the scorer, or computed here after
    a run on Dask).
    """

    config: AttackConfig
    result: GameResult
    loo_result: GameResult | None
    seconds: dict[str, float]
    setup: dict
    view: PoolView | None = field(default=None, repr=False)
    targets: list = field(default_factory=list, repr=False)
    _whitebox: dict = field(default_factory=dict, repr=False)

    @property
    def whitebox(self) -> list[WhiteBox]:
        """One :class:`WhiteBox` per target model, in model order."""
        for t, rec in enumerate(self.targets):
            if t not in self._whitebox:
                self._whitebox[t] = WhiteBox(self.view, t, rec, damping=self.config.damping,
                                             cg_tol=self.config.cg_tol,
                                             loss_scale=self.config.loss_scale,
                                             sgd=self.config.sgd)
        return [self._whitebox[t] for t in range(len(self.targets))]

    @property
    def mechanism(self) -> TrainedModelMechanism | None:
        """The pool mechanism that trained the models."""
        return None if self.view is None else self.view.mech

    def __repr__(self) -> str:
        return (f"AttackRun(dataset={self.config.dataset!r}, model={self.config.model!r}, "
                f"models={self.config.n_models}, rounds={self.result.rounds}, "
                f"attacks={list(self.result.stats)})")

    def summary(self) -> Table:
        """One row per attack: ``attack, auc, tpr@1%, tpr@0.1%`` (exact binomial intervals
        conditional on the threshold), the class sizes and whether 0.1 % is resolvable."""
        rows = []
        games = [(self.result, "")] + ([(self.loo_result, "@loo-subset")]
                                       if self.loo_result is not None else [])
        for game, tag in games:
            for name in game.stats:
                m, nm = game.scores(name)
                r = roc_metrics(m, nm, fpr=(0.01, 0.001), interval="binomial")
                key = name if (not tag or name in LOO_ATTACKS) else name + tag
                rows.append({"attack": key, "auc": r.auc,
                             "tpr@1%": r.tpr_at_fpr[0], "tpr@1%_lower": r.tpr_at_fpr_interval[0][0],
                             "tpr@0.1%": r.tpr_at_fpr[1],
                             "tpr@0.1%_lower": r.tpr_at_fpr_interval[1][0],
                             "resolvable@0.1%": bool(r.resolvable[1]),
                             "members": r.n_member, "non_members": r.n_nonmember})
        return Table(rows, title=repr(self))

    def to_dict(self) -> dict:
        """Configuration, set-up, times and the games' sizes (JSON-safe)."""
        return {"config": asdict(self.config), "setup": self.setup, "seconds": self.seconds,
                "rounds": self.result.rounds,
                "loo_rounds": None if self.loo_result is None else self.loo_result.rounds,
                "attacks": list(self.result.stats)}

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
    (:func:`semi_core.audit.roc.roc_metrics`), plus the class sizes, the FPR resolution
    ``1/n_nonmember`` and ``tpr_at_fpr_resolvable`` (false: the level is below the resolution
    and the cell is the TPR at FPR 0)."""
    m, nm = result.scores(name)
    r = roc_metrics(m, nm, fpr=fpr, interval="bootstrap", n_bootstrap=n_bootstrap, seed=seed)
    return {"auc": r.auc, "auc_interval": list(r.auc_interval),
            "tpr_at_fpr": {f"{f:g}": v for f, v in zip(r.fpr_levels, r.tpr_at_fpr, strict=True)},
            "tpr_at_fpr_interval": {f"{f:g}": list(iv) for f, iv in
                                    zip(r.fpr_levels, r.tpr_at_fpr_interval, strict=True)},
            "tpr_at_fpr_resolvable": {f"{f:g}": ok for f, ok in
                                      zip(r.fpr_levels, r.resolvable, strict=True)},
            "fpr_resolution": r.fpr_resolution,
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


def _check_sizes(cfg: AttackConfig, N: int, attacks) -> int:
    """Targets per model ``k`` (refusing, not clipping, what the pool cannot give)."""
    k = N if cfg.n_targets is None else check_int(cfg.n_targets, "n_targets", minimum=2,
                                                  maximum=N)
    if any(a in LOO_ATTACKS for a in attacks):
        check_int(cfg.loo_targets, "loo_targets", minimum=2, maximum=k)
    return k


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


def with_overrides(cfg: AttackConfig, **kw) -> AttackConfig:
    """A copy of ``cfg`` with fields replaced (validated again)."""
    return replace(cfg, **kw)
