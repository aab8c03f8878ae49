r"""Audit orchestration: game -> scores -> certified bounds, for any mechanism.

:func:`audit_game_result` certifies :math:`\underline\varepsilon` for each test of a
:class:`~semi_core.game.result.GameResult` with :func:`~semi_core.audit.bounds.epsilon_lower_bound`
(the one validating entry point for certified bounds); :func:`audit_mechanism` plays the SeMI game
(:func:`~semi_core.game.semi_game.play_game`) on any :class:`~semi_core.mechanisms.base.Mechanism`
first and puts the ground truth :math:`\varepsilon(\delta)` beside the bounds where the mechanism
knows it.
"""

from __future__ import annotations

from semi_core._names import Test
from semi_core.audit.bounds import epsilon_lower_bound
from semi_core.game.result import GameResult
from semi_core.game.semi_game import play_game
from semi_core.mechanisms.base import GroundTruthUnknown

__all__ = ["audit_game_result", "audit_mechanism", "DEFAULT_AUDIT_TESTS"]

#: Tests certified by default (SeMI-Unif is dominated by SeMI* and SeMI-max for a known tau).
DEFAULT_AUDIT_TESTS = (Test.SEMI_STAR.value, Test.SEMI_MAX.value, Test.FINAL.value)


def audit_game_result(result: GameResult, *, delta: float, failure_prob: float = 0.05,
                      method: str = "dkw", tests=None, **audit_kwargs) -> dict[str, dict]:
    r"""Certified :math:`\underline\varepsilon` per test of a game result.

    .. math::

        \underline\varepsilon_{\text{test}} = \texttt{epsilon\_lower\_bound}
            (S_{\text{test}}\mid B=1,\ S_{\text{test}}\mid B=0)

    Parameters
    ----------
    result : GameResult
    delta, failure_prob, method, **audit_kwargs
        As in :func:`~semi_core.audit.bounds.epsilon_lower_bound` (each test is its own audit
        at ``failure_prob``; Bonferroni over tests is the caller's choice).
    tests : sequence of str, optional
        Default: every test held by ``result``.

    Returns
    -------
    dict
        ``{test: AuditResult.to_dict()}``.
    """
    if not isinstance(result, GameResult):
        raise TypeError(f"result must be a GameResult, got {type(result).__name__}")
    if result.member.all() or not result.member.any():
        raise ValueError("the game produced one class only; increase rounds")
    names = list(result.stats) if tests is None else list(tests)
    out = {}
    for name in names:
        m, nm = result.scores(name)
        out[name] = epsilon_lower_bound(m, nm, delta=delta, failure_prob=failure_prob,
                                        method=method, **audit_kwargs).to_dict()
    return out


def audit_mechanism(mech, rounds: int, seed, *, tau: int = 1, delta: float = 1e-5,
                    failure_prob: float = 0.05, method: str = "dkw",
                    tests=DEFAULT_AUDIT_TESTS, **audit_kwargs) -> dict:
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
    tau : int
        Insertion time in ``1..T`` (known to SeMI* and Final Observation).
    delta, failure_prob, method, tests, **audit_kwargs
        As in :func:`audit_game_result`.

    Returns
    -------
    dict
        ``epsilon_true`` / ``epsilon_true_tau`` (``None`` when the mechanism has no known
        guarantee), ``mechanism`` (its parameters), ``rounds``, ``tau``, ``delta``,
        ``failure_prob``, ``method`` and ``tests`` (``{name: AuditResult as dict}``).
    """
    from semi_core._validation import check_int

    rounds = check_int(rounds, "rounds", minimum=2)
    res = play_game(mech, rounds, seed, tau=tau, tests=tests)
    table = audit_game_result(res, delta=delta, failure_prob=failure_prob, method=method,
                              tests=tests, **audit_kwargs)
    try:
        eps1, eps_tau = mech.epsilon(delta, 1), mech.epsilon(delta, tau)
    except GroundTruthUnknown:
        eps1 = eps_tau = None
    out = {"mechanism": mech.params(), "epsilon_true": eps1, "epsilon_true_tau": eps_tau,
           "rounds": rounds, "tau": tau, "delta": delta, "failure_prob": failure_prob,
           "method": method, "tests": table}
    if hasattr(mech, "mu"):  # GDP mechanisms report their mu (whole release, and at step tau)
        out.update(mu=mech.mu(1), mu_tau=mech.mu(tau))
    return out
