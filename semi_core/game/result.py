"""One result type for every game of the toolkit: :class:`GameResult`.

Every game -- the NumPy reference SeMI game, the compiled engine, the noisy-mean and DP-SGD
audit games, and the games of later seeds -- returns a :class:`GameResult`: the Crafter's bits
``member`` (B), the insertion times ``tau``, one score array per test (higher = member), the
root seed, and free-form metadata (mechanism parameters, mode, timings). Summaries
(:func:`semi_core.audit.roc.summarize`) and audits (:func:`semi_core.audit.games.audit_game_result`)
consume it, so nothing downstream depends on which game produced it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from semi_core._table import Table, require_pandas
from semi_core._validation import as_score_array

__all__ = ["GameResult"]


@dataclass(repr=False)
class GameResult:
    """Outcome of R rounds of a membership game.

    Attributes
    ----------
    member : ndarray of bool, shape (R,)
        The Crafter's insertion indicator B.
    tau : ndarray of int, shape (R,)
        The insertion time of each round (1..T; drawn for every round, as in Alg. 1).
    stats : dict of str -> ndarray, shape (R,)
        Test statistics (higher = member), keyed by test name
        (:class:`semi_core._names.Test` for the sequential tests).
    seed : int or None
        Entropy of the root ``SeedSequence`` (``None`` if unknown).
    metadata : dict
        Mechanism parameters and how the result was produced (JSON-serialisable values).
    partial : bool
        True when the run was interrupted and holds only the rounds that finished.
    """

    member: np.ndarray
    tau: np.ndarray
    stats: dict[str, np.ndarray] = field(default_factory=dict)
    seed: int | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    partial: bool = False

    def __post_init__(self):
        self.member = np.asarray(self.member, dtype=bool).reshape(-1)
        tau = np.asarray(self.tau, dtype=np.int64)
        # a scalar tau (one insertion time for every round) is expanded; an array is kept as is
        self.tau = tau if tau.shape == self.member.shape else \
            np.broadcast_to(tau, self.member.shape).copy()
        for k, v in self.stats.items():
            # the one score converter: exact, or refused with its type named (complex values,
            # masked arrays with masked entries: np.asarray would drop the mask silently)
            v = as_score_array(v, f"stats[{k!r}]")
            if v.shape != self.member.shape:
                raise ValueError(f"stats[{k!r}] must have shape {self.member.shape}, got {v.shape}")
            self.stats[k] = v

    @property
    def rounds(self) -> int:
        """Number of rounds R."""
        return int(self.member.size)

    @property
    def tests(self) -> tuple[str, ...]:
        """Names of the statistics held."""
        return tuple(self.stats)

    def scores(self, test: str) -> tuple[np.ndarray, np.ndarray]:
        """``(member_scores, nonmember_scores)`` of ``test``.

        Parameters
        ----------
        test : str
            A key of ``stats``.

        Returns
        -------
        member_scores, nonmember_scores : ndarray
            The scores of each class.
        """
        if test not in self.stats:
            raise ValueError(f"test must be one of {list(self.stats)}, got {test!r}")
        s = self.stats[test]
        return s[self.member], s[~self.member]

    def subset(self, mask) -> GameResult:
        """The rounds selected by a boolean mask or index array (e.g. one insertion time).

        Parameters
        ----------
        mask : array_like of bool or int
            Rounds to keep.

        Returns
        -------
        GameResult
            The selected rounds.
        """
        idx = np.asarray(mask)
        return GameResult(self.member[idx], self.tau[idx],
                          {k: v[idx] for k, v in self.stats.items()}, self.seed,
                          dict(self.metadata), self.partial)

    @staticmethod
    def concatenate(parts: list[GameResult]) -> GameResult:
        """Join chunk results in order (seed and metadata from the first part).

        Parameters
        ----------
        parts : list of GameResult
            Chunk results (at least one).

        Returns
        -------
        GameResult
            The joined result.
        """
        if not parts:
            raise ValueError("parts must hold at least one GameResult")
        first = parts[0]
        return GameResult(
            member=np.concatenate([p.member for p in parts]),
            tau=np.concatenate([p.tau for p in parts]),
            stats={k: np.concatenate([p.stats[k] for p in parts]) for k in first.stats},
            seed=first.seed, metadata=dict(first.metadata),
            partial=any(p.partial for p in parts),
        )

    def __repr__(self) -> str:
        taus = np.unique(self.tau) if self.tau.size else np.array([], dtype=np.int64)
        tau = (f"{taus[0]}" if taus.size == 1 else f"{taus.min()}..{taus.max()}") \
            if taus.size else "-"
        flag = ", partial" if self.partial else ""
        return (f"GameResult(rounds={self.rounds}, members={int(self.member.sum())}, "
                f"tests={list(self.stats)}, tau={tau}, seed={self.seed}{flag})")

    def summary(self) -> Table:
        r"""Per test: games per class and the mean / standard deviation of the scores in each
        class, with the standardised separation :math:`(\bar s_1-\bar s_0)/s_{pooled}`
        (ROC metrics and certified bounds: :func:`semi_core.audit.roc.summarize`,
        :func:`semi_core.audit.games.audit_game_result`).

        Returns
        -------
        Table
            One row per test.
        """
        rows = []
        for name, v in self.stats.items():
            a, b = v[self.member], v[~self.member]
            fa, fb = a[np.isfinite(a)], b[np.isfinite(b)]
            m1 = float(fa.mean()) if fa.size else float("nan")
            m0 = float(fb.mean()) if fb.size else float("nan")
            s1 = float(fa.std(ddof=1)) if fa.size > 1 else float("nan")
            s0 = float(fb.std(ddof=1)) if fb.size > 1 else float("nan")
            pooled = float(np.sqrt((s1**2 + s0**2) / 2))
            rows.append({"test": name, "members": int(a.size), "non_members": int(b.size),
                         "mean_member": m1, "mean_non_member": m0, "sd_member": s1,
                         "sd_non_member": s0,
                         "separation": (m1 - m0) / pooled if pooled > 0 else float("nan")})
        return Table(rows, title=repr(self))

    def _repr_html_(self) -> str:
        return self.summary()._repr_html_()

    def to_frame(self):
        """Tidy long form, one row per (round, test): ``round, member, tau, test, score``
        (pandas optional).

        Returns
        -------
        pandas.DataFrame
            The long form.
        """
        pd = require_pandas()
        k = len(self.stats)
        return pd.DataFrame({
            "round": np.tile(np.arange(self.rounds), k),
            "member": np.tile(self.member, k),
            "tau": np.tile(self.tau, k),
            "test": np.repeat(list(self.stats), self.rounds),
            "score": np.concatenate(list(self.stats.values())) if k else np.array([]),
        })

    def to_dict(self, *, arrays: bool = False) -> dict[str, Any]:
        """Plain dict: counts, seed and metadata (and the arrays when ``arrays``).

        Parameters
        ----------
        arrays : bool
            Include ``member``, ``tau`` and the scores as lists.

        Returns
        -------
        dict of str
            The summary.
        """
        out: dict[str, Any] = {"rounds": self.rounds, "members": int(self.member.sum()),
                               "tests": list(self.stats), "seed": self.seed,
                               "partial": self.partial, "metadata": self.metadata}
        if arrays:
            out.update(member=self.member, tau=self.tau, stats=self.stats)
        return out
