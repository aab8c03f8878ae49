"""The certification methods' names and the default (no imports: the CLI's ``--help`` reads them
without loading the bounds). :mod:`semi_core.audit.bounds` re-exports both."""

from __future__ import annotations

__all__ = ["METHODS", "DEFAULT_METHOD"]

#: Methods of :func:`semi_core.audit.bounds.epsilon_lower_bound` and ``audit_batch``.
METHODS = ("band", "joint", "dkw", "cp", "gdp", "one-run", "one-run-fdp")
#: The default: the tightest distribution-free method whose validity tests pass. ``joint`` is
#: above jax_privacy's two-sided Clopper-Pearson Bonferroni bound in every cell of
#: ``python -m benchmarks audit`` (mu in {.5, 1, 2} x {1e3, 1e4} per side x delta in {1e-5, .1})
#: and at >= 0.97 of the oracle ceiling, with its over-claims within the binomial interval of
#: its level on every score family there (ties and non-GDP mechanisms included), at about
#: 3 ms per audit of 1e4 per side; ``band`` is below the peer in every cell.
DEFAULT_METHOD = "joint"
