"""Ground-truth privacy of the audited DP-SGD run (seed ``semi_sequential_mi`` §4.2, §5.2).

Neighbouring relation realised by the SeMI game: **one record replaced**. Under
:math:`H_1^\\tau` the Crafter replaces one uniformly chosen element of batch :math:`D_\\tau` by
the canary :math:`z^*`; under :math:`H_0` that slot holds a fresh record. Each record is used in
exactly one step (fresh batches, no subsampling), so only step :math:`\\tau` sees the differing
record; the other steps are adaptive post-processing with a privacy loss of zero.

Derivation. Step :math:`\\tau` releases :math:`\\sum_i \\mathrm{clip}_C(g_i) + \\mathcal N(0,
\\sigma_{DP}^2 C^2 I)` (equivalently noise :math:`\\sigma_{DP} C/n` on the clipped mean). Replacing
one record moves the clipped sum by at most :math:`\\|g - g'\\|_2 \\le 2C`, so the step is a
Gaussian mechanism with sensitivity :math:`2C` and noise :math:`\\sigma_{DP}C`, i.e.
:math:`\\mu`-GDP with :math:`\\mu = 2/\\sigma_{DP}`; adaptive composition with :math:`T-1`
steps that are :math:`0`-GDP keeps :math:`\\mu`. The tight privacy profile is

.. math::

   \\delta(\\varepsilon) = \\Phi\\!\\left(-\\frac{\\varepsilon}{\\mu} + \\frac{\\mu}{2}\\right)
   - e^{\\varepsilon}\\,\\Phi\\!\\left(-\\frac{\\varepsilon}{\\mu} - \\frac{\\mu}{2}\\right).

Cross-check: ``dp_accounting`` PLD accountant with ``NeighboringRelation.REPLACE_ONE`` and a
``GaussianDpEvent(noise_multiplier=sigma_DP)`` (it uses sensitivity 2 for replace-one).
"""

from __future__ import annotations

import math

from scipy import optimize

from semi_core._validation import check_positive, check_probability
from semi_core.stats.gdp import gdp_delta, gdp_epsilon  # the one GDP accountant

__all__ = [
    "gdp_mu_from_sigma",
    "gdp_delta",
    "gdp_epsilon",
    "dpsgd_epsilon",
    "calibrate_sigma",
    "dp_accounting_epsilon",
    "poisson_pld_epsilon",
    "relation_epsilon",
]


def gdp_mu_from_sigma(sigma_dp: float) -> float:
    """GDP parameter of one DP-SGD step under replace-one: :math:`\\mu = 2/\\sigma_{DP}`.

    Parameters
    ----------
    sigma_dp : float
        Noise multiplier (noise std :math:`\\sigma_{DP}C` on the clipped sum), > 0.

    Returns
    -------
    float
        :math:`\\mu = 2/\\sigma_{DP}` (sensitivity :math:`2C` over noise :math:`\\sigma_{DP} C`).
    """
    return 2.0 / check_positive(sigma_dp, "sigma_dp")


def dpsgd_epsilon(sigma_dp: float, delta: float) -> float:
    """Exact :math:`\\varepsilon(\\delta)` of the audited run (one record replaced, used once).

    Returns ``inf`` for ``sigma_dp == 0`` (plain SGD, no privacy).

    Parameters
    ----------
    sigma_dp : float
        Noise multiplier, >= 0.
    delta : float
        The :math:`\\delta` of the profile, in (0, 1).

    Returns
    -------
    float
        :math:`\\varepsilon(\\delta)`, >= 0 (``inf`` without noise).
    """
    if sigma_dp == 0:
        return math.inf
    return gdp_epsilon(gdp_mu_from_sigma(sigma_dp), delta)


def calibrate_sigma(epsilon: float, delta: float) -> float:
    """Noise multiplier :math:`\\sigma_{DP}` whose run is exactly :math:`(\\varepsilon,\\delta)`-DP.

    Solves :math:`\\varepsilon_{2/\\sigma}(\\delta) = \\varepsilon` for :math:`\\mu` by Brent's
    method (``gdp_epsilon`` is increasing in :math:`\\mu`) and returns :math:`2/\\mu`.

    Parameters
    ----------
    epsilon : float
        Target :math:`\\varepsilon`, > 0.
    delta : float
        Target :math:`\\delta`, in (0, 1).

    Returns
    -------
    float
        The noise multiplier, > 0.

    Examples
    --------
    >>> sigma = calibrate_sigma(2.0, 1e-5)
    >>> print(f"{sigma:.4f}")
    3.9876
    >>> print(f"{dpsgd_epsilon(sigma, 1e-5):.6f}")
    2.000000
    """
    epsilon = check_positive(epsilon, "epsilon")
    delta = check_probability(delta, "delta")
    lo, hi = 1e-6, 1.0
    while gdp_epsilon(hi, delta) < epsilon:
        hi *= 2
        if hi > 1e4:
            raise ValueError(f"epsilon={epsilon} at delta={delta} needs mu > 1e4 (sigma_DP < "
                             "2e-4): outside the calibration range")
    mu = optimize.brentq(lambda m: gdp_epsilon(m, delta) - epsilon, lo, hi, xtol=1e-13)
    got = gdp_epsilon(mu, delta)
    if not abs(got - epsilon) <= 1e-6 * max(1.0, epsilon):  # never return a sigma off target
        raise ValueError(f"could not calibrate sigma_DP to epsilon={epsilon} at delta={delta} "
                         f"(closest epsilon {got:.6g})")
    return 2.0 / mu


def dp_accounting_epsilon(sigma_dp: float, delta: float, *, steps: int = 1) -> float:
    """Cross-check with ``dp_accounting`` (PLD, replace-one, one Gaussian step per record).

    ``steps`` > 1 composes that many Gaussian events (what a record used in several steps
    would cost); the audited run uses each record once, so ``steps=1`` is the ground truth.

    Parameters
    ----------
    sigma_dp : float
        Noise multiplier, > 0.
    delta : float
        The :math:`\\delta` of the profile, in (0, 1).
    steps : int
        Number of composed Gaussian events, >= 1.

    Returns
    -------
    float
        :math:`\\varepsilon(\\delta)` by the PLD accountant.
    """
    import dp_accounting as dpa
    from dp_accounting.pld.pld_privacy_accountant import PLDAccountant

    sigma_dp = check_positive(sigma_dp, "sigma_dp")
    delta = check_probability(delta, "delta")
    acc = PLDAccountant(dpa.NeighboringRelation.REPLACE_ONE, value_discretization_interval=1e-3)
    acc.compose(dpa.GaussianDpEvent(sigma_dp), int(steps))
    return float(acc.get_epsilon(delta))


def poisson_pld_epsilon(noise_multiplier: float, sample_rate: float, steps: int,
                        delta: float, *, relation: str = "add_or_remove") -> float:
    """:math:`\\varepsilon(\\delta)` of ``steps`` Poisson-subsampled Gaussian steps, tight up to
    discretisation: ``dp_accounting``'s PLD accountant (``value_discretization_interval=1e-3``,
    pessimistic, so an upper bound on the exact value).

    Parameters
    ----------
    noise_multiplier : float
        :math:`\\sigma_{DP} > 0`.
    sample_rate : float
        :math:`q \\in (0, 1]` (``1``: no sub-sampling).
    steps : int
        Composed steps, ``>= 1``.
    delta : float
    relation : {"add_or_remove", "replace_one"}

    Returns
    -------
    float
    """
    import dp_accounting as dpa
    from dp_accounting.pld.pld_privacy_accountant import PLDAccountant

    rel = {"add_or_remove": dpa.NeighboringRelation.ADD_OR_REMOVE_ONE,
           "replace_one": dpa.NeighboringRelation.REPLACE_ONE}
    if relation not in rel:
        raise ValueError(f"relation must be one of {list(rel)}, got {relation!r}")
    noise_multiplier = check_positive(noise_multiplier, "noise_multiplier")
    sample_rate = check_probability(sample_rate, "sample_rate", high_open=False)
    if not (isinstance(steps, int) and steps >= 1):
        raise ValueError(f"steps must be an int >= 1, got {steps!r}")
    delta = check_probability(delta, "delta")
    acc = PLDAccountant(rel[relation], value_discretization_interval=1e-3)
    event = dpa.GaussianDpEvent(float(noise_multiplier))
    if sample_rate < 1:
        event = dpa.PoissonSampledDpEvent(float(sample_rate), event)
    acc.compose(event, int(steps))
    return float(acc.get_epsilon(float(delta)))


def relation_epsilon(noise_multiplier: float, delta: float, *, sample_rate: float | None = None,
                     steps: int = 1) -> float:
    """:math:`\\varepsilon(\\delta)` of the relation a white-box user-loop audit plays.

    ``sample_rate=None`` (fixed or shuffled batches): one step holds the canary, one record
    replaced, :math:`\\mu = 2/\\sigma_{DP}` exactly (:func:`dpsgd_epsilon`; ``steps`` does
    not enter: the other steps are post-processing). ``sample_rate=q``: the canary is in the
    data set and each of ``steps`` steps holds it with probability :math:`q` (add/remove):
    :func:`poisson_pld_epsilon`.

    Parameters
    ----------
    noise_multiplier : float
    delta : float
    sample_rate : float, optional
    steps : int

    Returns
    -------
    float
    """
    if sample_rate is None:
        return dpsgd_epsilon(noise_multiplier, delta)
    if noise_multiplier == 0:
        return math.inf
    return poisson_pld_epsilon(noise_multiplier, sample_rate, steps, delta)
