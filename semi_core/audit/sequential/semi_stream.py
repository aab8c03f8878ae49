r"""Anytime-valid audits of a SeMI game played as a stream of guesses (beyond the seed).

Round :math:`r`: a fair coin :math:`b_r` puts the target in or out, the mechanism releases, the
auditor scores the release (SeMI*, SeMI-max, ... via ``mechanism.score``) and guesses
:math:`g_r = \mathbb 1\{s_r > \theta_r\}` with a threshold :math:`\theta_r` learned **only from
rounds before r** (the accuracy-maximising threshold on the past scores and bits; predictable).
Let :math:`Z_r = \mathbb 1\{g_r = b_r\}`.

**Bound.** Given the past, round :math:`r` is a test between :math:`\mathcal A(S)` and
:math:`\mathcal A(S')` with a fixed rejection region, so under :math:`(\varepsilon,\delta)`-DP
its balanced accuracy is at most :math:`\max_\alpha\tfrac12(2-\alpha-f(\alpha))` over the DP
trade-off curve, i.e.

.. math:: P(Z_r = 1\mid\mathcal F_{r-1})\le p^*(\varepsilon,\delta)=\frac{e^\varepsilon+\delta}{1+e^\varepsilon}

(derived symbolically in :mod:`semi_core.symbolic.seqaudit`, ``semi_success_bound``).

**Martingale.** For :math:`q\ge p^*` the likelihood ratio
:math:`\prod_r (q/p^*)^{Z_r}((1-q)/(1-p^*))^{1-Z_r}` has conditional factor mean
:math:`\le1` whenever :math:`P(Z_r=1\mid\mathcal F_{r-1})\le p^*`, so its mixture over the
uniform prior on :math:`[p^*,1]`,

.. math::

    \mathcal K_n = \frac{B(k+1,n-k+1)\,I_{1-p^*}(n-k+1,k+1)}{(1-p^*)\,p^{*k}(1-p^*)^{n-k}},
    \qquad k=\textstyle\sum_{r\le n}Z_r,

is a test supermartingale under :math:`H_0`; reject at the first :math:`\mathcal K_n\ge1/\alpha`
(Ville). Over a grid of :math:`\varepsilon` the lower bound uses the fixed-sequence reading of
:class:`~semi_core.audit.sequential.tester.GridResult` (valid without correction: the nulls are
nested because :math:`p^*` increases with :math:`\varepsilon`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import special

from semi_core._rng import as_seed_sequence
from semi_core._table import ResultDisplay, Table
from semi_core._validation import check_delta, check_int, check_real, check_work

from .tau import check_alpha, check_epsilon, success_bound

__all__ = ["semi_stream_audit", "SemiStreamResult", "log_mixture_wealth", "learned_threshold",
           "fixed_r_rejection_rate", "semi_stream_work", "check_semi_stream_work"]

#: Seconds per (round, earlier round) of the learned-threshold refits (a sort every
#: ``refit_every`` rounds: ~1.2e-9 at refit_every = 50 measured, rounded up).
_REFIT_S = 2e-9 * 50
#: Python bookkeeping per round (seconds) and bytes kept per round (4 lists, arrays).
_ROUND_S = 3e-6
_ROUND_BYTES = 200.0


def semi_stream_work(max_rounds: int, *, n_eps: int = 1, refit_every: int = 50,
                     release_seconds: float = 0.0) -> tuple[float, float]:
    r"""Peak bytes and wall seconds of one :func:`semi_stream_audit`, from its arguments.

    .. math::

        \text{bytes}\approx N(200 + 16m),\qquad
        \text{seconds}\approx N(t_r + 3\,\mu s) + c\,N^2/\text{refit\_every}

    for :math:`N` rounds, :math:`m` epsilons and :math:`t_r` seconds per round of the
    mechanism's release and score (measured by the caller on a small pilot).

    Parameters
    ----------
    max_rounds : int
        Number of rounds N.
    n_eps : int
        Number of tested epsilons m.
    refit_every : int
        Rounds between threshold refits.
    release_seconds : float
        Measured seconds per round of the mechanism.

    Returns
    -------
    nbytes : float
        Peak bytes.
    seconds : float
        Wall seconds.
    """
    N = float(max_rounds)
    nbytes = N * (_ROUND_BYTES + 16.0 * n_eps)
    seconds = N * (release_seconds + _ROUND_S) + _REFIT_S * N * N / refit_every
    return nbytes, seconds


def _pilot_seconds(mechanism, tau: int, test: str, rounds: int = 16) -> float:
    """Seconds per round of release + score, from a pilot on its own stream (discarded)."""
    import time

    rng = np.random.default_rng(12345)
    t0 = time.perf_counter()
    rel = mechanism.release(np.arange(rounds) % 2 == 0, tau, rng)
    mechanism.score(rel, tau, tests=[test])
    return (time.perf_counter() - t0) / rounds


def check_semi_stream_work(mechanism, max_rounds: int, *, n_eps: int = 1, refit_every: int = 50,
                           tau: int = 1, test: str = "semi-star", runs: int = 1,
                           extra_bytes: float = 0.0, names: dict | None = None) -> None:
    """Refuse up front (:func:`semi_core._validation.check_work`) stream audits whose memory or
    time (:func:`semi_stream_work`, times ``runs``) exceeds the limits: memory first (from the
    arguments alone), then time with the release cost of a 16-round pilot.

    Parameters
    ----------
    mechanism : Mechanism
        The audited mechanism (a 16-round pilot is timed).
    max_rounds : int
        Rounds per run.
    n_eps : int
        Number of tested epsilons.
    refit_every : int
        Rounds between threshold refits.
    tau : int
        Insertion step of the pilot.
    test : str
        Score of the pilot.
    runs : int
        Number of runs.
    extra_bytes : float
        Bytes kept by the caller.
    names : dict, optional
        Names shown in the message (CLI flags).
    """
    nm = {"max_rounds": "max_rounds", "runs": "runs", **(names or {})}
    what = (f"the SeMI stream audit ({nm['runs']} = {runs} x {nm['max_rounds']} = "
            f"{max_rounds} rounds, {n_eps} epsilon(s))")
    hint = f"lower {nm['max_rounds']} or {nm['runs']}"
    n_b, _ = semi_stream_work(max_rounds, n_eps=n_eps, refit_every=refit_every)
    check_work(what, nbytes=n_b + float(extra_bytes), hint=hint)
    _, n_s = semi_stream_work(max_rounds, n_eps=n_eps, refit_every=refit_every,
                              release_seconds=_pilot_seconds(mechanism, tau, test))
    check_work(what, seconds=runs * n_s, hint=hint)


def log_mixture_wealth(k, n, p) -> np.ndarray:
    r""":math:`\log\mathcal K_n` of the uniform-on-:math:`[p,1]` mixture (broadcasting k, n, p).

    Parameters
    ----------
    k : array_like
        Number of successes.
    n : array_like
        Number of rounds.
    p : array_like
        Null success bound, in (0, 1).

    Returns
    -------
    ndarray
        :math:`\log\mathcal K_n`, broadcast over the inputs.
    """
    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    p = np.asarray(p, dtype=float)
    with np.errstate(divide="ignore"):
        tail = np.log(special.betainc(n - k + 1.0, k + 1.0, 1.0 - p))
    return (special.betaln(k + 1.0, n - k + 1.0) + tail - np.log1p(-p)
            - k * np.log(p) - (n - k) * np.log1p(-p))


def learned_threshold(scores: np.ndarray, bits: np.ndarray, default: float) -> float:
    """Accuracy-maximising threshold for ``1{s > theta}`` on past rounds (``default`` if none).

    Parameters
    ----------
    scores : ndarray, shape (n,)
        Scores of the past rounds.
    bits : ndarray of bool, shape (n,)
        Their membership bits.
    default : float
        Threshold when there is no past round.

    Returns
    -------
    float
        The threshold.
    """
    if scores.size == 0:
        return float(default)
    order = np.argsort(scores, kind="stable")
    s, b = scores[order], bits[order].astype(float)
    # theta below everything: all guessed 1 -> correct = #b=1; moving theta past s_i flips i
    gain = np.cumsum(np.where(b > 0, -1.0, 1.0))
    best_i = int(np.argmax(gain))
    if gain[best_i] <= 0:
        return float(s[0] - 1.0) if np.isfinite(s[0]) else float(default)
    j = best_i
    # put theta between s_j and the next distinct score
    hi = s[j + 1] if j + 1 < s.size else s[j] + 1.0
    return float(0.5 * (s[j] + hi)) if np.isfinite(hi) and np.isfinite(s[j]) else float(s[j])


@dataclass(repr=False)
class SemiStreamResult(ResultDisplay):
    """Stream audit at a grid of epsilons.

    ``summary()``: one row per tested epsilon (rejected, stopping round).
    """

    _repr_fields = ("epsilon_lower_bound", "n_rounds", "delta", "failure_prob")

    epsilons: np.ndarray
    stopped_at: list[int | None]
    log_wealth: np.ndarray          # (n_rounds, n_eps)
    correct: np.ndarray             # Z_r
    members: np.ndarray
    thresholds: np.ndarray
    scores: np.ndarray
    epsilon_lower_bound: float
    lower_bound_path: np.ndarray
    delta: float
    failure_prob: float
    n_rounds: int

    @property
    def rejected(self) -> list[bool]:
        return [s is not None for s in self.stopped_at]

    def to_dict(self, *, paths: bool = False) -> dict:
        """The result as a JSON-safe dict.

        Parameters
        ----------
        paths : bool
            Include the wealth paths.

        Returns
        -------
        dict
            Epsilons, stopping rounds, verdicts, the lower bound and the settings.
        """
        d = {"epsilons": self.epsilons.tolist(), "stopped_at": self.stopped_at,
             "rejected": self.rejected, "epsilon_lower_bound": self.epsilon_lower_bound,
             "delta": self.delta, "failure_prob": self.failure_prob, "n_rounds": self.n_rounds,
             "accuracy": float(self.correct.mean()) if self.correct.size else None,
             "success_bounds": [success_bound(float(e), self.delta) for e in self.epsilons]}
        if paths:
            d["log_wealth"] = self.log_wealth.T.tolist()
            d["lower_bound_path"] = self.lower_bound_path.tolist()
        return d

    def summary(self) -> Table:
        """One row per tested epsilon: ``epsilon, rejected, stopped_at``.

        Returns
        -------
        Table
            The summary table.
        """
        rows = [{"epsilon": float(e), "rejected": s is not None, "stopped_at": s}
                for e, s in zip(self.epsilons, self.stopped_at, strict=True)]
        return Table(rows, title=repr(self))


def semi_stream_audit(mechanism, epsilons: float | Sequence[float], *, delta: float,
                      failure_prob: float = 0.05, max_rounds: int = 10_000, tau: int = 1,
                      test: str = "semi-star", threshold: str | float = "learned",
                      threshold_init: float = 0.0, refit_every: int = 50, block: int = 256,
                      seed=0, stop_when_all_rejected: bool = True) -> SemiStreamResult:
    r"""Anytime-valid test of ":math:`\mathcal A` is :math:`(\varepsilon,\delta)`-DP" from a SeMI
    game played round by round (see the module docstring).

    Parameters
    ----------
    mechanism : Mechanism
        Anything with ``release(member, tau, rng)`` and ``score(releases, tau, tests=[test])``
        (every :class:`~semi_core.mechanisms.base.MechanismBase`).
    epsilons : float or sequence of float
        Claimed epsilon(s) (each >= 0).
    delta : float
        In [0, 1).
    failure_prob : float
        :math:`\alpha\in(0,1)`.
    max_rounds : int
        Largest number of rounds (>= 1).
    tau : int
        Insertion step of the target.
    test : str
        Score (a test of ``mechanism.tests``).
    threshold : "learned" or float
        Learned (predictable) accuracy-maximising threshold, or a fixed one.
    threshold_init : float
        The learned threshold before any round.
    refit_every : int
        Refit the learned threshold every this many rounds (still predictable).
    block : int
        Rounds released per call of the mechanism.
    seed : int or numpy.random.SeedSequence
        Root seed.
    stop_when_all_rejected : bool
        Stop once every epsilon is rejected.

    Returns
    -------
    SemiStreamResult
    """
    eps = np.sort(np.atleast_1d(np.asarray(
        [check_epsilon(float(e)) for e in np.atleast_1d(epsilons)], dtype=float)))
    delta = check_delta(delta)
    alpha = check_alpha(failure_prob)
    max_rounds = check_int(max_rounds, "max_rounds", minimum=1)
    refit_every = check_int(refit_every, "refit_every", minimum=1)
    block = check_int(block, "block", minimum=1)
    tau = check_int(tau, "tau", minimum=1, maximum=getattr(mechanism, "T", None))
    tests = getattr(mechanism, "tests", None)
    if tests is not None and test not in tests:
        raise ValueError(f"test must be one of {list(tests)} for this mechanism, got {test!r}")
    threshold_init = check_real(threshold_init, "threshold_init")
    if not (isinstance(threshold, str) and threshold == "learned"):
        if isinstance(threshold, str):
            raise ValueError(f"threshold must be 'learned' or a number, got {threshold!r}")
        threshold = check_real(threshold, "threshold")
    p = np.array([success_bound(float(e), delta) for e in eps])
    if np.any(p >= 1):
        e_bad = float(eps[np.argmax(p >= 1)])
        raise ValueError(f"epsilon = {e_bad:g} with delta = {delta:g} makes the success bound "
                         "p* = (e^eps + delta)/(1 + e^eps) equal to 1 in double precision "
                         "(from eps ~ 37): no guessing game can reject it; audit a smaller "
                         "epsilon")
    check_semi_stream_work(mechanism, max_rounds, n_eps=eps.size, refit_every=refit_every,
                           tau=tau, test=test)
    rng = np.random.Generator(np.random.PCG64(as_seed_sequence(seed)))
    log_thr = math.log(1.0 / alpha)
    scores, bits, thetas, correct = [], [], [], []
    stops: list[int | None] = [None] * eps.size
    theta = float(threshold_init) if threshold == "learned" else float(threshold)
    r = 0
    k = 0
    logk_blocks = []
    while r < max_rounds:
        size = min(block, max_rounds - r)
        member = rng.random(size) < 0.5
        rel = mechanism.release(member, tau, rng)
        s = np.asarray(mechanism.score(rel, tau, tests=[test])[test], dtype=float).reshape(-1)
        if s.size != size or np.isnan(s).any():
            raise ValueError(f"mechanism produced {s.size} {test} scores for {size} rounds "
                             "(or NaN scores)")
        zb = np.empty(size)
        for j in range(size):  # the guess of round r uses rounds < r only
            if threshold == "learned" and r + j > 0 and (r + j) % refit_every == 0:
                theta = learned_threshold(np.asarray(scores), np.asarray(bits), threshold_init)
            zb[j] = float((s[j] > theta) == member[j])
            scores.append(s[j])
            bits.append(bool(member[j]))
            thetas.append(theta)
        correct.extend(zb.tolist())
        kc = k + np.cumsum(zb)
        nn = r + np.arange(1, size + 1)
        lk = log_mixture_wealth(kc[:, None], nn[:, None], p[None, :])
        logk_blocks.append(lk)
        for i in range(eps.size):
            if stops[i] is None:
                hit = np.flatnonzero(lk[:, i] >= log_thr)
                if hit.size:
                    stops[i] = int(r + hit[0] + 1)
        k = int(kc[-1])
        r += size
        if stop_when_all_rejected and all(st is not None for st in stops):
            break
    n = r
    L = np.vstack(logk_blocks)
    st = np.array([np.inf if s_ is None else s_ for s_ in stops], dtype=float)
    prefix = np.maximum.accumulate(st)
    lb_path = np.zeros(n)
    for i in range(eps.size):
        if np.isfinite(prefix[i]):
            lb_path[int(prefix[i]) - 1:] = np.maximum(lb_path[int(prefix[i]) - 1:], eps[i])
    kk = int(np.isfinite(prefix).sum())
    return SemiStreamResult(
        epsilons=eps, stopped_at=stops, log_wealth=L, correct=np.asarray(correct),
        members=np.asarray(bits), thresholds=np.asarray(thetas), scores=np.asarray(scores),
        epsilon_lower_bound=float(eps[kk - 1]) if kk else 0.0, lower_bound_path=lb_path,
        delta=delta, failure_prob=alpha, n_rounds=n)


def fixed_r_rejection_rate(mechanism, rounds: int, *, epsilon: float, delta: float,
                           failure_prob: float = 0.05, method: str = "cp", audits: int = 200,
                           tau: int = 1, test: str = "semi-star", seed=0) -> dict:
    r"""How often a fixed-R audit (:func:`semi_core.audit.bounds.audit_batch`) certifies
    :math:`\underline\varepsilon>\varepsilon` from ``rounds`` games with fair-coin membership.

    ``method="cp"`` uses the pre-registered LR threshold 0 (Clopper--Pearson, no split);
    ``"dkw"`` optimises the threshold with DKW bands. Same :math:`\alpha` as the stream audit.
    Audit ``i`` plays its ``rounds`` games with the one runner (:func:`semi_core.game.play.play`)
    on the ``i``-th child of ``seed`` (:func:`.tester.run_audits`); an audit whose games drew one
    class only certifies nothing (:math:`\underline\varepsilon = 0`, not rejected).

    Parameters
    ----------
    mechanism : Mechanism
        A mechanism the runner plays (offering ``test``).
    rounds : int
        Games per audit (>= 2).
    epsilon, delta : float
        The claim :math:`(\varepsilon,\delta)`.
    failure_prob : float
        :math:`\alpha` of each audit's bound.
    method : {"cp", "dkw"}
        Fixed threshold 0 with Clopper--Pearson, or the DKW-optimised threshold.
    audits : int
        Independent audits (>= 1).
    tau : int
        Insertion step of the target.
    test : str
        The score.
    seed : int or SeedSequence
        Root seed.

    Returns
    -------
    dict
        ``rounds``, ``rejection_rate`` and its binomial ``rejection_rate_se``
        (:func:`.tester.rejection_summary`), ``median_eps_lb``, ``method``.
    """
    from semi_core.audit.bounds import audit_batch
    from semi_core.game.play import play

    from .tester import rejection_summary, run_audits

    rounds = check_int(rounds, "rounds", minimum=2)
    audits = check_int(audits, "audits", minimum=1)
    failure_prob = check_alpha(failure_prob)
    delta = check_delta(delta)
    epsilon = check_epsilon(epsilon)
    if method not in ("cp", "dkw"):
        raise ValueError(f"method must be 'cp' or 'dkw', got {method!r}")
    check_work(f"the fixed-R audits ({audits} audits x {rounds} rounds)",
               nbytes=3.0 * 8.0 * rounds,
               seconds=audits * rounds * (_pilot_seconds(mechanism, tau, test) + 1e-6),
               hint="lower audits or rounds")
    kw = {"thresholds": [0.0]} if method == "cp" else {}

    def one_audit(ss) -> float:
        s_in, s_out = play(mechanism, rounds, ss, tau=tau, tests=(test,)).scores(test)
        if not (s_in.size and s_out.size):
            return 0.0
        return float(audit_batch(s_in[None, :], s_out[None, :], delta=delta,
                                 failure_prob=failure_prob, method=method, **kw)[0])

    eps_lb = run_audits(audit=one_audit, runs=audits, seed=seed, summary=None).runs
    summ = rejection_summary(np.asarray(eps_lb) > epsilon)
    return {"rounds": rounds, "rejection_rate": summ["rejection_rate"],
            "rejection_rate_se": summ["rejection_rate_se"],
            "median_eps_lb": float(np.median(eps_lb)), "method": method}
