"""SymPy derivations of the SeMI closed forms (the source of truth), with LaTeX and lambdify.

Every formula is derived from the conditional Gaussians of one transition and kept as a
:class:`~semi_core.symbolic._core.Derivation` next to the seed's printed form; see
:func:`all_derivations` (name -> Derivation) and ``semi-core derive``.

Topic modules (discovered: every public module here registers its derivations, see
:mod:`._registry`): :mod:`.gaussian` (generic log-LR, numeric :func:`gaussian_log_lr`),
:mod:`.empirical_mean` (Thm 3.1/3.4, per-step parameters, Final Observation),
:mod:`.errors` (Lemmas 3.5-3.8, B.5-B.6, thresholds), :mod:`.sgd` (Thm 4.1, DP-SGD, numeric
entry points :func:`sgd_log_lr`, :func:`dp_sgd_log_lr`, :func:`dp_sgd_coefficients`).
Each :class:`Derivation` has a display form for papers (``to_latex``), proven equal to it.

Seed errata found by the derivations: see the claims registry (``semi-core verify``,
``docs/errata.md``) and each ``Derivation.note``.
"""

from ._core import (
    Derivation,
    NcChi2CDF,
    NcChi2PPF,
    NcChi2SF,
    Phi,
    Phinv,
    is_zero,
    numeric_lambdify,
)
from ._registry import all_derivations, derivation_names, get_derivation
from .gaussian import gaussian_log_lr
from .sgd import dp_sgd_coefficients, dp_sgd_log_lr, sgd_log_lr

__all__ = [
    "Derivation",
    "Phi",
    "Phinv",
    "numeric_lambdify",
    "NcChi2CDF",
    "NcChi2SF",
    "NcChi2PPF",
    "all_derivations",
    "derivation_names",
    "get_derivation",
    "is_zero",
    "gaussian_log_lr",
    "sgd_log_lr",
    "dp_sgd_log_lr",
    "dp_sgd_coefficients",
]
