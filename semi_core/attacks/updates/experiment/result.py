"""The raw outcome of an update experiment (:class:`UpdateRun`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from semi_core._table import ResultDisplay, Table
from semi_core.attacks.updates.experiment.config import UpdateConfig

__all__ = ["UpdateRun"]


@dataclass(repr=False)
class UpdateRun(ResultDisplay):
    """Raw outcome: loss-like scores of every candidate on every snapshot, per score type.

    ``scores[s]`` is ``(trials, k+1, N)`` for the trial candidates, ``shadow[s]`` the same for the
    shadow runs' candidates, ``rank_out[s]`` ``(trials, k+1, M)`` for the attacker's known-OUT
    points on the *target* snapshots; ``member`` / ``entry`` ``(N,)`` the candidates' truth (same
    layout every trial), ``correct_final`` ``(trials, N)`` whether :math:`f_k` classifies each
    candidate correctly (the Gap baseline).

    Prints as one line; ``summary()`` is a table per score type (trials, candidates, models'
    test accuracy); the attack metrics are :func:`summarize`'s.
    """

    cfg: UpdateConfig
    scores: dict[str, np.ndarray]
    shadow: dict[str, np.ndarray]
    rank_out: dict[str, np.ndarray]
    member: np.ndarray
    entry: np.ndarray
    correct_final: np.ndarray
    test_accuracy: dict[str, float]
    seconds: float
    extra: dict[str, Any] = field(default_factory=dict)

    def __repr__(self) -> str:
        c = self.cfg
        return (f"UpdateRun(update={c.update!r}, k={c.k}, n_up={c.n_up}, trials={c.trials}, "
                f"scores={list(self.scores)}, seconds={self.seconds:.1f})")

    def summary(self) -> Table:
        """One row per score type: ``score, trials, candidates, members, test accuracy``.

        Returns
        -------
        Table
            One row per score type.
        """
        rows = [{"score": name, "trials": int(v.shape[0]), "snapshots": int(v.shape[1]),
                 "candidates": int(v.shape[2]), "members": int(self.member.sum()),
                 **{f"test_acc_{k}": float(a) for k, a in self.test_accuracy.items()}}
                for name, v in self.scores.items()]
        return Table(rows, title=repr(self))

    def to_dict(self) -> dict[str, Any]:
        """Configuration, sizes, test accuracy and time (JSON-safe; no score arrays).

        Returns
        -------
        dict
            Configuration, sizes, test accuracy and time.
        """
        return {"config": asdict(self.cfg), "scores": list(self.scores),
                "candidates": int(self.member.size), "members": int(self.member.sum()),
                "test_accuracy": dict(self.test_accuracy), "seconds": self.seconds}
