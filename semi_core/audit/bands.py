r"""Tail-adaptive simultaneous confidence bands for the two score CDFs (method ``band``).

The DKW band of :mod:`semi_core.audit.bounds` adds the same margin
:math:`\sqrt{\log(2/\xi)/(2N)}` at every threshold. The :math:`\varepsilon` bound is decided
where one error rate is small (SeMI seed Lemma 2.1: :math:`(\mathrm{TPR}-\delta)/\mathrm{FPR}`
at a low FPR), and there a fixed margin is worst. The band here has *equal local levels*
(Berk-Jones type): at every point of a pre-registered grid of counts it is the exact binomial
(Clopper-Pearson) upper bound at one local level :math:`x`, and :math:`x` is calibrated so that
the whole band holds simultaneously with probability :math:`\ge 1-q`.

Reduction to uniform order statistics
-------------------------------------
Let :math:`X_1..X_N` be i.i.d. with CDF :math:`F` and :math:`\alpha(\gamma)=1-F(\gamma)`,
:math:`k(\gamma)=\#\{X_i>\gamma\}`. Write :math:`X_i=F^{-1}(U_i)` with :math:`U_i` uniform and
:math:`V_i=1-U_i`; then :math:`\{X_i>\gamma\}=\{V_i<\alpha(\gamma)\}` and, for every
:math:`\gamma`, :math:`\alpha(\gamma)\le V_{(k(\gamma)+1)}` (the :math:`(k+1)`-th smallest
:math:`V`, :math:`V_{(N+1)}:=1`). Hence on the event

.. math::

    E=\{V_{(g+1)}\le b_g\ \ \forall g\in\mathcal G\},\qquad
    b_g=\mathrm{Beta}^{-1}(1-x;\,g+1,\,N-g),

every threshold satisfies :math:`\alpha(\gamma)\le \bar\alpha(\gamma):=b_{\lceil k(\gamma)
\rceil_{\mathcal G}}` (the band value at the smallest grid count :math:`\ge k(\gamma)`; 1 when
:math:`k(\gamma)=N`), because :math:`V_{(k+1)}\le V_{(g+1)}` for :math:`g\ge k`. The law of
:math:`(V_{(g+1)})_g` does not depend on :math:`F`, ties included (with ties
:math:`\{X_i>\gamma\}` is still :math:`\{V_i<\alpha(\gamma)\}` for the quantile transform, so
the bound holds on the same event). :math:`b_g` is the Clopper-Pearson upper bound at count
:math:`g` (``clopper_pearson_upper(g, N, x)``): pointwise exact, since
:math:`V_{(g+1)}\sim\mathrm{Beta}(g+1,N-g)`. The member CDF :math:`\beta(\gamma)=F_1(\gamma)` is
bounded the same way (apply the above to :math:`-Y`: counts :math:`\#\{Y_i\le\gamma\}`).

Pre-registered count grid
-------------------------
:math:`\mathcal G(N)`: every count :math:`0..64`, then counts growing by 3 % up to
:math:`(N-1)/2`, mirrored (:math:`N-1-g`) so that both tails are covered
(:func:`count_grid`; about 400 points at :math:`N=10^4`, 900 at :math:`N=10^7`). Fixed by
:math:`N` alone, never by the scores.

Calibration by simulation, error folded into the level
------------------------------------------------------
:math:`P(E^c)` depends only on :math:`(N,\mathcal G,x)`. The order statistics at the grid
counts are simulated exactly and in :math:`O(|\mathcal G|)` per replicate (Rényi:
:math:`V_{(j)}=\Gamma_j/\Gamma_{N+1}`, :math:`\Gamma` partial sums of Exp(1), so the grid values
need only independent Gamma increments), for 64 candidate levels
:math:`x_\ell\in[q/|\mathcal G|,\,q]` (log-spaced; the crossing events are nested in
:math:`\ell`). With :math:`R` replicates, :math:`c_\ell` crossings and :math:`\eta=q/10`, the
chosen level is the largest :math:`x_\ell` with
:math:`\mathrm{CP}_{\mathrm{upper}}(c_\ell,R,\eta)\le q-\eta`. By nestedness,
:math:`P_{\text{sim}}(P(E^c)>q-\eta)\le\eta`, so over the simulation and the data the band fails
with probability :math:`\le q`. If no candidate passes, the Bonferroni level :math:`q/|\mathcal
G|` (valid with no simulation) is used. The simulation is seeded by :math:`(N, q)` (a fixed,
reproducible table); :func:`band_crossing_probability` computes :math:`P(E^c)` exactly for
small :math:`N` and the tests compare the two.

Shipped calibrations: the outcome of one calibration is two integers (the chosen level's index
and its crossing count), so the calibrations of common :math:`(N, q)` are shipped in
:mod:`semi_core.audit._band_table` (written by ``analysis/band_calibration.py``; the tests redo
some and compare the integers exactly). The grid and band values of every shipped calibration
are shipped beside it (``_band_values.f8``, same script: what :func:`count_grid` and
:func:`band_values` give; the tests check every shipped band valid without relying on the last
digit, and equal to this host's values to 16 ulps, as special functions differ in the last place
between hosts), so a table hit reads its band
instead of evaluating :math:`|\mathcal G|` Beta quantiles: a one-shot audit (a CLI call) pays
neither the simulation nor the quantiles; any other :math:`(N, q)` is simulated as before, once
per process.

Off-table sizes: the Poisson-embedded band
------------------------------------------
For :math:`N\ge` :data:`EMBEDDED_FROM_N` (:data:`POISSON_MIN_N`, 2,000) off the table, no
simulation runs at audit time: a first call costs what a second does. With
:math:`E_1,E_2,\dots` i.i.d. Exp(1) and :math:`\Gamma_j=E_1+\dots+E_j`, Rényi gives
:math:`V_{(j)}=\Gamma_j/\Gamma_{N+1}`. The events

.. math::

    A=\{\Gamma_{s+1}\le a_s\ \forall s\in\mathcal S_K\},\quad
    A'=\{\Gamma'_{s+1}\ge a'_s\ \forall s\in\mathcal S_K\},\quad
    B=\{D\le\Gamma_{N+1}\le U\}

(:math:`\Gamma'_{h+1}=\Gamma_{N+1}-\Gamma_{N-h}`, the reverse sums, Gamma partial sums too;
:math:`a_s, a'_s` upper and lower Gamma quantiles at local levels :math:`x, x'`;
:math:`D, U` the :math:`p_3` and :math:`1-p_4` quantiles of :math:`\Gamma(N+1)`) have laws that
do not depend on :math:`N` (:math:`A, A'`) or are exact (:math:`B`). On :math:`A\cap A'\cap B`,
:math:`V_{(g+1)}\le a_{\lceil g\rceil}/D` and :math:`V_{(N-h)}\le 1-a'_{\lfloor h\rfloor}/U`
(:math:`\Gamma` increasing; :math:`\mathcal S_K` the universal lower grid truncated at
:math:`K>(N-1)/2`, :func:`poisson_grid`), and :math:`V_{(g+1)}\le V_{(g'+1)}` for
:math:`g\le g'`; by the union bound the band fails with probability
:math:`\le P(A^c)+P(A'^c)+p_3+p_4\le q` when :math:`x, x'` are calibrated (as above, by
simulation with its error folded in) at shares :math:`0.45q` each and :math:`p_3=p_4=0.05q`
(:data:`POISSON_SPLIT`). :math:`P(A^c)` cannot grow when constraints are dropped, so one
calibration per truncation :math:`K` (:data:`POISSON_K`) and :math:`q` serves every :math:`N`:
shipped in :mod:`semi_core.audit._band_poisson` (``analysis/band_poisson_table.py``). The price
is the allowance on :math:`\Gamma_{N+1}` (relative width about :math:`3/\sqrt N`) and the
split of :math:`q`: at :math:`N=12{,}345` the band is 3-8 % above the simulated one (median
3.6 %), at :math:`10^6` well under 1 % from the total; tests/audit/test_band_cold.py checks the
failure probability exactly at small :math:`N` and by exact simulation from 2,000 to
9,999,999. Larger :math:`N`, levels not shipped and :math:`N<` :data:`EMBEDDED_FROM_N` simulate
as above (once per process: about 0.3 s at :math:`N=1{,}234`).

:func:`band_candidates` gives, for a batch of audits, the thresholds at which the
:math:`\varepsilon` bound can attain its maximum, with :math:`\bar\alpha,\bar\beta` there:
:math:`\bar\alpha` is a step function that only drops at :math:`\gamma=X_{(N_0-g)}`,
:math:`g\in\mathcal G`, and both ratios of Lemma 2.1 decrease in :math:`\bar\beta`, which grows
with :math:`\gamma`, so the left end of every step of :math:`\bar\alpha` is optimal: the
maximum over these :math:`|\mathcal G|` thresholds is the maximum over all real thresholds.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.special import betaincinv

from semi_core._validation import check_failure_prob, check_int
from semi_core.audit._band_poisson import POISSON_BLOCKS, POISSON_TABLE
from semi_core.audit._band_table import BAND_BLOCKS, BAND_TABLE
from semi_core.stats.ranking import count_at_or_below

__all__ = [
    "BandCalibration",
    "count_grid",
    "calibrate_band",
    "band_values",
    "band_at_counts",
    "band_crossing_probability",
    "simulate_min_crossing_level",
    "simulate_calibration",
    "table_key",
    "shipped_band",
    "band_values_blob",
    "BAND_VALUES_FILE",
    "band_candidates",
    "rank_threshold_counts",
    "BAND_DENSE",
    "BAND_RATIO",
    "BAND_REPS",
    "poisson_grid",
    "simulate_poisson_calibration",
    "poisson_band_values",
    "poisson_band",
    "POISSON_K",
    "EMBEDDED_FROM_N",
    "POISSON_MIN_N",
    "POISSON_SPLIT",
]

#: Every count up to this is in the grid.
BAND_DENSE = 64
#: Growth factor of the grid beyond ``BAND_DENSE``.
BAND_RATIO = 1.03
#: Simulation replicates per calibration.
BAND_REPS = 20_000
_N_LEVELS = 64


def count_grid(n: int, *, dense: int = BAND_DENSE, ratio: float = BAND_RATIO,
               max_step: int | None = None) -> np.ndarray:
    r"""Pre-registered grid of counts :math:`\mathcal G(N)\subset\{0..N-1\}` (both tails).

    All counts :math:`\le` ``dense``, then :math:`g\mapsto\lceil g\cdot\text{ratio}\rceil` (but
    at most ``max_step`` further) up to :math:`(N-1)/2`, and the mirror images :math:`N-1-g`.

    Parameters
    ----------
    n : int
        Number of scores, ``>= 1``.
    dense : int
        ``>= 0``.
    ratio : float
        ``> 1``.
    max_step : int, optional
        ``>= 1``: the largest step between consecutive counts (None: no cap).

    Returns
    -------
    ndarray of int64, sorted, unique.
    """
    n = check_int(n, "n", minimum=1)
    dense = check_int(dense, "dense", minimum=0)
    if not (isinstance(ratio, int | float) and math.isfinite(ratio) and ratio > 1.0):
        raise ValueError(f"ratio must be a finite number > 1, got {ratio!r}")
    cap = n if max_step is None else check_int(max_step, "max_step", minimum=1)
    half = (n - 1) // 2
    lo = list(range(min(dense, half) + 1))
    g = lo[-1]
    while g < half:
        g = min(half, max(g + 1, min(int(math.ceil(g * ratio)), g + cap)))
        lo.append(g)
    lo = np.asarray(lo, dtype=np.int64)
    hi = n - 1 - lo[::-1]  # ascending, >= half: shares at most the middle count with lo
    return np.concatenate([lo, hi[1:] if hi[0] == lo[-1] else hi])


def band_values(n: int, grid: np.ndarray, local_level) -> np.ndarray:
    r"""Band :math:`b_g=\mathrm{Beta}^{-1}(1-x;\,g+1,\,N-g)` at the grid counts.

    ``local_level`` may be an array (levels along a new last axis).

    Parameters
    ----------
    n : int
        Number of scores N.
    grid : ndarray of int, shape (G,)
        Grid counts g in 0..N-1.
    local_level : float or ndarray, shape (L,)
        Local level(s) x, in (0, 1).

    Returns
    -------
    ndarray, shape (G,) or (G, L)
        The band values in [0, 1].
    """
    g = np.asarray(grid, dtype=float)
    x = np.asarray(local_level, dtype=float)
    return betaincinv(g[..., None] + 1.0, n - g[..., None], 1.0 - x[None, ...]) if x.ndim \
        else betaincinv(g + 1.0, n - g, 1.0 - x)


def simulate_min_crossing_level(n: int, grid: np.ndarray, bands: np.ndarray, reps: int,
                                rng: np.random.Generator, *, chunk: int = 4096) -> np.ndarray:
    r"""For each replicate, the first level index whose band the uniform order statistics cross.

    ``bands`` has shape ``(G, L)``, non-increasing along the levels axis. Replicate :math:`r`
    crosses level :math:`\ell` iff :math:`V_{(g+1)}>b_{g,\ell}` for some :math:`g`; the crossing
    events are nested in :math:`\ell`, so the replicate is summarised by the smallest such
    :math:`\ell` (``L`` when it crosses none). Exact simulation of
    :math:`(V_{(g+1)})_{g\in\mathcal G}`: :math:`V_{(j)}=\Gamma_j/\Gamma_{N+1}` with independent
    Gamma increments between grid indices (Rényi representation), :math:`O(|\mathcal G|)` per
    replicate whatever :math:`N`.

    Parameters
    ----------
    n : int
        Number of uniforms N.
    grid : ndarray of int, shape (G,)
        Grid counts.
    bands : ndarray, shape (G, L)
        Band values per grid count and level.
    reps : int
        Number of replicates.
    rng : numpy.random.Generator
        Source of the Gamma increments.
    chunk : int
        Replicates per vectorised block (memory bound).

    Returns
    -------
    ndarray of int64, shape (reps,)
    """
    grid = np.asarray(grid, dtype=np.int64)
    G, L = bands.shape
    inc = np.diff(np.concatenate([[0], grid + 1])).astype(float)
    tail = float(n + 1 - (grid[-1] + 1))
    neg = -bands  # non-decreasing along levels: searchsorted needs ascending rows
    out = np.empty(reps, dtype=np.int64)
    neg_v = np.empty((G, min(chunk, reps)))
    for s in range(0, reps, chunk):
        r = min(chunk, reps - s)
        gam = rng.standard_gamma(inc, size=(r, G))
        np.cumsum(gam, axis=1, out=gam)  # in place: one (r, G) array, not three
        total = gam[:, -1] + rng.standard_gamma(tail, size=r)
        # -V, grid point by grid point in contiguous rows (x/(-y) == -(x/y) exactly in IEEE)
        w = np.divide(gam.T, -total, out=neg_v[:, :r])
        del gam
        first = np.full(r, L, dtype=np.int64)
        for j in range(G):
            # levels l with b[j, l] >= V stay uncrossed: they are the first ones
            np.minimum(first, np.searchsorted(neg[j], w[j], side="right"), out=first)
        out[s:s + r] = first
    return out


@dataclass(frozen=True)
class BandCalibration:
    r"""A calibrated one-sided band for one CDF.

    Attributes
    ----------
    n : int
        Number of scores.
    failure_prob : float
        :math:`q`: the band fails (some :math:`V_{(g+1)}>b_g`) with probability :math:`\le q`.
    grid : ndarray
        Pre-registered counts :math:`\mathcal G(N)`.
    values : ndarray
        :math:`b_g` at the grid counts (non-decreasing).
    local_level : float
        The per-point level :math:`x`.
    crossing_estimate : float
        Simulated :math:`P(E^c)` at :math:`x` (``nan`` for the Bonferroni fallback).
    sim_error : float
        :math:`\eta`, the share of :math:`q` spent on the simulation error.
    reps : int
    source : str
        ``"simulation"`` or ``"bonferroni"``.
    """

    n: int
    failure_prob: float
    grid: np.ndarray
    values: np.ndarray
    local_level: float
    crossing_estimate: float
    sim_error: float
    reps: int
    source: str


def _levels(q: float, G: int) -> np.ndarray:
    return np.geomspace(q / G, q, _N_LEVELS) if G > 1 else np.array([q])


def _calibration(n: int, q: float, reps: int, grid: np.ndarray, ell: int,
                 crossings: int, values: np.ndarray | None = None,
                 level: float | None = None) -> BandCalibration:
    """The calibration with chosen level index ``ell`` (``-1``: the Bonferroni fallback);
    ``values`` and ``level``: the band values and local level when already known (shipped)."""
    G = grid.size
    if ell < 0:
        x = q / G
        return BandCalibration(n, q, grid, band_values(n, grid, x) if values is None else values,
                               x, math.nan, 0.0, reps, "bonferroni")
    x = _levels(q, G)[ell] if level is None else level
    if values is None:
        values = np.ascontiguousarray(band_values(n, grid, x))
    return BandCalibration(n, q, grid, values, float(x), float(crossings / reps), q / 10.0, reps,
                           "simulation")


#: Grids and band values of the shipped calibrations (``analysis/band_calibration.py``): raw
#: little-endian float64 blocks ``grid, values`` at the offsets of ``BAND_BLOCKS``.
BAND_VALUES_FILE = Path(__file__).with_name("_band_values.f8")
_F8 = np.dtype("<f8")


def shipped_band(key: tuple[int, int, int]) -> tuple[np.ndarray, np.ndarray, float] | None:
    """``(grid, values, local_level)`` of the shipped calibration ``key`` (:func:`table_key`).

    One read of the block :data:`semi_core.audit._band_table.BAND_BLOCKS` points to in
    :data:`BAND_VALUES_FILE` (plain numbers, nothing unpickled). None when ``key`` is not
    shipped or the file is absent; a short read is an error.

    Parameters
    ----------
    key : tuple of 3 int
        ``(n, round(q 1e12), reps)``.

    Returns
    -------
    tuple or None
        ``(grid, values, local_level)``, or None.
    """
    block_of = BAND_BLOCKS.get(key)
    if block_of is None:
        return None
    off, G, level = block_of
    block = _read_block(BAND_VALUES_FILE, off, G, 2, "analysis/band_calibration.py --values-only")
    if block is None:
        return None
    return block[0].astype(np.int64), block[1], level


def _read_block(path: Path, off: int, G: int, parts: int, script: str) -> list | None:
    """``parts`` float64 arrays of length ``G`` stored back to back from float ``off`` of a
    shipped calibration file: the one reader of the shipped calibrations (plain numbers,
    nothing unpickled). None when the file is absent; a short read is an error naming the
    ``script`` that regenerates it."""
    try:
        with open(path, "rb") as fh:  # cheaper than np.fromfile on a first call
            fh.seek(8 * off)
            raw = fh.read(8 * parts * G)
    except FileNotFoundError:
        return None
    block = np.frombuffer(raw, dtype=_F8)
    if block.size != parts * G:
        raise ValueError(f"{path} is truncated: regenerate it with {script}")
    return [block[i * G:(i + 1) * G] for i in range(parts)]


def band_values_blob(table: dict) -> tuple[np.ndarray, dict]:
    """What :func:`shipped_band` reads, for the calibrations ``table``: the float64 blocks and
    ``{key: (offset, G, local_level)}`` (offsets in numbers from the start; keys in order).

    Grids by :func:`count_grid`, values by :func:`band_values` at each entry's chosen level
    (exactly the calibration's on the host that runs it).

    Parameters
    ----------
    table : dict
        Calibrations ``{key: (ell, crossings)}`` keyed by :func:`table_key`.

    Returns
    -------
    values : ndarray of float64
        The concatenated blocks.
    index : dict
        ``{key: (offset, G, local_level)}``.
    """
    blocks, index, off = [], {}, 0
    for key in sorted(table):
        n, qk, reps = key
        grid = count_grid(n)
        cal = _calibration(n, qk / 1e12, reps, grid, *table[key])
        index[key] = (off, int(grid.size), float(cal.local_level))
        blocks.append(np.concatenate([grid.astype(float), cal.values]))
        off += 2 * grid.size
    return np.concatenate(blocks).astype(_F8), index


def simulate_calibration(n: int, q: float, reps: int) -> tuple[int, int]:
    """Run the calibration's simulation: ``(ell, crossings)``, the chosen level's index among
    the candidate levels (``-1``: none passes, Bonferroni) and its number of crossings in
    ``reps`` replicates. What :mod:`semi_core.audit._band_table` stores.

    Parameters
    ----------
    n : int
        Number of scores, >= 1.
    q : float
        Level of the band, in (0, 1).
    reps : int
        Number of simulated replicates.

    Returns
    -------
    ell : int
        Index of the chosen level (-1: none passes).
    crossings : int
        Its number of crossings.
    """
    from semi_core.stats.binomial import clopper_pearson_upper

    grid = count_grid(n)
    G = grid.size
    levels = _levels(q, G)
    bands = band_values(n, grid, levels)  # (G, L)
    eta = q / 10.0
    seed = np.random.SeedSequence([15, n, int(round(q * 1e12)), reps])
    first = simulate_min_crossing_level(n, grid, bands, reps, np.random.default_rng(seed))
    crossings = np.cumsum(np.bincount(first, minlength=levels.size + 1))[:levels.size]
    upper = clopper_pearson_upper(crossings, reps, eta)
    ok = np.nonzero(upper <= q - eta)[0]
    if ok.size == 0 or G == 1:
        return -1, 0
    ell = int(ok[-1])
    return ell, int(crossings[ell])


def table_key(n: int, q: float, reps: int) -> tuple[int, int, int]:
    """Key of :data:`semi_core.audit._band_table.BAND_TABLE`: ``(n, round(q 1e12), reps)``.

    Parameters
    ----------
    n : int
        Number of scores.
    q : float
        Level of the band.
    reps : int
        Number of replicates of the calibration.

    Returns
    -------
    tuple of 3 int
        The key.
    """
    return int(n), int(round(q * 1e12)), int(reps)


@functools.lru_cache(maxsize=256)
def _calibrate_cached(n: int, q: float, reps: int) -> BandCalibration:
    key = table_key(n, q, reps)
    hit = BAND_TABLE.get(key)
    if hit is None:
        embedded = poisson_band(n, q) if n >= EMBEDDED_FROM_N else None
        if embedded is not None:
            return embedded
        return _calibration(n, q, reps, count_grid(n), *simulate_calibration(n, q, reps))
    shipped = shipped_band(key)
    if shipped is None:  # the values file is missing: compute them (the same numbers)
        return _calibration(n, q, reps, count_grid(n), *hit)
    grid, values, level = shipped
    return _calibration(n, q, reps, grid, *hit, values=values, level=level)


# ---------------------------------------------------------------------------------------------
# Off-table sizes: the band from one calibration of the Gamma process, shipped for every N.
# ---------------------------------------------------------------------------------------------

#: Shares of ``q`` in the Poisson-embedded band: the upper crossing of the partial sums (low
#: counts), the lower crossing of the reverse sums (high counts), and the two tails of the total.
POISSON_SPLIT = (0.45, 0.45, 0.05, 0.05)
#: Smallest ``N`` given the embedded band (below, the normalisation costs more than the
#: simulation saves: its relative width is about :math:`3/\sqrt N`).
POISSON_MIN_N = 2_000
#: Smallest off-table ``N`` whose band is the embedded one: every off-table size the Gamma-process
#: table covers, so that a first call costs what a second does (no simulation). The price is the
#: embedding's allowance, against the simulated band of the same size (median eps_LB, Gaussian
#: mu = 1, 10 audits): 0.90x at 2,345 per side, 0.96x at 12,345, 0.98x at 123,457; more where the
#: bound is decided deep in a tail (the SeMI* bound of a noisy-mean game: 0.254 vs 0.338 at about
#: 2,000 per class, 0.553 vs 0.621 at 12,500, 1.046 vs 1.076 at 125,000). ``band`` is no longer
#: the default (``joint`` is above both at every size), and a first call no longer pays 0.2-0.5 s
#: for a sub-millisecond audit. Below ``POISSON_MIN_N`` the allowance is too wide (0.67x at 567)
#: and those sizes are simulated once per process.
EMBEDDED_FROM_N = POISSON_MIN_N
#: Truncation counts of the shipped calibrations (``K >= (N - 1) / 2 + 1`` is used).
POISSON_K = (5_000, 50_000, 500_000, 5_000_000)


def poisson_grid(k: int) -> np.ndarray:
    r"""Counts :math:`\mathcal S_K`: the lower half of :func:`count_grid` for :math:`N=2K+1` (every
    count up to ``BAND_DENSE``, then 3 % growth, ending at ``K``). The lower half of every
    :math:`\mathcal G(N)` with :math:`(N-1)/2<K` is in :math:`\mathcal S_K\cup\{(N-1)/2\}`.

    Parameters
    ----------
    k : int
        Truncation K, >= 0.

    Returns
    -------
    ndarray of int64
        The counts, ascending.
    """
    g = count_grid(2 * int(k) + 1)
    return g[g <= k]


def _gamma_quantiles(s: np.ndarray, levels, upper: bool) -> np.ndarray:
    from scipy.special import gammainccinv, gammaincinv

    a = (np.asarray(s, dtype=float) + 1.0)[:, None]
    x = np.atleast_1d(np.asarray(levels, dtype=float))[None, :]
    return gammainccinv(a, x) if upper else gammaincinv(a, x)


def simulate_poisson_calibration(k: int, q: float, reps: int = BAND_REPS) -> tuple:
    r"""Calibrate the two Gamma-process bands of :func:`poisson_band` for truncation ``k``.

    :math:`\Gamma_j=E_1+\dots+E_j` (i.i.d. Exp(1)), grid :math:`\mathcal S_K`
    (:func:`poisson_grid`). Event :math:`A=\{\Gamma_{s+1}\le a_s\ \forall s\}` with
    :math:`a_s=\Gamma^{-1}(1-x;s+1)` (upper quantile), :math:`A'=\{\Gamma_{s+1}\ge a'_s\
    \forall s\}` with :math:`a'_s=\Gamma^{-1}(x';s+1)`. Each level is chosen as in
    :func:`simulate_calibration` (64 candidates, largest with
    :math:`\mathrm{CP}_{\mathrm{upper}}(c_\ell,R,\eta)\le p-\eta`, :math:`\eta=p/10`) for its
    share :math:`p` of ``q`` (:data:`POISSON_SPLIT`); no :math:`N` enters. Seeded by
    ``(k, q, reps)``.

    Parameters
    ----------
    k : int
        Truncation K.
    q : float
        Level of the band, in (0, 1).
    reps : int
        Number of simulated replicates.

    Returns
    -------
    tuple
        ``(x_upper, x_lower)``: the two local levels (the Bonferroni level
        :math:`p/|\mathcal S_K|` where no candidate passes).
    """
    from semi_core.stats.binomial import clopper_pearson_upper

    grid = poisson_grid(k)
    G = grid.size
    inc = np.diff(np.concatenate([[0], grid + 1])).astype(float)
    rng = np.random.default_rng(np.random.SeedSequence([16, int(k), int(round(q * 1e12)), reps]))
    out = []
    shares = POISSON_SPLIT[:2]
    levels = [_levels(p * q, G) for p in shares]
    neg_up = -_gamma_quantiles(grid, levels[0], upper=True)  # (G, L): ascending along L
    low = _gamma_quantiles(grid, levels[1], upper=False)     # (G, L): ascending along L
    first_up = np.empty(reps, dtype=np.int64)
    first_lo = np.empty(reps, dtype=np.int64)
    for s0 in range(0, reps, 4096):
        r = min(4096, reps - s0)
        gam = np.cumsum(rng.standard_gamma(inc, size=(r, G)), axis=1).T.copy()  # (G, r)
        fu = np.full(r, _N_LEVELS, dtype=np.int64)
        fl = np.full(r, _N_LEVELS, dtype=np.int64)
        for j in range(G):
            # upper: level l uncrossed iff a_s(x_l) >= Gamma; lower: iff a'_s(x_l) <= Gamma
            np.minimum(fu, np.searchsorted(neg_up[j], -gam[j], side="right"), out=fu)
            np.minimum(fl, np.searchsorted(low[j], gam[j], side="right"), out=fl)
        first_up[s0:s0 + r] = fu
        first_lo[s0:s0 + r] = fl
    for first, p, lev in ((first_up, shares[0], levels[0]), (first_lo, shares[1], levels[1])):
        pq = p * q
        crossings = np.cumsum(np.bincount(first, minlength=_N_LEVELS + 1))[:_N_LEVELS]
        ok = np.nonzero(clopper_pearson_upper(crossings, reps, pq / 10.0) <= pq - pq / 10.0)[0]
        out.append(float(lev[ok[-1]]) if ok.size else pq / G)
    return tuple(out)


def poisson_band_values(n: int, q: float, k: int, x_upper: float, x_lower: float,
                        grid: np.ndarray | None = None, quantiles: tuple | None = None
                        ) -> np.ndarray:
    r"""Band values at :math:`\mathcal G(N)` from the Gamma-process calibration of truncation
    ``k`` (valid at level ``q`` when ``x_upper``, ``x_lower`` are calibrated for ``(k, q)``).

    Rényi: :math:`V_{(j)}=\Gamma_j/\Gamma_{N+1}`. With :math:`D=\Gamma^{-1}(p_3;N+1)`,
    :math:`U=\Gamma^{-1}(1-p_4;N+1)`, on :math:`A\cap A'\cap\{D\le\Gamma_{N+1}\le U\}`
    (probability :math:`\ge 1-q` by the union bound; :math:`A'` for the reverse sums
    :math:`\Gamma_{N+1}-\Gamma_{N-h}`, which are Gamma partial sums too):

    .. math::

        V_{(g+1)}\le \frac{a_{\lceil g\rceil_{\mathcal S}}}{D},\qquad
        V_{(N-h)}\le 1-\frac{a'_{\lfloor h\rfloor_{\mathcal S}}}{U},

    (:math:`\Gamma` increasing), and :math:`V_{(g+1)}\le V_{(g'+1)}` for :math:`g\le g'`, so
    :math:`b_g` is the smallest of these bounds over :math:`g'\ge g` (capped at 1).

    Parameters
    ----------
    n : int
        Number of scores N (the lower half must be within the truncation ``k``).
    q : float
        Level of the band, in (0, 1).
    k : int
        Truncation K of the calibration.
    x_upper, x_lower : float
        Calibrated local levels (:func:`simulate_poisson_calibration`).
    grid : ndarray of int, optional
        Grid :math:`\mathcal G(N)`; None = :func:`count_grid` of ``n``.
    quantiles : tuple of ndarray, optional
        Precomputed ``(S_K, a, a')`` (:func:`poisson_quantiles`); None = computed here.

    Returns
    -------
    ndarray, shape (G,)
        The band values in [0, 1].
    """
    from scipy.special import gammainccinv, gammaincinv

    grid = count_grid(n) if grid is None else grid
    if quantiles is None:
        s = poisson_grid(k)
        a = _gamma_quantiles(s, x_upper, upper=True)[:, 0]
        a_low = _gamma_quantiles(s, x_lower, upper=False)[:, 0]
    else:  # shipped: (S_K, a, a') as poisson_quantiles gives them
        s, a, a_low = quantiles
    d = float(gammaincinv(n + 1.0, POISSON_SPLIT[2] * q))
    u = float(gammainccinv(n + 1.0, POISSON_SPLIT[3] * q))
    b = np.ones(grid.size)
    lo = grid <= k
    b[lo] = a[np.searchsorted(s, grid[lo], side="left")] / d
    h = n - 1 - grid
    hi = h <= k
    b[hi] = np.minimum(b[hi], 1.0 - a_low[np.searchsorted(s, h[hi], side="right") - 1] / u)
    b = np.minimum(np.minimum.accumulate(b[::-1])[::-1], 1.0)
    return b


def poisson_quantiles(k: int, x_upper: float, x_lower: float) -> np.ndarray:
    """``S_K, a, a'`` of truncation ``k`` at local levels ``x_upper``, ``x_lower``, as one float64
    array (what ``_band_poisson.f8`` ships per calibration; see :func:`poisson_band_values`).

    Parameters
    ----------
    k : int
        Truncation K.
    x_upper, x_lower : float
        Local levels.

    Returns
    -------
    ndarray of float64, shape (3 |S_K|,)
        ``S_K``, ``a`` and ``a'`` concatenated.
    """
    s = poisson_grid(k)
    return np.concatenate([s.astype(float), _gamma_quantiles(s, x_upper, upper=True)[:, 0],
                           _gamma_quantiles(s, x_lower, upper=False)[:, 0]])


#: Shipped ``S_K, a, a'`` of every Gamma-process calibration (``analysis/band_poisson_table.py``):
#: raw little-endian float64 blocks at the offsets of ``POISSON_BLOCKS``.
POISSON_VALUES_FILE = Path(__file__).with_name("_band_poisson.f8")


def _shipped_poisson_quantiles(key) -> tuple | None:
    block_of = POISSON_BLOCKS.get(key)
    if block_of is None:
        return None
    off, G = block_of
    block = _read_block(POISSON_VALUES_FILE, off, G, 3, "analysis/band_poisson_table.py")
    if block is None:
        return None
    return block[0].astype(np.int64), block[1], block[2]


def poisson_band(n: int, q: float) -> BandCalibration | None:
    """The Poisson-embedded band for ``n`` scores at level ``q`` from the shipped Gamma-process
    calibration (:data:`semi_core.audit._band_poisson.POISSON_TABLE`); None when ``n`` is below
    :data:`POISSON_MIN_N`, beyond the largest truncation or ``q`` is not shipped.

    Parameters
    ----------
    n : int
        Number of scores.
    q : float
        Level of the band, in (0, 1).

    Returns
    -------
    BandCalibration or None
        The band, or None where no shipped calibration applies.
    """
    if n < POISSON_MIN_N:
        return None
    half = (n - 1) // 2
    k = next((kk for kk in POISSON_K if kk >= half + 1), None)
    levels = None if k is None else POISSON_TABLE.get((k, int(round(q * 1e12)), BAND_REPS))
    if levels is None:
        return None
    shipped = _shipped_poisson_quantiles((k, int(round(q * 1e12)), BAND_REPS))
    if shipped is None:
        grid = count_grid(n)
    else:  # count_grid(n) from S_K (no Python loop): its lower half is S_K below half, and half
        lo = shipped[0][: int(np.searchsorted(shipped[0], half, side="left"))]
        lo = np.append(lo, half)
        hi = n - 1 - lo[::-1]
        grid = np.concatenate([lo, hi[1:] if hi[0] == lo[-1] else hi])
    values = poisson_band_values(n, q, k, *levels, grid=grid, quantiles=shipped)
    return BandCalibration(n, q, grid, values, float(levels[0]), math.nan, q * 0.09,
                           BAND_REPS, "poisson-embedding")


def calibrate_band(n: int, failure_prob: float, *, reps: int = BAND_REPS) -> BandCalibration:
    r"""Calibrated equal-local-level band for ``n`` scores at simultaneous level ``failure_prob``.

    See the module docstring for the construction and its validity (level :math:`\le q`, the
    simulation error :math:`\eta=q/10` included). Cached per ``(n, failure_prob, reps)``.

    Parameters
    ----------
    n : int
        ``>= 1``.
    failure_prob : float
        :math:`q\in(0, 0.5]` (``epsilon_lower_bound`` uses :math:`q=\xi/2` per CDF).
    reps : int
        Simulation replicates, ``>= 1000``.

    Returns
    -------
    BandCalibration
    """
    n = check_int(n, "n", minimum=1)
    q = check_failure_prob(failure_prob)
    reps = check_int(reps, "reps", minimum=1000)
    return _calibrate_cached(n, float(q), reps)


def band_at_counts(cal: BandCalibration, counts) -> np.ndarray:
    r""":math:`\bar\alpha=b_{\lceil k\rceil_{\mathcal G}}` for counts ``k`` (1 where ``k >= N``).

    Parameters
    ----------
    cal : BandCalibration
        The band.
    counts : array_like of int
        Counts k >= 0.

    Returns
    -------
    ndarray
        The band value at each count (shape of ``counts``).
    """
    k = np.asarray(counts)
    idx = np.searchsorted(cal.grid, k, side="left")
    inside = idx < cal.grid.size
    return np.where(inside, cal.values[np.minimum(idx, cal.grid.size - 1)], 1.0)


def band_crossing_probability(n: int, grid, values) -> float:
    r"""Exact :math:`P(\exists g: V_{(g+1)}>b_g)` for ``n`` uniforms (reference, small ``n``).

    The count process :math:`C(t)=\#\{V_i\le t\}` is a Markov chain: from :math:`t` to
    :math:`t'`, :math:`C(t')-C(t)\sim\mathrm{Bin}(N-C(t),(t'-t)/(1-t))`. The band holds iff
    :math:`C(b_g)\ge g+1` at every grid point; the recursion carries the distribution of
    :math:`C` through the sorted :math:`b_g`, removing the mass below each constraint.
    :math:`O(|\mathcal G|N^2)`.

    Parameters
    ----------
    n : int
        Number of uniforms, >= 1.
    grid : array_like of int
        Grid counts.
    values : array_like
        Band values at the grid counts.

    Returns
    -------
    float
        The crossing probability in [0, 1].
    """
    from scipy.stats import binom  # lazy: reference only (scipy.stats is slow to import)

    n = check_int(n, "n", minimum=1)
    grid = np.asarray(grid, dtype=np.int64)
    b = np.asarray(values, dtype=float)
    order = np.argsort(b, kind="stable")
    p = np.zeros(n + 1)
    p[0] = 1.0
    t = 0.0
    j = np.arange(n + 1)
    for gi in order:
        tb = float(b[gi])
        if tb > t:
            frac = min(1.0, (tb - t) / (1.0 - t)) if t < 1 else 0.0
            new = np.zeros(n + 1)
            for c in range(n + 1):
                if p[c] == 0.0:
                    continue
                new[c:] += p[c] * binom.pmf(j[: n + 1 - c], n - c, frac)
            p = new
            t = tb
        p[: int(grid[gi]) + 1] = 0.0
    return float(1.0 - p.sum())


def rank_threshold_counts(member: np.ndarray, nonmember: np.ndarray, grid) -> tuple:
    r"""Thresholds :math:`\gamma_g=X_{(N_0-g)}` for counts ``grid`` and the counts there.

    Returns ``(gamma, le0, le1)``, each (B, G) with the thresholds ascending:
    ``le0`` :math:`=\#\{X\le\gamma\}`, ``le1`` :math:`=\#\{Y\le\gamma\}` (exact with ties).
    Rows are sorted (:math:`O(N\log N)`; NumPy's sort beats a many-kth partition), the counts
    found by binary search.

    Parameters
    ----------
    member : ndarray, shape (B, N1)
        Member scores of B problems.
    nonmember : ndarray, shape (B, N0)
        Non-member scores.
    grid : array_like of int, shape (G,)
        Counts g in 0..N0-1.

    Returns
    -------
    gamma, le0, le1 : ndarray, shape (B, G)
        The thresholds and the counts at or below them.
    """
    n0 = nonmember.shape[1]
    ranks = n0 - 1 - np.asarray(grid, dtype=np.int64)[::-1]
    # full sorts: NumPy's vectorised sort beats a many-kth partition by ~10x
    xs = np.sort(nonmember, axis=1)
    ys = np.sort(member, axis=1)
    gam = xs[:, ranks]
    le0 = count_at_or_below(xs, gam)
    le1 = count_at_or_below(ys, gam)
    return gam, le0, le1


def band_candidates(member: np.ndarray, nonmember: np.ndarray, xi: float) -> dict:
    r"""Candidate thresholds and band bounds for ``B`` audits (rows), each CDF at :math:`\xi/2`.

    Parameters
    ----------
    member, nonmember : ndarray, shapes (B, N1), (B, N0)
        Validated scores (higher = member).
    xi : float
        Total failure probability of the two bands.

    Returns
    -------
    dict
        ``threshold`` (B, G): :math:`\gamma_g=X_{(N_0-g)}`; ``alpha_hat``, ``beta_hat``: the
        empirical FPR :math:`\#\{X>\gamma\}/N_0` and FNR :math:`\#\{Y\le\gamma\}/N_1`;
        ``alpha_up``, ``beta_up``: the band bounds; ``cal0``, ``cal1``: the calibrations.
    """
    n1, n0 = member.shape[1], nonmember.shape[1]
    cal0 = calibrate_band(n0, xi / 2)
    cal1 = calibrate_band(n1, xi / 2)
    gam, le0, le1 = rank_threshold_counts(member, nonmember, cal0.grid)
    k0 = n0 - le0
    return {
        "threshold": gam, "alpha_hat": k0 / n0, "beta_hat": le1 / n1,
        "alpha_up": band_at_counts(cal0, k0), "beta_up": band_at_counts(cal1, le1),
        "cal0": cal0, "cal1": cal1,
    }
