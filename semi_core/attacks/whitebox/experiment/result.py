"""The result of an attack experiment (:class:`AttackRun`) and its metrics: ROC metrics with
intervals per attack and the agreement matrix.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np

from semi_core._table import ResultDisplay, Table
from semi_core._validation import check_probability
from semi_core.attacks.whitebox.experiment.config import LOO_ATTACKS, AttackConfig
from semi_core.attacks.whitebox.experiment.quantities import WhiteBox
from semi_core.audit.roc import roc_metrics
from semi_core.game.play import PoolView
from semi_core.game.result import GameResult

from ..mechanism import TrainedModelMechanism

__all__ = ["AttackRun", "attack_metrics", "agreement_matrix"]


@dataclass(repr=False)
class AttackRun(ResultDisplay):
    """Result of :func:`run_attacks`.

    Prints as one line; ``summary()`` is a table with one row per attack (AUC and TPR at FPR
    1 % and 0.1 % with exact binomial intervals, the LOO attacks on their subset),
    ``to_frame()`` the same as a ``DataFrame``, ``to_dict()`` the configuration, sizes and
    times (JSON-safe).

    ``view`` is the population game (the mechanism, every model's weights, the membership
    matrix) and ``targets[t]`` the records scored on target model ``t``; :attr:`whitebox`
    gives each target model's :class:`WhiteBox` (kept from the scorer, or computed here after
    a run on Dask).
    """

    config: AttackConfig
    result: GameResult
    loo_result: GameResult | None
    seconds: dict[str, float]
    setup: dict
    view: PoolView | None = field(default=None, repr=False)
    targets: list = field(default_factory=list, repr=False)
    _whitebox: dict = field(default_factory=dict, repr=False)

    @property
    def whitebox(self) -> list[WhiteBox]:
        """One :class:`WhiteBox` per target model, in model order."""
        for t, rec in enumerate(self.targets):
            if t not in self._whitebox:
                self._whitebox[t] = WhiteBox(self.view, t, rec, damping=self.config.damping,
                                             cg_tol=self.config.cg_tol,
                                             loss_scale=self.config.loss_scale,
                                             sgd=self.config.sgd)
        return [self._whitebox[t] for t in range(len(self.targets))]

    @property
    def mechanism(self) -> TrainedModelMechanism | None:
        """The pool mechanism that trained the models."""
        return None if self.view is None else self.view.mech

    def __repr__(self) -> str:
        return (f"AttackRun(dataset={self.config.dataset!r}, model={self.config.model!r}, "
                f"models={self.config.n_models}, rounds={self.result.rounds}, "
                f"attacks={list(self.result.stats)})")

    def summary(self) -> Table:
        """One row per attack: ``attack, auc, tpr@1%, tpr@0.1%`` (exact binomial intervals
        conditional on the threshold), the class sizes and whether 0.1 % is resolvable.

        Returns
        -------
        Table
            One row per attack.
        """
        rows = []
        games = [(self.result, "")] + ([(self.loo_result, "@loo-subset")]
                                       if self.loo_result is not None else [])
        for game, tag in games:
            for name in game.stats:
                m, nm = game.scores(name)
                r = roc_metrics(m, nm, fpr=(0.01, 0.001), interval="binomial")
                key = name if (not tag or name in LOO_ATTACKS) else name + tag
                rows.append({"attack": key, "auc": r.auc,
                             "tpr@1%": r.tpr_at_fpr[0], "tpr@1%_lower": r.tpr_at_fpr_interval[0][0],
                             "tpr@0.1%": r.tpr_at_fpr[1],
                             "tpr@0.1%_lower": r.tpr_at_fpr_interval[1][0],
                             "resolvable@0.1%": bool(r.resolvable[1]),
                             "members": r.n_member, "non_members": r.n_nonmember})
        return Table(rows, title=repr(self))

    def to_dict(self) -> dict:
        """Configuration, set-up, times and the games' sizes (JSON-safe).

        Returns
        -------
        dict
            ``config``, ``setup``, ``seconds`` and the games' sizes.
        """
        return {"config": asdict(self.config), "setup": self.setup, "seconds": self.seconds,
                "rounds": self.result.rounds,
                "loo_rounds": None if self.loo_result is None else self.loo_result.rounds,
                "attacks": list(self.result.stats)}

    def metrics(self, *, fpr=(0.01, 0.001), n_bootstrap: int = 200, seed: int = 0) -> dict:
        """Per attack: AUC, TPR at ``fpr`` with intervals (LOO attacks on the LOO subset).

        Parameters
        ----------
        fpr : sequence of float
            FPR levels.
        n_bootstrap : int
            Bootstrap replicates of the intervals.
        seed : int
            Seed of the bootstrap.

        Returns
        -------
        dict
            :func:`attack_metrics` of each attack.
        """
        out = {}
        for name in self.result.stats:
            out[name] = attack_metrics(self.result, name, fpr=fpr, n_bootstrap=n_bootstrap,
                                       seed=seed)
        if self.loo_result is not None:
            for name in self.loo_result.stats:
                key = name if name in LOO_ATTACKS else f"{name}@loo-subset"
                out[key] = attack_metrics(self.loo_result, name, fpr=fpr,
                                          n_bootstrap=n_bootstrap, seed=seed)
        return out


def attack_metrics(result: GameResult, name: str, *, fpr=(0.01, 0.001), n_bootstrap: int = 200,
                   seed: int = 0) -> dict:
    """AUC and TPR at each FPR level with 95 % bootstrap intervals
    (:func:`semi_core.audit.roc.roc_metrics`), plus the class sizes, the FPR resolution
    ``1/n_nonmember`` and ``tpr_at_fpr_resolvable`` (false: the level is below the resolution
    and the cell is the TPR at FPR 0).

    Parameters
    ----------
    result : GameResult
        The games.
    name : str
        The attack (a statistic of ``result``).
    fpr : sequence of float
        FPR levels.
    n_bootstrap : int
        Bootstrap replicates.
    seed : int
        Seed of the bootstrap.

    Returns
    -------
    dict
        AUC and TPRs with intervals, class sizes, FPR resolution and resolvability.
    """
    m, nm = result.scores(name)
    r = roc_metrics(m, nm, fpr=fpr, interval="bootstrap", n_bootstrap=n_bootstrap, seed=seed)
    return {"auc": r.auc, "auc_interval": list(r.auc_interval),
            "tpr_at_fpr": {f"{f:g}": v for f, v in zip(r.fpr_levels, r.tpr_at_fpr, strict=True)},
            "tpr_at_fpr_interval": {f"{f:g}": list(iv) for f, iv in
                                    zip(r.fpr_levels, r.tpr_at_fpr_interval, strict=True)},
            "tpr_at_fpr_resolvable": {f"{f:g}": ok for f, ok in
                                      zip(r.fpr_levels, r.resolvable, strict=True)},
            "fpr_resolution": r.fpr_resolution,
            "n_member": r.n_member, "n_nonmember": r.n_nonmember}


def agreement_matrix(result: GameResult, names, *, fpr: float) -> dict:
    """Agreement rates between attacks' decisions and the ground truth (seed Table 5).

    Each attack thresholds at the largest score level whose empirical FPR is ``<= fpr``; the
    returned ``members[a][b]`` / ``nonmembers[a][b]`` are the fractions of members /
    non-members on which ``a`` and ``b`` decide alike (``b = "GT"``: the ground truth, i.e. TPR
    and 1 - FPR).

    Parameters
    ----------
    result : GameResult
        The games.
    names : sequence of str
        Attacks compared.
    fpr : float
        FPR of every attack's threshold, in (0, 1).

    Returns
    -------
    dict
        ``members`` and ``nonmembers`` agreement rates (``[a][b]``, ``b`` may be ``"GT"``).
    """
    fpr = check_probability(fpr, "fpr")
    names = list(names)
    pred = {}
    for a in names:
        s = result.stats[a]
        neg = np.sort(s[~result.member])[::-1]
        k = int(np.floor(fpr * neg.size))
        thr = neg[min(k, neg.size - 1)]
        pred[a] = s > thr
    pred["GT"] = result.member.copy()
    out = {}
    for side, mask in (("members", result.member), ("nonmembers", ~result.member)):
        out[side] = {a: {b: float(np.mean(pred[a][mask] == pred[b][mask])) for b in pred}
                     for a in pred}
    out["fpr"] = fpr
    return out
