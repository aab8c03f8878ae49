r"""One-dimensional Online Newton Step (seed Alg. 3, Hazan, Agarwal & Kale 2007).

On :math:`[a,b]` with :math:`L`-Lipschitz, 1-exp-concave losses :math:`\ell_t`:

.. math::

    \beta = \tfrac12\min\{1/(4L(b-a)), 1\},\quad A_0 = 1/(\beta^2(b-a)^2),\quad
    A_t = A_{t-1} + g_t^2,\quad \lambda_{t+1} = \Pi_{[a,b]}\big(\lambda_t - g_t/(\beta A_t)\big).

Its regret is :math:`\sum_t\ell_t(\lambda_t)-\min_\lambda\sum_t\ell_t(\lambda)\le
5(1+L(b-a))\log t` (Hazan et al. Thm 2 with exp-concavity 1, one dimension); the seed's
Theorem E.1 prints :math:`10L(b-a)\log t` with the two sums in the opposite order, which is the
same bound only when :math:`L(b-a)=1` -- the case of Alg. 1, where :math:`b-a = 1/(4+2\tau)`,
:math:`L = 4+2\tau` (claims ``appE.1.constant`` and ``sec3.3.regret_sign``).

In Alg. 1 the loss is :math:`\ell_t(\lambda) = -\log(1+\lambda a_t)` with payoff
:math:`a_t = v_t-\tau`, gradient :math:`g_t = -a_t/(1+\lambda_t a_t)`.
"""

from __future__ import annotations

import numpy as np

__all__ = ["OnlineNewtonStep"]


class OnlineNewtonStep:
    """Seed Alg. 3 on ``[low, high]`` for ``lipschitz``-Lipschitz 1-exp-concave losses.

    Parameters
    ----------
    low, high : float
        The interval (``low < high``); the first play is ``low`` (Alg. 1 starts at
        :math:`\\lambda_1 = 0`).
    lipschitz : float
        :math:`L > 0`.
    """

    def __init__(self, low: float, high: float, lipschitz: float):
        if not (np.isfinite(low) and np.isfinite(high) and high > low):
            raise ValueError(f"ONS interval must satisfy low < high, got [{low}, {high}]")
        if not (np.isfinite(lipschitz) and lipschitz > 0):
            raise ValueError(f"lipschitz must be finite and > 0, got {lipschitz}")
        self.low, self.high, self.L = float(low), float(high), float(lipschitz)
        D = self.high - self.low
        self.beta = 0.5 * min(1.0 / (4.0 * self.L * D), 1.0)
        self.A = 1.0 / (self.beta**2 * D**2)
        self.lam = self.low

    def update(self, grad: float) -> float:
        """Feed the gradient of the last loss at the played point; return the next play.

        Parameters
        ----------
        grad : float
            Gradient of the last loss at the played point.

        Returns
        -------
        float
            The next play, within ``[low, high]``.
        """
        self.A += grad * grad
        self.lam = min(self.high, max(self.low, self.lam - grad / (self.beta * self.A)))
        return self.lam
