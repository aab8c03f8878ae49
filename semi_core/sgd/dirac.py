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

**The game on the runner.** :class:`WhiteBoxMechanism` is the white-box game as a
:class:`~semi_core.mechanisms.base.Mechanism`, played by :func:`semi_core.game.play.play`
(:func:`play_white_box`): a *round* is one canary game, its bit :math:`B` the sign of a Dirac
canary (or the presence of the input canary), its release the trajectory
:math:`\theta_1..\theta_T` of the run that carried the canary and the canary's index in that run
(``(T, d + 1)``: the last column). ``log_lr_steps`` is the optimal per-step Dirac log-LR at the
round's own coordinate (SeMI* is then the ``dirac`` score; for input canaries the per-step
SeMI-SGD log-LR), and :class:`WhiteBoxScorer` gives the named scores of the audit (``dirac``,
``dirac_contrast``, ``semi_sgd``, ``semi_max``, the loss baselines).

With ``k`` canaries per run, ``release`` packs consecutive rounds ``r = i k + c`` into run ``i``
(canary ``c``, coordinate ``coords[c]``, its own bit and insertion time); the runner's chunk
size is then a multiple of ``k`` so that a run never straddles two chunks. Why :func:`play` and
not :func:`~semi_core.game.play.play_pool`: the rounds of one run are independent games -- not
merely rounds sharing a model -- exactly when the coordinates are isolated (:math:`m_j = v_j = 0`:
orthogonal coordinates, independent noise coordinates, no natural gradient touches them), the
condition under which the Dirac score is exactly Gaussian and that the audit reports
(``dirac_isolated``; a warning otherwise). Then every round's law is that of a one-canary run
and the rounds are i.i.d., as :func:`play` requires; the certified bounds treat them so, as the
hand-written loop this replaced did. ``k = 1`` (the default) needs no assumption. The bug
``batch_clip`` couples the canaries of a run through the batch-mean norm; its audits use
``k = 1`` where independence matters (the report's bug zoo does). :func:`play_sweep
<semi_core.game.play.play_sweep>` does not apply: a Dirac :math:`H_0` round holds
:math:`g^-` at step :math:`\tau`, so it depends on :math:`\tau`.

Randomness: each ``release`` call draws one 63-bit key per run from its ``rng``; run ``i``'s
batches, canary slots, Gaussian noise and (for engines that draw their own noise, such as
Opacus' ``noise_generator``) its noise seed come from ``SeedSequence(key_i)``
(:func:`draw_runs`), so two engines given the same ``rng`` state train the same batches.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import torch

from semi_core._validation import check_int, check_positive
from semi_core.game.play import play
from semi_core.game.result import GameResult
from semi_core.mechanisms.base import GroundTruthUnknown, MechanismBase
from semi_core.stats.gdp import gdp_epsilon
from semi_core.stats.update_combination import BASELINES

from .batched import dense_reference_stats, ghost_reference_stats, log_lr_from_stats
from .bugs import Bug, privatize
from .device import STATS_DTYPE, move_setup
from .dpsgd import DPSGDConfig
from .ghost import ghost_clipped_mean
from .grads import FunctionalModel, clip_rows

__all__ = ["WhiteBoxSetup", "WhiteBoxMechanism", "WhiteBoxScorer", "Runs", "draw_runs",
           "train_batched", "dirac_coordinates", "dirac_log_lr", "play_white_box", "dirac_rows",
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

    @property
    def device(self) -> torch.device:
        """Where the setup's tensors (and its model) are."""
        return self.theta0.device

    def to(self, device) -> WhiteBoxSetup:
        """This setup with its model and tensors on ``device``
        (:func:`~semi_core.sgd.device.move_setup`; itself when already there).

        Parameters
        ----------
        device : str or torch.device
            Target device (``"cpu"``, ``"cuda"``, ...).

        Returns
        -------
        WhiteBoxSetup
            The moved setup (``self`` when already on ``device``).
        """
        return move_setup(self, device)


def dirac_coordinates(ref_grads: torch.Tensor, k: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` coordinates with the smallest second moment :math:`\\frac1m\\sum_i g_{ij}^2` of
    the (clipped) natural gradients, and those second moments (``0`` means isolated: no
    reference record moves that coordinate). Ties go to the lower index.

    Parameters
    ----------
    ref_grads : torch.Tensor, shape (m, d)
        Clipped per-sample gradients of the reference records.
    k : int
        Number of coordinates, in 1..d.

    Returns
    -------
    coords : ndarray of int64, shape (k,)
        The chosen coordinates, by increasing second moment.
    moments : ndarray, shape (k,)
        Their second moments (>= 0).
    """
    k = check_int(k, "canaries_per_run", minimum=1, maximum=ref_grads.shape[-1])
    mom = (ref_grads.double() ** 2).mean(0).cpu().numpy()
    order = np.lexsort((np.arange(mom.size), mom))[:k]
    return order.astype(np.int64), mom[order]




# ----------------------------------------------------------------------------- the Crafter
@dataclass
class Runs:
    """The Crafter's draws for the ``m`` runs of one release call (``k`` canary places each).

    Attributes
    ----------
    batches : ndarray of int, (m, T, n)
        Disjoint batches of pool indices (each record used once per run).
    slots : ndarray of int, (m, k)
        Distinct batch slots of the canaries (canary ``c`` sits in slot ``slots[i, c]`` of
        batch ``tau[i, c]``).
    noise : ndarray, (m, T, d)
        Standard-normal noise of the batched trainer.
    member, tau, present : ndarray, (m, k)
        Bit, insertion time and presence of each canary place (the last run of a call may
        carry fewer than ``k`` canaries).
    seeds : ndarray of int64, (m,)
        Per-run 63-bit seeds for engines that draw their own noise.
    """

    batches: np.ndarray
    slots: np.ndarray
    noise: np.ndarray
    member: np.ndarray
    tau: np.ndarray
    present: np.ndarray
    seeds: np.ndarray

    def __len__(self) -> int:
        return int(self.member.shape[0])

    def take(self, sel) -> Runs:
        """The runs ``sel`` (a slice or index array) of these draws.

        Parameters
        ----------
        sel : slice or array_like of int
            The runs to keep.

        Returns
        -------
        Runs
            The selected runs' draws.
        """
        return Runs(**{f: getattr(self, f)[sel] for f in ("batches", "slots", "noise", "member",
                                                          "tau", "present", "seeds")})


def _pack(member, tau, k: int, T: int):
    """Rounds ``r = i k + c`` -> (run ``i``, canary ``c``) arrays ``(m, k)``."""
    member = np.asarray(member, dtype=bool).reshape(-1)
    tau = np.broadcast_to(np.asarray(tau, dtype=np.int64), member.shape)
    if member.size and (tau.min() < 1 or tau.max() > T):
        raise ValueError(f"tau must be in 1..{T}, got values in {tau.min()}..{tau.max()}")
    R = member.size
    m = -(-R // k)
    present = (np.arange(m * k) < R).reshape(m, k)
    mem = np.zeros(m * k, dtype=bool)
    mem[:R] = member
    tt = np.ones(m * k, dtype=np.int64)
    tt[:R] = tau
    return mem.reshape(m, k), tt.reshape(m, k), present


def draw_runs(setup: WhiteBoxSetup, member, tau, rng: np.random.Generator) -> Runs:
    """The Crafter's draws for ``len(member)`` rounds (module docstring: ``k`` rounds per run).

    Bits and insertion times are the runner's; everything else comes from one 63-bit key per
    run drawn from ``rng``: batches (``T`` disjoint batches of the pool), ``k`` distinct canary
    slots, noise ``(T, d)`` and the seed of engines that draw their own noise.

    Parameters
    ----------
    setup : WhiteBoxSetup
        Model, data and configuration.
    member : array_like of bool, shape (R,)
        Canary bit of each round (``k`` consecutive rounds per run).
    tau : int or array_like of int
        Insertion step(s) in 1..T.
    rng : numpy.random.Generator
        Source of the per-run keys.

    Returns
    -------
    Runs
        The draws of ``ceil(R / k)`` runs.
    """
    cfg, k = setup.cfg, setup.k
    T, n, d = cfg.steps, cfg.batch_size, setup.fm.d
    mem, tau, present = _pack(member, tau, k, T)
    m = mem.shape[0]
    pool = int(setup.pool_x.shape[0])
    if pool < T * n:
        raise ValueError(f"private pool has {pool} records, T*n = {T * n} are needed "
                         "(each record is used in exactly one step)")
    keys = rng.integers(0, 2**63 - 1, size=m)
    batches = np.empty((m, T, n), dtype=np.int64)
    slots = np.empty((m, k), dtype=np.int64)
    noise = np.empty((m, T, d))
    seeds = np.empty(m, dtype=np.int64)
    for i, key in enumerate(keys.tolist()):
        g = np.random.Generator(np.random.PCG64(np.random.SeedSequence(key)))
        batches[i] = g.choice(pool, size=T * n, replace=False).reshape(T, n)
        slots[i] = g.choice(n, size=k, replace=False)
        noise[i] = g.standard_normal((T, d))
        seeds[i] = g.integers(0, 2**63 - 1)
    return Runs(batches=batches, slots=slots, noise=noise, member=mem, tau=tau,
                present=present, seeds=seeds)


def dirac_rows(setup: WhiteBoxSetup, member: np.ndarray, dtype) -> torch.Tensor:
    """The canaries' raw gradients :math:`\\pm M e_{j_c}`, ``(R, k, d)`` for bits ``(R, k)``.

    Parameters
    ----------
    setup : WhiteBoxSetup
        Setup (scale, clip and canary coordinates).
    member : ndarray of bool, shape (R, k)
        Canary bits: + for members, - otherwise.
    dtype : torch.dtype
        Dtype of the rows.

    Returns
    -------
    torch.Tensor, shape (R, k, d)
        The canary gradients.
    """
    R, k = member.shape
    dev = setup.device
    rows = torch.zeros(R, k, setup.fm.d, dtype=dtype, device=dev)
    sign = torch.as_tensor(np.where(member, 1.0, -1.0), dtype=dtype, device=dev)
    M = setup.scale * setup.cfg.clip
    rows[:, torch.arange(k, device=dev), torch.as_tensor(setup.coords[:k], device=dev)] = M * sign
    return rows


def _batches(setup: WhiteBoxSetup, runs: Runs):
    """Batch data ``(m, T, n, ...)``: for a Dirac canary a gather per step (the pool's own
    records; a gathered step is a fresh contiguous copy, :func:`_step_batch`), for an input
    canary the whole gather with the canary written into its slots."""
    idx = torch.as_tensor(runs.batches, device=setup.device)
    if setup.kind == "dirac":
        return idx, None
    xb, yb = setup.pool_x[idx], setup.pool_y[idx]        # (m, T, n, ...): copies
    if setup.kind == "input":
        for i in np.flatnonzero(runs.member[:, 0] & runs.present[:, 0]).tolist():
            t, sl = int(runs.tau[i, 0]) - 1, int(runs.slots[i, 0])
            xb[i, t, sl] = setup.canary_x
            yb[i, t, sl] = setup.canary_y
    return xb, yb


def _step_batch(setup: WhiteBoxSetup, xb, yb, t: int):
    """Inputs and labels of step ``t`` (0-based) of every run, ``(m, n, ...)``."""
    if yb is None:  # xb holds the pool indices (Dirac canary)
        idx = xb[:, t]
        return setup.pool_x[idx], setup.pool_y[idx]
    return xb[:, t], yb[:, t]


def train_batched(setup: WhiteBoxSetup, runs: Runs, *, bug: Bug | None = None,
                  fast: bool = True, timings: dict | None = None) -> torch.Tensor:
    """Train the runs of ``runs`` as batched replicas; returns :math:`(\\theta_0..\\theta_T)`
    per run, ``(m, T+1, d)``.

    For stacks of linear layers (and ``fast``) every step uses the ghost clipped mean
    (:func:`~semi_core.sgd.ghost.ghost_clipped_mean`); at a step where Dirac canaries sit only
    the ``k`` canary slots get per-sample gradients, to swap their natural records for the
    canaries' rows. Other models use per-sample gradients (``torch.func``) with the Dirac rows
    overwriting the slots before :func:`~semi_core.sgd.bugs.privatize` (the reference the
    fast path is tested against). ``timings`` (a dict) receives CPU seconds (process time) spent on
    ``batches`` (gathering data), ``canary_step`` and ``other_steps``.

    Parameters
    ----------
    setup : WhiteBoxSetup
        Model, data and configuration.
    runs : Runs
        Draws of the runs (:func:`draw_runs`).
    bug : Bug, optional
        An implementation bug to inject (:mod:`semi_core.sgd.bugs`); None = correct DP-SGD.
    fast : bool
        Use the ghost clipped mean for stacks of linear layers.
    timings : dict, optional
        Receives the CPU seconds per phase (added to existing keys).

    Returns
    -------
    torch.Tensor, shape (m, T+1, d)
        The parameter trajectory of each run.
    """
    tm = {} if timings is None else timings
    for key in ("batches", "canary_step", "other_steps"):
        tm.setdefault(key, 0.0)
    cfg, fm = setup.cfg, setup.fm
    stack = fm.linear_stack() if fast else None
    t0 = time.process_time()
    xb, yb = _batches(setup, runs)
    dev = setup.device
    noise = torch.as_tensor(runs.noise, dtype=setup.theta0.dtype, device=dev)
    B = len(runs)
    theta = setup.theta0.expand(B, -1).clone()
    out = torch.empty(B, cfg.steps + 1, fm.d, dtype=setup.theta0.dtype, device=dev)
    out[:, 0] = theta
    dirac = setup.kind == "dirac"
    rows = dirac_rows(setup, runs.member, setup.theta0.dtype) if dirac else None
    sl = torch.as_tensor(runs.slots, device=dev)
    rr = torch.arange(B, device=dev)[:, None]
    tm["batches"] += time.process_time() - t0
    for t in range(cfg.steps):
        t0 = time.process_time()
        x_t, y_t = _step_batch(setup, xb, yb, t)
        active = runs.present & (runs.tau == t + 1) if dirac else None
        canary_step = dirac and bool(active.any())
        if stack is not None:
            swap = None
            if canary_step:
                nat = fm.per_sample_grads_batched(theta, x_t[rr, sl], y_t[rr, sl])
                on = torch.as_tensor(active, dtype=nat.dtype, device=dev)[..., None]
                swap = (nat, rows, on)
            g = _ghost_step(stack, theta, x_t, y_t, noise[:, t], noise[:, 0], cfg, bug,
                            swap=swap)
        else:
            grads = fm.per_sample_grads_batched(theta, x_t, y_t)
            if canary_step:
                on = torch.as_tensor(active, device=dev)[..., None]
                grads[rr, sl] = torch.where(on, rows.to(grads.dtype), grads[rr, sl])
            g = privatize(grads, noise[:, t], clip=cfg.clip, sigma_dp=cfg.sigma_dp, bug=bug,
                          first_noise=noise[:, 0])
        theta = theta - cfg.lr * g
        out[:, t + 1] = theta
        tm["canary_step" if canary_step else "other_steps"] += time.process_time() - t0
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

    ``swap = (natural, canary, on)``: ``(R, k, d)`` per-sample gradients of the slots'
    natural records and the canaries' rows, and ``(R, k, 1)`` weights (1 where the canary sits
    at this step); the clipped mean over the batch is corrected by
    :math:`\frac1n\sum_i on_i(\mathrm{clip}(g^{\mathrm{canary}}_i) - \mathrm{clip}(g^{\mathrm{nat}}_i))`
    (only the ``k`` slots need per-sample gradients).
    """
    n = x.shape[1]
    c = _per_sample_clip(cfg, bug)
    mean = ghost_clipped_mean(stack, theta, x, y, clip=1e300 if c is None else c)
    if swap is not None:
        nat, can, on = swap
        if c is not None:
            nat, can = clip_rows(nat, c), clip_rows(can, c)
        mean = mean + ((can - nat) * on).sum(1) / n
    return _finish(mean, noise, noise0, cfg, bug, n)


def dirac_log_lr(s, *, a, var) -> np.ndarray:
    """Optimal log-LR of a Dirac canary's standardised update (module docstring):
    :math:`2(s-a)/\\varsigma^2`.

    Parameters
    ----------
    s : array_like
        Standardised updates at the canary coordinate.
    a : float or array_like
        Mean of ``s`` under H0 (broadcast against ``s``).
    var : float or array_like
        Variance :math:`\\varsigma^2` of ``s``, > 0.

    Returns
    -------
    ndarray
        The log-LR, shape of ``s``.
    """
    var = np.asarray(var, dtype=float)
    if np.any(var <= 0):
        raise ValueError("var must be > 0 (sigma_dp > 0 or natural gradient variance)")
    return 2.0 * (np.asarray(s, dtype=float) - a) / var




def _natural_moments(setup: WhiteBoxSetup):
    """Mean and variance of clipped reference gradients at :math:`\\theta_0` (``(d,)`` each)."""
    with torch.no_grad():
        ref = clip_rows(setup.fm.per_sample_grads(setup.theta0, setup.ref_x, setup.ref_y),
                        setup.cfg.clip)
    return ref.mean(0).cpu().numpy(), ref.var(0).cpu().numpy()


def _semi_lrs(setup: WhiteBoxSetup, traj: torch.Tensor, target, rows, steps) -> np.ndarray:
    r"""SeMI-SGD DP-SGD log-LR of round ``rows[i]`` at step ``steps[i]`` (1-based), ``(len,)``.

    ``target(sel, prev)`` gives the clipped target gradients ``(len(sel), d)`` of rounds
    ``sel`` at parameters ``prev``. The reference statistics and both capacitance factors
    (:func:`~semi_core.sgd.batched.log_lr_from_stats`) are computed once per parameter point
    :math:`\theta_{t-1}`: at step 1 every round sits at the common :math:`\theta_0` (one
    point for all of them); later (round, step) pairs have their own points, taken
    :data:`_SCORE_POINTS` at a time. Each pair's value is its own point's LR whichever pairs
    are scored together (up to float rounding: a shared point's solve and projection treat
    all its rounds as columns of one product); a chunk of the runner scores the same pairs
    together on every executor, so results stay bit-identical across executors.
    """
    cfg, fm = setup.cfg, setup.fm
    stack = fm.linear_stack()
    common = dict(eta=cfg.lr, n=cfg.batch_size, sigma_dp=cfg.sigma_dp, clip=cfg.clip,
                  shrinkage=setup.shrinkage)
    rows = np.asarray(rows, dtype=np.int64).reshape(-1)
    steps = np.broadcast_to(np.asarray(steps, dtype=np.int64), rows.shape)

    def stats(thetas):
        if stack is not None:
            return ghost_reference_stats(stack, thetas, setup.ref_x, setup.ref_y,
                                         clip=cfg.clip, shrinkage=setup.shrinkage,
                                         ridge=setup.ridge)
        ref = clip_rows(fm.per_sample_grads_batched(thetas, setup.ref_x, setup.ref_y,
                                                    shared=True), cfg.clip)
        return dense_reference_stats(ref, shrinkage=setup.shrinkage, ridge=setup.ridge)

    def lrs(sel, point_stats):
        r = torch.as_tensor(rows[sel], device=traj.device)
        t = torch.as_tensor(steps[sel], device=traj.device)
        prev = traj[r, t - 1]
        return log_lr_from_stats(traj[r, t] - prev, target(rows[sel], prev), point_stats,
                                 **common).cpu().numpy()

    out = np.empty(rows.size)
    first = np.flatnonzero(steps == 1)
    if first.size:
        out[first] = lrs(first, stats(traj[rows[first[0]], 0].reshape(1, -1)))
    rest = np.flatnonzero(steps != 1)
    for lo in range(0, rest.size, _SCORE_POINTS):
        sel = rest[lo:lo + _SCORE_POINTS]
        out[sel] = lrs(sel, stats(traj[torch.as_tensor(rows[sel], device=traj.device),
                                       torch.as_tensor(steps[sel], device=traj.device) - 1]))
    return out


def _all_steps(R: int, T: int):
    """(round, step) pairs of every step of ``R`` rounds, round-major."""
    return np.repeat(np.arange(R), T), np.tile(np.arange(1, T + 1), R)


# ----------------------------------------------------------------------------- mechanism
class WhiteBoxMechanism(MechanismBase):
    r"""The white-box DP-SGD game of a :class:`WhiteBoxSetup` as a mechanism (module docstring).

    A round is one canary game; ``release(member, tau, rng)`` trains ``ceil(R / k)`` runs
    (:func:`draw_runs`, :func:`train_batched`) and returns ``(R, T, d + 1)``: the trajectory
    :math:`\theta_1..\theta_T` of the round's run (the common, public :math:`\theta_0` is not
    repeated) and, in the last column, the round's canary index ``c`` in its run.
    ``log_lr_steps`` is :math:`2(s_t - a_c)/\varsigma_c^2` for a Dirac canary (the optimal
    log-LR of :math:`\pm 1` at step ``t``; at :math:`\tau` the ``dirac`` score) and the per-step
    SeMI-SGD log-LR for an input canary.

    Parameters
    ----------
    setup : WhiteBoxSetup
    bug : Bug or None
        A bug of :mod:`semi_core.sgd.bugs` in the trainer.
    fast : bool
        Ghost clipped means for stacks of linear layers (else per-sample gradients).
    timings : dict, optional
        Receives the trainer's time split (:func:`train_batched`; in-process runs only).
    device : None, str or torch.device
        Where training and statistics run (default: the setup's; otherwise a copy of the
        setup is moved there, :meth:`WhiteBoxSetup.to`). Training keeps the model's dtype;
        releases come back to the host as float64 NumPy; the standardised updates
        :math:`s_t` are float64 (the parameter differences promoted, then scaled by
        :math:`n/(\eta C)`); the natural moments :math:`m_j, v_j` are in the model's dtype.
    """

    def __init__(self, setup: WhiteBoxSetup, *, bug: Bug | None = None, fast: bool = True,
                 timings: dict | None = None, device=None):
        if not isinstance(setup, WhiteBoxSetup):
            raise TypeError(f"setup must be a WhiteBoxSetup, got {type(setup).__name__}")
        if device is not None:
            setup = setup.to(device)
        if bug is not None and not isinstance(bug, Bug):
            raise TypeError(f"bug must be a Bug of semi_core.sgd.bugs or None, got "
                            f"{type(bug).__name__}")
        self.setup = setup
        self.bug = bug
        self.fast = bool(fast)
        self.timings = timings
        self.T = int(setup.cfg.steps)
        self.k = int(setup.k)
        if self.k > setup.cfg.batch_size:
            raise ValueError(f"canaries_per_run = {self.k} exceeds the batch size "
                             f"{setup.cfg.batch_size}")
        self.tests = ("semi-star",) if self.T == 1 else ("semi-star", "semi-unif", "semi-max")
        self._a = self._var = None
        if setup.kind == "dirac":
            m, v = _natural_moments(setup)
            cfg, n = setup.cfg, setup.cfg.batch_size
            self._a = (n - 1) * m[setup.coords] / cfg.clip
            self._var = cfg.sigma_dp ** 2 + (n - 1) * v[setup.coords] / cfg.clip ** 2

    # -- releases -------------------------------------------------------------------------
    def train_runs(self, runs: Runs) -> torch.Tensor:
        """Train ``runs`` (:func:`draw_runs`): :math:`(\\theta_0..\\theta_T)` ``(m, T+1, d)``.

        Parameters
        ----------
        runs : Runs
            Draws of the runs.

        Returns
        -------
        torch.Tensor, shape (m, T+1, d)
            The parameter trajectories.
        """
        with torch.no_grad():
            return train_batched(self.setup, runs, bug=self.bug, fast=self.fast,
                                 timings=self.timings)

    def release(self, member, tau, rng: np.random.Generator) -> np.ndarray:
        """Releases ``(R, T, d + 1)`` of ``R`` rounds packed ``k`` per run (class docstring).

        Parameters
        ----------
        member : array_like of bool, shape (R,)
            Canary bit of each round.
        tau : int or array_like of int
            Insertion step(s) in 1..T.
        rng : numpy.random.Generator
            Source of randomness.

        Returns
        -------
        ndarray, shape (R, T, d + 1)
            Parameters after each step, with the round's canary index in the last column.
        """
        member = np.asarray(member, dtype=bool).reshape(-1)
        runs = draw_runs(self.setup, member, tau, rng)
        traj = self.train_runs(runs)
        return self.pack_releases(traj, member.size)

    def pack_releases(self, traj: torch.Tensor, rounds: int) -> np.ndarray:
        """Trajectories ``(m, T+1, d)`` of the runs -> releases ``(rounds, T, d + 1)``.

        Parameters
        ----------
        traj : torch.Tensor, shape (m, T+1, d)
            Trajectories of the runs.
        rounds : int
            Number of rounds R (<= m k).

        Returns
        -------
        ndarray, shape (rounds, T, d + 1)
            The releases.
        """
        r = np.arange(rounds)
        d = self.setup.fm.d
        out = np.empty((rounds, self.T, d + 1))
        out[:, :, :d] = traj[torch.as_tensor(r // self.k, device=traj.device),
                             1:].detach().cpu().numpy()
        out[:, :, d] = (r % self.k)[:, None]
        return out

    def trajectories(self, releases) -> tuple[torch.Tensor, np.ndarray]:
        """:math:`\\theta_0..\\theta_T` ``(R, T+1, d)`` and the canary indices ``(R,)``.

        Parameters
        ----------
        releases : array_like, shape (R, T, d + 1)
            Releases (finite).

        Returns
        -------
        traj : torch.Tensor, shape (R, T+1, d)
            :math:`\\theta_0..\\theta_T` of each round.
        idx : ndarray of int, shape (R,)
            Each round's canary index.
        """
        d = self.setup.fm.d
        rel = np.asarray(releases, dtype=float)
        if rel.ndim != 3 or rel.shape[1:] != (self.T, d + 1):
            raise ValueError(f"releases must have shape (R, {self.T}, {d + 1}), got "
                             f"{rel.shape}")
        if not np.isfinite(rel).all():
            raise ValueError("releases contain NaN or infinite parameters")
        idx = rel[:, 0, d].astype(np.int64)
        if idx.size and (idx.min() < 0 or idx.max() >= self.k):
            raise ValueError(f"canary indices must be in 0..{self.k - 1}")
        t = torch.as_tensor(rel[:, :, :d], dtype=self.setup.theta0.dtype,
                            device=self.setup.device)
        theta0 = self.setup.theta0.reshape(1, 1, -1).expand(t.shape[0], 1, -1)
        return torch.cat([theta0, t], dim=1), idx

    def standardised(self, traj: torch.Tensor, idx: np.ndarray) -> np.ndarray:
        """:math:`s_t = -\\frac{n}{\\eta C}\\Delta_{t,j}` at each round's coordinate, ``(R, T)``.

        Parameters
        ----------
        traj : torch.Tensor, shape (R, T+1, d)
            Trajectories.
        idx : ndarray of int, shape (R,)
            Canary index of each round.

        Returns
        -------
        ndarray, shape (R, T)
            The standardised updates.
        """
        cfg = self.setup.cfg
        j = torch.as_tensor(self.setup.coords[idx], device=traj.device)
        rows = torch.arange(traj.shape[0], device=traj.device)
        upd = traj[rows, 1:, :][rows, :, j] - traj[rows, :-1, :][rows, :, j]
        return (-cfg.batch_size / (cfg.lr * cfg.clip) * upd.to(STATS_DTYPE)).cpu().numpy()

    def log_lr_steps(self, releases) -> np.ndarray:
        """Per-step log-LRs ``(R, T)`` (class docstring).

        Parameters
        ----------
        releases : array_like, shape (R, T, d + 1)
            Releases.

        Returns
        -------
        ndarray, shape (R, T)
            The per-step log-LRs.
        """
        traj, idx = self.trajectories(releases)
        with torch.no_grad():
            if self.setup.kind == "dirac":
                return dirac_log_lr(self.standardised(traj, idx), a=self._a[idx, None],
                                    var=self._var[idx, None])
            rr, ss = _all_steps(traj.shape[0], self.T)
            return _semi_lrs(self.setup, traj, _input_target(self.setup), rr,
                             ss).reshape(-1, self.T)

    # -- ground truth ---------------------------------------------------------------------
    def mu(self, tau: int = 1) -> float:
        """GDP parameter of the audited run: :math:`2/\\sigma_{DP}` times the bug's factor
        (:meth:`semi_core.sgd.bugs.Bug.mu_factor`; ``inf``: no privacy).

        Parameters
        ----------
        tau : int
            Insertion step (the guarantee does not depend on it).

        Returns
        -------
        float
            The GDP parameter, > 0 (``inf`` for a bug that removes privacy).
        """
        cfg = self.setup.cfg
        if cfg.sigma_dp == 0:
            raise GroundTruthUnknown("plain SGD (sigma_dp = 0) is not differentially private")
        fac = 1.0 if self.bug is None else self.bug.mu_factor(clip=cfg.clip, n=cfg.batch_size,
                                                              steps=cfg.steps)
        return 2.0 / cfg.sigma_dp * fac

    def epsilon(self, delta: float, tau: int = 1) -> float:
        """Exact :math:`\\varepsilon(\\delta)` of the run (replace-one, :math:`\\mu`-GDP).

        Parameters
        ----------
        delta : float
            The :math:`\\delta` of the profile, in (0, 1).
        tau : int
            Insertion step.

        Returns
        -------
        float
            :math:`\\varepsilon(\\delta)`, >= 0 (``inf`` without privacy).
        """
        mu = self.mu(tau)
        return float("inf") if np.isinf(mu) else gdp_epsilon(mu, delta)

    def params(self) -> dict:
        """Configuration (JSON metadata).

        Returns
        -------
        dict
            The configuration: canary kind, ``k``, DP-SGD hyper-parameters, ``d``, bug, ``fast``.
        """
        s, c = self.setup, self.setup.cfg
        out = {"mechanism": "white-box-dp-sgd", "T": self.T, "canary": s.kind,
               "canaries_per_run": self.k, "batch_size": c.batch_size, "lr": c.lr,
               "clip": c.clip, "sigma_dp": c.sigma_dp, "d": int(s.fm.d),
               "bug": None if self.bug is None else self.bug.name, "fast": self.fast}
        if s.kind == "dirac":
            out.update(coords=[int(j) for j in s.coords], scale=float(s.scale))
        return out


def _input_target(setup: WhiteBoxSetup):
    """``target(sel, prev)``: the input canary's clipped gradient at each ``prev`` row."""
    cx, cy = setup.canary_x.unsqueeze(0), setup.canary_y.reshape(1)

    def target(sel, prev):
        return clip_rows(setup.fm.per_sample_grads_batched(prev, cx, cy, shared=True)[:, 0],
                         setup.cfg.clip)
    return target


def _dirac_target(setup: WhiteBoxSetup, idx: np.ndarray):
    """``target(sel, prev)``: :math:`C e_j` at the coordinate of each round in ``sel``
    (``idx``: every round's canary index)."""
    def target(sel, prev):
        g = torch.zeros_like(prev)
        g[torch.arange(prev.shape[0], device=prev.device),
          torch.as_tensor(setup.coords[idx[sel]], device=prev.device)] = setup.cfg.clip
        return g
    return target


# ----------------------------------------------------------------------------- scorers
#: (round, step) parameter points whose SeMI-SGD statistics are computed at once: their
#: ``(points, m, m)`` Gram and capacitance matrices (m = 128 reference records: 2 MiB per 16
#: points and matrix). In the audit's process (after Opacus training) 16 points cost 26 %
#: less scoring CPU than 32 and half the system time (fewer fresh pages for the larger
#: temporaries), 8 points 7 % more than 16 (the tour line at 400 runs). Every point is computed
#: on its own: the scores are bit-identical whatever the block size (a test).
_SCORE_POINTS = 16


@dataclass(frozen=True)
class WhiteBoxScorer:
    """The named scores of the white-box audit (higher = member), a runner scorer.

    Dirac canaries: ``dirac`` (the optimal log-LR at :math:`\\tau`), ``dirac_contrast``
    (``T >= 2``) and with ``semi`` ``semi_sgd`` / ``semi_max`` (SeMI-SGD with target gradient
    :math:`C e_j`). Input canaries: ``semi_sgd``, ``semi_max`` (with ``semi``) and the four loss
    baselines of :mod:`semi_core.stats.update_combination`. ``semi="tau"`` computes SeMI-SGD at
    :math:`\\tau` only (no SeMI-max: ``T`` times cheaper).
    """

    mech: WhiteBoxMechanism
    semi: bool | str = True
    tau_free = False

    def __post_init__(self):
        if self.semi is not True and self.semi is not False and self.semi != "tau":
            raise ValueError(f"semi must be True, False or 'tau', got {self.semi!r}")

    @property
    def names(self) -> tuple[str, ...]:
        semi = (("semi_sgd",) if self.semi else ()) + (("semi_max",) if self.semi is True
                                                         else ())
        if self.mech.setup.kind == "dirac":
            return ("dirac", *(("dirac_contrast",) if self.mech.T >= 2 else ()), *semi)
        return (*semi, *BASELINES)

    def __call__(self, releases, tau, rng=None) -> dict[str, np.ndarray]:
        mech = self.mech
        setup, T = mech.setup, mech.T
        traj, idx = mech.trajectories(releases)
        R = traj.shape[0]
        tau = np.broadcast_to(np.asarray(tau, dtype=np.int64), (R,))
        rows = np.arange(R)
        out: dict[str, np.ndarray] = {}
        with torch.no_grad():
            if setup.kind == "dirac":
                s = mech.standardised(traj, idx)
                out["dirac"] = dirac_log_lr(s[rows, tau - 1], a=mech._a[idx], var=mech._var[idx])
                if T >= 2:
                    rest = (s.sum(1) - s[rows, tau - 1]) / (T - 1)
                    out["dirac_contrast"] = s[rows, tau - 1] - rest
            if self.semi:
                tgt = (_dirac_target(setup, idx) if setup.kind == "dirac"
                       else _input_target(setup))
                if self.semi == "tau":
                    semi_t = _semi_lrs(setup, traj, tgt, rows, tau)
                else:
                    rr, ss = _all_steps(R, T)
                    lrs = _semi_lrs(setup, traj, tgt, rr, ss).reshape(R, T)
                    semi_t, semi_m = lrs[rows, tau - 1], lrs.max(1)
                out["semi_sgd"] = semi_t
                if self.semi is True:
                    out["semi_max"] = semi_m
            if setup.kind == "input":
                cx, cy = setup.canary_x.unsqueeze(0), setup.canary_y.reshape(1)
                losses = setup.fm.losses_batched(traj.reshape(R * (T + 1), -1), cx, cy)
                losses = losses.reshape(R, T + 1).cpu().numpy()
                for name, fn in BASELINES.items():
                    out[name] = fn(losses)
        return {k: out[k] for k in self.names}


# ----------------------------------------------------------------------------- the game
def play_white_box(mech, *, rounds: int, tau: int, seed, semi: bool | str = True,
                   scorers=None, bug: Bug | None = None, fast: bool = True,
                   runs_per_chunk: int = 128, executor=None, progress=False,
                   on_interrupt: str = "raise", device=None) -> GameResult:
    """Play ``rounds`` runs of the white-box game at insertion time ``tau`` on the runner.

    ``mech`` is a :class:`WhiteBoxMechanism` (or a subclass, such as the Opacus adapter's) or a
    :class:`WhiteBoxSetup` (then ``bug`` and ``fast`` build the mechanism). Each run carries
    ``k`` canary games, so the result has ``rounds * k`` games, run-major; chunk ``i`` of the
    runner holds ``runs_per_chunk`` runs (its seed stream is
    :func:`~semi_core._rng.child_seed` ``(seed, i)``; the result depends on ``runs_per_chunk``,
    never on ``executor``). Scores: ``scorers`` (default :class:`WhiteBoxScorer` with
    ``semi``); no LR test statistics beside them (their names would duplicate ``dirac``).
    ``device`` (a setup only): where the mechanism trains and scores
    (:class:`WhiteBoxMechanism`).

    Parameters
    ----------
    mech : WhiteBoxMechanism or WhiteBoxSetup
        The mechanism, or a setup to build it from.
    rounds : int
        Number of runs, >= 1.
    tau : int
        Insertion step in 1..T.
    seed : int or numpy.random.SeedSequence
        Root seed of the game.
    semi : bool or str
        Passed to the default :class:`WhiteBoxScorer`.
    scorers : sequence, optional
        Scorers of the releases; None = the default scorer.
    bug : Bug, optional
        Bug injected when ``mech`` is a setup.
    fast : bool
        Ghost clipping when ``mech`` is a setup.
    runs_per_chunk : int
        Runs per runner chunk, >= 1 (changes the result; the executor does not).
    executor : object, optional
        Executor of the chunks; None = in process.
    progress : bool or callable
        Progress reporting.
    on_interrupt : {"raise", "partial"}
        What an interrupt does: raise, or return the finished chunks.
    device : str or torch.device, optional
        Device of a mechanism built from a setup.

    Returns
    -------
    GameResult
    """
    if isinstance(mech, WhiteBoxSetup):
        mech = WhiteBoxMechanism(mech, bug=bug, fast=fast, device=device)
    elif device is not None:
        raise ValueError("device applies when mech is a WhiteBoxSetup; pass it to the "
                         "WhiteBoxMechanism instead")
    elif not isinstance(mech, WhiteBoxMechanism):
        raise TypeError(f"mech must be a WhiteBoxMechanism or a WhiteBoxSetup, got "
                        f"{type(mech).__name__}")
    rounds = check_int(rounds, "rounds", minimum=1)
    runs_per_chunk = check_int(runs_per_chunk, "runs_per_chunk", minimum=1)
    if scorers is None:
        scorers = (WhiteBoxScorer(mech, semi),)
    return play(mech, rounds * mech.k, seed, tau=tau, tests=(), scorers=scorers,
                chunk_size=runs_per_chunk * mech.k, executor=executor, progress=progress,
                on_interrupt=on_interrupt)
