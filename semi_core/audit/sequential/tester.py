r"""Anytime-valid sequential DP audits with the MMD witness (seed Alg. 1 and Alg. 2).

Given streams :math:`X_t\sim\mathcal A(S)`, :math:`Y_t\sim\mathcal A(S')`, the witness
:math:`f_t` is learned by OGA from the pairs before :math:`t` (:mod:`semi_core.kernels.witness`),
so :math:`v_t=f_t(X_t)-f_t(Y_t)` has :math:`\mathbb E[v_t\mid\mathcal F_{t-1}]\le\mathrm{MMD}`.

**Algorithm 1** (test supermartingale, ONS bets). Payoff :math:`a_t = v_t-\tau(\varepsilon,\delta)`,
wealth :math:`\mathcal K_t = \mathcal K_{t-1}(1+\lambda_t a_t)` with :math:`\lambda_t` from ONS on
:math:`[0, 1/(4+2\tau)]` (predictable). Under :math:`H_0:\mathrm{MMD}\le\tau` it is a non-negative
supermartingale (:math:`1+\lambda a\ge 1/2`), so by Ville
:math:`P(\exists t:\mathcal K_t\ge1/\alpha)\le\alpha`: stop and reject at the first such t.

**Algorithm 2** (e-process). E-values :math:`E_t=(2+v_t)/(2+\tau)` (:math:`\ge0`,
:math:`\mathbb E_{H_0}[E_t\mid\mathcal F_{t-1}]\le1`), constant-mix wealth
:math:`W_t(\beta)=\prod_{i\le t}(1+\beta(E_i-1))`. The universal portfolio with the
Beta(1/2,1/2) prior has wealth :math:`W^{UP}_t=\int W_t(\beta)\,\pi(d\beta)` (a test
supermartingale) and regret :math:`\le\tfrac12\log(t+1)+\log2`, so

.. math:: \tilde W_t = \max_{\beta\in[0,1]}W_t(\beta)\,\big/\,\big(2\sqrt{t+1}\big) \le W^{UP}_t

is an e-process (Alg. 2 line 7; the seed's eq. 19 prints :math:`+\log 2`, which breaks the
inequality -- claim ``eq19.penalty_sign``). We evaluate :math:`W_t(\beta)` at the
:math:`K=\lceil(N_{\max}+1)/2\rceil` Gauss--Chebyshev nodes of the Beta(1/2,1/2) prior: since
:math:`W_t` is a polynomial of degree :math:`t\le N_{\max}\le 2K-1`, their average *is*
:math:`W^{UP}_t` exactly (``evalue="mixture"``), and their maximum is :math:`\le` the true
maximum (so the grid :math:`\tilde W_t` is conservative); near the threshold the maximum is
refined exactly by bisection on the concave :math:`\log W_t`. ``evalue="max"`` (the seed's rule)
stops on :math:`\tilde W_t\ge1/\alpha`.

Warm-up: the first ``warmup`` pairs (20, as the seed) set the median-heuristic bandwidth and
are discarded; ``stopped_at`` counts test pairs after the warm-up.

Every result carries :func:`witness_diagnostics` (unresolved pairs, :math:`M_t\approx0`,
:math:`|v_t|\approx0`): a run whose witness was degenerate has the verdict "inconclusive", never
"no violation found" (eq. 5's count floor gives bandwidths 1e13-1e14 for the DP and NonDP2 means).
``conventions`` swaps in the authors' notebook threshold/ONS/OGA (:mod:`.conventions`).

Witness: ``witness="exact"`` (the seed's RBF-kernel OGA, :math:`O(N^2 d)` per run) or
``"rff"`` (:mod:`.rff`: :math:`D` random Fourier frequencies drawn after the bandwidth is fixed,
:math:`O(N D^2)`; the kernel :math:`K_D^2\in[0,1]` keeps Theorem 3.1's assumption, so the test
stays exactly valid, see :mod:`.rff`). Both see the same pairs under one seed.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from semi_core._rng import as_seed_sequence
from semi_core._table import ResultDisplay, Table
from semi_core._validation import check_delta, check_int, check_work
from semi_core.kernels._jit import use_twins
from semi_core.kernels.witness import choose_witness_backend, new_state, witness_block

from .conventions import (
    NotebookONS,
    new_notebook_witness,
    notebook_witness_block,
    parse_conventions,
    tau_notebook,
)
from .ons import OnlineNewtonStep
from .rbf import median_bandwidth
from .rff import (
    DEFAULT_FEATURES,
    WITNESSES,
    check_features,
    new_rff_state,
    rff_base_features,
    rff_frequencies,
)
from .tau import check_alpha, check_epsilon, tau_for

__all__ = ["witness_diagnostics", "UNRESOLVED_MAX",
           "SequentialResult", "GridResult", "PairSource", "mechanism_source", "stream_source",
           "sampler_source", "sequential_test", "sequential_grid", "run_audits", "summarize",
           "rejection_summary",
           "sequential_work", "check_sequential_work"]


# ----------------------------------------------------------------------------- pair sources
class PairSource:
    """Draws paired outputs ``(X, Y)``, each ``(size, d)``, with checks on every draw.

    Parameters
    ----------
    draw : callable
        ``draw(size, rng) -> (X, Y)``.
    name : str
        Shown in errors and results.
    limit : int, optional
        Largest total number of pairs available (pre-recorded streams).
    """

    def __init__(self, draw: Callable, name: str = "mechanism", limit: int | None = None):
        self._draw, self.name, self.limit = draw, name, limit
        self.dim: int | None = None

    def __call__(self, size: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        X, Y = self._draw(int(size), rng)
        out = []
        for arr, which in ((X, "A(S)"), (Y, "A(S')")):
            try:
                a = np.asarray(arr, dtype=np.float64)
            except (TypeError, ValueError):
                raise ValueError(f"mechanism: outputs on {which} are not numeric") from None
            a = a.reshape(a.shape[0], -1) if a.ndim >= 1 else a.reshape(1, 1)
            if a.shape[0] != size:
                raise ValueError(f"mechanism: asked for {size} outputs on {which}, got "
                                 f"{a.shape[0]}")
            if not np.all(np.isfinite(a)):
                raise ValueError(f"mechanism returned NaN or infinite outputs on {which}")
            if self.dim is None:
                self.dim = a.shape[1]
            elif a.shape[1] != self.dim:
                raise ValueError(f"mechanism changed its output shape: dimension {self.dim} "
                                 f"before, {a.shape[1]} now (on {which})")
            out.append(np.ascontiguousarray(a))
        return out[0], out[1]


def mechanism_source(mechanism, S, S_prime) -> PairSource:
    """Pairs from a dataset mechanism (zoo class, or any callable ``mechanism(dataset, rng)``).

    Parameters
    ----------
    mechanism : object or callable
        A zoo mechanism or ``mechanism(dataset, rng)``.
    S, S_prime : array_like
        The two neighbouring datasets.

    Returns
    -------
    PairSource
        Draws ``(A(S), A(S'))`` pairs.
    """
    from semi_core.mechanisms.zoo import as_dataset_mechanism

    mech = as_dataset_mechanism(mechanism)

    def draw(size, rng):
        return mech.sample(S, size, rng), mech.sample(S_prime, size, rng)

    return PairSource(draw, getattr(mech, "name", "mechanism"))


def stream_source(X, Y, name: str = "stream") -> PairSource:
    """Pairs read in order from pre-recorded outputs (e.g. the DP-SGD canary stream).

    Parameters
    ----------
    X, Y : array_like, shape (N, ...)
        Recorded outputs on the two datasets (flattened per row).
    name : str
        Name of the source in the results.

    Returns
    -------
    PairSource
        Yields the pairs in order; drawing past the end is an error.
    """
    X = np.asarray(X, dtype=float)
    Y = np.asarray(Y, dtype=float)
    X = X.reshape(X.shape[0], -1)
    Y = Y.reshape(Y.shape[0], -1)
    if X.shape[0] != Y.shape[0]:
        raise ValueError(f"X and Y must have the same length, got {X.shape[0]} and {Y.shape[0]}")
    pos = [0]

    def draw(size, rng):
        i = pos[0]
        if i + size > X.shape[0]:
            raise ValueError(f"{name}: stream exhausted ({X.shape[0]} pairs)")
        pos[0] = i + size
        return X[i:i + size], Y[i:i + size]

    return PairSource(draw, name, limit=X.shape[0])


def sampler_source(sample_x: Callable, sample_y: Callable, name: str = "distributions"
                   ) -> PairSource:
    """Pairs from two samplers ``sample(size, rng) -> (size, d)`` (synthetic experiments).

    Parameters
    ----------
    sample_x, sample_y : callable
        ``sample(size, rng) -> ndarray (size, d)``.
    name : str
        Name of the source.

    Returns
    -------
    PairSource
        The source.
    """
    return PairSource(lambda size, rng: (sample_x(size, rng), sample_y(size, rng)), name)


# ----------------------------------------------------------------------------- diagnostics
#: Largest fraction of numerically distinct pairs the kernel may fail to tell apart before the
#: witness is called degenerate (a sound bandwidth leaves ~0; the count-floor reading of eq. 5
#: leaves ~1/4, see :func:`witness_diagnostics`).
UNRESOLVED_MAX = 0.05
#: :math:`1-K` below this is 0 to double precision: the kernel sees the two points as one.
_K_TOL = 1e-12
#: Two outputs closer than this, relative to their size, are the same output (an atom blurred by
#: a 1e-12 noise floor): the kernel *should* merge them.
_REL_SAME = 1e-6


def _unresolved(A: np.ndarray, B: np.ndarray, bandwidth: float) -> tuple[int, int]:
    """(# pairs (a_i, b_i) that are distinct but have 1 - K < 1e-12, # distinct pairs)."""
    d2 = np.sum((A - B) ** 2, axis=1)
    size = np.maximum(np.maximum(np.sum(A * A, 1), np.sum(B * B, 1)), 1.0)
    distinct = d2 > (_REL_SAME ** 2) * size
    blind = -np.expm1(-d2 / (2.0 * bandwidth ** 2)) < _K_TOL
    return int(np.sum(distinct & blind)), int(np.sum(distinct))


def witness_diagnostics(bandwidth: float, warm: tuple | None, pair_counts: tuple[int, int],
                        one_minus_k: float, n_pairs: int, v_max: float) -> dict:
    r"""Whether a run's witness could have had power (without it, no rejection is no evidence).

    The OGA witness :math:`f_t=\sum_i c_i[K(X_i,\cdot)-K(Y_i,\cdot)]` only sees what the RBF
    kernel resolves. Three signs that it resolved nothing:

    * **unresolved pairs**: the fraction of numerically distinct pairs (relative distance
      :math:`>10^{-6}`) for which :math:`1-K<10^{-12}` -- the kernel treats them as one point --
      among the pooled warm-up pairs and among the test pairs :math:`(X_t,Y_t)`; above
      :data:`UNRESOLVED_MAX` the bandwidth is too large for the bulk of the outputs (e.g. the
      median heuristic on eq. 5's count floor, :math:`h\approx10^{13}`-:math:`10^{14}`, merges
      every output of size :math:`O(1)`);
    * :math:`M_t\approx0`: :math:`M_t=\sum_{i\le t}2(1-K(X_i,Y_i))`, so
      :math:`M_t/(2t)<10^{-12}` means every test pair looked identical to the kernel;
    * the witness values :math:`|v_t|` all below :math:`10^{-9}` (no bet can move the wealth).

    Returns a dict with those numbers, ``degenerate`` and ``reason``.

    Parameters
    ----------
    bandwidth : float
        RBF bandwidth used.
    warm : tuple or None
        Warm-up pairs ``(X, Y)``, or None.
    pair_counts : tuple of 2 int
        Numbers of resolved and distinct test pairs.
    one_minus_k : float
        :math:`M_t/(2t)` at the end of the run.
    n_pairs : int
        Number of test pairs.
    v_max : float
        Largest witness value :math:`|v_t|`.

    Returns
    -------
    dict
        The diagnostics, ``degenerate`` (bool) and ``reason``.
    """
    reasons = []
    out = {"bandwidth": float(bandwidth)}
    if warm is not None:
        Z = np.vstack(warm)
        i, j = np.triu_indices(Z.shape[0], k=1)
        u, n = _unresolved(Z[i], Z[j], bandwidth)
        out["warmup_unresolved_fraction"] = u / n if n else 0.0
        if n and u / n > UNRESOLVED_MAX:
            reasons.append(f"bandwidth {bandwidth:.3g} merges {100 * u / n:.0f}% of distinct "
                           "warm-up pairs")
    u, n = pair_counts
    out["test_unresolved_fraction"] = u / n if n else 0.0
    if n and u / n > UNRESOLVED_MAX and not reasons:
        reasons.append(f"bandwidth {bandwidth:.3g} merges {100 * u / n:.0f}% of distinct test "
                       "pairs")
    out["mean_one_minus_k"] = one_minus_k / n_pairs if n_pairs else 0.0
    if n_pairs and out["mean_one_minus_k"] < _K_TOL:
        reasons.append("M_t ~ 0 (every test pair identical to the kernel)")
    out["max_abs_witness"] = float(v_max)
    if n_pairs > 1 and v_max < 1e-9:
        reasons.append("witness values ~ 0")
    out["degenerate"] = bool(reasons)
    out["reason"] = "; ".join(reasons)
    return out


# ----------------------------------------------------------------------------- results
@dataclass(repr=False)
class SequentialResult(ResultDisplay):
    """One sequential test (one epsilon).

    Prints as one line (verdict, stopping time); ``summary()`` is a table of the verdict and
    the quantities it rests on, ``to_frame()`` the same as a ``DataFrame``.
    """

    _repr_fields = ("verdict", "epsilon", "stopped_at", "n_observed", "algorithm")

    rejected: bool
    stopped_at: int | None
    n_observed: int
    log_wealth: np.ndarray
    epsilon: float
    delta: float
    failure_prob: float
    tau: float
    algorithm: int
    bandwidth: float
    bandwidth_note: str
    bound: str
    log_mixture: np.ndarray | None = None
    witness: np.ndarray | None = None
    witness_kind: str = "exact"
    features: int | None = None
    diagnostics: dict = field(default_factory=dict)

    @property
    def degenerate(self) -> bool:
        """True when the witness could not resolve the outputs (:func:`witness_diagnostics`)."""
        return bool(self.diagnostics.get("degenerate", False))

    @property
    def verdict(self) -> str:
        """``"violation"``, ``"no violation found"`` (the witness resolved the outputs) or
        ``"inconclusive: degenerate witness (...)"`` (the run had no power: never read it as
        evidence that the mechanism is private)."""
        if self.rejected:
            return "violation"
        if self.degenerate:
            return f"inconclusive: degenerate witness ({self.diagnostics['reason']})"
        return "no violation found"

    def to_dict(self, *, paths: bool = True) -> dict:
        """The result as a JSON-safe dict.

        Parameters
        ----------
        paths : bool
            Include the wealth and witness paths.

        Returns
        -------
        dict
            Verdict, stopping time, diagnostics and (optionally) the paths.
        """
        d = {"rejected": self.rejected, "verdict": self.verdict,
             "degenerate_witness": self.degenerate, "witness_diagnostics": self.diagnostics,
             "stopped_at": self.stopped_at,
             "n_observed": self.n_observed, "epsilon": self.epsilon, "delta": self.delta,
             "failure_prob": self.failure_prob, "tau": self.tau, "algorithm": self.algorithm,
             "bandwidth": self.bandwidth, "bandwidth_note": self.bandwidth_note,
             "bound": self.bound, "witness": self.witness_kind, "features": self.features,
             "final_log_wealth": float(self.log_wealth[-1])
             if self.log_wealth.size else 0.0}
        if paths:
            d["log_wealth"] = self.log_wealth.tolist()
        return d

    def summary(self) -> Table:
        """One row per quantity (``quantity, value``), paths left out.

        Returns
        -------
        Table
            The summary table.
        """
        d = self.to_dict(paths=False)
        d.pop("witness_diagnostics", None)
        return Table([{"quantity": k, "value": v} for k, v in d.items()], title=repr(self))


@dataclass(repr=False)
class GridResult(ResultDisplay):
    r"""Tests at several epsilons on one stream and the anytime-valid lower bound.

    ``epsilon_lower_bound`` is the *fixed-sequence* reading: with the grid sorted increasingly,
    the largest :math:`\varepsilon_i` such that every :math:`\varepsilon_j\le\varepsilon_i` has
    been rejected (0 if the smallest was not). It is valid at level :math:`\alpha` at every
    time, with no multiplicity correction: the nulls are nested (:math:`\tau` increases with
    :math:`\varepsilon`), so if :math:`\varepsilon_{i_0}` is the smallest grid value whose null
    holds, :math:`\underline\varepsilon_t\ge\varepsilon_{i_0}` requires the single test at
    :math:`\varepsilon_{i_0}` to reject, which has probability :math:`\le\alpha` uniformly in t.
    The seed's reading (§4.2, "the smallest candidate that the test fails to reject") is one
    grid step *above* ours and not valid (claim ``sec4.2.lower_bound_reading``).

    ``summary()``: one row per tested epsilon (verdict, stopping time).
    """

    _repr_fields = ("epsilon_lower_bound", "n_observed", "bandwidth")

    epsilons: np.ndarray
    results: list[SequentialResult]
    lower_bound_path: np.ndarray
    epsilon_lower_bound: float
    seed_reading: float
    bandwidth: float
    n_observed: int
    epsilon_ceiling: dict | None = None

    def to_dict(self, *, paths: bool = True) -> dict:
        """The grid's result as a JSON-safe dict.

        Parameters
        ----------
        paths : bool
            Include each test's paths.

        Returns
        -------
        dict
            Tested epsilons, the lower bound and each test's result.
        """
        return {"epsilons": self.epsilons.tolist(), "epsilon_lower_bound": self.epsilon_lower_bound,
                "seed_reading_smallest_not_rejected": self.seed_reading,
                "bandwidth": self.bandwidth, "n_observed": self.n_observed,
                "epsilon_ceiling": self.epsilon_ceiling,
                "lower_bound_path": self.lower_bound_path.tolist() if paths else None,
                "tests": [r.to_dict(paths=paths) for r in self.results]}

    def summary(self) -> Table:
        """One row per tested epsilon: ``epsilon, verdict, stopped_at, final_log_wealth``.

        Returns
        -------
        Table
            The summary table.
        """
        rows = [{"epsilon": float(r.epsilon), "verdict": r.verdict, "stopped_at": r.stopped_at,
                 "final_log_wealth": float(r.log_wealth[-1]) if r.log_wealth.size else 0.0}
                for r in self.results]
        return Table(rows, title=repr(self))


# ----------------------------------------------------------------------------- bettors
class _ONSBettor:
    """Alg. 1 wealth with ONS on [0, 1/(4+2 tau)]."""

    def __init__(self, tau: float, alpha: float, notebook: bool = False):
        self.tau, self.log_thr = tau, math.log(1.0 / alpha)
        self.ons = (NotebookONS(tau) if notebook
                    else OnlineNewtonStep(0.0, 1.0 / (4.0 + 2.0 * tau), 4.0 + 2.0 * tau))
        self.logk = 0.0
        self.path: list[float] = []
        self.stop: int | None = None

    def feed(self, v: np.ndarray, t0: int) -> None:
        lam = self.ons.lam
        for j, vt in enumerate(v):
            a = float(vt) - self.tau
            x = lam * a
            self.logk += math.log1p(x)
            self.path.append(self.logk)
            if self.logk >= self.log_thr:
                self.stop = t0 + j + 1
                return
            lam = self.ons.update(-a / (1.0 + x))


class _EBettor:
    """Alg. 2: W_t(beta) on the Gauss-Chebyshev nodes of Beta(1/2, 1/2)."""

    def __init__(self, tau: float, alpha: float, n_max: int, rule: str):
        K = (n_max + 2) // 2  # 2K - 1 >= n_max: the node average is the exact UP wealth
        k = np.arange(1, K + 1)
        self.beta = 0.5 * (1.0 + np.cos((2 * k - 1) * np.pi / (2 * K)))
        self.logw = np.zeros(K)
        self.tau, self.log_thr, self.rule = tau, math.log(1.0 / alpha), rule
        self.path: list[float] = []
        self.mix: list[float] = []
        self.e: list[float] = []
        self.stop: int | None = None

    def _exact_max(self) -> float:
        d = np.asarray(self.e) - 1.0
        g = lambda b: float(np.sum(d / (1.0 + b * d)))  # noqa: E731 - derivative, decreasing
        if g(0.0) <= 0:
            return 0.0
        if g(1.0) >= 0:
            return float(np.sum(np.log1p(d)))
        lo, hi = 0.0, 1.0
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if g(mid) > 0 else (lo, mid)
        b = 0.5 * (lo + hi)
        return float(np.sum(np.log1p(b * d)))

    def feed(self, v: np.ndarray, t0: int) -> None:
        E = (2.0 + np.asarray(v)) / (2.0 + self.tau)
        inc = np.log1p(self.beta[None, :] * (E[:, None] - 1.0))
        cum = self.logw[None, :] + np.cumsum(inc, axis=0)
        t = t0 + np.arange(1, E.size + 1)
        pen = 0.5 * np.log(t + 1.0) + math.log(2.0)
        cmax = cum.max(axis=1)
        lmax = cmax - pen
        lmix = cmax + np.log(np.mean(np.exp(cum - cmax[:, None]), axis=1))
        for j in range(E.size):
            self.e.append(float(E[j]))
            val = lmax[j]
            if self.rule == "max" and self.log_thr - 0.05 <= val < self.log_thr:
                val = max(val, self._exact_max() - pen[j])
            self.path.append(float(val))
            self.mix.append(float(lmix[j]))
            stat = val if self.rule == "max" else lmix[j]
            if stat >= self.log_thr:
                self.stop = t0 + j + 1
                self.logw = cum[j]
                return
        self.logw = cum[-1]


# ----------------------------------------------------------------------------- resources
#: Seconds per (test pair, earlier pair, output dimension) of the OGA witness (~9e-9 measured on
#: one core with the compiled kernel, rounded up).
_WITNESS_S = 1.5e-8
#: Alg. 2: seconds per (pair, Gauss--Chebyshev node) per tested epsilon (K ~ N/2 nodes).
_EBET_S = 3e-8
#: Alg. 1: seconds per pair per tested epsilon (the ONS loop).
_ONS_S = 2e-6
#: Median heuristic: seconds per pooled warm-up distance (2 w^2 distances for w pairs).
_MEDIAN_S = 1.5e-7
#: RFF witness: seconds per (pair, feature) (the O(D^2) step and the 4D trigonometric calls).
_RFF_S = 1e-8


def sequential_work(max_obs: int, *, n_eps: int = 1, algorithm: int = 1, warmup: int = 0,
                    d: int = 1, block: int = 128, features: int | None = None
                    ) -> tuple[float, float]:
    r"""Peak bytes and wall seconds of one :func:`sequential_grid` run, from its arguments.

    With :math:`N` test pairs, :math:`m` tested epsilons, :math:`w` warm-up pairs and outputs
    of dimension :math:`d` (the OGA witness touches every earlier pair at every step; Alg. 2
    evaluates :math:`K=\lceil (N+1)/2\rceil` mixture nodes per step and test; the median
    heuristic forms all :math:`\binom{2w}{2}` pooled distances):

    .. math::

        \text{bytes} &\approx 32Nd + 88N + m N\,(32 + [\text{Alg. 2}]\,(12\,b + 96))
                       + 2w^2(24 + 32d),\\
        \text{seconds} &\approx c_w N^2 d + m\,(c_2 N K\ \text{or}\ c_1 N)
                         + c_m\,2w^2 (1 + d/8)

    (per-unit costs measured on one core and rounded up; :math:`b` is the block size). With
    ``features`` :math:`=D` (the RFF witness, :math:`p=D(2D+1)` features) the witness term
    :math:`c_wN^2d` becomes :math:`c_r N (3p + 8D(d+3))` and :math:`32bD + 8D(d+4D)` bytes.

    Parameters
    ----------
    max_obs : int
        Number N of test pairs.
    n_eps : int
        Number m of tested epsilons.
    algorithm : {1, 2}
        The paper's algorithm.
    warmup : int
        Number w of warm-up pairs.
    d : int
        Output dimension.
    block : int
        Block size b of Alg. 2.
    features : int, optional
        D of the RFF witness; None = the exact OGA witness.

    Returns
    -------
    nbytes : float
        Peak bytes.
    seconds : float
        Wall seconds.
    """
    N, w = float(max_obs), float(warmup)
    nbytes = 16.0 * N * d + 40.0 * N + 2.0 * w * w * (24.0 + 32.0 * d)
    seconds = _MEDIAN_S * 2.0 * w * w * (1.0 + d / 8.0)
    if features is None:
        seconds += _WITNESS_S * N * N * d
        nbytes += 16.0 * N * d + 48.0 * N  # the kernel's transposed copies and distance rows
    else:
        p = features * (2.0 * features + 1.0)
        seconds += _RFF_S * N * (3.0 * p + 8.0 * features * (d + 3))
        nbytes += 32.0 * min(block, N) * features + 8.0 * features * (d + 4 * features)
    if algorithm == 2:
        K = (N + 2.0) // 2
        nbytes += n_eps * (3.0 * 8.0 * min(block, N) * K + 96.0 * N)
        seconds += n_eps * _EBET_S * N * K
    else:
        nbytes += n_eps * 32.0 * N
        seconds += n_eps * _ONS_S * N
    return nbytes, seconds


def check_sequential_work(max_obs: int, *, n_eps: int = 1, algorithm: int = 1, warmup: int = 0,
                          d: int = 1, runs: int = 1, extra_bytes: float = 0.0,
                          names: dict | None = None, features: int | None = None) -> None:
    """Refuse up front (:func:`semi_core._validation.check_work`) sequential audits whose
    estimated memory or time (:func:`sequential_work`, times ``runs``) exceeds the limits.

    ``names`` maps ``max_obs``, ``runs``, ``warmup`` to the names shown in the message (CLI
    flags); ``extra_bytes`` is what the caller keeps of all runs (their JSON paths).

    Parameters
    ----------
    max_obs, n_eps, algorithm, warmup, d, features
        As in :func:`sequential_work`.
    runs : int
        Number of runs.
    extra_bytes : float
        Bytes kept by the caller over all runs.
    names : dict, optional
        Names shown in the message.
    """
    nm = {"max_obs": "max_obs", "runs": "runs", "warmup": "warmup", **(names or {})}
    nbytes, seconds = sequential_work(max_obs, n_eps=n_eps, algorithm=algorithm, warmup=warmup,
                                      d=d, features=features)
    what = (f"the sequential audit ({nm['runs']} = {runs} x {nm['max_obs']} = {max_obs} pairs"
            f", {n_eps} epsilon(s), Alg. {algorithm}, {nm['warmup']} = {warmup}, d = {d})")
    check_work(what, nbytes=nbytes + float(extra_bytes), seconds=runs * seconds,
               hint=f"lower {nm['max_obs']} (memory and time grow with its square for the "
                    f"witness), {nm['runs']}, {nm['warmup']} (its square) or the grid size")


# ----------------------------------------------------------------------------- drivers
def _check_common(delta, failure_prob, max_obs, algorithm, warmup, bound, evalue):
    delta = check_delta(delta)
    alpha = check_alpha(failure_prob, "failure_prob")
    max_obs = check_int(max_obs, "max_obs", minimum=1)
    if algorithm not in (1, 2):
        raise ValueError(f"algorithm must be 1 or 2, got {algorithm!r}")
    warmup = check_int(warmup, "warmup", minimum=0)
    if bound not in ("new", "auditorium"):
        raise ValueError(f"bound must be 'new' or 'auditorium', got {bound!r}")
    if evalue not in ("max", "mixture"):
        raise ValueError(f"evalue must be 'max' or 'mixture', got {evalue!r}")
    return delta, alpha, max_obs, warmup


def sequential_grid(source: PairSource, epsilons: Sequence[float], *, delta: float,
                    failure_prob: float = 0.05, max_obs: int = 5000, algorithm: int = 1,
                    bandwidth: float | str = "median", warmup: int = 20, bound: str = "new",
                    evalue: str = "max", seed=0, block: int = 128, backend: str = "auto",
                    keep_witness: bool = False, witness: str = "exact",
                    features: int = DEFAULT_FEATURES, conventions: str = "paper",
                    ceiling_pairs: int = 0, planned_runs: int | None = None) -> GridResult:
    r"""Sequential tests of :math:`H_0(\varepsilon_i):\mathrm{MMD}\le\tau(\varepsilon_i,\delta)` on
    one stream, and the anytime-valid :math:`\varepsilon` lower bound (see :class:`GridResult`).

    Parameters
    ----------
    source : PairSource
        Where the pairs come from (:func:`mechanism_source`, :func:`stream_source`, ...).
    epsilons : sequence of float
        Grid, each :math:`\ge0` (sorted internally).
    delta : float
        :math:`\delta\in[0,1)`.
    failure_prob : float
        Test level :math:`\alpha\in(0,1)`: reject when the wealth reaches :math:`1/\alpha`.
    max_obs : int
        :math:`N_{\max}\ge1` test pairs (after the warm-up).
    algorithm : {1, 2}
        Alg. 1 (ONS test supermartingale) or Alg. 2 (e-process).
    bandwidth : float or "median"
        RBF bandwidth, or the median heuristic on ``warmup`` discarded pairs.
    warmup : int
        Pairs drawn and discarded for the median heuristic (ignored for a fixed bandwidth).
    bound : {"new", "auditorium"}
        Theorem 3.1 threshold or the older DP-Auditorium one (ablation, Table 3).
    evalue : {"max", "mixture"}
        Alg. 2 stopping statistic: the seed's :math:`\tilde W_t` or the exact UP mixture.
    seed : int or SeedSequence
    block : int
        Pairs drawn per mechanism call (the test still looks at them one at a time).
    backend : {"auto", "numba", "numpy", "python"}
        Witness kernel (see :func:`semi_core.kernels.witness.witness_block`; the RFF witness
        takes ``auto``, ``numba`` or ``numpy``). With ``planned_runs``, ``auto`` for the exact
        witness is :func:`semi_core.kernels.witness.choose_witness_backend`'s size rule (the
        NumPy twin for small jobs, which then never import Numba); the kernel that ran is in
        each result's ``diagnostics["kernel"]``.
    keep_witness : bool
        Keep the witness values :math:`v_t` in each result.
    witness : {"exact", "rff"}
        The RBF-kernel OGA witness (:math:`O(N^2d)`) or the random-Fourier-feature one
        (:math:`O(N D^2)`, :mod:`.rff`; exactly valid, power measured in
        ``benchmarks/bench_witness.py``).
    features : int
        Number of frequencies :math:`D\in[1, 128]` of the RFF witness (default 16; not used
        by ``exact``).
    conventions : str
        ``"paper"`` (Alg. 1, 3, 4 and Thm 3.1 as printed), ``"notebook"`` (the authors' public
        notebook: its threshold, ONS constants and OGA step/radius) or a comma list of
        ``tau,ons,oga`` (:mod:`.conventions`); ``ons`` needs Alg. 1, ``oga`` the exact witness.
    planned_runs : int, optional
        Runs of this configuration the process plays (>= 1): the size rule of
        ``backend="auto"`` prices the twin's excess over all of them against Numba's one
        start-up (a command line that plays one configuration passes it). ``None`` (default):
        no size rule, ``auto`` is the compiled kernel (a process that plays many
        configurations pays Numba's start-up once).
    ceiling_pairs : int
        With ``n > 0``, after the run ``n`` fresh pairs estimate the test's ceiling at its
        bandwidth (:func:`.ceiling.mechanism_ceiling`: no epsilon above it can be rejected,
        whatever ``max_obs``), kept in ``GridResult.epsilon_ceiling``; the source must draw
        fresh pairs (not a recorded stream). Seed: a child of ``seed`` the run does not use.

    Returns
    -------
    GridResult
    """
    delta, alpha, max_obs, warmup = _check_common(delta, failure_prob, max_obs, algorithm, warmup,
                                                  bound, evalue)
    ceiling_pairs = check_int(ceiling_pairs, "ceiling_pairs", minimum=0)
    if planned_runs is not None:
        planned_runs = check_int(planned_runs, "planned_runs", minimum=1)
    if ceiling_pairs and (ceiling_pairs < 4 or source.limit is not None):
        kind = "recorded stream" if source.limit is not None else "sampler"
        raise ValueError("ceiling_pairs must be 0 or >= 4, with a source that draws fresh pairs "
                         f"(got {ceiling_pairs} and a {kind})")
    if witness not in WITNESSES:
        raise ValueError(f"witness must be one of {WITNESSES}, got {witness!r}")
    comps = parse_conventions(conventions)
    if "ons" in comps and algorithm != 1:
        raise ValueError("conventions with 'ons' apply to algorithm=1 only")
    if "oga" in comps and witness != "exact":
        raise ValueError("conventions with 'oga' apply to witness='exact' only")
    if "tau" in comps and bound != "new":
        raise ValueError("conventions with 'tau' replace the threshold: use bound='new'")
    rff = witness == "rff"
    n_feat = check_features(features) if rff else None
    if rff and backend not in ("auto", "numba", "numpy"):
        raise ValueError(f"backend must be auto, numba or numpy with witness='rff', got "
                         f"{backend!r}")
    eps = np.atleast_1d(np.asarray(epsilons, dtype=float))
    if eps.ndim != 1 or eps.size == 0:
        raise ValueError("epsilons must be a non-empty 1-D sequence")
    eps = np.sort(np.array([check_epsilon(float(e), "epsilon") for e in eps]))
    median = isinstance(bandwidth, str)
    if median:
        if bandwidth != "median":
            raise ValueError(f"bandwidth must be a positive number or 'median', got {bandwidth!r}")
        if warmup < 2:
            raise ValueError("warmup must be >= 2 for the median heuristic")
    elif isinstance(bandwidth, bool) or not isinstance(bandwidth, numbers.Real) or not (
            np.isfinite(bandwidth) and bandwidth > 0):
        raise ValueError(f"bandwidth must be finite and > 0, got {bandwidth!r}")
    taus = [(tau_notebook(float(e), delta) if "tau" in comps else tau_for(bound, float(e), delta))
            for e in eps]
    bad = [float(e) for e, t in zip(eps, taus) if not np.isfinite(t)]
    if bad:
        raise ValueError(f"epsilon = {bad[0]:g} gives an infinite MMD threshold with "
                         f"bound={bound!r} (e^epsilon overflows); the bound is vacuous (above "
                         "the largest MMD, sqrt 2) from epsilon ~ 0.9: use epsilon <= 700")
    check_sequential_work(max_obs, n_eps=eps.size, algorithm=algorithm,
                          warmup=warmup if median else 0, features=n_feat)
    root = as_seed_sequence(seed)
    rng = np.random.Generator(np.random.PCG64(root))
    if median:
        wx, wy = source(warmup, rng)  # discarded after setting the bandwidth
        if wx.shape[1] > 1:  # the dimension is known now: recheck before the distances
            check_sequential_work(max_obs, n_eps=eps.size, algorithm=algorithm,
                                  warmup=warmup, d=wx.shape[1], features=n_feat)
        bw, note = median_bandwidth(wx, wy)
    else:
        bw, note = float(bandwidth), "fixed"
    bettors = [(_ONSBettor(t, alpha, "ons" in comps) if algorithm == 1 else _EBettor(t, alpha, max_obs, evalue))
               for t in taus]
    X = Y = None
    buf = None
    W = None
    t = 0
    n_unres = n_dist = 0
    omk = 0.0
    while t < max_obs and any(b.stop is None for b in bettors):
        size = min(block, max_obs - t)
        xb, yb = source(size, rng)
        u, n = _unresolved(xb, yb, bw)
        n_unres, n_dist = n_unres + u, n_dist + n
        omk += float(np.sum(-np.expm1(-np.sum((xb - yb) ** 2, axis=1) / (2.0 * bw * bw))))
        if buf is None:
            d = xb.shape[1]
            if d > 1 and not median:
                check_sequential_work(max_obs, n_eps=eps.size, algorithm=algorithm, d=d,
                                      features=n_feat)
            if rff:  # drawn once the bandwidth and d are fixed, before any test pair is used
                W = rff_frequencies(d, n_feat, bw, root)
                buf = new_rff_state(max_obs, n_feat)
            else:
                X, Y = np.zeros((max_obs, d)), np.zeros((max_obs, d))
                buf = new_notebook_witness(max_obs) if "oga" in comps else new_state(max_obs, d)
                if "oga" not in comps and planned_runs is not None:  # d is known now
                    backend = choose_witness_backend(max_obs, d, runs=planned_runs,
                                                     backend=backend)
        if rff:
            from semi_core.kernels.rff_witness import rff_block  # imports Numba

            rff_block(rff_base_features(xb, W), rff_base_features(yb, W), t, buf,
                      backend=backend)
        else:
            X[t:t + size], Y[t:t + size] = xb, yb
            if "oga" in comps:
                notebook_witness_block(X, Y, t, t + size, bw, buf)
            else:
                witness_block(X, Y, t, t + size, bw, buf, backend=backend)
        v = buf["v"][t:t + size]
        for b in bettors:
            if b.stop is None:
                b.feed(v, t)
        t += size
    n_obs = t
    v_all = buf["v"][:n_obs] if buf is not None else np.zeros(0)
    diag = witness_diagnostics(bw, (wx, wy) if median else None, (n_unres, n_dist), omk, n_obs,
                               float(np.max(np.abs(v_all))) if v_all.size else 0.0)
    diag["kernel"] = ("notebook" if "oga" in comps else "numpy" if backend == "auto" and use_twins()
                      else "numba" if backend == "auto" else backend)
    results, stops = [], []
    for e, tau_i, b in zip(eps, taus, bettors):
        mix = np.asarray(b.mix) if algorithm == 2 else None
        results.append(SequentialResult(
            rejected=b.stop is not None, stopped_at=b.stop, n_observed=len(b.path),
            log_wealth=np.asarray(b.path), epsilon=float(e), delta=delta, failure_prob=alpha,
            tau=float(tau_i), algorithm=algorithm, bandwidth=bw, bandwidth_note=note,
            bound=bound, log_mixture=mix,
            witness=buf["v"][:n_obs].copy() if (keep_witness and buf is not None) else None,
            witness_kind=witness, features=n_feat, diagnostics=diag))
        stops.append(np.inf if b.stop is None else b.stop)
    # fixed-sequence lower bound path: largest eps_i with every eps_j <= eps_i rejected by t
    stops = np.asarray(stops, dtype=float)
    prefix = np.maximum.accumulate(stops)  # time at which eps_0..eps_i are all rejected
    lb_path = np.zeros(n_obs)
    for i in range(eps.size):
        if np.isfinite(prefix[i]):
            lb_path[int(prefix[i]) - 1:] = np.maximum(lb_path[int(prefix[i]) - 1:], eps[i])
    rej_prefix = np.isfinite(prefix)
    k = int(rej_prefix.sum())
    lb = float(eps[k - 1]) if k else 0.0
    seed_reading = float(eps[k]) if k < eps.size else float("inf")
    ceiling = None
    if ceiling_pairs:
        from semi_core._rng import child_seed

        from .ceiling import mechanism_ceiling

        ceiling = mechanism_ceiling(source, bw, delta, n_pairs=ceiling_pairs,
                                    seed=child_seed(root, _CEILING_SEED_KEY),
                                    radius=0.5 if "oga" in comps else 1.0, bound=bound,
                                    tau=tau_notebook if "tau" in comps else None)
    return GridResult(epsilons=eps, results=results, lower_bound_path=lb_path,
                      epsilon_lower_bound=lb, seed_reading=seed_reading, bandwidth=bw,
                      n_observed=n_obs, epsilon_ceiling=ceiling)


#: Spawn key of the ceiling's fresh pairs (a child of the run's seed the run never uses).
_CEILING_SEED_KEY = 0x4345


def sequential_test(source: PairSource, *, epsilon: float, delta: float,
                    failure_prob: float = 0.05, max_obs: int = 5000, algorithm: int = 1,
                    **kw) -> SequentialResult:
    r"""One anytime-valid test of :math:`H_0:\mathrm{MMD}(\mathcal A(S),\mathcal A(S'))\le
    \tau(\varepsilon,\delta)` (Alg. 1 or 2); see :func:`sequential_grid` for the parameters.

    Parameters
    ----------
    source : PairSource
        Pairs of outputs on the neighbouring datasets.
    epsilon : float
        Tested :math:`\varepsilon`, >= 0.
    delta : float
        Tested :math:`\delta`, in [0, 1).
    failure_prob : float
        Type I error of the test, in (0, 1).
    max_obs : int
        Largest number of test pairs.
    algorithm : {1, 2}
        The paper's algorithm.
    **kw
        Further keywords of :func:`sequential_grid` (``seed``, ``warmup``, ...).

    Returns
    -------
    SequentialResult
        The verdict and its paths.

    Examples
    --------
    >>> from semi_core.mechanisms.zoo import NonDPLaplace1, SEED_PAIR
    >>> src = mechanism_source(NonDPLaplace1(0.01), *SEED_PAIR)
    >>> r = sequential_test(src, epsilon=0.01, delta=1e-5, max_obs=2000, seed=0)
    >>> r.rejected
    True
    """
    check_epsilon(epsilon)
    return sequential_grid(source, [epsilon], delta=delta, failure_prob=failure_prob,
                           max_obs=max_obs, algorithm=algorithm, **kw).results[0]


@dataclass
class AuditRuns:
    """Independent runs of one configuration and their summary."""

    runs: list[SequentialResult]
    summary: dict = field(default_factory=dict)


def rejection_summary(rejected, stops=None) -> dict:
    r"""Rejection rate, its binomial standard error and the mean stopping time over the
    rejecting runs (with its SE): the one summary of repeated audits.

    .. math:: \hat p = \frac{1}{R}\sum_i \mathbb 1\{\text{run } i \text{ rejects}\},\qquad
              \mathrm{SE}(\hat p) = \sqrt{\hat p(1-\hat p)/R}

    Parameters
    ----------
    rejected : array_like of bool, shape (R,) or (R, k)
        Whether run ``i`` rejected (per claim ``j`` when 2-D).
    stops : sequence, optional
        Stopping times of the rejecting runs (per claim when ``rejected`` is 2-D: one sequence
        per column); omitted for fixed-size audits.

    Returns
    -------
    dict
        ``runs``, ``rejections``, ``rejection_rate``, ``rejection_rate_se`` (floats, or lists
        per claim when ``rejected`` is 2-D; NaN when there are no runs), and with ``stops``
        ``mean_stop`` / ``mean_stop_se`` (None where no run rejected).
    """
    rej = np.asarray(rejected, dtype=float)
    if rej.ndim not in (1, 2):
        raise ValueError(f"rejected must be (runs,) or (runs, claims), got shape {rej.shape}")
    R = rej.shape[0]
    if R:
        rate = rej.mean(axis=0)
        se = np.sqrt(rate * (1 - rate) / R)
    else:
        rate = se = np.full(rej.shape[1:], np.nan)
    out = {"runs": R, "rejections": rej.sum(axis=0).astype(int).tolist(),
           "rejection_rate": rate.tolist(), "rejection_rate_se": se.tolist()}
    if stops is not None:
        cols = [stops] if rej.ndim == 1 else list(stops)
        st = [np.asarray(c, dtype=float) for c in cols]
        mean = [float(c.mean()) if c.size else None for c in st]
        mse = [float(c.std(ddof=1) / np.sqrt(c.size)) if c.size > 1 else (0.0 if c.size else None)
               for c in st]
        out["mean_stop"], out["mean_stop_se"] = (mean[0], mse[0]) if rej.ndim == 1 else (mean,
                                                                                       mse)
    return out


def summarize(runs: Sequence[SequentialResult]) -> dict:
    """Rejection rate (binomial SE) and mean stopping time over rejecting runs (SE)
    (:func:`rejection_summary`), the degenerate runs and a verdict.

    Parameters
    ----------
    runs : sequence of SequentialResult
        Independent runs.

    Returns
    -------
    dict
        Rejection rate, mean stopping time (with SEs), degenerate runs and the verdict.
    """
    R = len(runs)
    out = rejection_summary([r.rejected for r in runs],
                            [r.stopped_at for r in runs if r.rejected])
    out["degenerate_runs"] = int(sum(r.degenerate for r in runs))
    nd = out["degenerate_runs"]
    if nd and out["rejections"] == 0:
        out["verdict"] = (f"inconclusive: the witness was degenerate in {nd}/{R} runs (no "
                          "power; not evidence of privacy)")
    elif out["rejections"]:
        out["verdict"] = "violation"
    else:
        out["verdict"] = "no violation found"
    return out


def run_audits(make_source: Callable[[], PairSource] | None = None, *, runs: int, seed=0,
               progress=None, audit: Callable | None = None, keep: Callable | None = None,
               summary: Callable | None = summarize, **kw) -> AuditRuns:
    r"""``runs`` independent audits of one configuration: run ``i`` uses the ``i``-th child of
    ``seed`` (``as_seed_sequence(seed).spawn(runs)[i]``), whatever the audit.

    Parameters
    ----------
    make_source : callable, optional
        A fresh :class:`PairSource` per run; run ``i`` is
        ``sequential_test(make_source(), seed=child_i, **kw)`` (the default audit).
    runs : int
        Number of runs (>= 1).
    seed : int, SeedSequence or None
        Root seed (a SeedSequence is spawned from: its children advance).
    progress : callable, optional
        ``progress(i, runs)`` after run ``i``.
    audit : callable, optional
        Any other audit, called as ``audit(child_i)`` (a sequential grid, the SeMI stream
        audit, a batch test, a fixed-R audit); excludes ``make_source`` and ``kw``.
    keep : callable, optional
        What is kept of each run (e.g. strided paths); default the result itself.
    summary : callable or None
        Summary of the kept runs (default :func:`summarize`, for :class:`SequentialResult`);
        None for none.
    **kw
        Passed to :func:`sequential_test`.

    Returns
    -------
    AuditRuns
    """
    runs = check_int(runs, "runs", minimum=1)
    if audit is None:
        if make_source is None:
            raise TypeError("run_audits needs make_source (sequential tests) or audit")

        def audit(ss):
            return sequential_test(make_source(), seed=ss, **kw)
    elif make_source is not None or kw:
        raise TypeError("run_audits takes either make_source and the sequential test's options "
                        "or audit, not both")
    children = as_seed_sequence(seed).spawn(runs)
    out = []
    for i, ss in enumerate(children):
        res = audit(ss)
        out.append(res if keep is None else keep(res))
        del res
        if progress is not None:
            progress(i + 1, runs)
    return AuditRuns(out, summary(out) if summary is not None else {})
