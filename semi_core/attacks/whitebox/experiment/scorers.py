"""The attacks as pool scorers of the game runner: white-box (IHA, LOSS, SIF), LiRA, RMIA and
the leave-one-out attacks.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from semi_core._validation import check_int, check_positive
from semi_core.attacks.whitebox.experiment.config import (
    LIRA_ATTACKS,
    LOO_ATTACKS,
    RMIA_ATTACKS,
    WHITEBOX_ATTACKS,
)
from semi_core.attacks.whitebox.experiment.quantities import WhiteBox
from semi_core.game.play import PoolView
from semi_core.sgd.momentum import SGDConfig

from ..mechanism import FORWARD_AD_LOCK
from ..scores import (
    iha_score,
    l_attack,
    lira_l,
    lira_offline,
    lira_online,
    loss_score,
    rmia,
)

__all__ = ["WhiteBoxScorer", "LiRAScorer", "RMIAScorer", "LeaveOneOutScorer"]


def _iha_method(name: str, default: str) -> str:
    return {"iha-exact": "exact", "iha-cg": "cg"}.get(name, default)


class _AttackScorer:
    """What the pool scorers of this module share: ``attacks``, drawn from the class's
    ``FAMILY``, are also the names of the scores they return."""

    FAMILY: ClassVar[tuple[str, ...]] = ()
    attacks: tuple[str, ...]

    def _check_attacks(self) -> None:
        self.attacks = tuple(self.attacks)
        bad = [a for a in self.attacks if a not in self.FAMILY]
        if not self.attacks or bad:
            raise ValueError(f"attacks must be drawn from {list(self.FAMILY)}, got "
                             f"{list(bad or self.attacks)}")

    @property
    def names(self) -> tuple[str, ...]:
        return self.attacks


@dataclass
class WhiteBoxScorer(_AttackScorer):
    r"""Pool scorer of the white-box attacks on target model ``t``: IHA (seed Eq. 8; ``iha``
    with ``hessian``, ``iha-exact`` / ``iha-cg`` explicitly), LOSS and SIF. One
    :class:`WhiteBox` per target model serves every attack (gradients and the inverse Hessian
    are computed once). Calls hold :data:`~semi_core.attacks.whitebox.mechanism.FORWARD_AD_LOCK`
    (forward-mode AD is process-wide in PyTorch), so on threads the white-box scoring of target
    models runs one at a time; on Dask workers (processes) it runs in parallel.

    ``kept`` receives ``t -> (WhiteBox, seconds per attack)`` where the scorer runs in this
    process (in-process or threads; a Dask worker's copy is not sent back).
    """

    FAMILY: ClassVar[tuple[str, ...]] = WHITEBOX_ATTACKS
    attacks: tuple[str, ...]
    hessian: str = "exact"
    damping: float = 0.2
    cg_tol: float = 1e-10
    loss_scale: float = 1.0
    sgd: SGDConfig | None = None
    kept: dict = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self):
        self._check_attacks()
        if self.hessian not in ("exact", "cg"):
            raise ValueError(f"hessian must be 'exact' or 'cg', got {self.hessian!r}")
        if not (np.isfinite(self.damping) and self.damping >= 0):
            raise ValueError(f"damping must be finite and >= 0, got {self.damping!r}")
        check_positive(self.cg_tol, "cg_tol")

    def __call__(self, view: PoolView, t: int, records, rng) -> dict[str, np.ndarray]:
        with FORWARD_AD_LOCK:   # the Hessian, HVPs and CG use forward-mode AD (process-wide)
            return self._score(view, t, records)

    def _score(self, view: PoolView, t: int, records) -> dict[str, np.ndarray]:
        t0 = time.perf_counter()
        wb = WhiteBox(view, t, records, damping=self.damping, cg_tol=self.cg_tol,
                      loss_scale=self.loss_scale, sgd=self.sgd)
        seconds = {"gradients": time.perf_counter() - t0}
        invs: dict[str, object] = {}
        out = {}
        for a in self.attacks:
            t0 = time.perf_counter()
            if a == "loss":
                s = loss_score(wb.losses)
            else:
                method = _iha_method(a, self.hessian)
                if method not in invs:
                    invs[method] = wb.inverse(method)
                inv = invs[method]
                s = wb.sif(inv) if a == "sif" else iha_score(wb.iha_terms(inv), lr=wb.sgd.lr)
            seconds[a] = time.perf_counter() - t0
            out[a] = np.asarray(s, dtype=float)
        seconds.update({f"hessian@model{t}": v for k, v in wb.seconds.items() if k == "hessian"})
        self.kept[int(t)] = (wb, seconds)
        return out


@dataclass
class LiRAScorer(_AttackScorer):
    r"""Pool scorer of LiRA (Carlini et al. 2022; seed §4.1) on target model ``t``: the
    logit-scaled confidences of every model on the records, the other models as reference
    models, IN / OUT by the membership matrix; online (Gaussian LR) or offline (OUT tail),
    per-example or ``-global`` variance (:func:`~semi_core.attacks.whitebox.scores.lira_online`,
    :func:`~semi_core.attacks.whitebox.scores.lira_offline`)."""

    FAMILY: ClassVar[tuple[str, ...]] = LIRA_ATTACKS
    attacks: tuple[str, ...]
    kept: dict = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self):
        self._check_attacks()

    def __call__(self, view: PoolView, t: int, records, rng) -> dict[str, np.ndarray]:
        mech = view.mech
        records = np.asarray(records, dtype=np.int64)
        t0 = time.perf_counter()
        phi_all = mech.confidences(view.models, mech.candidates[records])   # (M, k)
        refs = view.reference_models(t)
        phi, ref_phi = phi_all[t], phi_all[refs].T
        ref_in = view.membership[np.ix_(refs, records)].T
        seconds = {"confidences": time.perf_counter() - t0}
        out = {}
        for a in self.attacks:
            t0 = time.perf_counter()
            fn = lira_online if a.startswith("lira-online") else lira_offline
            out[a] = np.asarray(fn(phi, ref_phi, ref_in, variance="global" if
                                   a.endswith("global") else "per-example"), dtype=float)
            seconds[a] = time.perf_counter() - t0
        self.kept[int(t)] = seconds
        return out


@dataclass
class RMIAScorer(_AttackScorer):
    r"""Pool scorer of RMIA (Zarifzadeh et al. 2024) on target model ``t``, on the same
    reference models as LiRA (every other model of the population game; IN / OUT by the
    membership matrix): :func:`~semi_core.attacks.whitebox.scores.rmia` with ``rmia`` the
    online marginal (all reference models) and ``rmia-offline`` the OUT models with the
    paper's ``a`` correction.

    Population samples :math:`z`: the pool records outside target ``t``'s training set (the
    auditor's known non-members; a scored record is never compared with itself), at most
    ``population`` of them drawn with the scorer's ``rng`` (``None``: all); offline, those
    with no OUT reference model are left out of the population (a scored record without one is
    refused). Probabilities are
    :math:`\sigma(\phi)` of the logit-scaled confidences LiRA uses.
    """

    FAMILY: ClassVar[tuple[str, ...]] = RMIA_ATTACKS
    attacks: tuple[str, ...]
    gamma: float = 1.0
    offline_a: float = 0.3
    population: int | None = None
    kept: dict = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self):
        self._check_attacks()
        check_positive(self.gamma, "gamma")
        if not (isinstance(self.offline_a, int | float) and 0.0 <= self.offline_a <= 1.0):
            raise ValueError(f"offline_a must be in [0, 1], got {self.offline_a!r}")
        if self.population is not None:
            check_int(self.population, "population", minimum=1)

    def __call__(self, view: PoolView, t: int, records, rng) -> dict[str, np.ndarray]:
        mech = view.mech
        records = np.asarray(records, dtype=np.int64)
        t0 = time.perf_counter()
        pop = np.flatnonzero(~view.membership[t])
        if self.population is not None and self.population < pop.size:
            pop = np.sort(rng.choice(pop, size=self.population, replace=False))
        if pop.size < 2:
            raise ValueError(f"RMIA needs >= 2 population records outside target model {t}'s "
                             f"training set, got {pop.size}")
        union, inv = np.unique(np.concatenate([records, pop]), return_inverse=True)
        phi_all = mech.confidences(view.models, mech.candidates[union])   # (M, u)
        refs = view.reference_models(t)
        ix, iz = inv[:records.size], inv[records.size:]
        pos = {int(r): j for j, r in enumerate(pop)}
        exclude = np.array([pos.get(int(r), -1) for r in records], dtype=np.int64)
        ref_in = view.membership[np.ix_(refs, union)].T
        out, seconds = {}, {"confidences": time.perf_counter() - t0}
        for a in self.attacks:
            t0 = time.perf_counter()
            keep = np.ones(iz.size, dtype=bool)
            if a == "rmia-offline":   # population samples need an OUT model (all, in practice)
                keep = (~ref_in[iz]).any(axis=1)
            renum = np.cumsum(keep) - 1
            ex = np.where((exclude >= 0) & keep[np.maximum(exclude, 0)],
                          renum[np.maximum(exclude, 0)], -1)
            out[a] = rmia(phi_all[t, ix], phi_all[refs][:, ix].T, ref_in[ix],
                          phi_all[t, iz[keep]], phi_all[refs][:, iz[keep]].T, ref_in[iz[keep]],
                          gamma=self.gamma,
                          offline_a=self.offline_a if a == "rmia-offline" else None,
                          exclude=ex)
            seconds[a] = time.perf_counter() - t0
        self.kept[int(t)] = seconds
        return out


@dataclass
class LeaveOneOutScorer(_AttackScorer):
    r"""Pool scorer of the leave-one-out attacks (seed §4.4) on the leave-one-out game.

    For record :math:`z` the reference models are those trained on
    :math:`D\setminus\{z\}`: the rows of the membership matrix equal to row ``t``'s with
    :math:`z` left out (:math:`D` itself for a non-member). The L-attack compares the attacked
    model's loss ``target_losses`` on :math:`z` with theirs, LiRA-L its confidence
    ``target_phi`` with a Gaussian fit of theirs (:func:`~semi_core.attacks.whitebox.scores.
    l_attack`, :func:`~semi_core.attacks.whitebox.scores.lira_l`).
    """

    FAMILY: ClassVar[tuple[str, ...]] = LOO_ATTACKS
    attacks: tuple[str, ...]
    target_losses: np.ndarray
    target_phi: np.ndarray

    def __post_init__(self):
        self._check_attacks()

    def __call__(self, view: PoolView, t: int, records, rng) -> dict[str, np.ndarray]:
        mech = view.mech
        records = np.asarray(records, dtype=np.int64)
        if records.shape != self.target_losses.shape:
            raise ValueError(f"the leave-one-out scorer holds {self.target_losses.size} target "
                             f"scores, asked for {records.size} records")
        memb = view.membership[:, records]
        refs = []
        for j in range(records.size):   # models trained on D \ {z_j}
            want = memb[t].copy()
            want[j] = False
            refs.append(np.flatnonzero((memb == want).all(axis=1)))
        if len({r.size for r in refs}) != 1 or refs[0].size < 2:
            raise ValueError(f"every record needs the same number (>= 2) of leave-one-out "
                             f"models, got {sorted({r.size for r in refs})}")
        refs = np.stack(refs)                                    # (k, K)
        cols = np.arange(records.size)[:, None]
        idx = mech.candidates[records]
        out = {}
        if "l-attack" in self.attacks:
            out["l-attack"] = l_attack(self.target_losses,
                                       mech.losses(view.models, idx)[refs, cols])
        if "lira-l" in self.attacks:
            out["lira-l"] = lira_l(self.target_phi,
                                   mech.confidences(view.models, idx)[refs, cols])
        return out
