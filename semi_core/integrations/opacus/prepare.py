"""Data and set-up of an Opacus audit: the dataset split, :math:`\\theta_0`, the canary and
the checks that Opacus can train the model (:func:`prepare_opacus_setup`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn

from semi_core._rng import as_seed_sequence
from semi_core._validation import (
    check_int,
)
from semi_core.integrations.opacus._common import CANARIES, SAMPLERS, _opacus
from semi_core.sgd.dirac import (
    WhiteBoxSetup,
    dirac_coordinates,
)
from semi_core.sgd.dpsgd import DPSGDConfig
from semi_core.sgd.grads import FunctionalModel, clip_rows

__all__ = ["prepare_opacus_setup"]


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
    canary, and check that Opacus can train the model.

    Parameters
    ----------
    model_fn : callable
        Returns a fresh ``nn.Module``.
    train_dataset : (X, y) or map-style dataset
        The training data.
    cfg : DPSGDConfig
        The DP-SGD configuration.
    canary : {"dirac", "gradient-mahalanobis", "input"}
        The canary kind.
    sampler : {"fixed", "poisson"}
        Batch sampler.
    canaries_per_run : int
        Dirac canaries per run.
    dirac_scale : float
        Scale of the Dirac canary in units of the clipping norm.
    n_reference : int
        Reference records of the gradient statistics.
    seed : int or numpy.random.SeedSequence
        Seed of the split.

    Returns
    -------
    _OpacusContext
        The model factory, :math:`\\theta_0`, the white-box setup and the sampler.
    """
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



def _poisson_rate(n: int, N: int) -> tuple[int, float, int]:
    """Pool size ``N' <= N`` for which ``N'`` and ``N' + 1`` records get the same Opacus sample
    rate and expected batch size; returns ``(N', q, expected batch)``."""
    while math.ceil(N / n) != math.ceil((N + 1) / n) or int(N / math.ceil(N / n)) != int(
            (N + 1) / math.ceil((N + 1) / n)):
        N -= 1
    q = 1.0 / math.ceil(N / n)
    return N, q, int(N * q)
