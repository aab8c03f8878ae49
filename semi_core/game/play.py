r"""The one game runner: every membership game of the toolkit is played here.

Three Crafters (SeMI seed Alg. 1), one machinery:

:func:`play`
    ``R`` i.i.d. rounds of the SeMI game on any :class:`~semi_core.mechanisms.base.Mechanism`:
    :math:`B\sim\mathrm{Bernoulli}(p)`, :math:`\tau\sim\nu_\tau` (fixed, uniform or any prior),
    releases from ``mech.release``, every SeMI statistic from ``mech.log_lr_steps``
    (:func:`~semi_core.mechanisms.base.statistics`) plus optional *scorers* (loss-based
    attacks, baselines) on the same releases.
:func:`play_sweep`
    the same game at several fixed insertion times. A non-member round does not depend on
    :math:`\tau` (nothing is inserted), so one stream of :math:`H_0` rounds serves every
    :math:`\tau`: game ``r`` of insertion time :math:`\tau` with :math:`B=0` uses :math:`H_0`
    round :math:`\#\{r'<r: B^{\tau}_{r'}=0\}`. For each :math:`\tau` the non-member rounds are
    i.i.d. :math:`H_0` rounds, as the game requires; results for different :math:`\tau` are
    dependent (which matters only for a post-hoc maximum over :math:`\tau`).
:func:`play_recorded`
    games that were played elsewhere: recorded releases (a user's saved checkpoints, logged
    scores) whose membership and insertion times are known, scored by the same statistics and
    scorers as every other game; the mechanism only ``load`` s its releases.
:func:`play_pool`
    population games, where one trained model serves many rounds: the Crafter draws a
    membership matrix (models :math:`\times` records), a *pool mechanism* trains one model per
    row (``release_pool``), and every (target model, record) pair is a round scored by pool
    scorers (white-box attacks, reference-model attacks). Rounds of one model are not
    independent; certified bounds on such games need the caveat the result's metadata states.

Reproducibility and executors. Work is cut into chunks; chunk ``k`` of a stage draws from the
stream :func:`semi_core._rng.child_seed` ``(seed, stage, ..., k)``, and results are assembled in
chunk order, so the same seed gives a bit-identical :class:`~semi_core.game.result.GameResult`
in-process, on threads and on a Dask cluster with any number of workers
(:class:`~semi_core.game.backends.Executor`). The result depends on ``chunk_size`` (part of the
seeding), never on the executor.

Resources and cancellation. Before any work a one-round pilot (its own seed stream, discarded)
measures the bytes and seconds per round; the memory the run would need is checked against the
limit (:func:`semi_core._validation.check_memory`) and the estimate is kept in the result's
``metadata["estimate"]``. An interrupt (SIGINT, or SIGTERM in the CLI) stops after the running
chunks; with ``on_interrupt="partial"`` the finished chunks come back as a result with
``partial=True``, otherwise the interrupt propagates.

Documented exceptions (loops over rounds that stay outside this module): the compiled engine's
kernel loop (:mod:`semi_core.game.engine`, one nogil call per chunk of this very chunking) and
the step loop of the anytime-valid sequential audits (:mod:`semi_core.audit.sequential`, where
the number of observations is a stopping time, not a fixed number of rounds).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

from semi_core._progress import as_reporter
from semi_core._rng import as_seed_sequence, child_seed
from semi_core._validation import (
    check_int,
    check_memory,
    check_pmf,
    check_probability,
    check_tau,
    format_bytes,
)
from semi_core.game._tau import resolve_tau_pmf
from semi_core.game.backends import Executor, Interrupted
from semi_core.game.result import GameResult
from semi_core.mechanisms.base import is_mechanism, offered_tests, statistics

__all__ = ["play", "play_sweep", "play_pool", "play_recorded", "crafter", "resolve_tau_pmf", "Scorer",
           "PoolScorer", "PoolView", "scorer", "estimate_play", "Estimate", "ON_INTERRUPT"]

#: What an interrupt does: re-raise (``KeyboardInterrupt``) or return the finished chunks.
ON_INTERRUPT = ("raise", "partial")

# Seed-stream stages (child_seed(root, STAGE, ...)); chunk k of play() is child_seed(root, k)
# so that results equal those of the earlier reference game for a fresh root.
_SWEEP_BITS, _SWEEP_H0, _SWEEP_H1 = 0, 1, 2
_POOL_MEMBERSHIP, _POOL_TRAIN, _POOL_SCORE = 0, 1, 2
_PILOT = 2**31 - 1
_SCORER_STREAM = 0


# --------------------------------------------------------------------------------- Crafter
def crafter(mech, rng: np.random.Generator, rounds: int, *, p_member: float = 0.5,
            tau_pmf=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Seed Alg. 1 for ``rounds`` independent games: returns ``(B, tau, releases)``.

    Parameters
    ----------
    mech : Mechanism
    rng : numpy.random.Generator
    rounds : int
    p_member : float
        :math:`\\nu_B(1)`, in (0, 1).
    tau_pmf : array_like, shape (T,), optional
        :math:`\\nu_\\tau` (uniform if None).

    Returns
    -------
    B : ndarray of bool, (rounds,)
    tau : ndarray of int, (rounds,), values in 1..T
    releases : ndarray, (rounds, T, ...)
    """
    p = resolve_tau_pmf(mech.T, tau_pmf)
    B = rng.random(rounds) < p_member
    tau = rng.choice(mech.T, size=rounds, p=p) + 1
    return B, tau, check_releases(mech, mech.release(B, tau, rng), rounds)


def check_releases(mech, releases, rounds: int) -> np.ndarray:
    """A mechanism's releases as a real ``(rounds, T, ...)`` array, or an error naming it.

    Parameters
    ----------
    mech : Mechanism
        The mechanism that released them (named in errors).
    releases : ndarray
        What ``mech.release`` returned.
    rounds : int
        Expected number of rounds.

    Returns
    -------
    ndarray of float, shape (rounds, T, ...)
        The releases.
    """
    who = type(mech).__name__
    if not isinstance(releases, np.ndarray):
        raise TypeError(f"{who}.release must return a numpy array, got "
                        f"{type(releases).__name__}")
    if releases.dtype.kind not in "biuf":
        raise TypeError(f"{who}.release must return real numbers, got dtype {releases.dtype}")
    if releases.ndim < 2 or releases.shape[:2] != (rounds, int(mech.T)):
        raise ValueError(f"{who}.release must return shape ({rounds}, {int(mech.T)}, ...), got "
                         f"{releases.shape}")
    return releases


# --------------------------------------------------------------------------------- scorers
@runtime_checkable
class Scorer(Protocol):
    """An extra score on the releases of a round (higher = member): loss-based attacks and
    baselines computed beside the LR statistics.

    ``names`` are the keys it fills; calling it with ``(releases (R, T, ...), tau (R,), rng)``
    returns ``{name: (R,) array}``. ``rng`` is a Generator of its own stream (reference
    samples, random projections); a scorer must not use any other randomness. Scorers with
    ``tau_free = True`` do not read ``tau`` (:func:`play_sweep` calls them once per chunk).
    """

    names: tuple[str, ...]

    def __call__(self, releases, tau, rng: np.random.Generator) -> Mapping[str, np.ndarray]:
        ...


@dataclass(frozen=True)
class _FunctionScorer:
    fn: Callable
    name: str
    tau_free: bool = False

    @property
    def names(self) -> tuple[str, ...]:
        return (self.name,)

    def __call__(self, releases, tau, rng):
        return {self.name: self.fn(releases, tau, rng)}


def scorer(fn: Callable, name: str, *, tau_free: bool = False) -> Scorer:
    """Wrap ``fn(releases, tau, rng) -> (R,)`` as a :class:`Scorer` named ``name``.

    ``fn`` must be picklable (a module-level function) to run on Dask workers.

    Parameters
    ----------
    fn : callable
        ``fn(releases, tau, rng) -> ndarray (R,)``.
    name : str
        Name of the score.
    tau_free : bool
        Whether ``fn`` ignores ``tau``.

    Returns
    -------
    Scorer
        The scorer.
    """
    if not callable(fn):
        raise TypeError(f"fn must be callable, got {type(fn).__name__}")
    if not isinstance(name, str) or not name:
        raise ValueError(f"name must be a non-empty string, got {name!r}")
    return _FunctionScorer(fn, name, bool(tau_free))


def _check_scorers(scorers, reserved: Sequence[str]) -> tuple:
    scorers = tuple(scorers or ())
    seen = set(reserved)
    for sc in scorers:
        names = getattr(sc, "names", None)
        if not callable(sc) or not isinstance(names, tuple) or not names:
            raise TypeError(f"scorers must be Scorer objects (callable, with a names tuple), got "
                            f"{type(sc).__name__}")
        dup = [n for n in names if n in seen]
        if dup:
            raise ValueError(f"score names must be unique, {dup} appear twice")
        seen.update(names)
    return scorers


def _scorer_rng(ss: np.random.SeedSequence) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(child_seed(ss, _SCORER_STREAM)))


def _apply_scorers(scorers, releases, tau, rng, rounds: int, *, only_tau_free=None):
    out: dict[str, np.ndarray] = {}
    for sc in scorers:
        if only_tau_free is not None and bool(getattr(sc, "tau_free", False)) != only_tau_free:
            continue
        got = sc(releases, tau, rng)
        for name in sc.names:
            if name not in got:
                raise ValueError(f"scorer {type(sc).__name__} did not return {name!r}")
            v = got[name]
            if np.iscomplexobj(v):
                raise TypeError(f"scorer {name!r} returned complex values")
            v = np.asarray(v, dtype=float).reshape(-1)
            if v.shape != (rounds,):
                raise ValueError(f"scorer {name!r} must return {rounds} scores, got {v.shape}")
            out[name] = v
    return out


# --------------------------------------------------------------------------------- estimate
@dataclass
class Estimate:
    """Work and memory of a run, from a one-round pilot (nothing of it is kept).

    Attributes
    ----------
    rounds : int
    bytes_per_round : float
        Bytes of one round's releases.
    seconds_per_round : float
        Wall seconds of one pilot round (release and scoring), an upper-side estimate.
    peak_bytes : float
        Releases of the chunks held at once (x3 for scoring temporaries) plus the results.
    seconds : float
        ``rounds * seconds_per_round / parallelism``.
    """

    rounds: int
    bytes_per_round: float
    seconds_per_round: float
    peak_bytes: float
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        """Plain dict (JSON metadata).

        Returns
        -------
        dict of str
            Rounds, bytes and seconds per round, peak bytes and seconds.
        """
        return {"rounds": self.rounds, "bytes_per_round": self.bytes_per_round,
                "seconds_per_round": self.seconds_per_round, "peak_bytes": self.peak_bytes,
                "peak": format_bytes(self.peak_bytes), "seconds": self.seconds}


def estimate_play(mech, rounds: int, *, chunk_size: int, executor=None, n_stats: int = 4,
                  pilot_seed=0, scorers=()) -> Estimate:
    """Estimate the memory and time :func:`play` would need, from a one-round pilot.

    .. math::

        \\text{peak} \\approx (3b + e)\\,c\\,w + f\\,w + 8(s+2)R,\\qquad
        \\text{seconds} \\approx R\\,t_1 / w

    with ``b`` bytes and ``t_1`` seconds per pilot round, ``c`` the chunk size, ``w`` chunks
    at once, ``s`` statistics and ``R`` rounds; ``(e, f) = mech.memory_estimate(releases)``
    where the mechanism measures its own scoring bytes per round and working bytes per
    worker (``0, 0`` otherwise).

    Parameters
    ----------
    mech : Mechanism
        The mechanism.
    rounds : int
        Rounds R of the planned run.
    chunk_size : int
        Rounds per chunk c.
    executor : None, int or Executor
        Where the chunks would run (sets w).
    n_stats : int
        Number of statistics s kept.
    pilot_seed : int or numpy.random.SeedSequence
        Seed of the pilot round.
    scorers : sequence of Scorer
        Extra scorers run in the pilot.

    Returns
    -------
    Estimate
        Peak bytes and seconds.
    """
    ex = Executor.coerce(executor)
    ss = child_seed(as_seed_sequence(pilot_seed), _PILOT)
    rng = np.random.Generator(np.random.PCG64(ss))
    t0 = time.perf_counter()
    rel = check_releases(mech, mech.release(np.array([True]), np.array([1]), rng), 1)
    mech.log_lr_steps(rel)
    if scorers:
        _apply_scorers(scorers, rel, np.array([1]), _scorer_rng(ss), 1)
    per_round_s = time.perf_counter() - t0
    b = float(rel.nbytes)
    w = max(1, ex.parallelism)
    chunk = min(int(chunk_size), int(rounds))
    extra = fixed = 0.0
    hook = getattr(mech, "memory_estimate", None)
    if callable(hook):  # a mechanism that measures its own memory (scoring per round, and
        # training per worker: e.g. a user's loop, integrations.training)
        extra, fixed = (float(v) for v in hook(rel))
    peak = (3.0 * b + extra) * chunk * w + fixed * w + 8.0 * (n_stats + 2) * rounds
    return Estimate(int(rounds), b, per_round_s, peak, rounds * per_round_s / w)


def _check_estimate(est: Estimate, what: str) -> None:
    check_memory(est.peak_bytes, what,
                 hint="use a smaller chunk_size (--chunk-size), fewer rounds or threads, or a "
                      "Dask cluster (--workers/--scheduler)")


# --------------------------------------------------------------------------------- play
@dataclass(frozen=True)
class _PlaySpec:
    """Everything a chunk of :func:`play` needs (picklable for Dask workers)."""

    mech: Any
    root: np.random.SeedSequence
    rounds: int
    chunk_size: int
    p_member: float
    tau_pmf: np.ndarray
    unif_pmf: np.ndarray | None
    tests: tuple[str, ...]
    scorers: tuple = field(default=())


def _play_chunk(task) -> tuple[GameResult, tuple, str]:
    spec, k = task
    lo = k * spec.chunk_size
    n = min(spec.chunk_size, spec.rounds - lo)
    ss = child_seed(spec.root, k)
    rng = np.random.Generator(np.random.PCG64(ss))
    B, tau, rel = crafter(spec.mech, rng, n, p_member=spec.p_member, tau_pmf=spec.tau_pmf)
    st = statistics(spec.mech, rel, tau, tests=spec.tests, unif_pmf=spec.unif_pmf)
    if spec.scorers:
        st.update(_apply_scorers(spec.scorers, rel, tau, _scorer_rng(ss), n))
    return GameResult(B, tau, st), rel.shape[2:], rel.dtype.str


def _validate_common(mech, rounds, chunk_size, p_member, on_interrupt):
    if not is_mechanism(mech):
        missing = [m for m in ("T", "release", "log_lr_steps", "params") if not hasattr(mech, m)]
        raise TypeError(f"mech must implement the Mechanism protocol (T, release, "
                        f"log_lr_steps, params); {type(mech).__name__} lacks {missing}")
    T = check_int(mech.T, f"{type(mech).__name__}.T", minimum=1)
    rounds = check_int(rounds, "rounds", minimum=1)
    chunk_size = check_int(chunk_size, "chunk_size", minimum=1)
    p_member = check_probability(p_member, "p_member")
    if on_interrupt not in ON_INTERRUPT:
        raise ValueError(f"on_interrupt must be one of {ON_INTERRUPT}, got {on_interrupt!r}")
    return T, rounds, chunk_size, p_member


def _run(executor: Executor, fn, tasks, sizes, progress, on_interrupt, desc, report=None):
    """Run the tasks; on an interrupt return the finished ones (``partial``) or re-raise."""
    try:
        return executor.run(fn, tasks, progress=progress, sizes=sizes, desc=desc,
                            report=report), False
    except Interrupted as exc:
        if on_interrupt != "partial":
            raise
        return [exc.done.get(i) for i in range(len(tasks))], True


def _assemble(parts: list, *, what: str) -> GameResult:
    """Join chunk results in chunk order, checking that every chunk released the same shape."""
    done = _prefix(parts)  # a partial result is the first chunks, as in the full run
    if not done:
        raise KeyboardInterrupt(f"{what}: interrupted before any chunk finished")
    shapes = {(p[1], p[2]) for p in done}
    if len(shapes) > 1:
        raise ValueError(f"the mechanism's releases changed shape or dtype between chunks: "
                         f"{sorted(shapes)} (a release must have the same trailing shape and "
                         "dtype in every call)")
    return GameResult.concatenate([p[0] for p in done])


def play(mech, rounds: int, seed=0, *, p_member: float = 0.5, tau=None, unif_pmf=None,
         tests=None, scorers=(), chunk_size: int = 4096, executor=None,
         progress: bool = False, on_interrupt: str = "raise") -> GameResult:
    r"""Play ``rounds`` rounds of the SeMI game (seed Alg. 1-2) on any mechanism.

    .. math::

        B_r\sim\mathrm{Bernoulli}(p),\ \tau_r\sim\nu_\tau,\ o_r=\mathcal M(D_r\,[+z^*@\tau_r]),
        \quad S_r=\text{statistics}(o_r)\ \text{(releases only)}

    Parameters
    ----------
    mech : Mechanism
        Any object with ``T``, ``release``, ``log_lr_steps`` and ``params``.
    rounds : int
        Number of games R (>= 1).
    seed : int or numpy.random.SeedSequence
        Root seed; chunk ``k`` uses :func:`~semi_core._rng.child_seed` ``(seed, k)``.
    p_member : float
        Probability that the canary is inserted (:math:`\nu_B`).
    tau : None, "uniform", int or array_like
        Insertion-time law :math:`\nu_\tau` of the Crafter.
    unif_pmf : array_like, optional
        Prior of the SeMI-Unif statistic; uniform on 1..T by default (the seed's SeMI-Unif).
        Pass the Crafter's :math:`\nu_\tau` to get the Neyman-Pearson test for that law.
    tests : sequence of str, optional
        LR statistics to compute (default: every test the mechanism offers,
        :func:`~semi_core.mechanisms.base.offered_tests`); ``()`` for scorers only.
    scorers : sequence of Scorer
        Extra scores on the same releases (:func:`scorer` wraps a function).
    chunk_size : int
        Rounds per chunk: the unit of work, of seeding and of memory.
    executor : Executor, int or None
        Where chunks run (:class:`~semi_core.game.backends.Executor`; an int is a thread
        count); the result does not depend on it.
    progress : bool, Reporter or callable
        Report progress (:mod:`semi_core._progress`: a bar on a terminal, a line every few
        seconds otherwise) and the estimated time before long work.
    on_interrupt : {"raise", "partial"}
        On SIGINT/SIGTERM: propagate, or return the finished chunks flagged ``partial``.

    Returns
    -------
    GameResult
        ``metadata`` holds the mechanism's parameters, the executor and the resource estimate.
    """
    T, rounds, chunk_size, p_member = _validate_common(mech, rounds, chunk_size, p_member,
                                                       on_interrupt)
    ex = Executor.coerce(executor)
    root = as_seed_sequence(seed)
    tau_pmf = resolve_tau_pmf(T, tau)
    upmf = None if unif_pmf is None else check_pmf(unif_pmf, "unif_pmf", size=T)
    offered = offered_tests(mech)
    tests = offered if tests is None else tuple(str(t) for t in tests)
    bad = [t for t in tests if t not in offered]
    if bad:
        raise ValueError(f"tests must be drawn from {list(offered)} (what {type(mech).__name__} "
                         f"offers), got {bad}")
    scorers = _check_scorers(scorers, tests)
    if not tests and not scorers:
        raise ValueError("nothing to score: give tests or scorers")
    est = estimate_play(mech, rounds, chunk_size=chunk_size, executor=ex,
                        n_stats=len(tests) + sum(len(s.names) for s in scorers), pilot_seed=root,
                        scorers=scorers)
    _check_estimate(est, f"{rounds} rounds of {type(mech).__name__}")
    as_reporter(progress).announce(est.seconds, f"{rounds} rounds of {type(mech).__name__}")
    spec = _PlaySpec(mech, root, rounds, chunk_size, p_member, tau_pmf, upmf, tests, scorers)
    n_chunks = -(-rounds // chunk_size)
    tasks = [(spec, k) for k in range(n_chunks)]
    sizes = [min(chunk_size, rounds - k * chunk_size) for k in range(n_chunks)]
    t0 = time.perf_counter()
    ran: dict = {}
    parts, partial = _run(ex, _play_chunk, tasks, sizes, progress, on_interrupt, "play", ran)
    out = _assemble(parts, what="play")
    out.seed = root.entropy if isinstance(root.entropy, int) else None
    out.partial = partial
    out.metadata = {"game": "semi", "chunk_size": chunk_size, "p_member": p_member,
                    "mechanism": mech.params(), "executor": ran.get("backend", ex.name),
                    "executor_note": ran.get("note"),
                    "seconds": time.perf_counter() - t0, "estimate": est.to_dict(),
                    "rounds_requested": rounds, "partial": partial}
    return out


# --------------------------------------------------------------------------------- sweep
@dataclass(frozen=True)
class _SweepSpec:
    mech: Any
    root: np.random.SeedSequence
    taus: tuple[int, ...]
    unif_pmf: np.ndarray | None
    tests: tuple[str, ...]
    scorers: tuple


def _sweep_chunk(task):
    """One chunk of H0 rounds (``tau is None``: statistics for every swept tau, shape
    ``(n, len(taus))``) or of H1 rounds at one ``tau`` (shape ``(n,)``)."""
    spec, key, n, tau = task
    mech = spec.mech
    ss = child_seed(spec.root, *key)
    rng = np.random.Generator(np.random.PCG64(ss))
    member = np.full(n, tau is not None)
    tau_rel = np.full(n, 1 if tau is None else tau, dtype=np.int64)
    rel = check_releases(mech, mech.release(member, tau_rel, rng), n)
    srng = _scorer_rng(ss)
    lr = mech.log_lr_steps(rel) if any(t != "final" for t in spec.tests) else None
    cols = [tau] if tau is not None else list(spec.taus)
    per_tau = []
    free = _apply_scorers(spec.scorers, rel, tau_rel, srng, n, only_tau_free=True)
    for t in cols:
        tv = np.full(n, t, dtype=np.int64)
        st = statistics(mech, rel, tv, tests=spec.tests, unif_pmf=spec.unif_pmf, log_lr=lr)
        st.update(_apply_scorers(spec.scorers, rel, tv, srng, n, only_tau_free=False))
        st.update(free)
        per_tau.append(st)
    names = list(per_tau[0])
    stats = {k: np.stack([p[k] for p in per_tau], axis=1) for k in names}
    if tau is not None:
        stats = {k: v[:, 0] for k, v in stats.items()}
    return stats, rel.shape[2:], rel.dtype.str


def play_sweep(mech, rounds: int, taus, seed=0, *, p_member: float = 0.5, unif_pmf=None,
               tests=None, scorers=(), chunk_size: int = 64, executor=None,
               progress: bool = False, on_interrupt: str = "raise") -> dict[int, GameResult]:
    r"""``rounds`` SeMI games at each fixed insertion time in ``taus``, sharing :math:`H_0` rounds.

    Game ``r`` of insertion time :math:`\tau` draws :math:`B^\tau_r\sim\mathrm{Bernoulli}(p)`
    from stream ``(seed, 0, tau)``; with :math:`B^\tau_r=0` it uses :math:`H_0` round
    :math:`h=\#\{r'<r: B^\tau_{r'}=0\}` (stream ``(seed, 1, chunk)``), with :math:`B^\tau_r=1`
    its own :math:`H_1` round (stream ``(seed, 2, tau, chunk)``). Training :math:`H_0` rounds
    once instead of once per :math:`\tau` saves about half of the work times
    :math:`(|\text{taus}|-1)/|\text{taus}|`.

    Parameters
    ----------
    mech : Mechanism
        Its ``release`` must ignore ``tau`` for non-member rounds (nothing is inserted).
    rounds : int
        Games per insertion time (>= 1).
    taus : iterable of int
        Insertion times in ``1..T`` (duplicates are dropped).
    seed, p_member, unif_pmf, tests, scorers, chunk_size, executor, progress, on_interrupt
        As in :func:`play`.

    Returns
    -------
    dict of int -> GameResult
        One result per insertion time (``tau`` constant within it).
    """
    T, rounds, chunk_size, p_member = _validate_common(mech, rounds, chunk_size, p_member,
                                                       on_interrupt)
    ex = Executor.coerce(executor)
    taus = tuple(sorted({check_tau(t, T) for t in np.atleast_1d(np.asarray(taus)).tolist()}))
    if not taus:
        raise ValueError(f"taus must contain at least one insertion time in 1..{T}")
    root = as_seed_sequence(seed)
    upmf = None if unif_pmf is None else check_pmf(unif_pmf, "unif_pmf", size=T)
    offered = offered_tests(mech)
    tests = offered if tests is None else tuple(str(t) for t in tests)
    bad = [t for t in tests if t not in offered]
    if bad:
        raise ValueError(f"tests must be drawn from {list(offered)}, got {bad}")
    scorers = _check_scorers(scorers, tests)
    if not tests and not scorers:
        raise ValueError("nothing to score: give tests or scorers")
    bits = {t: np.random.Generator(np.random.PCG64(child_seed(root, _SWEEP_BITS, t))).random(
        rounds) < p_member for t in taus}
    n_h0 = max(int((~b).sum()) for b in bits.values())
    n_stats = (len(tests) + sum(len(s.names) for s in scorers)) * len(taus)
    est = estimate_play(mech, n_h0 + sum(int(b.sum()) for b in bits.values()),
                        chunk_size=chunk_size, executor=ex, n_stats=n_stats, pilot_seed=root,
                        scorers=scorers)
    what = f"{rounds} rounds at {len(taus)} insertion times of {type(mech).__name__}"
    _check_estimate(est, what)
    as_reporter(progress).announce(est.seconds, what)
    spec = _SweepSpec(mech, root, taus, upmf, tests, scorers)
    tasks, sizes = [], []
    for k, lo in enumerate(range(0, n_h0, chunk_size)):
        n = min(chunk_size, n_h0 - lo)
        tasks.append((spec, (_SWEEP_H0, k), n, None))
        sizes.append(n)
    for t in taus:
        n1 = int(bits[t].sum())
        for k, lo in enumerate(range(0, n1, chunk_size)):
            n = min(chunk_size, n1 - lo)
            tasks.append((spec, (_SWEEP_H1, t, k), n, t))
            sizes.append(n)
    t0 = time.perf_counter()
    parts, partial = _run(ex, _sweep_chunk, tasks, sizes, progress, on_interrupt, "sweep")
    shapes = {(p[1], p[2]) for p in parts if p is not None}
    if len(shapes) > 1:
        raise ValueError(f"the mechanism's releases changed shape or dtype between chunks: "
                         f"{sorted(shapes)}")
    seconds = time.perf_counter() - t0
    h0_parts = [p for (sp, key, n, t), p in zip(tasks, parts, strict=True) if t is None]
    h0_done = _prefix(h0_parts)
    h0 = {k: np.concatenate([p[0][k] for p in h0_done]) for k in h0_done[0][0]} if h0_done \
        else {}
    n_h0_done = next(iter(h0.values())).shape[0] if h0 else 0
    out: dict[int, GameResult] = {}
    for j, t in enumerate(taus):
        h1_parts = _prefix([p for (sp, key, n, tt), p in zip(tasks, parts, strict=True)
                            if tt == t])
        h1 = {k: np.concatenate([p[0][k] for p in h1_parts]) for k in h1_parts[0][0]} \
            if h1_parts else {}
        n_h1_done = next(iter(h1.values())).shape[0] if h1 else 0
        b = bits[t]
        h0_idx = np.cumsum(~b) - 1
        h1_idx = np.cumsum(b) - 1
        keep = np.where(b, h1_idx < n_h1_done, h0_idx < n_h0_done)
        if partial:  # keep the longest prefix of games whose rounds all finished
            stop = int(np.argmin(keep)) if not keep.all() else rounds
            sel = np.arange(stop)
        else:
            sel = np.arange(rounds)
        names = list(h0 or h1)
        stats = {}
        for k in names:
            v = np.empty(sel.size)
            m = b[sel]
            if m.any():
                v[m] = h1[k][h1_idx[sel][m]]
            if (~m).any():
                v[~m] = h0[k][h0_idx[sel][~m], j]
            stats[k] = v
        res = GameResult(b[sel], np.full(sel.size, t, dtype=np.int64), stats,
                         seed=root.entropy if isinstance(root.entropy, int) else None,
                         partial=partial)
        res.metadata = {"game": "semi-sweep", "taus": list(taus), "chunk_size": chunk_size,
                        "p_member": p_member, "mechanism": mech.params(),
                        "executor": ex.name, "seconds": seconds, "estimate": est.to_dict(),
                        "h0_rounds_shared": n_h0, "rounds_released": int(sum(sizes)),
                        "rounds_requested": rounds, "partial": partial}
        out[t] = res
    return out


def _prefix(parts: list) -> list:
    """The finished parts up to the first unfinished one (chunk order)."""
    out = []
    for p in parts:
        if p is None:
            break
        out.append(p)
    return out


# --------------------------------------------------------------------------------- pool
@runtime_checkable
class PoolScorer(Protocol):
    """A score of the records of one target model in a population game.

    ``names`` are the keys it fills; ``scorer(view, t, records, rng)`` returns
    ``{name: (len(records),) array}`` (higher = member) for target model ``t`` of the
    :class:`PoolView`.
    """

    names: tuple[str, ...]

    def __call__(self, view: PoolView, t: int, records: np.ndarray,
                 rng: np.random.Generator) -> Mapping[str, np.ndarray]:
        ...


@dataclass
class PoolView:
    """What pool scorers see: the mechanism, every trained model, the membership matrix.

    Attributes
    ----------
    mech : pool mechanism
    models : ndarray, shape (M, ...)
        ``models[i]`` is the release of model ``i`` (e.g. its weight vector).
    membership : ndarray of bool, shape (M, N)
        Record ``j`` is in the training set of model ``i``.
    records : list of ndarray of int
        ``records[t]``: the records scored on target model ``t`` (its rounds, in order).
    """

    mech: Any
    models: np.ndarray
    membership: np.ndarray
    records: list = field(default_factory=list)

    def reference_models(self, t: int) -> np.ndarray:
        """Indices of every model but ``t`` (its reference models).

        Parameters
        ----------
        t : int
            Index of the target model.

        Returns
        -------
        ndarray of int
            The other models' indices.
        """
        idx = np.arange(self.models.shape[0])
        return idx[idx != t]


@dataclass(frozen=True)
class _PoolSpec:
    mech: Any
    root: np.random.SeedSequence


def _pool_train_chunk(task):
    spec, k, rows = task
    rng = np.random.Generator(np.random.PCG64(child_seed(spec.root, _POOL_TRAIN, k)))
    out = spec.mech.release_pool(rows, rng)
    if not isinstance(out, np.ndarray) or out.shape[0] != rows.shape[0] or \
            out.dtype.kind not in "biuf":
        raise ValueError(f"{type(spec.mech).__name__}.release_pool must return a real array with "
                         f"{rows.shape[0]} rows, got {type(out).__name__} "
                         f"{getattr(out, 'shape', None)}")
    return out


def _pool_score_task(task):
    view, root, scorers, t, records = task
    rng = np.random.Generator(np.random.PCG64(child_seed(root, _POOL_SCORE, t)))
    out: dict[str, np.ndarray] = {}
    for sc in scorers:
        got = sc(view, t, records, rng)
        for name in sc.names:
            v = got[name]
            if np.iscomplexobj(v):
                raise TypeError(f"pool scorer {name!r} returned complex values")
            v = np.asarray(v, dtype=float).reshape(-1)
            if v.shape != records.shape:
                raise ValueError(f"pool scorer {name!r} must return {records.size} scores, got "
                                 f"{v.shape}")
            out[name] = v
    return out


def play_pool(mech, models: int, seed=0, *, p_member: float = 0.5, target_models: int = 1,
              records_per_model: int | None = None, scorers=(), chunk_size: int = 16,
              executor=None, progress: bool = False, membership=None) -> tuple[GameResult,
                                                                               PoolView]:
    r"""A population game: ``models`` models on random subsets of a pool of records.

    The Crafter draws :math:`B_{ij}\sim\mathrm{Bernoulli}(p)` (record ``j`` in the training set
    of model ``i``; stream ``(seed, 0)``) unless ``membership`` is given; the pool mechanism
    trains the models in chunks (``release_pool(rows, rng)``, stream ``(seed, 1, chunk)``); for
    each of the first ``target_models`` models, ``records_per_model`` records (all by default;
    stream ``(seed, 2, t)``) are the rounds, scored by ``scorers`` with every other model
    available as a reference model. Seed §4.1 of ``iha_parameters_vs_loss`` (after Carlini et
    al. 2022).

    Parameters
    ----------
    mech : pool mechanism
        ``n_records`` (N), ``release_pool(rows (m, N) bool, rng) -> (m, ...)`` and ``params()``.
    models : int
        Number of models M (>= 2).
    seed : int or SeedSequence
    p_member : float
        Inclusion probability of each record in each model's training set.
    target_models : int
        Models whose records are the rounds (``1 <= target_models <= models``).
    records_per_model : int, optional
        Rounds per target model (a uniform sample without replacement); all records if None.
    scorers : sequence of PoolScorer
    chunk_size : int
        Models trained per chunk (the unit of work and seeding of training).
    executor, progress
        As in :func:`play`.
    membership : array_like of bool, shape (M, N), optional
        A membership matrix chosen by the caller instead of the Crafter's.

    Returns
    -------
    (GameResult, PoolView)
        Rounds of target model ``t`` are contiguous, in model order (``metadata`` gives the
        model of each block); the view holds every model for further attacks.
    """
    models = check_int(models, "models", minimum=2)
    n_records = check_int(getattr(mech, "n_records", None), f"{type(mech).__name__}.n_records",
                          minimum=1)
    if not callable(getattr(mech, "release_pool", None)):
        raise TypeError(f"mech must be a pool mechanism (n_records, release_pool, params); "
                        f"{type(mech).__name__} has no release_pool")
    p_member = check_probability(p_member, "p_member")
    target_models = check_int(target_models, "target_models", minimum=1, maximum=models)
    chunk_size = check_int(chunk_size, "chunk_size", minimum=1)
    if records_per_model is not None:
        records_per_model = check_int(records_per_model, "records_per_model", minimum=1,
                                      maximum=n_records)
    scorers = tuple(scorers or ())
    if not scorers:
        raise ValueError("scorers must hold at least one PoolScorer")
    _check_scorers(scorers, ())
    ex = Executor.coerce(executor)
    root = as_seed_sequence(seed)
    if membership is None:
        rng = np.random.Generator(np.random.PCG64(child_seed(root, _POOL_MEMBERSHIP)))
        membership = rng.random((models, n_records)) < p_member
    else:
        membership = np.asarray(membership)
        if membership.dtype != bool or membership.shape != (models, n_records):
            raise ValueError(f"membership must be a bool array of shape ({models}, "
                             f"{n_records}), got {membership.dtype} {membership.shape}")
    spec = _PoolSpec(mech, root)
    starts = list(range(0, models, chunk_size))
    tasks = [(spec, k, membership[lo:lo + chunk_size]) for k, lo in enumerate(starts)]
    t0 = time.perf_counter()
    trained = ex.run(_pool_train_chunk, tasks, progress=progress,
                     sizes=[t[2].shape[0] for t in tasks], desc="train")
    shapes = {(a.shape[1:], a.dtype.str) for a in trained}
    if len(shapes) > 1:
        raise ValueError(f"release_pool returned different shapes between chunks: {shapes}")
    view = PoolView(mech, np.concatenate(trained), membership)
    t_train = time.perf_counter() - t0
    picks = []
    for t in range(target_models):
        if records_per_model is None:
            picks.append(np.arange(n_records))
        else:
            rng = np.random.Generator(np.random.PCG64(child_seed(root, _POOL_SCORE, t, 0)))
            picks.append(np.sort(rng.choice(n_records, size=records_per_model, replace=False)))
    view.records = picks
    stasks = [(view, root, scorers, t, picks[t]) for t in range(target_models)]
    scored = ex.run(_pool_score_task, stasks, progress=progress,
                    sizes=[p.size for p in picks], desc="score")
    member = np.concatenate([membership[t, picks[t]] for t in range(target_models)])
    stats = {k: np.concatenate([s[k] for s in scored]) for k in scored[0]}
    res = GameResult(member, np.ones(member.size, dtype=np.int64), stats,
                     seed=root.entropy if isinstance(root.entropy, int) else None)
    res.metadata = {"game": "pool", "models": models, "target_models": target_models,
                    "rounds_per_model": [int(p.size) for p in picks], "p_member": p_member,
                    "mechanism": mech.params(), "executor": ex.name,
                    "seconds_train": t_train, "seconds_score": time.perf_counter() - t0 - t_train,
                    "independence": "rounds of one target model share that model: they are "
                                    "not independent games"}
    return res, view


# --------------------------------------------------------------------------------- recorded
@dataclass(frozen=True)
class _RecordedSpec:
    mech: Any
    items: tuple
    member: np.ndarray
    tau: np.ndarray
    unif_pmf: np.ndarray | None
    tests: tuple[str, ...]
    scorers: tuple
    root: np.random.SeedSequence
    chunk_size: int


def _recorded_chunk(task):
    spec, k = task
    lo = k * spec.chunk_size
    hi = min(lo + spec.chunk_size, len(spec.items))
    rel = spec.mech.load(spec.items[lo:hi])
    if not isinstance(rel, np.ndarray) or rel.shape[0] != hi - lo or rel.dtype.kind not in "biuf":
        raise ValueError(f"{type(spec.mech).__name__}.load must return a real array with "
                         f"{hi - lo} rows, got {type(rel).__name__} {getattr(rel, 'shape', None)}")
    tau = spec.tau[lo:hi]
    st = statistics(spec.mech, rel, tau, tests=spec.tests, unif_pmf=spec.unif_pmf)
    if spec.scorers:
        ss = child_seed(spec.root, k)
        st.update(_apply_scorers(spec.scorers, rel, tau, _scorer_rng(ss), hi - lo))
    return GameResult(spec.member[lo:hi], tau, st), rel.shape[1:], rel.dtype.str


def play_recorded(mech, items: Sequence, member, tau, seed=0, *, unif_pmf=None, tests=None,
                  scorers=(), chunk_size: int = 16, executor=None, progress: bool = False,
                  on_interrupt: str = "raise") -> GameResult:
    r"""Score games that were played elsewhere (recorded releases with known membership).

    The rounds are ``items`` (e.g. one directory of checkpoints per training run); chunk ``k``
    asks the mechanism to ``load`` its items into releases and scores them exactly as
    :func:`play` scores the releases it draws (:func:`~semi_core.mechanisms.base.statistics`
    plus scorers; scorer randomness from stream ``(seed, k)``). The membership bits and
    insertion times come from the recording: the certified bounds on the result are valid
    when they were drawn as the game requires (independently, membership with a probability
    fixed in advance), which the caller must ensure.

    Parameters
    ----------
    mech : recorded mechanism
        ``T``, ``load(items) -> releases`` (first axis: one row per item),
        ``log_lr_steps(releases) -> (k, T)``, ``params()``.
    items : sequence
        One picklable item per round (paths, indices).
    member : array_like of bool, shape (R,)
    tau : int or array_like of int, shape (R,)
        Insertion times in ``1..T`` (known to SeMI*).
    seed, unif_pmf, tests, scorers, chunk_size, executor, progress, on_interrupt
        As in :func:`play` (``chunk_size`` in items).

    Returns
    -------
    GameResult
    """
    for m in ("T", "load", "log_lr_steps", "params"):
        if not hasattr(mech, m):
            raise TypeError(f"mech must be a recorded mechanism (T, load, log_lr_steps, "
                            f"params); {type(mech).__name__} lacks {m!r}")
    T = check_int(mech.T, f"{type(mech).__name__}.T", minimum=1)
    items = tuple(items)
    R = len(items)
    if R == 0:
        raise ValueError("items must hold at least one recorded round")
    member = np.asarray(member)
    if member.dtype != bool or member.shape != (R,):
        raise ValueError(f"member must be {R} booleans (one per item), got {member.dtype} "
                         f"{member.shape}")
    tau = np.broadcast_to(np.asarray(tau), (R,)).astype(np.int64)
    if tau.size and (tau.min() < 1 or tau.max() > T):
        raise ValueError(f"tau must be in 1..{T}, got values in {tau.min()}..{tau.max()}")
    chunk_size = check_int(chunk_size, "chunk_size", minimum=1)
    if on_interrupt not in ON_INTERRUPT:
        raise ValueError(f"on_interrupt must be one of {ON_INTERRUPT}, got {on_interrupt!r}")
    upmf = None if unif_pmf is None else check_pmf(unif_pmf, "unif_pmf", size=T)
    offered = offered_tests(mech)
    tests = offered if tests is None else tuple(str(t) for t in tests)
    bad = [t for t in tests if t not in offered]
    if bad:
        raise ValueError(f"tests must be drawn from {list(offered)}, got {bad}")
    scorers = _check_scorers(scorers, tests)
    ex = Executor.coerce(executor)
    root = as_seed_sequence(seed)
    spec = _RecordedSpec(mech, items, member, tau, upmf, tests, scorers, root, chunk_size)
    n_chunks = -(-R // chunk_size)
    tasks = [(spec, k) for k in range(n_chunks)]
    sizes = [min(chunk_size, R - k * chunk_size) for k in range(n_chunks)]
    t0 = time.perf_counter()
    parts, partial = _run(ex, _recorded_chunk, tasks, sizes, progress, on_interrupt, "score")
    out = _assemble(parts, what="play_recorded")
    out.seed = root.entropy if isinstance(root.entropy, int) else None
    out.partial = partial
    out.metadata = {"game": "recorded", "chunk_size": chunk_size, "mechanism": mech.params(),
                    "executor": ex.name, "seconds": time.perf_counter() - t0,
                    "rounds_requested": R, "partial": partial}
    return out
