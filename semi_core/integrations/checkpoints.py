r"""Audit the checkpoints a user saved: one directory of checkpoints per training run.

**Layout.** A *run* is a directory (any name) holding checkpoints named with a number
(``step_0.safetensors``, ``ckpt-003.pt``, ``5.npz``, ``step_4000000000.pt``, a Unix timestamp:
the last integer of the file name). By default that number is the training step; checkpoints
may be saved every ``k`` steps (any stride, even uneven: the *gaps* are the differences of the
saved steps). When the numbers are not training steps (timestamps), ``every=k`` says the
checkpoints are ``k`` steps apart and the numbers only order the files. :math:`\theta_0` is
the file numbered 0; when no such file is there it comes from the model factory (the factory
must return the initial parameters the runs started from -- a seeded factory; the result says
``theta0: model factory``). Memory never depends on the size of the step numbers. Labelled runs
come as folders (``ROOT/member/*``, ``ROOT/non-member/*``) or a manifest (CSV or JSON:
``path, member[, tau]``) read by the CLI.

**Formats.** ``.safetensors`` (read with ``safetensors.torch``: float16, bfloat16, float32,
float64), ``.pt``/``.pth``/``.bin`` state dicts read with ``torch.load(weights_only=True)`` -- a
file that needs arbitrary unpickling is refused by torch's restricted unpickler *without
running it* -- and ``.npz`` (``allow_pickle=False``). A checkpoint is a flat mapping from
parameter names to arrays, or a mapping with one of the keys ``state_dict``,
``model_state_dict``, ``model`` holding one; buffers (batch-norm statistics) may be present
and are ignored. Weights must be floating point (bool and integer tensors are refused); every
float dtype is widened exactly to float64.

**Where float64 is used.** The model is given as an importable ``module:callable`` returning
a fresh ``torch.nn.Module`` (**trusted code**, imported and called; nothing is unpickled). The
statistics run on a float64 *copy* of it (:class:`CheckpointRuns` casts the copy; the user's
module is untouched): per-sample gradients, clipping, reference moments, Cholesky factors and
target losses are float64 whatever dtype the model was trained in (half/bfloat16 models never
reach a Cholesky in half precision). Checkpoints rounded to bfloat16 carry rounding noise the
statistic does not model (power, not validity, is affected).

**Statistic.** The auditor (SeMI seed §4.2, §5.2) knows the training configuration (learning
rate :math:`\eta`, batch size :math:`n`, noise multiplier :math:`\sigma_{DP}`, clipping norm
:math:`C`), holds reference records drawn like the training data and the target record
:math:`z^*`. For each gap :math:`(a, b]` of :math:`k = b - a` steps of a run it forms the
DP-SGD log-LR of :math:`\theta_b-\theta_a` at the run's own :math:`\theta_a`
(:mod:`semi_core.sgd.stride_lr`: the per-step statistic at ``k = 1``, the ``k``-step
composition under frozen gradients otherwise), so one run gives the per-gap log-LR
*trajectory* and every SeMI statistic. With many runs labelled member / non-member (the canary
inserted at step :math:`\tau` or not), the runs are the rounds of a recorded game
(:func:`semi_core.game.play.play_recorded`; SeMI* reads the gap holding :math:`\tau`, SeMI-Unif
weighs gap ``j`` by :math:`k_j/T`) and give a certified :math:`\underline\varepsilon`
(:func:`semi_core.audit.report.certify_game`). The certified bound is valid for any
score, hence whatever the frozen-gradient error; only its power depends on it.

**Memory.** Reference statistics are dense :math:`d\times d` moments streamed over chunks of
reference records when :math:`m > d`, low-rank :math:`m\times m` Gram matrices when
:math:`m \le d`; either way the peak is linear in the number of reference records ``m``
(:meth:`CheckpointRuns.plan`), and the whole audit is estimated and checked against the
limits before any checkpoint is read (:func:`semi_core._validation.check_work`).
"""

from __future__ import annotations

import copy
import importlib
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.func import functional_call, vmap

from semi_core._validation import (
    check_batch_size,
    check_int,
    check_positive,
    check_probability,
    check_work,
    format_bytes,
)
from semi_core.audit.report import AuditReport, certify_game, method_specs
from semi_core.game.play import play_recorded
from semi_core.sgd.batched import batched_dpsgd_log_lr, dense_reference_stats
from semi_core.sgd.device import STATS_DTYPE, resolve_device
from semi_core.sgd.grads import FunctionalModel, clip_rows
from semi_core.sgd.stride_lr import streamed_moments, stride_log_lr_dense, stride_log_lr_lowrank
from semi_core.stats.statistics import semi_unif
from semi_core.stats.update_combination import BASELINES

__all__ = ["SUFFIXES", "STATE_KEYS", "load_model", "load_state", "step_files", "CheckpointRuns",
           "TargetLossScorer", "audit_checkpoints", "as_records", "step_log_lrs",
           "trajectory_losses", "trajectory_log_losses", "loss_scores"]

#: Checkpoint file types read (never by unpickling).
SUFFIXES = (".safetensors", ".pt", ".pth", ".bin", ".npz")
#: Keys under which training loops commonly nest the model's state dict.
STATE_KEYS = ("state_dict", "model_state_dict", "model")
#: Largest checkpoint file read (bytes).
MAX_CHECKPOINT_BYTES = 2**33
#: Bytes of per-sample gradients one block of runs may hold at once (reference chunking).
GRAD_BLOCK_BYTES = 2**26


def load_model(spec: str) -> nn.Module:
    """Import ``module:callable`` and call it: a fresh ``torch.nn.Module`` (trusted code).

    Parameters
    ----------
    spec : str
        ``"package.module:factory"``; the factory takes no argument.

    Returns
    -------
    torch.nn.Module
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
            v = v.detach().cpu()
            # bfloat16 has no NumPy dtype: widened to float32, which holds every bf16 exactly
            out[str(k)] = (v.float() if v.dtype == torch.bfloat16 else v).numpy()
        elif isinstance(v, np.ndarray):
            out[str(k)] = v
        else:
            raise ValueError(f"{path}: entry {k!r} is a {type(v).__name__}, not an array "
                             f"(nest the state dict under one of {STATE_KEYS})")
    return out


def load_state(path) -> dict[str, np.ndarray]:
    """Read one checkpoint into ``{name: array}`` without unpickling anything.

    bfloat16 tensors come back as float32 arrays (exactly: every bfloat16 is a float32);
    other dtypes as stored.

    Parameters
    ----------
    path : str or Path
        A ``.safetensors``, ``.pt``/``.pth``/``.bin`` (torch state dict) or ``.npz`` file.

    Returns
    -------
    dict of str -> ndarray
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
            from safetensors.torch import load_file
        except ImportError:  # pragma: no cover - optional extra
            raise ImportError("reading .safetensors needs safetensors: pip install "
                              "'semi_core[torch]'") from None
        try:
            obj = load_file(str(p))
        except Exception as exc:  # noqa: BLE001 - any parse failure names the file
            raise ValueError(f"{p}: not a readable safetensors file ({exc})") from None
        return _tensor_map(obj, p)
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


def step_files(directory) -> list[tuple[int, Path]]:
    """The checkpoints of one run as ``(number, path)``, sorted by number.

    The number is the last integer of the file name (any size: memory and time depend on the
    number of files only). Raises naming the directory when a number appears twice or no
    checkpoint is there.

    Parameters
    ----------
    directory : str or Path

    Returns
    -------
    list of (int, Path)
    """
    d = Path(directory)
    if not d.is_dir():
        raise NotADirectoryError(f"run {d} is not a directory")
    found: dict[int, list[Path]] = {}
    for p in d.iterdir():
        if p.suffix.lower() not in SUFFIXES or not p.is_file():
            continue
        nums = re.findall(r"\d+", p.stem)
        if not nums:
            raise ValueError(f"{p}: the file name carries no step number")
        found.setdefault(int(nums[-1]), []).append(p)
    if not found:
        raise ValueError(f"run {d} holds no checkpoint ({', '.join(SUFFIXES)})")
    dup = {k: sorted(q.name for q in v) for k, v in found.items() if len(v) > 1}
    if dup:
        raise ValueError(f"run {d}: step numbers saved twice: {dict(list(dup.items())[:5])}")
    return sorted((k, v[0]) for k, v in found.items())


def _check_labels(y: torch.Tensor, name: str) -> None:
    if y.dtype == torch.bool or y.is_complex():
        raise TypeError(f"{name}: labels must be integers (class indices), got {y.dtype}")
    if y.is_floating_point():
        if not bool(torch.isfinite(y).all()) or bool((y != torch.round(y)).any()):
            raise ValueError(f"{name}: labels must be whole numbers (class indices) for "
                             "cross_entropy; got a fractional or non-finite label")


def _host(a):
    """``a`` as NumPy-convertible host data (tensors on any device are copied to the CPU)."""
    return a.detach().cpu() if isinstance(a, torch.Tensor) else a


def as_records(fm: FunctionalModel, reference, target):
    """Reference records ``(m, ...)`` and the target ``(1, ...)`` as CPU tensors of the model's
    dtype (records given as tensors may be on any device; callers move the result to theirs).

    Labels become ``long`` for cross-entropy (refused when they are bool, fractional or not
    finite: nothing is truncated). Raises when ``m < 2``, the labels do not match the records,
    or the target's size differs from a reference record's.

    Parameters
    ----------
    fm : FunctionalModel
    reference : (x, y)
    target : (x, y) or None

    Returns
    -------
    tuple
        ``ref_x, ref_y, tgt_x, tgt_y`` (the last two ``None`` without a target).
    """
    dt = fm.dtype
    ylong = fm.loss_name == "cross_entropy"
    rx, ry = (_host(a) for a in reference)
    ref_x = torch.as_tensor(np.asarray(rx), dtype=dt)
    ry = torch.as_tensor(np.asarray(ry))
    if ylong:
        _check_labels(ry, "reference")
    ref_y = ry.long() if ylong else ry.to(dt)
    if ref_x.ndim < 1 or ref_x.shape[0] < 2 or ref_y.shape[:1] != ref_x.shape[:1]:
        raise ValueError(f"reference must hold m >= 2 records with one label each, got "
                         f"{tuple(ref_x.shape)} and {tuple(ref_y.shape)}")
    if target is None:
        return ref_x, ref_y, None, None
    tx, ty = (_host(a) for a in target)
    tgt_x = torch.as_tensor(np.asarray(tx), dtype=dt)
    per = int(np.prod(ref_x.shape[1:], dtype=np.int64))
    if tgt_x.numel() != per:
        raise ValueError(f"target: {tgt_x.numel()} features, a reference record has {per} "
                         f"(shape {tuple(ref_x.shape[1:])})")
    tgt_x = tgt_x.reshape(1, *ref_x.shape[1:])
    tgt_y = torch.as_tensor(np.asarray(ty))
    if tgt_y.numel() != 1:
        raise ValueError(f"target: must have one label, got {tgt_y.numel()}")
    tgt_y = tgt_y.reshape(1)
    if ylong:
        _check_labels(tgt_y, "target")
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

    The per-step statistic of a user's own training loop
    (:mod:`semi_core.integrations.training`); saved checkpoints use
    :meth:`CheckpointRuns.log_lr_steps` (any stride, memory linear in the reference set).

    Device and dtype: computed on ``traj``'s device (the records must be there too). The
    gradients are evaluated in the model's dtype (``fm.dtype``) at the recorded parameters;
    the update :math:`\theta_t-\theta_{t-1}`, the clipped gradients and the covariance
    solve are float64 (:data:`~semi_core.sgd.device.STATS_DTYPE`) when ``traj`` is float64
    (give float64 trajectories for a float32 model: a difference of nearby float32 values
    loses the digits the LR divides by).

    Parameters
    ----------
    fm : FunctionalModel
    traj : Tensor (k, T+1, d)
        :math:`\theta_0..\theta_T` of ``k`` runs.
    ref_x, ref_y, tgt_x, tgt_y : Tensor
        Reference records and the target (:func:`as_records`), on ``traj``'s device.
    lr, batch_size, noise_multiplier, max_grad_norm, shrinkage, ridge : float
        :math:`\eta`, :math:`n`, :math:`\sigma_{DP}`, :math:`C` and the covariance's
        shrinkage and ridge.

    Returns
    -------
    ndarray (k, T)
    """
    R, T1 = traj.shape[0], traj.shape[1]
    out = torch.empty(R, T1 - 1, dtype=traj.dtype, device=traj.device)
    C = max_grad_norm
    with torch.no_grad():
        for t in range(1, T1):
            prev = traj[:, t - 1]
            at = prev.to(fm.dtype)
            ref = clip_rows(fm.per_sample_grads_batched(at, ref_x, ref_y, shared=True),
                            C).to(traj.dtype)
            tgt = clip_rows(fm.per_sample_grads_batched(at, tgt_x, tgt_y, shared=True)[:, 0],
                            C).to(traj.dtype)
            out[:, t - 1] = batched_dpsgd_log_lr(
                traj[:, t] - prev, ref, tgt, eta=lr, n=batch_size, sigma_dp=noise_multiplier,
                clip=C, shrinkage=shrinkage, ridge=ridge)
    return out.cpu().numpy()


def trajectory_losses(fm: FunctionalModel, traj: torch.Tensor, tgt_x, tgt_y) -> np.ndarray:
    """The target's loss at every state of trajectories ``(k, T+1, d)``: ``(k, T+1)``.

    Parameters
    ----------
    fm : FunctionalModel
        The model.
    traj : torch.Tensor, shape (k, T+1, d)
        Parameter trajectories.
    tgt_x : torch.Tensor
        The target's input (one record).
    tgt_y : torch.Tensor
        Its label.

    Returns
    -------
    ndarray, shape (k, T+1)
        The target's loss at every state.
    """
    k, T1, d = traj.shape
    with torch.no_grad():
        return fm.losses_batched(traj.reshape(k * T1, d), tgt_x,
                                 tgt_y).reshape(k, T1).cpu().numpy()


def trajectory_log_losses(fm: FunctionalModel, traj: torch.Tensor, tgt_x, tgt_y) -> np.ndarray:
    r"""The logarithm of the target's loss at every state, ``(k, T+1)``, without underflow.

    Cross-entropy :math:`\ell = \log(1 + e^{a})`, :math:`a = \log\sum_{j\ne y}e^{z_j - z_y}`:

    .. math:: \log\ell = \log\operatorname{softplus}(a)\ (a \ge -20),\qquad
              \log\ell = a - e^{a}/2 + O(e^{2a})\ (a < -20),

    finite for every finite logit margin (float64 ``cross_entropy`` itself is exactly 0 past a
    margin of about 37: a memorised canary). Squared error
    :math:`\ell = \tfrac12(f-y)^2`: :math:`\log\ell = 2\log|f-y| - \log 2` (``-inf`` only for an
    exact fit).

    Parameters
    ----------
    fm : FunctionalModel
        The model (cross-entropy or squared-error loss).
    traj : torch.Tensor, shape (k, T+1, d)
        Parameter trajectories.
    tgt_x : torch.Tensor
        The target's input (one record).
    tgt_y : torch.Tensor
        Its label.

    Returns
    -------
    ndarray, shape (k, T+1)
        :math:`\log\ell` at every state (``-inf`` only for an exact squared-error fit).
    """
    k, T1, d = traj.shape
    thetas = traj.reshape(k * T1, d)

    def out(theta):
        params = {**fm.frozen, **fm.unflatten(theta)}
        return functional_call(fm._thread_module(), params, (tgt_x,))

    with torch.no_grad():
        z = vmap(out)(thetas).reshape(k * T1, -1)
        if fm.loss_name == "cross_entropy":
            y = int(tgt_y.reshape(()))
            zy = z[:, y:y + 1]
            rest = torch.cat([z[:, :y], z[:, y + 1:]], dim=1) - zy
            a = torch.logsumexp(rest, dim=1)
            small = a < -20
            safe = torch.where(small, torch.zeros_like(a), a)
            logl = torch.where(small, a - torch.exp(a) / 2,
                               torch.log(nn.functional.softplus(safe)))
        else:
            r = (z.reshape(-1) - tgt_y.reshape(())).abs()
            logl = 2 * torch.log(r) - math.log(2.0)
    return logl.reshape(k, T1).cpu().numpy()


def _log_ratio(log_a: np.ndarray, log_b: np.ndarray) -> np.ndarray:
    """:math:`\\log(\\ell_a/\\ell_b)` with the offset :math:`c\\to0^+` limits at zero losses:
    :math:`+\\infty` when only :math:`\\ell_b = 0`, 0 when both are."""
    both = np.isneginf(log_a) & np.isneginf(log_b)
    with np.errstate(invalid="ignore"):
        out = log_a - log_b
    return np.where(both, 0.0, out)


def loss_scores(log_losses) -> dict[str, np.ndarray]:
    r"""The four loss baselines (:data:`semi_core.stats.update_combination.BASELINES`, higher =
    member) from log-losses ``(..., T+1)``.

    The differences are those of :math:`\ell = e^{\log\ell}`; the ratio scores are given as
    the *logarithm* of the ratio (a monotone map of the seed's score: the same test, the same
    bounds), formed from the log-losses so that a loss that underflows in float64 does not
    end the audit. With an exact zero loss (squared error) the ratio at offset :math:`c = 0` is
    read as the :math:`c\to0^+` limit: :math:`\log(\ell_{t-1}/0) = +\infty` (ranked above every
    finite score) and :math:`\log(0/0) = 0`.

    Parameters
    ----------
    log_losses : array_like, shape (..., T+1)
        Logarithms of the target's losses (no NaN, no ``+inf``), T >= 1.

    Returns
    -------
    dict of str -> ndarray
    """
    ll = np.asarray(log_losses, dtype=float)
    if ll.ndim < 1 or ll.shape[-1] < 2 or np.isnan(ll).any() or np.isposinf(ll).any():
        raise ValueError("log_losses must be (..., T+1 >= 2) with no NaN or +inf")
    loss = np.exp(ll)
    step = _log_ratio(ll[..., :-1], ll[..., 1:])
    return {"delta_diff": np.max(loss[..., :-1] - loss[..., 1:], axis=-1),
            "delta_ratio": np.max(step, axis=-1),
            "back_front_diff": loss[..., 0] - loss[..., -1],
            "back_front_ratio": _log_ratio(ll[..., 0], ll[..., -1])}


def _float_model(model: nn.Module) -> nn.Module:
    """A float64 copy of the user's module (the statistics' precision; the original is kept)."""
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    return copy.deepcopy(model).to(torch.float64)


@dataclass
class CheckpointRuns:
    r"""Recorded DP-SGD runs (checkpoint directories) as a recorded mechanism.

    Parameters
    ----------
    model : torch.nn.Module
        A fresh instance of the trained architecture, any float dtype (its trainable
        parameters define :math:`\theta`; a float64 copy computes the statistics; its
        parameters are :math:`\theta_0` of runs that did not save it).
    reference : (x, y)
        Reference records (arrays or tensors) drawn like the training data (``m >= 2``).
    target : (x, y)
        The target record :math:`z^*` (one input, one label).
    lr, batch_size, noise_multiplier, max_grad_norm : float, int, float, float
        :math:`\eta`, :math:`n`, :math:`\sigma_{DP}` (``0`` for plain SGD) and :math:`C` of
        the training (for unclipped SGD give a norm above every gradient's).
    steps : int or sequence of int
        An int :math:`T`: checkpoints at ``0, every, 2 every, ..., T`` (``T`` a multiple of
        ``every``); a sequence: the saved training steps themselves (strictly increasing,
        ``>= 0``; step 0 is :math:`\theta_0`, added when absent).
    every : int
        Training steps between checkpoints when ``steps`` is an int (default 1: every step).
    file_steps : {"name", "order"}
        ``"name"``: the number in a file name is its training step (a file numbered 0 is
        :math:`\theta_0`); ``"order"``: the numbers only order the files (timestamps), the
        ``i``-th file is the ``i``-th saved step (with one file fewer than saved steps
        :math:`\theta_0` comes from the model factory).
    loss : {"cross_entropy", "mse"}
    shrinkage, ridge : float
        Covariance shrinkage and relative ridge of the gradient moments (:mod:`semi_core.sgd.gradstats`).
    form : {"auto", "dense", "lowrank"}
        Reference statistics: dense ``d x d`` streamed moments, low-rank ``m x m`` Gram
        matrices, or the smaller of the two (``"auto"``).
    device : None, str or torch.device
        Where the statistics run; default the model's device (the model must already be
        there; ``meta`` or a device absent on this machine is refused before any file is read,
        :func:`~semi_core.sgd.device.resolve_device`). The checkpoint files are read on the
        host; the float64 copy of the model, the records and the trajectories being scored
        live on ``device``; every statistic (gradients, moments, the covariance solves, the
        target's log-loss) is float64 (:data:`~semi_core.sgd.device.STATS_DTYPE`) whatever
        the model's dtype, and only the scores come back to the host.
    """

    model: nn.Module
    reference: tuple
    target: tuple
    lr: float
    batch_size: int
    steps: Any
    noise_multiplier: float = 0.0
    max_grad_norm: float = 1.0
    loss: str = "cross_entropy"
    shrinkage: float = 0.1
    ridge: float = 1e-4
    every: int = 1
    file_steps: str = "name"
    form: str = "auto"
    device: Any = None
    fm: FunctionalModel = field(init=False, repr=False)

    def __post_init__(self):
        if not isinstance(self.model, nn.Module):
            raise TypeError(f"model must be a torch.nn.Module, got {type(self.model).__name__}")
        self.device = resolve_device(self.device, self.model)
        self.model_dtype = str(next(self.model.parameters()).dtype).replace("torch.", "")
        self.fm = FunctionalModel(_float_model(self.model), loss=self.loss)
        self.lr = check_positive(self.lr, "lr")
        self.batch_size = check_batch_size(self.batch_size, "batch_size")
        if not (np.isfinite(self.noise_multiplier) and self.noise_multiplier >= 0):
            raise ValueError(f"noise_multiplier must be finite and >= 0, got "
                             f"{self.noise_multiplier}")
        self.max_grad_norm = check_positive(self.max_grad_norm, "max_grad_norm")
        self.shrinkage = check_probability(self.shrinkage, "shrinkage", low_open=False,
                                           high_open=False)
        if self.file_steps not in ("name", "order"):
            raise ValueError(f"file_steps must be 'name' or 'order', got {self.file_steps!r}")
        if self.form not in ("auto", "dense", "lowrank"):
            raise ValueError(f"form must be 'auto', 'dense' or 'lowrank', got {self.form!r}")
        self.every = check_int(self.every, "every", minimum=1)
        if isinstance(self.steps, Sequence | np.ndarray) and not isinstance(self.steps, str):
            saved = [check_int(s, "steps", minimum=0) for s in self.steps]
            if any(b <= a for a, b in zip(saved, saved[1:], strict=False)):
                raise ValueError("steps (the saved training steps) must be strictly increasing")
            saved = saved if saved and saved[0] == 0 else [0, *saved]
        else:
            T = check_int(self.steps, "steps", minimum=1)
            if T % self.every:
                raise ValueError(f"steps = {T} must be a multiple of every = {self.every} (or "
                                 "give the saved steps as a sequence)")
            saved = [self.every * i for i in range(T // self.every + 1)]
        if len(saved) < 2:
            raise ValueError("steps must hold at least one saved step after step 0")
        self.saved_steps = np.asarray(saved, dtype=np.int64)
        self.gaps = np.diff(self.saved_steps)
        self.ref_x, self.ref_y, self.tgt_x, self.tgt_y = (
            r.to(self.device) for r in as_records(self.fm, self.reference, self.target))
        self.theta0 = self.fm.theta()
        self._probe()

    # -- checks before any work ------------------------------------------------------------
    def _probe(self) -> None:
        """One forward pass on two reference records and the target, and one target gradient:
        wrong feature counts, labels outside the model's classes and a loss that does not fit
        the model's output are refused here, naming the argument, before any file is read."""
        fm = self.fm
        params = {**fm.frozen, **fm.unflatten(self.theta0)}
        for name, x in (("reference", self.ref_x[:2]), ("target", self.tgt_x)):
            try:
                with torch.no_grad():
                    out = functional_call(fm._thread_module(), params, (x,))
            except Exception as exc:  # noqa: BLE001 - any failure of the user's forward
                raise ValueError(f"{name}: the model cannot take records of shape "
                                 f"{tuple(x.shape[1:])} ({type(exc).__name__}: "
                                 f"{' '.join(str(exc).split())[:200]})") from None
            if not isinstance(out, torch.Tensor) or out.shape[:1] != x.shape[:1]:
                raise ValueError(f"model: must return one output row per record, got "
                                 f"{getattr(out, 'shape', type(out).__name__)}")
            width = int(out[0].numel())
            if self.loss == "mse" and width != 1:
                raise ValueError(f"loss: 'mse' needs a model with one output per record; "
                                 f"this model gives {width} (use loss 'cross_entropy' for "
                                 "class scores)")
            if self.loss == "cross_entropy":
                if out.ndim != 2 or width < 2:
                    raise ValueError(f"loss: 'cross_entropy' needs a model with >= 2 class "
                                     f"scores per record; this model gives {width}")
                for lname, y in (("reference", self.ref_y), ("target", self.tgt_y)):
                    lo, hi = int(y.min()), int(y.max())
                    if lo < 0 or hi >= width:
                        raise ValueError(f"{lname}: labels must be in 0..{width - 1} (the "
                                         f"model's {width} classes), got {lo}..{hi}")
        try:
            fm.per_sample_grads(self.theta0, self.tgt_x, self.tgt_y)
        except Exception as exc:  # noqa: BLE001
            raise ValueError(f"model: per-sample gradients of the target failed "
                             f"({type(exc).__name__}: {' '.join(str(exc).split())[:200]})"
                             ) from None

    @property
    def T(self) -> int:
        """Number of gaps between saved checkpoints (the statistics' length)."""
        return int(self.gaps.size)

    @property
    def training_steps(self) -> int:
        """Training steps covered by the checkpoints (the last saved step)."""
        return int(self.saved_steps[-1])

    tests = ("semi-star", "semi-unif", "semi-max")

    def gap_of(self, tau) -> np.ndarray:
        """Gap index ``1..T`` holding training step(s) ``tau`` (``a < tau <= b``).

        Parameters
        ----------
        tau : int or array_like of int
            Training step(s) of the canary.

        Returns
        -------
        ndarray of int
            Gap index of each step, in 1..T.
        """
        t = np.asarray(tau)
        if t.dtype == bool or t.dtype.kind not in "iu":
            raise TypeError(f"tau must be integer training steps, got {t.dtype}")
        lo, hi = 1, self.training_steps
        if t.size and (t.min() < lo or t.max() > hi):
            raise ValueError(f"tau must be a training step in {lo}..{hi}, got values in "
                             f"{t.min()}..{t.max()}")
        return np.searchsorted(self.saved_steps, t, side="left")

    def unif_pmf(self) -> np.ndarray:
        r"""SeMI-Unif's prior over gaps: :math:`k_j/T` (a uniform insertion step).

        Returns
        -------
        ndarray, shape (T,)
            The prior, proportional to the gaps' lengths.
        """
        return self.gaps / self.gaps.sum()

    def layout(self, run) -> tuple[list[Path], bool]:
        """The checkpoint files of one run in saved-step order and whether :math:`\\theta_0` is
        among them; raises naming the run when they are not the saved steps (listing only).

        Parameters
        ----------
        run : str or os.PathLike
            A run directory.

        Returns
        -------
        files : list of pathlib.Path
            Its checkpoint files in step order.
        has_theta0 : bool
            Whether the initial parameters are saved.
        """
        files = step_files(run)
        nums = [k for k, _ in files]
        paths = [p for _, p in files]
        want = self.saved_steps
        J = len(want) - 1
        if self.file_steps == "order":
            if len(files) == J + 1:
                return paths, True
            if len(files) == J:
                return paths, False
            raise ValueError(f"run {run}: {len(files)} checkpoints, expected {J} (theta_0 from "
                             f"the model factory) or {J + 1}")
        if len(nums) == J + 1 and np.array_equal(nums, want):
            return paths, True
        if len(nums) == J and np.array_equal(nums, want[1:]):
            return paths, False
        head = ", ".join(map(str, nums[:6])) + (", ..." if len(nums) > 6 else "")
        exp = ", ".join(map(str, want[:6])) + (", ..." if len(want) > 6 else "")
        raise ValueError(f"run {run}: saved steps [{head}] ({len(nums)} files) are not the "
                         f"expected [{exp}] ({J + 1} steps; step 0 may come from the model "
                         "factory); for file numbers that are not training steps "
                         "(timestamps) give every= / --every")

    def trajectory(self, run) -> np.ndarray:
        r""":math:`\theta` at the saved steps of one run, ``(T+1, d)`` float64; errors name the
        file.

        Parameters
        ----------
        run : str or os.PathLike
            A run directory.

        Returns
        -------
        ndarray of float64, shape (T+1, d)
            Parameters at the saved steps (:math:`\theta_0` first).
        """
        paths, has0 = self.layout(run)
        fm = self.fm
        out = np.empty((self.T + 1, fm.d), dtype=np.float64)
        first = 0
        if not has0:
            out[0] = self.theta0.cpu().numpy()
            first = 1
        buffers = set(fm.frozen)
        for t, f in enumerate(paths, start=first):
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
                if a.dtype.kind != "f":
                    raise TypeError(f"{f}: {k!r} has dtype {a.dtype}; weights must be floating "
                                    "point (float16, bfloat16, float32, float64)")
                if not np.isfinite(a).all():
                    raise ValueError(f"{f}: {k!r} holds NaN or infinite weights")
                out[t, pos:pos + size] = a.reshape(-1)
                pos += size
        return out

    def load(self, items) -> np.ndarray:
        """Trajectories of run directories, ``(k, T+1, d)``.

        Parameters
        ----------
        items : sequence of str or os.PathLike
            Run directories.

        Returns
        -------
        ndarray, shape (k, T+1, d)
            Their trajectories.
        """
        return np.stack([self.trajectory(run) for run in items])

    # -- memory ------------------------------------------------------------------------
    def plan(self, runs: int = 1) -> dict[str, Any]:
        r"""Form of the reference statistics and the peak bytes of scoring ``runs`` runs at once.

        Per run and gap: dense :math:`8(4d^2 + 3cd)` bytes (moments, two factors, a chunk of
        ``c`` reference gradients), low-rank :math:`8(3md + 4m^2)` (gradients, Gram matrix,
        two capacitance factors); ``"auto"`` takes the smaller, so the peak is at most linear
        in ``m`` for a given model (:math:`m^2 \le md` when the low-rank form is taken).
        Runs are scored in blocks that keep the gradients under :data:`GRAD_BLOCK_BYTES`.

        Parameters
        ----------
        runs : int
            Runs scored at once.

        Returns
        -------
        dict
            ``form``, ``chunk`` (reference rows per gradient call), ``runs_per_block``,
            ``bytes_per_run``, ``peak_bytes`` (records, trajectories and one block).
        """
        m, d = int(self.ref_x.shape[0]), int(self.fm.d)
        chunk = int(max(1, min(m, GRAD_BLOCK_BYTES // (8 * 3 * d))))
        dense = 8.0 * (4 * d * d + 3 * chunk * d)
        low = 8.0 * (3 * m * d + 4 * m * m)
        form = self.form if self.form != "auto" else ("dense" if dense < low else "lowrank")
        per = dense if form == "dense" else low
        grads = 8.0 * 3 * (chunk if form == "dense" else m) * d
        block = int(max(1, min(runs, GRAD_BLOCK_BYTES // max(grads, 1.0))))
        records = 8.0 * 2 * self.ref_x.numel()
        traj = 8.0 * 3 * runs * (self.T + 1) * d
        return {"form": form, "chunk": chunk if form == "dense" else m,
                "runs_per_block": block, "bytes_per_run": per,
                "peak_bytes": records + traj + block * per}

    # -- statistics --------------------------------------------------------------------
    def log_lr_steps(self, releases) -> np.ndarray:
        r"""Per-gap DP-SGD log-LRs ``(k, T)`` of trajectories ``(k, T+1, d)`` (module
        docstring; the per-step statistic where a gap is one step).

        Parameters
        ----------
        releases : array_like, shape (k, T+1, d)
            Trajectories.

        Returns
        -------
        ndarray, shape (k, T)
            The per-gap log-LRs.
        """
        traj = torch.as_tensor(np.asarray(releases, dtype=np.float64), device=self.device)
        if traj.ndim != 3 or traj.shape[1:] != (self.T + 1, self.fm.d):
            raise ValueError(f"releases must have shape (k, {self.T + 1}, {self.fm.d}), got "
                             f"{tuple(traj.shape)}")
        R = traj.shape[0]
        pl = self.plan(R)
        out = np.empty((R, self.T))
        step = pl["runs_per_block"]
        for lo in range(0, R, step):
            out[lo:lo + step] = self._block_log_lr(traj[lo:lo + step], pl)
        return out

    def _block_log_lr(self, traj: torch.Tensor, pl: dict) -> np.ndarray:
        fm, C = self.fm, self.max_grad_norm
        kw = dict(eta=self.lr, n=self.batch_size, sigma_dp=self.noise_multiplier, clip=C,
                  shrinkage=self.shrinkage)
        out = torch.empty(traj.shape[0], self.T, dtype=STATS_DTYPE, device=traj.device)
        with torch.no_grad():
            for j in range(self.T):
                prev, k = traj[:, j], int(self.gaps[j])
                tgt = clip_rows(fm.per_sample_grads_batched(prev, self.tgt_x, self.tgt_y,
                                                            shared=True)[:, 0], C)
                upd = traj[:, j + 1] - prev

                def grads(lo, hi, prev=prev):
                    return clip_rows(fm.per_sample_grads_batched(
                        prev, self.ref_x[lo:hi], self.ref_y[lo:hi], shared=True), C)

                m = int(self.ref_x.shape[0])
                if pl["form"] == "dense":
                    mo = streamed_moments(grads, m, pl["chunk"])
                    out[:, j] = stride_log_lr_dense(upd, tgt, mo, k=k, ridge=self.ridge, **kw)
                else:
                    st = dense_reference_stats(grads(0, m), shrinkage=self.shrinkage,
                                               ridge=self.ridge)
                    out[:, j] = stride_log_lr_lowrank(upd, tgt, st, k=k, **kw)
        return out.cpu().numpy()

    def target_losses(self, releases) -> np.ndarray:
        r"""The target's loss along each trajectory, ``(k, T+1)``.

        Parameters
        ----------
        releases : array_like, shape (k, T+1, d)
            Trajectories.

        Returns
        -------
        ndarray, shape (k, T+1)
            The target's losses.
        """
        return np.exp(self.target_log_losses(releases))

    def target_log_losses(self, releases) -> np.ndarray:
        r"""The logarithm of the target's loss along each trajectory, ``(k, T+1)``
        (:func:`trajectory_log_losses`).

        Parameters
        ----------
        releases : array_like, shape (k, T+1, d)
            Trajectories.

        Returns
        -------
        ndarray, shape (k, T+1)
            Logarithms of the target's losses.
        """
        traj = torch.as_tensor(np.asarray(releases, dtype=np.float64), device=self.device)
        return trajectory_log_losses(self.fm, traj, self.tgt_x, self.tgt_y)

    def params(self) -> dict[str, Any]:
        """The audited configuration (JSON metadata).

        Returns
        -------
        dict of str
            Saved steps, model size, reference statistics' form and the DP-SGD hyper-parameters.
        """
        saved = self.saved_steps
        pl = self.plan(1)
        return {"mechanism": "checkpoints", "T": self.T, "training_steps": self.training_steps,
                "saved_steps": ([int(s) for s in saved] if saved.size <= 12 else
                                {"first": int(saved[0]), "last": int(saved[-1]),
                                 "count": int(saved.size),
                                 "gaps": sorted({int(g) for g in self.gaps})[:12]}),
                "statistic": ("per-step DP-SGD log-LR" if (self.gaps == 1).all() else
                              "DP-SGD log-LR of each k-step gap (frozen gradients at the gap's "
                              "start; exact when the gradient law does not depend on theta)"),
                "d": int(self.fm.d), "lr": self.lr, "batch_size": self.batch_size,
                "noise_multiplier": float(self.noise_multiplier),
                "max_grad_norm": self.max_grad_norm, "loss": self.loss,
                "model_dtype": self.model_dtype, "statistics_dtype": "float64",
                "device": str(self.device),
                "n_reference": int(self.ref_x.shape[0]), "shrinkage": self.shrinkage,
                "reference_form": pl["form"]}


class TargetLossScorer:
    """The loss-based baselines (Delta, Back-Front; :func:`loss_scores`) on the target's loss
    along each recorded trajectory (higher = member; ratio scores as log-ratios)."""

    names = tuple(BASELINES)
    tau_free = True

    def __init__(self, runs):
        self.runs = runs

    def __call__(self, releases, tau, rng):
        if hasattr(self.runs, "target_log_losses"):
            ll = self.runs.target_log_losses(releases)
        else:
            with np.errstate(divide="ignore"):
                ll = np.log(np.asarray(self.runs.target_losses(releases), dtype=float))
        return loss_scores(ll)


def _member_bits(member, R: int) -> np.ndarray:
    arr = np.asarray(member)
    if arr.shape != (R,):
        raise ValueError(f"member must hold one label per run ({R}), got shape {arr.shape}")
    if arr.dtype == bool:
        return arr
    if arr.dtype.kind in "iuf" and np.isin(arr, (0, 1)).all():
        return arr.astype(bool)
    raise ValueError("member must be booleans or 0/1 (one per run)")


def _check_runs(dirs: list[str], member) -> None:
    """Each run once: a run listed twice is one training run counted twice (or labelled in
    both classes), which the game's independence does not allow."""
    seen: dict[str, int] = {}
    for i, d in enumerate(dirs):
        key = str(Path(d).resolve())
        if key in seen:
            j = seen[key]
            if member is not None and bool(member[i]) != bool(member[j]):
                raise ValueError(f"run {d} is labelled both member and non-member (entries "
                                 f"{j + 1} and {i + 1})")
            raise ValueError(f"run {d} is listed twice (entries {j + 1} and {i + 1}); each "
                             "training run may be counted once")
        seen[key] = i


def audit_checkpoints(runs: CheckpointRuns, directories: Sequence, *, member=None, tau=None,
                      delta: float = 1e-5, failure_prob: float = 0.05, methods=None,
                      executor=None, progress=False, seed=0, chunk_size: int = 16
                      ) -> AuditReport:
    r"""Audit saved runs: the log-LR trajectory of each, and certified bounds over labelled runs.

    Everything that can be checked from the arguments and the directory listings -- labels,
    insertion steps, each run's saved steps, duplicates, the memory estimate
    (:meth:`CheckpointRuns.plan`, through :func:`semi_core._validation.check_work`) -- is
    checked before any checkpoint is read.

    Parameters
    ----------
    runs : CheckpointRuns
        The model, training configuration, saved steps, reference data and target.
    directories : sequence of path
        One directory of checkpoints per run.
    member : array_like of bool, optional
        Whether the target was in each run (inserted at step ``tau``); without it only the
        trajectories and statistics are reported.
    tau : int or array_like of int, optional
        Insertion training step(s) known to SeMI* (needed with ``member``), ``1..T``.
    delta, failure_prob : float
        Of the certified bounds (:func:`semi_core.audit.report.certify_game`).
    methods : str or sequence of str, optional
        Certifying methods of :mod:`semi_core.audit.bounds` (default: its default method); the
        runs are scored once, whatever the number of methods.
    executor, progress, seed, chunk_size
        As in :func:`semi_core.game.play.play_recorded`.

    Returns
    -------
    AuditReport
        With ``member``: the bounds per test and method
        (``report.epsilon_lower_bound(test, method)``, each with the assumption it rests on),
        the game (``report.game``) and the entries ``members``, ``non_members``; without it no
        bounds, and the entries ``log_lr`` (runs x gaps) and ``statistics`` per run (SeMI* at
        every gap, SeMI-Unif, SeMI-max). Both: ``theta0`` says where :math:`\theta_0` came
        from, ``memory`` the estimate checked before work (``report["theta0"]``).
    """
    dirs = [str(d) for d in directories]
    if not dirs:
        raise ValueError("directories must name at least one run")
    chunk_size = check_int(chunk_size, "chunk_size", minimum=1)
    methods = method_specs(methods)
    bits = None if member is None else _member_bits(member, len(dirs))
    _check_runs(dirs, bits)
    gap_tau = None
    if bits is not None:
        if tau is None:
            raise ValueError("tau (the insertion step of the member runs) is needed with member")
        gap_tau = runs.gap_of(np.broadcast_to(np.asarray(tau), (len(dirs),)))
        n1 = int(bits.sum())
        if min(n1, len(dirs) - n1) < 2:
            raise ValueError(f"member must label at least 2 runs of each class, got {n1} "
                             f"members and {len(dirs) - n1} non-members")
    has0 = [runs.layout(d)[1] for d in dirs]
    theta0 = ("saved" if all(has0) else "model factory (not saved)" if not any(has0) else
              f"model factory for {has0.count(False)} of {len(has0)} runs, saved in the others")
    pl = runs.plan(min(chunk_size, len(dirs)))
    m, d = int(runs.ref_x.shape[0]), int(runs.fm.d)
    check_work(f"audit-checkpoints: {len(dirs)} runs x {runs.T} gaps, m = {m} reference "
               f"records, d = {d} parameters ({pl['form']} reference statistics)",
               nbytes=pl["peak_bytes"] + 8.0 * 12 * len(dirs),
               hint="use fewer reference records, a smaller chunk_size, or a machine with "
                    "more memory (SEMI_CORE_MAX_MEMORY)")
    meta = {"config": runs.params(), "theta0": theta0,
            "memory": {"estimate": format_bytes(pl["peak_bytes"]),
                       "form": pl["form"], "reference_rows_per_call": pl["chunk"]}}
    if bits is None:
        lrs = []
        for lo in range(0, len(dirs), chunk_size):
            lrs.append(runs.log_lr_steps(runs.load(dirs[lo:lo + chunk_size])))
        lr = np.concatenate(lrs)
        unif = semi_unif(lr, runs.unif_pmf())
        return AuditReport(bounds={}, header={
            "runs": dirs, **meta, "log_lr": lr.tolist(),
            "statistics": [{"semi_star_by_gap": row.tolist(), "semi_max": float(row.max()),
                            "semi_unif": float(u)} for row, u in zip(lr, unif, strict=True)]})
    res = play_recorded(runs, dirs, bits, gap_tau, seed, unif_pmf=runs.unif_pmf(),
                        scorers=[TargetLossScorer(runs)], executor=executor,
                        progress=progress, chunk_size=chunk_size)
    bounds, ceilings = certify_game(res, methods, delta=delta, failure_prob=failure_prob)
    return AuditReport(bounds=bounds, ceilings=ceilings, game=res, header={
        "runs": len(dirs), **meta, "members": int(res.member.sum()),
        "non_members": int((~res.member).sum()), "delta": delta, "failure_prob": failure_prob})
