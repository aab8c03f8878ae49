r"""White-box DP-SGD audits: the Dirac gradient canary, its optimal LR, and the batched games.

**Dirac gradient canary** (Nasr et al. 2023, "Tight auditing of differentially private machine
learning"; seed ``semi_sequential_mi`` §4.2 gives the SGD LR it specialises). The auditor
controls the differing record's *gradient*: at step :math:`\tau` one slot of the batch carries
:math:`g^\pm = \pm M e_j` with :math:`M = s\,C \ge C` (``scale`` :math:`s \ge 1`), so per-sample
clipping maps it to :math:`\pm C e_j` exactly. Under :math:`H_1^\tau` the slot holds :math:`g^+`,
under :math:`H_0` the antipodal :math:`g^-`: the two neighbouring batches differ by one record
and their clipped sums by :math:`2C`, the worst case of the replace-one relation. The coordinate
:math:`j` is chosen where natural per-sample gradients vanish (e.g. the weights of an input
feature that is zero in every record: the canary then neither touches nor is touched by
training). With :math:`\Delta_t = \theta_t - \theta_{t-1}` and the standardised update

.. math::

   s_t = -\frac{n}{\eta C}\,\Delta_{t,j} = \pm\mathbb 1[t=\tau] + \frac{1}{C}\sum_{i}
   \mathrm{clip}_C(g_{t,i})_j + \sigma_{DP}\,\xi_{t,j},

the natural sum is :math:`\approx\mathcal N((n-1)m_j, (n-1)v_j)` (:math:`m_j, v_j`: mean and
variance of clipped natural gradients in coordinate :math:`j`), so both hypotheses are Gaussian
with the *same* variance :math:`\varsigma^2 = \sigma_{DP}^2 + (n-1)v_j/C^2` and means
:math:`a \pm 1`, :math:`a = (n-1)m_j/C`. The log-LR is linear,

.. math::

   \log\mathrm{LR}(s_\tau) = \frac{2(s_\tau - a)}{\varsigma^2},

the Neyman-Pearson test is a threshold on :math:`s_\tau`, and when :math:`v_j = 0` the
scores are exactly :math:`\mathcal N(\pm 1, \sigma_{DP}^2)`: a :math:`\mu`-GDP pair with
:math:`\mu = 2/\sigma_{DP}`, the run's exact privacy (:mod:`semi_core.sgd.accounting`). The audit
is then tight up to sampling error, and the equal-variance Gaussian fit of
:func:`semi_core.audit.epsilon_lower_bound` (``method="gdp", gdp_fit="gaussian"``) holds by
construction. ``canaries_per_run = k > 1`` inserts ``k`` Dirac canaries on ``k`` distinct
isolated coordinates with independent bits (each an independent game: orthogonal coordinates,
independent noise, no interaction with training when :math:`v_j = m_j = 0`).

**Contrast statistic** :math:`s_\tau - \frac{1}{T-1}\sum_{t\ne\tau}s_t`: equally Gaussian under a
correct implementation (variance :math:`\varsigma^2 T/(T-1)`), and exact when the noise is
reused across steps (bug ``noise_reused`` of :mod:`semi_core.sgd.bugs`).

**Input canaries** (``kind="input"``): a record :math:`z^*` replaces a uniform slot of batch
:math:`\tau` under :math:`H_1`, the slot keeps its pool record under :math:`H_0` (the game of
:mod:`semi_core.sgd.audit`); scored by SeMI-SGD (:func:`semi_core.sgd.batched.ghost_log_lr` /
:func:`~semi_core.sgd.batched.batched_dpsgd_log_lr`), SeMI-max and the loss baselines.
Because :math:`H_0`'s record is a natural one, :math:`\mu_{\mathrm{obs}}\approx 1/\sigma_{DP}`:
half the run's :math:`\mu`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import torch

from semi_core._rng import as_seed_sequence
from semi_core._validation import check_int, check_positive, check_tau
from semi_core.stats.update_combination import BASELINES

from .batched import batched_dpsgd_log_lr, ghost_log_lr
from .bugs import Bug, privatize
from .dpsgd import DPSGDConfig, GameDraw, draw_game
from .ghost import ghost_clipped_mean
from .grads import FunctionalModel, clip_rows

__all__ = ["WhiteBoxSetup", "RunPlan", "dirac_coordinates", "plan_runs", "train_white_box",
           "white_box_scores", "dirac_log_lr", "play_white_box", "dirac_rows",
           "CANARY_KINDS"]

CANARY_KINDS = ("dirac", "input")


@dataclass
class WhiteBoxSetup:
    """Model, :math:`\\theta_0`, data, canary and configuration of a white-box audit.

    ``kind="dirac"`` uses ``coords`` (``k`` flat parameter indices) and ``scale``;
    ``kind="input"`` uses ``canary_x``, ``canary_y``. ``ref_x``/``ref_y`` feed the gradient
    statistics (SeMI-SGD and the Dirac LR's :math:`m_j, v_j`).
    """

    fm: FunctionalModel
    theta0: torch.Tensor
    pool_x: torch.Tensor
    pool_y: torch.Tensor
    ref_x: torch.Tensor
    ref_y: torch.Tensor
    cfg: DPSGDConfig
    kind: str = "dirac"
    coords: np.ndarray | None = None
    scale: float = 4.0
    canary_x: torch.Tensor | None = None
    canary_y: torch.Tensor | None = None
    shrinkage: float = 0.1
    ridge: float = 1e-4
    info: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.kind not in CANARY_KINDS:
            raise ValueError(f"canary kind must be one of {CANARY_KINDS}, got {self.kind!r}")
        if self.kind == "dirac":
            if self.coords is None or len(self.coords) < 1:
                raise ValueError("a Dirac canary needs at least one coordinate (coords)")
            self.coords = np.asarray(self.coords, dtype=np.int64)
            if self.coords.min() < 0 or self.coords.max() >= self.fm.d:
                raise ValueError(f"coords must lie in 0..{self.fm.d - 1}")
            if len(set(self.coords.tolist())) != len(self.coords):
                raise ValueError("coords must be distinct")
            self.scale = check_positive(self.scale, "scale")
            if self.scale < 1:
                raise ValueError(f"scale must be >= 1 (the canary's gradient norm is scale*C "
                                 f"and must reach the clip norm), got {self.scale}")
        elif self.canary_x is None or self.canary_y is None:
            raise ValueError("an input canary needs canary_x and canary_y")

    @property
    def k(self) -> int:
        """Canaries per run (``1`` for input canaries)."""
        return len(self.coords) if self.kind == "dirac" else 1


def dirac_coordinates(ref_grads: torch.Tensor, k: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` coordinates with the smallest second moment :math:`\\frac1m\\sum_i g_{ij}^2` of
    the (clipped) natural gradients, and those second moments (``0`` means isolated: no
    reference record moves that coordinate). Ties go to the lower index."""
    k = check_int(k, "canaries_per_run", minimum=1, maximum=ref_grads.shape[-1])
    mom = (ref_grads.double() ** 2).mean(0).cpu().numpy()
    order = np.lexsort((np.arange(mom.size), mom))[:k]
    return order.astype(np.int64), mom[order]


@dataclass
class RunPlan:
    """The Crafter's draws for ``R`` runs at one :math:`\\tau`: batches and noise per run
    (:class:`~semi_core.sgd.dpsgd.GameDraw`), the canary slots ``(R, k)`` of batch
    :math:`\\tau` and the bits ``(R, k)``; ``seeds`` are per-run 63-bit integers for engines
    that draw their own noise (Opacus' ``noise_generator``)."""

    draws: list[GameDraw]
    slots: np.ndarray
    member: np.ndarray
    tau: int
    seeds: np.ndarray
    info: dict = field(default_factory=dict)


def plan_runs(setup: WhiteBoxSetup, *, rounds: int, tau: int, seed) -> RunPlan:
    """Draw ``rounds`` runs: every run has its canary slots at step ``tau`` (a Dirac run
    always holds :math:`g^+` or :math:`g^-`; an input run holds :math:`z^*` only when its bit
    is 1). Bits are i.i.d. Bernoulli(1/2), independent of everything else."""
    rounds = check_int(rounds, "rounds", minimum=2)
    T, n = setup.cfg.steps, setup.cfg.batch_size
    tau = check_tau(tau, T)
    k = setup.k
    if k > n:
        raise ValueError(f"canaries_per_run = {k} exceeds the batch size {n}")
    root = as_seed_sequence(seed)
    ss_bits, ss_runs = root.spawn(2)
    bits = np.random.Generator(np.random.PCG64(ss_bits)).integers(0, 2, (rounds, k)).astype(bool)
    draws, slots, seeds = [], np.empty((rounds, k), dtype=np.int64), np.empty(rounds, np.int64)
    for r, ss in enumerate(ss_runs.spawn(rounds)):
        dr = draw_game(ss, pool_size=setup.pool_x.shape[0], cfg=setup.cfg, d=setup.fm.d, tau=tau)
        extra = np.random.Generator(np.random.PCG64(ss.spawn(1)[0]))
        others = np.setdiff1d(np.arange(n), [dr.slot])
        slots[r] = np.concatenate([[dr.slot], extra.choice(others, k - 1, replace=False)])
        seeds[r] = int(ss.generate_state(1, dtype=np.uint64)[0] >> np.uint64(1))
        draws.append(dr)
    return RunPlan(draws=draws, slots=slots, member=bits, tau=tau, seeds=seeds)


def _batches(setup: WhiteBoxSetup, plan: RunPlan, sel: slice):
    draws = plan.draws[sel]
    idx = torch.as_tensor(np.stack([d.batches for d in draws]))
    xb, yb = setup.pool_x[idx].clone(), setup.pool_y[idx].clone()        # (R, T, n, ...)
    if setup.kind == "input":
        t = plan.tau - 1
        for r, (mem, sl) in enumerate(zip(plan.member[sel, 0], plan.slots[sel, 0], strict=True)):
            if mem:
                xb[r, t, sl] = setup.canary_x
                yb[r, t, sl] = setup.canary_y
    return xb, yb


def dirac_rows(setup: WhiteBoxSetup, member: np.ndarray, dtype) -> torch.Tensor:
    """The canaries' raw gradients :math:`\\pm M e_{j_i}`, ``(R, k, d)``."""
    R, k = member.shape
    rows = torch.zeros(R, k, setup.fm.d, dtype=dtype)
    sign = torch.as_tensor(np.where(member, 1.0, -1.0), dtype=dtype)
    M = setup.scale * setup.cfg.clip
    rows[:, torch.arange(k), torch.as_tensor(setup.coords)] = M * sign
    return rows


def train_white_box(setup: WhiteBoxSetup, plan: RunPlan, *, bug: Bug | None = None,
                    chunk_size: int = 128, fast: bool = True,
                    timings: dict | None = None) -> torch.Tensor:
    """Train every run of ``plan`` as batched replicas; returns :math:`(\\theta_0..\\theta_T)`
    per run, ``(R, T+1, d)``.

    For stacks of linear layers (and ``fast``) every step uses the ghost clipped mean
    (:func:`~semi_core.sgd.ghost.ghost_clipped_mean`); at a Dirac canary's step only the ``k``
    canary slots get per-sample gradients, to swap their natural records for the canaries'
    rows. Other models use per-sample gradients (``torch.func``) with the Dirac rows
    overwriting the slots before :func:`~semi_core.sgd.bugs.privatize` (the reference the
    fast path is tested against). ``timings`` (a dict) receives seconds spent on
    ``batches`` (gathering data), ``canary_step`` and ``other_steps``.
    """
    tm = {"batches": 0.0, "canary_step": 0.0, "other_steps": 0.0} if timings is None else timings
    for key in ("batches", "canary_step", "other_steps"):
        tm.setdefault(key, 0.0)
    chunk_size = check_int(chunk_size, "chunk_size", minimum=1)
    cfg, fm = setup.cfg, setup.fm
    stack = fm.linear_stack() if fast else None
    R = len(plan.draws)
    out = torch.empty(R, cfg.steps + 1, fm.d, dtype=setup.theta0.dtype)
    for s in range(0, R, chunk_size):
        sel = slice(s, min(R, s + chunk_size))
        t0 = time.perf_counter()
        xb, yb = _batches(setup, plan, sel)
        noise = torch.as_tensor(np.stack([d.noise for d in plan.draws[sel]]),
                                dtype=setup.theta0.dtype)
        B = xb.shape[0]
        theta = setup.theta0.expand(B, -1).clone()
        out[sel, 0] = theta
        tm["batches"] += time.perf_counter() - t0
        for t in range(cfg.steps):
            t0 = time.perf_counter()
            x_t, y_t = xb[:, t], yb[:, t]
            canary_step = setup.kind == "dirac" and t == plan.tau - 1
            if stack is not None:
                swap = None
                if canary_step:
                    sl = torch.as_tensor(plan.slots[sel])
                    rr = torch.arange(B)[:, None]
                    nat = fm.per_sample_grads_batched(theta, x_t[rr, sl], y_t[rr, sl])
                    swap = (nat, dirac_rows(setup, plan.member[sel], nat.dtype))
                g = _ghost_step(stack, theta, x_t, y_t, noise[:, t], noise[:, 0], cfg, bug,
                                swap=swap)
            else:
                grads = fm.per_sample_grads_batched(theta, x_t, y_t)
                if canary_step:
                    sl = torch.as_tensor(plan.slots[sel])
                    grads[torch.arange(B)[:, None], sl] = dirac_rows(setup, plan.member[sel],
                                                                     grads.dtype)
                g = privatize(grads, noise[:, t], clip=cfg.clip, sigma_dp=cfg.sigma_dp, bug=bug,
                              first_noise=noise[:, 0])
            theta = theta - cfg.lr * g
            out[sel, t + 1] = theta
            tm["canary_step" if t == plan.tau - 1 else "other_steps"] += time.perf_counter() - t0
    return out


def _per_sample_clip(cfg: DPSGDConfig, bug: Bug | None) -> float | None:
    """The per-sample clip norm the (buggy) step applies; ``None``: no per-sample clipping."""
    name = None if bug is None else bug.name
    if name == "batch_clip":
        return None
    return cfg.clip * bug.factor if name == "clip_mismatch" else cfg.clip


def _finish(mean, noise, noise0, cfg: DPSGDConfig, bug: Bug | None, n: int):
    """Batch-level clipping (``batch_clip``) and noise, as :func:`~semi_core.sgd.bugs.privatize`."""
    name = None if bug is None else bug.name
    if name == "batch_clip":
        mean = clip_rows(mean, cfg.clip)
    std = cfg.sigma_dp * cfg.clip / n
    if name == "noise_unscaled":
        std = cfg.sigma_dp / n
    elif name == "wrong_batch_size":
        std = cfg.sigma_dp * cfg.clip / (n * bug.factor)
    return mean + std * (noise0 if name == "noise_reused" else noise)


def _ghost_step(stack, theta, x, y, noise, noise0, cfg: DPSGDConfig, bug: Bug | None,
                swap=None):
    r""":func:`~semi_core.sgd.bugs.privatize` without per-sample gradient tensors.

    ``swap = (natural, canary)``, each ``(R, k, d)``: per-sample gradients of the slots'
    natural records and the canaries' rows; the clipped mean over the batch is corrected by
    :math:`\frac1n\sum_i(\mathrm{clip}(g^{\mathrm{canary}}_i) - \mathrm{clip}(g^{\mathrm{nat}}_i))`
    (only the ``k`` slots need per-sample gradients).
    """
    n = x.shape[1]
    c = _per_sample_clip(cfg, bug)
    mean = ghost_clipped_mean(stack, theta, x, y, clip=1e300 if c is None else c)
    if swap is not None:
        nat, can = swap
        if c is not None:
            nat, can = clip_rows(nat, c), clip_rows(can, c)
        mean = mean + (can - nat).sum(1) / n
    return _finish(mean, noise, noise0, cfg, bug, n)


def dirac_log_lr(s, *, a, var) -> np.ndarray:
    """Optimal log-LR of a Dirac canary's standardised update (module docstring):
    :math:`2(s-a)/\\varsigma^2`."""
    var = np.asarray(var, dtype=float)
    if np.any(var <= 0):
        raise ValueError("var must be > 0 (sigma_dp > 0 or natural gradient variance)")
    return 2.0 * (np.asarray(s, dtype=float) - a) / var


def _natural_moments(setup: WhiteBoxSetup):
    """Mean and variance of clipped reference gradients at :math:`\\theta_0` (``(d,)`` each)."""
    ref = clip_rows(setup.fm.per_sample_grads(setup.theta0, setup.ref_x, setup.ref_y),
                    setup.cfg.clip)
    return ref.mean(0).numpy(), ref.var(0).numpy()


def _semi_lrs(setup: WhiteBoxSetup, traj: torch.Tensor, targets, steps):
    """SeMI-SGD DP-SGD log-LR at each step in ``steps`` (1-based), ``(R, len(steps))``;
    ``targets(prev)`` gives the clipped target gradient ``(R, d)`` at :math:`\\theta_{t-1}`."""
    cfg, fm = setup.cfg, setup.fm
    stack = fm.linear_stack()
    common = dict(eta=cfg.lr, n=cfg.batch_size, sigma_dp=cfg.sigma_dp, clip=cfg.clip,
                  shrinkage=setup.shrinkage, ridge=setup.ridge)
    out = np.empty((traj.shape[0], len(steps)))
    for c, t in enumerate(steps):
        prev, upd = traj[:, t - 1], traj[:, t] - traj[:, t - 1]
        tgt = targets(prev)
        if stack is not None:
            lr = ghost_log_lr(upd, prev, stack, setup.ref_x, setup.ref_y, tgt, **common)
        else:
            ref = clip_rows(fm.per_sample_grads_batched(prev, setup.ref_x, setup.ref_y,
                                                        shared=True), cfg.clip)
            lr = batched_dpsgd_log_lr(upd, ref, tgt, **common)
        out[:, c] = lr.numpy()
    return out


def white_box_scores(setup: WhiteBoxSetup, traj: torch.Tensor, plan: RunPlan, *,
                     semi: bool | str = True, chunk_size: int = 256) -> dict[str, np.ndarray]:
    """Scores (higher = member) of every game: ``(R*k,)`` per test, games ordered run-major.

    Dirac canaries: ``dirac`` (the optimal log-LR at :math:`\\tau`), ``dirac_contrast``,
    and with ``semi`` ``semi_sgd`` / ``semi_max`` (SeMI-SGD with target gradient
    :math:`C e_j`). Input canaries: ``semi_sgd``, ``semi_max`` and the four loss baselines
    of :mod:`semi_core.stats.update_combination`. ``semi="tau"`` computes SeMI-SGD at
    :math:`\tau` only (no SeMI-max: ``T`` times cheaper).
    """
    if semi not in (True, False, "tau"):
        raise ValueError(f"semi must be True, False or 'tau', got {semi!r}")
    only_tau = semi == "tau"
    cfg, fm = setup.cfg, setup.fm
    tau, T = plan.tau, cfg.steps
    R = traj.shape[0]
    scores: dict[str, np.ndarray] = {}
    with torch.no_grad():
        if setup.kind == "dirac":
            coords = torch.as_tensor(setup.coords)
            upd = (traj[:, 1:] - traj[:, :-1])[:, :, coords]                 # (R, T, k)
            s = (-cfg.batch_size / (cfg.lr * cfg.clip) * upd).numpy()
            m, v = _natural_moments(setup)
            n = cfg.batch_size
            a = (n - 1) * m[setup.coords] / cfg.clip
            var = cfg.sigma_dp ** 2 + (n - 1) * v[setup.coords] / cfg.clip ** 2
            scores["dirac"] = dirac_log_lr(s[:, tau - 1], a=a, var=var).reshape(-1)
            if T >= 2:
                rest = np.delete(s, tau - 1, axis=1).mean(1)
                scores["dirac_contrast"] = (s[:, tau - 1] - rest).reshape(-1)
            if semi:
                k = setup.k
                semi_t = np.empty((R, k))
                semi_m = np.empty((R, k))
                for i, j in enumerate(setup.coords):
                    def target(prev, j=j):
                        g = torch.zeros_like(prev)
                        g[:, j] = cfg.clip
                        return g
                    for c in range(0, R, chunk_size):
                        sel = slice(c, min(R, c + chunk_size))
                        if only_tau:
                            semi_t[sel, i] = _semi_lrs(setup, traj[sel], target, [tau])[:, 0]
                            continue
                        lrs = _semi_lrs(setup, traj[sel], target, range(1, T + 1))
                        semi_t[sel, i] = lrs[:, tau - 1]
                        semi_m[sel, i] = lrs.max(1)
                scores["semi_sgd"] = semi_t.reshape(-1)
                if not only_tau:
                    scores["semi_max"] = semi_m.reshape(-1)
            return scores
        cx, cy = setup.canary_x.unsqueeze(0), setup.canary_y.reshape(1)

        def target(prev):
            return clip_rows(fm.per_sample_grads_batched(prev, cx, cy, shared=True)[:, 0],
                             cfg.clip)
        losses = np.empty((R, T + 1))
        semi_t, semi_m = np.empty(R), np.empty(R)
        for c in range(0, R, chunk_size):
            sel = slice(c, min(R, c + chunk_size))
            tr = traj[sel]
            B = tr.shape[0]
            losses[sel] = fm.losses_batched(tr.reshape(B * (T + 1), -1), cx, cy).reshape(
                B, T + 1).numpy()
            if only_tau:
                semi_t[sel] = _semi_lrs(setup, tr, target, [tau])[:, 0]
            elif semi:
                lrs = _semi_lrs(setup, tr, target, range(1, T + 1))
                semi_t[sel], semi_m[sel] = lrs[:, tau - 1], lrs.max(1)
        if semi:
            scores["semi_sgd"] = semi_t
        if semi and not only_tau:
            scores["semi_max"] = semi_m
        for name, fn in BASELINES.items():
            scores[name] = fn(losses)
    return scores


def play_white_box(setup: WhiteBoxSetup, *, rounds: int, tau: int, seed, bug: Bug | None = None,
                   semi: bool = True, chunk_size: int = 128, fast: bool = True):
    """Plan, train (batched) and score: returns ``(plan, traj, scores, seconds)`` where
    ``seconds`` splits ``train`` and ``score`` time."""
    plan = plan_runs(setup, rounds=rounds, tau=tau, seed=seed)
    t0 = time.perf_counter()
    with torch.no_grad():
        traj = train_white_box(setup, plan, bug=bug, chunk_size=chunk_size, fast=fast)
    t1 = time.perf_counter()
    scores = white_box_scores(setup, traj, plan, semi=semi)
    return plan, traj, scores, {"train": t1 - t0, "score": time.perf_counter() - t1}
