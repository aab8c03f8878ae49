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
from dataclasses import dataclass, field

import numpy as np

from semi_core._rng import as_seed_sequence, chunk_bounds
from semi_core._validation import check_int, check_pmf, check_probability
from semi_core.game.semi_game import GameResult, resolve_tau_pmf
from semi_core.kernels import _twins
from semi_core.kernels._jit import use_twins
from semi_core.kernels.engine_kernels import STAT_NAMES
from semi_core.mechanisms.distributions import DataDistribution, parse_data

__all__ = ["EngineParams", "EngineResult", "build_params", "simulate", "chunk_seed",
           "play_chunk", "reference_per_round", "MODES", "STAT_NAMES"]

MODES = ("exact", "sufficient")


@dataclass(frozen=True)
class EngineParams:
    """Everything a chunk kernel needs (plain arrays; picklable for Dask workers)."""

    exact: bool
    code: int
    fparam: float
    scale: float
    n_t: np.ndarray
    u: np.ndarray
    llr_c0: np.ndarray
    llr_k: np.ndarray
    log_w_unif: np.ndarray
    p_member: float
    tau_cdf: np.ndarray
    fo_stationary: bool
    fo_A: np.ndarray
    fo_C0: np.ndarray
    fo_logdet0: float
    fo_C1: np.ndarray
    fo_m1: np.ndarray
    fo_logdet1: np.ndarray
    fo_N: float
    data_spec: str = "gaussian"
    mode: str = "exact"

    @property
    def T(self) -> int:
        """Number of steps."""
        return int(self.n_t.size)

    @property
    def d(self) -> int:
        """Dimension."""
        return int(self.u.shape[1])

    def variates_per_round(self) -> int:
        """Random variates per round for the data (excluding the 3 control uniforms)."""
        per_step = self.n_t if self.exact else np.ones_like(self.n_t)
        return int(per_step.sum()) * self.d


@dataclass
class EngineResult(GameResult):
    """:class:`~semi_core.game.semi_game.GameResult` plus how it was produced."""

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
    return EngineParams(
        exact=mode == "exact", code=int(family.code),
        fparam=float(family.param) if family.name in ("student-t", "bernoulli") else 0.0,
        scale=_family_scale(family), n_t=n_t, u=c(mech.u_t, dtype=np.float64).reshape(T, d),
        llr_c0=c0, llr_k=k, log_w_unif=c(log_w, dtype=np.float64), p_member=p_member,
        tau_cdf=c(cdf), fo_stationary=stationary, fo_A=c(fo_A), fo_C0=c(fo_C0),
        fo_logdet0=float(fo_ld0), fo_C1=c(fo_C1), fo_m1=c(fo_m1),
        fo_logdet1=c(fo_ld1, dtype=np.float64), fo_N=N, data_spec=family.spec, mode=mode,
    )


def chunk_seed(seed, k: int) -> np.random.SeedSequence:
    """The ``k``-th child of the root seed, equal to ``SeedSequence(seed).spawn(k+1)[k]``.

    Built from the root's entropy and spawn key, so it does not depend on how many children
    the root object has already spawned.
    """
    root = as_seed_sequence(seed)
    return np.random.SeedSequence(root.entropy, spawn_key=tuple(root.spawn_key) + (int(k),),
                                  pool_size=root.pool_size)


def play_chunk(params: EngineParams, seed_seq: np.random.SeedSequence, rounds: int,
               *, twin: bool | None = None):
    """Play one chunk; returns ``(member, tau, stats)`` with ``stats`` of shape (4, rounds).

    ``twin=None`` follows ``SEMI_CORE_FORCE_TWIN``; ``True``/``False`` forces the NumPy twin /
    the compiled kernel.
    """
    gen = np.random.Generator(np.random.PCG64(seed_seq))
    member = np.empty(rounds, dtype=np.bool_)
    tau = np.empty(rounds, dtype=np.int64)
    stats = np.empty((4, rounds), dtype=np.float64)
    p = params

    def f64(x):
        # one compiled signature: C-contiguous float64 whatever the caller passed
        return np.ascontiguousarray(x, dtype=np.float64)

    args = (gen, int(rounds), bool(p.exact), int(p.code), float(p.fparam), float(p.scale),
            np.ascontiguousarray(p.n_t, dtype=np.int64), f64(p.u), f64(p.llr_c0),
            f64(p.llr_k), f64(p.log_w_unif), float(p.p_member), f64(p.tau_cdf),
            bool(p.fo_stationary), f64(p.fo_A), f64(p.fo_C0), float(p.fo_logdet0),
            f64(p.fo_C1), f64(p.fo_m1), f64(p.fo_logdet1), float(p.fo_N), member, tau, stats)
    if use_twins() if twin is None else twin:
        _twins.semi_chunk(*args)
    else:
        from semi_core.kernels.engine_kernels import semi_chunk

        semi_chunk(*args)
    return member, tau, stats


def _chunk_task(task):
    # Top-level (picklable) unit of work for thread pools and Dask workers.
    params, seed, k, size = task
    return play_chunk(params, chunk_seed(seed, k), size)


def simulate(mech, rounds: int, seed=0, *, data="gaussian", mode: str = "exact", tau=None,
             p_member: float = 0.5, unif_pmf=None, chunk_size: int = 16384, threads: int = 1,
             workers: int | None = None, scheduler: str | None = None, client=None,
             progress: bool = False) -> EngineResult:
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
    threads : int
        Local threads running chunks concurrently (result does not depend on it).
    workers, scheduler, client
        Dask: a LocalCluster with ``workers`` processes, an existing scheduler address, or a
        ``distributed.Client``; identical results to the local run.
    progress : bool
        Show a tqdm progress bar (stderr).

    Returns
    -------
    EngineResult
        ``member`` (R,), ``tau`` (R,) in 1..T, ``stats`` dict of (R,) arrays keyed by
        ``semi-star``, ``semi-unif``, ``semi-max``, ``final`` (higher = member).
    """
    from semi_core.game import backends

    rounds = check_int(rounds, "rounds", minimum=1)
    chunk_size = check_int(chunk_size, "chunk_size", minimum=1)
    threads = check_int(threads, "threads", minimum=1)
    params = build_params(mech, data=data, mode=mode, tau=tau, p_member=p_member,
                          unif_pmf=unif_pmf)
    root = as_seed_sequence(seed)
    bounds = chunk_bounds(rounds, chunk_size)
    tasks = [(params, root, k, hi - lo) for k, (lo, hi) in enumerate(bounds)]
    t0 = time.perf_counter()
    outs, backend = backends.run_tasks(_chunk_task, tasks, threads=threads, workers=workers,
                                       scheduler=scheduler, client=client, progress=progress,
                                       sizes=[hi - lo for lo, hi in bounds])
    seconds = time.perf_counter() - t0
    member = np.concatenate([o[0] for o in outs])
    tau_r = np.concatenate([o[1] for o in outs])
    stats = np.concatenate([o[2] for o in outs], axis=1)
    return EngineResult(member=member, tau=tau_r,
                        stats={name: stats[i] for i, name in enumerate(STAT_NAMES)},
                        mode=params.mode, data=params.data_spec, chunk_size=chunk_size,
                        seconds=seconds, backend=backend,
                        kernel="numpy-twin" if use_twins() else "numba",
                        info={"variates_per_round": params.variates_per_round(),
                              "chunks": len(bounds)})


def reference_per_round(mech, rounds: int, seed=0, *, data="gaussian", tau=None,
                        p_member: float = 0.5, unif_pmf=None) -> GameResult:
    """Straightforward per-round NumPy reference of seed Alg. 1-2 (slow; for checks/benchmarks).

    Each round draws :math:`B`, :math:`\\tau`, the ``T`` batches (every datum, from
    :class:`~semi_core.mechanisms.distributions.DataDistribution`), replaces a uniformly chosen
    element of batch :math:`\\tau` by :math:`z^*` when :math:`B=1` and releases the running means
    with ``mech.releases``, one round at a time. The auditor's side then scores all releases
    through the mechanism's own methods (``batch_means``, ``log_lr_steps``, ``final_log_lr``),
    vectorised over rounds -- an implementation independent of the compiled kernel.
    """
    rounds = check_int(rounds, "rounds", minimum=1)
    p_member = check_probability(p_member, "p_member")
    family = parse_data(data)
    T = int(mech.T)
    pmf = resolve_tau_pmf(T, tau)
    upmf = None if unif_pmf is None else check_pmf(unif_pmf, "unif_pmf", size=T)
    dists = [DataDistribution(family, mech.mu_t[t], mech.cov_t[t]) for t in range(T)]
    rng = np.random.Generator(np.random.PCG64(as_seed_sequence(seed)))
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
    return GameResult(member=member, tau=taus, stats=mech.score(rel, taus, unif_pmf=upmf))
