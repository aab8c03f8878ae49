r"""Audit a user's Opacus DP-SGD training: :func:`audit_opacus`.

Every run of the audit calls the user's ``model_fn()``, loads the common :math:`\theta_0`, wraps
model, ``torch.optim.SGD`` and a data loader with Opacus' ``PrivacyEngine.make_private`` (its
``GradSampleModule`` per-sample gradients, ``DPOptimizer`` clipping, noise and scaling, and --
with ``sampler="poisson"`` -- its ``DPDataLoader`` Poisson sampler), trains ``steps`` steps and
records :math:`\theta_0..\theta_T`. The game is played by the one runner
(:func:`semi_core.game.play.play`, through :func:`semi_core.sgd.dirac.play_white_box`):
:class:`OpacusMechanism` is the white-box mechanism of :mod:`semi_core.sgd.dirac` whose
``release`` trains the chunk's runs through Opacus (the Crafter of
:func:`~semi_core.sgd.dirac.draw_runs` decides batches and canary slots, the runner the bits);
scores come from :class:`~semi_core.sgd.dirac.WhiteBoxScorer` (Dirac log-LR and contrast,
SeMI-SGD, SeMI-max, the loss baselines) or :class:`PoissonDiracScorer`; bounds from
:func:`semi_core.audit.games.audit_game_result`. ``executor=`` runs the chunks on threads or a
Dask cluster with an identical result (Opacus runs of one process take turns: the warnings
they raise are collected with process-global state). The configuration is one validated
record, :class:`OpacusAuditConfig`; :func:`audit_opacus` also takes its fields as keywords.

Neighbouring relations and ground truth
---------------------------------------
``sampler="fixed"`` (default; the SeMI game). The Crafter fixes ``T`` disjoint batches of ``n``
records, each record used once; the canary replaces one slot of batch :math:`\tau`
(**replace-one**). Opacus runs with ``poisson_sampling=False`` on those batches. A correct run is
exactly :math:`\mu`-GDP with :math:`\mu = 2/\sigma_{DP}` (:mod:`semi_core.sgd.accounting`):
``epsilon_true`` and the claim under test. With a Dirac canary the auditor also controls the
:math:`H_0` record (the antipodal gradient), so the observed pair is the worst case.

``sampler="poisson"``. Opacus' own ``DPDataLoader`` samples each record of the dataset with
probability :math:`q` at every step; :math:`H_1` adds the canary record to the dataset,
:math:`H_0` does not (**add/remove**), so ``tau`` is not used. ``epsilon_true`` is the
``dp_accounting`` PLD of ``T`` Poisson-subsampled Gaussian steps (add/remove); the claim under
test is Opacus' accountant (PRV, Opacus' default). A Dirac canary is scored by its exact
mixture log-LR :math:`\sum_t\log(1-q+q\,e^{(2s_t-1)/(2\sigma_{DP}^2)})`.

``epsilon_accountant`` is always what Opacus' accountants (RDP and PRV; add/remove, Poisson
rate :math:`q = n/N` for the user's dataset of ``N`` records, ``T`` steps) report for the
configuration: the number a user would quote.

Refutation. ``claim_refuted`` is true when a nonparametric bound (``band``, ``dkw`` or ``cp``, each
(test, method) pair at ``failure_prob / K``, Bonferroni over the ``K`` pairs) exceeds the
claimed :math:`\varepsilon`: the claim is then false with confidence ``1 - failure_prob``.
``claim_refuted_gdp`` uses the Gaussian-score GDP route (``gdp_gaussian``) on the Dirac
statistics only (``dirac``, ``dirac_contrast``; Bonferroni over the two), and only where their
scores are exactly equal-variance Gaussian in both worlds: an isolated Dirac coordinate on
fixed batches (the correct run and every mechanism bug of the zoo shift or rescale Gaussian
noise; ``batch_clip`` is exact while the batch mean is not clipped). Then the scores are a
post-processing whose trade-off curve is exactly :math:`\mu_{obs}`-GDP, so a claimed
:math:`(\varepsilon, \delta)` with :math:`\varepsilon < \varepsilon_{\mu_{LB}}(\delta)` is
false -- no assumption on the mechanism's whole privacy profile is needed. Elsewhere it is
``None`` (not applicable); the ``gdp`` columns of ``epsilon_lower_bound`` (trade-off route)
assume the mechanism is GDP and are reported, not used to refute.

Randomness: noise comes from a ``torch.Generator`` passed as ``noise_generator`` (and, for
Poisson sampling, to the sampler), seeded per run from the runner's stream of the run's chunk;
the data loader gets a generator of its own and the model factory runs under
``torch.random.fork_rng``, so torch's global generator is never moved. This needs
``secure_mode=False``; Opacus warns about it and the warning is reported in
``report.warnings``, never silenced. A model factory is *called* (never unpickled); nothing is
loaded from files.
"""

from __future__ import annotations

import math
import threading
import time
import warnings
from contextlib import contextmanager
from dataclasses import dataclass, field, fields, replace
from typing import Any

import numpy as np
import torch
from torch import nn

from semi_core._rng import as_seed_sequence
from semi_core._table import ResultDisplay, Table
from semi_core._validation import (
    ResourceLimitError,
    check_delta,
    check_failure_prob,
    check_int,
    check_positive,
    check_work,
)
from semi_core.audit.games import audit_game_result
from semi_core.game.backends import Executor
from semi_core.game.result import GameResult
from semi_core.mechanisms.base import GroundTruthUnknown
from semi_core.sgd.accounting import poisson_pld_epsilon  # re-exported: its home
from semi_core.sgd.bugs import Bug, get_bug
from semi_core.sgd.dirac import (
    Runs,
    WhiteBoxMechanism,
    WhiteBoxScorer,
    WhiteBoxSetup,
    dirac_coordinates,
    dirac_rows,
    draw_runs,
    play_white_box,
)
from semi_core.sgd.dpsgd import DPSGDConfig
from semi_core.sgd.grads import FunctionalModel, clip_rows
from semi_core.sgd.gradstats import woodbury_factors
from semi_core.sgd.lr import poisson_dirac_log_lr
from semi_core.stats.gdp import gdp_epsilon
from semi_core.stats.update_combination import BASELINES

__all__ = ["audit_opacus", "OpacusAuditConfig", "OpacusAuditReport", "OpacusMechanism",
           "PoissonDiracScorer", "prepare_opacus_setup", "install_bug",
           "opacus_accountant_epsilon", "poisson_pld_epsilon", "CANARIES", "BOUND_METHODS",
           "digits_example", "DIGITS_TRAIN_RECORDS", "time_engines"]

CANARIES = ("dirac", "gradient-mahalanobis", "input")
SAMPLERS = ("fixed", "poisson")
ENGINES = ("opacus", "batched")
#: (name, epsilon_lower_bound kwargs) of the bounds computed for every test.
BOUND_METHODS = {"band": {"method": "band"}, "dkw": {"method": "dkw"}, "cp": {"method": "cp"},
                 "gdp": {"method": "gdp"}, "gdp_gaussian": {"method": "gdp", "gdp_fit": "gaussian"}}
NONPARAMETRIC = ("band", "dkw", "cp")
#: Records of :func:`digits_example`'s training set (1797 digits minus the 600 public ones).
DIGITS_TRAIN_RECORDS = 1197


def _opacus():
    try:
        import opacus
    except ImportError as exc:  # optional extra
        raise ImportError("audit_opacus needs Opacus: pip install 'semi_core[opacus]' "
                          f"({exc})") from None
    return opacus


# ----------------------------------------------------------------------------- accountants
def opacus_accountant_epsilon(noise_multiplier: float, sample_rate: float, steps: int,
                              delta: float, *, warnings_out: list | None = None) -> dict[str, float]:
    """Opacus' RDP and PRV accountants (add/remove, Poisson rate ``sample_rate``, ``steps``);
    their warnings are appended to ``warnings_out``."""
    _opacus()
    from opacus.accountants import PRVAccountant, RDPAccountant

    out = {}
    caught = [] if warnings_out is None else warnings_out
    for name, cls in (("rdp", RDPAccountant), ("prv", PRVAccountant)):
        acc = cls()
        acc.history = [(float(noise_multiplier), float(sample_rate), int(steps))]
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            out[name] = float(acc.get_epsilon(delta=float(delta)))
        caught.extend(f"Opacus {name} accountant: {x.message}" for x in w)
    return out


# ----------------------------------------------------------------------------- bug drop-ins
def install_bug(optimizer, bug: Bug | None):
    """Turn an Opacus ``DPOptimizer`` into its buggy twin (a subclass of its own class whose
    ``clip_and_accumulate`` / ``add_noise`` implement ``bug``, :mod:`semi_core.sgd.bugs`).
    ``None`` and ``sampling_rate_misreport`` (an accounting bug) leave it unchanged."""
    if bug is None or bug.misreports_accounting:
        return optimizer
    from opacus.optimizers.optimizer import (
        _check_processed_flag,
        _generate_noise,
        _mark_as_processed,
    )

    base = type(optimizer)

    def add_noise(self):
        for p in self.params:
            _check_processed_flag(p.summed_grad)
            std = self.noise_multiplier * self.max_grad_norm
            if bug.name == "noise_unscaled":
                std = self.noise_multiplier
            elif bug.name == "wrong_batch_size":
                std = std / bug.factor
            if bug.name == "noise_reused":
                cache = self.__dict__.setdefault("_semi_reused_noise", {})
                if id(p) not in cache:
                    cache[id(p)] = _generate_noise(std=std, reference=p.summed_grad,
                                                   generator=self.generator,
                                                   secure_mode=self.secure_mode)
                noise = cache[id(p)]
            else:
                noise = _generate_noise(std=std, reference=p.summed_grad,
                                        generator=self.generator, secure_mode=self.secure_mode)
            p.grad = (p.summed_grad + noise).view_as(p)
            _mark_as_processed(p.summed_grad)

    def clip_and_accumulate(self):
        if bug.name == "clip_mismatch":
            c0 = self.max_grad_norm
            self.max_grad_norm = c0 * bug.factor
            try:
                base.clip_and_accumulate(self)
            finally:
                self.max_grad_norm = c0
            return
        if bug.name != "batch_clip":
            base.clip_and_accumulate(self)
            return
        sums = []
        for p in self.params:
            _check_processed_flag(p.grad_sample)
            g = self._get_flat_grad_sample(p).to(p.dtype)
            sums.append(g.sum(0))
            _mark_as_processed(p.grad_sample)
        n = len(self.grad_samples[0])
        norm = torch.sqrt(sum((s * s).sum() for s in sums))
        factor = torch.clamp(n * self.max_grad_norm / (norm + 1e-12), max=1.0)
        for p, s in zip(self.params, sums, strict=True):
            p.summed_grad = s * factor if p.summed_grad is None else p.summed_grad + s * factor

    buggy = type(f"Buggy{base.__name__}_{bug.name}", (base,),
                 {"add_noise": add_noise, "clip_and_accumulate": clip_and_accumulate,
                  "semi_core_bug": bug})
    optimizer.__class__ = buggy
    return optimizer


# ----------------------------------------------------------------------------- data & setup
def _as_tensors(train_dataset):
    if isinstance(train_dataset, tuple | list) and len(train_dataset) == 2 and all(
            hasattr(a, "shape") for a in train_dataset):
        x, y = (torch.as_tensor(np.asarray(a)) if not isinstance(a, torch.Tensor) else a
                for a in train_dataset)
    else:
        try:
            n = len(train_dataset)
            items = [train_dataset[i] for i in range(n)]
            x = torch.stack([torch.as_tensor(it[0]) for it in items])
            y = torch.stack([torch.as_tensor(it[1]) for it in items])
        except (TypeError, IndexError, RuntimeError) as exc:
            raise TypeError("train_dataset must be a (X, y) pair of arrays or a map-style "
                            f"dataset of (x, y) pairs: {exc}") from None
    if x.shape[0] != y.shape[0]:
        raise ValueError(f"train_dataset: X has {x.shape[0]} rows, y has {y.shape[0]}")
    if x.shape[0] < 4:
        raise ValueError(f"train_dataset needs at least 4 records, got {x.shape[0]}")
    if not torch.isfinite(x.double()).all():
        raise ValueError("train_dataset contains NaN or infinite inputs")
    return x, y.long().reshape(-1)


def _call_model_fn(model_fn):
    if not callable(model_fn):
        raise TypeError(f"model_fn must be a callable returning a torch.nn.Module, got "
                        f"{type(model_fn).__name__}")
    model = model_fn()
    if not isinstance(model, nn.Module):
        raise TypeError(f"model_fn must return a torch.nn.Module, got {type(model).__name__}")
    return model


def _check_opacus_model(model: nn.Module) -> None:
    """Opacus' validator and grad-sampler coverage; errors name ``model_fn``."""
    _opacus()
    from opacus.grad_sample import GradSampleModule
    from opacus.validators import ModuleValidator

    errors = ModuleValidator.validate(model, strict=False)
    if errors:
        raise ValueError(f"model_fn: Opacus cannot handle this model: "
                         f"{'; '.join(str(e) for e in errors)} (ModuleValidator.fix replaces "
                         "e.g. BatchNorm by GroupNorm)")
    if not any(p.requires_grad for p in model.parameters()):
        raise ValueError("model_fn: the model has no trainable parameter")
    try:
        GradSampleModule.validate(model, strict=True)
    except Exception as exc:  # noqa: BLE001 - Opacus raises several types here
        raise ValueError(f"model_fn: Opacus cannot compute per-sample gradients for this "
                         f"model: {exc}") from None


@dataclass
class _OpacusContext:
    model_fn: Any
    state0: dict
    setup: WhiteBoxSetup
    sampler: str
    n_dataset: int
    canary_input: torch.Tensor | None = None


def _craft_input_canary(fm: FunctionalModel, theta0, x_all: torch.Tensor):
    """Input-space canary: all its mass on the feature with the smallest variance in the data
    (an always-zero pixel for digits), amplitude 4x the largest input norm, labelled with the
    class the model finds least likely there."""
    flat = x_all.reshape(x_all.shape[0], -1).double()
    p = int(torch.argmin(flat.var(0)))
    amp = 4.0 * float(flat.norm(dim=1).max().clamp(min=1.0))
    x = torch.zeros(flat.shape[1], dtype=x_all.dtype)
    x[p] = amp
    x = x.reshape(x_all.shape[1:])
    with torch.no_grad():
        fm.load(theta0)
        logits = fm.module(x.unsqueeze(0))
    return x, logits.argmin(-1).reshape(()).long(), p


def prepare_opacus_setup(model_fn, train_dataset, *, cfg: DPSGDConfig, canary: str,
                         sampler: str = "fixed", canaries_per_run: int = 1,
                         dirac_scale: float = 4.0, n_reference: int = 128,
                         seed=0) -> _OpacusContext:
    """Split the dataset (private pool / reference / candidates), build :math:`\\theta_0` and the
    canary, and check that Opacus can train the model."""
    if canary not in CANARIES:
        raise ValueError(f"canary must be one of {CANARIES}, got {canary!r}")
    if sampler not in SAMPLERS:
        raise ValueError(f"sampler must be one of {SAMPLERS}, got {sampler!r}")
    x_all, y_all = _as_tensors(train_dataset)
    N = int(x_all.shape[0])
    if cfg.batch_size > N:
        raise ValueError(f"batch_size = {cfg.batch_size} is larger than the dataset "
                         f"({N} records)")
    model = _call_model_fn(model_fn)
    _check_opacus_model(model)
    dtype = next(p for p in model.parameters()).dtype
    x_all = x_all.to(dtype)
    rng = np.random.Generator(np.random.PCG64(as_seed_sequence(seed)))
    perm = torch.as_tensor(rng.permutation(N))
    m = min(check_int(n_reference, "n_reference", minimum=2), max(2, N // 5))
    n_cand = min(200, max(1, N // 10)) if canary == "gradient-mahalanobis" else 0
    ref_idx, cand_idx, pool_idx = perm[:m], perm[m:m + n_cand], perm[m + n_cand:]
    pool_x, pool_y = x_all[pool_idx], y_all[pool_idx]
    if sampler == "fixed" and cfg.steps * cfg.batch_size > len(pool_idx):
        raise ValueError(f"batch_size * steps = {cfg.batch_size * cfg.steps} records are needed "
                         f"(each used once) but only {len(pool_idx)} of the {N} records are left "
                         f"after the {m} reference records: lower batch_size or steps")
    if sampler == "poisson":  # both worlds (N and N + 1 records) get the same sample rate
        n_keep, q, eb = _poisson_rate(cfg.batch_size, len(pool_idx))
        pool_x, pool_y = pool_x[:n_keep], pool_y[:n_keep]
    fm = FunctionalModel(model)
    theta0 = fm.theta()
    state0 = {k: v.detach().clone() for k, v in model.state_dict().items()}
    common = dict(fm=fm, theta0=theta0, pool_x=pool_x, pool_y=pool_y, ref_x=x_all[ref_idx],
                  ref_y=y_all[ref_idx], cfg=cfg)
    info: dict = {"n_dataset": N, "n_pool": int(len(pool_idx)), "n_reference": int(m),
                  "d": fm.d, "canary": canary}
    if sampler == "poisson":
        info.update(sample_rate=q, expected_batch_size=eb, n_pool_poisson=n_keep)
    canary_input = None
    if canary == "dirac":
        ref = clip_rows(fm.per_sample_grads(theta0, pool_x, pool_y), cfg.clip)
        coords, mom = dirac_coordinates(ref, canaries_per_run)
        info.update(dirac_coords=coords.tolist(), dirac_second_moment=mom.tolist(),
                    dirac_isolated=bool(np.all(mom == 0)), dirac_scale=float(dirac_scale))
        setup = WhiteBoxSetup(**common, kind="dirac", coords=coords, scale=dirac_scale, info=info)
        if sampler == "poisson":
            canary_input, _, _ = _craft_input_canary(fm, theta0, x_all)
    else:
        if canaries_per_run != 1:
            raise ValueError("canaries_per_run > 1 needs canary='dirac'")
        if canary == "input":
            cx, cy, feat = _craft_input_canary(fm, theta0, x_all)
            info.update(input_feature=feat)
        else:
            from semi_core.sgd.audit import select_canary

            k, dist = select_canary(fm, theta0, x_all[cand_idx], y_all[cand_idx],
                                    x_all[ref_idx], y_all[ref_idx], clip=cfg.clip)
            cx, cy = x_all[cand_idx][k], y_all[cand_idx][k]
            info.update(canary_mahalanobis=float(dist[k]))
        setup = WhiteBoxSetup(**common, kind="input", canary_x=cx, canary_y=cy, info=info)
        canary_input = cx
    return _OpacusContext(model_fn=model_fn, state0=state0, setup=setup, sampler=sampler,
                          n_dataset=N, canary_input=canary_input)


# ----------------------------------------------------------------------------- training
#: ``warnings.catch_warnings`` changes process-global state: Opacus runs of one process (the
#: runner's threads) take turns; Dask worker processes run in parallel.
_TRAIN_LOCK = threading.Lock()


def _flat(params) -> torch.Tensor:
    return torch.cat([p.detach().reshape(-1) for p in params])


def _inject(params, rows: torch.Tensor, slots) -> None:
    """Overwrite the per-sample gradients of the canary slots with ``rows`` (k, d)."""
    start = 0
    for p in params:
        size = p.numel()
        p.grad_sample[slots] = rows[:, start:start + size].reshape(len(slots), *p.shape).to(
            p.grad_sample.dtype)
        start += size


def _make_private(ctx: _OpacusContext, loader, seed: int, bug: Bug | None, caught: list):
    from opacus import PrivacyEngine  # lazy: heavy optional dependency

    cfg = ctx.setup.cfg
    with torch.random.fork_rng(devices=[]):  # the factory's initialisation (overwritten by
        model = ctx.model_fn()               # state0) must not move torch's global generator
    model.load_state_dict(ctx.state0)
    opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=cfg.lr)
    gen = torch.Generator().manual_seed(int(seed))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        engine = PrivacyEngine(accountant="prv", secure_mode=False)
        model, opt, loader = engine.make_private(
            module=model, optimizer=opt, data_loader=loader, noise_multiplier=cfg.sigma_dp,
            max_grad_norm=cfg.clip, poisson_sampling=(ctx.sampler == "poisson"),
            noise_generator=gen)
    caught.extend(f"{x.category.__name__}: {x.message}" for x in w)
    if ctx.sampler == "poisson":
        from opacus.data_loader import switch_generator  # lazy: heavy optional dependency

        sgen = torch.Generator().manual_seed(int(seed) ^ 0x5DEECE66D)
        loader = switch_generator(data_loader=loader, generator=sgen)
    return model, install_bug(opt, bug), loader


def _loader(xb, yb, n: int, seed: int):
    from torch.utils.data import DataLoader, TensorDataset  # lazy: with the Opacus path

    # a generator of its own: iterating a DataLoader otherwise draws from torch's global RNG
    return DataLoader(TensorDataset(xb, yb), batch_size=n, shuffle=False,
                      generator=torch.Generator().manual_seed(int(seed) ^ 0x2545F491))


def _opacus_train(ctx: _OpacusContext, runs: Runs, bug: Bug | None, caught: list,
                  tm: dict) -> torch.Tensor:
    """Train every run of ``runs`` through Opacus (one ``make_private`` per run); returns
    :math:`(\\theta_0..\\theta_T)` per run, ``(m, T+1, d)``."""
    setup, cfg = ctx.setup, ctx.setup.cfg
    T, n = cfg.steps, cfg.batch_size
    for key in ("make_private", "steps"):
        tm.setdefault(key, 0.0)
    out = torch.empty(len(runs), T + 1, setup.fm.d, dtype=setup.theta0.dtype)
    loss_fn = nn.CrossEntropyLoss()
    for r in range(len(runs)):
        t_a = time.process_time()
        member, seed = runs.member[r], int(runs.seeds[r])
        if ctx.sampler == "fixed":
            idx = torch.as_tensor(runs.batches[r].reshape(-1))
            xb, yb = setup.pool_x[idx].clone(), setup.pool_y[idx].clone()
            if setup.kind == "input" and member[0] and runs.present[r, 0]:
                pos = (int(runs.tau[r, 0]) - 1) * n + int(runs.slots[r, 0])
                xb[pos], yb[pos] = setup.canary_x, setup.canary_y
        else:
            xb, yb = setup.pool_x, setup.pool_y
            if member[0]:
                cy = setup.canary_y if setup.kind == "input" else setup.pool_y[0]
                xb = torch.cat([xb, ctx.canary_input.unsqueeze(0)])
                yb = torch.cat([yb, cy.reshape(1)])
        model, opt, loader = _make_private(ctx, _loader(xb, yb, n, seed), seed, bug, caught)
        if ctx.sampler == "fixed":  # Opacus leaves fixed batches alone (poisson_sampling=False):
            # slice them directly -- the same tensors the loader would collate row by row
            loader = zip(xb.split(n), yb.split(n), strict=True)
        t_b = time.process_time()
        tm["make_private"] += t_b - t_a
        params = [p for p in model.parameters() if p.requires_grad]
        out[r, 0] = _flat(params)
        rows = (dirac_rows(setup, member[None, :], setup.theta0.dtype)[0]
                if setup.kind == "dirac" else None)
        t = 0
        for x, y in loader:
            if t == T:
                break
            opt.zero_grad()
            if x.shape[0] > 0:
                loss_fn(model(x), y).backward()
            else:  # empty Poisson batch: Opacus still adds noise
                for p in params:
                    p.grad_sample = torch.zeros(0, *p.shape, dtype=p.dtype)
            if rows is not None and ctx.sampler == "fixed":
                on = np.flatnonzero(runs.present[r] & (runs.tau[r] == t + 1))
                if on.size:
                    _inject(params, rows[torch.as_tensor(on)],
                            torch.as_tensor(runs.slots[r, on]))
            elif rows is not None and member[0] and x.shape[0]:
                hit = torch.nonzero((x.reshape(x.shape[0], -1)
                                     == ctx.canary_input.reshape(1, -1)).all(1)).reshape(-1)
                if hit.numel():
                    _inject(params, rows[:1].expand(hit.numel(), -1), hit)
            opt.step()
            t += 1
            out[r, t] = _flat(params)
        if t < T:
            raise RuntimeError(f"the data loader gave {t} batches, {T} are needed")
        tm["steps"] += time.process_time() - t_b
    return out


def _draw_poisson(member, rng: np.random.Generator) -> Runs:
    """Poisson sampling: one bit and one seed per run (Opacus' sampler draws the batches)."""
    member = np.asarray(member, dtype=bool).reshape(-1, 1)
    m = member.shape[0]
    keys = rng.integers(0, 2**63 - 1, size=m)
    seeds = np.array([np.random.Generator(np.random.PCG64(np.random.SeedSequence(k))).integers(
        0, 2**63 - 1) for k in keys.tolist()], dtype=np.int64)
    return Runs(batches=np.zeros((m, 0, 0), np.int64), slots=np.zeros((m, 1), np.int64),
                noise=np.zeros((m, 0, 0)), member=member, tau=np.ones((m, 1), np.int64),
                present=np.ones((m, 1), bool), seeds=seeds)


def _poisson_rate(n: int, N: int) -> tuple[int, float, int]:
    """Pool size ``N' <= N`` for which ``N'`` and ``N' + 1`` records get the same Opacus sample
    rate and expected batch size; returns ``(N', q, expected batch)``."""
    while math.ceil(N / n) != math.ceil((N + 1) / n) or int(N / math.ceil(N / n)) != int(
            (N + 1) / math.ceil((N + 1) / n)):
        N -= 1
    q = 1.0 / math.ceil(N / n)
    return N, q, int(N * q)


class OpacusMechanism(WhiteBoxMechanism):
    r"""The white-box game of :mod:`semi_core.sgd.dirac` trained by Opacus' real optimizer.

    ``release`` trains the chunk's runs one after another through ``PrivacyEngine.make_private``
    (``GradSampleModule`` per-sample gradients, ``DPOptimizer`` clipping, noise and scaling; with
    ``sampler="poisson"`` its ``DPDataLoader``), on the Crafter's draws (:func:`~semi_core.sgd.
    dirac.draw_runs`: the same batches and slots as the batched trainer given the same ``rng``;
    Opacus' noise from a ``torch.Generator`` seeded per run). Releases, log-LRs and scorers are
    those of :class:`~semi_core.sgd.dirac.WhiteBoxMechanism`.

    ``sampler="poisson"`` (add/remove): one canary per run, present in the dataset under
    :math:`H_1`; ``tau`` is not used; the Dirac per-step log-LR is the exact mixture term
    :math:`\log(1-q+q\,e^{(2s_t-1)/(2\sigma_{DP}^2)})` with :math:`s_t` standardised by the
    expected batch size, and the ground truth is the ``dp_accounting`` PLD
    (:func:`poisson_pld_epsilon`).

    Opacus' warnings of the runs trained in this process are collected in ``warnings_seen``
    (runs on Dask workers report none; the runner's pilot run is always local).
    """

    def __init__(self, ctx: _OpacusContext, *, bug: Bug | None = None,
                 timings: dict | None = None):
        if not isinstance(ctx, _OpacusContext):
            raise TypeError(f"ctx must come from prepare_opacus_setup, got {type(ctx).__name__}")
        super().__init__(ctx.setup, bug=bug, timings=timings)
        self.ctx = ctx
        self.sampler = ctx.sampler
        self.warnings_seen: set[str] = set()
        if self.sampler == "poisson":
            self.k = 1
            self.sample_rate = float(ctx.setup.info["sample_rate"])
            self.expected_batch_size = int(ctx.setup.info["expected_batch_size"])

    def release(self, member, tau, rng: np.random.Generator) -> np.ndarray:
        """Releases ``(R, T, d + 1)`` (:class:`~semi_core.sgd.dirac.WhiteBoxMechanism`)."""
        if self.sampler == "fixed":
            return super().release(member, tau, rng)
        member = np.asarray(member, dtype=bool).reshape(-1)
        return self.pack_releases(self.train_runs(_draw_poisson(member, rng)), member.size)

    def train_runs(self, runs: Runs) -> torch.Tensor:
        """Train ``runs`` through Opacus: :math:`(\\theta_0..\\theta_T)` ``(m, T+1, d)``."""
        caught: list[str] = []
        with _TRAIN_LOCK, warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            traj = _opacus_train(self.ctx, runs, self.bug, caught,
                                 {} if self.timings is None else self.timings)
        caught.extend(f"{x.category.__name__}: {x.message}" for x in w)
        self.warnings_seen.update(caught)
        return traj

    def standardised(self, traj: torch.Tensor, idx: np.ndarray) -> np.ndarray:
        """:math:`s_t`; under Poisson sampling standardised by the expected batch size."""
        s = super().standardised(traj, idx)
        if self.sampler == "poisson":
            s = s * (self.expected_batch_size / self.setup.cfg.batch_size)
        return s

    def log_lr_steps(self, releases) -> np.ndarray:
        """Per-step log-LRs ``(R, T)``; Poisson Dirac: the mixture terms (class docstring)."""
        if self.sampler == "fixed" or self.setup.kind != "dirac":
            return super().log_lr_steps(releases)
        traj, idx = self.trajectories(releases)
        s = self.standardised(traj, idx)
        return poisson_dirac_log_lr(s, q=self.sample_rate, a=0.0,
                                    var=self.setup.cfg.sigma_dp ** 2)

    def epsilon(self, delta: float, tau: int = 1) -> float:
        """Exact :math:`\\varepsilon(\\delta)`: :math:`\\mu`-GDP (fixed batches, replace-one) or
        the PLD of ``T`` Poisson-subsampled Gaussian steps (add/remove, correct runs only)."""
        if self.sampler == "fixed":
            return super().epsilon(delta, tau)
        if self.bug is not None:
            raise GroundTruthUnknown("no closed form for a buggy Poisson-subsampled run")
        cfg = self.setup.cfg
        return poisson_pld_epsilon(cfg.sigma_dp, self.sample_rate, cfg.steps, delta)

    def params(self) -> dict:
        """Configuration (JSON metadata)."""
        out = {**super().params(), "mechanism": "opacus-dp-sgd", "engine": "opacus",
               "sampler": self.sampler, "canaries_per_run": self.k}
        if self.sampler == "poisson":
            out.update(sample_rate=self.sample_rate,
                       expected_batch_size=self.expected_batch_size)
        return out


@dataclass(frozen=True)
class PoissonDiracScorer:
    """Dirac canary under Poisson sampling: the exact mixture log-LR over all steps
    (``dirac_mixture``) and the sum of standardised updates (``dirac_sum``)."""

    mech: OpacusMechanism
    names = ("dirac_mixture", "dirac_sum")
    tau_free = True

    def __call__(self, releases, tau, rng=None) -> dict[str, np.ndarray]:
        traj, idx = self.mech.trajectories(releases)
        return {"dirac_mixture": self.mech.log_lr_steps(releases).sum(1),
                "dirac_sum": self.mech.standardised(traj, idx).sum(1)}


# ----------------------------------------------------------------------------- report
@dataclass(repr=False)
class OpacusAuditReport(ResultDisplay):
    """Outcome of :func:`audit_opacus`.

    Prints as one line (the claim, the truth where known, the verdicts); ``summary()`` is a
    table of every certified bound (one row per test and method) beside the claim and the
    accountants, ``to_frame()`` the same as a ``DataFrame``, ``to_dict()`` everything (JSON).

    Attributes
    ----------
    epsilon_lower_bound : dict
        ``{test: {method: eps_LB}}`` for methods ``band``, ``dkw``, ``cp`` (nonparametric),
        ``gdp`` and ``gdp_gaussian`` (GDP route), each at ``failure_prob``.
    epsilon_accountant : dict
        Opacus' ``{"rdp": eps, "prv": eps}`` for the user's configuration (add/remove,
        Poisson rate ``q = batch_size / N``, ``steps``).
    epsilon_true : float or None
        Exact :math:`\\varepsilon(\\delta)` of the audited run where known (see module
        docstring; for a bug with known effect, of the buggy run; ``inf`` when it has none).
    epsilon_claimed : float
        The claim under test.
    claim_refuted : bool
        Nonparametric refutation at confidence ``1 - failure_prob``.
    claim_refuted_gdp : bool or None
        Gaussian-score GDP-route refutation (module docstring); ``None`` where not valid.
    """

    epsilon_lower_bound: dict
    epsilon_accountant: dict
    epsilon_true: float | None
    epsilon_claimed: float
    claim_refuted: bool
    claim_refuted_gdp: bool | None
    refutation: dict
    neighbouring_relation: str
    accountant_relation: str
    warnings: list
    config: dict
    setup: dict
    timing: dict
    bounds: dict = field(repr=False, default_factory=dict)
    game: GameResult | None = field(repr=False, default=None)

    _repr_fields = ("epsilon_claimed", "epsilon_true", "claim_refuted", "claim_refuted_gdp")

    def summary(self) -> Table:
        """One row per test and method: ``test, method, epsilon_lower_bound,
        largest_certifiable`` (the largest bound these games could give: a 0 beside a small
        ceiling means "too few runs", not "private"), ``refutes`` (the bound exceeds the
        claim), under a title with the claim, the true epsilon where known, the accountants
        and the two verdicts."""
        def ceiling(t, m):
            v = (self.bounds.get(t) or {}).get(m) or {}
            v = v.get("epsilon_max_certifiable") if isinstance(v, dict) else None
            return None if v is None else float(v)

        rows = [{"test": t, "method": m, "epsilon_lower_bound": float(e),
                 "largest_certifiable": ceiling(t, m),
                 "refutes": bool(e > self.epsilon_claimed)}
                for t, per in self.epsilon_lower_bound.items() for m, e in per.items()]
        acc = ", ".join(f"{k} {v:.4g}" for k, v in self.epsilon_accountant.items()
                        if isinstance(v, int | float))
        title = (f"{self!r}\n{self.accountant_relation}: {acc or 'none'}\n"
                 f"audited: {self.neighbouring_relation}; delta {self.config.get('delta')}, "
                 f"failure probability {self.config.get('failure_prob')}")
        return Table(rows, title=title)

    def to_dict(self) -> dict:
        """JSON-ready dict (the per-test :class:`~semi_core.audit.bounds.AuditResult` dicts
        under ``bounds``; the game as counts)."""
        out = {k: getattr(self, k) for k in (
            "epsilon_lower_bound", "epsilon_accountant", "epsilon_true", "epsilon_claimed",
            "claim_refuted", "claim_refuted_gdp", "refutation", "neighbouring_relation",
            "accountant_relation", "warnings", "config", "setup", "timing", "bounds")}
        out["game"] = None if self.game is None else self.game.to_dict()
        return out


def _certify(game: GameResult, *, delta, failure_prob, seed) -> tuple[dict, dict]:
    bounds: dict = {t: {} for t in game.stats}
    for name, kw in BOUND_METHODS.items():
        res = audit_game_result(game, delta=delta, failure_prob=failure_prob, seed=seed, **kw)
        for t, r in res.items():
            bounds[t][name] = r
    eps = {t: {m: float(r["epsilon_lower_bound"]) for m, r in v.items()}
           for t, v in bounds.items()}
    return bounds, eps


#: Statistics that are exactly equal-variance Gaussian in both worlds for an isolated Dirac
#: canary on fixed batches (correct run and every mechanism bug of the zoo).
GAUSSIAN_TESTS = ("dirac", "dirac_contrast")


def _refute(game: GameResult, claimed: float, *, delta, failure_prob, seed,
            gaussian_valid: bool, reason: str = "") -> dict:
    """Best Bonferroni-corrected bounds against the claim: nonparametric over every test, and
    the Gaussian-score GDP route over :data:`GAUSSIAN_TESTS` where ``gaussian_valid``."""
    out = {}
    groups = [("nonparametric", NONPARAMETRIC, list(game.stats))]
    if gaussian_valid:
        groups.append(("gdp", ("gdp_gaussian",), [t for t in GAUSSIAN_TESTS if t in game.stats]))
    for group, methods, tests in groups:
        K = len(tests) * len(methods)
        best, arg = 0.0, None
        for name in methods:
            res = audit_game_result(game, delta=delta, failure_prob=failure_prob / K, seed=seed,
                                    tests=tests, **BOUND_METHODS[name])
            for t, r in res.items():
                if r["epsilon_lower_bound"] > best:
                    best, arg = float(r["epsilon_lower_bound"]), f"{t}/{name}"
        out[group] = {"epsilon_lower_bound": best, "test": arg, "bonferroni_k": K,
                      "refuted": bool(best > claimed)}
    if not gaussian_valid:
        out["gdp"] = {"epsilon_lower_bound": None, "test": None, "bonferroni_k": 0,
                      "refuted": None, "not_applicable": reason}
    return out


@dataclass(frozen=True)
class OpacusAuditConfig:
    """What :func:`audit_opacus` audits and how: validated as a whole on construction, before
    any model is built or trained (every field is a keyword of :func:`audit_opacus`).

    Attributes
    ----------
    noise_multiplier, max_grad_norm : float > 0
        :math:`\\sigma_{DP}` and :math:`C` (finite).
    batch_size, steps : int
        ``n >= 2`` and ``T >= 1``.
    canary : {"dirac", "gradient-mahalanobis", "input"}
    tau : int in 1..T or None
        Insertion step (``sampler="fixed"``; ignored for ``"poisson"``).
    rounds : int >= 2
        Runs; each carries ``canaries_per_run`` games.
    delta : float in (0, 1)
        Where Opacus' accountants and the exact :math:`\\varepsilon` can be computed (checked
        by :func:`audit_opacus` before training).
    lr : float > 0
        SGD learning rate (finite).
    sampler : {"fixed", "poisson"}
    bug : str or None
        A bug of :data:`semi_core.sgd.bugs.BUGS`.
    canaries_per_run : int in 1..batch_size
        Dirac canaries per run (``> 1`` needs ``canary="dirac"``).
    dirac_scale : float >= 1
        The Dirac canary's gradient norm in units of ``C``.
    failure_prob : float in (0, 0.5]
    engine : {"opacus", "batched"}
    semi : bool or "tau"
    n_reference : int >= 2
        Reference records for the gradient statistics.
    runs_per_chunk : int >= 1
        Runs per chunk of the game runner (the unit of work and of seeding).
    """

    noise_multiplier: float
    max_grad_norm: float
    batch_size: int
    steps: int
    canary: str = "dirac"
    tau: int | None = 5
    rounds: int = 1000
    delta: float = 1e-5
    lr: float = 0.5
    sampler: str = "fixed"
    bug: str | None = None
    canaries_per_run: int = 1
    dirac_scale: float = 4.0
    failure_prob: float = 0.05
    engine: str = "opacus"
    semi: bool | str = True
    n_reference: int = 128
    runs_per_chunk: int = 64

    def __post_init__(self):
        def put(name, value):
            object.__setattr__(self, name, value)

        put("noise_multiplier", check_positive(self.noise_multiplier, "noise_multiplier"))
        put("max_grad_norm", check_positive(self.max_grad_norm, "max_grad_norm"))
        put("lr", check_positive(self.lr, "lr"))
        put("batch_size", check_int(self.batch_size, "batch_size", minimum=2))
        put("steps", check_int(self.steps, "steps", minimum=1))
        put("rounds", check_int(self.rounds, "rounds", minimum=2))
        delta = check_delta(self.delta)
        if delta == 0:
            raise ValueError("delta must be in (0, 1) for the accountants, got 0")
        put("delta", delta)
        put("failure_prob", check_failure_prob(self.failure_prob))
        if self.canary not in CANARIES:
            raise ValueError(f"canary must be one of {CANARIES}, got {self.canary!r}")
        if self.sampler not in SAMPLERS:
            raise ValueError(f"sampler must be one of {SAMPLERS}, got {self.sampler!r}")
        if self.engine not in ENGINES:
            raise ValueError(f"engine must be one of {ENGINES}, got {self.engine!r}")
        if self.semi is not True and self.semi is not False and self.semi != "tau":
            raise ValueError(f"semi must be True, False or 'tau', got {self.semi!r}")
        the_bug = get_bug(self.bug)
        put("bug", None if the_bug is None else the_bug.name)
        put("canaries_per_run", check_int(self.canaries_per_run, "canaries_per_run",
                                          minimum=1, maximum=self.batch_size))
        if self.canaries_per_run > 1 and self.canary != "dirac":
            raise ValueError("canaries_per_run > 1 needs canary='dirac'")
        scale = check_positive(self.dirac_scale, "dirac_scale")
        if scale < 1:
            raise ValueError(f"dirac_scale must be >= 1 (the canary's gradient norm is "
                             f"dirac_scale * C and must reach the clip norm), got {scale}")
        put("dirac_scale", scale)
        put("n_reference", check_int(self.n_reference, "n_reference", minimum=2))
        put("runs_per_chunk", check_int(self.runs_per_chunk, "runs_per_chunk", minimum=1))
        if self.sampler == "fixed":
            if self.tau is None:
                raise ValueError(f"tau must be an integer in 1..{self.steps} for "
                                 "sampler='fixed'")
            put("tau", check_int(self.tau, "tau", minimum=1, maximum=self.steps))
        else:
            if self.engine == "batched":
                raise ValueError("engine='batched' replays fixed batches: use sampler='fixed'")
            if the_bug is not None and the_bug.misreports_accounting:
                raise ValueError("bug 'sampling_rate_misreport' misreports fixed batches as "
                                 "Poisson: use sampler='fixed'")
            if self.canary not in ("dirac", "input"):
                raise ValueError("sampler='poisson' supports canary='dirac' or 'input'")
            put("tau", 1)  # not used: Opacus' Poisson sampler decides when the canary is seen
        # the trajectory must stay finite: |update| <= lr (C + noise) per step
        growth = self.lr * self.max_grad_norm * (1.0 + 10.0 * self.noise_multiplier) * (
            self.steps * self.dirac_scale)
        if not growth < _MAX_GROWTH:
            raise ValueError(f"lr * max_grad_norm * (1 + 10 noise_multiplier) * steps * "
                             f"dirac_scale = {growth:.3g} bounds the parameters' growth and "
                             f"must stay below {_MAX_GROWTH:.0e} (far from overflow): lower lr, "
                             "max_grad_norm, noise_multiplier or steps")

    @property
    def games(self) -> int:
        """Canary games: ``rounds`` runs times the canaries per run (one under Poisson)."""
        return self.rounds * (self.canaries_per_run if self.sampler == "fixed" else 1)

    def to_dict(self) -> dict:
        """The fields as a plain dict."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


#: Largest ``lr * C * (1 + 10 sigma) * T * scale`` accepted: parameters stay far from overflow.
_MAX_GROWTH = 1e100
#: Seconds per trained step assumed by the up-front work estimate (an optimistic floor, so
#: only work that cannot finish is refused): Opacus' hooks path and the batched trainer.
_SECONDS_PER_STEP = {"opacus": 1e-3, "batched": 2e-5}
#: Opacus' PRV accountant: bytes and (floor) seconds per accounted step (measured: 0.3 GB and
#: about 10 s at 10^4 steps).
_PRV_BYTES_PER_STEP = 2.5e4
_PRV_SECONDS_PER_STEP = 1e-4


def _check_resolution(cfg: OpacusAuditConfig, theta0: torch.Tensor) -> None:
    r"""The canary's share of an update, :math:`\eta C / n`, must be resolvable in the
    parameters' precision (relative rounding error of :math:`\theta_t - \theta_{t-1}` at most
    1 %); below it every score would be rounding noise."""
    step = cfg.lr * cfg.max_grad_norm / cfg.batch_size
    scale = max(1.0, float(theta0.abs().max()))
    floor = 100.0 * torch.finfo(theta0.dtype).eps * scale
    if not step >= floor:
        raise ValueError(f"lr * max_grad_norm / batch_size = {step:.3g} is below the resolution "
                         f"of the model's {theta0.dtype} parameters (|theta| up to {scale:.3g}: "
                         f"needs >= {floor:.3g}): the canary's update would be lost in rounding; "
                         "raise lr or max_grad_norm")


def _check_audit_work(cfg: OpacusAuditConfig, ex: Executor) -> None:
    """Refuse, before anything is built, work that cannot finish: the runs and their scores,
    and Opacus' PRV accountant (whose grid grows with the number of steps)."""
    stats = 4 + len(BASELINES)
    check_work(f"audit_opacus: {cfg.rounds} runs x {cfg.steps} steps ({cfg.engine} engine) and "
               f"Opacus' PRV accountant over {cfg.steps} steps",
               nbytes=max(8.0 * cfg.games * (stats + 2), _PRV_BYTES_PER_STEP * cfg.steps),
               seconds=cfg.rounds * cfg.steps * _SECONDS_PER_STEP[cfg.engine] / max(
                   1, ex.parallelism) + _PRV_SECONDS_PER_STEP * cfg.steps,
               hint="fewer rounds or steps, or more workers (--workers/--scheduler)")


def _config(config, options) -> OpacusAuditConfig:
    if config is None:
        return OpacusAuditConfig(**options)
    if not isinstance(config, OpacusAuditConfig):
        raise TypeError(f"config must be an OpacusAuditConfig, got {type(config).__name__}")
    return replace(config, **options) if options else config


def _claims(cfg: OpacusAuditConfig, mech: WhiteBoxMechanism, n_dataset: int) -> dict:
    """Every closed-form number of the report, computed before any training (a delta that an
    accountant cannot handle is an error naming delta, not a failure after the games)."""
    the_bug = get_bug(cfg.bug)
    delta, steps = cfg.delta, cfg.steps
    q_user = min(1.0, cfg.batch_size / n_dataset)
    caught: list[str] = []
    try:
        eps_acc = opacus_accountant_epsilon(cfg.noise_multiplier, q_user, steps, delta,
                                            warnings_out=caught)
        if cfg.sampler == "fixed":
            eps_true = mech.epsilon(delta, cfg.tau)
            if the_bug is not None and the_bug.misreports_accounting:
                claimed = eps_acc["prv"]
                source = (f"Opacus PRV accountant told the batches were Poisson-sampled at "
                          f"q = n/N = {q_user:.4g} (bug)")
            else:
                claimed = gdp_epsilon(2.0 / cfg.noise_multiplier, delta)
                source = "exact epsilon of a correct run (mu = 2/sigma_DP GDP, replace-one)"
            relation = ("replace-one: the canary replaces one slot of batch tau; fixed disjoint "
                        "batches, each record used in exactly one step (no sub-sampling)")
        else:
            q = mech.sample_rate
            eps_true = None if the_bug is not None else mech.epsilon(delta)
            claimed = opacus_accountant_epsilon(cfg.noise_multiplier, q, steps, delta)["prv"]
            source = "Opacus PRV accountant (add/remove, Poisson rate q, T steps)"
            relation = ("add/remove: the canary is in the dataset (H1) or not (H0); Opacus' "
                        "DPDataLoader samples every record with probability q at every step")
    except MemoryError:
        raise ResourceLimitError(f"Opacus' accountants ran out of memory for steps = {steps}: "
                                 "use fewer steps") from None
    except (RuntimeError, ValueError, OverflowError, FloatingPointError) as exc:
        raise ValueError(f"delta = {delta!r} (with noise_multiplier = {cfg.noise_multiplier!r}, "
                         f"{steps} steps): the accountants cannot compute epsilon ({exc}); use "
                         "a delta well inside (0, 1), e.g. 1e-5") from None
    for name, v in (("epsilon_accountant", eps_acc["rdp"]), ("epsilon_accountant", eps_acc["prv"]),
                    ("epsilon_claimed", claimed)):
        if not (isinstance(v, float) and v >= 0 and not math.isnan(v)):
            raise ValueError(f"delta = {delta!r}: {name} is {v!r}, not a number >= 0; use a "
                             "delta well inside (0, 1), e.g. 1e-5")
    return {"q_user": q_user, "epsilon_accountant": eps_acc, "epsilon_true": eps_true,
            "claimed": float(claimed), "claim_source": source, "relation": relation,
            "warnings": caught}


def audit_opacus(model_fn, train_dataset, config: OpacusAuditConfig | None = None, *, seed=0,
                 executor=None, progress=False, **options) -> OpacusAuditReport:
    """Audit Opacus DP-SGD on ``model_fn``/``train_dataset`` (module docstring).

    Parameters
    ----------
    model_fn : callable
        Returns a fresh ``nn.Module`` (logits); called once per run, its state replaced by the
        first call's (so :math:`\\theta_0` is common; pretrain inside ``model_fn``).
    train_dataset : (X, y) or map-style dataset of (x, y)
        Split into a private pool (batches), reference records (gradient statistics) and, for
        ``canary="gradient-mahalanobis"``, canary candidates.
    config : OpacusAuditConfig, optional
        The configuration; or give its fields as keywords (``noise_multiplier=...,
        max_grad_norm=..., batch_size=..., steps=..., canary=..., tau=..., rounds=...,
        delta=..., lr=..., sampler=..., bug=..., canaries_per_run=..., dirac_scale=...,
        failure_prob=..., engine=..., semi=..., n_reference=..., runs_per_chunk=...``), which
        also override the fields of a given ``config``:

        - ``noise_multiplier``, ``max_grad_norm``: :math:`\\sigma_{DP}` and :math:`C`;
        - ``batch_size``, ``steps``: ``n`` (``<= len(train_dataset)``) and ``T``;
        - ``canary``: ``"dirac"`` (white-box Dirac gradient canary), ``"gradient-mahalanobis"``
          (the candidate with the largest clipped-gradient Mahalanobis distance, seed §5.2) or
          ``"input"`` (a crafted input on the least-varying feature);
        - ``tau``: insertion step (``sampler="fixed"``);
        - ``rounds``: runs, bits i.i.d. Bernoulli(1/2); ``canaries_per_run`` Dirac games per run;
        - ``sampler``: ``"fixed"`` or ``"poisson"``; ``bug``: a bug of the zoo installed in
          Opacus' optimizer;
        - ``engine``: ``"opacus"`` or ``"batched"`` (the same games on semi_core's batched
          trainer, the reference path; ``sampler="fixed"`` only);
        - ``semi``: also SeMI-SGD and SeMI-max (slower); ``"tau"``: SeMI-SGD at ``tau`` only.
    seed : int or SeedSequence
        Root seed (setup split and the games).
    executor : Executor, int or None
        Where the runner plays the chunks of runs (:class:`~semi_core.game.backends.Executor`);
        the result does not depend on it.
    progress : bool
        Progress of the game on stderr.

    Returns
    -------
    OpacusAuditReport

    Notes
    -----
    Every argument is validated before any model is trained: the configuration on
    construction, the dataset and model by :func:`prepare_opacus_setup`, every closed-form
    :math:`\\varepsilon` (accountants, ground truth, claim) and the work estimate before the
    game starts.
    """
    with _torch_threads(1):
        return _audit_opacus(model_fn, train_dataset, config, seed=seed, executor=executor,
                             progress=progress, **options)


@contextmanager
def _torch_threads(k: int):
    """Torch's intra-op threads set to ``k`` for the block, then restored. The audit's tensors
    are small (``d`` in the hundreds, batches of tens of rows): extra intra-op threads only
    spin, which costs several times the CPU on a loaded machine (7x measured for the tour
    line's runs). The result does not depend on it: the element-wise kernels do not split work
    below torch's grain size, and the batched products compute each matrix on its own (the
    tour configuration gives bit-identical scores and bounds with 1 and 2 threads)."""
    old = torch.get_num_threads()
    torch.set_num_threads(k)
    try:
        yield
    finally:
        torch.set_num_threads(old)


def _audit_opacus(model_fn, train_dataset, config, *, seed, executor, progress,
                  **options) -> OpacusAuditReport:
    t_start = time.perf_counter()
    cfg = _config(config, options)
    ex = Executor.coerce(executor)
    _check_audit_work(cfg, ex)
    _opacus()
    root = as_seed_sequence(seed)
    the_bug = get_bug(cfg.bug)
    dcfg = DPSGDConfig(batch_size=cfg.batch_size, steps=cfg.steps, lr=cfg.lr,
                       clip=cfg.max_grad_norm, sigma_dp=cfg.noise_multiplier)
    ss_setup, ss_plan = root.spawn(2)
    ctx = prepare_opacus_setup(model_fn, train_dataset, cfg=dcfg, canary=cfg.canary,
                               sampler=cfg.sampler, canaries_per_run=cfg.canaries_per_run,
                               dirac_scale=cfg.dirac_scale, n_reference=cfg.n_reference,
                               seed=ss_setup)
    setup = ctx.setup
    _check_resolution(cfg, setup.theta0)
    if cfg.engine == "opacus":
        mech: WhiteBoxMechanism = OpacusMechanism(ctx, bug=the_bug)
    else:
        mech = WhiteBoxMechanism(setup, bug=the_bug)
    claims = _claims(cfg, mech, ctx.n_dataset)
    if cfg.sampler == "fixed":
        scorers = (WhiteBoxScorer(mech, cfg.semi),)
    elif setup.kind == "dirac":
        scorers = (PoissonDiracScorer(mech),)
    else:
        scorers = (WhiteBoxScorer(mech, False),)
    t0 = time.perf_counter()
    game = play_white_box(mech, rounds=cfg.rounds, tau=cfg.tau, seed=ss_plan, scorers=scorers,
                          runs_per_chunk=cfg.runs_per_chunk, executor=ex, progress=progress)
    t1 = time.perf_counter()
    member = game.member
    n1 = int(member.sum())
    if min(n1, member.size - n1) < 2:
        raise ValueError(f"rounds = {cfg.rounds} gave {n1} member and {member.size - n1} "
                         "non-member games; every bound needs >= 2 of each: increase rounds")
    game.seed = int(root.entropy) if isinstance(root.entropy, int) else None
    game.metadata.update(engine=cfg.engine, sampler=cfg.sampler, canary=cfg.canary, bug=cfg.bug)
    bounds, eps_lb = _certify(game, delta=cfg.delta, failure_prob=cfg.failure_prob, seed=ss_plan)
    valid = cfg.sampler == "fixed" and setup.kind == "dirac" and bool(
        setup.info.get("dirac_isolated", False))
    why = ("" if valid else "the Gaussian-score route needs a Dirac canary on an isolated "
           "coordinate and fixed batches (exactly Gaussian scores)")
    refutation = _refute(game, claims["claimed"], delta=cfg.delta, failure_prob=cfg.failure_prob,
                         seed=ss_plan, gaussian_valid=valid, reason=why)
    t2 = time.perf_counter()
    msgs = sorted(set(claims["warnings"]) | getattr(mech, "warnings_seen", set()))
    notes = []
    if any("Secure RNG" in m for m in msgs):
        notes.append("Opacus: secure RNG is off (secure_mode=False) -- needed for seeded, "
                     "reproducible noise; a production run should use secure_mode=True")
    if cfg.sampler == "fixed" and cfg.engine == "opacus":
        notes.append("Opacus ran with poisson_sampling=False on the Crafter's fixed batches: "
                     "its accountant's Poisson assumption does not hold for this run")
    if setup.kind == "dirac" and not setup.info.get("dirac_isolated", False):
        notes.append("the Dirac coordinates are not isolated (natural gradients reach them): "
                     "the Dirac score is not exactly Gaussian, the games of one run are not "
                     "independent and the audit is less tight")
    q_user = claims["q_user"]
    return OpacusAuditReport(
        epsilon_lower_bound=eps_lb,
        epsilon_accountant=claims["epsilon_accountant"],
        epsilon_true=claims["epsilon_true"], epsilon_claimed=claims["claimed"],
        claim_refuted=refutation["nonparametric"]["refuted"],
        claim_refuted_gdp=refutation["gdp"]["refuted"], refutation=refutation,
        neighbouring_relation=claims["relation"],
        accountant_relation=("epsilon_accountant: Opacus RDP/PRV, add/remove, Poisson rate "
                             f"q = batch_size/N = {q_user:.4g}, {cfg.steps} steps; claim under "
                             f"test: {claims['claim_source']}"),
        warnings=notes + msgs,
        config={"noise_multiplier": cfg.noise_multiplier, "max_grad_norm": cfg.max_grad_norm,
                "batch_size": cfg.batch_size, "steps": cfg.steps, "lr": cfg.lr, "tau": cfg.tau,
                "rounds": cfg.rounds, "games": int(member.size), "delta": cfg.delta,
                "failure_prob": cfg.failure_prob, "canary": cfg.canary, "sampler": cfg.sampler,
                "bug": cfg.bug, "engine": cfg.engine, "canaries_per_run": mech.k,
                "runs_per_chunk": cfg.runs_per_chunk, "executor": ex.name},
        setup=setup.info,
        timing={"game_seconds": t1 - t0, "certify_seconds": t2 - t1,
                "total_seconds": time.perf_counter() - t_start},
        bounds=bounds, game=game)


def digits_example(*, seed=0, model: str = "logreg", pretrain_epochs: int = 60):
    """``(model_fn, train_dataset)`` on scikit-learn's bundled digits: a model pretrained on a
    public split (600 records; :func:`semi_core.sgd.models.build_model`) and the other 1197
    records as the private training set. ``model_fn`` returns a fresh copy each call."""
    from semi_core.sgd.data import load_dataset
    from semi_core.sgd.models import build_model

    root = as_seed_sequence(seed)
    ss_split, ss_model = root.spawn(2)
    sp = load_dataset("digits", rng=np.random.Generator(np.random.PCG64(ss_split)))
    with _torch_threads(1):  # small tensors: more threads only spin (see _torch_threads)
        fm, _, _ = build_model(model, *sp.public, sp.n_classes, seed_seq=ss_model,
                               epochs=pretrain_epochs)
    state = {k: v.detach().clone() for k, v in fm.module.state_dict().items()}
    module0 = fm.module

    def model_fn() -> nn.Module:
        import copy

        m = copy.deepcopy(module0)  # in-memory copy of our own module, not an unpickled file
        m.load_state_dict(state)
        return m

    x = np.concatenate([sp.private[0], sp.reference[0], sp.candidates[0]])
    y = np.concatenate([sp.private[1], sp.reference[1], sp.candidates[1]])
    return model_fn, (torch.as_tensor(x, dtype=torch.float64), torch.as_tensor(y))


def _factorisation_seconds(points: int, m: int, clock, block: int = 16) -> float:
    """Seconds of the two ``m x m`` capacitance factorisations of ``points`` parameter points
    (:func:`semi_core.sgd.gradstats.woodbury_factors`, in blocks of ``block`` points as the
    scorer runs them) on a fixed well-conditioned Gram matrix: the part of SeMI-SGD/SeMI-max
    scoring that no reorganisation removes."""
    g = torch.as_tensor(np.random.default_rng(0).normal(size=(block, m, 2 * m)))
    gram = g @ g.transpose(-1, -2) / (2 * m)
    betas = torch.ones(2, block, dtype=gram.dtype)
    t0 = clock()
    for lo in range(0, points, block):
        p = min(block, points - lo)
        woodbury_factors(gram[:p], (0.01, 0.0099), betas[:, :p], m)
    return clock() - t0


def time_engines(model_fn, train_dataset, *, noise_multiplier: float, rounds: int = 1000,
                 max_grad_norm: float = 1.0, batch_size: int = 64, steps: int = 10,
                 tau: int = 5, delta: float = 1e-5, seed=0, opacus_rounds: int | None = None,
                 runs_per_chunk: int = 128, semi: bool | str = True,
                 clock=time.process_time) -> dict:
    """Seconds to train ``rounds`` Dirac games at one ``tau`` through Opacus
    (:class:`OpacusMechanism`, one ``make_private`` per run) and through the batched trainer
    (:class:`~semi_core.sgd.dirac.WhiteBoxMechanism`), on the same Crafter draws, in chunks of
    ``runs_per_chunk`` runs as the runner plays them; and to score the batched releases with
    :class:`~semi_core.sgd.dirac.WhiteBoxScorer`, chunk by chunk (``semi``: the mode of
    ``scoring_seconds``; ``scoring_by_semi`` has every mode: ``True``, ``"tau"``, ``False``).

    ``opacus_rounds`` (default ``rounds``) times Opacus on a prefix of the runs and scales the
    time linearly to ``rounds`` (runs are independent and equally costly); the payload says so.
    ``clock`` is ``time.process_time`` by default (CPU seconds of this process: the work is
    single-threaded, and CPU time is not inflated by other load on the machine).
    Returns seconds, the ratios and where the time goes in each path.
    """
    del delta
    rounds = check_int(rounds, "rounds", minimum=1)
    runs_per_chunk = check_int(runs_per_chunk, "runs_per_chunk", minimum=1)
    cfg = DPSGDConfig(batch_size=batch_size, steps=steps, lr=0.5, clip=max_grad_norm,
                      sigma_dp=float(noise_multiplier))
    ss_setup, ss_plan = as_seed_sequence(seed).spawn(2)
    with _torch_threads(1):
        ctx = prepare_opacus_setup(model_fn, train_dataset, cfg=cfg, canary="dirac",
                                   seed=ss_setup)
        rng = np.random.Generator(np.random.PCG64(ss_plan))
        member = rng.random(rounds) < 0.5
        t0 = clock()
        runs = draw_runs(ctx.setup, member, tau, rng)
        t_plan = clock() - t0
        k = rounds if opacus_rounds is None else min(rounds, check_int(
            opacus_rounds, "opacus_rounds", minimum=1))
        split_o: dict = {}
        split_b: dict = {}
        mech_o = OpacusMechanism(ctx, timings=split_o)
        mech_b = WhiteBoxMechanism(ctx.setup, timings=split_b)
        chunks = [slice(lo, min(rounds, lo + runs_per_chunk))
                  for lo in range(0, rounds, runs_per_chunk)]
        t0 = clock()
        for lo in range(0, k, runs_per_chunk):
            mech_o.train_runs(runs.take(slice(lo, min(k, lo + runs_per_chunk))))
        t_o = (clock() - t0) * rounds / k
        t0 = clock()
        trajs = [mech_b.train_runs(runs.take(sl)) for sl in chunks]
        t_b = clock() - t0
        releases = [mech_b.pack_releases(tr, sl.stop - sl.start)
                    for tr, sl in zip(trajs, chunks, strict=True)]
        t_modes = {}
        for mode in dict.fromkeys((semi, True, "tau", False)):
            scorer = WhiteBoxScorer(mech_b, mode)
            t0 = clock()
            for rel in releases:
                scorer(rel, np.full(rel.shape[0], tau))
            t_modes[str(mode)] = clock() - t0
        t_s = t_modes[str(semi)]
        # the floor of exact SeMI-max scoring: two m x m factorisations per parameter point
        # (every (run, step) pair after step 1, plus step 1's common theta_0 once per chunk)
        m_ref = int(ctx.setup.ref_x.shape[0])
        points = rounds * (steps - 1) + len(chunks)
        t_f = _factorisation_seconds(points, m_ref, clock)
    return {"rounds": rounds, "opacus_rounds_timed": k, "opacus_seconds": t_o,
            "factorisation_seconds": t_f, "points": points, "n_reference": m_ref,
            "batched_seconds": t_b, "ratio": t_o / t_b, "plan_seconds": t_plan,
            "scoring_seconds": t_s, "scoring_ratio": t_s / t_b, "semi": semi,
            "scoring_by_semi": t_modes,
            "opacus_split": {key: v * rounds / k for key, v in split_o.items()},
            "batched_split": split_b, "threads": 1,
            "clock": getattr(clock, "__name__", str(clock))}
