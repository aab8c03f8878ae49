r"""MMD thresholds of (epsilon, delta)-DP and the success-probability bound of a DP game.

sequential_dp_auditing seed, §3.1 Theorem 3.1 / Definition 3.2 and App. A. For a kernel with
:math:`0\le K\le 1`, :math:`\|K(x,\cdot)-K(y,\cdot)\|_{\mathcal H}\le\sqrt2`, hence
:math:`\mathrm{MMD}(P,Q)\le\sqrt2\,\mathrm{TV}(P,Q)`, and an :math:`(\varepsilon,\delta)`-DP pair
has :math:`\mathrm{TV}\le(e^\varepsilon-1+2\delta)/(e^\varepsilon+1)` (the largest value of
:math:`1-\alpha-f(\alpha)` on the DP trade-off curve
:math:`f(\alpha)=\max\{0,1-\delta-e^\varepsilon\alpha,e^{-\varepsilon}(1-\delta-\alpha)\}`,
derived in :mod:`semi_core.symbolic.seqaudit`). So

.. math::

    \tau(\varepsilon,\delta) = \sqrt2\,\frac{e^\varepsilon-1+2\delta}{e^\varepsilon+1}
    = \sqrt2\Big(1-\frac{2(1-\delta)}{1+e^\varepsilon}\Big).

The balanced-prior guessing game has success probability :math:`(1+\mathrm{TV})/2`, so under
:math:`(\varepsilon,\delta)`-DP no guess is right with probability above

.. math:: p^*(\varepsilon,\delta) = \frac{e^\varepsilon+\delta}{1+e^\varepsilon}.
"""

from __future__ import annotations

import numbers

import numpy as np

from semi_core._validation import check_delta

__all__ = ["tau_mmd", "tau_auditorium", "tv_bound", "success_bound", "check_epsilon",
           "check_alpha", "BOUNDS"]

#: Names of the MMD thresholds: ``new`` (Thm 3.1) and ``auditorium`` (DP-Auditorium Thm 4.13).
BOUNDS = ("new", "auditorium")


def check_epsilon(epsilon, name: str = "epsilon") -> float:
    """A finite ``epsilon >= 0``.

    Parameters
    ----------
    epsilon : float
        The value.
    name : str
        Its name in the error message.

    Returns
    -------
    float
        The validated value.
    """
    if isinstance(epsilon, bool) or not isinstance(epsilon, numbers.Real):
        raise TypeError(f"{name} must be a real number >= 0, got {type(epsilon).__name__}")
    e = float(epsilon)
    if not (np.isfinite(e) and e >= 0):
        raise ValueError(f"{name} must be finite and >= 0, got {e}")
    return e


def check_alpha(alpha, name: str = "failure_prob") -> float:
    """The test level :math:`\\alpha` (rejection at wealth :math:`\\ge 1/\\alpha`): the toolkit's one
    failure-probability check, :func:`semi_core._validation.check_failure_prob`, range (0, 0.5].

    Parameters
    ----------
    alpha : float
        The level.
    name : str
        Its name in the error message.

    Returns
    -------
    float
        The validated level.
    """
    from semi_core._validation import check_failure_prob

    return check_failure_prob(alpha, name)


def tv_bound(epsilon: float, delta: float) -> float:
    r"""Largest total variation of an :math:`(\varepsilon,\delta)`-DP pair,
    :math:`(e^\varepsilon-1+2\delta)/(e^\varepsilon+1)` (evaluated as
    :math:`\tanh(\varepsilon/2)+2\delta/(e^\varepsilon+1)`, stable for large and small eps).

    Parameters
    ----------
    epsilon : float
        :math:`\varepsilon`, >= 0.
    delta : float
        :math:`\delta`, in [0, 1].

    Returns
    -------
    float
        The bound, in [0, 1].
    """
    e, d = check_epsilon(epsilon), check_delta(delta)
    return float(np.tanh(e / 2) + 2 * d / (np.exp(e) + 1) if e < 700 else 1.0)


def tau_mmd(epsilon: float, delta: float) -> float:
    r"""Theorem 3.1 threshold :math:`\tau(\varepsilon,\delta)=\sqrt2\,\mathrm{TV}_{\max}` (kernels
    with :math:`0\le K\le1`).

    Parameters
    ----------
    epsilon : float
        :math:`\varepsilon\ge0`.
    delta : float
        :math:`\delta\in[0,1)`.

    Returns
    -------
    float
        In :math:`[0,\sqrt2)`.
    """
    return float(np.sqrt(2.0) * tv_bound(epsilon, delta))


def tau_auditorium(epsilon: float, delta: float) -> float:
    r"""The older bound (DP-Auditorium Thm 4.13, seed App. A eq. 8):
    :math:`e^\varepsilon-1+(e^{-\varepsilon}+1)\delta` (kernels with :math:`K(x,x)\le1`).

    Parameters
    ----------
    epsilon : float
        :math:`\varepsilon`, >= 0.
    delta : float
        :math:`\delta`, in [0, 1].

    Returns
    -------
    float
        The threshold (``inf`` for huge epsilon).
    """
    e, d = check_epsilon(epsilon), check_delta(delta)
    with np.errstate(over="ignore"):  # e > 709.78: inf (the callers refuse an infinite tau)
        return float(np.expm1(e) + (np.exp(-e) + 1.0) * d)


def tau_for(bound: str, epsilon: float, delta: float) -> float:
    """Threshold by name (``new`` or ``auditorium``).

    Parameters
    ----------
    bound : {"new", "auditorium"}
        The bound.
    epsilon : float
        :math:`\\varepsilon`, >= 0.
    delta : float
        :math:`\\delta`, in [0, 1].

    Returns
    -------
    float
        The MMD threshold.
    """
    if bound == "new":
        return tau_mmd(epsilon, delta)
    if bound == "auditorium":
        return tau_auditorium(epsilon, delta)
    raise ValueError(f"bound must be one of {BOUNDS}, got {bound!r}")


def success_bound(epsilon: float, delta: float) -> float:
    r"""Largest success probability of a balanced guess against an :math:`(\varepsilon,\delta)`-DP
    mechanism: :math:`p^* = (e^\varepsilon+\delta)/(1+e^\varepsilon) = (1+\mathrm{TV}_{\max})/2`
    (capped at 1 when :math:`\delta` makes it exceed 1 -- it never does for :math:`\delta<1`).

    Parameters
    ----------
    epsilon : float
        :math:`\varepsilon`, >= 0.
    delta : float
        :math:`\delta`, in [0, 1].

    Returns
    -------
    float
        :math:`p^*`, in [1/2, 1].
    """
    return float(min(1.0, 0.5 * (1.0 + tv_bound(epsilon, delta))))
