r"""Conformance suite for mechanisms: one function per rule, :func:`check_mechanism` runs them all.

As scikit-learn's ``check_estimator`` is for estimators, :func:`check_mechanism` is for the
:class:`~semi_core.mechanisms.base.Mechanism` protocol: every mechanism of the package passes it
(``tests/test_conformance.py`` runs every rule on every mechanism through
:func:`parametrize_with_checks`), and a user runs it on theirs before auditing it. Each rule is a
public function ``check_<rule>(mech, ...)`` (:data:`CHECKS`); a broken mechanism fails with
:class:`MechanismCheckError` naming the rule it breaks.

Rules, in order (:data:`RULES`):

``protocol`` (:func:`check_protocol`)
    ``T`` (an integer >= 1), ``release``, ``log_lr_steps`` and ``params`` exist.
``params`` (:func:`check_params`)
    ``params()`` is a ``dict`` without NaN that converts to strict JSON.
``release_shape`` (:func:`check_release_shape`)
    ``release(member, tau, rng)`` returns a real ``numpy`` array of shape ``(R, T, ...)``.
``release_finite`` (:func:`check_release_finite`)
    releases are finite.
``release_shape_stable`` (:func:`check_release_shape_stable`)
    the trailing shape and dtype are the same for any ``R`` and any member pattern.
``determinism`` (:func:`check_determinism`)
    the same Generator seed gives bit-identical releases and log-LRs.
``seed_matters`` (:func:`check_seed_matters`)
    different seeds give different releases.
``global_rng`` (:func:`check_global_rng`)
    neither ``release`` nor ``log_lr_steps`` touches global random state (NumPy's legacy
    ``np.random``, Python's ``random``, torch's default generator). Every call the suite makes
    is watched: whichever rule makes it, a change of global state fails this rule.
``log_lr_shape`` (:func:`check_log_lr_shape`)
    ``log_lr_steps`` returns a real ``(R, T)`` array without NaN.
``log_lr_rowwise`` (:func:`check_log_lr_rowwise`)
    log-LRs are computed per round from the releases only: permuting the rounds permutes the
    log-LRs and scoring a subset gives the same values (relative tolerance 1e-9).
``tests`` (:func:`check_tests`)
    the offered tests are valid and ``final_log_lr`` (when present) returns ``(R,)`` finite
    values.
``chunking`` (:func:`check_chunking`)
    a round's law does not depend on how many rounds are released together: SeMI* of
    ``rounds`` rounds released at once and one at a time agree in law (two-sample
    Kolmogorov-Smirnov test per class, each at level ``1e-4``, so a correct mechanism fails this
    rule with probability below ``2e-4``).
``ground_truth`` (:func:`check_ground_truth`)
    a declared :math:`\varepsilon(\delta)` is a number >= 0, non-increasing in
    :math:`\delta`, and no certified lower bound from ``truth_rounds`` games (Clopper-Pearson,
    failure probability ``1e-3``, SeMI* and SeMI-max) exceeds it: the releases must not reveal
    more than the mechanism declares.
``lr_identity`` (:func:`check_lr_identity`)
    the log-LR is the log-likelihood ratio of the releases: the change-of-measure identities
    :math:`E_{H_0}[\mathrm{LR}_t]=1` and :math:`E_{H_1^t}[1/\mathrm{LR}_t]=1` hold at every
    step (Monte Carlo with a finite-sample tolerance; a correct mechanism fails with
    probability at most ``1e-4``). It catches a log-LR of the wrong sign or direction, which
    passes every other rule. A mechanism whose ``log_lr_steps`` is a score rather than the
    exact log-LR declares ``log_lr_exact = False`` and the rule is skipped.

Expected failures are declared by rule name with a reason (``expected_failures={"lr_identity":
"a plug-in estimate"}``) in :func:`check_mechanism` and :func:`parametrize_with_checks`.
"""

from __future__ import annotations

import inspect
import json
import math
import random
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.special import logsumexp
from scipy.stats import ks_2samp

from semi_core._json import to_jsonable
from semi_core._rng import as_seed_sequence, child_seed
from semi_core._validation import check_int, check_probability
from semi_core.audit.bounds import epsilon_lower_bound
from semi_core.game.play import play
from semi_core.mechanisms.base import (
    GroundTruthUnknown,
    check_log_lr,
    ground_truth,
    is_mechanism,
    offered_tests,
)

__all__ = ["check_mechanism", "MechanismCheckError", "RULES", "CHECKS", "MechanismCase",
           "parametrize_with_checks", "check_protocol", "check_params", "check_release_shape",
           "check_release_finite", "check_release_shape_stable", "check_determinism",
           "check_seed_matters", "check_global_rng", "check_log_lr_shape",
           "check_log_lr_rowwise", "check_tests", "check_chunking", "check_ground_truth",
           "check_lr_identity", "lr_identity_statistics", "LRIdentityStep"]

RULES = ("protocol", "params", "release_shape", "release_finite", "release_shape_stable",
         "determinism", "seed_matters", "global_rng", "log_lr_shape", "log_lr_rowwise",
         "tests", "chunking", "ground_truth", "lr_identity")

#: Level of each two-sample test of the ``chunking`` rule.
KS_LEVEL = 1e-4
#: Failure probability of the certified bounds of the ``ground_truth`` rule.
TRUTH_FAILURE_PROB = 1e-3
#: Probability that a mechanism with an exact log-LR fails the ``lr_identity`` rule (at most).
LR_IDENTITY_LEVEL = 1e-4
#: The options of :func:`check_mechanism` that the checks take.
OPTIONS = ("rounds", "truth_rounds", "delta", "seed", "lr_rounds")


class MechanismCheckError(AssertionError):
    """A mechanism broke a rule of :func:`check_mechanism`; ``rule`` names it."""

    def __init__(self, rule: str, message: str):
        super().__init__(f"rule {rule!r} failed: {message}")
        self.rule = rule


def _fail(rule: str, msg: str):
    raise MechanismCheckError(rule, msg)


def _gen(seed) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(as_seed_sequence(seed)))


def _global_states() -> tuple:
    np_state = np.random.get_state(legacy=False)
    states: list[Any] = [json.dumps(to_jsonable(np_state), sort_keys=True), random.getstate()]
    torch = sys.modules.get("torch")
    if torch is not None:
        states.append(torch.random.get_rng_state().numpy().tobytes())
    return tuple(states)


def _nan_keys(obj, path="params") -> list[str]:
    if isinstance(obj, dict):
        return [k for key, v in obj.items() for k in _nan_keys(v, f"{path}[{key!r}]")]
    if isinstance(obj, list | tuple):
        return [k for i, v in enumerate(obj) for k in _nan_keys(v, f"{path}[{i}]")]
    if isinstance(obj, np.ndarray) and obj.dtype.kind in "fc":
        return [path] if np.isnan(obj).any() else []
    if isinstance(obj, float | np.floating) and np.isnan(obj):
        return [path]
    return []


def _horizon(mech) -> int:
    """``mech.T`` after the ``protocol`` rule (every other check starts here)."""
    check_protocol(mech)
    return int(mech.T)


def _release(mech, member, tau, seed) -> Any:
    """``mech.release`` watched: an exception breaks ``release_shape``, a change of global
    random state breaks ``global_rng``."""
    before = _global_states()
    try:
        out = mech.release(member, tau, _gen(seed))
    except Exception as exc:  # noqa: BLE001 - any failure breaks the rule
        _fail("release_shape", f"release raised {type(exc).__name__}: {exc}")
    if _global_states() != before:
        _fail("global_rng", "release changed global random state (np.random, random or torch's "
                            "default generator): draw from the rng argument only")
    return out


def _log_lr(mech, releases, R: int, T: int) -> np.ndarray:
    """``mech.log_lr_steps`` watched and validated (``log_lr_shape``, ``global_rng``)."""
    before = _global_states()
    try:
        lr = mech.log_lr_steps(releases)
    except Exception as exc:  # noqa: BLE001
        _fail("log_lr_shape", f"log_lr_steps raised {type(exc).__name__}: {exc}")
    if _global_states() != before:
        _fail("global_rng", "log_lr_steps changed global random state")
    try:
        return check_log_lr(lr, R, T, type(mech).__name__)
    except (TypeError, ValueError) as exc:
        _fail("log_lr_shape", str(exc))
    raise AssertionError("unreachable")  # pragma: no cover


class _Draws:
    """The releases and log-LRs that several rules read, drawn once per (mechanism, rounds,
    seed) and shared through the ``cache`` argument (same seeds as a lone check)."""

    def __init__(self, mech, rounds: int, seed):
        self.mech, self.R, self.T = mech, rounds, _horizon(mech)
        self.root = as_seed_sequence(seed)
        self.ss = child_seed(self.root, 0)
        pattern = _gen(child_seed(self.ss, 0))
        self.member = pattern.random(rounds) < 0.5
        self.member[:2] = (True, False)
        self.tau = pattern.integers(1, self.T + 1, rounds)
        self._rel: np.ndarray | None = None
        self._lr: np.ndarray | None = None

    def release(self, member, tau, key: int):
        return _release(self.mech, member, tau, child_seed(self.ss, key))

    @property
    def rel(self) -> np.ndarray:
        """The reference release of ``R`` rounds, validated (``release_shape``)."""
        if self._rel is None:
            rel = self.release(self.member, self.tau, 1)
            R, T = self.R, self.T
            if not isinstance(rel, np.ndarray):
                _fail("release_shape", f"release must return a numpy array, got "
                                       f"{type(rel).__name__}")
            if rel.dtype.kind not in "biuf":
                _fail("release_shape", f"releases must be real numbers, got dtype {rel.dtype}")
            if rel.ndim < 2 or rel.shape[:2] != (R, T):
                _fail("release_shape", f"release of {R} rounds must have shape ({R}, {T}, ...), "
                                       f"got {rel.shape}")
            self._rel = rel
        return self._rel

    @property
    def lr(self) -> np.ndarray:
        """log-LRs of :attr:`rel`, validated (``log_lr_shape``)."""
        if self._lr is None:
            self._lr = _log_lr(self.mech, self.rel, self.R, self.T)
        return self._lr


def _draws(mech, rounds, seed, cache: dict | None) -> _Draws:
    rounds = check_int(rounds, "rounds", minimum=20)
    if cache is None:
        return _Draws(mech, rounds, seed)
    ss = as_seed_sequence(seed)
    key = ("draws", id(mech), rounds, repr(ss.entropy), tuple(ss.spawn_key))
    if key not in cache:
        cache[key] = _Draws(mech, rounds, seed)
    return cache[key]


# ------------------------------------------------------------------------------------ rules
def check_protocol(mech) -> str:
    """Rule ``protocol``: the four required members exist and ``T`` is an integer >= 1.

    Everything downstream (the runner, the audits, the CLI) talks to a mechanism only through
    ``T``, ``release``, ``log_lr_steps`` and ``params``
    (:mod:`semi_core.mechanisms.base`); a missing one would fail deep inside a game.

    Parameters
    ----------
    mech : object
        The mechanism to check.

    Returns
    -------
    str
        ``"passed"``.

    Raises
    ------
    MechanismCheckError
        When a member is missing or ``T`` is not an integer >= 1.
    """
    if not is_mechanism(mech):
        missing = [m for m in ("T", "release", "log_lr_steps", "params") if not hasattr(mech, m)]
        _fail("protocol", f"{type(mech).__name__} lacks {missing} (or they are not callable)")
    T = mech.T
    if isinstance(T, bool) or not isinstance(T, int | np.integer) or T < 1:
        _fail("protocol", f"T must be an integer >= 1, got {T!r}")
    return "passed"


def check_params(mech) -> str:
    """Rule ``params``: ``params()`` is a ``dict`` without NaN that converts to strict JSON.

    The parameters are the metadata of every result and report; a NaN (a parameter that is not
    a number) must never reach an audit, and a value JSON cannot hold would break ``--json``.

    Parameters
    ----------
    mech : Mechanism
        The mechanism to check.

    Returns
    -------
    str
        ``"passed"``.

    Raises
    ------
    MechanismCheckError
        When ``params()`` raises, is not a dict, holds NaN or is not JSON-serialisable.
    """
    _horizon(mech)
    try:
        p = mech.params()
    except Exception as exc:  # noqa: BLE001 - any failure breaks the rule
        _fail("params", f"params() raised {type(exc).__name__}: {exc}")
    if not isinstance(p, dict):
        _fail("params", f"params() must return a dict, got {type(p).__name__}")
    nan = _nan_keys(p)
    if nan:
        _fail("params", f"params() holds NaN at {nan}: a parameter that is not a number must "
                        "never reach an audit")
    try:
        json.dumps(to_jsonable(p), allow_nan=False)
    except (TypeError, ValueError) as exc:
        _fail("params", f"params() is not JSON-serialisable: {exc}")
    return "passed"


def check_release_shape(mech, *, rounds: int = 200, seed=0, cache: dict | None = None) -> str:
    """Rule ``release_shape``: ``release`` returns a real numpy array of shape ``(R, T, ...)``.

    The runner stacks, slices and scores releases by round and step; any other shape or a
    complex or object array would be misread silently downstream.

    Parameters
    ----------
    mech : Mechanism
        The mechanism to check.
    rounds : int
        Rounds of the release (>= 20), a random member pattern and insertion times.
    seed : int or SeedSequence
        Root seed (the same draws as :func:`check_mechanism`).
    cache : dict, optional
        Draws shared between the checks of one mechanism (:func:`check_mechanism` and
        :func:`parametrize_with_checks` pass one); ``None`` draws afresh.

    Returns
    -------
    str
        ``"passed"``.

    Raises
    ------
    MechanismCheckError
        When ``release`` raises or returns another type, dtype or shape.
    """
    _ = _draws(mech, rounds, seed, cache).rel
    return "passed"


def check_release_finite(mech, *, rounds: int = 200, seed=0, cache: dict | None = None) -> str:
    """Rule ``release_finite``: every release value is finite.

    An infinite or NaN release makes every log-LR and score built on it meaningless (NaN
    compares false with every threshold).

    Parameters
    ----------
    mech : Mechanism
        The mechanism to check.
    rounds : int
        Rounds of the release (>= 20).
    seed : int or SeedSequence
        Root seed.
    cache : dict, optional
        Shared draws (see :func:`check_release_shape`).

    Returns
    -------
    str
        ``"passed"``.

    Raises
    ------
    MechanismCheckError
        When a release value is not finite.
    """
    rel = _draws(mech, rounds, seed, cache).rel
    if not np.isfinite(rel).all():
        _fail("release_finite", f"{int((~np.isfinite(rel)).sum())} release values are not finite")
    return "passed"


def check_release_shape_stable(mech, *, rounds: int = 200, seed=0,
                               cache: dict | None = None) -> str:
    """Rule ``release_shape_stable``: trailing shape and dtype do not depend on ``R`` or on the
    member pattern.

    The runner concatenates chunks of any size and members with non-members; a release whose
    shape depends on the call (e.g. on ``R = 1``) breaks that silently or late.

    Parameters
    ----------
    mech : Mechanism
        The mechanism to check.
    rounds : int
        Rounds of the reference release (>= 20); the others have 1 member and 3 non-members.
    seed : int or SeedSequence
        Root seed.
    cache : dict, optional
        Shared draws (see :func:`check_release_shape`).

    Returns
    -------
    str
        ``"passed"``.

    Raises
    ------
    MechanismCheckError
        When another call gives another trailing shape, dtype or number of rounds.
    """
    d = _draws(mech, rounds, seed, cache)
    rel, T = d.rel, d.T
    for m, t in ((np.ones(1, bool), np.array([T])), (np.zeros(3, bool), np.ones(3, np.int64))):
        other = d.release(m, t, 2)
        if not isinstance(other, np.ndarray) or other.shape[1:] != rel.shape[1:] or \
                other.dtype != rel.dtype or other.shape[0] != m.size:
            _fail("release_shape_stable", f"release of {m.size} rounds gave "
                  f"{getattr(other, 'shape', None)} {getattr(other, 'dtype', None)}, expected "
                  f"({m.size}, {', '.join(map(str, rel.shape[1:]))}) {rel.dtype}")
    return "passed"


def check_determinism(mech, *, rounds: int = 200, seed=0, cache: dict | None = None) -> str:
    """Rule ``determinism``: the same Generator seed gives bit-identical releases and log-LRs.

    Every result of the package is reproducible from its seed on any executor; a mechanism
    that draws from anywhere but its ``rng`` argument (or whose log-LRs vary between calls)
    breaks that.

    Parameters
    ----------
    mech : Mechanism
        The mechanism to check.
    rounds : int
        Rounds of the release (>= 20).
    seed : int or SeedSequence
        Root seed.
    cache : dict, optional
        Shared draws (see :func:`check_release_shape`).

    Returns
    -------
    str
        ``"passed"``.

    Raises
    ------
    MechanismCheckError
        When a second release or log-LR evaluation under the same seed differs.
    """
    d = _draws(mech, rounds, seed, cache)
    if not np.array_equal(d.rel, d.release(d.member, d.tau, 1)):
        _fail("determinism", "the same seed gave different releases")
    if not np.array_equal(d.lr, _log_lr(mech, d.rel, d.R, d.T)):
        _fail("determinism", "log_lr_steps gave different values for the same releases")
    return "passed"


def check_seed_matters(mech, *, rounds: int = 200, seed=0, cache: dict | None = None) -> str:
    """Rule ``seed_matters``: different seeds give different releases.

    A mechanism that ignores its ``rng`` (a constant release, or a fixed internal seed) plays
    the same round over and over; every Monte Carlo estimate built on it is void.

    Parameters
    ----------
    mech : Mechanism
        The mechanism to check.
    rounds : int
        Rounds of the release (>= 20).
    seed : int or SeedSequence
        Root seed.
    cache : dict, optional
        Shared draws (see :func:`check_release_shape`).

    Returns
    -------
    str
        ``"passed"``.

    Raises
    ------
    MechanismCheckError
        When two seeds give identical releases.
    """
    d = _draws(mech, rounds, seed, cache)
    if np.array_equal(d.rel, d.release(d.member, d.tau, 3)):
        _fail("seed_matters", "different seeds gave identical releases")
    return "passed"


def check_global_rng(mech, *, rounds: int = 200, seed=0, cache: dict | None = None) -> str:
    """Rule ``global_rng``: ``release`` and ``log_lr_steps`` leave global random state alone.

    Global state (``np.random``, ``random``, torch's default generator) is shared between
    threads and workers: drawing from it makes results depend on the executor. Every call the
    suite makes is watched, so this rule also fails from inside other checks.

    Parameters
    ----------
    mech : Mechanism
        The mechanism to check.
    rounds : int
        Rounds of the release (>= 20).
    seed : int or SeedSequence
        Root seed.
    cache : dict, optional
        Shared draws (see :func:`check_release_shape`).

    Returns
    -------
    str
        ``"passed"``.

    Raises
    ------
    MechanismCheckError
        When a call changes global random state.
    """
    d = _draws(mech, rounds, seed, cache)
    _ = d.lr
    return "passed"


def check_log_lr_shape(mech, *, rounds: int = 200, seed=0, cache: dict | None = None) -> str:
    """Rule ``log_lr_shape``: ``log_lr_steps`` returns a real ``(R, T)`` array without NaN.

    The SeMI statistics index log-LRs by round and step; NaN would compare false with every
    threshold and pass silently as a non-detection.

    Parameters
    ----------
    mech : Mechanism
        The mechanism to check.
    rounds : int
        Rounds of the release (>= 20).
    seed : int or SeedSequence
        Root seed.
    cache : dict, optional
        Shared draws (see :func:`check_release_shape`).

    Returns
    -------
    str
        ``"passed"``.

    Raises
    ------
    MechanismCheckError
        When ``log_lr_steps`` raises or returns another shape, a complex array or NaN.
    """
    _ = _draws(mech, rounds, seed, cache).lr
    return "passed"


def check_log_lr_rowwise(mech, *, rounds: int = 200, seed=0, cache: dict | None = None) -> str:
    """Rule ``log_lr_rowwise``: each round's log-LRs depend on its own releases only.

    The runner scores rounds in chunks of any size and order; a log-LR that reads other rounds
    (e.g. centred over the batch) changes with the chunking. Permuting the rounds must permute
    the log-LRs, and scoring the first half must give the same values (relative tolerance
    ``1e-9`` of the largest finite value).

    Parameters
    ----------
    mech : Mechanism
        The mechanism to check.
    rounds : int
        Rounds of the release (>= 20).
    seed : int or SeedSequence
        Root seed.
    cache : dict, optional
        Shared draws (see :func:`check_release_shape`).

    Returns
    -------
    str
        ``"passed"``.

    Raises
    ------
    MechanismCheckError
        When permuting or halving the rounds changes their log-LRs.
    """
    d = _draws(mech, rounds, seed, cache)
    rel, lr, R, T = d.rel, d.lr, d.R, d.T
    half = _log_lr(mech, rel[:R // 2], R // 2, T)
    perm = _gen(child_seed(d.ss, 4)).permutation(R)
    lr_p = _log_lr(mech, rel[perm], R, T)
    scale = max(1.0, float(np.max(np.abs(lr[np.isfinite(lr)]), initial=0.0)))
    for got, want, how in ((lr_p, lr[perm], "permuting the rounds"),
                           (half, lr[:R // 2], "scoring half of the rounds")):
        fin = np.isfinite(want)
        if not (np.array_equal(np.isfinite(got), fin) and np.allclose(
                got[fin], want[fin], rtol=1e-9, atol=1e-9 * scale)):
            _fail("log_lr_rowwise", f"{how} changed their log-LRs: each round must be scored "
                                    "from its own releases only")
    return "passed"


def check_tests(mech, *, rounds: int = 200, seed=0, cache: dict | None = None) -> str:
    """Rule ``tests``: the offered tests are valid and ``final_log_lr`` returns ``(R,)`` values.

    The runner computes the tests a mechanism offers (:func:`~semi_core.mechanisms.base.
    offered_tests`); an unknown name, ``final`` without ``final_log_lr``, or a Final
    Observation statistic of the wrong shape or with NaN would fail in the middle of a game.

    Parameters
    ----------
    mech : Mechanism
        The mechanism to check.
    rounds : int
        Rounds of the release (>= 20).
    seed : int or SeedSequence
        Root seed.
    cache : dict, optional
        Shared draws (see :func:`check_release_shape`).

    Returns
    -------
    str
        ``"passed"``.

    Raises
    ------
    MechanismCheckError
        When the tests are invalid or ``final_log_lr`` returns a bad array.
    """
    _horizon(mech)
    try:
        offered_tests(mech)
    except ValueError as exc:
        _fail("tests", str(exc))
    if callable(getattr(mech, "final_log_lr", None)):
        d = _draws(mech, rounds, seed, cache)
        f = np.asarray(mech.final_log_lr(d.rel, d.tau))
        if f.shape != (d.R,) or np.iscomplexobj(f) or np.isnan(f.astype(float)).any():
            _fail("tests", f"final_log_lr must return ({d.R},) real values without NaN, got "
                           f"{f.shape} {f.dtype}")
    return "passed"


def check_chunking(mech, *, rounds: int = 200, seed=0, cache: dict | None = None) -> str:
    r"""Rule ``chunking``: a round's law does not depend on how many rounds share its call.

    The runner releases rounds in chunks of any size; a mechanism that normalises over the
    rounds of a call (or shares noise between them) gives rounds that are not i.i.d. SeMI*
    at ``tau = T`` of ``rounds`` rounds released at once and one at a time are compared per
    class by a two-sample Kolmogorov-Smirnov test at level :data:`KS_LEVEL` each, so a correct
    mechanism fails with probability below :math:`2\cdot 10^{-4}`.

    Parameters
    ----------
    mech : Mechanism
        The mechanism to check.
    rounds : int
        Rounds per class (>= 20); the single-round releases make this the costliest rule.
    seed : int or SeedSequence
        Root seed.
    cache : dict, optional
        Shared draws (see :func:`check_release_shape`).

    Returns
    -------
    str
        ``"passed"``.

    Raises
    ------
    MechanismCheckError
        When the two ways of releasing differ in law.
    """
    d = _draws(mech, rounds, seed, cache)
    R, T = d.R, d.T
    t_fix = np.full(R, T, dtype=np.int64)
    for cls, m in (("member", np.ones(R, bool)), ("non-member", np.zeros(R, bool))):
        together = _release(mech, m, t_fix, child_seed(d.ss, 5, int(m[0])))
        alone = np.concatenate([_release(mech, m[:1], t_fix[:1], child_seed(d.ss, 6, int(m[0]), i))
                                for i in range(R)])
        a = _log_lr(mech, together, R, T)[:, T - 1]
        b = _log_lr(mech, alone, R, T)[:, T - 1]
        if np.ptp(np.concatenate([a, b])) > 0:
            pval = float(ks_2samp(a, b).pvalue)
            if pval < KS_LEVEL:
                _fail("chunking", f"{cls} rounds released {R} at a time and one at a time differ "
                                  f"in law (KS p = {pval:.2g} < {KS_LEVEL:g}): a round must not "
                                  "depend on the other rounds of its call")
    return "passed"


def _check_truth_rounds(truth_rounds) -> int:
    truth_rounds = check_int(truth_rounds, "truth_rounds", minimum=0)
    if 0 < truth_rounds < 100:
        raise ValueError(f"truth_rounds must be 0 or >= 100, got {truth_rounds}")
    return truth_rounds


def check_ground_truth(mech, *, truth_rounds: int = 2000, delta: float = 1e-5, seed=0) -> str:
    r"""Rule ``ground_truth``: a declared :math:`\varepsilon(\delta)` is not contradicted.

    An over-claimed :math:`\varepsilon` is the worst bug: the declared value must be a number
    >= 0, non-increasing in :math:`\delta`, and no certified lower bound from ``truth_rounds``
    games at ``tau = 1`` (Clopper-Pearson at failure probability :data:`TRUTH_FAILURE_PROB`,
    SeMI* and SeMI-max) may exceed it.

    Parameters
    ----------
    mech : Mechanism
        The mechanism to check.
    truth_rounds : int
        Games of the Monte Carlo part (0, or >= 100); ``0`` checks the declared value only.
    delta : float
        :math:`\delta` at which the ground truth is checked.
    seed : int or SeedSequence
        Root seed (the games use ``child_seed(seed, 1)``).

    Returns
    -------
    str
        ``"passed"``, ``"passed (declared value only; truth_rounds = 0)"`` or
        ``"skipped: no ground truth declared"``.

    Raises
    ------
    MechanismCheckError
        When the declared value is invalid, increases with :math:`\delta` or is refuted.
    ValueError
        When ``truth_rounds`` is out of range.
    """
    truth_rounds = _check_truth_rounds(truth_rounds)
    _horizon(mech)
    try:
        eps = ground_truth(mech, delta, 1)
    except (ValueError, TypeError) as exc:
        _fail("ground_truth", str(exc))
    if eps is None:
        return "skipped: no ground truth declared"
    try:
        eps_big = ground_truth(mech, min(0.5, 10 * delta), 1)
    except GroundTruthUnknown:  # pragma: no cover - declared at one delta, not another
        eps_big = None
    if eps_big is not None and eps_big > eps * (1 + 1e-9) + 1e-12:
        _fail("ground_truth", f"epsilon({min(0.5, 10 * delta):g}) = {eps_big:.6g} exceeds "
                              f"epsilon({delta:g}) = {eps:.6g}: it must not increase with delta")
    if truth_rounds == 0:
        return "passed (declared value only; truth_rounds = 0)"
    try:
        tests = offered_tests(mech)
    except ValueError as exc:
        _fail("tests", str(exc))
    pick = tuple(t for t in ("semi-star", "semi-max") if t in tests) or tests[:1]
    game = play(mech, truth_rounds, child_seed(as_seed_sequence(seed), 1), tau=1, tests=pick,
                chunk_size=min(truth_rounds, 4096))
    for name in pick:
        mem, non = game.scores(name)
        if min(mem.size, non.size) < 2:  # pragma: no cover - 2000 fair coins
            continue
        lb = epsilon_lower_bound(mem, non, delta=delta, failure_prob=TRUTH_FAILURE_PROB,
                                 method="cp").epsilon_lower_bound
        if lb > eps * (1 + 1e-9) + 1e-9:
            _fail("ground_truth", f"the releases certify epsilon >= {lb:.4g} ({name}, "
                                  f"{truth_rounds} games, Clopper-Pearson at failure "
                                  f"probability {TRUTH_FAILURE_PROB:g}) but the mechanism "
                                  f"declares epsilon({delta:g}) = {eps:.4g}")
    return "passed"


# ------------------------------------------------------------------------- the LR identity
@dataclass(frozen=True)
class LRIdentityStep:
    r"""The ``lr_identity`` statistics of one step ``t`` (:func:`lr_identity_statistics`).

    ``h0`` is :math:`\hat E_{H_0}[\mathrm{LR};\mathrm{LR}\le 1]+\hat P_{H_1}(\mathrm{LR}>1)`
    and ``h1`` is :math:`\hat E_{H_1}[1/\mathrm{LR};\mathrm{LR}>1]+\hat P_{H_0}(\mathrm{LR}
    \le 1)`, both 1 in expectation for an exact log-LR, with their tolerances ``h0_tol``,
    ``h1_tol``. ``mean_lr_h0`` (``se_lr_h0``, ``ess_h0``) and ``mean_inv_lr_h1``
    (``se_inv_lr_h1``, ``ess_h1``) are the plain Monte Carlo means of :math:`\mathrm{LR}` under
    :math:`H_0` and :math:`1/\mathrm{LR}` under :math:`H_1^t`, computed in log space, with their
    standard errors and effective sample sizes :math:`(\sum w)^2/\sum w^2` (diagnostics: heavy
    tailed, they do not decide the rule).
    """

    t: int
    h0: float
    h0_tol: float
    h1: float
    h1_tol: float
    mean_lr_h0: float
    se_lr_h0: float
    ess_h0: float
    mean_inv_lr_h1: float
    se_inv_lr_h1: float
    ess_h1: float

    @property
    def passed(self) -> bool:
        """Both identities hold within their tolerances."""
        return abs(self.h0 - 1.0) <= self.h0_tol and abs(self.h1 - 1.0) <= self.h1_tol


def _bernstein(x: np.ndarray, log3d: float) -> float:
    """Empirical-Bernstein half-width of the mean of ``x`` in [0, 1] (Audibert, Munos and
    Szepesvari 2009, Thm 1): :math:`\\sqrt{2V\\log(3/\\delta)/n}+3\\log(3/\\delta)/n`."""
    n = x.size
    return math.sqrt(2.0 * float(np.var(x)) * log3d / n) + 3.0 * log3d / n


def _log_mean_exp(s: np.ndarray) -> tuple[float, float, float]:
    """Mean of :math:`e^{s}`, its standard error and the effective sample size, in log space
    (``logsumexp``; no overflow whatever the tail)."""
    n = s.size
    with np.errstate(divide="ignore", invalid="ignore"):
        l1, l2 = float(logsumexp(s)), float(logsumexp(2.0 * s))
    if not np.isfinite(l1):
        return (0.0 if l1 < 0 else math.inf), math.nan, 0.0
    mean = math.exp(l1 - math.log(n))
    ratio = math.exp(min(l2 - 2.0 * l1, math.log(n)))   # sum w^2 / (sum w)^2, in [1/n, 1]
    se = mean * math.sqrt(max(n * ratio - 1.0, 0.0) / max(n - 1, 1))
    return mean, se, 1.0 / ratio


def lr_identity_statistics(mech, *, lr_rounds: int = 2000, seed=0,
                           level: float = LR_IDENTITY_LEVEL) -> list[LRIdentityStep]:
    r"""Monte Carlo statistics of the two-sided LR identity at every step (rule ``lr_identity``).

    For an exact :math:`\mathrm{LR}_t=p_1^t/p_0` (:math:`H_0`: target not inserted,
    :math:`H_1^t`: inserted at step :math:`t`, the protocol's convention), a change of measure
    gives :math:`E_{H_0}[\mathrm{LR}_t\,g]=E_{H_1^t}[g]` for every bounded :math:`g`. With
    :math:`g=1\{\mathrm{LR}_t\le 1\}` and :math:`g=1\{\mathrm{LR}_t>1\}/\mathrm{LR}_t`:

    .. math::

        A_0 = E_{H_0}[\mathrm{LR}_t;\,\mathrm{LR}_t\le 1] + P_{H_1^t}(\mathrm{LR}_t>1) = 1,
        \qquad
        A_1 = E_{H_1^t}[\mathrm{LR}_t^{-1};\,\mathrm{LR}_t>1] + P_{H_0}(\mathrm{LR}_t\le 1) = 1 .

    These are :math:`E_{H_0}[\mathrm{LR}_t]=1` and :math:`E_{H_1^t}[1/\mathrm{LR}_t]=1` with the
    heavy part of each read from the other hypothesis, where it is a probability: every term is
    in :math:`[0,1]`, so the Monte Carlo error has a finite-sample bound whatever the tails of
    the LR (the plain means of :math:`e^{\log\mathrm{LR}}` need
    :math:`\mathrm{Var}[\mathrm{LR}]=e^{\mu^2}-1` samples for a :math:`\mu`-GDP pair and are
    kept as diagnostics). Each of the four means of a step (two per identity) gets the
    empirical-Bernstein half-width :math:`\sqrt{2V\log(3/\delta)/n}+3\log(3/\delta)/n`
    (:math:`V` the sample variance: the ``k SE`` part with :math:`k=\sqrt{2\log(3/\delta)}`,
    and a floor :math:`3\log(3/\delta)/n` that bounds what the sample variance can miss;
    Audibert, Munos and Szepesvari 2009, Thm 1), at :math:`\delta=\mathrm{level}/(4T)`, so by a
    union bound an exact log-LR fails the rule with probability at most ``level``. A wrong sign
    or direction of the log-LR moves :math:`A_0` or :math:`A_1` (a Gaussian shift of size
    :math:`a` scored in the opposite direction: :math:`A_0=\Phi(-a/2)+1-\Phi(3a/2)`, and the
    plain mean of :math:`1/\mathrm{LR}` is :math:`e^{2a^2}`).

    Parameters
    ----------
    mech : Mechanism
        The mechanism; its ``log_lr_steps`` is taken as the exact log-LR.
    lr_rounds : int
        Rounds per hypothesis (>= 200): ``lr_rounds`` non-member and ``lr_rounds`` member
        rounds at each ``tau = t`` (a replace-one game's non-member law depends on ``tau``),
        i.e. ``2 T lr_rounds`` rounds in all.
    seed : int or SeedSequence
        Root seed (the draws use ``child_seed(seed, 2)``).
    level : float
        Probability (in (0, 1)) that an exact log-LR fails, at most.

    Returns
    -------
    list of LRIdentityStep
        One per step ``t = 1..T``.
    """
    n = check_int(lr_rounds, "lr_rounds", minimum=200)
    level = check_probability(level, "level")
    T = _horizon(mech)
    ss = child_seed(as_seed_sequence(seed), 2)
    chunk = min(n, 1024)

    def draw(member: bool, t: int) -> np.ndarray:
        parts = []
        for k, lo in enumerate(range(0, n, chunk)):
            m = min(chunk, n - lo)
            rel = _release(mech, np.full(m, member), np.full(m, t, dtype=np.int64),
                           child_seed(ss, int(member), t, k))
            parts.append(_log_lr(mech, rel, m, T))
        return np.concatenate(parts)

    log3d = math.log(3.0 * 4.0 * T / level)
    out = []
    for t in range(1, T + 1):
        # both classes at tau = t: in a replace-one game the non-member's law depends on tau
        s0, s1 = draw(False, t)[:, t - 1], draw(True, t)[:, t - 1]
        low0, high1 = s0 <= 0.0, s1 > 0.0
        x0 = np.where(low0, np.exp(np.minimum(s0, 0.0)), 0.0)     # LR 1{LR <= 1} under H0
        x1 = np.where(high1, np.exp(-np.maximum(s1, 0.0)), 0.0)   # 1/LR 1{LR > 1} under H1
        b0, b1 = high1.astype(float), low0.astype(float)
        m0, se0, ess0 = _log_mean_exp(s0)
        m1, se1, ess1 = _log_mean_exp(-s1)
        out.append(LRIdentityStep(
            t=t, h0=float(x0.mean() + b0.mean()),
            h0_tol=_bernstein(x0, log3d) + _bernstein(b0, log3d),
            h1=float(x1.mean() + b1.mean()),
            h1_tol=_bernstein(x1, log3d) + _bernstein(b1, log3d),
            mean_lr_h0=m0, se_lr_h0=se0, ess_h0=ess0,
            mean_inv_lr_h1=m1, se_inv_lr_h1=se1, ess_h1=ess1))
    return out


def check_lr_identity(mech, *, lr_rounds: int = 2000, seed=0) -> str:
    r"""Rule ``lr_identity``: :math:`E_{H_0}[\mathrm{LR}_t]=1` and
    :math:`E_{H_1^t}[1/\mathrm{LR}_t]=1` at every step.

    The other rules check the shape and the reproducibility of the log-LRs, not that they are
    the likelihood ratio of the releases: a log-LR of the wrong sign or direction passes them
    all, and every SeMI test built on it loses its power (and its optimality claim). The two
    identities, checked through their bounded forms (:func:`lr_identity_statistics`: the
    tolerance, the sample sizes, and a false-alarm rate of at most :data:`LR_IDENTITY_LEVEL`
    for an exact log-LR), catch it: a one-sided check would not, since a shift scored in the
    wrong direction still has :math:`E_{H_0}[\mathrm{LR}]=1`.

    Parameters
    ----------
    mech : Mechanism
        The mechanism to check. ``log_lr_exact = False`` on it (a score, an estimate or an
        approximation rather than the exact log-LR) skips the rule.
    lr_rounds : int
        Rounds per hypothesis (0, or >= 200); ``0`` skips the rule.
    seed : int or SeedSequence
        Root seed.

    Returns
    -------
    str
        ``"passed"`` or ``"skipped: reason"``.

    Raises
    ------
    MechanismCheckError
        When an identity fails at some step.
    """
    lr_rounds = check_int(lr_rounds, "lr_rounds", minimum=0)
    if 0 < lr_rounds < 200:
        raise ValueError(f"lr_rounds must be 0 or >= 200, got {lr_rounds}")
    _horizon(mech)
    if getattr(mech, "log_lr_exact", True) is False:
        return "skipped: the mechanism declares log_lr_exact = False (its log-LR is a score)"
    if lr_rounds == 0:
        return "skipped: lr_rounds = 0"
    bad = [s for s in lr_identity_statistics(mech, lr_rounds=lr_rounds, seed=seed)
           if not s.passed]
    if bad:
        s = bad[0]
        _fail("lr_identity", f"at step t = {s.t}: E_H0[LR; LR<=1] + P_H1(LR>1) = {s.h0:.4f} "
              f"(tolerance {s.h0_tol:.3f}), E_H1[1/LR; LR>1] + P_H0(LR<=1) = {s.h1:.4f} "
              f"(tolerance {s.h1_tol:.3f}); both must be 1 for an exact log-LR (plain means "
              f"E_H0[LR] = {s.mean_lr_h0:.4g} +- {s.se_lr_h0:.2g}, E_H1[1/LR] = "
              f"{s.mean_inv_lr_h1:.4g} +- {s.se_inv_lr_h1:.2g}; {lr_rounds} rounds per "
              f"hypothesis; failing steps {[b.t for b in bad]}): log_lr_steps is not the "
              "log-likelihood ratio of the releases (wrong sign or direction?); a score that is "
              "not meant to be exact declares log_lr_exact = False")
    return "passed"


#: The rules and their functions, in the order :func:`check_mechanism` runs them.
CHECKS: dict[str, Callable[..., str]] = {
    "protocol": check_protocol, "params": check_params, "release_shape": check_release_shape,
    "release_finite": check_release_finite, "release_shape_stable": check_release_shape_stable,
    "determinism": check_determinism, "seed_matters": check_seed_matters,
    "global_rng": check_global_rng, "log_lr_shape": check_log_lr_shape,
    "log_lr_rowwise": check_log_lr_rowwise, "tests": check_tests, "chunking": check_chunking,
    "ground_truth": check_ground_truth, "lr_identity": check_lr_identity,
}
_KEYWORDS = {rule: set(inspect.signature(fn).parameters) - {"mech"}
             for rule, fn in CHECKS.items()}


def _expected(expected_failures) -> dict[str, str]:
    out = dict(expected_failures or {})
    bad = [r for r in out if r not in RULES]
    if bad:
        raise ValueError(f"expected_failures must name rules from {list(RULES)}, got {bad}")
    empty = [r for r, why in out.items() if not isinstance(why, str) or not why.strip()]
    if empty:
        raise ValueError(f"expected_failures needs a reason (a non-empty string) for {empty}")
    return out


def _validate_options(options: Mapping[str, Any]) -> dict[str, Any]:
    bad = [k for k in options if k not in OPTIONS]
    if bad:
        raise ValueError(f"options must be drawn from {list(OPTIONS)}, got {bad}")
    out = dict(options)
    if "rounds" in out:
        out["rounds"] = check_int(out["rounds"], "rounds", minimum=20)
    if "truth_rounds" in out:
        out["truth_rounds"] = _check_truth_rounds(out["truth_rounds"])
    if "lr_rounds" in out:
        out["lr_rounds"] = check_int(out["lr_rounds"], "lr_rounds", minimum=0)
        if 0 < out["lr_rounds"] < 200:
            raise ValueError(f"lr_rounds must be 0 or >= 200, got {out['lr_rounds']}")
    return out


def _run(rule: str, mech, options: Mapping[str, Any], cache: dict) -> str:
    kw = {k: v for k, v in options.items() if k in _KEYWORDS[rule]}
    if "cache" in _KEYWORDS[rule]:
        kw["cache"] = cache
    return CHECKS[rule](mech, **kw)


def check_mechanism(mech, *, rounds: int = 200, truth_rounds: int = 2000, delta: float = 1e-5,
                    seed=0, lr_rounds: int = 2000,
                    expected_failures: Mapping[str, str] | None = None) -> dict[str, str]:
    r"""Run every rule of the conformance suite (module docstring) on ``mech``, in order.

    Parameters
    ----------
    mech : Mechanism
        The mechanism to check.
    rounds : int
        Rounds per release call of the shape/determinism rules and per class of the
        ``chunking`` rule (>= 20; the single-round releases of that rule make it the costliest).
    truth_rounds : int
        Games of the ``ground_truth`` rule (0, or >= 100); ``0`` skips the Monte Carlo part.
    delta : float
        :math:`\delta` at which a declared ground truth is checked.
    seed : int or SeedSequence
        Root seed of every check (the suite is deterministic under it).
    lr_rounds : int
        Rounds per hypothesis of the ``lr_identity`` rule (0, or >= 200); ``0`` skips it.
    expected_failures : dict of str -> str, optional
        ``{rule: reason}``: a failure of these rules is recorded as
        ``"expected failure: reason (message)"`` and the suite goes on; when such a rule passes
        it reads ``"passed"``.

    Returns
    -------
    dict of str -> str
        ``{rule: "passed" | "passed (...)" | "skipped: reason" | "expected failure: ..."}``,
        in the order of :data:`RULES`.

    Raises
    ------
    MechanismCheckError
        At the first rule broken that is not an expected failure, naming it.
    ValueError
        When an option is out of range or ``expected_failures`` names an unknown rule or gives
        no reason.
    """
    expected = _expected(expected_failures)
    options = _validate_options({"rounds": rounds, "truth_rounds": truth_rounds, "delta": delta,
                                 "seed": seed, "lr_rounds": lr_rounds})
    cache: dict = {}
    report: dict[str, str] = {}
    for rule in RULES:
        try:
            report[rule] = _run(rule, mech, options, cache)
        except MechanismCheckError as exc:
            if exc.rule not in expected:
                raise
            report[rule] = f"expected failure: {expected[exc.rule]} ({exc})"
    return report


# --------------------------------------------------------------------------- pytest helper
@dataclass
class MechanismCase:
    """One mechanism for :func:`parametrize_with_checks`: the mechanism (or a factory that
    builds it on first use, e.g. one that needs torch), its test id, its options and its
    expected failures.

    Parameters
    ----------
    mechanism : Mechanism or callable
        The mechanism, or a zero-argument callable returning it (called once, when its first
        check runs; it may call ``pytest.importorskip``).
    id : str, optional
        The test id's mechanism part (default: the class name).
    options : dict, optional
        Options of :func:`check_mechanism` (``rounds``, ``truth_rounds``, ``delta``, ``seed``,
        ``lr_rounds``): small configurations for costly mechanisms.
    expected_failures : dict of str -> str, optional
        ``{rule: reason}`` for this mechanism.
    marks : tuple, optional
        pytest marks of every check of this mechanism (e.g. ``pytest.mark.slow``).
    rules : tuple of str, optional
        The rules to run (default: all of :data:`RULES`), e.g. one costly rule in a slow case
        beside a fast case of the same mechanism without it.
    """

    mechanism: Any
    id: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    expected_failures: dict[str, str] = field(default_factory=dict)
    marks: tuple = ()
    rules: tuple[str, ...] = RULES
    _built: Any = field(default=None, init=False, repr=False)

    def build(self):
        """The mechanism, built by the factory on the first call.

        Returns
        -------
        Mechanism
            The mechanism (the same object on every call).
        """
        if self._built is None:
            obj = self.mechanism
            self._built = obj if is_mechanism(obj) or not callable(obj) else obj()
        return self._built

    def __str__(self) -> str:
        return self.id or type(self.mechanism).__name__


@dataclass(frozen=True)
class _BoundCheck:
    """A rule bound to its options and the draws shared by one mechanism's checks."""

    rule: str
    options: dict
    cache: dict = field(compare=False, repr=False)

    def __call__(self, mech) -> str:
        if isinstance(mech, MechanismCase):
            mech = mech.build()
        status = _run(self.rule, mech, self.options, self.cache)
        if status.startswith("skipped"):
            import pytest  # lazy: a test-time dependency

            pytest.skip(f"{self.rule}: {status}")
        return status

    def __repr__(self) -> str:
        return f"check_{self.rule}"


def parametrize_with_checks(mechanisms: Iterable, *,
                            expected_failures: Mapping[str, str] | None = None,
                            **options):
    """A pytest ``parametrize`` decorator over every (mechanism, rule) pair.

    In the spirit of scikit-learn's ``parametrize_with_checks``::

        @parametrize_with_checks([LaplaceCounts(), MechanismCase(build_loop, "loop",
                                                                 {"rounds": 20})])
        def test_conformance(mechanism, check):
            check(mechanism)

    Each test id is ``<mechanism>-<rule>``; a declared expected failure is an ``xfail``
    (non-strict, raising :class:`MechanismCheckError`) with its reason, and a rule that does not
    apply (``"skipped: reason"``) is a pytest skip with its reason. The checks of one
    mechanism share its draws (the reference release is drawn once), and a factory is called
    once, when the first check of its mechanism runs.

    Parameters
    ----------
    mechanisms : iterable of Mechanism or MechanismCase
        The mechanisms to check.
    expected_failures : dict of str -> str, optional
        ``{rule: reason}`` for every mechanism (a case's own entries add to it).
    **options
        Options of :func:`check_mechanism` for every mechanism (a case's own override them).

    Returns
    -------
    pytest.MarkDecorator
        ``pytest.mark.parametrize("mechanism, check", ...)``.
    """
    import pytest  # lazy: a test-time dependency

    common = _validate_options(options)
    shared = _expected(expected_failures)
    params, seen = [], {}
    for entry in mechanisms:
        case = entry if isinstance(entry, MechanismCase) else MechanismCase(entry)
        name = str(case)
        seen[name] = seen.get(name, 0) + 1
        if seen[name] > 1:
            name = f"{name}{seen[name]}"
        opts = {**common, **_validate_options(case.options)}
        expected = {**shared, **_expected(case.expected_failures)}
        value = case if not is_mechanism(case.mechanism) else case.mechanism
        bad = [r for r in case.rules if r not in RULES]
        if bad:
            raise ValueError(f"rules of {name!r} must be drawn from {list(RULES)}, got {bad}")
        cache: dict = {}
        for rule in (r for r in RULES if r in case.rules):
            marks = [*case.marks, *([pytest.mark.xfail(
                reason=expected[rule], raises=MechanismCheckError, strict=False)]
                if rule in expected else [])]
            params.append(pytest.param(value, _BoundCheck(rule, opts, cache),
                                       id=f"{name}-{rule}", marks=marks))
    return pytest.mark.parametrize("mechanism, check", params)
