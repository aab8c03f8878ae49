"""Opacus' own accountants (RDP and PRV) for a configuration: the epsilon a user would quote.

:func:`poisson_pld_epsilon` (the ``dp_accounting`` PLD, the ground truth under Poisson sampling)
is re-exported from its home, :mod:`semi_core.sgd.accounting`.
"""

from __future__ import annotations

import warnings

from semi_core.integrations.opacus._common import _opacus
from semi_core.sgd.accounting import poisson_pld_epsilon

__all__ = ["opacus_accountant_epsilon", "poisson_pld_epsilon"]


def opacus_accountant_epsilon(noise_multiplier: float, sample_rate: float, steps: int,
                              delta: float, *, warnings_out: list | None = None) -> dict[str, float]:
    """Opacus' RDP and PRV accountants (add/remove, Poisson rate ``sample_rate``, ``steps``);
    their warnings are appended to ``warnings_out``.

    Parameters
    ----------
    noise_multiplier : float
        :math:`\\sigma_{DP}`, > 0.
    sample_rate : float
        Poisson sampling rate, in (0, 1].
    steps : int
        Number of steps.
    delta : float
        The :math:`\\delta` of the profile, in (0, 1).
    warnings_out : list, optional
        Receives the accountants' warning messages.

    Returns
    -------
    dict of str to float
        :math:`\\varepsilon(\\delta)` of each accountant (``rdp``, ``prv``).
    """
    _opacus()
    from opacus.accountants import PRVAccountant, RDPAccountant

    out = {}
    caught = [] if warnings_out is None else warnings_out
    for name, cls in (("rdp", RDPAccountant), ("prv", PRVAccountant)):
        acc = cls()
        acc.history = [(float(noise_multiplier), float(sample_rate), int(steps))]
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            out[name] = float(acc.get_epsilon(delta=float(delta)))
        caught.extend(f"Opacus {name} accountant: {x.message}" for x in w)
    return out
