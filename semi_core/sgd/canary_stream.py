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

__all__ = ["canary_stream", "private_sigma", "CanaryTrainer"]


def private_sigma(epsilon_canary: float, delta: float) -> float:
    r"""Noise multiplier making each canary observation pair exactly
    :math:`(\varepsilon_{canary},\delta)`-DP: :math:`N(0,\sigma^2)` vs :math:`N(1,\sigma^2)`.

    Parameters
    ----------
    epsilon_canary : float
        Target :math:`\varepsilon` of one observation pair, > 0.
    delta : float
        Target :math:`\delta`, in (0, 1).

    Returns
    -------
    float
        The noise standard deviation, > 0.
    """
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
    steps = check_int(steps, "steps", minimum=1)
    tr = CanaryTrainer(sigma=sigma, clip=clip, sample_rate=sample_rate, lr=lr,
                       coordinate=coordinate, dataset=dataset, seed=seed)
    x, y, bs = tr.advance(steps)
    return {"x": x, "y": y, "coordinate_index": tr.j, "feature": tr.feature, "batch_sizes": bs,
            "sigma": tr.sigma, "clip": tr.clip, "sample_rate": tr.q, "dataset": dataset}


class CanaryTrainer:
    """DP-SGD run that advances only when canary observations are requested.

    Same parameters as :func:`canary_stream`. :meth:`advance` trains ``k`` more steps and returns
    their observations; :meth:`pair_source` wraps it as a
    :class:`~semi_core.audit.sequential.PairSource`, so a sequential audit stops *training* as
    soon as it rejects (the seed's "auditing in less than one training run").
    """

    def __init__(self, *, sigma: float, clip: float = 1.0, sample_rate: float = 0.1,
                 lr: float = 0.5, coordinate: str = "dead", dataset: str = "digits", seed=0):
        from semi_core.sgd.data import load_bundled

        if not (np.isfinite(sigma) and sigma >= 0):
            raise ValueError(f"sigma must be finite and >= 0, got {sigma}")
        self.sigma = float(sigma)
        self.clip = check_positive(clip, "clip")
        self.q = check_probability(sample_rate, "sample_rate", high_open=False)
        self.lr = check_positive(lr, "lr")
        if coordinate not in ("dead", "live"):
            raise ValueError(f"coordinate must be 'dead' or 'live', got {coordinate!r}")
        X, Y, k = load_bundled(dataset)
        ss = as_seed_sequence(seed)
        self.rng = np.random.Generator(np.random.PCG64(ss))
        gen = torch.Generator().manual_seed(int(ss.generate_state(1)[0]))
        module = nn.Linear(X.shape[1], k).double()
        with torch.no_grad():
            module.weight.normal_(0, 0.01, generator=gen)
            module.bias.zero_()
        self.fm = FunctionalModel(module)
        self.theta = self.fm.theta()
        # flat layout: weight (k, d_in) row-major, then bias; the canary is weight[0, feature]
        var = X.var(axis=0)
        self.feature = (int(np.flatnonzero(var == 0)[0]) if coordinate == "dead"
                        else int(np.argmax(var)))
        if coordinate == "dead" and np.any(X[:, self.feature] != 0):
            raise ValueError("no all-zero feature for a dead-coordinate canary in this dataset")
        self.j = self.feature
        self.xt = torch.as_tensor(X, dtype=torch.float64)
        self.yt = torch.as_tensor(Y, dtype=torch.long)
        self.n = X.shape[0]
        self.steps_done = 0

    def advance(self, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Train ``k`` more DP-SGD steps; return their ``(x, y, batch_sizes)``.

        Parameters
        ----------
        k : int
            Number of steps, >= 0.

        Returns
        -------
        x : ndarray, shape (k,)
            Canary observation of each step.
        y : ndarray, shape (k,)
            Its pair.
        batch_sizes : ndarray of int, shape (k,)
            Batch size of each step.
        """
        k = check_int(k, "k", minimum=0)
        xs, ys, bs = np.empty(k), np.empty(k), np.empty(k, dtype=int)
        threads = torch.get_num_threads()
        torch.set_num_threads(1)  # small per-step batches: threading only adds contention
        try:
            for t in range(k):
                xs[t], ys[t], bs[t] = self._step()
        finally:
            torch.set_num_threads(threads)
        self.steps_done += k
        return xs, ys, bs

    def _step(self) -> tuple[float, float, int]:
        rng, clip, sigma = self.rng, self.clip, self.sigma
        idx = np.flatnonzero(rng.random(self.n) < self.q)
        if idx.size:
            g = clip_rows(self.fm.per_sample_grads(self.theta, self.xt[idx], self.yt[idx]),
                          clip).sum(0)
        else:
            g = torch.zeros_like(self.theta)
        noisy = g + torch.as_tensor(rng.normal(0.0, sigma * clip, self.theta.numel()))
        x = float(noisy[self.j]) / clip
        y = float(g[self.j]) / clip + 1.0 + sigma * rng.standard_normal()
        self.theta = self.theta - self.lr * noisy / max(self.q * self.n, 1.0)
        return x, y, int(idx.size)

    def pair_source(self):
        """A :class:`~semi_core.audit.sequential.PairSource` that trains as pairs are drawn.

        Returns
        -------
        PairSource
            A source whose draws train the model.
        """
        from semi_core.audit.sequential import PairSource

        def draw(size, rng):  # the trainer's own generator drives batches and noise
            x, y, _ = self.advance(size)
            return x[:, None], y[:, None]

        return PairSource(draw, name="dpsgd-canary")
