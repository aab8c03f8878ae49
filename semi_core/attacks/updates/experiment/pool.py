"""The runs of Alg. 1 as a pool mechanism of the game runner (:class:`UpdateRunPool`) and the
candidates' per-snapshot losses as its scorer (:class:`CandidateLossScorer`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from semi_core.attacks.updates.experiment.config import UpdateConfig
from semi_core.attacks.updates.experiment.data import _draw

from ..training import run_updates

__all__ = ["UpdateRunPool", "CandidateLossScorer"]


class UpdateRunPool:
    r"""Pool mechanism of the update experiment: one run of Alg. 1 per model (:func:`play_pool`).

    The pool's records are the ``2 k n_up`` *candidate slots* of a run. For each membership row
    (exactly ``k n_up`` slots IN), the run draws, from its own generator, :math:`D_0` and one
    candidate record per slot from its data pool (:func:`_draw`); the IN slots, in slot order,
    fill :math:`D_1,\dots,D_k` (``n_up`` each: IN slot ``i`` goes to update
    :math:`\lfloor i/n_{up}\rfloor+1`), the OUT slots are the run's test points. The release of
    a run is its snapshots :math:`f_0..f_k` (flattened) followed by the candidates' record
    indices: what the attacker observes (the models and the candidate set, not which are IN).
    Runs of one chunk are trained together as replicas, each as if alone.
    """

    def __init__(self, cfg: UpdateConfig, fm, theta_init, x_all, y_all, src, pool, *,
                 replace_ok: bool = False):
        self.cfg, self.fm, self.theta_init = cfg, fm, theta_init
        self.x, self.y = x_all, y_all
        self.src = np.asarray(src, dtype=bool)
        self.pool = np.asarray(pool, dtype=np.int64)
        self.replace_ok = bool(replace_ok)
        self.n_records = 2 * cfg.k * cfg.n_up
        self.T = cfg.k + 1

    def params(self) -> dict:
        """Validated parameters (JSON).

        Returns
        -------
        dict
            The run configuration.
        """
        return {"mechanism": "update-runs", "update": self.cfg.update, "model": self.cfg.model,
                "k": self.cfg.k, "n_up": self.cfg.n_up, "n0": self.cfg.n0,
                "pool_size": int(self.pool.size), "d": self.fm.d}

    def release_pool(self, rows, rng: np.random.Generator) -> np.ndarray:
        """Train one run per row; ``(m, (k+1) d + 2 k n_up)`` (snapshots, candidate indices).

        Parameters
        ----------
        rows : ndarray of bool, shape (m, n_records)
            Records of each run's pool.
        rng : numpy.random.Generator
            Source of the runs' seeds.

        Returns
        -------
        ndarray, shape (m, (k+1) d + 2 k n_up)
            Snapshots and candidate indices of each run.
        """
        rows = np.asarray(rows, dtype=bool)
        cfg, k, n_up = self.cfg, self.cfg.k, self.cfg.n_up
        if rows.ndim != 2 or rows.shape[1] != self.n_records or \
                (rows.sum(axis=1) != k * n_up).any():
            raise ValueError(f"each membership row must hold {self.n_records} candidate slots, "
                             f"exactly k * n_up = {k * n_up} of them IN")
        m = rows.shape[0]
        rngs = [np.random.default_rng(s) for s in
                np.random.SeedSequence(rng.integers(2**63, size=4).tolist()).spawn(m)]
        base, upd, cand = [], [], []
        for r, g in enumerate(rngs):  # each run's data from its own generator (not a game loop)
            d0, c = _draw(g, self.pool, self.src, cfg, self.n_records, replace_ok=self.replace_ok)
            base.append(d0)
            upd.append(c[rows[r]])
            cand.append(c)
        tx = lambda idx: torch.as_tensor(self.x[np.stack(idx)], dtype=torch.float64)  # noqa: E731
        ty = lambda idx: torch.as_tensor(self.y[np.stack(idx)], dtype=torch.long)  # noqa: E731
        snaps = run_updates(self.fm, self.theta_init, tx(base), ty(base),
                            tx(upd).reshape(m, k, n_up, -1), ty(upd).reshape(m, k, n_up),
                            update=cfg.update, base_cfg=cfg.base_cfg, update_cfg=cfg.update_cfg,
                            rngs=rngs)
        return np.concatenate([snaps.numpy().reshape(m, -1),
                               np.stack(cand).astype(np.float64)], axis=1)

    def snapshots(self, models) -> torch.Tensor:
        """The snapshots :math:`f_0..f_k` of released runs, ``(m, k+1, d)``.

        Parameters
        ----------
        models : array_like, shape (m, (k+1) d + 2 k n_up)
            Released runs.

        Returns
        -------
        torch.Tensor, shape (m, k+1, d)
            The snapshots.
        """
        models = np.asarray(models, dtype=np.float64)
        return torch.as_tensor(models[:, :self.T * self.fm.d].reshape(-1, self.T, self.fm.d))

    def candidates(self, models) -> np.ndarray:
        """The candidates' record indices of released runs, ``(m, 2 k n_up)``.

        Parameters
        ----------
        models : array_like, shape (m, (k+1) d + 2 k n_up)
            Released runs.

        Returns
        -------
        ndarray of int64, shape (m, 2 k n_up)
            The candidates' record indices.
        """
        return np.asarray(models)[:, self.T * self.fm.d:].astype(np.int64)


@dataclass(frozen=True)
class CandidateLossScorer:
    """Pool scorer of :class:`UpdateRunPool`: the cross-entropy ``loss@i`` of each candidate on
    snapshot :math:`f_i` (``i = 0..k``; loss-like, low = member: the combiners of
    :mod:`semi_core.stats.update_combination` turn them into scores) and ``gap`` (1 when the
    final model classifies the candidate correctly, the Gap baseline)."""

    mech: UpdateRunPool

    @property
    def names(self) -> tuple[str, ...]:
        return (*(f"loss@{i}" for i in range(self.mech.T)), "gap")

    def __call__(self, view, t, records, rng) -> dict[str, np.ndarray]:
        mech = self.mech
        th = mech.snapshots(view.models[t:t + 1])[0]                        # (k+1, d)
        idx = mech.candidates(view.models[t:t + 1])[0][records]
        x = torch.as_tensor(mech.x[idx], dtype=torch.float64)
        y = torch.as_tensor(mech.y[idx], dtype=torch.long)
        with torch.no_grad():
            out = {f"loss@{i}": mech.fm.losses(th[i], x, y).numpy() for i in range(mech.T)}
            pred = _forward(mech.fm, th[-1], x).argmax(-1)
        out["gap"] = (pred == y).numpy().astype(float)
        return out


def _forward(fm, theta, x):
    params = {**fm.frozen, **fm.unflatten(theta)}
    return torch.func.functional_call(fm.module, params, (x,))
