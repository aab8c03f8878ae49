r"""The :class:`Mechanism` protocol: what every system of the toolkit implements.

A *mechanism* releases a sequence of outputs :math:`o_1,\dots,o_T` from a dataset; the SeMI
game (SeMI seed Alg. 1-2) asks whether a target :math:`z^*` was inserted at step :math:`\tau`.
Everything downstream -- the one game runner (:func:`semi_core.game.play.play`), the audits
(:mod:`semi_core.audit`), the CLI and the report -- talks to a mechanism only through four
members, which a plain class (no subclassing) may provide:

``T``
    number of releases (``1`` for a one-shot mechanism such as a single trained model);
``release(member, tau, rng)``
    releases of ``R`` independent rounds, a real array of shape ``(R, T, ...)``: round ``r``
    has the target in (``member[r]``) at step ``tau[r]``; all randomness comes from ``rng`` (a
    ``numpy.random.Generator``; no global random state), and the trailing shape is the same in
    every call;
``log_lr_steps(releases)``
    the auditor's per-step log-likelihood ratios :math:`\log\mathrm{LR}_t` of
    :math:`H_1^t` (target inserted at step :math:`t`) against :math:`H_0`, computed from the
    *releases only*, shape ``(R, T)``, finite;
``params()``
    the validated parameters as a plain, JSON-serialisable ``dict`` (metadata of every result).

Optional members, used where present:

``epsilon(delta, tau=1)``
    the exact ground-truth :math:`\varepsilon(\delta)` where it is known, else raise
    :class:`GroundTruthUnknown` (a mechanism without the member has no known guarantee);
``final_log_lr(releases, tau)``
    the Final Observation test on :math:`o_T`;
``tests``
    the statistics the mechanism offers (default: :func:`offered_tests`);
``log_lr_exact``
    ``False`` when ``log_lr_steps`` is a score (an estimate or an approximation) rather than
    the exact log-likelihood ratio of the releases; the conformance rule ``lr_identity``
    (:math:`E_{H_0}[\mathrm{LR}_t]=1`, :math:`E_{H_1^t}[1/\mathrm{LR}_t]=1`) then does not
    apply. Default ``True``.

:func:`statistics` turns the per-step log-LRs into every SeMI statistic; :class:`MechanismBase`
is a convenience base class whose :meth:`MechanismBase.score` calls it. The conformance suite
:func:`semi_core.testing.check_mechanism` checks all of the above on a mechanism.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np

from semi_core._names import SEMI_TESTS, Test
from semi_core.stats.statistics import semi_max, semi_star, semi_unif

__all__ = ["Mechanism", "MechanismBase", "GroundTruthUnknown", "is_mechanism", "offered_tests",
           "statistics", "ground_truth"]


class GroundTruthUnknown(NotImplementedError):
    """Raised by :meth:`Mechanism.epsilon` when no exact privacy guarantee is known."""


@runtime_checkable
class Mechanism(Protocol):
    """Structural type of a mechanism: the four required members (see the module docstring)."""

    T: int

    def release(self, member, tau, rng: np.random.Generator) -> np.ndarray:
        """Releases of ``len(member)`` rounds, shape ``(R, T, ...)``.

        Parameters
        ----------
        member : array_like of bool, shape (R,)
            Whether the target is inserted in each round (H1) or not (H0).
        tau : int or array_like of int, shape (R,)
            Insertion time(s) in 1..T (used by member rounds).
        rng : numpy.random.Generator
            Source of all randomness of the rounds.

        Returns
        -------
        ndarray, shape (R, T, ...)
            The releases of each round.
        """
        ...

    def log_lr_steps(self, releases) -> np.ndarray:
        """Per-step log-LRs from releases, shape ``(R, T)``.

        Parameters
        ----------
        releases : ndarray, shape (R, T, ...)
            Releases as returned by :meth:`release`.

        Returns
        -------
        ndarray, shape (R, T)
            :math:`\\log\\mathrm{LR}_t` of each round and candidate insertion time (``+-inf`` allowed,
            never NaN).
        """
        ...

    def params(self) -> dict[str, Any]:
        """Validated parameters (plain, JSON-serialisable values).

        Returns
        -------
        dict of str
            The parameters, JSON-serialisable (the mechanism's name under ``"mechanism"``).
        """
        ...


def is_mechanism(obj) -> bool:
    """True when ``obj`` has the four required members of the :class:`Mechanism` protocol.

    Parameters
    ----------
    obj : object
        Any object.

    Returns
    -------
    bool
        Whether ``obj`` satisfies the protocol (structurally; nothing is called).
    """
    return isinstance(obj, Mechanism)


def offered_tests(mech) -> tuple[str, ...]:
    """The statistics ``mech`` offers: its ``tests`` attribute, else every SeMI test it can
    compute (``final`` only with ``final_log_lr``; for ``T = 1`` SeMI-Unif and SeMI-max equal
    SeMI*, so only ``semi-star`` is offered).

    Parameters
    ----------
    mech : Mechanism

    Returns
    -------
    tuple of str
    """
    declared = getattr(mech, "tests", None)
    if declared is not None:
        out = tuple(str(t) for t in declared)
        bad = [t for t in out if t not in SEMI_TESTS]
        if bad:
            raise ValueError(f"{type(mech).__name__}.tests must be drawn from {list(SEMI_TESTS)}, "
                             f"got {bad}")
        if Test.FINAL in out and not callable(getattr(mech, "final_log_lr", None)):
            raise ValueError(f"{type(mech).__name__}.tests lists 'final' but the mechanism has "
                             "no final_log_lr")
        return out
    base = (Test.SEMI_STAR.value,) if int(mech.T) == 1 else \
        (Test.SEMI_STAR.value, Test.SEMI_UNIF.value, Test.SEMI_MAX.value)
    if callable(getattr(mech, "final_log_lr", None)):
        base = (*base, Test.FINAL.value)
    return base


def statistics(mech, releases, tau, *, tests=None, unif_pmf=None, log_lr=None
               ) -> dict[str, np.ndarray]:
    r"""Every requested test statistic from releases (the auditor's side of Alg. 2).

    .. math::

        S^{*}=\log\mathrm{LR}_\tau,\quad S^{\max}=\max_t\log\mathrm{LR}_t,\quad
        S^{\mathrm{Unif}}=\log\textstyle\sum_t\pi_t\mathrm{LR}_t,\quad
        S^{\mathrm{final}}=\log\mathrm{LR}^{o_T}_\tau .

    Parameters
    ----------
    mech : Mechanism
    releases : ndarray, shape (R, T, ...)
    tau : int or ndarray of int, shape (R,)
        Insertion time known to SeMI* and Final Observation.
    tests : sequence of str, optional
        Subset of :func:`offered_tests` (default: all of them).
    unif_pmf : array_like, shape (T,), optional
        Prior :math:`\pi` of SeMI-Unif (uniform by default, as in the seed).
    log_lr : ndarray, shape (R, T), optional
        ``mech.log_lr_steps(releases)`` when the caller has it already (computed once).

    Returns
    -------
    dict of str -> ndarray, shape (R,)
    """
    offered = offered_tests(mech)
    tests = offered if tests is None else tuple(str(t) for t in tests)
    bad = [t for t in tests if t not in offered]
    if bad:
        raise ValueError(f"tests must be drawn from {list(offered)} (what {type(mech).__name__} "
                         f"offers), got {bad}")
    need_lr = any(t != Test.FINAL for t in tests)
    lr = None
    if need_lr:
        lr = mech.log_lr_steps(releases) if log_lr is None else log_lr
        lr = check_log_lr(lr, np.shape(releases)[0], int(mech.T), type(mech).__name__)
    out: dict[str, np.ndarray] = {}
    for name in tests:
        if name == Test.SEMI_STAR:
            out[name] = semi_star(lr, tau)
        elif name == Test.SEMI_UNIF:
            out[name] = semi_unif(lr, unif_pmf)
        elif name == Test.SEMI_MAX:
            out[name] = semi_max(lr)
        else:
            out[name] = np.asarray(mech.final_log_lr(releases, tau), dtype=float).reshape(-1)
    return out


def check_log_lr(lr, rounds: int, T: int, who: str = "the mechanism") -> np.ndarray:
    """Per-step log-LRs as a real ``(rounds, T)`` array without NaN (``+-inf`` allowed: a
    release impossible under one hypothesis); raises naming ``who`` otherwise.

    Parameters
    ----------
    lr : array_like
        What a mechanism's ``log_lr_steps`` returned.
    rounds : int
        Expected number of rounds R.
    T : int
        Expected number of steps.
    who : str
        Name of the mechanism, for the error message.

    Returns
    -------
    ndarray of float, shape (rounds, T)
        The log-LRs.
    """
    if np.iscomplexobj(lr):
        raise TypeError(f"{who}.log_lr_steps returned complex values")
    arr = np.asarray(lr, dtype=float)
    if arr.shape != (rounds, T):
        raise ValueError(f"{who}.log_lr_steps must return shape ({rounds}, {T}), got {arr.shape}")
    if np.isnan(arr).any():
        raise ValueError(f"{who}.log_lr_steps returned NaN ({int(np.isnan(arr).sum())} values)")
    return arr


def ground_truth(mech, delta: float, tau: int = 1) -> float | None:
    r"""The mechanism's exact :math:`\varepsilon(\delta)` at step ``tau``, or ``None`` when it
    declares none (no ``epsilon`` member, or :class:`GroundTruthUnknown`).

    Parameters
    ----------
    mech : Mechanism
        Any mechanism.
    delta : float
        The :math:`\delta` of the privacy profile, in (0, 1).
    tau : int
        Insertion step in 1..T.

    Returns
    -------
    float or None
        The exact :math:`\varepsilon(\delta)`, or None when the mechanism declares none.
    """
    fn = getattr(mech, "epsilon", None)
    if not callable(fn):
        return None
    try:
        eps = float(fn(delta, tau))
    except GroundTruthUnknown:
        return None
    if np.isnan(eps) or eps < 0:
        raise ValueError(f"{type(mech).__name__}.epsilon({delta!r}, {tau}) returned {eps}: a "
                         "ground truth must be a number >= 0 (or raise GroundTruthUnknown)")
    return eps


class MechanismBase:
    """Convenience base: defaults for the optional members and :meth:`score`.

    Subclasses set ``T`` and implement ``release``, ``log_lr_steps`` and ``params``; they may
    override ``epsilon`` (ground truth) and define ``final_log_lr``.
    """

    T: int

    #: Tests this mechanism's :meth:`score` can compute (``final`` needs ``final_log_lr``).
    tests: tuple[str, ...] = SEMI_TESTS

    def epsilon(self, delta: float, tau: int = 1) -> float:
        """Ground-truth :math:`\\varepsilon(\\delta)`; unknown unless a subclass knows it.

        Parameters
        ----------
        delta : float
            The :math:`\\delta` of the privacy profile, in (0, 1).
        tau : int
            Insertion step in 1..T.

        Returns
        -------
        float
            :math:`\\varepsilon(\\delta)` (subclasses that know it); this base raises
            :class:`GroundTruthUnknown`.
        """
        raise GroundTruthUnknown(f"{type(self).__name__} has no exact privacy guarantee")

    def params(self) -> dict[str, Any]:  # pragma: no cover - subclasses override
        """Validated parameters as a plain dict.

        Returns
        -------
        dict of str
            JSON-serialisable parameters, with ``"mechanism"`` and ``"T"``.
        """
        return {"mechanism": type(self).__name__, "T": int(self.T)}

    def score(self, releases, tau, *, tests=None, unif_pmf=None) -> dict[str, np.ndarray]:
        """Every requested test statistic from releases: :func:`statistics` on ``self``.

        Parameters
        ----------
        releases : ndarray, shape (R, T, ...)
            Releases of R rounds.
        tau : int or array_like of int
            Known insertion time(s) in 1..T (used by SeMI* and Final Observation).
        tests : sequence of str, optional
            Test names; None = every test the mechanism supports.
        unif_pmf : array_like, shape (T,), optional
            Insertion-time prior of SeMI-Unif; None = uniform.

        Returns
        -------
        dict of str to ndarray
            The statistic of each test, shape (R,).
        """
        return statistics(self, releases, tau, tests=tests, unif_pmf=unif_pmf)
