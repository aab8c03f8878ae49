r"""Fast, exact and reproducible Monte Carlo engine for the SeMI game (seed Alg. 1-2).

The engine plays R rounds of the SeMI game for the empirical-mean mechanism
(:class:`~semi_core.mechanisms.empirical_mean.EmpiricalMean`, seed §3, App. A-E) with compiled
chunk kernels (:mod:`semi_core.kernels.engine_kernels`) and computes SeMI*, SeMI-Unif,
SeMI-max and Final Observation in the same pass. Per round:

1. :math:`B\sim\nu_B`, :math:`\tau\sim\nu_\tau`, :math:`j\sim\mathcal U\{1..n_\tau\}`;
2. for :math:`t=1..T` a batch of :math:`n_t` data points :math:`x=\mu_t+L_te`
   (:mod:`semi_core.mechanisms.distributions`); when :math:`B=1` datum :math:`j` of batch
   :math:`\tau` is replaced by :math:`z^*`;
3. the running means are released; the auditor's per-step log-LRs (seed Thm 3.1 with
   :math:`(\mu_t,\Sigma_t,n_t)`, App. C) depend on them only through the isolated batch means
   (Remark 3.3), which the kernel forms directly in whitened coordinates
   :math:`w_t=L_t^{-1}(\bar X_t-\mu_t)`:

.. math::

    \log LR_t = -\frac d2\log\frac{n_t-1}{n_t} + \frac{n_t}{n_t-1}\Big(u_t^\top w_t
    - \frac{\|w_t\|^2}2\Big) - \frac{m_t}{2(n_t-1)},\qquad
    S^{*}=\log LR_\tau,\quad S^{\max}=\max_t\log LR_t,\quad
    S^{\mathrm{Unif}}=\operatorname{logsumexp}_t(\log LR_t+\log\pi_t).

Final Observation uses :math:`W=\hat\mu_T-\bar\mu` with
:math:`W|H_0\sim\mathcal N(0,\sum_t n_t\Sigma_t/N_T^2)` and
:math:`W|H_1^\tau\sim\mathcal N((z^*-\mu_\tau)/N_T,(\sum_t n_t\Sigma_t-\Sigma_\tau)/N_T^2)`
(general Gaussian log-LR when :math:`\Sigma_t` varies).

Modes
-----
``exact``
    every datum is simulated (any data family: Gaussian, Laplace, Student-t, Bernoulli,
    exponential). For non-Gaussian data the Gaussian LR is misspecified on purpose.
``sufficient``
    Gaussian data only: the whitened batch means are drawn directly,
    :math:`w_t\sim\mathcal N(0,I/n_t)` or :math:`\mathcal N(u_t/n_t,(n_t-1)I/n_t^2)` -- exact in
    distribution and :math:`n\times` cheaper.

Reproducibility
---------------
Rounds are cut into chunks of ``chunk_size``; chunk ``k`` uses the Generator
``PCG64(SeedSequence(seed).spawn-child k)`` (built deterministically from the root's entropy
and spawn key, so a root ``SeedSequence`` may be reused). A chunk is played sequentially by one
``nogil`` kernel call, so the result depends only on ``(seed, chunk_size)`` -- not on the
number of threads, Dask workers or ``numba.set_num_threads``. Numba ``prange`` is deliberately
not used inside a chunk: a shared generator in a parallel loop would make results depend on
scheduling; parallelism is over chunks (:mod:`semi_core.game.backends`).

Kernels
-------
Small jobs run on the NumPy twin of the chunk kernel (:mod:`semi_core.kernels._twins`) without
importing Numba, large ones on the compiled kernel; the choice (:func:`choose_kernel`, forced
by ``kernel=`` or ``SEMI_CORE_FORCE_TWIN=1``) depends on the arguments alone, both draw the
same stream (statistics equal to rounding), and a result records it (``kernel``).

Seed settings
-------------
* The seed (§3.3, Fig. 2) evaluates SeMI-Unif with the *uniform* prior also when the Crafter
  fixes :math:`\tau` (:math:`\nu_\tau=\delta_\tau`); the engine therefore defaults
  ``unif_pmf`` to the uniform prior, not to :math:`\nu_\tau` (with a point mass SeMI-Unif
  would coincide with SeMI*).
* Per-step parameters are allowed (Thm E.1's i.i.d. statistics need stationarity; the engine
  assumes none). Power versus dimension (App. H.3): see claim
  ``semi_sequential_mi:appH.3`` (``semi-core verify``).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace

import numpy as np

from semi_core._names import SEMI_TESTS
from semi_core._rng import as_seed_sequence, child_seed
from semi_core._validation import (
    ResourceLimitError,
    check_int,
    check_memory,
    check_pmf,
    check_probability,
    memory_limit,
)
from semi_core.game._tau import resolve_tau_pmf
from semi_core.game.backends import Executor
from semi_core.game.result import GameResult
from semi_core.kernels import _twins
from semi_core.kernels._jit import use_twins
from semi_core.kernels._records import SemiChunkSetup
from semi_core.mechanisms.distributions import DataDistribution, parse_data

__all__ = ["EngineParams", "EngineResult", "build_params", "simulate", "simulate_streaming",
           "estimate_resources", "play_chunk", "reference_per_round", "MODES",
           "STAT_NAMES", "DEFAULT_MAX_VARIATES", "KERNELS", "choose_kernel", "TWIN_WORK_LIMIT"]

MODES = ("exact", "sufficient")

#: Row order of the kernel's output (:data:`semi_core.kernels.engine_kernels.STAT_NAMES`).
STAT_NAMES = SEMI_TESTS

#: ``kernel`` arguments: the size rule, the compiled kernel, the NumPy twin (the last two are
#: also the values a result's ``kernel`` field records).
KERNELS = ("auto", "numba", "numpy-twin")

#: Work units of one round besides its random variates: the twin's fixed cost per round
#: (control draws, searchsorted, logsumexp) over its cost per variate (1.4 us / 22 ns).
_ROUND_WORK = 64

#: Work (random variates + 64 per round, :func:`estimate_resources`) below which
#: ``kernel="auto"`` runs the NumPy twin (see :func:`choose_kernel` for the measurement).
TWIN_WORK_LIMIT = 2.0e7

#: Largest number of random variates one call draws unless ``max_variates`` says otherwise
#: (about an hour of one core at ~3e8 variates/s; a Dask cluster divides the time).
DEFAULT_MAX_VARIATES = 1e12

#: Bytes held per round by :func:`simulate` (4 float64 statistics, tau, member) times the
#: copies made while concatenating chunks and sorting for the summary.
_BYTES_PER_ROUND_IN_MEMORY = (4 * 8 + 8 + 1) * 3


@dataclass(frozen=True)
class EngineParams:
    """Everything a chunk kernel needs (plain arrays; picklable for Dask workers).

    Attributes
    ----------
    setup : SemiChunkSetup
        The kernel's set-up record (:class:`semi_core.kernels._records.SemiChunkSetup`, the one
        list of its fields), arrays as given (any dtype and layout; :meth:`kernel_setup`
        makes them the compiled signature's).
    data_spec : str
        The data family's spec (``"gaussian"``, ``"laplace"``, ...).
    mode : str
        ``"exact"`` or ``"sufficient"``.
    kernel : {None, "numba", "numpy-twin"}
        The kernel a run chose (:func:`choose_kernel`); None follows ``SEMI_CORE_FORCE_TWIN``.
    """

    setup: SemiChunkSetup
    data_spec: str = "gaussian"
    mode: str = "exact"
    kernel: str | None = None

    @property
    def exact(self) -> bool:
        """Every datum is simulated (``mode == "exact"``)."""
        return bool(self.setup.exact)

    @property
    def T(self) -> int:
        """Number of steps."""
        return int(np.size(self.setup.n_t))

    @property
    def d(self) -> int:
        """Dimension."""
        return int(np.shape(self.setup.u)[1])

    def kernel_setup(self) -> SemiChunkSetup:
        """The kernel's typed set-up record (one compiled signature: C-contiguous int64 /
        float64 arrays, Python scalars).

        Returns
        -------
        SemiChunkSetup
            The record passed to the compiled kernel.
        """
        # built once per game, not once per chunk (the conversion costs ~0.1 ms a call)
        cached = self.__dict__.get("_kernel_setup")
        if cached is not None:
            return cached
        # the record's own field list and annotations drive the conversion (one field list)
        scalars = {"bool": bool, "int": int, "float": float}
        fields = {}
        for name, ann in SemiChunkSetup.__annotations__.items():
            ann = getattr(ann, "__forward_arg__", getattr(ann, "__name__", ann))
            v = getattr(self.setup, name)
            if ann in scalars:
                fields[name] = scalars[ann](v)
            else:
                dtype = np.int64 if name == "n_t" else np.float64
                fields[name] = np.ascontiguousarray(v, dtype=dtype)
        out = SemiChunkSetup(**fields)
        object.__setattr__(self, "_kernel_setup", out)  # frozen: a cache, not a field
        return out

    def variates_per_round(self) -> int:
        """Random variates per round for the data (excluding the 3 control uniforms).

        Returns
        -------
        int
            Number of variates.
        """
        n_t = np.asarray(self.setup.n_t)
        per_step = n_t if self.exact else np.ones_like(n_t)
        return int(per_step.sum()) * self.d


@dataclass(repr=False)
class EngineResult(GameResult):
    """:class:`~semi_core.game.result.GameResult` plus how it was produced."""

    mode: str = "exact"
    data: str = "gaussian"
    chunk_size: int = 0
    seconds: float = 0.0
    backend: str = "local"
    kernel: str = "numba"
    info: dict = field(default_factory=dict)


def _family_scale(family) -> float:
    if family.name == "laplace":
        return 1.0 / math.sqrt(2.0)
    if family.name == "student-t":
        return math.sqrt((family.param - 2.0) / family.param)
    if family.name == "bernoulli":
        return math.sqrt(family.param * (1.0 - family.param))
    return 1.0


def build_params(mech, *, data="gaussian", mode: str = "exact", tau=None, p_member: float = 0.5,
                 unif_pmf=None) -> EngineParams:
    """Kernel parameters from a mechanism, a data family and the Crafter's laws.

    Parameters
    ----------
    mech : EmpiricalMean
        Supplies :math:`(n_t,\\mu_t,\\Sigma_t)`, its Cholesky factors ``chol_t``, the whitened
        target offsets ``u_t`` and the per-step coefficients (``step_coefficients``).
    data : str or DataFamily
        Standardised data family (``gaussian``, ``laplace``, ``student-t:NU``,
        ``bernoulli:P``, ``exponential``); data have the mechanism's mean and covariance.
    mode : {"exact", "sufficient"}
    tau : None, "uniform", int or array_like
        Crafter's insertion-time law :math:`\\nu_\\tau` (int = point mass at that step).
    p_member : float
        :math:`\\nu_B(1)` in (0, 1).
    unif_pmf : array_like, optional
        Prior :math:`\\pi` of SeMI-Unif; uniform by default (seed Thm 3.10, Fig. 2).

    Returns
    -------
    EngineParams
        The kernel's parameters.
    """
    family = parse_data(data)
    if not isinstance(mode, str) or mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    if mode == "sufficient" and not family.is_gaussian:
        raise ValueError(f"mode 'sufficient' draws Gaussian batch means and needs data "
                         f"'gaussian', got {family.spec!r}; use mode 'exact'")
    p_member = check_probability(p_member, "p_member")
    T, d = int(mech.T), int(mech.d)
    pmf = resolve_tau_pmf(T, tau)
    upmf = np.full(T, 1.0 / T) if unif_pmf is None else check_pmf(unif_pmf, "unif_pmf", size=T)
    with np.errstate(divide="ignore"):
        log_w = np.log(upmf)
    cdf = np.cumsum(pmf)
    cdf[-1] = 1.0
    c0 = np.empty(T)
    k = np.empty(T)
    for t in range(T):
        c0_t, _b, s_t = mech.step_coefficients(t + 1)
        c0[t], k[t] = c0_t, -2.0 * s_t
    n_t = np.ascontiguousarray(mech.n_t, dtype=np.int64)
    N = float(n_t.sum())
    chol = np.asarray(mech.chol_t, dtype=np.float64)
    stationary = bool(np.all(chol == chol[0]))
    if stationary:
        fo_A, fo_C0 = np.zeros((1, 1, 1)), np.eye(1)
        fo_C1, fo_m1, fo_ld1, fo_ld0 = np.zeros((1, 1, 1)), np.zeros((1, 1)), np.zeros(1), 0.0
    else:
        cov = np.asarray(mech.cov_t, dtype=np.float64)
        fo_A = n_t[:, None, None] / N * chol
        V0 = np.einsum("t,tij->ij", n_t.astype(float), cov) / N**2
        fo_C0 = np.linalg.cholesky(V0)
        fo_C1 = np.stack([np.linalg.cholesky(V0 - cov[t] / N**2) for t in range(T)])
        fo_m1 = np.asarray(mech.delta_t, dtype=np.float64) / N
        fo_ld0 = float(np.log(np.diag(fo_C0)).sum())
        fo_ld1 = np.array([np.log(np.diag(fo_C1[t])).sum() for t in range(T)])
    c = np.ascontiguousarray
    return EngineParams(SemiChunkSetup(
        exact=mode == "exact", code=int(family.code),
        fparam=float(family.param) if family.name in ("student-t", "bernoulli") else 0.0,
        scale=_family_scale(family), n_t=n_t, u=c(mech.u_t, dtype=np.float64).reshape(T, d),
        llr_c0=c0, llr_k=k, log_w_unif=c(log_w, dtype=np.float64), p_member=p_member,
        tau_cdf=c(cdf), fo_stationary=stationary, fo_A=c(fo_A), fo_C0=c(fo_C0),
        fo_logdet0=float(fo_ld0), fo_C1=c(fo_C1), fo_m1=c(fo_m1),
        fo_logdet1=c(fo_ld1, dtype=np.float64), fo_N=N), data_spec=family.spec, mode=mode)


def play_chunk(params: EngineParams, seed_seq: np.random.SeedSequence, rounds: int,
               *, twin: bool | None = None, out=None):
    """Play one chunk; returns ``(member, tau, stats)`` with ``stats`` of shape (4, rounds).

    ``twin=None`` follows ``params.kernel`` (:func:`choose_kernel`) and ``SEMI_CORE_FORCE_TWIN``
    (which wins); ``True``/``False`` forces the NumPy twin / the compiled kernel. Numba is
    imported only when the compiled kernel runs.

    Parameters
    ----------
    params : EngineParams
        The game (:func:`build_params`).
    seed_seq : numpy.random.SeedSequence
        The chunk's stream.
    rounds : int
        Rounds in the chunk.
    twin : bool, optional
        Force the NumPy twin (True) or the compiled kernel (False).
    out : tuple of ndarray, optional
        ``(member, tau, stats)`` to write into (views of a run's result arrays: no chunk
        buffers and no copy); ``stats`` may be a column slice of a larger ``(4, R)`` array.

    Returns
    -------
    member : ndarray of bool, shape (rounds,)
        Membership bits.
    tau : ndarray of int, shape (rounds,)
        Insertion times.
    stats : ndarray, shape (4, rounds)
        The four test statistics.
    """
    gen = np.random.Generator(np.random.PCG64(seed_seq))
    if out is None:
        member = np.empty(rounds, dtype=np.bool_)
        tau = np.empty(rounds, dtype=np.int64)
        stats = np.empty((4, rounds), dtype=np.float64)
    else:
        member, tau, stats = out
    setup = params.kernel_setup()
    forced = use_twins()  # also notes the kernel use (the twin pass of the suite)
    if twin is None:
        twin = forced or params.kernel == "numpy-twin"
    if twin:
        _twins.semi_chunk(gen, int(rounds), setup, member, tau, stats)
    else:
        from semi_core.kernels.engine_kernels import semi_chunk  # imports Numba

        semi_chunk(gen, int(rounds), setup, member, tau, stats)
    return member, tau, stats


def _chunk_task(task):
    # Top-level (picklable) unit of work for thread pools and Dask workers; the finiteness
    # check runs here, in parallel, not in the caller's serial assembly.
    params, seed, k, size = task
    member, tau, stats = play_chunk(params, child_seed(seed, k), size)
    return member, tau, stats, bool(np.isfinite(stats).all())


class _IntoTask:
    """A chunk written straight into the run's result arrays (local threads only: the views
    are shared memory; chunks write disjoint slices, so no copy and no serial assembly)."""

    def __init__(self, member, tau, stats, chunk_size: int):
        self.member, self.tau, self.stats, self.chunk = member, tau, stats, chunk_size

    def __call__(self, task) -> bool:
        params, seed, k, size = task
        a = k * self.chunk
        b = a + size
        st = self.stats[:, a:b]
        play_chunk(params, child_seed(seed, k), size,
                   out=(self.member[a:b], self.tau[a:b], st))
        return bool(np.isfinite(st).all())


class _Tasks:
    """Lazy task list ``(params, root, k, size)`` (no list of millions of tuples)."""

    def __init__(self, params, root, rounds: int, chunk_size: int, extra=()):
        self.params, self.root, self.rounds, self.chunk = params, root, rounds, chunk_size
        self.extra = tuple(extra)
        self.n = -(-rounds // chunk_size)

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, k: int):
        if not 0 <= k < self.n:
            raise IndexError(k)
        size = min(self.chunk, self.rounds - k * self.chunk)
        return (self.params, self.root, k, size, *self.extra)

    def sizes(self) -> list[int]:
        return [min(self.chunk, self.rounds - k * self.chunk) for k in range(self.n)]


def _work(params: EngineParams, rounds: int) -> float:
    return float(rounds) * (params.variates_per_round() + 3 + _ROUND_WORK)


def _runs_twin(params: EngineParams) -> bool:
    return params.kernel == "numpy-twin" or (params.kernel is None and use_twins())


def choose_kernel(params: EngineParams, rounds: int, kernel: str = "auto") -> str:
    r"""The kernel a run of ``rounds`` games uses: the NumPy twin for small jobs, else Numba.

    A process that runs the compiled kernel first imports Numba and loads its cached kernels,
    :math:`L \approx 0.45` to :math:`0.8` s of CPU (measured, best of 7 fresh processes each
    playing one round at :math:`n = T = 10`: 0.50-0.62 s on the twin, 1.06-1.29 s compiled,
    against 0.43-0.50 s for ``import numpy, scipy.special``, on a loaded 2-core machine). The
    twin costs more per round; its excess over the compiled kernel was measured
    (``play_chunk``, one core) as :math:`a + b\,v` per round with :math:`v` the random
    variates of a round (data plus 3 control draws): :math:`a \approx 1.4` us, :math:`b
    \approx 22` ns (1.6 us per round in sufficient mode at :math:`T = 10, d = 1`, 3.6 us exact
    at :math:`n = T = 10`, 9-12 us at :math:`n = 100, T = 5`, 220 us at :math:`n = 1000`). With
    the work :math:`W = R\,(v + a/b) = R\,(v + 64)` (:func:`estimate_resources`), the twin is
    cheaper while :math:`b\,W < L`, i.e. :math:`W < L/b \approx 2\times10^7` to
    :math:`3.6\times10^7`; the threshold :data:`TWIN_WORK_LIMIT` is the low end,
    :math:`2\times10^7` (about 120,000 rounds at the seed's :math:`n = T = 10, d = 1`, exact):
    below it the twin's excess :math:`bW < 0.44` s stays under :math:`L`; just above it a
    compiled run may cost up to :math:`L - bW \approx 0.35` s more than the twin would have.
    Below it, ``auto`` runs the twin and Numba is never imported; at or above, the compiled
    kernel.
    The rule prices one job per process (a command line); a process that runs many jobs (a
    sweep, a report) pays :math:`L` once and should pass ``kernel="numba"``.

    The choice depends on the arguments alone (the game and ``rounds``; not the executor,
    threads, workers or chunk size), so a seed gives one result everywhere. The twin draws the
    same Generator stream: membership and :math:`\tau` are identical, the statistics agree to
    summation order (measured at most :math:`4\times10^{-15}` absolute on statistics of order
    1; tested to :math:`10^{-12}` relative + absolute), so a result records which ran
    (``kernel``).

    Parameters
    ----------
    params : EngineParams
        The game (:func:`build_params`).
    rounds : int
        Number of rounds.
    kernel : {"auto", "numba", "numpy-twin"}
        ``auto``: the size rule above; ``numba`` / ``numpy-twin``: force one.
        ``SEMI_CORE_FORCE_TWIN=1`` (or a missing Numba) gives ``numpy-twin`` whatever is asked.

    Returns
    -------
    str
        ``"numba"`` or ``"numpy-twin"``.
    """
    if not isinstance(kernel, str) or kernel not in KERNELS:
        raise ValueError(f"kernel must be one of {KERNELS}, got {kernel!r}")
    if use_twins():
        return "numpy-twin"
    if kernel != "auto":
        return kernel
    return "numpy-twin" if _work(params, rounds) < TWIN_WORK_LIMIT else "numba"


def estimate_resources(params: EngineParams, rounds: int, chunk_size: int, *,
                       keep_scores: bool = True) -> dict:
    """Work and memory of a run, from the arguments alone (nothing is simulated).

    Returns ``{"variates", "work", "bytes_scores", "bytes_chunk"}``: random variates drawn,
    the work of :func:`choose_kernel` (variates + 64 per round), bytes of the per-round scores
    kept by :func:`simulate` (0 when streaming) and bytes of one chunk's working set (the NumPy
    twin draws a block of 256 rounds of every datum at once).

    Parameters
    ----------
    params : EngineParams
        The game.
    rounds : int
        Number of rounds.
    chunk_size : int
        Rounds per chunk.
    keep_scores : bool
        Whether the per-round scores are kept.

    Returns
    -------
    dict
        ``variates``, ``work``, ``bytes_scores`` and ``bytes_chunk``.
    """
    variates = float(rounds) * (params.variates_per_round() + 3)
    per_round = params.variates_per_round() if _runs_twin(params) else params.T * params.d
    chunk = min(int(chunk_size), int(rounds))
    bytes_chunk = 8.0 * (min(chunk, 256) * per_round + 6 * chunk)
    bytes_scores = float(rounds) * _BYTES_PER_ROUND_IN_MEMORY if keep_scores else 0.0
    return {"variates": variates, "work": _work(params, rounds), "bytes_scores": bytes_scores,
            "bytes_chunk": bytes_chunk}


def _check_finite_setup(params: EngineParams) -> None:
    u, n_t = params.setup.u, params.setup.n_t
    m = np.einsum("td,td->t", u, u)
    if not np.all(np.isfinite(m)) or np.max(m) * float(np.max(n_t)) > 1e250:
        raise ValueError(
            f"the target is too far from the data mean (squared Mahalanobis distance m* = "
            f"{float(np.max(m)):.3g}): the statistics overflow floating point. Every test "
            "separates members perfectly long before that (TPR = 1 at any FPR once "
            "sqrt(m*) >> 10); use a distance below 1e100")


def _check_budget(params: EngineParams, rounds: int, chunk_size: int, threads: int,
                  max_variates: float | None, keep_scores: bool) -> dict:
    est = estimate_resources(params, rounds, chunk_size, keep_scores=keep_scores)
    limit = DEFAULT_MAX_VARIATES if max_variates is None else float(max_variates)
    if not (limit > 0):
        raise ValueError(f"max_variates must be > 0, got {max_variates!r}")
    if est["variates"] > limit:
        cheaper = ("; mode 'sufficient' draws T*d variates per round instead of "
                   f"{params.variates_per_round()}" if params.exact and params.data_spec ==
                   "gaussian" else "")
        raise ResourceLimitError(
            f"{rounds} rounds would draw {est['variates']:.3g} random variates "
            f"({params.variates_per_round()} per round), over the limit of {limit:.3g} "
            f"(max_variates / --max-variates){cheaper}; fewer rounds, or a Dask cluster "
            "(--scheduler/--workers) with a raised --max-variates")
    check_memory(est["bytes_chunk"] * max(1, 4 * threads),
                 f"a chunk of {min(chunk_size, rounds)} rounds",
                 hint="use a smaller chunk_size (--chunk-size) or mode 'sufficient'")
    if keep_scores:
        if est["bytes_scores"] > memory_limit():
            raise ResourceLimitError(
                f"keeping the scores of {rounds} rounds would need "
                f"{est['bytes_scores'] / 2**30:.3g} GiB (limit {memory_limit() / 2**30:.3g} "
                "GiB); use simulate_streaming (CLI: --bounded-memory), which keeps per-class "
                "histograms in bounded memory and gives exact TPR at each FPR")
    return est


def simulate(mech, rounds: int, seed=0, *, data="gaussian", mode: str = "exact", tau=None,
             p_member: float = 0.5, unif_pmf=None, chunk_size: int = 16384, executor=None,
             progress: bool = False, max_variates: float | None = None,
             kernel: str = "auto") -> EngineResult:
    """Play ``rounds`` SeMI games with the compiled engine and return every statistic.

    Parameters
    ----------
    mech : EmpiricalMean
        The Gaussian empirical-mean mechanism (seed §3; per-step :math:`(\\mu_t,\\Sigma_t,n_t)`).
    rounds : int
        Number of games R (>= 1).
    seed : int or numpy.random.SeedSequence
        Root seed (chunk k uses child k).
    data : str or DataFamily
        Data family (see :mod:`semi_core.mechanisms.distributions`).
    mode : {"exact", "sufficient"}
        Simulate every datum, or draw Gaussian batch means directly.
    tau : None, "uniform", int or array_like
        Crafter's insertion-time law (uniform when None).
    p_member : float
        Probability of inserting the canary.
    unif_pmf : array_like, optional
        Prior of SeMI-Unif (uniform by default; see the module notes).
    chunk_size : int
        Rounds per chunk, the unit of work and of seeding (memory O(chunk_size * T)).
    executor : Executor, int or None
        Where chunks run (:class:`~semi_core.game.backends.Executor`: local threads, a Dask
        ``LocalCluster``, an existing scheduler or client); identical results everywhere.
        Only connect to a scheduler you trust (the Dask protocol deserialises objects).
    progress : bool, Reporter or callable
        Report progress (:func:`semi_core._progress.as_reporter`): on stderr, a bar on a
        terminal and a plain line at least every 10 s otherwise.
    max_variates : float, optional
        Refuse runs drawing more random variates (default :data:`DEFAULT_MAX_VARIATES`).
    kernel : {"auto", "numba", "numpy-twin"}
        ``auto``: the NumPy twin for small jobs, the compiled kernel for large ones
        (:func:`choose_kernel`); the result's ``kernel`` says which ran.

    Returns
    -------
    EngineResult
        ``member`` (R,), ``tau`` (R,) in 1..T, ``stats`` dict of (R,) arrays keyed by
        ``semi-star``, ``semi-unif``, ``semi-max``, ``final`` (higher = member).

    Raises
    ------
    ResourceLimitError
        Before any work, when the run would exceed ``max_variates`` or the memory limit
        (:func:`semi_core._validation.memory_limit`); the message says what would work
        (:func:`simulate_streaming` for rounds beyond memory, mode ``sufficient``, a cluster).
    ValueError
        When the target is so far that the statistics overflow, or a statistic is not finite.

    Examples
    --------
    >>> from semi_core.mechanisms.empirical_mean import EmpiricalMean
    >>> mech = EmpiricalMean.isotropic(10, 5, distance=3.0)   # n = 10, T = 5, z* at 3 sigma
    >>> res = simulate(mech, 1000, seed=1, tau=3)
    >>> sorted(res.stats)
    ['final', 'semi-max', 'semi-star', 'semi-unif']
    >>> int(res.member.sum()), res.rounds
    (499, 1000)
    >>> s = res.stats["semi-star"]
    >>> print(f"{s[res.member].mean():.1f} {s[~res.member].mean():.1f}")
    0.4 -0.6
    """
    rounds = check_int(rounds, "rounds", minimum=1)
    chunk_size = check_int(chunk_size, "chunk_size", minimum=1)
    ex = Executor.coerce(executor)
    params = build_params(mech, data=data, mode=mode, tau=tau, p_member=p_member,
                          unif_pmf=unif_pmf)
    params = replace(params, kernel=choose_kernel(params, rounds, kernel))
    _check_finite_setup(params)
    _check_budget(params, rounds, chunk_size, ex.parallelism, max_variates, keep_scores=True)
    root = as_seed_sequence(seed)
    tasks = _Tasks(params, root, rounds, chunk_size)
    # the result arrays once; each chunk is copied into its slice as it arrives (while other
    # chunks still run), instead of a serial concatenation at the end
    member = np.empty(rounds, dtype=np.bool_)
    tau_r = np.empty(rounds, dtype=np.int64)
    stats = np.empty((len(STAT_NAMES), rounds), dtype=np.float64)
    bad = [0]

    def place(acc, k, out):
        a = k * chunk_size
        b = a + out[0].size
        member[a:b], tau_r[a:b], stats[:, a:b] = out[0], out[1], out[2]
        if not out[3]:  # count only on failure
            bad[0] += int((~np.isfinite(out[2])).sum())
        return acc

    t0 = time.perf_counter()
    ran: dict = {}
    if ex.workers is None and ex.scheduler is None and ex.client is None:
        into = _IntoTask(member, tau_r, stats, chunk_size)

        def check(acc, k, finite):
            if not finite:
                a = k * chunk_size
                bad[0] += int((~np.isfinite(stats[:, a:a + tasks.sizes()[k]])).sum())
            return acc

        ex.run(into, tasks, progress=progress, sizes=tasks.sizes(), reduce=check, init=None,
               desc="simulate", report=ran)
    else:  # Dask: chunks come back from other processes and are copied into place
        ex.run(_chunk_task, tasks, progress=progress, sizes=tasks.sizes(), reduce=place,
               init=None, desc="simulate", report=ran)
    backend = ran["backend"]
    seconds = time.perf_counter() - t0
    if bad[0]:
        raise ValueError(f"{bad[0]} statistics are not finite "
                         "(overflow at this target distance / data family); use a nearer target")
    return EngineResult(member=member, tau=tau_r,
                        stats={name: stats[i] for i, name in enumerate(STAT_NAMES)},
                        seed=root.entropy if isinstance(root.entropy, int) else None,
                        mode=params.mode, data=params.data_spec, chunk_size=chunk_size,
                        seconds=seconds, backend=backend,
                        kernel=params.kernel,
                        info={"variates_per_round": params.variates_per_round(),
                              "chunks": len(tasks), "executor_note": ran["note"],
                              "tasks_per_dask_task": ran["tasks_per_dask_task"]})


# -- bounded memory: per-class score histograms, exact thresholds by further passes ----------

def _in(x, lo, hi):
    """Membership of the half-open bin ``[lo, hi)`` (``hi = +inf`` closed)."""
    return (x >= lo) & ((x < hi) | (hi == np.inf))


def _hist_task(task):
    """Pass over one chunk: per query, either a histogram of the scores in the query's interval
    (``("hist", lo, hi, edges)``) with their min/max, or the scores themselves (``("collect",
    lo, hi)``). Query ``None`` means the whole line (pass 1)."""
    params, seed, k, size, queries = task
    member, _tau, stats = play_chunk(params, child_seed(seed, k), size)
    out = []
    for i, q in queries:
        x = stats[i]
        if not np.all(np.isfinite(x)):
            raise ValueError(f"statistic {STAT_NAMES[i]} is not finite in chunk {k} "
                             "(overflow at this target distance); use a nearer target")
        if q[0] == "collect":
            sel = _in(x, q[1], q[2])
            out.append((np.sort(x[sel & ~member]), np.sort(x[sel & member])))
            continue
        _, lo, hi, edges = q
        sel = _in(x, lo, hi)
        xs, ms = x[sel], member[sel]
        idx = np.searchsorted(edges, xs, side="right")
        K = edges.size + 1
        c0 = np.bincount(idx[~ms], minlength=K)
        c1 = np.bincount(idx[ms], minlength=K)
        mn = float(xs.min()) if xs.size else np.inf
        mx = float(xs.max()) if xs.size else -np.inf
        out.append((c0, c1, mn, mx))
    return out


def _fold(acc, _i, res):
    if acc is None:
        return [list(r) for r in res]
    for a, r in zip(acc, res, strict=True):
        if len(r) == 4 and not isinstance(r[0], tuple):
            a[0] = a[0] + r[0]
            a[1] = a[1] + r[1]
            a[2] = min(a[2], r[2])
            a[3] = max(a[3], r[3])
    return acc


def _collector(counts):
    """A fold for a collecting pass: the scores of query ``j`` go into two arrays allocated once
    with the class counts ``counts[j]`` the previous pass found in that bin (memory: the scores
    alone, not one array object per chunk, which grew with the number of chunks)."""
    def fold(acc, _i, res):
        if acc is None:
            acc = [[np.empty(int(c0)), np.empty(int(c1)), 0, 0] for c0, c1 in counts]
        for a, r in zip(acc, res, strict=True):
            for cls in (0, 1):
                x, at = r[cls], a[2 + cls]
                if at + x.size > a[cls].size:
                    raise RuntimeError("a replayed pass drew other scores than the pass before "
                                       "(the games must be deterministic in the seed)")
                a[cls][at:at + x.size] = x
                a[2 + cls] = at + x.size
        return acc
    return fold


def _grid(lo: float, hi: float, bins: int) -> np.ndarray:
    """Interior edges of ``bins`` equal bins on ``[lo, hi]`` (``bins - 1`` edges)."""
    if not hi > lo:
        return np.array([lo])
    return np.linspace(lo, hi, bins + 1)[1:-1]


def simulate_streaming(mech, rounds: int, seed=0, *, fprs=(0.1, 0.01, 0.001), bins: int = 4096,
                       collect_limit: int = 2_000_000, data="gaussian", mode: str = "exact",
                       tau=None, p_member: float = 0.5, unif_pmf=None, chunk_size: int = 16384,
                       executor=None, progress: bool = False,
                       max_variates: float | None = None, max_passes: int = 8,
                       kernel: str = "auto") -> dict:
    r"""Play ``rounds`` SeMI games in bounded memory: per-class score histograms, exact TPR.

    Memory does not grow with ``rounds``: each chunk is reduced to per-class histograms of the
    four statistics (``bins`` bins on the range seen in chunk 0, plus two open end bins) as
    soon as it is played, locally or on Dask. The TPR at each FPR is then made **exact**: the
    empirical threshold :math:`\hat\gamma` (the :math:`(\lfloor fN_0\rfloor+1)`-th largest
    non-member score, tie rule "strictly greater is member", as in
    :func:`semi_core.audit.roc.tpr_at_fpr_se`) lies in one bin; further passes replay the same
    chunks (same seeds, same scores) and either histogram that bin more finely or, once it
    holds at most ``collect_limit`` scores, collect them and read :math:`\hat\gamma`,
    :math:`\widehat{TPR}=\#\{s^{(1)}>\hat\gamma\}/N_1` and the achieved FPR exactly. The result
    equals what :func:`simulate` + ``summarize`` give for the same seed and chunk size.

    The AUC comes from the histograms: pairs in different bins are ordered exactly, pairs in a
    common bin count 1/2, so

    .. math::

        |\widehat{AUC}_{\text{hist}}-\widehat{AUC}| \le \frac{1}{2N_0N_1}\sum_b N_{0,b}N_{1,b}
        \quad(\text{reported as ``auc_bin_error``}),

    and its standard error is Hanley-McNeil's,
    :math:`\mathrm{se}^2=[A(1-A)+(N_1-1)(Q_1-A^2)+(N_0-1)(Q_2-A^2)]/(N_0N_1)`,
    :math:`Q_1=A/(2-A)`, :math:`Q_2=2A^2/(1+A)`. The TPR's ``se`` adds the threshold's
    sampling error by the delta method with the ROC secant slope between FPR :math:`f\\pm h`,
    both ends also made exact, as in :func:`semi_core.audit.roc.tpr_at_fpr_se` (so the s.e.
    equals the in-memory one).

    Parameters
    ----------
    mech, rounds, seed, data, mode, tau, p_member, unif_pmf, chunk_size, executor, progress,
    max_variates, kernel
        As in :func:`simulate` (the kernel is chosen from one pass's work).
    fprs : sequence of float in (0, 1)
        Target false-positive rates.
    bins : int
        Histogram bins per statistic (>= 16); memory per chunk result ``~ 64 * bins`` bytes.
    collect_limit : int
        Largest number of scores collected from one bin (else the bin is refined).
    max_passes : int
        Passes over the games at most (pass 1 + refinements + collection).

    Returns
    -------
    dict
        ``tests`` (the shape of :func:`semi_core.audit.roc.summarize`, plus ``auc_bin_error``),
        ``n_members``, ``n_nonmembers``, ``passes``, ``bins``, ``mode``, ``data``,
        ``chunk_size``, ``backend``, ``kernel``, ``seconds``.
    """
    rounds = check_int(rounds, "rounds", minimum=1)
    chunk_size = check_int(chunk_size, "chunk_size", minimum=1)
    ex = Executor.coerce(executor)
    threads = ex.parallelism
    bins = check_int(bins, "bins", minimum=16, maximum=1 << 22)
    collect_limit = check_int(collect_limit, "collect_limit", minimum=1000)
    max_passes = check_int(max_passes, "max_passes", minimum=2)
    f = np.atleast_1d(np.asarray(fprs, dtype=float))
    if f.ndim != 1 or f.size == 0 or np.isnan(f).any() or ((f <= 0) | (f >= 1)).any():
        raise ValueError(f"fprs must be values in (0, 1), got {fprs!r}")
    params = build_params(mech, data=data, mode=mode, tau=tau, p_member=p_member,
                          unif_pmf=unif_pmf)
    params = replace(params, kernel=choose_kernel(params, rounds, kernel))
    _check_finite_setup(params)
    _check_budget(params, rounds, chunk_size, threads, max_variates, keep_scores=False)
    # collected scores: up to collect_limit per (statistic, FPR level), three levels per FPR
    # (f and f -+ h, for the s.e.), plus the sorted copy of one of them
    check_memory(8.0 * (2 * len(STAT_NAMES) * (bins + 2) + 4) * (4 * threads + 2)
                 + 8.0 * collect_limit * (3 * len(f) * len(STAT_NAMES) + 1),
                 "the histograms and collected scores", hint="use fewer bins or a smaller "
                 "collect_limit")
    root = as_seed_sequence(seed)
    n_stats = len(STAT_NAMES)
    t0 = time.perf_counter()
    ran: dict = {}

    def run(queries, fold):
        tasks = _Tasks(params, root, rounds, chunk_size, extra=(queries,))
        return ex.run(_hist_task, tasks, progress=progress, sizes=tasks.sizes(), reduce=fold,
                      init=None, desc="simulate", report=ran)

    # pilot (chunk 0, replayed in pass 1): the histogram range of every statistic
    _m0, _t0, pilot = play_chunk(params, child_seed(root, 0), min(chunk_size, rounds))
    if not np.all(np.isfinite(pilot)):
        raise ValueError("statistics are not finite (overflow at this target distance); use "
                         "a nearer target")
    queries = []
    for i in range(n_stats):
        lo, hi = float(pilot[i].min()), float(pilot[i].max())
        pad = 0.25 * (hi - lo) if hi > lo else 1.0
        queries.append((i, ("hist", -np.inf, np.inf, _grid(lo - pad, hi + pad, bins))))
    hist = run(queries, _fold)
    passes = 1
    n1 = int(hist[0][1].sum())
    n0 = int(hist[0][0].sum())
    if n0 == 0 or n1 == 0:
        raise ValueError(f"need both members and non-members, got {n1} and {n0} "
                         "(more rounds, or p_member further from 0/1)")
    # one refinement state per (statistic, FPR level); the levels f -+ h give the ROC slope of
    # the TPR's delta-method s.e. exactly as audit.roc.tpr_at_fpr_se computes it
    h = np.maximum(2.0 * np.sqrt(f * (1.0 - f) / n0), 1.0 / n0)
    f_lo = np.clip(f - h, 0.5 / n0, 1 - 1e-12)
    f_hi = np.clip(f + h, 0.5 / n0, 1 - 1e-12)
    levels = sorted({float(v) for v in np.concatenate([f, f_lo, f_hi])})
    states = []
    for i in range(n_stats):
        c0, c1, mn, mx = hist[i]
        edges = queries[i][1][3]
        for fv in levels:
            k = int(np.floor(fv * n0))
            states.append({"i": i, "f": fv, "r": k + 1, "A": 0, "M": 0,
                           "hist": (c0, c1, mn, mx, edges, -np.inf, np.inf), "done": False})

    def locate(st):
        c0, c1, mn, mx, edges, lo, hi = st["hist"]
        above0 = np.cumsum(c0[::-1])[::-1]  # non-members in bins >= j
        need = st["r"]
        j = int(np.flatnonzero(above0 >= need)[-1])
        st["A"] += int(c0[j + 1:].sum())
        st["M"] += int(c1[j + 1:].sum())
        st["r"] = need - int(c0[j + 1:].sum())
        b_lo = lo if j == 0 else float(edges[j - 1])
        b_hi = hi if j == edges.size else float(edges[j])
        st["bin"] = (b_lo, b_hi, max(mn, b_lo), min(mx, b_hi), int(c0[j]), int(c1[j]))

    for st in states:
        locate(st)
    while True:
        pending = [st for st in states if not st["done"]]
        for st in pending:
            b_lo, b_hi, mn, mx, cnt0, cnt1 = st["bin"]
            if mn == mx:  # every score of the bin ties: the threshold is that value
                st.update(done=True, thr=mn, above0=st["A"], above1=st["M"])
        pending = [st for st in states if not st["done"]]
        if not pending:
            break
        if passes >= max_passes:
            raise ResourceLimitError(f"exact thresholds need more than max_passes = "
                                     f"{max_passes} passes; raise bins or collect_limit")
        collect = all(st["bin"][4] + st["bin"][5] <= collect_limit for st in pending)
        qs = []
        for st in pending:
            b_lo, b_hi, mn, mx, *_ = st["bin"]
            if collect:
                qs.append((st["i"], ("collect", b_lo, b_hi)))
            else:
                qs.append((st["i"], ("hist", b_lo, b_hi, _grid(mn, mx, bins))))
        res = run(qs, _collector([st["bin"][4:6] for st in pending]) if collect else _fold)
        passes += 1
        for st, q, r in zip(pending, qs, res, strict=True):
            if collect:
                if (r[2], r[3]) != st["bin"][4:6]:
                    raise RuntimeError("a replayed pass drew other scores than the pass before "
                                       "(the games must be deterministic in the seed)")
                v0 = np.sort(r[0])[::-1]
                v1 = r[1]
                thr = float(v0[st["r"] - 1])
                st.update(done=True, thr=thr, above0=st["A"] + int((v0 > thr).sum()),
                          above1=st["M"] + int((v1 > thr).sum()))
            else:
                c0, c1, mn, mx = r
                st["hist"] = (c0, c1, mn, mx, q[1][3], q[1][1], q[1][2])
                locate(st)
    tests = {}
    for i, name in enumerate(STAT_NAMES):
        c0, c1 = hist[i][0].astype(float), hist[i][1].astype(float)
        below0 = np.cumsum(c0) - c0
        a = float((c1 * (below0 + 0.5 * c0)).sum() / (n0 * n1))
        err = float((c0 * c1).sum() / (2.0 * n0 * n1))
        q1, q2 = a / (2 - a), 2 * a * a / (1 + a)
        a_se = math.sqrt(max(a * (1 - a) + (n1 - 1) * (q1 - a * a) + (n0 - 1) * (q2 - a * a),
                             0.0) / (n0 * n1))
        at = {st["f"]: st for st in states if st["i"] == i}
        rows = {}
        for j, fv in enumerate(f):
            st, lo, hi = at[float(fv)], at[float(f_lo[j])], at[float(f_hi[j])]
            tpr = st["above1"] / n1
            d_f = (hi["above0"] - lo["above0"]) / n0
            slope = (hi["above1"] - lo["above1"]) / n1 / d_f if d_f > 0 else 0.0
            se_bin = math.sqrt(tpr * (1 - tpr) / n1)
            se = math.sqrt(se_bin**2 + slope**2 * fv * (1 - fv) / n0)
            rows[f"{fv:g}"] = {"tpr": tpr, "se": se, "se_binomial": se_bin,
                               "fpr_achieved": st["above0"] / n0, "threshold": st["thr"]}
        tests[name] = {"tpr_at_fpr": rows, "auc": a, "auc_se": a_se, "auc_bin_error": err}
    return {"tests": tests, "n_members": n1, "n_nonmembers": n0, "passes": passes,
            "seed": root.entropy if isinstance(root.entropy, int) else None, "bins": bins,
            "mode": params.mode, "data": params.data_spec,
            "chunk_size": chunk_size, "backend": ran.get("backend", ex.name),
            "executor_note": ran.get("note"),
            "kernel": params.kernel,
            "seconds": time.perf_counter() - t0}


def reference_per_round(mech, rounds: int, seed=0, *, data="gaussian", tau=None,
                        p_member: float = 0.5, unif_pmf=None) -> GameResult:
    """Straightforward per-round NumPy reference of seed Alg. 1-2 (slow; for checks/benchmarks).

    Each round draws :math:`B`, :math:`\\tau`, the ``T`` batches (every datum, from
    :class:`~semi_core.mechanisms.distributions.DataDistribution`), replaces a uniformly chosen
    element of batch :math:`\\tau` by :math:`z^*` when :math:`B=1` and releases the running means
    with ``mech.releases``, one round at a time. The auditor's side then scores all releases
    through the mechanism's own methods (``batch_means``, ``log_lr_steps``, ``final_log_lr``),
    vectorised over rounds -- an implementation independent of the compiled kernel.

    Parameters
    ----------
    mech : EmpiricalMean
        The mechanism.
    rounds : int
        Number of rounds, >= 1.
    seed : int or numpy.random.SeedSequence
        Seed of the rounds.
    data : str or DataFamily
        Standardised data family.
    tau : None, "uniform", int or array_like
        Insertion-time law.
    p_member : float
        Probability of a member round, in (0, 1).
    unif_pmf : array_like, optional
        Prior of SeMI-Unif.

    Returns
    -------
    GameResult
        The rounds and the four statistics.
    """
    rounds = check_int(rounds, "rounds", minimum=1)
    p_member = check_probability(p_member, "p_member")
    family = parse_data(data)
    T = int(mech.T)
    pmf = resolve_tau_pmf(T, tau)
    upmf = None if unif_pmf is None else check_pmf(unif_pmf, "unif_pmf", size=T)
    dists = [DataDistribution(family, mech.mu_t[t], mech.cov_t[t]) for t in range(T)]
    root = as_seed_sequence(seed)
    rng = np.random.Generator(np.random.PCG64(root))
    member = np.empty(rounds, dtype=bool)
    taus = np.empty(rounds, dtype=np.int64)
    rel = np.empty((rounds, T, mech.d))
    for r in range(rounds):
        b = rng.random() < p_member
        ta = int(rng.choice(T, p=pmf)) + 1
        means = np.empty((T, mech.d))
        for t in range(T):
            X = dists[t].sample(rng, int(mech.n_t[t]))
            if b and t + 1 == ta:
                X[rng.integers(int(mech.n_t[t]))] = mech.target
            means[t] = X.mean(axis=0)
        rel[r] = mech.releases(means)
        member[r], taus[r] = b, ta
    # The auditor's side, vectorised over rounds (the mechanism's one scoring path).
    return GameResult(member=member, tau=taus, stats=mech.score(rel, taus, unif_pmf=upmf),
                      seed=root.entropy if isinstance(root.entropy, int) else None)
