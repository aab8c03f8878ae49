"""The claims registry: every registered :class:`~semi_core.claims.Claim`, by seed.

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

#: Seed name -> modules holding its ``CLAIMS`` (``semi_core.claims.<seed>.<module>``; the seed
#: files live in ``shared/seeds``); read from the file tree by
#: :func:`semi_core._seeds.claim_modules` (the CLI needs it without SymPy).
SEED_MODULES = claim_modules()


def all_claims(seed: str | None = None) -> list[Claim]:
    """Every registered claim, or those of one seed.

    Parameters
    ----------
    seed : str, optional
        A seed paper's name (a key of :data:`SEED_MODULES`); all seeds when omitted.

    Returns
    -------
    list of Claim
        In registry order: seeds as in :data:`SEED_MODULES`, then modules, then each module's
        ``CLAIMS``.

    Raises
    ------
    ValueError
        When ``seed`` is not a registered seed.
    """
    if seed is not None and seed not in SEED_MODULES:
        raise ValueError(f"seed must be one of {sorted(SEED_MODULES)}, got {seed!r}")
    names = [seed] if seed else list(SEED_MODULES)
    out: list[Claim] = []
    for name in names:
        for mod in SEED_MODULES[name]:
            out.extend(importlib.import_module(mod).CLAIMS)
    return out


def get_claim(claim_id: str) -> Claim:
    """Look a claim up by its full id (``"seed:label"``) or, if unambiguous, by its label.

    Parameters
    ----------
    claim_id : str
        ``"seed:label"`` as listed by ``semi-core verify --list``, or a label that only one
        seed uses.

    Returns
    -------
    Claim
        The one registered claim with that id (or label).

    Raises
    ------
    TypeError
        When ``claim_id`` is not a string.
    ValueError
        When no claim, or more than one, matches.
    """
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
    """Claims filtered by seed and/or claim id (both optional).

    Parameters
    ----------
    seed : str, optional
        Only the claims of this seed paper (a key of :data:`SEED_MODULES`).
    claim : str, optional
        Only this claim (see :func:`get_claim`); it must belong to ``seed`` when both are given.

    Returns
    -------
    list of Claim
        The selected claims in registry order.

    Raises
    ------
    ValueError
        When the seed or claim is unknown, or the claim belongs to another seed.
    """
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

    Returns
    -------
    list of ClaimResult
        One verdict per selected claim, in registry order.

    Raises
    ------
    ValueError
        When ``rng_seed`` is not a non-negative integer, or the selection is invalid
        (:func:`select_claims`).
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

    Parameters
    ----------
    path : str or os.PathLike
        The Markdown file to write (e.g. ``docs/errata.md``).
    results : list of ClaimResult, optional
        Verdicts to render; every registered claim is verified (quick sizes, seed 0) when
        omitted.

    Returns
    -------
    str
        The Markdown text written (:func:`semi_core.claims.errata_markdown`).
    """
    results = verify() if results is None else results
    text = errata_markdown(results)
    atomic_write_text(path, text, name="path")
    return text
