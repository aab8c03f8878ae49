"""Which seed paper each claim module belongs to, read from the sources without importing them.

``semi_core.claims`` imports SymPy and SciPy; the command line needs the seed names (``semi-core
verify --paper``) before deciding whether to import it, so the discovery lives here, free of
heavy imports.
"""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["SEED_ORDER", "claim_modules"]

#: Order of the seeds in listings and the errata (seeds not listed follow alphabetically).
SEED_ORDER = ("semi_sequential_mi", "per_datum_leakage", "sequential_dp_auditing",
              "combining_mi_updates")

_CLAIMS_DIR = Path(__file__).parent / "claims"


def claim_modules() -> dict[str, tuple[str, ...]]:
    """Seed name -> claim modules of :mod:`semi_core.claims`.

    Every public module of that package holds ``CLAIMS``; its seed is its ``SEED`` attribute,
    read from the source (default: the module name), so a system adds claims for a seed in a
    module of its own.

    Returns
    -------
    dict of str -> tuple of str
        Module names (``semi_core.claims.<name>``) per seed, seeds in :data:`SEED_ORDER`.
    """
    out: dict[str, list[str]] = {}
    for path in sorted(_CLAIMS_DIR.glob("*.py"), key=lambda p: p.stem):
        if path.stem.startswith("_"):
            continue
        hit = re.search(r'^SEED\s*=\s*"([a-z_]+)"', path.read_text(), re.M)
        out.setdefault(hit.group(1) if hit else path.stem, []).append(
            f"semi_core.claims.{path.stem}")
    first = [s for s in SEED_ORDER if s in out]
    return {k: tuple(out[k]) for k in first + sorted(set(out) - set(first))}
