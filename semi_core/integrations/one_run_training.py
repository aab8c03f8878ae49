r"""Many canaries in ONE run of your own DP-SGD loop: :class:`OneRunLoop` and :func:`audit_one_run`.

The audit of :mod:`semi_core.integrations.training` trains ``R`` runs with one canary each. Here
one run of the same ``train(model, run)`` carries ``m`` canaries, each included independently
with probability 1/2 (Steinke, Nasr & Jagielski 2023, *Privacy auditing with one (1) training
run*; Mahloujifar, Melis & Chaudhuri 2024, *Auditing f-differential privacy in one run*), and
:math:`\underline\varepsilon` is certified from that run alone (``one-run``: Steinke et al.'s
binomial bound; ``one-run-fdp``: the f-DP recursion, with the distribution-free
:math:`(\varepsilon,\delta)` trade-off curve by default). The loop calls the same three methods
of ``run`` as for :class:`~semi_core.integrations.training.TrainingLoop`:

.. code-block:: python

    def train(model, run):
        for t in range(1, run.steps + 1):
            x, y = run.canary_batch(t, x, y)        # input canaries of step t (no-op otherwise)
            grads = run.canary_gradients(t, grads)  # Dirac canaries of step t, before clipping
            ...                                     # your clipping, noise, optimizer step
            run.record(model)

**Designs** (``canary=``):

``"dirac"`` (white-box)
    canary :math:`c` is the gradient :math:`\pm M e_{j_c}` (``M = scale * max_grad_norm``;
    ``+`` when :math:`S_c=1`, ``-`` otherwise: the replace-one neighbours of Nasr et al. 2023)
    on its own coordinate :math:`j_c` (the ``m`` coordinates with the smallest second moment of
    the clipped reference gradients, :func:`~semi_core.sgd.dirac.dirac_coordinates`), in its own
    batch slot at step :math:`\tau_c` (:func:`~semi_core.sgd.one_run.spread_steps`). With
    :math:`k_t` canaries in step :math:`t` (so :math:`n-k_t` natural records), the score of
    canary :math:`c` is the per-step log-LR at its own step, at the run's recorded parameters:

    .. math::

        \mathrm{score}_c = \frac{2(s_c-a_c)}{\varsigma_c^2},\quad
        s_c=-\frac{n}{\eta C}(\theta_{\tau_c}-\theta_{\tau_c-1})_{j_c},\quad
        a_c=\frac{(n-k_{\tau_c})m_{j_c}}{C},\quad
        \varsigma_c^2=\sigma_{DP}^2+\frac{(n-k_{\tau_c})v_{j_c}}{C^2}

    (:func:`~semi_core.sgd.dirac.dirac_log_lr`; :math:`m_j, v_j`: mean and variance of the
    clipped reference gradients at :math:`\theta_{\tau_c-1}`).
``"input"`` with fixed steps (white-box and black-box)
    the user's records :math:`z_c` (``canary_records=(x, y)``); when :math:`S_c=1`, :math:`z_c`
    replaces a batch slot at step :math:`\tau_c`. Scores: ``step_log_lr`` (white-box: the
    two-covariance DP-SGD log-LR of :math:`z_c` at :math:`\tau_c`,
    :func:`~semi_core.sgd.batched.batched_dpsgd_log_lr`) and ``loss`` (black-box:
    :math:`-\ell(\theta_T; z_c)`, the final model only).
``"input"`` with ``sample_rate`` (through the user's sampler)
    the included canaries are appended to the user's data (``run.dataset(x, y)``), and the
    user's own sampler decides when they are in a batch: Poisson sampling at rate :math:`q`
    puts each in every step with probability :math:`q`. Score ``loss``. The accountant's
    :math:`\varepsilon` is then that of the *declared* rate (Poisson-subsampled Gaussian,
    add/remove-one, :math:`T` steps): a loop whose sampler uses another rate (or no sampling)
    leaks more than that, and the certified bound exceeds it (the sample rate is audited).

**What the bound rests on.** Each :math:`S_c` is an independent Bernoulli(1/2) draw from the run's
``SeedSequence`` (``child_seed(seed, 0)``), independent of everything else, and the guesses are
a function of the run's output only (the scores; their counts pre-registered): the assumption
``one-run-bernoulli-half`` of :data:`semi_core.audit.bounds.ASSUMPTIONS`, named in every result.
Nothing is assumed of the loop, of the scores' law or of the statistic's model: a loop that does
not do what is declared only changes the scores' power (``tradeoff="gdp"`` adds the Gaussian
trade-off assumption and says so).

**Ground truth** (the relation each canary plays). Fixed steps: one record replaced in one step
without subsampling, :math:`\mu=2/\sigma_{DP}` GDP per canary
(:func:`~semi_core.sgd.accounting.dpsgd_epsilon`). Through the sampler: the
Poisson-subsampled Gaussian at the declared rate, add/remove-one, composed over the ``steps``
(``dp_accounting``'s PLD accountant).

**Device and dtype.** ``device`` (default: the model's) holds the recorded parameters, the
canaries and the statistics; ``run.generator`` is a ``torch.Generator`` on it. Training is the
user's, in the model's dtype. The recorded parameters are kept in float64 (a float32 value is
exact in float64, so differences of consecutive states lose nothing) and every statistic is
float64 (:data:`~semi_core.sgd.device.STATS_DTYPE`): the standardised update :math:`s_c`
(a parameter difference scaled by :math:`n/(\eta C)`), the gradient moments (sums over the
reference records) and the two-covariance log-LR (a Cholesky solve). Per-sample gradients are
computed in the model's dtype at the recorded parameters rounded to it, then promoted.

**Randomness.** Bits from ``child_seed(seed, 0)``; the run (slots, ``run.rng``,
``run.generator``, the global generators while ``train`` runs) from ``child_seed(seed, 1)``.
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from torch import nn

from semi_core._rng import child_seed
from semi_core._table import Table
from semi_core._validation import (
    check_delta,
    check_failure_prob,
    check_int,
    check_memory,
    check_positive,
    check_probability,
)
from semi_core.audit.bounds import ASSUMPTIONS, epsilon_lower_bound
from semi_core.audit.report import AuditReport, refutation_bounds
from semi_core.sgd.accounting import dpsgd_epsilon
from semi_core.sgd.batched import batched_dpsgd_log_lr
from semi_core.sgd.device import STATS_DTYPE, resolve_device
from semi_core.sgd.dirac import dirac_coordinates, dirac_log_lr
from semi_core.sgd.grads import FunctionalModel, clip_rows
from semi_core.sgd.one_run import _check_design

from .checkpoints import as_records
from .training import _seeded_global_rng, _strip, check_dpsgd_arguments, recorded_state

__all__ = ["OneRunLoop", "OneRunRun", "OneRunTrainingResult", "audit_one_run",
           "poisson_epsilon", "estimate_bytes", "TRADEOFFS"]

#: ``one-run-fdp`` trade-off curves: ``"eps-delta"`` (distribution-free, the default) and
#: ``"gdp"`` (assumes a Gaussian trade-off curve; the result says so).
TRADEOFFS = ("eps-delta", "gdp")


def poisson_epsilon(noise_multiplier: float, sample_rate: float, steps: int,
                    delta: float) -> float:
    r""":math:`\varepsilon(\delta)` of ``steps`` Poisson-subsampled Gaussian steps, add/remove-one
    (``dp_accounting``'s PLD accountant; an optional dependency).

    .. math::

        M=\big(\mathcal M_q\big)^{\circ T},\quad
        \mathcal M_q(D)=\textstyle\sum_{i\in B}\mathrm{clip}_C(g_i)+\mathcal N(0,\sigma_{DP}^2C^2),
        \ B\ni i \text{ w.p. } q

    Parameters
    ----------
    noise_multiplier : float
        :math:`\sigma_{DP}>0`.
    sample_rate : float
        :math:`q\in(0,1]`.
    steps : int
        :math:`T\ge1`.
    delta : float
        In ``(0, 1)``.

    Returns
    -------
    float
    """
    import dp_accounting as dpa
    from dp_accounting.pld.pld_privacy_accountant import PLDAccountant

    sigma = check_positive(noise_multiplier, "noise_multiplier")
    q = check_probability(sample_rate, "sample_rate", low_open=True, high_open=False)
    steps = check_int(steps, "steps", minimum=1)
    delta = check_probability(delta, "delta")
    acc = PLDAccountant(dpa.NeighboringRelation.ADD_OR_REMOVE_ONE,
                        value_discretization_interval=1e-3)
    event = dpa.GaussianDpEvent(sigma) if q == 1 else \
        dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(sigma))
    acc.compose(event, steps)
    return float(acc.get_epsilon(delta))


class OneRunLoop:
    r"""A user's DP-SGD loop ``train(model, run)`` carrying ``m`` canaries in one run.

    Parameters
    ----------
    train : callable
        ``train(model, run)``: calls ``run.canary_batch`` / ``run.canary_gradients`` on every
        step's batch and ``run.record(model)`` after every step (as for
        :class:`~semi_core.integrations.training.TrainingLoop`; the same function works for
        both). With ``sample_rate`` it samples its batches from ``run.dataset(x, y)``.
    model : torch.nn.Module
        The architecture at :math:`\theta_0`; a deep copy is trained.
    reference : (x, y)
        Reference records drawn like the training data (``>= 2``): gradient moments.
    steps, lr, batch_size, noise_multiplier, max_grad_norm
        :math:`T`, :math:`\eta`, :math:`n` (the expected batch size with ``sample_rate``),
        :math:`\sigma_{DP}`, :math:`C` the loop declares.
    canary : {"dirac", "input"}
    canaries : int, optional
        ``m`` Dirac canaries (``canary="dirac"``; at most the number of trainable parameters).
    canary_records : (x (m, ...), y (m,)), optional
        The ``m`` input canaries (``canary="input"``).
    sample_rate : float, optional
        Input canaries only: the loop's declared Poisson sampling rate :math:`q\in(0,1]`; the
        canaries go through the user's sampler (module docstring). Default: fixed steps.
    taus : int or array of int, optional
        Fixed-step designs: each canary's step (default
        :func:`~semi_core.sgd.one_run.spread_steps`).
    scale : float
        Dirac magnitude :math:`M/C\ge1`.
    loss : {"cross_entropy", "mse"}
    shrinkage, ridge : float
        Of the reference-gradient covariance (``step_log_lr``).
    device : None, str or torch.device
        Where the statistics run; default the model's device; a ``meta`` or absent device is
        refused (:func:`~semi_core.sgd.device.resolve_device`).
    """

    def __init__(self, train: Callable, model: nn.Module, *, reference, steps: int, lr: float,
                 batch_size: int, noise_multiplier: float, max_grad_norm: float,
                 canary: str = "dirac", canaries: int | None = None, canary_records=None,
                 sample_rate: float | None = None, taus=None, scale: float = 4.0,
                 loss: str = "cross_entropy", shrinkage: float = 0.1, ridge: float = 1e-4,
                 device=None):
        if not callable(train):
            raise TypeError(f"train must be callable train(model, run), got "
                            f"{type(train).__name__}")
        if not isinstance(model, nn.Module):
            raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
        if canary not in ("dirac", "input"):
            raise ValueError(f"canary must be 'dirac' or 'input', got {canary!r}")
        self.device = resolve_device(device, model)
        self.train, self.model, self.canary = train, model, canary
        self.fm = FunctionalModel(copy.deepcopy(model), loss=loss)
        (self.T, self.lr, self.batch_size, self.noise_multiplier, self.max_grad_norm,
         self.shrinkage) = check_dpsgd_arguments(steps, lr, batch_size, noise_multiplier,
                                                 max_grad_norm, shrinkage)
        self.ridge = float(ridge)
        self.scale = check_positive(scale, "scale")
        if self.scale < 1:
            raise ValueError(f"scale must be >= 1 (the canary's gradient norm scale*C must reach "
                             f"the clipping norm), got {scale}")
        self.theta0 = self.fm.theta().to(STATS_DTYPE)
        ref_x, ref_y, _, _ = as_records(self.fm, reference, None)
        self.ref_x, self.ref_y = ref_x.to(self.device), ref_y.to(self.device)
        self.sample_rate = None
        if sample_rate is not None:
            if canary != "input":
                raise ValueError("sample_rate applies to input canaries (canary='input'): "
                                 "Dirac canaries are gradients and never pass a sampler")
            self.sample_rate = check_probability(sample_rate, "sample_rate", low_open=True,
                                                 high_open=False)
            if taus is not None:
                raise ValueError("taus applies to fixed-step designs; with sample_rate the "
                                 "user's sampler decides the steps")
        if canary == "dirac":
            if canary_records is not None:
                raise ValueError("canary_records applies to canary='input' only")
            self.m = check_int(canaries, "canaries", minimum=2, maximum=self.fm.d)
            with torch.no_grad():
                ref0 = clip_rows(self.fm.per_sample_grads(self.fm.theta(), self.ref_x,
                                                          self.ref_y), self.max_grad_norm)
            coords, moments = dirac_coordinates(ref0.to(STATS_DTYPE), self.m)
            if self.noise_multiplier == 0 and np.any(moments == 0):
                raise ValueError("noise_multiplier = 0 with isolated Dirac coordinates makes the "
                                 "canaries visible with certainty (infinite log-LR); give "
                                 "noise_multiplier > 0 or input canaries")
            self.coords, self.coordinate_moments = coords, moments
            self._where = self._param_positions(coords)
            self.cx = self.cy = None
        else:
            if canary_records is None:
                raise ValueError("canary='input' needs canary_records=(x, y), one row per "
                                 "canary")
            rx, ry = canary_records
            cx, cy, _, _ = as_records(self.fm, (rx, ry), None)
            if canaries is not None and int(canaries) != cx.shape[0]:
                raise ValueError(f"canaries = {canaries} but canary_records hold "
                                 f"{cx.shape[0]} rows")
            if tuple(cx.shape[1:]) != tuple(self.ref_x.shape[1:]):
                raise ValueError(f"canary_records x rows have shape {tuple(cx.shape[1:])}, the "
                                 f"reference records {tuple(self.ref_x.shape[1:])}")
            self.m = int(cx.shape[0])
            self.cx, self.cy = cx.to(self.device), cy.to(self.device)
            self.coords = None
        if self.sample_rate is None:
            # the design must fit before anything trains: k_t canaries need k_t distinct slots
            from semi_core.sgd.one_run import spread_steps

            tt = spread_steps(self.m, self.T) if taus is None else \
                np.broadcast_to(np.asarray(taus), (self.m,))
            if not np.issubdtype(np.asarray(tt).dtype, np.integer) or tt.min() < 1 or \
                    tt.max() > self.T:
                raise ValueError(f"taus must be integer steps in 1..{self.T}")
            most = int(np.bincount(tt, minlength=self.T + 1).max())
            if most > self.batch_size:
                raise ValueError(f"{most} canaries in one step exceed batch_size = "
                                 f"{self.batch_size}: give more steps, a larger batch or fewer "
                                 f"canaries (m = {self.m}, steps = {self.T})")
            if self.canary == "dirac" and self.noise_multiplier == 0:
                raise ValueError("noise_multiplier must be > 0 for Dirac canaries")
        self.taus = None if taus is None else np.asarray(taus)

    def _param_positions(self, coords) -> list[tuple[int, int]]:
        """(parameter index, flat index inside it) of flat coordinates."""
        starts = np.cumsum([0, *self.fm.sizes])
        p = np.searchsorted(starts, coords, side="right") - 1
        return [(int(a), int(c - starts[a])) for a, c in zip(p, coords, strict=True)]

    def epsilon(self, delta: float) -> float:
        r"""The accountant's :math:`\varepsilon(\delta)` of the relation one canary plays
        (module docstring, *Ground truth*).

        Parameters
        ----------
        delta : float

        Returns
        -------
        float
        """
        if self.noise_multiplier == 0:
            raise ValueError("noise_multiplier = 0: plain SGD is not differentially private")
        if self.sample_rate is None:
            return dpsgd_epsilon(self.noise_multiplier, delta)
        return poisson_epsilon(self.noise_multiplier, self.sample_rate, self.T, delta)

    @property
    def relation(self) -> str:
        """The neighbouring relation and sampling each canary's :math:`\\varepsilon` is for."""
        if self.sample_rate is None:
            return "replace-one, each canary in one step, no subsampling"
        return (f"add/remove-one, Poisson sampling at the declared rate q = "
                f"{self.sample_rate:g}, {self.T} steps")

    def params(self) -> dict[str, Any]:
        """The audited configuration (JSON metadata).

        Returns
        -------
        dict of str
            The loop, canaries and DP-SGD settings.
        """
        fn = self.train
        return {"mechanism": "training-loop-one-run",
                "train": f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', '?')}",
                "T": self.T, "d": int(self.fm.d), "m": self.m, "lr": self.lr,
                "batch_size": self.batch_size, "noise_multiplier": self.noise_multiplier,
                "max_grad_norm": self.max_grad_norm, "canary": self.canary,
                "sample_rate": self.sample_rate, "scale": self.scale,
                "device": str(self.device), "model_dtype": str(self.fm.dtype).replace(
                    "torch.", ""), "n_reference": int(self.ref_x.shape[0])}


class OneRunRun:
    """The run handed to ``train(model, run)``: the API of
    :class:`~semi_core.integrations.training.Run` with ``m`` canaries.

    Attributes
    ----------
    steps : int
    seed : int
    generator : torch.Generator
        On the loop's device.
    rng : numpy.random.Generator
    """

    def __init__(self, loop: OneRunLoop, member: np.ndarray, taus: np.ndarray | None,
                 seed: np.random.SeedSequence):
        self._loop, self._member = loop, member
        self.steps = loop.T
        self.seed = int(seed.generate_state(1, np.uint64)[0] >> np.uint64(1))
        s_slot, s_np, s_torch = seed.spawn(3)
        self.rng = np.random.Generator(np.random.PCG64(s_np))
        self.generator = torch.Generator(device=loop.device).manual_seed(
            int(s_torch.generate_state(1, np.uint64)[0] >> np.uint64(1)))
        self._at: dict[int, np.ndarray] = {}
        self._slots: dict[int, np.ndarray] = {}
        if taus is not None:
            g = np.random.Generator(np.random.PCG64(s_slot))
            for t in range(1, loop.T + 1):
                here = np.flatnonzero(taus == t)
                if here.size:
                    self._at[t] = here
                    self._slots[t] = g.choice(loop.batch_size, size=here.size, replace=False)
        # the statistics are computed as the run goes (at each canary's step, from the states
        # before and after it): memory O(d + m), not O(T d)
        self._prev = loop.theta0.to(loop.device)
        self._recorded = 0
        self._wb = np.full(loop.m, np.nan) if taus is not None else None
        self.score_seconds = 0.0
        self._seen: set[int] = set()
        self._dataset_calls = 0

    def __repr__(self) -> str:
        return f"OneRunRun(steps={self.steps}, m={self._loop.m})"

    def _step(self, step, what: str) -> int:
        return check_int(step, f"{what} step", minimum=1, maximum=self.steps)

    def _rows(self, rows: int, what: str, step: int) -> None:
        if self._loop.sample_rate is None and rows != self._loop.batch_size:
            raise ValueError(f"step {step}: {what} has {rows} rows, the declared batch_size is "
                             f"{self._loop.batch_size} (the fixed-step design puts canaries in "
                             "its slots)")

    def dataset(self, x, y):
        """The user's data with the included input canaries appended (``sample_rate`` designs):
        sample every step's batch from it with the loop's own sampler.

        Parameters
        ----------
        x, y : Tensor or ndarray
            The user's records and labels (rows first).

        Returns
        -------
        (x', y')
            Of the same kind, device and dtype, the included canaries' rows appended.
        """
        loop = self._loop
        if loop.sample_rate is None:
            raise ValueError("run.dataset is for designs with sample_rate (canaries through "
                             "your sampler); fixed-step designs use run.canary_batch")
        self._dataset_calls += 1
        keep = torch.as_tensor(np.flatnonzero(self._member), device=loop.cx.device)
        cx, cy = loop.cx[keep], loop.cy[keep]
        if isinstance(x, torch.Tensor):
            return (torch.cat([x, cx.to(x.device, x.dtype).reshape(-1, *x.shape[1:])]),
                    torch.cat([y, cy.to(y.device, y.dtype).reshape(-1, *y.shape[1:])]))
        x, y = np.asarray(x), np.asarray(y)
        return (np.concatenate([x, cx.cpu().numpy().astype(x.dtype).reshape(-1, *x.shape[1:])]),
                np.concatenate([y, cy.cpu().numpy().astype(y.dtype).reshape(-1, *y.shape[1:])]))

    def canary_batch(self, step: int, x, y):
        """Batch ``step`` with the included input canaries of that step in their slots (copies;
        a no-op for Dirac canaries and for ``sample_rate`` designs).

        Parameters
        ----------
        step : int
            ``1..steps``.
        x, y : Tensor or ndarray
            The step's batch (``batch_size`` rows in fixed-step designs).

        Returns
        -------
        (x, y)
            The batch, canaries in place (the inputs are not changed).
        """
        step = self._step(step, "canary_batch")
        self._rows(len(x), "the batch", step)
        loop = self._loop
        if loop.canary != "input" or loop.sample_rate is not None:
            return x, y
        self._seen.add(step)
        here = self._at.get(step)
        if here is None:
            return x, y
        inc = self._member[here]
        if not inc.any():
            return x, y
        idx, slots = here[inc], self._slots[step][inc]
        if isinstance(x, torch.Tensor):
            x, y = x.clone(), y.clone()
            sl = torch.as_tensor(slots, device=x.device)
            ii = torch.as_tensor(idx, device=loop.cx.device)
            x[sl] = loop.cx[ii].to(x.device, x.dtype).reshape(-1, *x.shape[1:])
            y[sl] = loop.cy[ii].to(y.device, y.dtype).reshape(-1, *y.shape[1:])
            return x, y
        x, y = np.array(x, copy=True), np.array(y, copy=True)
        x[slots] = loop.cx[torch.as_tensor(idx)].cpu().numpy().reshape(-1, *x.shape[1:])
        y[slots] = loop.cy[torch.as_tensor(idx)].cpu().numpy().reshape(-1, *y.shape[1:])
        return x, y

    def canary_gradients(self, step: int, grads):
        r"""Per-sample gradients of step ``step`` with the Dirac canaries of that step in their
        slots (:math:`\pm Me_{j_c}`; call before clipping). Accepts what
        :meth:`~semi_core.integrations.training.Run.canary_gradients` accepts: flat ``(n, d)``,
        ``{name: (n, ...)}``, a sequence in parameter order, or a module with Opacus'
        ``grad_sample`` (changed in place). A no-op for input canaries.

        Parameters
        ----------
        step : int
            ``1..steps``.
        grads : Tensor, mapping, sequence or nn.Module
            The step's per-sample gradients, ``batch_size`` rows.

        Returns
        -------
        The same kind of object (a modified copy; the module itself for a module).
        """
        step = self._step(step, "canary_gradients")
        loop = self._loop
        fm = loop.fm
        if loop.canary != "dirac":
            return grads
        self._seen.add(step)
        here = self._at.get(step)
        if isinstance(grads, torch.Tensor):
            if grads.ndim != 2 or grads.shape[1] != fm.d:
                raise ValueError(f"flat per-sample gradients must have shape (n, {fm.d}), got "
                                 f"{tuple(grads.shape)}")
            self._rows(grads.shape[0], "grads", step)
            if here is None:
                return grads
            out = grads.clone()
            sl = torch.as_tensor(self._slots[step], device=out.device)
            out[sl] = 0.0
            out[sl, torch.as_tensor(loop.coords[here], device=out.device)] = \
                self._values(here, out)
            return out
        module = isinstance(grads, nn.Module)
        if module:
            named = {_strip(k): p for k, p in grads.named_parameters() if p.requires_grad}
            tensors = []
            for k in fm.names:
                gs = getattr(named.get(k), "grad_sample", None)
                if gs is None:
                    raise ValueError(f"module parameter {k!r} has no grad_sample (Opacus computes "
                                     "it in backward(); call canary_gradients after it)")
                tensors.append(gs)
            keys = None
        elif isinstance(grads, Mapping):
            keymap = {_strip(str(k)): k for k in grads}
            missing = [k for k in fm.names if k not in keymap]
            if missing:
                raise ValueError(f"grads lacks the trainable parameters {missing[:5]}")
            keys = [keymap[k] for k in fm.names]
            tensors = [grads[k] for k in keys]
        elif isinstance(grads, Sequence):
            if len(grads) != len(fm.names):
                raise ValueError(f"grads must hold {len(fm.names)} tensors (one per trainable "
                                 f"parameter), got {len(grads)}")
            keys, tensors = None, list(grads)
        else:
            raise TypeError(f"grads must be a Tensor, a mapping, a sequence or an nn.Module, got "
                            f"{type(grads).__name__}")
        for g, shape in zip(tensors, fm.shapes, strict=True):
            if tuple(g.shape[1:]) != tuple(shape):
                raise ValueError(f"per-sample gradients of shape {tuple(g.shape)} do not match "
                                 f"the parameter shape {shape}")
        self._rows(tensors[0].shape[0], "grads", step)
        if here is None:
            return grads
        if not module:
            tensors = [g.clone() for g in tensors]
        sl = self._slots[step]
        vals = self._values(here, tensors[0])
        with torch.no_grad():
            for g in tensors:
                g[torch.as_tensor(sl, device=g.device)] = 0.0
            for c, (slot, v) in enumerate(zip(sl.tolist(), vals, strict=True)):
                p, local = loop._where[int(here[c])]
                tensors[p][slot].view(-1)[local] = v
        if module:
            return grads
        if keys is not None:
            out = dict(grads)
            out.update(zip(keys, tensors, strict=True))
            return out
        return tuple(tensors) if isinstance(grads, tuple) else tensors

    def _values(self, here, like: torch.Tensor) -> torch.Tensor:
        loop = self._loop
        sign = np.where(self._member[here], 1.0, -1.0) * loop.scale * loop.max_grad_norm
        return torch.as_tensor(sign, dtype=like.dtype, device=like.device)

    def record(self, state) -> None:
        """Record the parameters after the current step (once per step): the model (wrapped
        or not), its state dict, or a flat vector; kept in float64 on the loop's device (only
        the latest state: the white-box scores of a step's canaries are computed here).

        Parameters
        ----------
        state : nn.Module, mapping or flat vector
        """
        arr = recorded_state(self._loop.fm, state, device=self._loop.device,
                             recorded=self._recorded, steps=self.steps)
        t = self._recorded + 1
        if self._wb is not None and t in self._at:
            t0 = time.perf_counter()
            self._wb[self._at[t]] = _step_scores(self._loop, self._at[t], self._prev, arr)
            self.score_seconds += time.perf_counter() - t0
        self._prev, self._recorded = arr, t


@dataclass(frozen=True, repr=False)
class OneRunTrainingResult(AuditReport):
    r"""Outcome of :func:`audit_one_run`: ``m`` canaries of one run of the user's loop (an
    :class:`~semi_core.audit.report.AuditReport` whose tests are the canaries' scores).

    Attributes
    ----------
    bounds : dict
        ``{score: {method: AuditResult}}``: certified :math:`\underline\varepsilon` per score
        (``dirac``, ``step_log_lr``, ``loss``) and method (``one-run``, ``one-run-fdp``), each
        with the assumption it rests on.
    against : float
        The claimed :math:`\varepsilon`, else the accountant's: ``refuted`` lists the
        ``score/method`` whose bound at ``failure_prob / K`` (Bonferroni over the ``K`` pairs)
        exceeds it under the distribution-free assumption
        ``one-run-bernoulli-half``, ``refuted_under_assumption`` those adding an assumption
        (``tradeoff="gdp"``).
    epsilon : float
        The accountant's :math:`\varepsilon(\delta)` of the relation each canary plays.
    claimed_epsilon : float or None
    relation : str
    assumption : str
        ``one-run-bernoulli-half`` (:data:`semi_core.audit.bounds.ASSUMPTIONS`).
    m, members : int
    member, taus : ndarray
        Inclusion bits and steps (``taus`` is ``None`` through the sampler).
    scores : dict of ndarray
    delta, failure_prob : float
    seconds : dict
        ``train``, ``score``, ``certify`` wall seconds.
    config : dict
    """

    epsilon: float = math.nan
    claimed_epsilon: float | None = None
    relation: str = ""
    m: int = 0
    members: int = 0
    member: np.ndarray | None = None
    taus: np.ndarray | None = None
    scores: dict = field(default_factory=dict)
    delta: float = math.nan
    failure_prob: float = math.nan
    seconds: dict = field(default_factory=dict)
    config: dict = field(default_factory=dict)
    assumption: str = "one-run-bernoulli-half"

    def __repr__(self) -> str:
        claim = "None" if self.claimed_epsilon is None else f"{self.claimed_epsilon:.4f}"
        return (f"OneRunTrainingResult(m={self.m}, epsilon={self.epsilon:.4f}, "
                f"claimed_epsilon={claim}, best={self.best():.4f}, refuted={self.refuted}, "
                f"assumption={self.assumption!r})")

    def epsilon_lower_bound(self, test: str, method: str | None = "one-run") -> float:
        r""":math:`\underline\varepsilon` of one score and method.

        Parameters
        ----------
        test : str
            The score (``dirac``, ``step_log_lr``, ``loss``).
        method : str
            Default ``one-run``.

        Returns
        -------
        float
        """
        return super().epsilon_lower_bound(test, method)

    def summary(self) -> Table:
        r"""One row per score and method.

        Returns
        -------
        Table
            The bound, its ratio to the accountant's :math:`\varepsilon`, the guesses, the
            assumption and whether it refutes the claim (at ``failure_prob / K``,
            :attr:`~semi_core.audit.report.AuditReport.refuting`).
        """
        refutes = set(self.refuted) | set(self.refuted_under_assumption)
        rows = [{"score": score, "method": method,
                 "eps_lb": r.epsilon_lower_bound,
                 "eps_lb/eps": r.epsilon_lower_bound / self.epsilon,
                 "guesses": r.n_guesses, "correct": r.n_correct,
                 "assumption": r.assumption,
                 "refutes": f"{score}/{method}" in refutes}
                for score, method, r in self.items()]
        claim = "" if self.claimed_epsilon is None else f", claimed {self.claimed_epsilon:.4g}"
        return Table(rows, title=f"{self!r}\none run, m = {self.m} canaries ({self.members} "
                                 f"included); accountant eps {self.epsilon:.4g} ({self.relation})"
                                 f"{claim}\n{ASSUMPTIONS[self.assumption]}")

    def _header(self) -> dict:
        return {"m": self.m, "members": self.members, "epsilon": self.epsilon,
                "claimed_epsilon": self.claimed_epsilon, "relation": self.relation,
                "delta": self.delta, "failure_prob": self.failure_prob}

    def _trailer(self) -> dict:
        return {"assumption": self.assumption, "assumption_text": ASSUMPTIONS[self.assumption],
                "seconds": dict(self.seconds), "config": dict(self.config)}


def _train_once(loop: OneRunLoop, member, taus, seed) -> OneRunRun:
    run = OneRunRun(loop, member, taus, child_seed(seed, 1))
    model = copy.deepcopy(loop.model)
    name = getattr(loop.train, "__qualname__", type(loop.train).__name__)
    with _seeded_global_rng(run.seed):
        out = loop.train(model, run)
    if out is not None:
        raise ValueError(f"{name} returned a value: record the states with run.record(model)")
    if run._recorded != loop.T:
        raise ValueError(f"{name} recorded {run._recorded} states, steps = {loop.T} expected "
                         "(call run.record(model) after every step)")
    if loop.sample_rate is not None:
        if run._dataset_calls == 0:
            raise ValueError(f"{name} never called run.dataset(x, y): the canaries never "
                             "reached the sampler")
    else:
        need = set(run._at)
        if not need <= run._seen:
            fn = "canary_gradients" if loop.canary == "dirac" else "canary_batch"
            miss = sorted(need - run._seen)[:5]
            raise ValueError(f"{name} never called run.{fn} at steps {miss}: canaries were not "
                             "inserted (call it at every step)")
    return run


def _theta(loop: OneRunLoop, vec: torch.Tensor) -> torch.Tensor:
    """Float64 parameters rounded to the model's dtype (per-sample gradients run in it)."""
    return vec.to(loop.fm.dtype)


def _step_scores(loop: OneRunLoop, here: np.ndarray, prev: torch.Tensor,
                 cur: torch.Tensor) -> np.ndarray:
    """White-box scores of the canaries ``here`` of one step from the float64 states before
    (``prev``) and after (``cur``) it (module docstring)."""
    C, n, fm = loop.max_grad_norm, loop.batch_size, loop.fm
    k = here.size
    with torch.no_grad():
        ref = clip_rows(fm.per_sample_grads(_theta(loop, prev), loop.ref_x, loop.ref_y),
                        C).to(STATS_DTYPE)
        if loop.canary == "dirac":
            j = torch.as_tensor(loop.coords[here], device=prev.device)
            s = -(n / (loop.lr * C)) * (cur[j] - prev[j])
            a = (n - k) * ref[:, j].mean(0) / C
            var = loop.noise_multiplier ** 2 + (n - k) * ref[:, j].var(0) / C ** 2
            if bool((var <= 0).any()):
                raise ValueError("the Dirac log-LR is infinite: noise_multiplier = 0 and no "
                                 "reference gradient moves a canary coordinate")
            return dirac_log_lr(s.cpu().numpy(), a=a.cpu().numpy(), var=var.cpu().numpy())
        ii = torch.as_tensor(here, device=loop.cx.device)
        tgt = clip_rows(fm.per_sample_grads(_theta(loop, prev), loop.cx[ii], loop.cy[ii]),
                        C).to(STATS_DTYPE)
        return batched_dpsgd_log_lr(
            (cur - prev).expand(k, -1), ref[None], tgt, eta=loop.lr, n=n,
            sigma_dp=loop.noise_multiplier, clip=C, shrinkage=loop.shrinkage,
            ridge=loop.ridge).cpu().numpy()


def _scores(loop: OneRunLoop, run: OneRunRun) -> dict[str, np.ndarray]:
    """Scores of the ``m`` canaries (module docstring), float64."""
    out: dict[str, np.ndarray] = {}
    if run._wb is not None:
        out["dirac" if loop.canary == "dirac" else "step_log_lr"] = run._wb
    if loop.canary == "input":
        with torch.no_grad():
            loss = loop.fm.losses(_theta(loop, run._prev), loop.cx, loop.cy)
        out["loss"] = -loss.to(STATS_DTYPE).cpu().numpy()
    for name, v in out.items():
        if not np.isfinite(v).all():
            raise ValueError(f"the {name} scores hold NaN or infinite values")
    return out


def estimate_bytes(loop: OneRunLoop) -> float:
    r"""Peak bytes of one audit beyond the user's own training: the reference records'
    per-sample gradients (model dtype, clipped copy and float64 promotion), one step's canary
    gradients, three float64 states and the scores.

    .. math::

        B \approx n_{\mathrm{ref}}d\,(2b+8) + k_{\max}d\,(2b+16) + 24d + 8m\cdot 4

    (:math:`b`: bytes per element of the model's dtype; :math:`k_{\max}` the batch size).

    Parameters
    ----------
    loop : OneRunLoop

    Returns
    -------
    float
        Bytes.
    """
    d, b = loop.fm.d, torch.empty((), dtype=loop.fm.dtype).element_size()
    k = loop.batch_size if loop.sample_rate is None else 0
    n_ref = int(loop.ref_x.shape[0])
    return float(n_ref * d * (2 * b + 8) + k * d * (2 * b + 16) + 24 * d + 32 * loop.m)


def audit_one_run(loop: OneRunLoop, seed=0, *, claimed_epsilon: float | None = None,
                  delta: float = 1e-5, failure_prob: float = 0.05,
                  methods=("one-run", "one-run-fdp"),
                  tradeoff: str = "eps-delta") -> OneRunTrainingResult:
    r"""Train the user's loop ONCE with ``m`` canaries and certify :math:`\underline\varepsilon`.

    The bits :math:`S_c` are drawn (Bernoulli(1/2), ``child_seed(seed, 0)``) and checked
    (:func:`~semi_core.sgd.one_run.draw_inclusion`; a draw whose class sizes the one-run bounds
    refuse asks for another seed) before training; the scores of the module docstring are
    certified with :func:`semi_core.audit.epsilon_lower_bound`:

    .. math::

        P[W\ge v]\le\beta+2m\delta\alpha\quad(\texttt{one-run}),\qquad
        \text{the f-DP recursion}\quad(\texttt{one-run-fdp})

    (:mod:`semi_core.audit.one_run`, :mod:`semi_core.audit.one_run_fdp`).

    Parameters
    ----------
    loop : OneRunLoop
    seed : int or SeedSequence
    claimed_epsilon : float, optional
        The :math:`\varepsilon` the user claims for the relation the canaries play; the
        accountant's is used when absent.
    delta, failure_prob : float
        :math:`\delta\in[0,1)`, :math:`\xi\in(0,0.5]` of the bounds.
    methods : sequence of {"one-run", "one-run-fdp"}
    tradeoff : {"eps-delta", "gdp"}
        ``one-run-fdp``'s trade-off curve: ``"eps-delta"`` is distribution-free (default);
        ``"gdp"`` assumes a Gaussian curve and its bounds count only under that assumption.

    Returns
    -------
    OneRunTrainingResult
    """
    if not isinstance(loop, OneRunLoop):
        raise TypeError(f"loop must be a OneRunLoop, got {type(loop).__name__}")
    delta = check_delta(delta)
    failure_prob = check_failure_prob(failure_prob)
    methods = [methods] if isinstance(methods, str) else list(methods)
    bad = [m for m in methods if m not in ("one-run", "one-run-fdp")]
    if bad or not methods:
        raise ValueError(f"methods must be among ('one-run', 'one-run-fdp'), got {methods!r}")
    if tradeoff not in TRADEOFFS:
        raise ValueError(f"tradeoff must be one of {TRADEOFFS}, got {tradeoff!r}")
    if claimed_epsilon is not None:
        claimed_epsilon = check_positive(claimed_epsilon, "claimed_epsilon")
    eps = loop.epsilon(delta)
    member, taus = _check_design(loop.m, None, loop.taus, loop.T, seed, delta=delta,
                                 failure_prob=failure_prob)
    if loop.sample_rate is not None:
        taus = None
    check_memory(estimate_bytes(loop), f"a one-run audit of {loop.m} canaries (d = {loop.fm.d})",
                 hint="use fewer reference records")
    t0 = time.perf_counter()
    run = _train_once(loop, member, taus, seed)
    t1 = time.perf_counter()
    scores = _scores(loop, run)
    t2 = time.perf_counter()
    t1 -= run.score_seconds  # the white-box scores are computed as the run records
    bounds = {name: {m: epsilon_lower_bound(s[member], s[~member], delta=delta,
                                            failure_prob=failure_prob, method=m,
                                            **({"tradeoff": tradeoff} if m == "one-run-fdp"
                                               else {}))
                     for m in methods}
              for name, s in scores.items()}
    # a refutation over every (score, method) pair holds at failure_prob (Bonferroni)
    refuting = refutation_bounds(
        {name: (s[member], s[~member]) for name, s in scores.items()},
        {m: ({"tradeoff": tradeoff} if m == "one-run-fdp" else {}) for m in methods},
        delta=delta, failure_prob=failure_prob)
    t3 = time.perf_counter()
    return OneRunTrainingResult(
        bounds=bounds, refuting=refuting,
        against=claimed_epsilon if claimed_epsilon is not None else float(eps),
        epsilon=float(eps), claimed_epsilon=claimed_epsilon, relation=loop.relation, m=loop.m,
        members=int(member.sum()), member=member, taus=taus, scores=scores, delta=delta,
        failure_prob=failure_prob,
        seconds={"train": t1 - t0, "score": t2 - t1, "certify": t3 - t2},
        config=loop.params())
