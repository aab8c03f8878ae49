"""The outcome of :func:`~semi_core.integrations.opacus.audit_opacus` (:class:`OpacusAuditReport`)
and the bounds it holds: every (test, method) bound and the Bonferroni-corrected refutation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from semi_core._table import ResultDisplay, Table
from semi_core.audit.report import AuditReport, certify_game, refutation_bounds
from semi_core.game.result import GameResult

__all__ = ["OpacusAuditReport", "BOUND_METHODS"]


#: (name, epsilon_lower_bound kwargs) of the bounds computed for every test.
BOUND_METHODS = {"band": {"method": "band"}, "dkw": {"method": "dkw"}, "cp": {"method": "cp"},
                 "gdp": {"method": "gdp"}, "gdp_gaussian": {"method": "gdp", "gdp_fit": "gaussian"}}
NONPARAMETRIC = ("band", "dkw", "cp")


@dataclass(frozen=True, repr=False)
class OpacusAuditReport(AuditReport):
    """Outcome of :func:`audit_opacus`: an :class:`~semi_core.audit.report.AuditReport` (every
    test x method of :data:`BOUND_METHODS`) with the Opacus-specific verdicts.

    Prints as one line (the claim, the truth where known, the verdicts); ``summary()`` is a
    table of every certified bound (one row per test and method) beside the claim and the
    accountants, ``to_frame()`` the same as a ``DataFrame``, ``to_dict()`` everything (JSON).

    Attributes
    ----------
    bounds : dict
        ``{test: {method: AuditResult}}`` for methods ``band``, ``dkw``, ``cp``
        (nonparametric), ``gdp`` and ``gdp_gaussian`` (GDP route), each at ``failure_prob``
        (``report.epsilon_lower_bound(test, method)``).
    epsilon_accountant : dict
        Opacus' ``{"rdp": eps, "prv": eps}`` for the user's configuration (add/remove,
        Poisson rate ``q = batch_size / N``, ``steps``).
    epsilon_true : float or None
        Exact :math:`\\varepsilon(\\delta)` of the audited run where known (see module
        docstring; for a bug with known effect, of the buggy run; ``inf`` when it has none).
    epsilon_claimed : float
        The claim under test.
    claim_refuted : bool
        Nonparametric refutation at confidence ``1 - failure_prob`` (Bonferroni over every
        test and nonparametric method: ``refutation``).
    claim_refuted_gdp : bool or None
        Gaussian-score GDP-route refutation (module docstring); ``None`` where not valid.
    """

    epsilon_accountant: dict = field(default_factory=dict)
    epsilon_true: float | None = None
    epsilon_claimed: float = math.nan
    claim_refuted: bool = False
    claim_refuted_gdp: bool | None = None
    refutation: dict = field(default_factory=dict)
    neighbouring_relation: str = ""
    accountant_relation: str = ""
    warnings: list = field(default_factory=list)
    config: dict = field(default_factory=dict)
    setup: dict = field(default_factory=dict)
    timing: dict = field(default_factory=dict)

    _repr_fields = ("epsilon_claimed", "epsilon_true", "claim_refuted", "claim_refuted_gdp")

    def __repr__(self) -> str:
        return ResultDisplay.__repr__(self)

    def summary(self) -> Table:
        """One row per test and method.

        Returns
        -------
        Table
            ``test, method, epsilon_lower_bound, largest_certifiable`` (the largest bound these
            games could give: a 0 beside a small ceiling means "too few runs", not "private"),
            ``refutes`` (the bound exceeds the claim), under a title with the claim, the true
            epsilon where known, the accountants and the two verdicts.
        """
        rows = [{"test": t, "method": m, "epsilon_lower_bound": float(r.epsilon_lower_bound),
                 "largest_certifiable": self.epsilon_max_certifiable(t, m),
                 "refutes": bool(r.epsilon_lower_bound > self.epsilon_claimed)}
                for t, m, r in self.items()]
        acc = ", ".join(f"{k} {v:.4g}" for k, v in self.epsilon_accountant.items()
                        if isinstance(v, int | float))
        title = (f"{self!r}\n{self.accountant_relation}: {acc or 'none'}\n"
                 f"audited: {self.neighbouring_relation}; delta {self.config.get('delta')}, "
                 f"failure probability {self.config.get('failure_prob')}")
        return Table(rows, title=title)

    def to_dict(self) -> dict:
        """JSON-ready dict.

        Returns
        -------
        dict
            ``epsilon_lower_bound`` as ``{test: {method: float}}``, the verdicts and settings,
            the per-test :class:`~semi_core.audit.bounds.AuditResult` dicts under ``bounds``,
            the game as counts.
        """
        out = {"epsilon_lower_bound": {t: {m: float(r.epsilon_lower_bound)
                                           for m, r in per.items()}
                                       for t, per in self.bounds.items()}}
        out.update({k: getattr(self, k) for k in (
            "epsilon_accountant", "epsilon_true", "epsilon_claimed", "claim_refuted",
            "claim_refuted_gdp", "refutation", "neighbouring_relation", "accountant_relation",
            "warnings", "config", "setup", "timing")})
        out["bounds"] = self.bounds_dict()
        out["game"] = None if self.game is None else self.game.to_dict()
        return out

    def _entries(self) -> dict:
        out = self.to_dict()
        out["game"] = self.game
        return out


def _certify(game: GameResult, *, delta, failure_prob, seed) -> tuple[dict, dict]:
    """Every test by every method of :data:`BOUND_METHODS`: ``(bounds, ceilings)``."""
    return certify_game(game, BOUND_METHODS, delta=delta, failure_prob=failure_prob, seed=seed)


#: Statistics that are exactly equal-variance Gaussian in both worlds for an isolated Dirac
#: canary on fixed batches (correct run and every mechanism bug of the zoo).
GAUSSIAN_TESTS = ("dirac", "dirac_contrast")


def _refute(game: GameResult, claimed: float, *, delta, failure_prob, seed,
            gaussian_valid: bool, reason: str = "") -> dict:
    """Best Bonferroni-corrected bounds against the claim: nonparametric over every test, and
    the Gaussian-score GDP route over :data:`GAUSSIAN_TESTS` where ``gaussian_valid``."""
    out = {}
    groups = [("nonparametric", NONPARAMETRIC, list(game.stats))]
    if gaussian_valid:
        groups.append(("gdp", ("gdp_gaussian",), [t for t in GAUSSIAN_TESTS if t in game.stats]))
    for group, methods, tests in groups:
        K = len(tests) * len(methods)  # refutation_bounds certifies each pair at beta / K
        bounds = refutation_bounds(game, {m: BOUND_METHODS[m] for m in methods}, delta=delta,
                                   failure_prob=failure_prob, tests=tests, seed=seed)
        best, arg = 0.0, None
        for name in methods:  # method-major: the first of equal bounds names the pair
            for t in tests:
                r = bounds[t][name]
                if r.epsilon_lower_bound > best:
                    best, arg = float(r.epsilon_lower_bound), f"{t}/{name}"
        out[group] = {"epsilon_lower_bound": best, "test": arg, "bonferroni_k": K,
                      "refuted": bool(best > claimed)}
    if not gaussian_valid:
        out["gdp"] = {"epsilon_lower_bound": None, "test": None, "bonferroni_k": 0,
                      "refuted": None, "not_applicable": reason}
    return out
