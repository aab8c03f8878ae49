"""The claims registry: every registered :class:`~semi_core.claims._core.Claim`, by seed.

One subpackage of :mod:`semi_core.claims` per seed paper, one module per kind of check in it
(``formulas``, ``appendix_c``, ``experiments``, ``system``, ...), each defining ``CLAIMS``; the
mapping seed -> modules is read from the file tree by :func:`semi_core._seeds.claim_modules`
(the command line needs the seed names without importing SymPy). ``semi-core verify``, the
report's claims section and the errata page all read the claims through the functions here.
"""

from __future__ import annotations

import importlib

from semi_core._io import atomic_write_text
from semi_core._seeds import claim_modules

from ._core import Claim, ClaimResult, verify_claim
from ._render import errata_markdown

__all__ = ["SEED_MODULES", "all_claims", "get_claim", "select_claims", "verify", "write_errata"]

#: Seed name -> modules holding its ``CLAIMS`` (the seed files live in ``shared/seeds``); read
#: from the sources by :func:`semi_core._seeds.claim_modules` (the CLI needs it without SymPy).
SEED_MODULES = claim_modules()


def all_claims(seed: str | None = None) -> list[Claim]:
    """Every registered claim, or those of one seed (``seed`` as in :data:`SEED_MODULES`)."""
    if seed is not None and seed not in SEED_MODULES:
        raise ValueError(f"seed must be one of {sorted(SEED_MODULES)}, got {seed!r}")
    names = [seed] if seed else list(SEED_MODULES)
    out: list[Claim] = []
    for name in names:
        for mod in SEED_MODULES[name]:
            out.extend(importlib.import_module(mod).CLAIMS)
    return out


def get_claim(claim_id: str) -> Claim:
    """Look a claim up by its full id (``"seed:label"``) or, if unambiguous, by its label."""
    if not isinstance(claim_id, str):
        raise TypeError(f"claim_id must be a string, got {type(claim_id).__name__}")
    claims = all_claims()
    hits = [c for c in claims if c.id == claim_id] or [c for c in claims if c.label == claim_id]
    if len(hits) != 1:
        what = "ambiguous" if hits else "unknown"
        raise ValueError(f"claim_id {claim_id!r} is {what}; use one of the ids listed by "
                         "`semi-core verify --list` (format seed:label)")
    return hits[0]


def select_claims(seed: str | None = None, claim: str | None = None) -> list[Claim]:
    """Claims filtered by seed and/or claim id (both optional)."""
    if claim is not None:
        c = get_claim(claim)
        if seed is not None and c.seed != seed:
            raise ValueError(f"claim {claim!r} belongs to seed {c.seed!r}, not {seed!r}")
        return [c]
    return all_claims(seed)


def verify(seed: str | None = None, claim: str | None = None, *, quick: bool = True,
           rng_seed: int = 0, progress=None) -> list[ClaimResult]:
    """Run the checks and return one :class:`ClaimResult` per selected claim.

    Parameters
    ----------
    seed : str, optional
        Restrict to one seed paper (see :data:`SEED_MODULES`).
    claim : str, optional
        Restrict to one claim id.
    quick : bool
        Smaller Monte Carlo sizes (tolerances are still a fixed number of standard errors).
    rng_seed : int
        Root seed of the Monte Carlo checks (results are reproducible for a given value).
    progress : callable, optional
        Called with each claim id before it is checked.
    """
    if isinstance(rng_seed, bool) or not isinstance(rng_seed, int) or rng_seed < 0:
        raise ValueError(f"rng_seed must be a non-negative integer, got {rng_seed!r}")
    results = []
    for c in select_claims(seed, claim):
        if progress is not None:
            progress(c.id)
        results.append(verify_claim(c, quick=quick, seed=rng_seed))
    return results


def write_errata(path, results: list[ClaimResult] | None = None) -> str:
    """Run every check (unless ``results`` are given) and write the errata Markdown to ``path``.

    The file is written atomically and never through a link
    (:func:`semi_core._io.atomic_write_text`).
    """

    results = verify() if results is None else results
    text = errata_markdown(results)
    atomic_write_text(path, text, name="path")
    return text
