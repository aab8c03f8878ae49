r"""Audit orchestration: game -> scores -> certified bounds, for any mechanism.

:func:`audit_game_result` certifies :math:`\underline\varepsilon` for each test of a
:class:`~semi_core.game.result.GameResult` with :func:`~semi_core.audit.bounds.epsilon_lower_bound`
(the one validating entry point for certified bounds); :func:`audit_mechanism` plays the SeMI game
(:func:`~semi_core.game.play.play`) on any :class:`~semi_core.mechanisms.base.Mechanism`
first and puts the ground truth :math:`\varepsilon(\delta)` beside the bounds where the mechanism
knows it.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from semi_core._names import Test
from semi_core.audit.bounds import DEFAULT_METHOD, METHODS, _check_choice
from semi_core.audit.report import AuditReport, certify_game
from semi_core.game.play import play, resolve_tau_pmf
from semi_core.game.result import GameResult
from semi_core.mechanisms.base import ground_truth, offered_tests

__all__ = ["audit_game_result", "audit_mechanism", "noisy_mean_audit_table", "DEFAULT_AUDIT_TESTS"]

#: Tests certified by default (SeMI-Unif is dominated by SeMI* and SeMI-max for a known tau).
DEFAULT_AUDIT_TESTS = (Test.SEMI_STAR.value, Test.SEMI_MAX.value, Test.FINAL.value)


def audit_game_result(result: GameResult, *, delta: float, failure_prob: float = 0.05,
                      method: str = DEFAULT_METHOD, tests=None, **audit_kwargs) -> AuditReport:
    r"""Certified :math:`\underline\varepsilon` per test of a game result.

    .. math::

        \underline\varepsilon_{\text{test}} = \texttt{epsilon\_lower\_bound}
            (S_{\text{test}}\mid B=1,\ S_{\text{test}}\mid B=0)

    Parameters
    ----------
    result : GameResult
    delta, failure_prob, method, **audit_kwargs
        As in :func:`~semi_core.audit.bounds.epsilon_lower_bound` (each test is its own audit
        at ``failure_prob``; Bonferroni over tests is the caller's choice). Several methods on
        one game: :func:`~semi_core.audit.report.certify_game`.
    tests : sequence of str, optional
        Default: every test held by ``result``.

    Returns
    -------
    AuditReport
        One method per test; ``report.epsilon_lower_bound(test)``, and ``to_dict()`` is
        ``{test: AuditResult.to_dict()}``, each with ``epsilon_max_certifiable``: the largest
        bound the method can return from these numbers of games
        (:func:`~semi_core.audit.selection.certifiable_epsilon_max`).
    """
    _check_choice(method, "method", METHODS)
    bounds, ceilings = certify_game(result, {method: audit_kwargs}, delta=delta,
                                    failure_prob=failure_prob, tests=tests)
    return AuditReport(bounds=bounds, ceilings=ceilings, bounds_key=None, per_method=False,
                       game=result)


def audit_mechanism(mech, rounds: int, seed, *, tau: int = 1, delta: float = 1e-5,
                    failure_prob: float = 0.05, method: str = DEFAULT_METHOD,
                    tests=None, executor=None, progress: bool = False,
                    **audit_kwargs) -> AuditReport:
    r"""Play the SeMI game on ``mech`` and certify :math:`\underline\varepsilon` per test.

    .. math::

        \underline\varepsilon_{\text{test}}\quad\text{vs}\quad
        \varepsilon_\tau(\delta)\ \text{(neighbours at step }\tau)\ \le\ \varepsilon_1(\delta)

    Parameters
    ----------
    mech : Mechanism
    rounds : int
        ``>= 2`` games.
    seed : int or SeedSequence
    tau : int or array_like
        Insertion time in ``1..T`` (known to SeMI* and Final Observation), or a prior (pmf over
        1..T) from which the Crafter draws it. The ground truth of a prior is the largest
        :math:`\varepsilon_t(\delta)` over the prior's support: the game tests :math:`H_0`
        against the mixture :math:`\sum_t\pi_t P_t`, and the hockey-stick divergence is
        jointly convex, so
        :math:`\varepsilon_{\text{mix}}(\delta)\le\max_{t:\pi_t>0}\varepsilon_t(\delta)`
        whatever the way the sensitivity varies with :math:`t` (the earliest step's value is
        an upper bound only when the sensitivity falls with :math:`t`).
    delta, failure_prob, method, **audit_kwargs
        As in :func:`audit_game_result`.
    tests : sequence of str, optional
        Default: those of :data:`DEFAULT_AUDIT_TESTS` the mechanism offers
        (:func:`~semi_core.mechanisms.base.offered_tests`; ``final`` needs ``final_log_lr``).
    executor, progress
        Where the games run and whether to show progress (:func:`~semi_core.game.play.play`).

    Returns
    -------
    AuditReport
        The bounds (one method) under ``tests``, with the entries ``epsilon_true`` (step 1)
        / ``epsilon_true_tau`` (``None`` when the mechanism has no known guarantee),
        ``tau_for_truth`` (the step whose :math:`\varepsilon` is ``epsilon_true_tau``),
        ``truth`` (``"exact"`` for a fixed :math:`\tau`, ``"upper bound: max over the prior's
        support"`` for a prior), ``mechanism`` (its parameters), ``rounds``, ``tau``,
        ``delta``, ``failure_prob``, ``method`` (and ``mu``, ``mu_tau`` for GDP mechanisms) in
        ``header``/``trailer``; ``to_dict()`` lays them out as before, with ``tests`` =
        ``{name: AuditResult as dict}``.

    Examples
    --------
    >>> from semi_core.mechanisms.zoo import RandomizedResponse
    >>> report = audit_mechanism(RandomizedResponse(1.0), 4000, seed=0, delta=1e-5)
    >>> report.tests
    ['semi-star', 'semi-max']
    >>> print(f"{report.epsilon_lower_bound('semi-star'):.3f} <= {report['epsilon_true']:.3f}")
    0.921 <= 1.000
    """
    from semi_core._validation import check_int

    rounds = check_int(rounds, "rounds", minimum=2)
    if tests is None:
        offered = offered_tests(mech)
        tests = tuple(t for t in DEFAULT_AUDIT_TESTS if t in offered) or offered
    res = play(mech, rounds, seed, tau=tau, tests=tests, executor=executor, progress=progress)
    game = audit_game_result(res, delta=delta, failure_prob=failure_prob, method=method,
                             tests=tests, **audit_kwargs)
    # With a prior on tau the game tests H0 against the mixture sum_t pi_t H1^t: by joint
    # convexity of the hockey-stick divergence its eps(delta) is at most the largest eps_t over
    # the prior's support (for any dependence of the sensitivity on t).
    eps1 = ground_truth(mech, delta, 1)
    support = np.flatnonzero(resolve_tau_pmf(mech.T, tau) > 0) + 1
    if support.size == 1:
        t_truth, truth = int(support[0]), "exact"
        eps_tau = ground_truth(mech, delta, t_truth)
    else:
        per_t = [ground_truth(mech, delta, int(t)) for t in support]
        truth = "upper bound: max over the prior's support"
        if any(e is None for e in per_t):
            t_truth, eps_tau = int(support[0]), None
        else:
            k = int(np.argmax(per_t))
            t_truth, eps_tau = int(support[k]), per_t[k]
    if eps1 is None or eps_tau is None:
        eps1 = eps_tau = None
    header = {"mechanism": mech.params(), "epsilon_true": eps1, "epsilon_true_tau": eps_tau,
              "tau_for_truth": t_truth, "truth": truth,
              "rounds": rounds, "tau": tau, "delta": delta, "failure_prob": failure_prob,
              "method": method}
    trailer = {}
    if eps1 is not None and hasattr(mech, "mu"):  # GDP mechanisms: mu (whole release, step tau)
        trailer.update(mu=mech.mu(1), mu_tau=mech.mu(t_truth))
    return replace(game, header=header, trailer=trailer, bounds_key="tests")


def noisy_mean_audit_table(*, n=10, T=10, tau=1, clip=1.0, data_mean=-1.0, data_std=0.1, target=None,
              noise=None, mu_levels=(1.0, 2.0, 4.0), rounds=4000, delta=1e-5, alpha=0.05,
              method=DEFAULT_METHOD, seed=0, tests=DEFAULT_AUDIT_TESTS,
                           progress=None, executor=None) -> list[AuditReport]:
    r"""Audit the noisy empirical mean (:class:`~semi_core.mechanisms.noisy_mean.NoisyMean`) at
    several noise levels: one :func:`audit_mechanism` row per level (SeMI seed §5).

    .. math::

        s = \Delta_1/\mu\ \text{for each GDP level}\ \mu,\qquad
        \underline\varepsilon_{\text{test}}\ \text{vs}\ \varepsilon_\tau(\delta)

    Parameters
    ----------
    n, T, tau, clip, data_mean, data_std, target
        The mechanism (see :class:`~semi_core.mechanisms.noisy_mean.NoisyMean`).
    noise : sequence of float, optional
        Noise standard deviations; else derived from ``mu_levels``.
    mu_levels : sequence of float
        GDP levels of the whole release (used when ``noise`` is None).
    rounds, delta, alpha, method, seed, tests
        Games per level, and the audit's settings (``alpha`` is the failure probability).
    executor : Executor, int or None
        Where each level's games run (:class:`~semi_core.game.backends.Executor`); the rows do
        not depend on it.
    progress : callable, optional
        Called with a short message per level.

    Returns
    -------
    list of AuditReport
        One :func:`audit_mechanism` report per level, with ``noise`` in its ``trailer``.
    """
    import numpy as np

    from semi_core._rng import as_seed_sequence
    from semi_core._validation import check_delta, check_failure_prob
    from semi_core.mechanisms.noisy_mean import NoisyMean

    check_delta(delta)  # fail before simulating
    check_failure_prob(alpha)

    def make(s):
        return NoisyMean(n, T, noise=s, clip=clip, data_mean=data_mean, data_std=data_std,
                         target=target)

    if noise is None:
        delta1 = make(1.0).sensitivity(1)
        levels = [delta1 / float(m) for m in mu_levels]
        if any(not np.isfinite(s) or s <= 0 for s in levels):
            raise ValueError(f"--mu-levels must be finite and > 0, got {list(mu_levels)}")
    else:
        levels = [float(s) for s in noise]
    children = as_seed_sequence(seed).spawn(len(levels))
    rows = []
    for s, child in zip(levels, children, strict=True):
        if progress is not None:
            progress(f"noise {s:.4g}")
        row = audit_mechanism(make(s), rounds, child, tau=tau, delta=delta,
                              failure_prob=alpha, method=method, tests=tests,
                              executor=executor)
        rows.append(replace(row, trailer={**row.trailer, "noise": s}))
    return rows
