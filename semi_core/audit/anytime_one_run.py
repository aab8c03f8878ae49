r"""Audit while you train: an anytime-valid one-run audit (:class:`AnytimeOneRun`).

A one-run audit (Steinke, Nasr & Jagielski 2023; :mod:`semi_core.audit.one_run`) grades the
canaries of one training run at the end. Here the canaries are graded as their scores arrive
(a Dirac canary right after its step, an input canary at a checkpoint), and a test
supermartingale (sequential_dp_auditing seed, §3: test martingales, betting, Ville's inequality)
turns the stream of graded guesses into a claim refutation and an :math:`\varepsilon` lower bound
that are valid **at every time simultaneously**: the run may be stopped the moment its claim is
refuted.

**Design.** :math:`m` canaries; canary :math:`i` is in the run iff :math:`S_i=+1`, with
:math:`S_1,\dots,S_m` i.i.d. uniform on :math:`\{-1,+1\}` and independent of everything else.
:math:`Y` is the whole transcript of the run (every iterate the scores are computed from, and the
auditor's own independent randomness). Canaries are graded in an order fixed in advance (canary
index / insertion step). The guess :math:`T_i\in\{-1,0,+1\}` (0: abstain) of canary :math:`i`
is a function of :math:`Y` and of the earlier bits :math:`S_{<i}` only: here a function of the
scores alone (thresholds fixed in advance, or quantiles of the earlier canaries' scores). The
claim is ":math:`M` is :math:`(\varepsilon,\delta)`-DP for adding or removing one canary".
Let :math:`\mathcal F_{i}=\sigma(Y,S_{\le i})`, :math:`q=e^\varepsilon/(1+e^\varepsilon)` and
:math:`Z_i=\mathbb 1\{T_i=S_i\}` on guessed canaries.

**Lemma 1 (conditional guess bound).** Let :math:`\pi_i=P[S_i=+1\mid\mathcal F_{i-1}]` and
:math:`\Delta_i=(\pi_i-q)_++(1-\pi_i-q)_+` (an :math:`\mathcal F_{i-1}`-measurable excess).
On :math:`\{T_i\ne0\}`, :math:`P[Z_i=1\mid\mathcal F_{i-1}]\le q+\Delta_i`; with
:math:`\delta=0`, :math:`\Delta_i=0`; in general :math:`E[\Delta_i]\le\delta/(1+e^\varepsilon)`.

*Proof.* Given :math:`S_{<i}=s`, :math:`Y` has density :math:`p_\pm(y)=E_{S_{>i}}\,
p_M(y\mid s,\pm1,S_{>i})` under :math:`S_i=\pm1` (the later bits are independent of
:math:`S_i`, so both are mixtures with the same weights). The hockey-stick divergence
:math:`H_\gamma(P\|Q)=\int(p-\gamma q)_+` is jointly convex and
:math:`H_{e^\varepsilon}(M(s,+1,t)\|M(s,-1,t))\le\delta` for every :math:`t` (DP), so
:math:`H_{e^\varepsilon}(P_+\|P_-)\le\delta` and likewise in the other order. Bayes:
:math:`\pi_i=p_+/(p_++p_-)`; with :math:`\delta=0`, :math:`p_+\le e^\varepsilon p_-` pointwise
and :math:`\pi_i\le q` (SymPy: ``anytime_posterior_max``), symmetrically :math:`1-\pi_i\le q`.
In general :math:`(\pi_i-q)\tfrac12(p_++p_-)=\tfrac12(1-q)(p_+-e^\varepsilon p_-)`
(``anytime_excess_density``), so :math:`E[(\pi_i-q)_+\mid S_{<i}]=\tfrac12(1-q)
H_{e^\varepsilon}(P_+\|P_-)\le\delta/(2(1+e^\varepsilon))`, and the other side alike. The guess
is :math:`\mathcal F_{i-1}`-measurable, so :math:`P[Z_i=1\mid\mathcal F_{i-1}]` is
:math:`\pi_i` (guess in) or :math:`1-\pi_i` (guess out), each :math:`\le q+\Delta_i`. An order or
a rule that depends on the labels of later canaries, or an inclusion probability other than
1/2, breaks the lemma (the assumption every result names: ``"one-run-bernoulli-half"``). The
run must not read the auditor's labels (stopping it is allowed: the canaries after the stop are
never graded). :math:`\square`

**Wealth.** For :math:`r\in[q,1]` the likelihood ratio of :math:`Z_i\sim\mathrm{Bern}(r)`
against :math:`\mathrm{Bern}(q)` is the bet :math:`1+\lambda_r(Z_i-q)`,
:math:`\lambda_r=(r-q)/(q(1-q))\in[0,1/q]` (``anytime_bet``); abstentions bet nothing. The
wealth is the uniform mixture over :math:`r` (a function of the counts: :math:`k` correct of
:math:`n` guesses),

.. math::

    K_n=\frac1{1-q}\int_q^1\Big(\frac rq\Big)^k\Big(\frac{1-r}{1-q}\Big)^{n-k}dr
    =\frac{B(k+1,n-k+1)\,I_{1-q}(n-k+1,k+1)}{(1-q)\,q^k(1-q)^{n-k}}

(:func:`semi_core.audit.sequential.semi_stream.log_mixture_wealth`, the one home of this
closed form). :math:`E[K_i-K_{i-1}\mid\mathcal F_{i-1}]\le K_{i-1}\Delta_i/q`.

**Theorem (anytime validity).** Reject the claim at the first time :math:`K_n\ge1/a`. If the run
is :math:`(\varepsilon,\delta)`-DP, :math:`P[\exists n: K_n\ge1/a]\le a+m\delta e^{-\varepsilon}`.
So the test uses :math:`a=\xi-m\delta e^{-\varepsilon}` and is valid at level :math:`\xi` over all
times (``n_canaries`` = :math:`m`, the canaries of the run, is needed when :math:`\delta>0`).

*Proof.* :math:`\tau=\inf\{n:K_n\ge1/a\}`; on :math:`\{\tau\ge i\}`, :math:`K_{i-1}<1/a`, so
:math:`E[K_{\tau\wedge n}]\le1+\sum_{i\le n}E[\mathbb 1\{\tau\ge i\}K_{i-1}\Delta_i/q]\le
1+\frac1{aq}\sum_{i\le m}E\Delta_i\le1+\frac{m\delta e^{-\varepsilon}}a`
(``anytime_delta_slack``), and Markov's inequality gives :math:`P[\tau\le n]\le
a\,E[K_{\tau\wedge n}]\le a+m\delta e^{-\varepsilon}`; let :math:`n\to m`. With
:math:`\delta=0`, :math:`K` is a test supermartingale and this is Ville's inequality.
:math:`\square` (Steinke et al.'s fixed-time bound pays :math:`2m\delta\alpha` instead, with the
binomial :math:`\alpha` of their Thm 5.2; the anytime slack is :math:`m\delta e^{-\varepsilon}`.)

**The lower bound (fixed sequence over a grid).** The grid
:math:`\varepsilon_1<\dots<\varepsilon_J` (fixed in advance; it always holds the claimed
:math:`\varepsilon`) is tested in order: :math:`\varepsilon_{j+1}` counts as rejected only at a
time at or after :math:`\varepsilon_j` was, and
:math:`\underline\varepsilon_n=\varepsilon_j` for the last :math:`j` rejected by time
:math:`n` (0 before :math:`\varepsilon_1`). If the run is :math:`(\varepsilon^*,\delta)`-DP, let
:math:`j^*` index the smallest grid point :math:`\ge\varepsilon^*`; :math:`H_0(\varepsilon_{j^*})`
is true and :math:`\{\exists n:\underline\varepsilon_n>\varepsilon^*\}` (and the claim's false
refutation when :math:`\varepsilon^*\le` claim) is contained in ":math:`\varepsilon_{j^*}` is
ever rejected", of probability :math:`\le\xi`: one test, no union over the grid or over time,
and no monotonicity of :math:`K` in :math:`\varepsilon` is needed (it does not hold). Grid
points whose :math:`\delta` slack :math:`m\delta e^{-\varepsilon}` exceeds :math:`\xi/2` are
left out of the grid in advance (dropping grid points keeps the argument); the claim is kept
while its slack is below :math:`\xi`. ``refuted`` is :math:`\underline\varepsilon_n\ge` claim.

**Guess rule** (the object's, so it cannot look at labels): ``threshold=(low, high)`` fixed in
advance (guess in at :math:`s\ge` high, out at :math:`s\le` low) or ``guess_fraction=f``: the
thresholds are the :math:`f/2` and :math:`1-f/2` quantiles (``inverted_cdf``) of the scores of
the canaries before the last refit point (every ``refit_every`` canaries, counted from the
first: the same guesses whatever the batching), abstaining while fewer than ``warmup`` scores
precede it; a score tied with both thresholds abstains.

Monte Carlo checks: ``tests/audit/test_anytime_one_run.py`` (the ever-crossing rate of runs
exactly at the claim: randomised response with all scores tied, and Gaussian canaries at
:math:`(\varepsilon,\delta)`), ``analysis/anytime_one_run.py`` (validity, price of anytime
validity against :func:`semi_core.audit.one_run.one_run_epsilon`, stopping times).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy.special import betaln, expit

from semi_core._table import ResultDisplay, Table
from semi_core._validation import (
    check_delta,
    check_failure_prob,
    check_int,
    check_probability,
    check_real,
    check_scores,
)
from semi_core.audit.one_run import BALANCE_LEVEL, one_run_epsilon

__all__ = ["AnytimeOneRun", "ClaimRefutedError", "DEFAULT_GRID", "delta_slack",
           "ASSUMPTION", "CANARY_KINDS", "gaussian_mu_at", "simulate_canaries",
           "simulate_anytime", "validity_table", "price_table", "stopping_table",
           "markdown_table", "VALIDITY_CELLS", "PRICE_CELLS", "STOPPING_CELLS"]

#: Default epsilon grid of the lower bound (0.05 steps up to 20; the claim is added).
DEFAULT_GRID = tuple(round(0.05 * j, 2) for j in range(1, 401))
#: The design assumption every result names (as the fixed-time one-run bounds do).
ASSUMPTION = "one-run-bernoulli-half"


class ClaimRefutedError(RuntimeError):
    """Raised by the training-loop callbacks when the claimed epsilon is refuted."""


def delta_slack(n_canaries: int, delta: float, epsilon) -> np.ndarray:
    r"""The Ville slack :math:`m\delta e^{-\varepsilon}` of the anytime test with :math:`\delta`.

    .. math:: P[\exists n: K_n\ge 1/a]\le a+m\,\delta\,e^{-\varepsilon}

    Parameters
    ----------
    n_canaries : int
        :math:`m`, the canaries of the whole run (>= 1).
    delta : float
        In [0, 1).
    epsilon : float or array
        The tested epsilon(s), >= 0.

    Returns
    -------
    ndarray
        The slack per epsilon.
    """
    m = check_int(n_canaries, "n_canaries", minimum=1)
    d = check_delta(delta)
    return m * d * np.exp(-np.asarray(epsilon, dtype=float))


class AnytimeOneRun(ResultDisplay):
    r"""Anytime-valid one-run audit of a claimed :math:`(\varepsilon,\delta)` (module docstring).

    Parameters
    ----------
    claimed_epsilon : float
        The claim tested, finite and >= 0.
    delta : float
        In [0, 1). With ``delta > 0``, ``n_canaries`` is required.
    failure_prob : float
        :math:`\xi\in(0,0.5]`: the probability that the bound ever exceeds the truth (or a
        true claim is ever refuted), over the whole run.
    n_canaries : int, optional
        Canaries in the run (:math:`m`, fixed in advance; required when ``delta > 0``); more
        canaries than this are refused.
    guess_fraction : float
        Fraction :math:`f\in(0,1]` of canaries guessed (half "in", half "out") by the quantile
        rule; ignored with ``threshold``.
    threshold : (low, high), optional
        Fixed thresholds (``low < high``): guess "in" at ``score >= high``, "out" at
        ``score <= low``, on the oriented score (``-score`` when ``higher_is_member=False``).
    warmup : int
        Canaries not guessed at the start of the quantile rule (>= 1).
    refit_every : int
        Quantile refit period in canaries (>= 1).
    epsilon_grid : sequence of float, optional
        Grid of the lower bound (default :data:`DEFAULT_GRID`); the claim is added.
    higher_is_member : bool
        ``False`` for losses (lower score = member).
    """

    _repr_fields = ("claimed_epsilon", "epsilon_lower_bound", "refuted", "canaries_seen",
                    "guesses", "correct", "delta", "failure_prob")

    def __init__(self, claimed_epsilon: float, *, delta: float = 0.0, failure_prob: float = 0.05,
                 n_canaries: int | None = None, guess_fraction: float = 0.2,
                 threshold: Sequence[float] | None = None, warmup: int = 10,
                 refit_every: int = 10, epsilon_grid: Sequence[float] | None = None,
                 higher_is_member: bool = True):
        c = check_real(claimed_epsilon, "claimed_epsilon")
        if c < 0:
            raise ValueError(f"claimed_epsilon must be finite and >= 0, got {c}")
        self.claimed_epsilon = c
        self.delta = check_delta(delta)
        self.failure_prob = check_failure_prob(failure_prob)
        if n_canaries is None:
            if self.delta > 0:
                raise ValueError("n_canaries (the canaries of the whole run, fixed in advance) "
                                 "is required when delta > 0: the delta term of the anytime "
                                 "test is n_canaries * delta * e^-eps")
            self.n_canaries = None
        else:
            self.n_canaries = check_int(n_canaries, "n_canaries", minimum=1)
        self.guess_fraction = check_probability(guess_fraction, "guess_fraction",
                                                high_open=False)
        if threshold is not None:
            t = np.asarray(threshold, dtype=float)
            if t.shape != (2,) or not np.isfinite(t).all() or not t[0] < t[1]:
                raise ValueError(f"threshold must be a pair (low, high) of finite numbers with "
                                 f"low < high, got {threshold!r}")
            self.threshold: tuple[float, float] | None = (float(t[0]), float(t[1]))
        else:
            self.threshold = None
        self.warmup = check_int(warmup, "warmup", minimum=1)
        self.refit_every = check_int(refit_every, "refit_every", minimum=1)
        if not isinstance(higher_is_member, bool | np.bool_):
            raise TypeError(f"higher_is_member must be a bool, got {type(higher_is_member)}")
        self.higher_is_member = bool(higher_is_member)
        grid = DEFAULT_GRID if epsilon_grid is None else epsilon_grid
        g = np.asarray(grid, dtype=float).reshape(-1)
        if g.size == 0 or not np.isfinite(g).all() or (g <= 0).any():
            raise ValueError("epsilon_grid must be a non-empty sequence of finite numbers > 0")
        g = np.unique(np.r_[g, c]) if c > 0 else np.unique(g)
        if c == 0:
            g = np.unique(np.r_[0.0, g])
        self._build_grid(g)
        self.assumption = ASSUMPTION
        self._scores: list[np.ndarray] = []  # every score seen (oriented: higher = member)
        self._lo = self._hi = math.nan       # quantile thresholds of the current refit block
        self._block_start = -1
        self.canaries_seen = 0
        self.guesses = 0
        self.correct = 0
        self.members = 0
        self._cur = 0                        # grid points [0, _cur) rejected (fixed sequence)
        self._design_error = ""

    # -- set-up ---------------------------------------------------------------------------------
    def _build_grid(self, g: np.ndarray) -> None:
        xi = self.failure_prob
        slack = (delta_slack(self.n_canaries, self.delta, g) if self.n_canaries is not None
                 else np.zeros_like(g))
        claim_slack = float(slack[np.searchsorted(g, self.claimed_epsilon)])
        if claim_slack >= xi:
            raise ValueError(
                f"n_canaries * delta * e^-claimed_epsilon = {claim_slack:.3g} >= failure_prob = "
                f"{xi:g}: the delta term of the anytime test leaves no level to test the claim; "
                "use fewer canaries, a smaller delta or a larger failure_prob")
        keep = (slack <= xi / 2) | (g == self.claimed_epsilon)
        self.epsilon_grid = g[keep]
        self._level = xi - slack[keep]                     # a(eps) = xi - m delta e^-eps
        self._log_thr = -np.log(self._level)
        self._q = expit(self.epsilon_grid)
        if np.any(self._q >= 1.0):
            raise ValueError("epsilon_grid values above ~36 make e^eps/(1+e^eps) = 1 in double "
                             "precision; no guessing game can reject them")
        self._claim_idx = int(np.flatnonzero(self.epsilon_grid == self.claimed_epsilon)[0])
        self.rejected_at = np.full(self.epsilon_grid.size, -1, dtype=np.int64)

    # -- the guess rule -------------------------------------------------------------------------
    def _guesses(self, s: np.ndarray) -> np.ndarray:
        """+1 / -1 / 0 per new canary, from scores only (never labels)."""
        if self.threshold is not None:
            lo, hi = self.threshold
            return np.where(s >= hi, 1, np.where(s <= lo, -1, 0)).astype(np.int8)
        out = np.zeros(s.size, dtype=np.int8)
        start = self.canaries_seen
        R, f = self.refit_every, self.guess_fraction
        i = 0
        while i < s.size:
            block = ((start + i) // R) * R                 # last refit point (global index)
            end = min(s.size, block + R - start)
            if block >= self.warmup:                       # abstain before `warmup` scores
                if block != self._block_start:
                    past = np.concatenate(self._scores + [s[:max(0, block - start)]])[:block]
                    self._lo, self._hi = (float(v) for v in np.quantile(
                        past, [f / 2, 1 - f / 2], method="inverted_cdf"))
                    self._block_start = block
                seg, lo, hi = s[i:end], self._lo, self._hi
                out[i:end] = np.where((seg >= hi) & (seg > lo), 1,
                                      np.where((seg <= lo) & (seg < hi), -1, 0))
            i = end
        return out

    # -- the stream -----------------------------------------------------------------------------
    def update(self, scores, member) -> AnytimeOneRun:
        """Grade the canaries scored since the last call; return ``self``.

        Parameters
        ----------
        scores : array-like of float
            One score per new canary, in the order fixed in advance (no NaN).
        member : array-like of bool or 0/1
            Whether each canary is in the run (the auditor's labels).

        Returns
        -------
        AnytimeOneRun
            ``self``, with ``epsilon_lower_bound`` and ``refuted`` updated.
        """
        from semi_core._io import labels_to_bool

        if np.size(scores) == 0 and np.size(member) == 0:
            return self                                    # no canary graded this time
        s = check_scores(np.atleast_1d(scores), "scores").astype(float, copy=False)
        y = labels_to_bool(np.atleast_1d(member), "member")
        if y.shape != s.shape:
            raise ValueError(f"member must have one label per score: {s.size} scores, "
                             f"{y.size} labels")
        if self.n_canaries is not None and self.canaries_seen + s.size > self.n_canaries:
            raise ValueError(f"n_canaries = {self.n_canaries} declared, but "
                             f"{self.canaries_seen + s.size} canaries were graded; the delta "
                             "term (and the design) holds for the declared number only")
        if not self.higher_is_member:
            s = -s
        if self._design_error:
            raise ValueError(self._design_error)
        n1 = self.members + int(y.sum())
        n_all = self.canaries_seen + s.size
        # anytime-valid balance check at every prefix: the uniform-prior mixture martingale of
        # Bernoulli(p) against Bernoulli(1/2), 2^n B(n1 + 1, n0 + 1) (Ville: a fair design is
        # refused with probability <= BALANCE_LEVEL over the whole run, whatever the batching)
        c1 = self.members + np.cumsum(y)
        cn = self.canaries_seen + np.arange(1, s.size + 1)
        log_bal = cn * math.log(2.0) + betaln(c1 + 1.0, cn - c1 + 1.0)
        bad = np.flatnonzero(log_bal >= -math.log(BALANCE_LEVEL))
        if bad.size:
            i = int(bad[0])
            self._design_error = (
                f"{int(c1[i])} members of the first {int(cn[i])} canaries are incompatible with "
                f"Bernoulli(1/2) inclusion (anytime balance test at level {BALANCE_LEVEL:g}); the "
                "anytime one-run audit, like the fixed-time one (Steinke, Nasr & Jagielski "
                "2023), holds only for canaries included independently with probability 1/2")
            raise ValueError(self._design_error)
        t = self._guesses(s)
        guessed = t != 0
        z = ((t == 1) & y) | ((t == -1) & ~y)
        pos = np.flatnonzero(guessed)                      # in-batch positions of guesses
        kc = self.correct + np.cumsum(z[pos])
        nc = self.guesses + np.arange(1, pos.size + 1)
        self._advance(kc, nc, self.canaries_seen + pos + 1)
        self._scores.append(s)
        self.guesses += int(pos.size)
        self.correct += int(z[pos].sum())
        self.members = n1
        self.canaries_seen = n_all
        return self

    def _advance(self, kc: np.ndarray, nc: np.ndarray, when: np.ndarray) -> None:
        """Fixed-sequence rejection over the grid at the guessed positions: grid point
        ``_cur`` is looked for from the position where its predecessor was rejected, in windows
        growing 4x (a few evaluations per rejected grid point, one pass for the last)."""
        from semi_core.audit.sequential.semi_stream import log_mixture_wealth  # lazy: numba

        J, N = self.epsilon_grid.size, kc.size
        t = 0                                              # predecessors rejected by position t
        while self._cur < J and N:
            q, thr = self._q[self._cur], self._log_thr[self._cur]
            if -nc[-1] * math.log(q) < thr:                # K_n <= q^-n: cannot be rejected yet
                return
            hit, w = -1, 16
            while t < N:
                e = min(N, t + w)
                h = np.flatnonzero(log_mixture_wealth(kc[t:e], nc[t:e], q) >= thr)
                if h.size:
                    hit = t + int(h[0])
                    break
                t, w = e, 4 * w
            if hit < 0:
                return
            t = hit
            self.rejected_at[self._cur] = int(when[hit])
            self._cur += 1

    # -- results --------------------------------------------------------------------------------
    @property
    def epsilon_lower_bound(self) -> float:
        """The anytime-valid lower bound: the last grid epsilon rejected in sequence (0 if
        none)."""
        return float(self.epsilon_grid[self._cur - 1]) if self._cur > 0 else 0.0

    @property
    def refuted(self) -> bool:
        """Whether the claimed epsilon is rejected (``epsilon_lower_bound >= claim``)."""
        return self._cur > self._claim_idx

    @property
    def refuted_at(self) -> int | None:
        """Canaries graded when the claim was refuted (``None`` while it stands)."""
        return int(self.rejected_at[self._claim_idx]) if self.refuted else None

    @property
    def log_wealth_at_claim(self) -> float:
        r""":math:`\log K_n` of the test at the claimed epsilon now."""
        from semi_core.audit.sequential.semi_stream import log_mixture_wealth  # lazy: numba

        return float(log_mixture_wealth(self.correct, self.guesses,
                                        self._q[self._claim_idx]))

    def fixed_time_epsilon(self) -> float:
        """The fixed-time one-run bound (Steinke et al. Thm 5.2,
        :func:`semi_core.audit.one_run.one_run_epsilon`) on the same canaries and guesses, as if
        this time had been fixed in advance: the reference for the price of anytime validity.

        Returns
        -------
        float
            The fixed-time bound, >= 0 (0 before any canary).
        """
        if self.canaries_seen == 0:
            return 0.0
        m = self.n_canaries if self.n_canaries is not None else self.canaries_seen
        return one_run_epsilon(m, self.guesses, self.correct, delta=self.delta,
                               failure_prob=self.failure_prob)

    def to_dict(self) -> dict:
        """JSON-safe state: the bound, the verdict, the counts and the assumption.

        Returns
        -------
        dict
            Claimed and certified epsilon, verdict, counts and assumption.
        """
        return {"claimed_epsilon": self.claimed_epsilon,
                "epsilon_lower_bound": self.epsilon_lower_bound, "refuted": self.refuted,
                "refuted_at": self.refuted_at, "canaries_seen": self.canaries_seen,
                "guesses": self.guesses, "correct": self.correct, "members": self.members,
                "delta": self.delta, "failure_prob": self.failure_prob,
                "n_canaries": self.n_canaries, "log_wealth_at_claim": self.log_wealth_at_claim,
                "guess_rule": ("threshold" if self.threshold is not None
                               else f"quantile fraction {self.guess_fraction:g}"),
                "assumption": self.assumption}

    def summary(self) -> Table:
        """One row per quantity of :meth:`to_dict`.

        Returns
        -------
        Table
            One row per quantity.
        """
        rows = [{"quantity": k, "value": v} for k, v in self.to_dict().items()]
        return Table(rows, title=repr(self))


# -- Monte Carlo: simulated runs (tests, analysis/anytime_one_run.py, the report section) ---------

#: Simulated canary mechanisms: randomised response (scores +-1, all tied) and Gaussian.
CANARY_KINDS = ("rr", "gaussian")


def gaussian_mu_at(epsilon: float, delta: float) -> float:
    r"""The :math:`\mu` of the Gaussian canary that is exactly :math:`(\varepsilon,\delta)`-DP:
    :math:`\delta_\mu(\varepsilon)=\delta` (:func:`semi_core.stats.gdp.gdp_delta`, increasing in
    :math:`\mu`; solved by bisection to 1e-12).

    Parameters
    ----------
    epsilon : float
        >= 0.
    delta : float
        In (0, 1).

    Returns
    -------
    float
    """
    from scipy.optimize import brentq  # lazy: slow import

    from semi_core.stats.gdp import gdp_delta

    e = check_real(epsilon, "epsilon")
    d = check_probability(delta, "delta")
    if e < 0:
        raise ValueError(f"epsilon must be >= 0, got {e}")
    hi = 1.0
    while float(gdp_delta(e, hi)) < d:
        hi *= 2.0
        if hi > 1e6:
            raise ValueError(f"no mu reaches delta = {d:g} at epsilon = {e:g}")
    return float(brentq(lambda mu: float(gdp_delta(e, mu)) - d, 1e-12, hi, xtol=1e-12))


def simulate_canaries(kind: str, m: int, epsilon: float, delta: float,
                      rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    r"""Scores and labels of ``m`` canaries of one simulated run.

    ``"rr"``: :math:`s_i=\pm1`, equal to the bit with probability
    :math:`e^\varepsilon/(1+e^\varepsilon)` (exactly :math:`\varepsilon`-DP, every score tied);
    ``"gaussian"``: :math:`s_i\sim N(\mu\,\mathbb 1\{S_i=+1\},1)` with :math:`\mu` from
    :func:`gaussian_mu_at` (exactly :math:`(\varepsilon,\delta)`-DP). Bits fair and independent.

    Parameters
    ----------
    kind : {"rr", "gaussian"}
    m : int
        Canaries (>= 1).
    epsilon, delta : float
        The mechanism's privacy (``delta`` used by ``"gaussian"``).
    rng : numpy.random.Generator

    Returns
    -------
    scores, member : ndarray
    """
    if kind not in CANARY_KINDS:
        raise ValueError(f"kind must be one of {CANARY_KINDS}, got {kind!r}")
    m = check_int(m, "m", minimum=1)
    member = rng.random(m) < 0.5
    if kind == "rr":
        flip = rng.random(m) < 1.0 - float(expit(check_real(epsilon, "epsilon")))
        return np.where(member ^ flip, 1.0, -1.0), member
    mu = gaussian_mu_at(epsilon, delta)
    return rng.standard_normal(m) + mu * member, member


def simulate_anytime(kind: str, *, true_epsilon: float, claimed_epsilon: float, delta: float,
                     n_canaries: int, runs: int, seed=0, failure_prob: float = 0.05,
                     batch: int | None = None, compare_fixed: bool = True,
                     **audit_kwargs) -> dict:
    r"""``runs`` simulated runs of :func:`simulate_canaries` audited by :class:`AnytimeOneRun`.

    Parameters
    ----------
    kind : {"rr", "gaussian"}
        The simulated mechanism.
    true_epsilon : float
        The mechanism's epsilon (at ``delta``).
    claimed_epsilon, delta, failure_prob : float
        The audited claim.
    n_canaries : int
        Canaries per run.
    runs : int
        Simulated runs (each seeded by a child of ``SeedSequence(seed)``).
    seed : int or numpy.random.SeedSequence
        Root seed.
    batch : int, optional
        Canaries per :meth:`AnytimeOneRun.update` (default: the whole run at once; the result
        does not depend on it).
    compare_fixed : bool
        Also compute the fixed-time bound (:meth:`AnytimeOneRun.fixed_time_epsilon`; NaN
        otherwise).
    **audit_kwargs
        Passed to :class:`AnytimeOneRun`.

    Returns
    -------
    dict
        Per run: ``bound`` (final, = largest ever), ``refuted_at`` (canaries, -1: never),
        ``fixed_time`` (Steinke et al.'s bound at the end on the same guesses); and
        ``ever_above_truth`` (fraction of runs whose bound ever exceeds ``true_epsilon``);
        ``refused_designs``: runs whose labels the balance check refused (a fair design is
        refused with probability at most :data:`~semi_core.audit.one_run.BALANCE_LEVEL`; such a
        run keeps the bound it had before the refused batch).
    """
    from semi_core._rng import as_seed_sequence
    from semi_core._validation import check_work

    runs = check_int(runs, "runs", minimum=1)
    m = check_int(n_canaries, "n_canaries", minimum=1)
    b = m if batch is None else check_int(batch, "batch", minimum=1)
    check_work(f"the anytime one-run simulation ({runs} runs x {m} canaries)",
               nbytes=64.0 * m, seconds=runs * (2e-3 + 2e-6 * m) * max(1.0, m / b / 50),
               hint="lower runs or n_canaries")
    kids = as_seed_sequence(seed).spawn(runs)
    bound = np.empty(runs)
    fixed = np.empty(runs)
    stop = np.full(runs, -1, dtype=np.int64)
    refused = 0
    for i, ss in enumerate(kids):
        rng = np.random.Generator(np.random.PCG64(ss))
        s, y = simulate_canaries(kind, m, true_epsilon, delta, rng)
        a = AnytimeOneRun(claimed_epsilon, delta=delta, failure_prob=failure_prob,
                          n_canaries=m if delta > 0 else None, **audit_kwargs)
        try:
            for j in range(0, m, b):
                a.update(s[j:j + b], y[j:j + b])
        except ValueError:
            if not a._design_error:
                raise
            refused += 1                                   # a fair design refused (<= 1e-3)
        bound[i] = a.epsilon_lower_bound
        fixed[i] = a.fixed_time_epsilon() if compare_fixed else math.nan
        stop[i] = -1 if a.refuted_at is None else a.refuted_at
    return {"kind": kind, "true_epsilon": float(true_epsilon),
            "claimed_epsilon": float(claimed_epsilon), "delta": float(delta),
            "n_canaries": m, "runs": runs, "failure_prob": float(failure_prob),
            "bound": bound, "fixed_time": fixed, "refuted_at": stop,
            "ever_above_truth": float(np.mean(bound > true_epsilon)),
            "refuted_rate": float(np.mean(stop >= 0)), "refused_designs": refused}


# -- the three tables (analysis/anytime_one_run.py, the report section, the slow tests) ------------

#: Validity cells: (kind, epsilon, delta), the mechanism exactly at the claim.
VALIDITY_CELLS = (("rr", 0.5, 0.0), ("rr", 1.0, 0.0), ("rr", 2.0, 0.0), ("rr", 4.0, 0.0),
                  ("gaussian", 1.0, 1e-5), ("gaussian", 2.0, 1e-5), ("gaussian", 1.0, 1e-4))
#: Price-of-anytime cells: (kind, true epsilon, delta); the claim (20) is never refuted.
PRICE_CELLS = (("rr", 1.0, 0.0), ("rr", 2.0, 0.0), ("rr", 4.0, 0.0), ("rr", 8.0, 0.0),
               ("gaussian", 4.0, 1e-5), ("gaussian", 8.0, 1e-5))
#: Stopping cells: (kind, true epsilon, claimed epsilon, delta).
STOPPING_CELLS = (("rr", 8.0, 2.0, 0.0), ("rr", 4.0, 2.0, 0.0), ("rr", 2.0, 1.0, 0.0),
                  ("gaussian", 8.0, 2.0, 1e-5), ("gaussian", 6.0, 2.0, 1e-5))


def validity_table(*, runs: int = 1000, n_canaries: int = 1000, failure_prob: float = 0.05,
                   seed=0, cells=VALIDITY_CELLS) -> list[dict]:
    r"""Rate of runs whose anytime bound *ever* exceeds the truth (and of runs refuting the
    true claim, the stronger event), mechanism exactly at the claim, with the two-sided 95 %
    Clopper--Pearson interval of the refutation rate; ``ok``: its lower end is
    :math:`\le\xi`.

    Parameters
    ----------
    runs, n_canaries : int
        Runs per cell and canaries per run.
    failure_prob : float
    seed : int or SeedSequence
    cells : sequence of (kind, epsilon, delta)

    Returns
    -------
    list of dict
    """
    from semi_core.stats.binomial import clopper_pearson_lower, clopper_pearson_upper

    rows = []
    for c, (kind, e, d) in enumerate(cells):
        out = simulate_anytime(kind, true_epsilon=e, claimed_epsilon=e, delta=d,
                               n_canaries=n_canaries, runs=runs, seed=np.random.SeedSequence([int(seed), c]),
                               failure_prob=failure_prob, compare_fixed=False)
        k = int(round(out["refuted_rate"] * runs))
        rows.append({"canaries": kind, "epsilon": e, "delta": d, "runs": runs,
                     "m": n_canaries, "ever_above_truth": out["ever_above_truth"],
                     "refuted_true_claim": out["refuted_rate"],
                     "ci_low": float(clopper_pearson_lower(k, runs, 0.025)),
                     "ci_high": float(clopper_pearson_upper(k, runs, 0.025)),
                     "failure_prob": failure_prob, "refused": out["refused_designs"],
                     "ok": bool(clopper_pearson_lower(k, runs, 0.025) <= failure_prob)})
    return rows


def price_table(*, runs: int = 1000, n_canaries: int = 1000, failure_prob: float = 0.05,
                seed=0, cells=PRICE_CELLS) -> list[dict]:
    """Final anytime bound vs the fixed-time one-run bound (Steinke et al.) on the same
    canaries and guesses: means over runs and the mean ratio.

    Parameters
    ----------
    runs, n_canaries : int
    failure_prob : float
    seed : int or SeedSequence
    cells : sequence of (kind, true epsilon, delta)

    Returns
    -------
    list of dict
    """
    rows = []
    for c, (kind, e, d) in enumerate(cells):
        out = simulate_anytime(kind, true_epsilon=e, claimed_epsilon=20.0, delta=d,
                               n_canaries=n_canaries, runs=runs, seed=np.random.SeedSequence([int(seed), 100 + c]),
                               failure_prob=failure_prob)
        b, f = out["bound"], out["fixed_time"]
        rows.append({"canaries": kind, "true_epsilon": e, "delta": d, "runs": runs,
                     "m": n_canaries, "anytime": float(b.mean()), "fixed_time": float(f.mean()),
                     "ratio": float(b.mean() / f.mean()) if f.mean() > 0 else math.nan,
                     "anytime_above_fixed": float(np.mean(b > f))})
    return rows


def stopping_table(*, runs: int = 1000, n_canaries: int = 1000, failure_prob: float = 0.05,
                   seed=0, cells=STOPPING_CELLS) -> list[dict]:
    """Canaries graded when a false claim is refuted (median, 90th percentile; runs that never
    refute count as ``n_canaries + 1``), the fraction refuted within the run, and the
    end-of-run fixed-time one-run audit's refutation rate (which reads all ``n_canaries``).

    Parameters
    ----------
    runs, n_canaries : int
    failure_prob : float
    seed : int or SeedSequence
    cells : sequence of (kind, true epsilon, claimed epsilon, delta)

    Returns
    -------
    list of dict
    """
    rows = []
    for c, (kind, e, claim, d) in enumerate(cells):
        out = simulate_anytime(kind, true_epsilon=e, claimed_epsilon=claim, delta=d,
                               n_canaries=n_canaries, runs=runs, seed=np.random.SeedSequence([int(seed), 200 + c]),
                               failure_prob=failure_prob)
        st = np.where(out["refuted_at"] >= 0, out["refuted_at"], n_canaries + 1)
        rows.append({"canaries": kind, "true_epsilon": e, "claimed": claim, "delta": d,
                     "runs": runs, "m": n_canaries, "median_stop": float(np.median(st)),
                     "p90_stop": float(np.quantile(st, 0.9)),
                     "refuted_anytime": out["refuted_rate"],
                     "refuted_end_of_run": float(np.mean(out["fixed_time"] > claim))})
    return rows


def markdown_table(rows: list[dict]) -> str:
    """Rows as a Markdown table (numbers to 4 significant digits).

    Parameters
    ----------
    rows : list of dict
        Rows with the same keys.

    Returns
    -------
    str
        The table ("" without rows).
    """
    if not rows:
        return ""
    cols = list(rows[0])

    def fmt(v):
        if isinstance(v, bool | np.bool_):
            return "yes" if v else "NO"
        if isinstance(v, float):
            return f"{v:.4g}"
        return str(v)

    out = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    out += ["| " + " | ".join(fmt(r[c]) for c in cols) + " |" for r in rows]
    return "\n".join(out)
