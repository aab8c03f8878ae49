"""SymPy derivations of the SeMI closed forms (the source of truth), with LaTeX and lambdify.

Every formula is derived from the conditional Gaussians of one transition and kept as a
:class:`~semi_core.symbolic._core.Derivation` next to the seed's printed form; see
:func:`all_derivations` (name -> Derivation) and ``semi-core derive``.

Modules: :mod:`.gaussian` (generic log-LR, numeric :func:`gaussian_log_lr`),
:mod:`.empirical_mean` (Thm 3.1/3.4, per-step parameters, Final Observation),
:mod:`.errors` (Lemmas 3.5-3.8, B.5-B.6, thresholds), :mod:`.sgd` (Thm 4.1, DP-SGD, numeric
entry points :func:`sgd_log_lr`, :func:`dp_sgd_log_lr`, :func:`dp_sgd_coefficients`).

Seed errata found by the derivations (``semi_sequential_mi``; see each ``Derivation.note``):

* Lemma B.5: :math:`R^2(\\gamma)` carries :math:`n^2 m^*/2` where completing the square gives
  :math:`m^*/2` (so Cor B.6 as printed is wrong too); ``em_R2``, ``em_alpha``.
* Cor B.6 is stated for diagonal :math:`\\Sigma` but holds for any positive-definite
  :math:`\\Sigma` (whitening), and cites ":math:`R^2` as in Lemma 3.5" (it is Lemma B.5's).
* App. A.5 (proof of Lemma 3.7): the printed roots :math:`W_{1,2}` are wrong (centre divided by
  :math:`nT`, half-width by an extra :math:`\\sqrt{nT}`); the Lemma's statement is right;
  ``fo_root_lo_1d``, ``fo_root_hi_1d``.
* §4.2 / §5 apply Thm 4.1 to DP-SGD; with noise the true log-LR is the non-proportional form
  ``dp_sgd_log_lr_coord`` (Thm 4.1 is recovered only at :math:`\\sigma_{\\mathrm{DP}} = 0`).
"""

from ._core import (
    Derivation,
    NcChi2CDF,
    NcChi2PPF,
    NcChi2SF,
    Phi,
    all_derivations,
    get_derivation,
    is_zero,
)
from .gaussian import gaussian_log_lr
from .sgd import dp_sgd_coefficients, dp_sgd_log_lr, sgd_log_lr

__all__ = [
    "Derivation",
    "Phi",
    "NcChi2CDF",
    "NcChi2SF",
    "NcChi2PPF",
    "all_derivations",
    "get_derivation",
    "is_zero",
    "gaussian_log_lr",
    "sgd_log_lr",
    "dp_sgd_log_lr",
    "dp_sgd_coefficients",
]
