r"""Audit your own DP-SGD training loop, white-box: :class:`TrainingLoop` and :func:`audit_training`.

The user keeps their model, data loader, loss, optimizer and DP-SGD step, and writes their loop
as a function ``train(model, run)``. The toolkit plays the SeMI game around it through the one
runner (:func:`semi_core.game.play.play`, any :class:`~semi_core.game.backends.Executor`): the
Crafter decides membership and the insertion step :math:`\tau` of every run and hands the loop
a :class:`Run`, which inserts the canary at step :math:`\tau` and records
:math:`\theta_1,\dots,\theta_T`. Three calls are all the loop needs:

.. code-block:: python

    def train(model, run):                   # model: a fresh copy of yours, at theta_0
        opt = torch.optim.SGD(model.parameters(), lr=LR)
        for t in range(1, run.steps + 1):
            x, y = next_batch(run.generator)        # your data loader, seeded by the run
            x, y = run.canary_batch(t, x, y)        # input canary (no-op for a Dirac canary)
            grads = per_sample_gradients(model, x, y)
            grads = run.canary_gradients(t, grads)  # Dirac canary (no-op for an input canary)
            ...                                     # your clipping, noise and opt.step()
            run.record(model)

**Canaries** (SeMI seed §4.2, §5.2; Nasr et al. 2023):

``"dirac"`` (default)
    at step :math:`\tau` the per-sample gradient of one batch slot is replaced by
    :math:`\pm M e_j` (``M = scale * max_grad_norm``; ``+`` for a member run, ``-`` otherwise:
    the two neighbouring batches differ by one record, clipped sums by :math:`2C`), on the
    coordinate :math:`j` where the clipped reference gradients have the smallest second moment
    (:func:`semi_core.sgd.dirac.dirac_coordinates`). With :math:`s_t=-\frac{n}{\eta C}
    \Delta_{t,j}` and the clipped reference-gradient mean :math:`m_{t,j}` and variance
    :math:`v_{t,j}` at the run's own :math:`\theta_{t-1}`, the per-step log-LR is

    .. math::

       \log\mathrm{LR}_t = \frac{2(s_t - a_t)}{\varsigma_t^2},\qquad
       a_t=\frac{(n-1)m_{t,j}}{C},\quad \varsigma_t^2=\sigma_{DP}^2+\frac{(n-1)v_{t,j}}{C^2}

    (:func:`semi_core.sgd.dirac.dirac_log_lr`), and the Final Observation test reads
    :math:`\theta_T-\theta_0` only: :math:`2(\sum_t s_t-\sum_t a_t)/\sum_t\varsigma_t^2`.
``"input"``
    the user's canary record :math:`z^*` (``canary=(x, y)``) replaces one uniformly drawn slot
    of batch :math:`\tau` in member runs; the per-step log-LR is the two-covariance DP-SGD LR
    at the run's own parameters (:func:`semi_core.integrations.checkpoints.step_log_lrs`, the
    statistic ``semi-core audit-checkpoints`` uses), and the loss baselines
    (:data:`semi_core.stats.update_combination.BASELINES`) are scored beside it.

The statistics assume the update :math:`\theta_t=\theta_{t-1}-\frac{\eta}{n}(\sum_i
\mathrm{clip}_C(g_i)+\sigma_{DP}C\xi)` of the declared ``lr``, ``batch_size``,
``noise_multiplier`` and ``max_grad_norm``. A loop that does something else (another optimizer,
a bug) only changes their power: the certified bounds are computed from the scores alone and stay
valid (the ``gdp`` method states the Gaussian assumption it adds).

**Samplers** (``sampler=``). ``"fixed"``: every batch has ``batch_size`` rows; ``"shuffle"``:
1 to ``batch_size`` rows (a shuffled loader with a short last batch); in both the canary
replaces one slot of batch :math:`\tau` (replace-one). ``"poisson"`` (Opacus' default): each
record is in each batch with probability :math:`q` (``sample_rate``), batches have any size and
``batch_size`` is the expected size :math:`qN` the loop divides by; the canary is in the data
set of a member run and each step holds it with probability :math:`q`, independently
(add/remove; the Crafter's coin, or the user's own sampler with
:meth:`TrainingLoop.from_opacus`). The per-step log-LR is then the mixture
:math:`\log(1-q+q\,\mathrm{LR}_t)` (:func:`semi_core.sgd.lr.poisson_dirac_log_lr`; for an
input canary the replace-one step LR in the mixture, an approximation), SeMI* does not apply
(no known step) and the trajectory's log-LR :math:`\sum_t\log\mathrm{LR}_t` is scored as
``semi-sum``; the Final Observation test is the binomial mixture
(:func:`semi_core.sgd.lr.poisson_dirac_final_log_lr`). The natural sum at the Dirac coordinate
has variance :math:`n(v+(1-q)m^2)` (a Poisson number of records of mean :math:`n`).

**Hand-over.** :meth:`TrainingLoop.from_opacus` takes what an Opacus user has -- their epoch
function unchanged, and the model, optimizer and data loader ``make_private`` returned, the
``PrivacyEngine`` and the :math:`(\varepsilon,\delta)` they chose -- and reads the rest.

**Ground truth** (``fixed``/``shuffle``). The canary is in one step; replacing one record
moves the clipped sum by at most :math:`2C` under noise :math:`\sigma_{DP}C`:
:math:`\mu=2/\sigma_{DP}`-GDP, replace-one, no subsampling
(:func:`semi_core.sgd.accounting.dpsgd_epsilon`; cross-checked with ``dp_accounting``'s PLD
accountant). ``poisson``: the PLD of ``T`` Poisson-sampled Gaussian steps, add/remove
(:func:`semi_core.sgd.accounting.relation_epsilon`). :meth:`TrainingLoop.epsilon` declares
it, so :func:`semi_core.testing.check_mechanism` fails a loop whose releases certify more,
and :func:`audit_training` checks the certified :math:`\underline\varepsilon` against it,
with the user's claimed or headline :math:`\varepsilon` beside.

**Randomness.** Run ``r`` of a release call gets its own seed from the runner's generator; the
loop draws from ``run.generator`` (``torch.Generator``) or ``run.rng`` (NumPy). Loops that use
torch's, NumPy's or Python's *global* random state (``torch.randn`` without a generator,
``DataLoader(shuffle=True)``, dropout) are seeded from the run's seed too and the global state is
restored afterwards, under a lock (threads then take turns inside user code): the same seed gives
the same releases on every executor. On a CUDA device the CUDA generators are seeded and restored
as well, so a loop that draws on the GPU (``torch.randn(..., device="cuda")``) repeats too.

**Device and dtype** (:mod:`semi_core.sgd.device`). ``device`` (default: the model's device;
``meta`` or a device absent here is refused before any training, naming ``device``) holds the
statistics' copy of the model, the reference and canary records, ``run.generator`` and the
trajectories the statistics read; the user's model is never moved. Training runs in the
model's dtype. The releases (the game's outcomes) are float64 NumPy arrays on the host, and the
statistics are float64 (:data:`~semi_core.sgd.device.STATS_DTYPE`) where the derivation needs
it: the parameter differences :math:`\theta_t-\theta_{t-1}` of the standardised update
:math:`s_t`, the reference-gradient moments :math:`m_{t,j}, v_{t,j}`, :math:`a_t`,
:math:`\varsigma_t^2` and the input canary's two-covariance LR (gradients are evaluated in the
model's dtype at the recorded parameters and widened to float64 before any moment or solve).
"""

from __future__ import annotations

import contextlib
import copy
import math
import random
import threading
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import torch
from torch import nn

from semi_core._table import Table
from semi_core._validation import check_batch_size, check_int, check_positive, check_probability
from semi_core.audit.report import AuditReport, certify_game, method_specs, refutation_bounds
from semi_core.game.play import play
from semi_core.mechanisms.base import GroundTruthUnknown, MechanismBase
from semi_core.sgd.accounting import dpsgd_epsilon, relation_epsilon
from semi_core.sgd.device import STATS_DTYPE, resolve_device
from semi_core.sgd.dirac import dirac_coordinates, dirac_log_lr
from semi_core.sgd.grads import FunctionalModel, clip_rows
from semi_core.sgd.lr import (
    poisson_dirac_final_log_lr,
    poisson_dirac_log_lr,
    poisson_mixture_log_lr,
)

from .checkpoints import TargetLossScorer, as_records, step_log_lrs, trajectory_losses

__all__ = ["CANARIES", "SAMPLERS", "Run", "TrainingLoop", "audit_training", "accountant_epsilon",
           "training_summary"]

#: Canary kinds a :class:`TrainingLoop` inserts.
CANARIES = ("dirac", "input")
#: How the loop draws its batches (module docstring, "Samplers").
SAMPLERS = ("fixed", "shuffle", "poisson")

# one lock serialises user code while the global random state is seeded for it, and the
# statistics' parameter swaps on the shared functional model (functional_call is not thread-safe)
_LOCK = threading.RLock()


def _cuda_devices(device: torch.device | None) -> list[int]:
    """The CUDA device indices whose generators a run on ``device`` forks (all visible GPUs:
    ``torch.manual_seed`` seeds every one of them); none off CUDA."""
    if device is None or device.type != "cuda":
        return []
    return list(range(torch.cuda.device_count()))


@contextlib.contextmanager
def _seeded_global_rng(seed: int, device: torch.device | None = None):
    """Seed torch's, NumPy's and Python's global generators from ``seed`` and restore them;
    on a CUDA ``device`` the CUDA generators are forked (seeded and restored) too."""
    with _LOCK:
        np_state, py_state = np.random.get_state(), random.getstate()
        with torch.random.fork_rng(devices=_cuda_devices(device)):
            torch.manual_seed(seed)
            np.random.seed(seed % 2**32)
            random.seed(seed)
            try:
                yield
            finally:
                np.random.set_state(np_state)
                random.setstate(py_state)


def _status_bytes(key: str) -> int | None:
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        return None
    return None


def _trim_heap() -> None:
    """Give the C heap's free memory back to the system (glibc ``malloc_trim``), so that the
    resident size before a measured call is its live memory; a no-op elsewhere."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def _peak_growth(fn: Callable[[], Any]) -> float:
    """Bytes by which ``fn()`` raises the process' peak resident memory (module-level lock:
    one measurement at a time)."""
    with _LOCK:
        _trim_heap()      # freed-but-kept heap would hide the growth of the measured call
        reset = False
        try:
            with open("/proc/self/clear_refs", "w", encoding="ascii") as fh:
                fh.write("5")                    # VmHWM := VmRSS
            reset = True
        except OSError:
            pass
        if reset and _status_bytes("VmHWM") is not None:
            before = _status_bytes("VmRSS") or 0
            fn()
            return float(max(0, (_status_bytes("VmHWM") or 0) - before))
        import resource

        scale = 1 if __import__("sys").platform == "darwin" else 1024
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale
        fn()
        return float(max(0, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale - before))


def check_dpsgd_arguments(steps, lr, batch_size, noise_multiplier, max_grad_norm, shrinkage
                          ) -> tuple[int, float, int, float, float, float]:
    """The DP-SGD settings a user loop declares, validated (one home for both user-loop paths).

    Parameters
    ----------
    steps : int
        Training steps ``T >= 1``.
    lr : float
        Learning rate, ``> 0``.
    batch_size : int
        (Expected) batch size the loop divides by, ``>= 1``.
    noise_multiplier : float
        :math:`\\sigma \\ge 0`, finite.
    max_grad_norm : float
        Clipping norm :math:`C > 0`.
    shrinkage : float
        Covariance shrinkage of the reference statistics, in ``[0, 1]``.

    Returns
    -------
    tuple
        ``(steps, lr, batch_size, noise_multiplier, max_grad_norm, shrinkage)`` as int/float.
    """
    if not (isinstance(noise_multiplier, int | float) and math.isfinite(noise_multiplier)
            and noise_multiplier >= 0):
        raise ValueError(f"noise_multiplier must be a finite number >= 0, got "
                         f"{noise_multiplier!r}")
    return (check_int(steps, "steps", minimum=1), check_positive(lr, "lr"),
            check_batch_size(batch_size, "batch_size"), float(noise_multiplier),
            check_positive(max_grad_norm, "max_grad_norm"),
            check_probability(shrinkage, "shrinkage", low_open=False, high_open=False))


def _strip(name: str) -> str:
    """Parameter name without wrapper prefixes (Opacus' ``GradSampleModule``: ``_module.``)."""
    while name.startswith("_module."):
        name = name[len("_module."):]
    return name


class Run:
    """One training run planned by the Crafter, handed to the user's ``train(model, run)``.

    Attributes
    ----------
    steps : int
        :math:`T`: the loop makes exactly ``steps`` updates and records each.
    seed : int
        This run's seed (the global generators are seeded from it during ``train``).
    generator : torch.Generator
        For batches and noise (``torch.randn(..., generator=run.generator)``), on the loop's
        device (a CUDA generator for ``device="cuda"``: draw with ``device=`` the same).
    rng : numpy.random.Generator
        The same run's NumPy stream (independent of ``generator``).
    """

    def __init__(self, loop: TrainingLoop, *, member: bool, tau: int, seed: int):
        self._loop = loop
        self._member = bool(member)
        self._tau = int(tau)
        self.steps = loop.T
        self.seed = int(seed)
        ss = np.random.SeedSequence(self.seed)
        s_slot, s_np, s_torch = ss.spawn(3)
        g_slot = np.random.Generator(np.random.PCG64(s_slot))
        self._slot = int(g_slot.integers(loop.batch_size))
        if loop.sampler == "poisson":  # the canary is in the data set of a member run: each
            # step holds it with probability q (the Crafter's coin, as the sampler's own)
            self.included = self._member & (g_slot.random(loop.T) < loop.sample_rate)
        else:
            self.included = np.arange(1, loop.T + 1) == self._tau
            self.included &= loop.canary == "dirac" or self._member
        self._called: set[int] = set()
        self.rng = np.random.Generator(np.random.PCG64(s_np))
        self.generator = torch.Generator(device=loop.device).manual_seed(int(s_torch.generate_state(1, np.uint64)[0]
                                                           >> np.uint64(1)))
        self._states: list[np.ndarray] = []
        self._inserted = False

    def __repr__(self) -> str:
        return f"Run(steps={self.steps}, seed={self.seed})"

    def _check_rows(self, rows: int, what: str, step: int) -> None:
        loop = self._loop
        if loop.sampler == "fixed" and rows != loop.batch_size:
            raise ValueError(
                f"step {step}: {what} has {rows} rows, the declared batch_size is "
                f"{loop.batch_size} (sampler='fixed' assumes every batch has exactly that many). "
                "With variable batch sizes declare how the batches are drawn: "
                "TrainingLoop(..., sampler='poisson', sample_rate=q, batch_size=q*N) for Poisson "
                "sampling (Opacus' DPDataLoader, the default of make_private), or "
                "sampler='shuffle' for a shuffled DataLoader whose last batch is short")
        if loop.sampler == "shuffle" and not 1 <= rows <= loop.batch_size:
            raise ValueError(f"step {step}: {what} has {rows} rows; sampler='shuffle' needs 1 to "
                             f"batch_size = {loop.batch_size} rows (Poisson batches of any size: "
                             "sampler='poisson')")

    def _check_step(self, step, what: str) -> int:
        step = check_int(step, f"{what} step", minimum=1, maximum=self.steps)
        self._called.add(step)
        if step == self._tau:
            self._inserted = True
        return step

    def _slot_of(self, rows: int) -> int:
        return self._slot % rows if rows else 0

    def canary_batch(self, step: int, x, y):
        """The batch of step ``step`` with the input canary in it where the Crafter put it.

        For an input canary, at step :math:`\\tau` of a member run one uniformly drawn row of
        ``x``/``y`` is replaced by :math:`z^*` (copies are returned; the inputs are not
        changed); with ``sampler="poisson"`` :math:`z^*` is appended to the batch at each step
        that holds it (probability ``sample_rate`` in a member run). Otherwise (and for a Dirac
        canary) ``x, y`` come back as they are. Call it on every batch, before computing
        gradients.

        Parameters
        ----------
        step : int
            Training step, in 1..T.
        x : torch.Tensor, shape (n, ...)
            The batch's inputs.
        y : torch.Tensor, shape (n,)
            The batch's labels.

        Returns
        -------
        x, y : torch.Tensor
            The batch with the canary where the Crafter put it (copies), or the inputs as they are.
        """
        step = self._check_step(step, "canary_batch")
        self._check_rows(len(x), "the batch", step)
        loop = self._loop
        if loop.canary != "input" or not self.included[step - 1]:
            return x, y
        cx, cy = loop.canary_record
        if loop.sampler == "poisson":  # the canary record joins the sampled batch
            if isinstance(x, torch.Tensor):
                cxt = torch.as_tensor(cx, dtype=x.dtype, device=x.device).reshape(1, *x.shape[1:])
                cyt = torch.as_tensor(cy, dtype=y.dtype, device=y.device).reshape(1, *y.shape[1:])
                return torch.cat([x, cxt]), torch.cat([y, cyt])
            return (np.concatenate([np.asarray(x), np.asarray(cx).reshape(1, *np.shape(x)[1:])]),
                    np.concatenate([np.asarray(y), np.asarray(cy).reshape(1, *np.shape(y)[1:])]))
        slot = self._slot_of(len(x))
        x = x.clone() if isinstance(x, torch.Tensor) else np.array(x, copy=True)
        y = y.clone() if isinstance(y, torch.Tensor) else np.array(y, copy=True)
        if isinstance(x, torch.Tensor):
            x[slot] = torch.as_tensor(cx, dtype=x.dtype, device=x.device).reshape(x.shape[1:])
            y[slot] = torch.as_tensor(cy, dtype=y.dtype, device=y.device).reshape(y.shape[1:])
        else:
            x[slot] = np.asarray(cx).reshape(x.shape[1:])
            y[slot] = np.asarray(cy).reshape(y.shape[1:])
        return x, y

    def canary_gradients(self, step: int, grads):
        r"""Per-sample gradients of step ``step`` with the Dirac canary in its slot.

        At step :math:`\tau` the per-sample gradient of one slot becomes :math:`+Me_j` (member
        run) or :math:`-Me_j` (non-member run); with ``sampler="poisson"`` a row :math:`+Me_j`
        is appended at each step that holds the canary (probability ``sample_rate``, member
        runs only). Call it after computing the per-sample gradients and **before clipping**,
        at every step. A no-op at other steps and for an input canary.

        Parameters
        ----------
        step : int
            Training step, in 1..T.
        grads : Tensor (n, d), mapping or sequence of Tensors (n, ...), or nn.Module
            Per-sample gradients: flat rows in the order of the model's trainable parameters,
            ``{name: (n, *shape)}`` (``torch.func`` output; an Opacus ``_module.`` prefix is
            accepted), a sequence in ``model.parameters()`` order, or a module whose
            parameters carry Opacus' ``grad_sample`` (changed in place).

        Returns
        -------
        The same kind of object (a modified copy; the module itself for a module).
        """
        step = self._check_step(step, "canary_gradients")
        loop = self._loop
        fm = loop.fm
        hit = loop.canary == "dirac" and bool(self.included[step - 1])
        add = loop.sampler == "poisson"  # add/remove: the canary's row joins the batch
        value = (1.0 if self._member else -1.0) * loop.scale * loop.max_grad_norm
        name_j, local_j = loop.coordinate_name

        def edit(g: torch.Tensor, name: str | None) -> torch.Tensor:
            """``g`` (n, ...) with the canary's row: appended (Poisson) or in its slot."""
            if add:
                row = torch.zeros((1, *g.shape[1:]), dtype=g.dtype, device=g.device)
                if name is None or name == name_j:
                    row.view(-1)[loop.coordinate if name is None else local_j] = value
                return torch.cat([g, row])
            out = g.clone()
            slot = self._slot_of(g.shape[0])
            out[slot] = 0.0
            if name is None:
                out[slot, loop.coordinate] = value
            elif name == name_j:
                out[slot].view(-1)[local_j] = value
            return out

        if isinstance(grads, torch.Tensor):
            if grads.ndim != 2 or grads.shape[1] != fm.d:
                raise ValueError(f"flat per-sample gradients must have shape (n, {fm.d}), got "
                                 f"{tuple(grads.shape)}")
            self._check_rows(grads.shape[0], "grads", step)
            return edit(grads, None) if hit else grads
        if isinstance(grads, nn.Module):
            named = {_strip(k): p for k, p in grads.named_parameters() if p.requires_grad}
            params = {}
            for k in fm.names:
                p = named.get(k)
                if getattr(p, "grad_sample", None) is None:
                    raise ValueError(f"module parameter {k!r} has no grad_sample (Opacus computes "
                                     "it in backward(); call canary_gradients after it)")
                params[k] = p
            self._check_rows(params[fm.names[0]].grad_sample.shape[0], "grad_sample", step)
            if hit:
                with torch.no_grad():
                    for k, p in params.items():
                        p.grad_sample = edit(p.grad_sample, k)
            return grads
        if isinstance(grads, Mapping):
            keys = {_strip(str(k)): k for k in grads}
            missing = [k for k in fm.names if k not in keys]
            if missing:
                raise ValueError(f"grads lacks the trainable parameters {missing[:5]}")
            items = [(keys[k], grads[keys[k]]) for k in fm.names]
        elif isinstance(grads, Sequence):
            if len(grads) != len(fm.names):
                raise ValueError(f"grads must hold {len(fm.names)} tensors (one per trainable "
                                 f"parameter), got {len(grads)}")
            items = list(enumerate(grads))
        else:
            raise TypeError(f"grads must be a Tensor, a mapping, a sequence or an nn.Module, got "
                            f"{type(grads).__name__}")
        for (_, g), shape in zip(items, fm.shapes, strict=True):
            if tuple(g.shape[1:]) != tuple(shape):
                raise ValueError(f"per-sample gradients of shape {tuple(g.shape)} do not match "
                                 f"the parameter shape {shape}")
        self._check_rows(items[0][1].shape[0], "grads", step)
        if not hit:
            return grads
        out_items = [(key, edit(g, name)) for (key, g), name in zip(items, fm.names, strict=True)]
        if isinstance(grads, Mapping):
            out = dict(grads)
            out.update(out_items)
            return out
        return type(grads)(g for _, g in out_items) if isinstance(grads, tuple) else \
            [g for _, g in out_items]

    def record(self, state) -> None:
        """Record the parameters after the current step (call once per step).

        ``state`` is the model (``nn.Module``, Opacus-wrapped or not), its state dict, or a flat
        vector of its trainable parameters.

        Parameters
        ----------
        state : nn.Module, mapping or flat vector
        """
        arr = recorded_state(self._loop.fm, state, device="cpu", recorded=len(self._states),
                             steps=self.steps)
        self._states.append(arr.numpy())


def recorded_state(fm: FunctionalModel, state, *, device, recorded: int,
                   steps: int) -> torch.Tensor:
    """The trainable parameters of ``state`` as one float64 vector on ``device`` (the ``record``
    of every user loop: :class:`Run`, :class:`~semi_core.integrations.one_run_training.OneRunRun`).

    Parameters
    ----------
    fm : FunctionalModel
        The loop's model (names and size of the trainable parameters).
    state : nn.Module, mapping or flat vector
        The model (Opacus-wrapped or not), its state dict, or a flat vector of its trainable
        parameters.
    device : torch.device or str
        Where the vector is kept.
    recorded, steps : int
        States recorded so far and the steps of the run (a call past ``steps`` is refused).

    Returns
    -------
    torch.Tensor
        Shape ``(fm.d,)``, float64, finite.
    """
    if isinstance(state, nn.Module):
        named = {_strip(k): p for k, p in state.named_parameters()}
        vec = [named.get(k) for k in fm.names]
    elif isinstance(state, Mapping):
        named = {_strip(str(k)): v for k, v in state.items()}
        vec = [named.get(k) for k in fm.names]
    else:
        flat = state if isinstance(state, torch.Tensor) else torch.as_tensor(
            np.asarray(state, dtype=np.float64))
        if tuple(flat.shape) != (fm.d,):
            raise ValueError(f"a flat state must have shape ({fm.d},), got {tuple(flat.shape)}")
        vec = [flat]
    missing = [k for k, v in zip(fm.names, vec, strict=False) if v is None]
    if missing:
        raise ValueError(f"record: the state lacks the trainable parameters {missing[:5]}")
    arr = torch.cat([torch.as_tensor(v).detach().reshape(-1).to(device, STATS_DTYPE)
                     for v in vec])
    if arr.shape != (fm.d,):
        raise ValueError(f"record: the state has {arr.numel()} parameters, the model {fm.d}")
    if recorded >= steps:
        raise ValueError(f"record called more than steps = {steps} times")
    if not bool(torch.isfinite(arr).all()):
        raise ValueError(f"record: the parameters after step {recorded + 1} hold NaN or "
                         "infinite values")
    return arr


def _without_hooks(module: nn.Module) -> nn.Module:
    """``module`` with the forward/backward hooks of every submodule removed (a copy of an
    Opacus-wrapped module carries its activation-capture hooks)."""
    for mod in module.modules():
        for hooks in ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks",
                      "_backward_pre_hooks"):
            getattr(mod, hooks, {}).clear()
    module.__dict__.pop("autograd_grad_sample_hooks", None)   # Opacus' "hooks added" mark
    return module


class _CanarySampler:
    """The user's Poisson batch sampler over ``N + 1`` records, the last one the canary: its
    index is taken out of each batch and whether it was drawn is queued in ``flags`` (so the
    canary goes through the user's own sampler, at the rate it really samples with)."""

    def __init__(self, inner, flags: list):
        self.inner = copy.copy(inner)
        self.canary_index = int(inner.num_samples)
        self.inner.num_samples = self.canary_index + 1
        self.flags = flags

    def __len__(self) -> int:
        return len(self.inner)

    def __iter__(self):
        for idx in self.inner:
            idx = list(idx)
            self.flags.append(self.canary_index in idx)
            yield [i for i in idx if i != self.canary_index]


class _Done(Exception):
    """The run has its ``steps`` updates: stop the user's epoch function."""


class _OpacusTrain:
    """``train(model, run)`` around a user's unchanged Opacus epoch function
    (:meth:`TrainingLoop.from_opacus`)."""

    def __init__(self, epoch_fn, model, optimizer, data_loader, accountant):
        self.epoch_fn, self.model, self.optimizer = epoch_fn, model, optimizer
        self.data_loader, self.accountant = data_loader, accountant
        self.__qualname__ = getattr(epoch_fn, "__qualname__", "train_epoch")

    def __call__(self, _model, run: Run):
        shared = getattr(self.data_loader, "dataset", None)
        memo = {} if shared is None else {id(shared): shared}
        if self.accountant is not None:
            memo[id(self.accountant)] = self.accountant
        dp, gsm = self.optimizer, self.model
        # Opacus' wrappers do not deep-copy (hooks, attributes on parameters): copy the module
        # and the optimizer they wrap (its parameters map to the copied module's) and wrap
        # them again with the same settings and accountant hook
        inner = _without_hooks(copy.deepcopy(getattr(gsm, "_module", gsm), memo))
        base, loader = copy.deepcopy((dp.original_optimizer, self.data_loader), memo)
        model = (type(gsm)(inner, batch_first=gsm.batch_first, loss_reduction=gsm.loss_reduction)
                 if hasattr(gsm, "_module") else inner)
        opt = type(dp)(base, noise_multiplier=dp.noise_multiplier,
                       max_grad_norm=dp.max_grad_norm, expected_batch_size=dp.expected_batch_size,
                       loss_reduction=dp.loss_reduction, secure_mode=dp.secure_mode)
        opt.step_hook = getattr(dp, "step_hook", None)
        history = list(getattr(self.accountant, "history", []))
        clip, step = opt.clip_and_accumulate, opt.step
        t = [0]
        flags: list[bool] | None = None
        inner = getattr(loader, "batch_sampler", None)
        if run._loop.sampler == "poisson" and hasattr(inner, "num_samples"):
            flags = []
            # DataLoader forbids setting batch_sampler after construction; the copy is ours
            object.__setattr__(loader, "batch_sampler", _CanarySampler(inner, flags))

        def clip_and_accumulate():
            t[0] += 1
            if flags is not None:   # the user's sampler drew (or not) the canary's index
                run.included[t[0] - 1] = run._member and flags[t[0] - 1]
            run.canary_gradients(t[0], model)       # before Opacus clips
            return clip()

        def step_and_record(*args, **kwargs):
            out = step(*args, **kwargs)
            run.record(model)
            if len(run._states) == run.steps:
                raise _Done
            return out

        opt.clip_and_accumulate, opt.step = clip_and_accumulate, step_and_record
        try:
            for _ in range(run.steps):              # epochs until `steps` updates
                self.epoch_fn(model, opt, loader)
                if t[0] == 0:
                    raise ValueError("train_epoch made no optimizer step (call "
                                     "optimizer.step() on the optimizer it is given)")
        except _Done:
            pass
        finally:
            if self.accountant is not None:
                self.accountant.history = history


class SumLogLRScorer:
    r"""The log-LR of the whole trajectory, :math:`\sum_t\log\mathrm{LR}_t` (``semi-sum``):
    the Neyman-Pearson statistic when every step may hold the canary (Poisson sampling)."""

    names = ("semi-sum",)
    tau_free = True

    def __init__(self, loop: TrainingLoop):
        self.loop = loop

    def __call__(self, releases, tau, rng=None) -> dict[str, np.ndarray]:
        return {"semi-sum": self.loop.log_lr_steps(releases).sum(1)}


class TrainingLoop(MechanismBase):
    r"""A user's DP-SGD training function as a :class:`~semi_core.mechanisms.base.Mechanism`.

    Releases are :math:`\theta_1..\theta_T` of ``R`` runs, ``(R, T, d)`` (the common
    :math:`\theta_0` is the given model's); per-step log-LRs are computed at each run's own
    parameters (module docstring). Passes :func:`semi_core.testing.check_mechanism` and plays
    with :func:`~semi_core.game.play.play` / :func:`~semi_core.game.play.play_sweep` on any
    executor. For Dask, the workers must be able to import ``train``'s module, or the module
    is sent by value (``cloudpickle.register_pickle_by_value(module)``; functions of a script
    or notebook are sent by value already).

    Parameters
    ----------
    train : callable
        ``train(model, run) -> None`` (records with ``run.record``) or returning the ``T``
        states :math:`\theta_1..\theta_T` (modules, state dicts or flat vectors). It receives a
        fresh deep copy of ``model`` each run.
    model : torch.nn.Module
        The architecture at :math:`\theta_0` (its trainable parameters define :math:`\theta`).
    reference : (x, y)
        Reference records drawn like the training data (``m >= 2``): the gradient moments.
    steps, lr, batch_size, noise_multiplier, max_grad_norm : int, float, int, float, float
        :math:`T`, :math:`\eta`, :math:`n`, :math:`\sigma_{DP}`, :math:`C` of the loop.
    canary : {"dirac", "input"}
    canary_record : (x, y), optional
        :math:`z^*` of an input canary (required for ``canary="input"``).
    coordinate : int, optional
        The Dirac coordinate :math:`j` (flat index); default: the most isolated one.
    scale : float
        Dirac magnitude :math:`M/C \ge 1`.
    loss : {"cross_entropy", "mse"}
        The per-sample loss of the statistics' gradients.
    shrinkage, ridge : float
        Of the reference-gradient covariance (input canary).
    sampler : {"fixed", "shuffle", "poisson"}
        How the loop draws its batches. ``"fixed"``: exactly ``batch_size`` rows every step.
        ``"shuffle"``: 1 to ``batch_size`` rows (a shuffled ``DataLoader`` with a short last
        batch); the canary replaces a slot of batch :math:`\tau` as for ``"fixed"``.
        ``"poisson"``: each record in each step with probability ``sample_rate`` (Opacus'
        ``DPDataLoader``), batches of any size, ``batch_size`` the *expected* size
        :math:`qN` the loop divides by; the canary is in the data set of a member run and each
        step holds it with probability :math:`q` (add/remove; ``tau`` is not used).
    sample_rate : float, optional
        :math:`q\in(0,1]` of ``sampler="poisson"`` (required there, refused elsewhere).
    device : None, str or torch.device
        Where the statistics and ``run.generator`` live; default the model's device. The model
        must already be there (it is never moved); ``meta`` or a device absent on this machine
        is refused before any training (:func:`~semi_core.sgd.device.resolve_device`).
        Training runs in the model's dtype, the statistics in float64 (module docstring,
        "Device and dtype").
    """

    def __init__(self, train: Callable, model: nn.Module, *, reference, steps: int, lr: float,
                 batch_size: int, noise_multiplier: float, max_grad_norm: float,
                 canary: str = "dirac", canary_record=None, coordinate: int | None = None,
                 scale: float = 4.0, loss: str = "cross_entropy", shrinkage: float = 0.1,
                 ridge: float = 1e-4, sampler: str = "fixed", sample_rate: float | None = None,
                 device=None):
        if not callable(train):
            raise TypeError(f"train must be callable train(model, run), got "
                            f"{type(train).__name__}")
        if canary not in CANARIES:
            raise ValueError(f"canary must be one of {CANARIES}, got {canary!r}")
        if sampler not in SAMPLERS:
            raise ValueError(f"sampler must be one of {SAMPLERS}, got {sampler!r}")
        self.sampler = sampler
        if sampler == "poisson":
            if sample_rate is None:
                raise ValueError("sampler='poisson' needs sample_rate=q in (0, 1] (Opacus: "
                                 "data_loader.sample_rate, or batch_size / len(dataset))")
            self.sample_rate = check_probability(sample_rate, "sample_rate", high_open=False)
        elif sample_rate is not None:
            raise ValueError(f"sample_rate applies to sampler='poisson' only (got sampler="
                             f"{sampler!r})")
        else:
            self.sample_rate = None
        self.train = train
        self.notes: list[str] = []          # said in every audit_training report
        self.headline: dict[str, Any] | None = None   # the user's numbers (from_opacus)
        self._mem: tuple[float, float] | None = None
        self._fixed_bytes = 0.0
        if not isinstance(model, nn.Module):
            raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
        self.device = resolve_device(device, model)
        self.model = model
        # the statistics swap parameters into their own copy (torch.func.functional_call):
        # the user's model, deep-copied for every run, is never touched
        self.fm = FunctionalModel(copy.deepcopy(model), loss=loss)
        (self.T, self.lr, self.batch_size, self.noise_multiplier, self.max_grad_norm,
         self.shrinkage) = check_dpsgd_arguments(steps, lr, batch_size, noise_multiplier,
                                                 max_grad_norm, shrinkage)
        self.ridge = float(ridge)
        self.canary = canary
        self.theta0 = self.fm.theta().to(STATS_DTYPE)
        if canary == "input":
            if canary_record is None:
                raise ValueError("canary='input' needs canary_record=(x, y), the canary record")
            self.canary_record = canary_record
        elif canary_record is not None:
            raise ValueError("canary_record applies to canary='input' only")
        else:
            self.canary_record = None
        self.ref_x, self.ref_y, self.tgt_x, self.tgt_y = (
            None if r is None else r.to(self.device)
            for r in as_records(self.fm, reference, self.canary_record))
        self.scale = check_positive(scale, "scale")
        if self.scale < 1:
            raise ValueError(f"scale must be >= 1 (the canary's gradient norm scale*C must reach "
                             f"the clipping norm), got {scale}")
        with torch.no_grad():
            ref0 = clip_rows(self.fm.per_sample_grads(self.fm.theta(), self.ref_x, self.ref_y),
                             self.max_grad_norm)
        if coordinate is None:
            coords, moments = dirac_coordinates(ref0.to(STATS_DTYPE), 1)
            self.coordinate, self.coordinate_moment = int(coords[0]), float(moments[0])
        else:
            self.coordinate = check_int(coordinate, "coordinate", minimum=0,
                                        maximum=self.fm.d - 1)
            self.coordinate_moment = float((ref0[:, self.coordinate].to(STATS_DTYPE) ** 2).mean())
        if canary == "dirac" and self.noise_multiplier == 0 and self.coordinate_moment == 0:
            raise ValueError("noise_multiplier = 0 with an isolated Dirac coordinate makes the "
                             "canary visible with certainty (infinite log-LR); give "
                             "noise_multiplier > 0 or an input canary")
        start = 0
        for name, size in zip(self.fm.names, self.fm.sizes, strict=True):
            if self.coordinate < start + size:
                self.coordinate_name = (name, self.coordinate - start)
                break
            start += size
        # Poisson: the canary can be in any step, so SeMI* (one known step) does not apply;
        # the optimal statistic, the sum of the per-step log-LRs, is scored beside (scorers())
        self.tests = (() if sampler == "poisson" else ("semi-star",)) + \
            ("semi-unif", "semi-max") + (("final",) if canary == "dirac" else ())

    # -- hand-over -------------------------------------------------------------------------
    @classmethod
    def from_opacus(cls, train_epoch: Callable, model, optimizer, data_loader,
                    privacy_engine=None, *, target_epsilon: float | None = None,
                    target_delta: float | None = None, epochs: int = 1,
                    steps: int | None = None, reference=None, n_reference: int = 128,
                    loss: str = "cross_entropy", sample_rate: float | None = None,
                    **kwargs) -> TrainingLoop:
        r"""A :class:`TrainingLoop` from what an Opacus user has: their epoch function, and the
        model, optimizer and data loader ``make_private`` returned.

        Every run deep-copies ``(model, optimizer, data_loader)`` (the data set is shared,
        not copied) and calls ``train_epoch(model, optimizer, data_loader)`` -- the user's
        code, unchanged -- until ``steps`` optimizer steps are made: the optimizer's
        ``clip_and_accumulate`` puts the Dirac canary into the per-sample gradients before
        Opacus clips them, and every ``step`` records the parameters. The noise multiplier,
        clipping norm, expected batch size and learning rate are read from the
        ``DPOptimizer``; the sampler from the loader (Opacus' ``DPDataLoader``: Poisson at its
        ``sample_rate``; else fixed or shuffled batches). Under Poisson sampling the canary
        goes through the user's own sampler (drawn as record ``N + 1``), so a loader that
        samples at another rate than the one accounted is caught. Accountant histories
        touched by the audit's runs are restored after each run.

        Parameters
        ----------
        train_epoch : callable
            ``train_epoch(model, optimizer, data_loader)``: one epoch of the user's training.
        model, optimizer, data_loader
            Opacus' ``GradSampleModule``, ``DPOptimizer`` and data loader.
        privacy_engine : opacus.PrivacyEngine, optional
            Its accountant gives the user's headline :math:`\varepsilon` for their training
            (``epochs`` epochs of ``len(data_loader)`` steps), shown beside the audit's.
        target_epsilon, target_delta : float, optional
            The :math:`(\varepsilon, \delta)` the user chose (``make_private_with_epsilon``).
        epochs : int
            Epochs of the user's training (their accountant's steps: ``epochs *
            len(data_loader)``).
        steps : int, optional
            Steps each audit run trains (default ``len(data_loader)``: one epoch); at most
            ``epochs * len(data_loader)`` (checked now).
        reference : (x, y), optional
            Reference records for the gradient moments; default: the first ``n_reference``
            records of ``data_loader.dataset`` (not held back from training: said in every
            report; pass records of your own to hold some back).
        n_reference : int
        loss : {"cross_entropy", "mse"}
        sample_rate : float, optional
            The Poisson rate the user's privacy accounting assumes (default: the loader's
            ``sample_rate``); the audited relation's :math:`\varepsilon` and the statistics
            use it, the canary the loader's real sampling.
        **kwargs
            Passed to :class:`TrainingLoop` (``canary="dirac"`` only, ``scale``,
            ``coordinate``).

        Returns
        -------
        TrainingLoop
            With ``headline`` (the user's numbers) set.
        """
        for name, obj, attrs in (("optimizer", optimizer, ("noise_multiplier", "max_grad_norm",
                                                         "expected_batch_size")),):
            missing = [a for a in attrs if not hasattr(obj, a)]
            if missing:
                raise TypeError(f"{name} must be Opacus' DPOptimizer (make_private's), it lacks "
                                f"{missing}")
        if not callable(train_epoch):
            raise TypeError("train_epoch must be callable train_epoch(model, optimizer, "
                            f"data_loader), got {type(train_epoch).__name__}")
        if kwargs.get("canary", "dirac") != "dirac":
            raise ValueError("from_opacus inserts a Dirac canary through the optimizer; for an "
                             "input canary write train(model, run) with run.canary_batch")
        for k in ("lr", "batch_size", "noise_multiplier", "max_grad_norm", "sampler"):
            if k in kwargs:
                raise ValueError(f"{k} is read from the Opacus objects; do not pass it")
        inner = getattr(model, "_module", model)
        if not isinstance(inner, nn.Module):
            raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
        inner = _without_hooks(copy.deepcopy(inner))  # the statistics' copy
        n_batches = len(data_loader)
        epochs = check_int(epochs, "epochs", minimum=1)
        steps = n_batches if steps is None else check_int(
            steps, "steps", minimum=1, maximum=epochs * n_batches)
        group = optimizer.param_groups[0]
        notes = []
        if group.get("momentum", 0) or type(getattr(optimizer, "original_optimizer",
                                                    optimizer)).__name__ != "SGD":
            notes.append("the statistics assume plain SGD updates; momentum or an adaptive "
                         "optimizer only lowers their power (the bounds stay valid)")
        sampler_obj = getattr(data_loader, "batch_sampler", None)
        q = getattr(sampler_obj, "sample_rate", None) or getattr(data_loader, "sample_rate",
                                                                 None)
        n_data = len(data_loader.dataset)
        if q is not None:
            sampler = "poisson"
            if sample_rate is None:
                sample_rate = float(q)
            elif not math.isclose(float(sample_rate), float(q), rel_tol=1e-9):
                notes.append(f"the accounting's sample rate {float(sample_rate):.4g} is not the "
                             f"loader's {float(q):.4g}: the canary goes through the loader, the "
                             "relation's epsilon uses the accounting's rate")
        elif sample_rate is not None:
            raise ValueError("sample_rate applies to a Poisson loader (Opacus' DPDataLoader)")
        else:
            bs = data_loader.batch_size
            sampler = "fixed" if (data_loader.drop_last or n_data % bs == 0) else "shuffle"
            sample_rate = None
        if reference is None:
            n_ref = check_int(n_reference, "n_reference", minimum=2, maximum=n_data)
            recs = [data_loader.dataset[i] for i in range(n_ref)]
            reference = (torch.stack([torch.as_tensor(r[0]) for r in recs]),
                         torch.as_tensor([int(r[1]) for r in recs]))
            notes.append(f"reference statistics from the first {n_ref} training records (not "
                         "held back from training; pass reference=(x, y) to hold records back)")
        acc = getattr(privacy_engine, "accountant", None)
        train = _OpacusTrain(train_epoch, model, optimizer, data_loader, acc)
        loop = cls(train, inner, reference=reference, steps=steps,
                   lr=float(group["lr"]), batch_size=int(optimizer.expected_batch_size),
                   noise_multiplier=float(optimizer.noise_multiplier),
                   max_grad_norm=float(optimizer.max_grad_norm), sampler=sampler,
                   sample_rate=sample_rate, loss=loss, **kwargs)
        loop.notes.extend(notes)
        head: dict[str, Any] = {"steps": epochs * n_batches,
                                "sample_rate": sample_rate if sample_rate is not None else
                                (data_loader.batch_size / n_data)}
        if target_epsilon is not None:
            head["target_epsilon"] = check_positive(target_epsilon, "target_epsilon")
        if target_delta is not None:
            head["delta"] = check_probability(target_delta, "target_delta")
        if acc is not None:
            head["accountant"] = acc.mechanism()
            if target_delta is not None:
                fresh = type(acc)()
                fresh.history = [(float(optimizer.noise_multiplier), head["sample_rate"],
                                  head["steps"])]
                with warnings.catch_warnings(), np.errstate(all="ignore"):
                    warnings.simplefilter("ignore", RuntimeWarning)
                    head["epsilon"] = float(fresh.get_epsilon(head["delta"]))
        loop.headline = head
        return loop

    # -- memory ------------------------------------------------------------------------------
    def memory_estimate(self, releases) -> tuple[float, float]:
        """Measured bytes ``(scoring per round, training per worker)`` (the runner's hook,
        :func:`semi_core.game.play.estimate_play`).

        A pilot measures the growth of the process' peak resident memory (Linux
        ``VmHWM``, reset through ``/proc/self/clear_refs``; elsewhere ``ru_maxrss``, which
        can only grow, so the measure is then a lower bound) while it scores ``releases``
        (one round: the reference gradients at every step are the per-round cost) and while
        it trains one run (parameters, per-sample gradients, optimizer state, the loop's
        activations: one per worker). Measured once per loop.

        Parameters
        ----------
        releases : array_like, shape (R, T, d)
            Releases (one round is scored).

        Returns
        -------
        scoring_bytes : float
            Bytes per scored round.
        training_bytes : float
            Bytes per worker for training.
        """
        if self._mem is None:
            rel = np.asarray(releases)[:1]
            scoring = _peak_growth(lambda: self.log_lr_steps(rel))
            training = _peak_growth(lambda: self._one_run(True, 1, 0))
            self._mem = (float(scoring), float(training))
            self._fixed_bytes = float(training)
        return self._mem

    # -- the game ------------------------------------------------------------------------
    def _one_run(self, member: bool, tau: int, seed: int) -> np.ndarray:
        run = Run(self, member=member, tau=tau, seed=seed)
        model = copy.deepcopy(self.model)
        name = getattr(self.train, "__qualname__", type(self.train).__name__)
        with _seeded_global_rng(seed, self.device):
            out = self.train(model, run)
        if out is not None:
            if run._states:
                raise ValueError(f"{name} both recorded states and returned some: do one")
            seq = list(out)
            if len(seq) == self.T + 1:  # theta_0 included: it must be the given model's
                run.record(seq[0])
                first = run._states.pop()
                if not np.array_equal(first, self.theta0.cpu().numpy()):
                    raise ValueError(f"{name} returned a first state that is not the model's "
                                     "theta_0: every run must start from the model given")
                seq = seq[1:]
            for s in seq:
                run.record(s)
        if len(run._states) != self.T:
            raise ValueError(f"{name} recorded {len(run._states)} states, steps = {self.T} "
                             f"expected (call run.record(model) after every step)")
        fn = "canary_gradients" if self.canary == "dirac" else "canary_batch"
        if self.sampler == "poisson":
            missed = sorted(set(range(1, self.T + 1)) - run._called)
            if missed:
                raise ValueError(f"{name} did not call run.{fn} at steps {missed[:5]}: under "
                                 "Poisson sampling any step may hold the canary (call it at "
                                 "every step)")
        elif not run._inserted:
            raise ValueError(f"{name} never called run.{fn} at step {tau}: the canary was not "
                             "inserted (call it at every step)")
        return np.stack(run._states)

    def release(self, member, tau, rng: np.random.Generator) -> np.ndarray:
        r""":math:`\theta_1..\theta_T` of ``R`` runs of the user's loop, ``(R, T, d)`` float64;
        run ``r`` has its canary at ``tau[r]`` (Dirac: :math:`+` when ``member[r]``, else
        :math:`-`; input: present when ``member[r]``), and its own seed from ``rng``.

        Parameters
        ----------
        member : array_like of bool, shape (R,)
            Canary bit of each run.
        tau : int or array_like of int
            Insertion step(s) in 1..T.
        rng : numpy.random.Generator
            Source of the runs' seeds.

        Returns
        -------
        ndarray of float64, shape (R, T, d)
            Parameters after each step.
        """
        member = np.asarray(member, dtype=bool).reshape(-1)
        taus = np.broadcast_to(np.asarray(tau, dtype=np.int64), member.shape)
        if member.size and (taus.min() < 1 or taus.max() > self.T):
            raise ValueError(f"tau must be in 1..{self.T}")
        seeds = rng.integers(0, 2**63 - 1, size=member.size)
        out = np.empty((member.size, self.T, self.fm.d), dtype=np.float64)
        for r in range(member.size):
            out[r] = self._one_run(bool(member[r]), int(taus[r]), int(seeds[r]))
        return out

    def trajectories(self, releases, dtype: torch.dtype | None = None) -> torch.Tensor:
        r""":math:`\theta_0..\theta_T`, ``(R, T+1, d)``, from releases ``(R, T, d)``, on the
        loop's device in ``dtype`` (default the model's; the statistics take float64).

        Parameters
        ----------
        releases : array_like, shape (R, T, d)
            Releases.
        dtype : torch.dtype, optional
            Dtype of the result; None = the model's.

        Returns
        -------
        torch.Tensor, shape (R, T+1, d)
            The trajectories with :math:`\theta_0` prepended.
        """
        rel = np.asarray(releases, dtype=np.float64)
        if rel.ndim != 3 or rel.shape[1:] != (self.T, self.fm.d):
            raise ValueError(f"releases must have shape (R, {self.T}, {self.fm.d}), got "
                             f"{rel.shape}")
        dt = self.fm.dtype if dtype is None else dtype
        t = torch.as_tensor(rel, dtype=dt, device=self.device)
        th0 = self.theta0.to(self.device, dt).reshape(1, 1, -1).expand(t.shape[0], 1, -1)
        return torch.cat([th0, t], dim=1)

    def _dirac_parts(self, releases):
        """Standardised updates ``s``, means ``a`` and variances ``var`` per step, ``(R, T)``."""
        traj = self.trajectories(releases, STATS_DTYPE)   # differences of theta in float64
        C, n, j = self.max_grad_norm, self.batch_size, self.coordinate
        R = traj.shape[0]
        # natural records in the step: n - 1 beside the canary's slot (fixed/shuffle), or
        # K ~ Poisson-binomial with mean n (Poisson): var of the natural sum n(v + (1-q) m^2)
        q = self.sample_rate
        n_nat = n if q is not None else n - 1
        s, a, var = (np.empty((R, self.T)) for _ in range(3))
        with _LOCK, torch.no_grad():
            for t in range(1, self.T + 1):
                prev = traj[:, t - 1]
                ref = clip_rows(self.fm.per_sample_grads_batched(
                    prev.to(self.fm.dtype), self.ref_x, self.ref_y, shared=True),
                    C)[..., j].to(STATS_DTYPE)
                s[:, t - 1] = (-(n / (self.lr * C)) * (traj[:, t, j] - prev[:, j])).cpu().numpy()
                m, v = ref.mean(-1), ref.var(-1)
                if q is not None:
                    v = v + (1.0 - q) * m ** 2
                a[:, t - 1] = (n_nat * m / C).cpu().numpy()
                var[:, t - 1] = (self.noise_multiplier ** 2 + n_nat * v / C ** 2).cpu().numpy()
        if np.any(var <= 0):
            raise ValueError("the Dirac log-LR is infinite: noise_multiplier = 0 and no "
                             "reference gradient moves the canary coordinate")
        return s, a, var

    def log_lr_steps(self, releases) -> np.ndarray:
        """Per-step log-LRs ``(R, T)`` at each run's own parameters (module docstring).

        Parameters
        ----------
        releases : array_like, shape (R, T, d)
            Releases.

        Returns
        -------
        ndarray, shape (R, T)
            The per-step log-LRs.
        """
        if self.canary == "dirac":
            s, a, var = self._dirac_parts(releases)
            if self.sampler == "poisson":
                return poisson_dirac_log_lr(s, q=self.sample_rate, a=a, var=var)
            return dirac_log_lr(s, a=a, var=var)
        if self.sampler == "poisson":  # the replace-one step LR in the mixture: an approximation
            return poisson_mixture_log_lr(self._input_step_log_lrs(releases), self.sample_rate)
        return self._input_step_log_lrs(releases)

    def _input_step_log_lrs(self, releases) -> np.ndarray:
        with _LOCK:
            return step_log_lrs(self.fm, self.trajectories(releases, STATS_DTYPE), self.ref_x,
                                self.ref_y,
                                self.tgt_x, self.tgt_y, lr=self.lr, batch_size=self.batch_size,
                                noise_multiplier=self.noise_multiplier,
                                max_grad_norm=self.max_grad_norm, shrinkage=self.shrinkage,
                                ridge=self.ridge)

    @property
    def final_log_lr(self):
        r"""Final Observation test ``(releases, tau) -> (R,)`` of a Dirac canary: reads
        :math:`\theta_T-\theta_0` only; ``None`` for an input canary (not offered)."""
        return self._final_log_lr if self.canary == "dirac" else None

    def _final_log_lr(self, releases, tau=None) -> np.ndarray:
        s, a, var = self._dirac_parts(releases)
        if self.sampler == "poisson":
            return poisson_dirac_final_log_lr(s.sum(1), q=self.sample_rate, steps=self.T,
                                              A=a.sum(1), V=var.sum(1))
        return dirac_log_lr(s.sum(1), a=a.sum(1), var=var.sum(1))

    def target_losses(self, releases) -> np.ndarray:
        """The input canary's loss at :math:`\\theta_0..\\theta_T`, ``(R, T+1)``.

        Parameters
        ----------
        releases : array_like, shape (R, T, d)
            Releases.

        Returns
        -------
        ndarray, shape (R, T+1)
            The canary's losses.
        """
        if self.canary != "input":
            raise ValueError("target losses need an input canary (canary='input')")
        with _LOCK:
            return trajectory_losses(self.fm, self.trajectories(releases), self.tgt_x,
                                     self.tgt_y)

    def scorers(self) -> list:
        """Baseline scorers played beside the SeMI statistics (loss baselines for an input
        canary; none for a Dirac canary, whose Final Observation test is its baseline).

        Returns
        -------
        list of Scorer
            The baseline scorers.
        """
        out = [TargetLossScorer(self)] if self.canary == "input" else []
        if self.sampler == "poisson":
            out.append(SumLogLRScorer(self))
        return out

    def epsilon(self, delta: float, tau: int = 1) -> float:
        r"""The accountant's :math:`\varepsilon(\delta)` of the audited game's relation
        (:func:`semi_core.sgd.accounting.relation_epsilon`): one step holds the canary,
        replace-one, :math:`\mu=2/\sigma_{DP}` (``fixed``/``shuffle``); ``T`` Poisson-sampled
        Gaussian steps at rate :math:`q`, add/remove (``poisson``).

        Parameters
        ----------
        delta : float
            The :math:`\delta` of the profile, in (0, 1).
        tau : int
            Insertion step (the guarantee does not depend on it).

        Returns
        -------
        float
            :math:`\varepsilon(\delta)`, >= 0.
        """
        if self.noise_multiplier == 0:
            raise GroundTruthUnknown("noise_multiplier = 0: plain SGD is not differentially "
                                     "private")
        return relation_epsilon(self.noise_multiplier, delta, sample_rate=self.sample_rate,
                                steps=self.T)

    def params(self) -> dict[str, Any]:
        """The audited configuration (JSON metadata).

        Returns
        -------
        dict of str
            The loop, canary, sampler and DP-SGD settings.
        """
        fn = self.train
        return {"mechanism": "training-loop",
                "train": f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', '?')}",
                "T": self.T, "d": int(self.fm.d), "lr": self.lr, "batch_size": self.batch_size,
                "noise_multiplier": self.noise_multiplier, "max_grad_norm": self.max_grad_norm,
                "canary": self.canary, "sampler": self.sampler, "sample_rate": self.sample_rate,
                "coordinate": self.coordinate,
                "coordinate_second_moment": self.coordinate_moment, "scale": self.scale,
                "loss": self.fm.loss_name, "n_reference": int(self.ref_x.shape[0])}


def accountant_epsilon(noise_multiplier: float, delta: float, *,
                       sample_rate: float | None = None, steps: int = 1) -> dict[str, Any]:
    r"""The accountants' :math:`\varepsilon(\delta)` of the relation the audit plays.

    ``sample_rate=None`` (fixed or shuffled batches): the canary in one step, replace-one, no
    sub-sampling. ``gdp_exact``: :func:`semi_core.sgd.accounting.dpsgd_epsilon`
    (:math:`\mu=2/\sigma_{DP}`, tight); ``dp_accounting_pld``: ``dp_accounting``'s PLD
    accountant with ``NeighboringRelation.REPLACE_ONE``; ``opacus_rdp`` / ``opacus_prv``:
    Opacus' accountants, which count add/remove-one neighbours (sensitivity :math:`C`), given
    the noise multiplier :math:`\sigma_{DP}/2` so that they account the same replace-one step
    (sensitivity :math:`2C`), sample rate 1, one step.

    ``sample_rate=q``: the canary in the data set, each of ``steps`` steps holds it with
    probability :math:`q` (add/remove, Poisson). ``dp_accounting_pld``:
    :func:`semi_core.sgd.accounting.poisson_pld_epsilon`; ``opacus_rdp`` / ``opacus_prv``:
    Opacus' accountants with history ``(sigma, q, steps)``: the relation they account.

    ``reference`` names the value the certified bounds are checked against (the tightest
    valid one: exact GDP, else the pessimistic PLD). RDP is an upper bound, looser than the
    others. Each optional library that is not installed gives ``None``.

    Parameters
    ----------
    noise_multiplier : float
        :math:`\sigma_{DP} \ge 0`.
    delta : float
    sample_rate : float, optional
        Poisson rate :math:`q\in(0,1]`.
    steps : int
        Steps of the audited run (Poisson only; ``>= 1``).

    Returns
    -------
    dict
        ``relation``, ``gdp_exact``, ``dp_accounting_pld``, ``opacus_rdp``, ``opacus_prv``,
        ``reference`` (key) and ``epsilon`` (its value).
    """
    delta = check_probability(delta, "delta")
    steps = check_int(steps, "steps", minimum=1)
    poisson = sample_rate is not None
    if poisson:
        sample_rate = check_probability(sample_rate, "sample_rate", high_open=False)
    out: dict[str, Any] = {
        "relation": (f"add/remove, Poisson sampling at q = {sample_rate:.4g}, {steps} steps"
                     if poisson else "replace-one, canary in one step, no subsampling"),
        "gdp_exact": None if poisson else dpsgd_epsilon(noise_multiplier, delta),
        "dp_accounting_pld": None, "opacus_rdp": None, "opacus_prv": None,
        "reference": "dp_accounting_pld" if poisson else "gdp_exact"}
    if noise_multiplier == 0:
        out.update(dp_accounting_pld=math.inf, epsilon=math.inf)
        return out
    try:
        from semi_core.sgd.accounting import dp_accounting_epsilon, poisson_pld_epsilon

        out["dp_accounting_pld"] = (
            poisson_pld_epsilon(noise_multiplier, sample_rate, steps, delta) if poisson
            else dp_accounting_epsilon(noise_multiplier, delta))
    except ImportError:  # optional dependency
        if poisson:
            raise ImportError("Poisson-sampled audits need dp-accounting for the relation's "
                              "epsilon: pip install dp-accounting") from None
    out["epsilon"] = out[out["reference"]]
    try:  # lazy: heavy optional dependency
        from opacus.accountants import PRVAccountant, RDPAccountant
    except ImportError:
        return out
    hist = ((noise_multiplier, sample_rate, steps) if poisson
            else (noise_multiplier / 2.0, 1.0, 1))
    for key, cls in (("opacus_rdp", RDPAccountant), ("opacus_prv", PRVAccountant)):
        acc = cls()
        acc.history = [hist]
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore", RuntimeWarning)
            out[key] = float(acc.get_epsilon(delta))
    return out


def _check_methods(methods) -> list[str]:
    """The certified-bound methods, validated before any training."""
    return list(method_specs(methods))


def training_summary(report: AuditReport) -> Table:
    r"""One row per test and method of an :func:`audit_training` report: the certified
    :math:`\underline\varepsilon`, the **largest certifiable** :math:`\varepsilon` with these
    runs (a bound of 0 with a small ceiling says "too few runs", not "private"), the
    relation's accountant :math:`\varepsilon` it is checked against, the user's headline
    :math:`\varepsilon` and the assumption each bound rests on.

    Parameters
    ----------
    report : AuditReport
        Returned by :func:`audit_training`.

    Returns
    -------
    semi_core._table.Table
    """
    acc = report["accountant"]
    head = report.get("headline") or {}
    refuted = set(report.refuted)
    rows = [{"test": test, "method": method,
             "eps_LB": b.epsilon_lower_bound,
             "largest_certifiable": report.epsilon_max_certifiable(test, method),
             "eps_relation": acc.get("epsilon"),
             "eps_headline": head.get("epsilon"),
             "refutes": f"{test}/{method}" in refuted,
             "assumption": b.assumption}
            for test, method, b in report.items()]
    return Table(rows, title=f"audited relation: {acc['relation']}")


def audit_training(loop: TrainingLoop, rounds: int, seed=0, *, tau: int | None = None,
                   claimed_epsilon: float | None = None, delta: float = 1e-5,
                   failure_prob: float = 0.05, methods=None, executor=None,
                   progress: bool = False, chunk_size: int | None = 64,
                   headline: Mapping[str, Any] | None = None) -> AuditReport:
    r"""Play ``rounds`` runs of the user's loop and certify :math:`\underline\varepsilon`.

    Every argument is checked and the memory of the job estimated (a one-run pilot that
    measures the loop's training and scoring memory, :meth:`TrainingLoop.memory_estimate`)
    before the runs start; a job that cannot fit in the memory limit at ``chunk_size`` is
    played in smaller chunks (said in ``warnings``) or refused
    (:class:`~semi_core._validation.ResourceLimitError`).

    **Like with like.** The certified bounds are checked against the :math:`\varepsilon` of the
    relation the audit plays (:func:`accountant_epsilon`: the canary in one step, replace-one,
    for fixed/shuffled batches; add/remove with Poisson rate :math:`q` over the audited
    ``steps`` for ``sampler="poisson"``), computed by the accountants for that relation. The
    user's own numbers (``claimed_epsilon``, ``headline``) are shown beside it with what
    differs; a bound above them but not above the relation's :math:`\varepsilon` is no
    evidence of a bug.

    Parameters
    ----------
    loop : TrainingLoop
    rounds : int
        Training runs (each member with probability 1/2).
    seed : int or SeedSequence
        Root seed of the runner (same seed, same result on every executor).
    tau : int, optional
        Insertion step (default: the middle step :math:`\lceil T/2\rceil`; not used with
        ``sampler="poisson"``).
    claimed_epsilon : float, optional
        The :math:`\varepsilon` the user claims at ``delta``; reported beside the bounds.
    delta, failure_prob, methods
        Of the certified bounds (:func:`semi_core.audit.report.certify_game`); ``methods``
        defaults to the default method; the runs are played once for all of them.
    executor, progress
        As in :func:`semi_core.game.play.play`.
    chunk_size : int or None
        Runs per chunk (default 64); ``None`` picks the largest that fits in memory.
    headline : dict, optional
        The user's headline numbers (:meth:`TrainingLoop.from_opacus` fills it: target
        :math:`\varepsilon`, their accountant's :math:`\varepsilon` for their whole training).

    Returns
    -------
    AuditReport
        The bounds per test and method (``report.epsilon_lower_bound(test, method)``, each
        with the assumption it rests on and the largest certifiable bound), checked against the
        relation's :math:`\varepsilon`: ``report.refuted`` (the ``test/method`` pairs whose
        distribution-free bound at ``failure_prob / K``, Bonferroni over the ``K`` pairs,
        exceeds it), ``report.refuted_under_assumption`` (the same for
        bounds resting on a parametric assumption, e.g. ``gdp``: not evidence alone), the game
        (``report.game``, a :class:`~semi_core.game.result.GameResult`); and the entries
        ``claimed_epsilon``, ``accountant`` (:func:`accountant_epsilon`, the audited relation),
        ``headline`` (the user's numbers and what differs), ``notes``, ``warnings``,
        ``estimate`` (``report["accountant"]`` ...). :func:`training_summary` is its table
        beside the relation's and the headline :math:`\varepsilon`.
    """
    if not isinstance(loop, TrainingLoop):
        raise TypeError(f"loop must be a TrainingLoop, got {type(loop).__name__}")
    rounds = check_int(rounds, "rounds", minimum=4)
    tau = (loop.T + 1) // 2 if tau is None else check_int(tau, "tau", minimum=1, maximum=loop.T)
    if claimed_epsilon is not None:
        claimed_epsilon = check_positive(claimed_epsilon, "claimed_epsilon")
    delta = check_probability(delta, "delta")
    failure_prob = check_probability(failure_prob, "failure_prob")
    methods = _check_methods(methods)
    if chunk_size is not None:
        chunk_size = check_int(chunk_size, "chunk_size", minimum=1)
    acc = accountant_epsilon(loop.noise_multiplier, delta, sample_rate=loop.sample_rate,
                             steps=loop.T)
    notes: list[str] = []
    chunk_size = _fit_chunk(loop, rounds, chunk_size, executor, notes)
    res = play(loop, rounds, seed, tau=tau, scorers=loop.scorers(), chunk_size=chunk_size,
               executor=executor, progress=progress)
    bounds, ceilings = certify_game(res, methods, delta=delta, failure_prob=failure_prob)
    # a refutation over every (test, method) pair holds at failure_prob (Bonferroni)
    refuting = refutation_bounds(res, methods, delta=delta, failure_prob=failure_prob)
    against = acc["epsilon"]
    head = dict(headline or loop.headline or {})
    if claimed_epsilon is not None:
        head.setdefault("claimed_epsilon", claimed_epsilon)
    if head:
        head["differs"] = _what_differs(loop, acc, head)
        if claimed_epsilon is not None and claimed_epsilon < against * (1 - 1e-3):
            notes.append(f"the claimed epsilon {claimed_epsilon:.4g} is below the accountants' "
                         f"{against:.4g} for the audited relation ({acc['relation']}): it "
                         "cannot hold for this relation (check sigma, the sample rate and the "
                         "steps)")
    header = {"config": loop.params(), "rounds": rounds, "tau": tau,
              "members": int(res.member.sum()), "non_members": int((~res.member).sum()),
              "delta": delta, "failure_prob": failure_prob, "claimed_epsilon": claimed_epsilon,
              "accountant": acc, "headline": head or None}
    report = AuditReport(bounds=bounds, ceilings=ceilings, against=against, header=header,
                         game=res, refuting=refuting)
    refuted, refuted_assuming = report.refuted, report.refuted_under_assumption
    warns = []
    if refuted:
        warns.append(f"certified epsilon_LB above {against:.4g}, the accountants' epsilon of "
                     f"the audited relation ({', '.join(refuted)}; distribution-free): the loop "
                     "leaks more than it claims (a clipping, noise, sampling or accounting bug)")
    if refuted_assuming:
        notes.append(f"epsilon_LB above {against:.4g} only under a parametric assumption "
                     f"({', '.join(refuted_assuming)}; see each bound's assumption): evidence "
                     "only where that assumption holds")
    for n in warns:
        warnings.warn(n, UserWarning, stacklevel=2)
    return replace(report, trailer={"warnings": warns, "notes": notes + list(loop.notes),
                                    "estimate": res.metadata.get("estimate"),
                                    "chunk_size": chunk_size})


def _what_differs(loop: TrainingLoop, acc: Mapping[str, Any], head: Mapping[str, Any]) -> str:
    """What separates the user's headline epsilon from the audited relation's."""
    parts = []
    if loop.sampler != "poisson":
        parts.append("the audit inserts the canary in one step without sub-sampling "
                     "(replace-one); a headline epsilon counts every step with sub-sampling "
                     "(add/remove)")
    steps = head.get("steps")
    if steps is not None and int(steps) != loop.T:
        parts.append(f"the audit plays {loop.T} steps, the headline counts {int(steps)}")
    if head.get("sample_rate") is not None and loop.sample_rate is not None and \
            not math.isclose(float(head["sample_rate"]), loop.sample_rate, rel_tol=1e-9):
        parts.append(f"sample rate {loop.sample_rate:.4g} audited, {head['sample_rate']:.4g} "
                     "in the headline")
    if head.get("accountant") and head["accountant"] != "prv":
        parts.append(f"the headline comes from the {head['accountant']} accountant (an upper "
                     "bound), the relation from PLD")
    return "; ".join(parts) or "nothing: the same relation"


def _fit_chunk(loop: TrainingLoop, rounds: int, chunk_size: int | None, executor,
               notes: list[str]) -> int:
    """The chunk size: the given one if the measured estimate fits, else the largest that
    does (said in ``notes``); refused when even one run per chunk does not fit."""
    from semi_core._validation import ResourceLimitError, format_bytes, memory_limit
    from semi_core.game.backends import Executor
    from semi_core.game.play import estimate_play

    want = 64 if chunk_size is None else chunk_size
    w = max(1, Executor.coerce(executor).parallelism)
    est = estimate_play(loop, rounds, chunk_size=want, executor=executor,
                        scorers=loop.scorers())
    limit = memory_limit()
    if est.peak_bytes <= limit:
        return want
    per_chunk = (est.peak_bytes - loop._fixed_bytes * w) / (min(want, rounds) * w)
    fit = int((limit - loop._fixed_bytes * w) // max(per_chunk * w, 1.0))
    if fit < 1:
        raise ResourceLimitError(
            f"one run of this loop needs about {format_bytes(est.peak_bytes / min(want, rounds))}"
            f" with scoring; the memory limit is {format_bytes(limit)} (half the RAM, or "
            "SEMI_CORE_MAX_MEMORY): use fewer reference records, fewer threads or a smaller "
            "model")
    notes.append(f"chunk_size {want} would need about {format_bytes(est.peak_bytes)} (measured "
                 f"by a pilot run); played in chunks of {fit} to stay within "
                 f"{format_bytes(limit)}")
    return fit
