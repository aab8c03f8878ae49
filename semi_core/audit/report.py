r"""The one report of every "audit X" entry point (:class:`AuditReport`).

An audit certifies :math:`\underline\varepsilon` for one or several tests (statistics of a game,
scores of canaries) by one or several methods of :func:`~semi_core.audit.bounds.epsilon_lower_bound`.
The report holds, per test :math:`\times` method, the certified bound
(:class:`~semi_core.audit.bounds.AuditResult`: the bound, the rates, the counts, the method and the
assumption it rests on), the largest :math:`\varepsilon` these numbers of games could certify
(:func:`~semi_core.audit.selection.certifiable_epsilon_max`), and, when an :math:`\varepsilon` is
given to check against (a claim or an accountant's), which bounds refute it:

.. math::

    \text{refuted} = \{(t, m) : \underline\varepsilon_{t,m} > \varepsilon_{\text{against}},\
        \text{assumption}_{t,m}\ \text{distribution-free}\},

the bounds above it that rest on a parametric assumption (``mu-gdp``, ``gaussian-scores``, ...)
listed apart (``refuted_under_assumption``): they are evidence only where that assumption holds.

Every entry point keeps its own JSON (``to_dict()``): the entries of its setting come before the
bounds (``header``), its notes and timings after (``trailer``), and the bounds sit under
``bounds_key`` as ``{test: {method: dict}}`` or, for one method, ``{test: dict}``.
:func:`certify_game` is the one home of "several methods on one game".
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from numbers import Real
from typing import Any

from semi_core._table import ResultDisplay, Table, _fmt
from semi_core.audit.bounds import DEFAULT_METHOD, AuditResult, epsilon_lower_bound
from semi_core.game.result import GameResult

__all__ = ["AuditReport", "DISTRIBUTION_FREE", "certify_game", "method_specs",
           "refutation_bounds"]

#: Assumptions that hold for every mechanism and every score law (the keys of
#: :data:`~semi_core.audit.bounds.ASSUMPTIONS` without a parametric model): a bound resting on
#: one of them refutes a claim on its own.
DISTRIBUTION_FREE = frozenset({"iid-games", "iid-games+preregistered", "one-run-bernoulli-half"})


def method_specs(methods) -> dict[str, dict[str, Any]]:
    """Named certifying methods: ``{name: epsilon_lower_bound keywords}``.

    Parameters
    ----------
    methods : str, sequence of str, mapping or None
        A method of :data:`~semi_core.audit.bounds.METHODS`, several, or ``{name: keywords}``
        (e.g. ``{"gdp_gaussian": {"method": "gdp", "gdp_fit": "gaussian"}}``; ``method``
        defaults to the name). ``None``: the default method.

    Returns
    -------
    dict
        ``{name: keywords}`` with ``keywords["method"]`` set.
    """
    from semi_core.audit.bounds import METHODS

    if methods is None:
        methods = [DEFAULT_METHOD]
    elif isinstance(methods, str):
        methods = [methods]
    if isinstance(methods, Mapping):
        specs = {str(k): {"method": k, **dict(v)} for k, v in methods.items()}
    else:
        specs = {str(m): {"method": m} for m in methods}
    bad = [s["method"] for s in specs.values() if s["method"] not in METHODS]
    if not specs or bad:
        raise ValueError(f"methods must be drawn from {list(METHODS)}, got {methods!r}")
    return specs


def certify_game(result: GameResult, methods=None, *, delta: float, failure_prob: float = 0.05,
                 tests=None, ceilings: bool = True, **audit_kwargs
                 ) -> tuple[dict[str, dict[str, AuditResult]], dict[str, dict[str, float]]]:
    r"""Certify every test of one game by several methods (the game is played once).

    .. math::

        \underline\varepsilon_{t,m} = \texttt{epsilon\_lower\_bound}_m
            (S_t\mid B=1,\ S_t\mid B=0),\qquad
        \bar\varepsilon_{t,m} = \underline\varepsilon_m(S\equiv1,\ S\equiv0)

    Each (test, method) is its own audit at ``failure_prob`` (a Bonferroni correction over them
    is the caller's choice).

    Parameters
    ----------
    result : GameResult
    methods : str, sequence of str or mapping, optional
        As in :func:`method_specs` (default: the default method).
    delta, failure_prob, **audit_kwargs
        As in :func:`~semi_core.audit.bounds.epsilon_lower_bound` (``audit_kwargs`` go to every
        method, after the method's own keywords).
    tests : sequence of str, optional
        Default: every test held by ``result``.
    ceilings : bool
        Also compute the largest certifiable bound of each method
        (:func:`~semi_core.audit.selection.certifiable_epsilon_max`).

    Returns
    -------
    bounds : dict
        ``{test: {method: AuditResult}}``.
    ceilings : dict
        ``{test: {method: float}}`` (empty when ``ceilings`` is false).
    """
    from semi_core.audit.selection import certifiable_epsilon_max

    if not isinstance(result, GameResult):
        raise TypeError(f"result must be a GameResult, got {type(result).__name__}")
    if result.member.all() or not result.member.any():
        raise ValueError("the game produced one class only; increase rounds")
    specs = method_specs(methods)
    names = list(result.stats) if tests is None else list(tests)
    bounds: dict[str, dict[str, AuditResult]] = {t: {} for t in names}
    tops: dict[str, dict[str, float]] = {t: {} for t in names} if ceilings else {}
    top_of: dict[tuple, float] = {}
    for name in names:
        m, nm = result.scores(name)
        for label, kw in specs.items():
            bounds[name][label] = epsilon_lower_bound(m, nm, delta=delta,
                                                      failure_prob=failure_prob,
                                                      **{**kw, **audit_kwargs})
            if ceilings:
                # what this many games could certify at best (perfect separation): a 0 reads
                # against it; the same for every test with the same class sizes
                key = (m.size, nm.size, kw["method"])
                if key not in top_of:
                    top_of[key] = certifiable_epsilon_max(m.size, nm.size, delta=delta,
                                                          failure_prob=failure_prob,
                                                          method=kw["method"])
                tops[name][label] = top_of[key]
    return bounds, tops


def refutation_bounds(source, methods=None, *, delta: float, failure_prob: float = 0.05,
                      tests=None, **audit_kwargs) -> dict[str, dict[str, AuditResult]]:
    r"""The bounds that may refute a claim: every (test, method) pair at ``failure_prob / K``.

    A claim :math:`\varepsilon` is refuted when some pair's bound exceeds it. Each pair's
    bound at level :math:`\beta` alone would make "some pair exceeds a true claim" an event of
    probability up to :math:`K\beta` over the :math:`K` pairs; certified at :math:`\beta/K`
    (Bonferroni), a union bound keeps the whole refutation at :math:`\beta` whatever the
    dependence between the pairs (they are computed on the same games):

    .. math::

        \Pr\Big(\exists (t,m):\ \underline\varepsilon_{t,m} > \varepsilon\Big)
            \le \sum_{(t,m)} \Pr\big(\underline\varepsilon_{t,m} > \varepsilon\big)
            \le K\cdot\frac{\beta}{K} = \beta
        \qquad\text{when the mechanism is } (\varepsilon,\delta)\text{-DP}.

    (SeMI* §4, the :math:`\varepsilon` lower bound of one audit, applied to every pair.)

    Parameters
    ----------
    source : GameResult or mapping
        The game (its tests' scores) or ``{test: (member_scores, nonmember_scores)}``.
    methods : str, sequence of str or mapping, optional
        As in :func:`method_specs` (default: the default method).
    delta : float
        As in :func:`~semi_core.audit.bounds.epsilon_lower_bound`.
    failure_prob : float
        Failure probability :math:`\beta` of the whole refutation, in (0, 1).
    tests : sequence of str, optional
        Default: every test of ``source``.
    **audit_kwargs
        To every method, after the method's own keywords.

    Returns
    -------
    dict
        ``{test: {method: AuditResult}}``, each at ``failure_prob / K``.
    """
    specs = method_specs(methods)
    if isinstance(source, GameResult):
        names = list(source.stats) if tests is None else list(tests)
        K = len(names) * len(specs)
        bounds, _ = certify_game(source, specs, delta=delta, failure_prob=failure_prob / K,
                                 tests=names, ceilings=False, **audit_kwargs)
        return bounds
    if not isinstance(source, Mapping):
        raise TypeError(f"source must be a GameResult or a mapping test -> (member, nonmember) "
                        f"scores, got {type(source).__name__}")
    names = list(source) if tests is None else list(tests)
    K = len(names) * len(specs)
    return {t: {label: epsilon_lower_bound(*source[t], delta=delta,
                                           failure_prob=failure_prob / K,
                                           **{**kw, **audit_kwargs})
                for label, kw in specs.items()}
            for t in names}


@dataclass(frozen=True, repr=False)
class AuditReport(ResultDisplay):
    r"""Certified :math:`\underline\varepsilon` per test and method, and what they refute.

    Returned by every "audit X" entry point (:func:`~semi_core.audit.games.audit_game_result`,
    :func:`~semi_core.audit.games.audit_mechanism`,
    :func:`~semi_core.integrations.training.audit_training`,
    :func:`~semi_core.integrations.checkpoints.audit_checkpoints`,
    :func:`~semi_core.integrations.one_run_training.audit_one_run`,
    :func:`~semi_core.integrations.opacus.audit_opacus`,
    :func:`~semi_core.sgd.one_run.one_run_white_box`, :func:`~semi_core.sgd.one_run.one_run_black_box`,
    :func:`~semi_core.sgd.audit.run_audit`).
    Prints as one line; ``summary()`` is
    one row per test and method; ``to_dict()`` is the entry point's JSON; ``report[key]`` reads
    one entry of it (the bounds as dicts, the setting's entries as given).

    Attributes
    ----------
    bounds : dict
        ``{test: {method: AuditResult}}``.
    ceilings : dict
        ``{test: {method: float}}``: the largest bound each method can certify from these numbers
        of games (a 0 beside a small ceiling says "too few games", not "private"); empty where not
        computed (one-run audits).
    against : float or None
        The :math:`\varepsilon` the bounds are checked against (a claim, or the accountant's
        :math:`\varepsilon` of the audited relation); ``None``: nothing to refute.
    refuting : dict
        ``{test: {method: AuditResult}}`` at ``failure_prob / K`` over the ``K`` pairs
        (:func:`refutation_bounds`): what :attr:`refuted` reads, so that a refutation holds at
        ``failure_prob`` over every pair together. Required with ``against`` when the report
        holds more than one pair (with one pair the bounds themselves are read).
    header, trailer : dict
        The entry point's other entries, before and after the bounds in ``to_dict()``.
    bounds_key : str or None
        Key of the bounds in ``to_dict()``; ``None``: the bounds are the dict itself.
    per_method : bool
        ``to_dict()`` lays the bounds out as ``{test: {method: dict}}`` (else ``{test: dict}``,
        one method).
    game : GameResult or None
        The game the bounds were certified on (not in ``to_dict()``).
    """

    bounds: dict
    ceilings: dict = field(default_factory=dict)
    against: float | None = None
    header: dict = field(default_factory=dict)
    trailer: dict = field(default_factory=dict)
    bounds_key: str | None = "epsilon_lower_bound"
    per_method: bool = True
    game: GameResult | None = None
    refuting: dict = field(default_factory=dict)

    def __post_init__(self):
        for t, per in self.bounds.items():
            if not isinstance(per, Mapping) or not all(isinstance(r, AuditResult)
                                                       for r in per.values()):
                raise TypeError(f"bounds[{t!r}] must map methods to AuditResult")
        if self.against is not None and not (isinstance(self.against, Real)
                                             and self.against >= 0):  # NaN too
            raise ValueError(f"against must be an epsilon >= 0 or None, got {self.against!r}")
        pairs = {(t, m) for t, m, _ in self.items()}
        if self.refuting:
            got = {(t, m) for t, per in self.refuting.items() for m in per}
            if got != pairs or not all(isinstance(r, AuditResult)
                                       for per in self.refuting.values() for r in per.values()):
                raise ValueError("refuting must hold an AuditResult for every (test, method) "
                                 "pair of bounds, and no other")
        elif self.against is not None and len(pairs) > 1:
            raise ValueError(f"against with {len(pairs)} (test, method) pairs needs refuting: the "
                             "bounds at failure_prob / K (refutation_bounds), or one pair's "
                             "bound alone would refute a true claim up to K times too often")
        if not self.per_method and any(len(per) > 1 for per in self.bounds.values()):
            raise ValueError("per_method=False lays out one method per test; got several")

    # ------------------------------------------------------------------ typed reads
    @property
    def tests(self) -> list[str]:
        """The tests (statistics or scores) certified, in order."""
        return list(self.bounds)

    @property
    def methods(self) -> list[str]:
        """The methods, in order (of the first test)."""
        return list(next(iter(self.bounds.values()), {}))

    def result(self, test: str, method: str | None = None) -> AuditResult:
        """The :class:`~semi_core.audit.bounds.AuditResult` of one test and method.

        Parameters
        ----------
        test : str
        method : str, optional
            Needed when the report holds several methods.

        Returns
        -------
        AuditResult
        """
        if test not in self.bounds:
            raise KeyError(f"test {test!r} not in this report; it holds {self.tests}")
        per = self.bounds[test]
        if method is None:
            if len(per) != 1:
                raise ValueError(f"the report holds the methods {list(per)}: name one")
            return next(iter(per.values()))
        if method not in per:
            raise KeyError(f"method {method!r} not in this report; it holds {list(per)}")
        return per[method]

    def epsilon_lower_bound(self, test: str, method: str | None = None) -> float:
        r"""Certified :math:`\underline\varepsilon` of one test and method.

        Parameters
        ----------
        test : str
        method : str, optional
            Needed when the report holds several methods (:meth:`result`).

        Returns
        -------
        float
        """
        return float(self.result(test, method).epsilon_lower_bound)

    def epsilon_max_certifiable(self, test: str, method: str | None = None) -> float | None:
        """The largest bound the method can certify from these games.

        Parameters
        ----------
        test : str
        method : str, optional
            Needed when the report holds several methods (:meth:`result`).

        Returns
        -------
        float or None
            ``None`` where not computed (one-run audits).
        """
        r = self.result(test, method)
        label = method if method is not None else self._label_of(test, r)
        v = self.ceilings.get(test, {}).get(label)
        return None if v is None else float(v)

    def _label_of(self, test: str, r: AuditResult) -> str:
        return next(k for k, v in self.bounds[test].items() if v is r)

    def items(self) -> list[tuple[str, str, AuditResult]]:
        """Every bound in order.

        Returns
        -------
        list of (str, str, AuditResult)
            ``(test, method, result)``.
        """
        return [(t, m, r) for t, per in self.bounds.items() for m, r in per.items()]

    def best(self, *, distribution_free: bool = True) -> float:
        r"""The largest :math:`\underline\varepsilon` over tests and methods.

        Parameters
        ----------
        distribution_free : bool
            Only bounds resting on a distribution-free assumption (:data:`DISTRIBUTION_FREE`).

        Returns
        -------
        float
            ``0.0`` when there is none.
        """
        vals = [r.epsilon_lower_bound for _, _, r in self.items()
                if not distribution_free or r.assumption in DISTRIBUTION_FREE]
        return float(max(vals)) if vals else 0.0

    def argbest(self, *, distribution_free: bool = True) -> tuple[str, str] | None:
        """Where :meth:`best` is attained.

        Parameters
        ----------
        distribution_free : bool
            As in :meth:`best`.

        Returns
        -------
        (str, str) or None
            ``(test, method)`` (the first of equals); ``None`` when there is no bound.
        """
        best, arg = -math.inf, None
        for t, m, r in self.items():
            if distribution_free and r.assumption not in DISTRIBUTION_FREE:
                continue
            if r.epsilon_lower_bound > best:
                best, arg = r.epsilon_lower_bound, (t, m)
        return arg

    def _above(self, free: bool) -> list[str]:
        if self.against is None:
            return []
        src = self.refuting or self.bounds
        return sorted(f"{t}/{m}" for t, per in src.items() for m, r in per.items()
                      if r.epsilon_lower_bound > self.against
                      and (r.assumption in DISTRIBUTION_FREE) == free)

    @property
    def refuted(self) -> list[str]:
        """``test/method`` whose distribution-free bound at ``failure_prob / K`` exceeds
        ``against`` (:attr:`refuting`): non-empty refutes the claim at ``failure_prob``."""
        return self._above(True)

    @property
    def refuted_under_assumption(self) -> list[str]:
        """``test/method`` above ``against`` (at ``failure_prob / K``) only under a parametric
        assumption."""
        return self._above(False)

    @property
    def refutation_k(self) -> int:
        """``K``, the (test, method) pairs a refutation is corrected over (Bonferroni)."""
        return sum(len(per) for per in self.bounds.values())

    # ------------------------------------------------------------------ display and JSON
    def __repr__(self) -> str:
        parts = [f"tests={len(self.bounds)}", f"methods={self.methods}",
                 f"best={_fmt(self.best())}"]
        if self.against is not None:
            parts += [f"against={_fmt(self.against)}", f"refuted={self.refuted}"]
        return f"{type(self).__name__}({', '.join(parts)})"

    def summary(self) -> Table:
        """One row per test and method.

        Returns
        -------
        Table
            ``test, method, eps_LB, largest_certifiable, n_member, n_nonmember, assumption``
            and, with ``against``, ``eps_LB_refutation`` (the bound at ``failure_prob / K``) and
            ``refutes``.
        """
        rows = []
        for t, m, r in self.items():
            row = {"test": t, "method": m, "eps_LB": r.epsilon_lower_bound,
                   "largest_certifiable": self.ceilings.get(t, {}).get(m),
                   "n_member": r.n_member, "n_nonmember": r.n_nonmember,
                   "assumption": r.assumption}
            if self.against is not None:
                # at failure_prob / K (the refutation's own bound), so rows agree with refuted
                rr = (self.refuting or self.bounds)[t][m]
                row["eps_LB_refutation"] = rr.epsilon_lower_bound
                row["refutes"] = bool(rr.epsilon_lower_bound > self.against)
            rows.append(row)
        return Table(rows, title=repr(self))

    def _bound_dict(self, test: str, method: str) -> dict:
        d = self.bounds[test][method].to_dict()
        top = self.ceilings.get(test, {}).get(method)
        if top is not None:
            d["epsilon_max_certifiable"] = top
        return d

    def bounds_dict(self) -> dict:
        """The bounds as ``to_dict()`` lays them out.

        Returns
        -------
        dict
            ``{test: {method: dict}}`` or ``{test: dict}``, each an
            :meth:`~semi_core.audit.bounds.AuditResult.to_dict` with
            ``epsilon_max_certifiable`` where computed.
        """
        if self.per_method:
            return {t: {m: self._bound_dict(t, m) for m in per} for t, per in self.bounds.items()}
        return {t: self._bound_dict(t, next(iter(per))) for t, per in self.bounds.items()}

    def _entries(self) -> dict:
        """Every entry of the JSON, objects as held (``to_dict`` converts them)."""
        if self.bounds_key is None:
            return self.bounds_dict()
        out = self._header()
        if self.bounds:  # an audit that certified nothing (no labels) has no bounds entry
            out[self.bounds_key] = self.bounds_dict()
        if self.against is not None:
            out["refuted"] = self.refuted
            out["refuted_under_assumption"] = self.refuted_under_assumption
            out["refutation"] = {"bonferroni_k": self.refutation_k,
                                 "epsilon_lower_bound": {f"{t}/{m}": r.epsilon_lower_bound
                                                         for t, per in (self.refuting
                                                                        or self.bounds).items()
                                                         for m, r in per.items()}}
        out.update(self._trailer())
        return out

    def _header(self) -> dict:
        """Entries before the bounds (a subclass builds them from its typed fields)."""
        return dict(self.header)

    def _trailer(self) -> dict:
        """Entries after the bounds and the refutations."""
        return dict(self.trailer)

    def to_dict(self) -> dict:
        """JSON-ready dict in the entry point's layout.

        Returns
        -------
        dict
            ``header``, the bounds (under ``bounds_key``), ``refuted`` and
            ``refuted_under_assumption`` (with ``against``), ``trailer``; result objects in it
            as their own ``to_dict()``.
        """
        return {k: (v.to_dict() if isinstance(v, ResultDisplay | GameResult) else v)
                for k, v in self._entries().items()}

    # read-only dict access to the JSON entries (``report["refuted"]``, ``report[test]``)
    def __getitem__(self, key: str):
        if key == "game" and self.game is not None:
            return self.game
        entries = self._entries()
        if key not in entries:
            raise KeyError(key)
        return entries[key]

    def __contains__(self, key) -> bool:
        return key in self._entries() or (key == "game" and self.game is not None)

    def get(self, key: str, default=None):
        """One entry of the JSON view.

        Parameters
        ----------
        key : str
        default : object
            Returned when ``key`` is not an entry.

        Returns
        -------
        object
            ``report[key]`` or ``default``.
        """
        try:
            return self[key]
        except KeyError:
            return default

    def keys(self):
        """The entries of the JSON view.

        Returns
        -------
        KeysView
            The keys of ``to_dict()``.
        """
        return self._entries().keys()

