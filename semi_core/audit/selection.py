r"""Choosing the insertion time (and test) validly: pilot/certify splits and Bonferroni over τ.

An auditor who audits several insertion times :math:`\tau` (or tests) and reports the best
:math:`\underline\varepsilon` *post hoc* reports a maximum of :math:`K` bounds each valid at level
:math:`\xi`: the maximum holds only at level :math:`K\xi`. Two valid workflows (SeMI seed §5
reports the post-hoc best; it is kept here, labelled as such, for comparison):

``pilot / certify``
    Split the games of each :math:`\tau` at random into a pilot part and a certification part.
    On the pilot part choose :math:`(\tau^*, \text{test}^*)` maximising the pilot bound; certify
    :math:`\underline\varepsilon` for that single choice on the certification part at the full
    failure probability :math:`\xi`. The choice is independent of the certifying scores, so
    :math:`P(\varepsilon<\underline\varepsilon)\le\xi`.
``Bonferroni``
    Certify every :math:`(\tau,\text{test})` on all games at :math:`\xi/K`; the maximum is valid
    at :math:`\xi` (union bound).

:func:`certifiable_epsilon_max` states the largest :math:`\underline\varepsilon` a method can
return from a given number of games (perfectly separated scores), so that a reported 0 or a
small value can be read against what the sample size allows (SeMI seed §5.1).
"""

from __future__ import annotations

import numpy as np

from semi_core._rng import as_seed_sequence
from semi_core._validation import check_failure_prob, check_int, check_probability
from semi_core.audit.bounds import DEFAULT_METHOD, epsilon_lower_bound
from semi_core.game.result import GameResult

__all__ = ["certifiable_epsilon_max", "select_and_certify"]


def certifiable_epsilon_max(n_member: int, n_nonmember: int, *, delta: float,
                            failure_prob: float = 0.05, method: str = DEFAULT_METHOD,
                            **kwargs) -> float:
    r"""Largest :math:`\underline\varepsilon` the method can certify from ``n_member`` and
    ``n_nonmember`` games: its bound on perfectly separated scores.

    .. math::

        \bar\varepsilon_{\max}=\underline\varepsilon(S_1\equiv1,\ S_0\equiv0)

    e.g. DKW with :math:`N` games per class: :math:`\log((1-\delta-\lambda)/\lambda)`,
    :math:`\lambda=\sqrt{\log(2/\xi)/(2N)}`.

    Parameters
    ----------
    n_member : int
        Number of member games, >= 1.
    n_nonmember : int
        Number of non-member games, >= 1.
    delta : float
        The :math:`\delta` of the bound, in [0, 1).
    failure_prob : float
        Failure probability, in (0, 0.5].
    method : str
        A bound method.
    **kwargs
        Further keywords of the method.

    Returns
    -------
    float
        The largest certifiable :math:`\varepsilon`, >= 0.
    """
    n1 = check_int(n_member, "n_member", minimum=1)
    n0 = check_int(n_nonmember, "n_nonmember", minimum=1)
    if method == "cp" and "thresholds" not in kwargs:
        kwargs["thresholds"] = 0.5  # the separating threshold, pre-registered
    return epsilon_lower_bound(np.ones(n1), np.zeros(n0), delta=delta,
                               failure_prob=failure_prob, method=method,
                               **kwargs).epsilon_lower_bound


def _bound(result: GameResult, test: str, **kw) -> float:
    m, nm = result.scores(test)
    if m.size == 0 or nm.size == 0:
        return 0.0
    return epsilon_lower_bound(m, nm, **kw).epsilon_lower_bound


def select_and_certify(results: dict[int, GameResult], *, delta: float,
                       failure_prob: float = 0.05, method: str = DEFAULT_METHOD, tests=None,
                       pilot_fraction: float = 0.3, seed=0) -> dict:
    r"""Post-hoc best, Bonferroni-over-:math:`(\tau,\text{test})` and pilot/certify bounds.

    Parameters
    ----------
    results : dict of int -> GameResult
        Games per insertion time :math:`\tau` (e.g. one :func:`~semi_core.game.play.play`
        per :math:`\tau`).
    delta, failure_prob, method
        As in :func:`~semi_core.audit.bounds.epsilon_lower_bound`.
    tests : sequence of str, optional
        Candidate tests (default: every test held by the results).
    pilot_fraction : float
        Share of each :math:`\tau`'s games used to choose, in (0, 1).
    seed : int or SeedSequence
        Randomness of the split.

    Returns
    -------
    dict
        ``post_hoc`` (best bound over all choices, each at ``failure_prob``: **not** a valid
        certificate), ``bonferroni`` (valid), ``pilot_certify`` (valid: the choice, its pilot
        bound and the certified bound on the held-out games), ``per_choice`` bounds, ``choices``
        (K) and ``certifiable_max`` for the certification sample sizes.
    """
    if not results:
        raise ValueError("results must hold at least one insertion time")
    for tau, r in results.items():
        if not isinstance(r, GameResult):
            raise TypeError(f"results[{tau}] must be a GameResult, got {type(r).__name__}")
    xi = check_failure_prob(failure_prob)
    frac = check_probability(pilot_fraction, "pilot_fraction")
    names = list(tests) if tests is not None else list(next(iter(results.values())).stats)
    choices = [(int(t), name) for t in sorted(results) for name in names]
    kw = {"delta": delta, "method": method}
    per = {f"{t}:{name}": _bound(results[t], name, failure_prob=xi, **kw) for t, name in choices}
    bonf = {f"{t}:{name}": _bound(results[t], name, failure_prob=xi / len(choices), **kw)
            for t, name in choices}
    rng = np.random.Generator(np.random.PCG64(as_seed_sequence(seed)))
    pilot, cert = {}, {}
    for t in sorted(results):
        r = results[t]
        mask = rng.random(r.rounds) < frac
        pilot[t], cert[t] = r.subset(mask), r.subset(~mask)
    pilot_b = {(t, name): _bound(pilot[t], name, failure_prob=xi, **kw) for t, name in choices}
    best_t, best_test = max(pilot_b, key=lambda k: (pilot_b[k], -k[0]))
    certified = _bound(cert[best_t], best_test, failure_prob=xi, **kw)
    c1 = int(cert[best_t].member.sum())
    c0 = int(cert[best_t].rounds - c1)
    post_key = max(per, key=per.get)
    bonf_key = max(bonf, key=bonf.get)
    return {
        "method": method, "delta": delta, "failure_prob": xi, "choices": len(choices),
        "post_hoc": {"choice": post_key, "epsilon_lower_bound": per[post_key], "valid": False},
        "bonferroni": {"choice": bonf_key, "epsilon_lower_bound": bonf[bonf_key], "valid": True},
        "pilot_certify": {"choice": f"{best_t}:{best_test}", "pilot_bound": pilot_b[(best_t, best_test)],
                          "epsilon_lower_bound": certified, "pilot_fraction": frac,
                          "certify_games": {"member": c1, "nonmember": c0}, "valid": True},
        "certifiable_max": (certifiable_epsilon_max(c1, c0, failure_prob=xi, **kw)
                            if c1 and c0 else 0.0),
        "per_choice": per,
    }
