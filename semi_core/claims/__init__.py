"""Registry of the seeds' claims, the checks that decide them, verdicts, errata and LaTeX.

One subpackage per seed paper (``semi_sequential_mi``, ``per_datum_leakage``,
``sequential_dp_auditing``, ``combining_mi_updates``, ``iha_parameters_vs_loss``), one module
per kind of check in it (``formulas``: the stated formulas; ``appendix_c``, ``experiments``,
...: what they are named after; ``system``: what the shipped system measures), each defining
``CLAIMS``, a list of :class:`Claim` records. The registry (:mod:`semi_core.claims.registry`:
:data:`SEED_MODULES`, :func:`all_claims`, :func:`verify`) is the one list that ``semi-core
verify``, the report and the errata page read. Use

>>> from semi_core.claims import all_claims, verify
>>> results = verify(seed="combining_mi_updates")          # doctest: +SKIP
>>> [r.verdict for r in results]                            # doctest: +SKIP

``semi-core verify`` is the command-line front end; :func:`errata_markdown` renders
``docs/errata.md`` and :func:`to_latex` a standalone LaTeX document.
"""

from __future__ import annotations

from ._core import (
    FAILS,
    HOLDS,
    HOLDS_UNDER,
    CheckContext,
    Claim,
    ClaimResult,
    Outcome,
    perturb_forms,
    summary,
    verify_claim,
)
from ._render import errata_markdown, to_latex
from .registry import (
    SEED_MODULES,
    all_claims,
    get_claim,
    select_claims,
    verify,
    write_errata,
)

__all__ = [
    "SEED_MODULES",
    "HOLDS",
    "FAILS",
    "HOLDS_UNDER",
    "Claim",
    "ClaimResult",
    "CheckContext",
    "Outcome",
    "all_claims",
    "get_claim",
    "select_claims",
    "verify",
    "verify_claim",
    "perturb_forms",
    "summary",
    "errata_markdown",
    "to_latex",
    "write_errata",
]
