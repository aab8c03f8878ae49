"""Ground truth of audited mechanisms: re-exports the one GDP accountant.

The accountant (:math:`\\mu`-GDP privacy profile, :math:`\\varepsilon(\\delta)`, Gaussian mechanism)
lives in :mod:`semi_core.stats.gdp` so that mechanisms (a lower layer) can state their own
ground truth; this module keeps the audit-facing names.
"""

from semi_core.stats.gdp import gaussian_mechanism_epsilon, gdp_delta, gdp_epsilon, gdp_log_delta

__all__ = ["gdp_delta", "gdp_log_delta", "gdp_epsilon", "gaussian_mechanism_epsilon"]
