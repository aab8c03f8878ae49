"""The Crafter's insertion-time law, resolved from what a caller gives (one home for
:func:`semi_core.game.play.play` and the compiled engine; a light module, so that the engine
does not import the whole game-play module for it)."""

from __future__ import annotations

import numpy as np

from semi_core._validation import check_pmf, check_tau

__all__ = ["resolve_tau_pmf"]


def resolve_tau_pmf(T: int, tau) -> np.ndarray:
    """Insertion-time law :math:`\\nu_\\tau`: None/"uniform" -> uniform, int -> point mass,
    else a pmf over ``1..T``.

    Parameters
    ----------
    T : int
        Number of steps.
    tau : None, "uniform", int or array_like
        The law as given.

    Returns
    -------
    ndarray, shape (T,)
        The pmf.
    """
    if tau is None or (isinstance(tau, str) and tau == "uniform"):
        return np.full(T, 1.0 / T)
    if np.ndim(tau) == 0:
        p = np.zeros(T)
        p[check_tau(tau, T) - 1] = 1.0
        return p
    return check_pmf(tau, "tau (insertion-time pmf)", size=T)
