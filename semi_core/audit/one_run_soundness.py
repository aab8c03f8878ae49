r"""Soundness of the one-run audits on exactly :math:`\varepsilon`-DP mechanisms that are not GDP.

The over-claim experiment behind the soundness rows of the report and the one-run soundness
tests: ``audits`` independent one-run audits of ``m`` canaries, each included independently
with probability 1/2 (:math:`S_i\sim` Bernoulli(1/2), the theorem's design; Steinke, Nasr &
Jagielski 2023, §3), the canary's score drawn from a per-canary mechanism of known privacy
profile, certified through the public entry point
(:func:`~semi_core.audit.bounds.audit_batch`, rows grouped by class size), and the number of
audits whose :math:`\underline\varepsilon` exceeds the truth :math:`\varepsilon(\delta)`
counted, with its exact (Clopper-Pearson) 95 % interval.

Mechanisms (:data:`MECHANISMS`; each canary's score depends on its own bit only, so the
release of all ``m`` scores has the per-canary privacy profile):

``bernoulli-null``
    Bernoulli(1/2) scores independent of :math:`S`: 0-DP, every score tied with half the
    others (the tie-breaking check: :func:`~semi_core.audit.one_run.one_run_counts`).
``rr-1``, ``rr-4``
    Randomised response: the score is :math:`S_i` with probability
    :math:`q=e^{\varepsilon_0}/(1+e^{\varepsilon_0})`, else :math:`1-S_i` (two tied values).
``laplace-1``
    :math:`S_i+\mathrm{Lap}(1/\varepsilon_0)` (sensitivity 1).
``geometric-2``
    :math:`S_i+G`, :math:`P[G=k]\propto e^{-\varepsilon_0|k|}` (integer scores: ties).
``rr-1+u``, ``rr-4+u``, ``geometric-2+u``
    The same plus independent Uniform(0, 1/2) noise: post-processing, so the same privacy
    profile, but no ties (the tie-safe guesses abstain on a tied group straddling a cut, which
    leaves little to certify from two-valued scores; the untied versions test the trade-off
    curves with power).

Truths (:func:`epsilon_true`; the privacy loss of randomised response and of the geometric
mechanism takes the values :math:`\pm\varepsilon_0` only, with
:math:`P_0[L=\varepsilon_0]=q` for both, :math:`P[G\le0]=1/(1+e^{-\varepsilon_0})`; the
Laplace loss is :math:`\varepsilon_0` w.p. :math:`\frac12` and spreads over
:math:`[-\varepsilon_0,\varepsilon_0]` otherwise):

.. math::

    \text{rr, geometric: }\ \varepsilon(\delta)=\log\frac{q-\delta}{1-q},\qquad
    \text{laplace: }\ \varepsilon(\delta)=\varepsilon_0+2\log(1-\delta),

and :math:`0` for the null. None of them is :math:`\mu`-GDP: their trade-off curves have
corners (randomised response, geometric) or a kink at the Laplace ratio, so
``one-run-fdp`` with ``tradeoff="gdp"`` over-claims on them by design, and its rows mark the
assumption as not holding.
"""

from __future__ import annotations

import math

import numpy as np

from semi_core._validation import check_delta, check_failure_prob, check_int
from semi_core.audit.bounds import assumption_of, audit_batch
from semi_core.stats.binomial import clopper_pearson_lower, clopper_pearson_upper

__all__ = ["MECHANISMS", "epsilon_true", "canary_scores", "one_run_overclaims"]

#: name -> eps0 of the per-canary mechanism.
MECHANISMS = {"bernoulli-null": 0.0, "rr-1": 1.0, "rr-4": 4.0, "laplace-1": 1.0,
              "geometric-2": 2.0, "rr-1+u": 1.0, "rr-4+u": 4.0, "geometric-2+u": 2.0}


def _check_mechanism(name: str) -> float:
    if not isinstance(name, str) or name not in MECHANISMS:
        raise ValueError(f"mechanism must be one of {tuple(MECHANISMS)}, got {name!r}")
    return MECHANISMS[name]


def epsilon_true(mechanism: str, delta: float) -> float:
    r"""Exact :math:`\varepsilon(\delta)` of the per-canary mechanism (module docstring).

    .. math::

        \varepsilon(\delta)=\log\frac{q-\delta}{1-q}\ (\text{rr, geometric}),\qquad
        \varepsilon_0+2\log(1-\delta)\ (\text{laplace}),\qquad 0\ (\text{null})

    Parameters
    ----------
    mechanism : str
        A key of :data:`MECHANISMS`.
    delta : float
        In ``[0, 1)``.

    Returns
    -------
    float
        :math:`\varepsilon(\delta)\ge0`.
    """
    eps0 = _check_mechanism(mechanism)
    delta = check_delta(delta)
    if eps0 == 0.0:
        return 0.0
    if mechanism.startswith("laplace"):
        return max(0.0, eps0 + 2.0 * math.log1p(-delta))
    q = 1.0 / (1.0 + math.exp(-eps0))
    if q - delta <= 1.0 - q:
        return 0.0
    return eps0 + math.log1p(-delta / q)  # log((q - delta) / (1 - q)), exact at delta = 0


def canary_scores(mechanism: str, inclusion: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    r"""Scores of the canaries under ``mechanism`` given the inclusion bits (any shape).

    Parameters
    ----------
    mechanism : str
        A key of :data:`MECHANISMS`.
    inclusion : ndarray of bool
        :math:`S_i` (True = included).
    rng : numpy.random.Generator

    Returns
    -------
    ndarray of float
        Same shape; higher = member.
    """
    eps0 = _check_mechanism(mechanism)
    s = np.asarray(inclusion, dtype=bool)
    if mechanism.endswith("+u"):  # post-processing by independent noise: same profile
        x = canary_scores(mechanism[:-2], s, rng)
        return x + 0.5 * rng.random(s.shape)
    if mechanism == "bernoulli-null":
        return (rng.random(s.shape) < 0.5).astype(float)
    if mechanism.startswith("rr"):
        keep = rng.random(s.shape) < 1.0 / (1.0 + math.exp(-eps0))
        return np.where(keep, s, ~s).astype(float)
    if mechanism.startswith("laplace"):
        return s + rng.laplace(0.0, 1.0 / eps0, s.shape)
    p = -math.expm1(-eps0)  # success probability: G = Geom - Geom' has P[k] ~ e^{-eps0 |k|}
    return s + (rng.geometric(p, s.shape) - rng.geometric(p, s.shape)).astype(float)


def one_run_overclaims(mechanism: str, method: str, *, audits: int, m: int, seed,
                       delta: float = 1e-5, failure_prob: float = 0.05, **options) -> dict:
    r"""Count the one-run audits of ``mechanism`` whose :math:`\underline\varepsilon` exceeds
    :math:`\varepsilon(\delta)`.

    Each audit draws :math:`S\sim` Bernoulli(1/2)\ :sup:`m` and the scores, and certifies
    through :func:`~semi_core.audit.bounds.audit_batch` (``seed`` is also passed there, so a
    method that drew randomness would draw it at that fixed seed in every audit). Class sizes
    the method refuses (two-sided balance p-value below 1e-3) are counted as ``refused``.

    .. math::

        \hat\rho=\frac{\#\{\underline\varepsilon>\varepsilon(\delta)\}}{n},\qquad
        [\mathrm{CP}_{0.025},\mathrm{CP}_{0.975}]\ \text{(exact binomial)}

    Parameters
    ----------
    mechanism : str
        A key of :data:`MECHANISMS`.
    method : {"one-run", "one-run-fdp"}
    audits, m : int
        Audits (``>= 1``) and canaries per audit (``>= 20``).
    seed : int
        ``>= 0``: the data are drawn from ``SeedSequence([seed, 1729])`` and ``seed`` itself is
        the ``seed`` given to the method (the same in every audit).
    delta, failure_prob : float
    **options
        Passed to the method (``tradeoff``, ``guesses``).

    Returns
    -------
    dict
        ``over_claims``, ``audits`` (certified, refusals excluded), ``refused``, ``rate``,
        ``interval`` (95 % Clopper-Pearson), ``above_xi`` (the interval's lower end above
        :math:`\xi`), ``median``, ``epsilon_true``, ``assumption``.
    """
    if method not in ("one-run", "one-run-fdp"):
        raise ValueError(f"method must be 'one-run' or 'one-run-fdp', got {method!r}")
    audits = check_int(audits, "audits", minimum=1)
    m = check_int(m, "m", minimum=20)
    delta = check_delta(delta)
    xi = check_failure_prob(failure_prob)
    truth = epsilon_true(mechanism, delta)
    seed = check_int(seed, "seed", minimum=0)
    rng = np.random.default_rng(np.random.SeedSequence([seed, 1729]))
    s = rng.random((audits, m)) < 0.5
    x = canary_scores(mechanism, s, rng)
    n1 = s.sum(axis=1)
    over = refused = 0
    eps_all = []
    for k in np.unique(n1):
        rows = np.flatnonzero(n1 == k)
        mem = x[rows][s[rows]].reshape(rows.size, int(k))
        non = x[rows][~s[rows]].reshape(rows.size, m - int(k))
        try:
            e = audit_batch(mem, non, delta=delta, failure_prob=xi, method=method,
                            seed=seed, **options)
        except ValueError as err:
            if "needs canaries included" not in str(err):
                raise
            refused += rows.size
            continue
        over += int(np.count_nonzero(e > truth * (1.0 + 1e-12) + 1e-12))
        eps_all.append(e)
    n = audits - refused
    if n == 0:
        raise ValueError(f"every one of the {audits} audits was refused (class sizes)")
    lo = float(clopper_pearson_lower(over, n, 0.025))
    hi = float(clopper_pearson_upper(over, n, 0.025))
    return {"mechanism": mechanism, "method": method, "options": dict(options),
            "over_claims": over, "audits": n, "refused": refused, "rate": over / n,
            "interval": (lo, hi), "above_xi": bool(lo > xi),
            "median": float(np.median(np.concatenate(eps_all))), "epsilon_true": truth,
            "failure_prob": xi, "delta": delta, "m": m,
            "assumption": assumption_of(method, tradeoff=options.get("tradeoff"))}
