"""Which seed paper each claim module belongs to, read from the file tree without importing it.

``semi_core.claims`` imports SymPy and SciPy; the command line needs the seed names (``semi-core
verify --paper``) before deciding whether to import it, so the discovery lives here, free of
heavy imports. The claims registry (:mod:`semi_core.claims`) reads the same mapping.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["SEED_ORDER", "claim_modules"]

#: Order of the seeds in listings and the errata (seeds not listed follow alphabetically).
SEED_ORDER = ("semi_sequential_mi", "per_datum_leakage", "sequential_dp_auditing",
              "combining_mi_updates")

_CLAIMS_DIR = Path(__file__).parent / "claims"

#: Module order inside a seed's package: the seed's stated formulas first, the checks that run
#: the shipped system last, the other modules (appendices, experiments, ...) alphabetically
#: in between.
_FIRST, _LAST = "formulas", "system"


def _module_rank(stem: str) -> tuple[int, str]:
    return (0 if stem == _FIRST else 2 if stem == _LAST else 1, stem)


def claim_modules() -> dict[str, tuple[str, ...]]:
    """Seed name -> claim modules of :mod:`semi_core.claims`.

    Every public subpackage of :mod:`semi_core.claims` is one seed paper (named as the seed
    file's stem, ``per_datum_leakage`` for ``per_datum_leakage.txt``); every public module in it
    holds ``CLAIMS``, named by what it checks (``formulas``, ``appendix_c``, ``system``, ...).

    Returns
    -------
    dict of str -> tuple of str
        Module names (``semi_core.claims.<seed>.<module>``) per seed, seeds in
        :data:`SEED_ORDER` (others alphabetically), modules ``formulas`` first and ``system``
        last.
    """
    out: dict[str, tuple[str, ...]] = {}
    for pkg in sorted(_CLAIMS_DIR.iterdir()):
        if pkg.name.startswith(("_", ".")) or not (pkg / "__init__.py").is_file():
            continue
        stems = sorted((p.stem for p in pkg.glob("*.py") if not p.stem.startswith("_")),
                       key=_module_rank)
        out[pkg.name] = tuple(f"semi_core.claims.{pkg.name}.{s}" for s in stems)
    first = [s for s in SEED_ORDER if s in out]
    return {k: out[k] for k in first + sorted(set(out) - set(first))}
