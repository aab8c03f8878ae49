"""The training loop: the runs of a chunk trained one by one through Opacus'
``PrivacyEngine.make_private`` (per-sample gradients, clipping, noise; its Poisson sampler).
"""

from __future__ import annotations

import threading
import time
import warnings

import numpy as np
import torch
from torch import nn

from semi_core.integrations.opacus.bugs import install_bug
from semi_core.integrations.opacus.prepare import _OpacusContext
from semi_core.sgd.bugs import Bug
from semi_core.sgd.dirac import (
    Runs,
    dirac_rows,
)

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


def _reset_private(model, opt, state0: dict, seed: int) -> None:
    """Return a private model/optimizer pair that ``_make_private`` built (fixed batches) to
    the state a fresh ``make_private`` of the run seeded ``seed`` starts from: the parameters
    and buffers of :math:`\theta_0` (copied in place, so the optimizer's parameters stay
    the same tensors), no gradient, per-sample gradient or accumulated sum, no pending skipped
    step, the noise generator re-seeded (as ``torch.Generator().manual_seed(seed)``) and the
    bug zoo's per-run cache dropped. Opacus' ``DPOptimizer`` and ``torch.optim.SGD`` (no
    momentum) keep no other state between steps; the accountant's history, which the audit
    does not read, only grows."""
    model._module.load_state_dict(state0)
    for p in model.parameters():
        p.grad = None
        p.grad_sample = None
        p.summed_grad = None
    opt._step_skip_queue.clear()
    opt._is_last_step_skipped = False
    opt.__dict__.pop("_semi_reused_noise", None)  # the noise_reused bug's cache: per run
    opt.generator.manual_seed(int(seed))


def _loader(xb, yb, n: int, seed: int):
    from torch.utils.data import DataLoader, TensorDataset  # lazy: with the Opacus path

    # a generator of its own: iterating a DataLoader otherwise draws from torch's global RNG
    return DataLoader(TensorDataset(xb, yb), batch_size=n, shuffle=False,
                      generator=torch.Generator().manual_seed(int(seed) ^ 0x2545F491))


def _opacus_train(ctx: _OpacusContext, runs: Runs, bug: Bug | None, caught: list,
                  tm: dict) -> torch.Tensor:
    """Train every run of ``runs`` through Opacus; returns :math:`(\\theta_0..\\theta_T)`
    per run, ``(m, T+1, d)``.

    Fixed batches: one ``make_private`` per call (chunk), each run starting from
    :func:`_reset_private` -- the same arithmetic as a ``make_private`` per run, bit for bit
    (``tests/integrations/test_opacus.py``): with ``poisson_sampling=False`` Opacus' wrapping
    does not depend on the run (``T`` batches of ``n`` rows each time, the loader replaced by
    the run's own batches). Poisson sampling: one ``make_private`` per run (its data loader
    holds the run's records)."""
    setup, cfg = ctx.setup, ctx.setup.cfg
    T, n = cfg.steps, cfg.batch_size
    for key in ("make_private", "steps"):
        tm.setdefault(key, 0.0)
    out = torch.empty(len(runs), T + 1, setup.fm.d, dtype=setup.theta0.dtype)
    loss_fn = nn.CrossEntropyLoss()
    private = None  # fixed batches: (model, optimizer) of the chunk's one make_private
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
        if ctx.sampler == "fixed":  # Opacus leaves fixed batches alone (poisson_sampling=False):
            # slice them directly -- the same tensors the loader would collate row by row
            if private is None:
                private = _make_private(ctx, _loader(xb, yb, n, seed), seed, bug, caught)[:2]
            else:
                _reset_private(*private, ctx.state0, seed)
            model, opt = private
            loader = zip(xb.split(n), yb.split(n), strict=True)
        else:
            model, opt, loader = _make_private(ctx, _loader(xb, yb, n, seed), seed, bug, caught)
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
