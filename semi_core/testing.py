r"""Conformance suite for mechanisms: :func:`check_mechanism`.

As scikit-learn's ``check_estimator`` is for estimators, :func:`check_mechanism` is for the
:class:`~semi_core.mechanisms.base.Mechanism` protocol: every mechanism of the package passes it
in the tests, and a user runs it on theirs before auditing it. Each rule has a name; a broken
mechanism fails with :class:`MechanismCheckError` naming the first rule it breaks.

Rules, in order:

``protocol``
    ``T`` (an integer >= 1), ``release``, ``log_lr_steps`` and ``params`` exist.
``params``
    ``params()`` is a ``dict`` without NaN that converts to strict JSON.
``release_shape``
    ``release(member, tau, rng)`` returns a real ``numpy`` array of shape ``(R, T, ...)``.
``release_finite``
    releases are finite.
``release_shape_stable``
    the trailing shape and dtype are the same for any ``R`` and any member pattern.
``determinism``
    the same Generator seed gives bit-identical releases and log-LRs.
``seed_matters``
    different seeds give different releases.
``global_rng``
    neither ``release`` nor ``log_lr_steps`` touches global random state (NumPy's legacy
    ``np.random``, Python's ``random``, torch's default generator).
``log_lr_shape``
    ``log_lr_steps`` returns a real ``(R, T)`` array without NaN.
``log_lr_rowwise``
    log-LRs are computed per round from the releases only: permuting the rounds permutes the
    log-LRs and scoring a subset gives the same values (relative tolerance 1e-9).
``tests``
    the offered tests are valid and ``final_log_lr`` (when present) returns ``(R,)`` finite
    values.
``chunking``
    a round's law does not depend on how many rounds are released together: SeMI* of
    ``rounds`` rounds released at once and one at a time agree in law (two-sample
    Kolmogorov-Smirnov test per class, each at level ``1e-4``, so a correct mechanism fails this
    rule with probability below ``2e-4``).
``ground_truth``
    a declared :math:`\varepsilon(\delta)` is a number >= 0, non-increasing in
    :math:`\delta`, and no certified lower bound from ``truth_rounds`` games (Clopper-Pearson,
    failure probability ``1e-3``, SeMI* and SeMI-max) exceeds it: the releases must not reveal
    more than the mechanism declares.
"""

from __future__ import annotations

import json
import random
import sys
from typing import Any

import numpy as np
from scipy.stats import ks_2samp

from semi_core._json import to_jsonable
from semi_core._rng import as_seed_sequence, child_seed
from semi_core._validation import check_int
from semi_core.audit.bounds import epsilon_lower_bound
from semi_core.game.play import play
from semi_core.mechanisms.base import (
    GroundTruthUnknown,
    check_log_lr,
    ground_truth,
    is_mechanism,
    offered_tests,
)

__all__ = ["check_mechanism", "MechanismCheckError", "RULES"]

RULES = ("protocol", "params", "release_shape", "release_finite", "release_shape_stable",
         "determinism", "seed_matters", "global_rng", "log_lr_shape", "log_lr_rowwise",
         "tests", "chunking", "ground_truth")

#: Level of each two-sample test of the ``chunking`` rule.
KS_LEVEL = 1e-4
#: Failure probability of the certified bounds of the ``ground_truth`` rule.
TRUTH_FAILURE_PROB = 1e-3


class MechanismCheckError(AssertionError):
    """A mechanism broke a rule of :func:`check_mechanism`; ``rule`` names it."""

    def __init__(self, rule: str, message: str):
        super().__init__(f"rule {rule!r} failed: {message}")
        self.rule = rule


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


def check_mechanism(mech, *, rounds: int = 200, truth_rounds: int = 2000, delta: float = 1e-5,
                    seed=0) -> dict[str, str]:
    r"""Run the conformance suite (module docstring) on ``mech``.

    Parameters
    ----------
    mech : Mechanism
        The mechanism to check.
    rounds : int
        Rounds per release call of the shape/determinism rules and per class of the
        ``chunking`` rule (>= 20; the single-round releases of that rule make it the costliest).
    truth_rounds : int
        Games of the ``ground_truth`` rule (>= 100); ``0`` skips the Monte Carlo part.
    delta : float
        :math:`\delta` at which a declared ground truth is checked.
    seed : int or SeedSequence
        Root seed of every check (the suite is deterministic under it).

    Returns
    -------
    dict of str -> str
        ``{rule: "passed" | "skipped: reason"}``.

    Raises
    ------
    MechanismCheckError
        At the first rule broken, naming it.
    """
    rounds = check_int(rounds, "rounds", minimum=20)
    truth_rounds = check_int(truth_rounds, "truth_rounds", minimum=0)
    if 0 < truth_rounds < 100:
        raise ValueError(f"truth_rounds must be 0 or >= 100, got {truth_rounds}")
    root = as_seed_sequence(seed)
    report: dict[str, str] = {}

    def fail(rule, msg):
        raise MechanismCheckError(rule, msg)

    # protocol
    if not is_mechanism(mech):
        missing = [m for m in ("T", "release", "log_lr_steps", "params") if not hasattr(mech, m)]
        fail("protocol", f"{type(mech).__name__} lacks {missing} (or they are not callable)")
    T = mech.T
    if isinstance(T, bool) or not isinstance(T, int | np.integer) or T < 1:
        fail("protocol", f"T must be an integer >= 1, got {T!r}")
    T = int(T)
    report["protocol"] = "passed"

    # params
    try:
        p = mech.params()
    except Exception as exc:  # noqa: BLE001 - any failure breaks the rule
        fail("params", f"params() raised {type(exc).__name__}: {exc}")
    if not isinstance(p, dict):
        fail("params", f"params() must return a dict, got {type(p).__name__}")
    nan = _nan_keys(p)
    if nan:
        fail("params", f"params() holds NaN at {nan}: a parameter that is not a number must "
                       "never reach an audit")
    try:
        json.dumps(to_jsonable(p), allow_nan=False)
    except (TypeError, ValueError) as exc:
        fail("params", f"params() is not JSON-serialisable: {exc}")
    report["params"] = "passed"

    # releases
    R = rounds
    ss = child_seed(root, 0)
    pattern = _gen(child_seed(ss, 0))
    member = pattern.random(R) < 0.5
    member[:2] = (True, False)
    tau = pattern.integers(1, T + 1, R)

    def release(m, t, seed_):
        before = _global_states()
        try:
            out = mech.release(m, t, _gen(seed_))
        except Exception as exc:  # noqa: BLE001
            fail("release_shape", f"release raised {type(exc).__name__}: {exc}")
        if _global_states() != before:
            fail("global_rng", "release changed global random state (np.random, random or "
                               "torch's default generator): draw from the rng argument only")
        return out

    rel = release(member, tau, child_seed(ss, 1))
    if not isinstance(rel, np.ndarray):
        fail("release_shape", f"release must return a numpy array, got {type(rel).__name__}")
    if rel.dtype.kind not in "biuf":
        fail("release_shape", f"releases must be real numbers, got dtype {rel.dtype}")
    if rel.ndim < 2 or rel.shape[:2] != (R, T):
        fail("release_shape", f"release of {R} rounds must have shape ({R}, {T}, ...), got "
                              f"{rel.shape}")
    report["release_shape"] = "passed"
    if not np.isfinite(rel).all():
        fail("release_finite", f"{int((~np.isfinite(rel)).sum())} release values are not finite")
    report["release_finite"] = "passed"
    for m, t in ((np.ones(1, bool), np.array([T])), (np.zeros(3, bool), np.ones(3, np.int64))):
        other = release(m, t, child_seed(ss, 2))
        if not isinstance(other, np.ndarray) or other.shape[1:] != rel.shape[1:] or \
                other.dtype != rel.dtype or other.shape[0] != m.size:
            fail("release_shape_stable", f"release of {m.size} rounds gave "
                 f"{getattr(other, 'shape', None)} {getattr(other, 'dtype', None)}, expected "
                 f"({m.size}, {', '.join(map(str, rel.shape[1:]))}) {rel.dtype}")
    report["release_shape_stable"] = "passed"

    again = release(member, tau, child_seed(ss, 1))
    if not np.array_equal(rel, again):
        fail("determinism", "the same seed gave different releases")
    report["determinism"] = "passed"
    other = release(member, tau, child_seed(ss, 3))
    if np.array_equal(rel, other):
        fail("seed_matters", "different seeds gave identical releases")
    report["seed_matters"] = "passed"

    # log-LRs
    before = _global_states()
    try:
        lr = mech.log_lr_steps(rel)
    except Exception as exc:  # noqa: BLE001
        fail("log_lr_shape", f"log_lr_steps raised {type(exc).__name__}: {exc}")
    if _global_states() != before:
        fail("global_rng", "log_lr_steps changed global random state")
    try:
        lr = check_log_lr(lr, R, T, type(mech).__name__)
    except (TypeError, ValueError) as exc:
        fail("log_lr_shape", str(exc))
    if not np.array_equal(lr, check_log_lr(mech.log_lr_steps(rel), R, T)):
        fail("determinism", "log_lr_steps gave different values for the same releases")
    report["global_rng"] = "passed"
    report["log_lr_shape"] = "passed"
    half = check_log_lr(mech.log_lr_steps(rel[:R // 2]), R // 2, T)
    perm = _gen(child_seed(ss, 4)).permutation(R)
    lr_p = check_log_lr(mech.log_lr_steps(rel[perm]), R, T)
    scale = max(1.0, float(np.max(np.abs(lr[np.isfinite(lr)]), initial=0.0)))
    for got, want, how in ((lr_p, lr[perm], "permuting the rounds"),
                           (half, lr[:R // 2], "scoring half of the rounds")):
        fin = np.isfinite(want)
        if not (np.array_equal(np.isfinite(got), fin) and np.allclose(
                got[fin], want[fin], rtol=1e-9, atol=1e-9 * scale)):
            fail("log_lr_rowwise", f"{how} changed their log-LRs: each round must be scored "
                                   "from its own releases only")
    report["log_lr_rowwise"] = "passed"

    # tests
    try:
        tests = offered_tests(mech)
    except ValueError as exc:
        fail("tests", str(exc))
    if callable(getattr(mech, "final_log_lr", None)):
        f = np.asarray(mech.final_log_lr(rel, tau))
        if f.shape != (R,) or np.iscomplexobj(f) or np.isnan(f.astype(float)).any():
            fail("tests", f"final_log_lr must return ({R},) real values without NaN, got "
                          f"{f.shape} {f.dtype}")
    report["tests"] = "passed"

    # chunking: one call of R rounds vs R calls of one round, same member pattern and tau
    t_fix = np.full(R, T, dtype=np.int64)
    for cls, m in (("member", np.ones(R, bool)), ("non-member", np.zeros(R, bool))):
        together = release(m, t_fix, child_seed(ss, 5, int(m[0])))
        alone = np.concatenate([release(m[:1], t_fix[:1], child_seed(ss, 6, int(m[0]), i))
                                for i in range(R)])
        a = check_log_lr(mech.log_lr_steps(together), R, T)[:, T - 1]
        b = check_log_lr(mech.log_lr_steps(alone), R, T)[:, T - 1]
        if np.ptp(np.concatenate([a, b])) > 0:
            pval = float(ks_2samp(a, b).pvalue)
            if pval < KS_LEVEL:
                fail("chunking", f"{cls} rounds released {R} at a time and one at a time differ "
                                 f"in law (KS p = {pval:.2g} < {KS_LEVEL:g}): a round must not "
                                 "depend on the other rounds of its call")
    report["chunking"] = "passed"

    # ground truth
    try:
        eps = ground_truth(mech, delta, 1)
    except (ValueError, TypeError) as exc:
        fail("ground_truth", str(exc))
    if eps is None:
        report["ground_truth"] = "skipped: no ground truth declared"
        return report
    try:
        eps_big = ground_truth(mech, min(0.5, 10 * delta), 1)
    except GroundTruthUnknown:  # pragma: no cover - declared at one delta, not another
        eps_big = None
    if eps_big is not None and eps_big > eps * (1 + 1e-9) + 1e-12:
        fail("ground_truth", f"epsilon({min(0.5, 10 * delta):g}) = {eps_big:.6g} exceeds "
                             f"epsilon({delta:g}) = {eps:.6g}: it must not increase with delta")
    if truth_rounds == 0:
        report["ground_truth"] = "passed (declared value only; truth_rounds = 0)"
        return report
    pick = tuple(t for t in ("semi-star", "semi-max") if t in tests) or tests[:1]
    game = play(mech, truth_rounds, child_seed(root, 1), tau=1, tests=pick,
                chunk_size=min(truth_rounds, 4096))
    for name in pick:
        mem, non = game.scores(name)
        if min(mem.size, non.size) < 2:  # pragma: no cover - 2000 fair coins
            continue
        lb = epsilon_lower_bound(mem, non, delta=delta, failure_prob=TRUTH_FAILURE_PROB,
                                 method="cp").epsilon_lower_bound
        if lb > eps * (1 + 1e-9) + 1e-9:
            fail("ground_truth", f"the releases certify epsilon >= {lb:.4g} ({name}, "
                                 f"{truth_rounds} games, Clopper-Pearson at failure probability "
                                 f"{TRUTH_FAILURE_PROB:g}) but the mechanism declares epsilon("
                                 f"{delta:g}) = {eps:.4g}")
    report["ground_truth"] = "passed"
    return report
