r"""Audit the checkpoints a user saved: directories of :math:`\theta_0,\dots,\theta_T`.

A *run* is a directory holding one checkpoint per training step, named with the step number
(``step_0.safetensors`` ... ``step_10.safetensors``, ``ckpt-003.pt``, ``5.npz``: the last
integer of the file name is the step). Every step from ``0`` to ``T`` must be there, once.
Formats: ``.safetensors`` (read with ``safetensors``), ``.pt``/``.pth``/``.bin`` state dicts
read with ``torch.load(weights_only=True)`` -- a file that needs arbitrary unpickling is refused
by torch's restricted unpickler *without running it* -- and ``.npz`` (``allow_pickle=False``).
A checkpoint is a flat mapping from parameter names to arrays, or a mapping with one of the
keys ``state_dict``, ``model_state_dict``, ``model`` holding one (the usual training-loop
layouts); buffers (batch-norm statistics) may be present and are ignored.

The model is given as an importable ``module:callable`` returning a fresh ``torch.nn.Module``:
**trusted code**, imported and called like any library the user installs (as a Dask scheduler
is trusted); nothing is unpickled. Its trainable parameters fix the order of
:math:`\theta` and the names and shapes every checkpoint must have.

The auditor (SeMI seed §4.2, §5.2) knows the training configuration (learning rate
:math:`\eta`, batch size :math:`n`, noise multiplier :math:`\sigma_{DP}`, clipping norm
:math:`C`), holds reference records drawn like the training data and the target record
:math:`z^*`. At each step :math:`t` of a run it forms the DP-SGD log-LR of the update
:math:`\theta_t-\theta_{t-1}` at the run's own :math:`\theta_{t-1}` (the two-covariance Gaussian
LR with clipped reference-gradient moments, :func:`semi_core.sgd.batched.batched_dpsgd_log_lr`),
so one run gives the per-step log-LR *trajectory* and every SeMI statistic for every insertion
time. With many runs labelled member / non-member (the canary inserted at step
:math:`\tau` or not), the runs are the rounds of a recorded game
(:func:`semi_core.game.play.play_recorded`) and give a certified :math:`\underline\varepsilon`
(:func:`semi_core.audit.games.audit_game_result`).
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from semi_core._validation import check_batch_size, check_int, check_positive, check_probability
from semi_core.audit.bounds import DEFAULT_METHOD
from semi_core.audit.games import audit_game_result
from semi_core.game.play import play_recorded
from semi_core.sgd.batched import batched_dpsgd_log_lr
from semi_core.sgd.grads import FunctionalModel, clip_rows
from semi_core.stats.update_combination import BASELINES

__all__ = ["SUFFIXES", "STATE_KEYS", "load_model", "load_state", "step_files", "CheckpointRuns",
           "TargetLossScorer", "audit_checkpoints", "as_records", "step_log_lrs",
           "trajectory_losses"]

#: Checkpoint file types read (never by unpickling).
SUFFIXES = (".safetensors", ".pt", ".pth", ".bin", ".npz")
#: Keys under which training loops commonly nest the model's state dict.
STATE_KEYS = ("state_dict", "model_state_dict", "model")
#: Largest checkpoint file read (bytes).
MAX_CHECKPOINT_BYTES = 2**33


def load_model(spec: str) -> nn.Module:
    """Import ``module:callable`` and call it: a fresh ``torch.nn.Module`` (trusted code).

    Parameters
    ----------
    spec : str
        ``"package.module:factory"``; the factory takes no argument.
    """
    if not isinstance(spec, str) or spec.count(":") != 1 or not all(spec.split(":")):
        raise ValueError(f"model must be 'module:callable' (an importable factory), got {spec!r}")
    mod_name, fn_name = spec.split(":")
    try:
        mod = importlib.import_module(mod_name)
    except ImportError as exc:
        raise ValueError(f"model: cannot import module {mod_name!r} ({exc})") from None
    fn = getattr(mod, fn_name, None)
    if not callable(fn):
        raise ValueError(f"model: {mod_name!r} has no callable {fn_name!r}")
    model = fn()
    if not isinstance(model, nn.Module):
        raise TypeError(f"model: {spec} must return a torch.nn.Module, got "
                        f"{type(model).__name__}")
    return model


def _tensor_map(obj, path: Path) -> dict[str, np.ndarray]:
    if not isinstance(obj, Mapping):
        raise ValueError(f"{path}: a checkpoint must hold a mapping of parameter names to "
                         f"arrays, got {type(obj).__name__}")
    nested = [k for k in STATE_KEYS if k in obj and isinstance(obj[k], Mapping)]
    if nested and not all(isinstance(v, torch.Tensor | np.ndarray) for v in obj.values()):
        obj = obj[nested[0]]
    out = {}
    for k, v in obj.items():
        if isinstance(v, torch.Tensor):
            if v.is_complex():
                raise TypeError(f"{path}: entry {k!r} is complex")
            out[str(k)] = v.detach().cpu().numpy()
        elif isinstance(v, np.ndarray):
            out[str(k)] = v
        else:
            raise ValueError(f"{path}: entry {k!r} is a {type(v).__name__}, not an array "
                             f"(nest the state dict under one of {STATE_KEYS})")
    return out


def load_state(path) -> dict[str, np.ndarray]:
    """Read one checkpoint into ``{name: array}`` without unpickling anything.

    Parameters
    ----------
    path : str or Path
        A ``.safetensors``, ``.pt``/``.pth``/``.bin`` (torch state dict) or ``.npz`` file.
    """
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"checkpoint {p} does not exist or is not a regular file")
    if p.stat().st_size > MAX_CHECKPOINT_BYTES:
        raise ValueError(f"{p}: {p.stat().st_size} bytes is over the limit of "
                         f"{MAX_CHECKPOINT_BYTES} for one checkpoint")
    suffix = p.suffix.lower()
    if suffix == ".safetensors":
        try:
            from safetensors.numpy import load_file
        except ImportError:  # pragma: no cover - optional extra
            raise ImportError("reading .safetensors needs safetensors: pip install "
                              "'semi_core[torch]'") from None
        try:
            return dict(load_file(str(p)))
        except Exception as exc:  # noqa: BLE001 - any parse failure names the file
            raise ValueError(f"{p}: not a readable safetensors file ({exc})") from None
    if suffix in (".pt", ".pth", ".bin"):
        try:
            obj = torch.load(p, map_location="cpu", weights_only=True)
        except Exception as exc:  # noqa: BLE001 - the restricted unpickler refuses objects
            raise ValueError(f"{p}: refused -- not a plain state dict readable with "
                             f"torch.load(weights_only=True); files that need arbitrary "
                             f"unpickling are never loaded ({type(exc).__name__}: "
                             f"{str(exc).splitlines()[0][:200]})") from None
        return _tensor_map(obj, p)
    if suffix == ".npz":
        try:
            with np.load(p, allow_pickle=False) as z:
                return {k: z[k] for k in z.files}
        except ValueError as exc:
            raise ValueError(f"{p}: not a plain .npz archive ({exc})") from None
    raise ValueError(f"{p}: unknown checkpoint type {suffix!r}; expected one of {SUFFIXES}")


def step_files(directory) -> list[Path]:
    """The checkpoints of one run in step order ``0..T`` (the last integer of each file name).

    Raises naming the directory when a step is missing or appears twice, or no checkpoint is
    there.
    """
    d = Path(directory)
    if not d.is_dir():
        raise NotADirectoryError(f"run {d} is not a directory")
    steps: dict[int, list[Path]] = {}
    for p in sorted(d.iterdir()):
        if p.suffix.lower() not in SUFFIXES or not p.is_file():
            continue
        nums = re.findall(r"\d+", p.stem)
        if not nums:
            raise ValueError(f"{p}: the file name carries no step number")
        steps.setdefault(int(nums[-1]), []).append(p)
    if not steps:
        raise ValueError(f"run {d} holds no checkpoint ({', '.join(SUFFIXES)})")
    dup = {k: [q.name for q in v] for k, v in steps.items() if len(v) > 1}
    if dup:
        raise ValueError(f"run {d}: steps saved twice: {dup}")
    T = max(steps)
    missing = sorted(set(range(T + 1)) - set(steps))
    if missing:
        raise ValueError(f"run {d}: steps {missing[:10]}{'...' if len(missing) > 10 else ''} "
                         f"are missing (found {len(steps)} of 0..{T})")
    if T < 1:
        raise ValueError(f"run {d}: only step 0 is there; at least steps 0 and 1 are needed")
    return [steps[t][0] for t in range(T + 1)]


def as_records(fm: FunctionalModel, reference, target):
    """Reference records ``(m, ...)`` and the target ``(1, ...)`` as tensors of the model's
    dtype (labels ``long`` for cross-entropy); raises when ``m < 2`` or the labels do not match."""
    dt = fm.dtype
    ylong = fm.loss_name == "cross_entropy"
    rx, ry = reference
    ref_x = torch.as_tensor(np.asarray(rx), dtype=dt)
    ref_y = torch.as_tensor(np.asarray(ry)).long() if ylong else \
        torch.as_tensor(np.asarray(ry), dtype=dt)
    if ref_x.ndim < 1 or ref_x.shape[0] < 2 or ref_y.shape[:1] != ref_x.shape[:1]:
        raise ValueError(f"reference must hold m >= 2 records with one label each, got "
                         f"{tuple(ref_x.shape)} and {tuple(ref_y.shape)}")
    if target is None:
        return ref_x, ref_y, None, None
    tx, ty = target
    tgt_x = torch.as_tensor(np.asarray(tx), dtype=dt).reshape(1, *ref_x.shape[1:])
    tgt_y = torch.as_tensor(np.asarray(ty)).reshape(1)
    tgt_y = tgt_y.long() if ylong else tgt_y.to(dt)
    return ref_x, ref_y, tgt_x, tgt_y


def step_log_lrs(fm: FunctionalModel, traj: torch.Tensor, ref_x, ref_y, tgt_x, tgt_y, *,
                 lr: float, batch_size: int, noise_multiplier: float, max_grad_norm: float,
                 shrinkage: float = 0.1, ridge: float = 1e-4) -> np.ndarray:
    r"""Per-step DP-SGD log-LRs ``(k, T)`` of trajectories ``(k, T+1, d)`` at each run's own
    parameters (SeMI seed §4.2): for every step :math:`t`, the two-covariance Gaussian LR of the
    update :math:`\theta_t-\theta_{t-1}` with the clipped reference-gradient moments and the
    clipped target gradient at :math:`\theta_{t-1}`
    (:func:`semi_core.sgd.batched.batched_dpsgd_log_lr`).

    The one home of this statistic for recorded runs (checkpoints) and a user's own training
    loop (:mod:`semi_core.integrations.training`).
    """
    R, T1 = traj.shape[0], traj.shape[1]
    out = torch.empty(R, T1 - 1, dtype=traj.dtype)
    C = max_grad_norm
    with torch.no_grad():
        for t in range(1, T1):
            prev = traj[:, t - 1]
            ref = clip_rows(fm.per_sample_grads_batched(prev, ref_x, ref_y, shared=True), C)
            tgt = clip_rows(fm.per_sample_grads_batched(prev, tgt_x, tgt_y, shared=True)[:, 0], C)
            out[:, t - 1] = batched_dpsgd_log_lr(
                traj[:, t] - prev, ref, tgt, eta=lr, n=batch_size, sigma_dp=noise_multiplier,
                clip=C, shrinkage=shrinkage, ridge=ridge)
    return out.numpy()


def trajectory_losses(fm: FunctionalModel, traj: torch.Tensor, tgt_x, tgt_y) -> np.ndarray:
    """The target's loss at every state of trajectories ``(k, T+1, d)``: ``(k, T+1)``."""
    k, T1, d = traj.shape
    with torch.no_grad():
        return fm.losses_batched(traj.reshape(k * T1, d), tgt_x, tgt_y).reshape(k, T1).numpy()


@dataclass
class CheckpointRuns:
    r"""Recorded DP-SGD runs (checkpoint directories) as a recorded mechanism.

    Parameters
    ----------
    model : torch.nn.Module
        A fresh instance of the trained architecture (its trainable parameters define
        :math:`\theta`).
    reference : (x, y)
        Reference records (arrays or tensors) drawn like the training data (``m >= 2``).
    target : (x, y)
        The target record :math:`z^*` (one input, one label).
    lr, batch_size, noise_multiplier, max_grad_norm : float, int, float, float
        :math:`\eta`, :math:`n`, :math:`\sigma_{DP}` (``0`` for plain SGD) and :math:`C` of
        the training (for unclipped SGD give a norm above every gradient's).
    steps : int
        :math:`T`: each run must hold the checkpoints ``0..T``.
    loss : {"cross_entropy", "mse"}
    shrinkage, ridge : float
        Covariance shrinkage and relative ridge of the gradient moments (:mod:`semi_core.sgd.gradstats`).
    """

    model: nn.Module
    reference: tuple
    target: tuple
    lr: float
    batch_size: int
    steps: int
    noise_multiplier: float = 0.0
    max_grad_norm: float = 1.0
    loss: str = "cross_entropy"
    shrinkage: float = 0.1
    ridge: float = 1e-4
    fm: FunctionalModel = field(init=False, repr=False)

    def __post_init__(self):
        self.fm = FunctionalModel(self.model, loss=self.loss)
        self.lr = check_positive(self.lr, "lr")
        self.batch_size = check_batch_size(self.batch_size, "batch_size")
        self.steps = check_int(self.steps, "steps", minimum=1)
        if not (np.isfinite(self.noise_multiplier) and self.noise_multiplier >= 0):
            raise ValueError(f"noise_multiplier must be finite and >= 0, got "
                             f"{self.noise_multiplier}")
        self.max_grad_norm = check_positive(self.max_grad_norm, "max_grad_norm")
        self.shrinkage = check_probability(self.shrinkage, "shrinkage", low_open=False,
                                           high_open=False)
        self.ref_x, self.ref_y, self.tgt_x, self.tgt_y = as_records(
            self.fm, self.reference, self.target)

    @property
    def T(self) -> int:
        """Number of steps :math:`T` (the statistics' length)."""
        return self.steps

    tests = ("semi-star", "semi-unif", "semi-max")

    def trajectory(self, run) -> np.ndarray:
        r""":math:`\theta_0..\theta_T` of one run directory, ``(T+1, d)``; errors name the file."""
        files = step_files(run)
        if len(files) != self.steps + 1:
            raise ValueError(f"run {run}: {len(files) - 1} steps saved, {self.steps} expected "
                             f"(steps)")
        fm = self.fm
        out = np.empty((len(files), fm.d), dtype=np.float64)
        buffers = set(fm.frozen)
        for t, f in enumerate(files):
            state = load_state(f)
            missing = [k for k in fm.names if k not in state]
            extra = [k for k in state if k not in fm.names and k not in buffers]
            if missing or extra:
                raise ValueError(f"{f}: parameter names do not match the model (missing "
                                 f"{missing[:5]}, unknown {extra[:5]})")
            pos = 0
            for k, shape, size in zip(fm.names, fm.shapes, fm.sizes, strict=True):
                a = np.asarray(state[k])
                if tuple(a.shape) != tuple(shape):
                    raise ValueError(f"{f}: {k!r} has shape {tuple(a.shape)}, the model's is "
                                     f"{tuple(shape)}")
                if a.dtype.kind not in "biuf":
                    raise TypeError(f"{f}: {k!r} has dtype {a.dtype}, not real numbers")
                if not np.isfinite(a).all():
                    raise ValueError(f"{f}: {k!r} holds NaN or infinite weights")
                out[t, pos:pos + size] = a.reshape(-1)
                pos += size
        return out

    def load(self, items) -> np.ndarray:
        """Trajectories of run directories, ``(k, T+1, d)``."""
        return np.stack([self.trajectory(run) for run in items])

    def log_lr_steps(self, releases) -> np.ndarray:
        r"""Per-step DP-SGD log-LRs ``(k, T)`` of trajectories ``(k, T+1, d)``."""
        traj = torch.as_tensor(np.asarray(releases, dtype=np.float64), dtype=self.fm.dtype)
        if traj.ndim != 3 or traj.shape[1:] != (self.steps + 1, self.fm.d):
            raise ValueError(f"releases must have shape (k, {self.steps + 1}, {self.fm.d}), got "
                             f"{tuple(traj.shape)}")
        return step_log_lrs(self.fm, traj, self.ref_x, self.ref_y, self.tgt_x, self.tgt_y,
                            lr=self.lr, batch_size=self.batch_size,
                            noise_multiplier=self.noise_multiplier, max_grad_norm=self.max_grad_norm,
                            shrinkage=self.shrinkage, ridge=self.ridge)

    def target_losses(self, releases) -> np.ndarray:
        r"""The target's loss along each trajectory, ``(k, T+1)``."""
        traj = torch.as_tensor(np.asarray(releases, dtype=np.float64), dtype=self.fm.dtype)
        return trajectory_losses(self.fm, traj, self.tgt_x, self.tgt_y)

    def params(self) -> dict[str, Any]:
        """The audited configuration (JSON metadata)."""
        return {"mechanism": "checkpoints", "T": self.steps, "d": int(self.fm.d),
                "lr": self.lr, "batch_size": self.batch_size,
                "noise_multiplier": float(self.noise_multiplier),
                "max_grad_norm": self.max_grad_norm, "loss": self.loss,
                "n_reference": int(self.ref_x.shape[0]), "shrinkage": self.shrinkage}


class TargetLossScorer:
    """The loss-based baselines (Delta, Back-Front; :data:`semi_core.stats.update_combination.BASELINES`)
    on the target's loss along each recorded trajectory (higher = member)."""

    names = tuple(BASELINES)
    tau_free = True

    def __init__(self, runs: CheckpointRuns):
        self.runs = runs

    def __call__(self, releases, tau, rng):
        losses = self.runs.target_losses(releases)
        return {name: fn(losses) for name, fn in BASELINES.items()}


def audit_checkpoints(runs: CheckpointRuns, directories: Sequence, *, member=None, tau=None,
                      delta: float = 1e-5, failure_prob: float = 0.05, methods=None,
                      executor=None, progress=False, seed=0) -> dict[str, Any]:
    r"""Audit saved runs: the log-LR trajectory of each, and certified bounds over labelled runs.

    Parameters
    ----------
    runs : CheckpointRuns
        The model, training configuration, reference data and target.
    directories : sequence of path
        One directory of checkpoints ``0..T`` per run.
    member : array_like of bool, optional
        Whether the target was in each run (inserted at step ``tau``); without it only the
        trajectories and statistics are reported.
    tau : int or array_like of int, optional
        Insertion step(s) known to SeMI* (needed with ``member``).
    delta, failure_prob : float
        Of the certified bounds (:func:`semi_core.audit.games.audit_game_result`).
    methods : str or sequence of str, optional
        Certifying methods of :mod:`semi_core.audit.bounds` (default: its default method); the
        runs are scored once, whatever the number of methods.
    executor, progress, seed
        As in :func:`semi_core.game.play.play_recorded`.

    Returns
    -------
    dict
        ``log_lr`` (runs x T), ``statistics`` per run (SeMI* at every step, SeMI-Unif,
        SeMI-max), and with ``member``: ``game`` counts and ``epsilon_lower_bound`` per test and
        method, each with the assumption it rests on.
    """
    dirs = [str(d) for d in directories]
    if not dirs:
        raise ValueError("directories must name at least one run")
    if member is None:
        traj = runs.load(dirs)
        lr = runs.log_lr_steps(traj)
        losses = runs.target_losses(traj)
        return {"runs": dirs, "config": runs.params(), "log_lr": lr.tolist(),
                "target_loss": losses.tolist(),
                "statistics": [{"semi_star_by_tau": row.tolist(), "semi_max": float(row.max()),
                                "semi_unif": float(np.logaddexp.reduce(row) - np.log(row.size))}
                               for row in lr]}
    if tau is None:
        raise ValueError("tau (the insertion step of the member runs) is needed with member")
    member = np.asarray(member, dtype=bool)
    res = play_recorded(runs, dirs, member, tau, seed, scorers=[TargetLossScorer(runs)],
                        executor=executor, progress=progress)
    if min(int(res.member.sum()), int((~res.member).sum())) < 2:
        raise ValueError(f"member must label at least 2 runs of each class, got "
                         f"{int(res.member.sum())} members and {int((~res.member).sum())} "
                         "non-members")
    methods = [DEFAULT_METHOD] if methods is None else (
        [methods] if isinstance(methods, str) else list(methods))
    bounds = {m: audit_game_result(res, delta=delta, failure_prob=failure_prob, method=m)
              for m in methods}
    return {"runs": len(dirs), "config": runs.params(), "members": int(res.member.sum()),
            "non_members": int((~res.member).sum()), "delta": delta,
            "failure_prob": failure_prob,
            "epsilon_lower_bound": {t: {m: b[t] for m, b in bounds.items()} for t in res.stats},
            "game": res}
