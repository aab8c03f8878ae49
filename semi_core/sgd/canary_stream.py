r"""White-box DP-SGD canary stream for the sequential DP audit (sequential_dp_auditing seed §4.2).

At every DP-SGD step :math:`t` a Poisson batch :math:`B_t` (rate ``sample_rate``) is drawn, the
per-sample gradients (torch layer, :meth:`semi_core.sgd.grads.FunctionalModel.per_sample_grads`)
are clipped to norm :math:`C` and summed. The auditor forms two privatised sums from the *same*
batch with independent noise: :math:`\tilde\nabla[t]` without and :math:`\tilde\nabla'[t]` with a
Dirac canary gradient :math:`g' = C e_j`, and records the rescaled projections

.. math::

    x_t = \langle e_j, \tilde\nabla[t]\rangle / C,\qquad
    y_t = \langle e_j, \tilde\nabla'[t]\rangle / C = x_t^{\text{natural}} + 1 + \sigma\xi'_t ,

so the canary contributes exactly 1 and the noise is :math:`\sigma\xi` (``sigma`` is the noise
multiplier, std :math:`\sigma C` on the clipped sum). The model is trained with
:math:`\tilde\nabla[t]` (the canary never enters training).

``coordinate="dead"`` puts the canary on the weight of an input feature that is zero in every
record, so natural gradients vanish there and :math:`x_t\sim N(0,\sigma^2)`,
:math:`y_t\sim N(1,\sigma^2)` exactly (the seed's idealised :math:`P_1, P_2`); each pair is then
exactly :math:`(\varepsilon,\delta)`-DP for :math:`\sigma` from
:func:`semi_core.mechanisms.zoo.gaussian_sigma` (:func:`private_sigma`).
``coordinate="live"`` uses the weight of the highest-variance feature: natural gradients add a
time-varying, non-identically distributed term (the Dirac case the seed discusses).
``sigma = 0`` is the non-private implementation (noise never added).
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from semi_core._rng import as_seed_sequence
from semi_core._validation import check_int, check_positive, check_probability
from semi_core.sgd.grads import FunctionalModel, clip_rows

__all__ = ["canary_stream", "private_sigma"]


def private_sigma(epsilon_canary: float, delta: float) -> float:
    r"""Noise multiplier making each canary observation pair exactly
    :math:`(\varepsilon_{canary},\delta)`-DP: :math:`N(0,\sigma^2)` vs :math:`N(1,\sigma^2)`."""
    from semi_core.mechanisms.zoo import gaussian_sigma

    return gaussian_sigma(epsilon_canary, delta)


def canary_stream(steps: int, *, sigma: float, clip: float = 1.0, sample_rate: float = 0.1,
                  lr: float = 0.5, coordinate: str = "dead", dataset: str = "digits",
                  seed=0) -> dict:
    """Run DP-SGD (logistic regression) for ``steps`` steps and return the canary stream.

    Parameters
    ----------
    steps : int
        Number of DP-SGD steps (one observation pair per step), >= 1.
    sigma : float
        Noise multiplier >= 0 (0: the non-private implementation).
    clip : float
        Clipping norm C > 0.
    sample_rate : float
        Poisson sampling rate in (0, 1].
    lr : float
        Learning rate of the averaged noisy gradient.
    coordinate : {"dead", "live"}
        Where the Dirac canary sits (see the module docstring).
    dataset : {"digits", "breast-cancer", "wine", "digits-odd"}
        Bundled dataset (no download).
    seed : int or SeedSequence

    Returns
    -------
    dict
        ``x``, ``y`` (arrays, shape (steps,)), ``coordinate_index``, ``batch_sizes``,
        ``sigma``, ``clip``, ``sample_rate``.
    """
    from semi_core.sgd.data import load_bundled

    steps = check_int(steps, "steps", minimum=1)
    if not (np.isfinite(sigma) and sigma >= 0):
        raise ValueError(f"sigma must be finite and >= 0, got {sigma}")
    clip = check_positive(clip, "clip")
    q = check_probability(sample_rate, "sample_rate", high_open=False)
    if coordinate not in ("dead", "live"):
        raise ValueError(f"coordinate must be 'dead' or 'live', got {coordinate!r}")
    X, Y, k = load_bundled(dataset)
    ss = as_seed_sequence(seed)
    rng = np.random.Generator(np.random.PCG64(ss))
    gen = torch.Generator().manual_seed(int(ss.generate_state(1)[0]))
    module = nn.Linear(X.shape[1], k).double()
    with torch.no_grad():
        module.weight.normal_(0, 0.01, generator=gen)
        module.bias.zero_()
    fm = FunctionalModel(module)
    theta = fm.theta()
    # flat layout: weight (k, d_in) row-major, then bias
    var = X.var(axis=0)
    feat = int(np.flatnonzero(var == 0)[0]) if coordinate == "dead" else int(np.argmax(var))
    if coordinate == "dead" and np.any(X[:, feat] != 0):
        raise ValueError("no all-zero feature for a dead-coordinate canary in this dataset")
    j = feat  # weight[0, feat]
    xt = torch.as_tensor(X, dtype=torch.float64)
    yt = torch.as_tensor(Y, dtype=torch.long)
    n = X.shape[0]
    xs, ys, bs = np.empty(steps), np.empty(steps), np.empty(steps, dtype=int)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # small per-step batches: threading only adds contention
    try:
        _train(steps, fm, theta, xt, yt, rng, q, n, clip, sigma, lr, j, xs, ys, bs)
    finally:
        torch.set_num_threads(threads)
    return {"x": xs, "y": ys, "coordinate_index": j, "feature": feat, "batch_sizes": bs,
            "sigma": float(sigma), "clip": clip, "sample_rate": q, "dataset": dataset}


def _train(steps, fm, theta, xt, yt, rng, q, n, clip, sigma, lr, j, xs, ys, bs) -> None:
    for t in range(steps):
        idx = np.flatnonzero(rng.random(n) < q)
        bs[t] = idx.size
        if idx.size:
            g = clip_rows(fm.per_sample_grads(theta, xt[idx], yt[idx]), clip).sum(0)
        else:
            g = torch.zeros_like(theta)
        noise = torch.as_tensor(rng.normal(0.0, sigma * clip, theta.numel()))
        noisy = g + noise
        nat = float(g[j]) / clip
        xs[t] = float(noisy[j]) / clip
        ys[t] = nat + 1.0 + sigma * rng.standard_normal()
        theta = theta - lr * noisy / max(q * n, 1.0)
