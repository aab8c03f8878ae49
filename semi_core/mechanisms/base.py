r"""The :class:`Mechanism` protocol: what every system of the toolkit implements.

A *mechanism* releases a sequence of outputs :math:`o_1,\dots,o_T` from a dataset; the SeMI
game (SeMI seed Alg. 1-2) asks whether a target :math:`z^*` was inserted at step :math:`\tau`.
Everything downstream -- the generic game (:func:`semi_core.game.play`), the audits
(:mod:`semi_core.audit`), the CLI and the report -- talks to a mechanism only through:

``T``
    number of releases (``1`` for a one-shot mechanism such as a single trained model);
``release(member, tau, rng)``
    releases of ``R`` independent rounds, shape ``(R, T, ...)``: round ``r`` has the target in
    (``member[r]``) at step ``tau[r]``; all randomness comes from ``rng``;
``log_lr_steps(releases)``
    the auditor's per-step log-likelihood ratios :math:`\log\mathrm{LR}_t` of
    :math:`H_1^t` (target inserted at step :math:`t`) against :math:`H_0`, computed from the
    *releases only*, shape ``(R, T)``;
``epsilon(delta, tau=1)``
    the exact ground-truth :math:`\varepsilon(\delta)` where it is known, else
    :class:`GroundTruthUnknown`;
``params()``
    the validated parameters as a plain ``dict`` (JSON metadata of every result).

Optional: ``final_log_lr(releases, tau)`` (the Final Observation test on :math:`o_T`).
:class:`MechanismBase` turns these into every SeMI statistic (:meth:`MechanismBase.score`),
so a new seed writes its release law and its log-LR once and gets games, audits and reports.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np

from semi_core._names import SEMI_TESTS, Test
from semi_core.stats.statistics import semi_max, semi_star, semi_unif

__all__ = ["Mechanism", "MechanismBase", "GroundTruthUnknown", "is_mechanism"]


class GroundTruthUnknown(NotImplementedError):
    """Raised by :meth:`Mechanism.epsilon` when no exact privacy guarantee is known."""


@runtime_checkable
class Mechanism(Protocol):
    """Structural type of a mechanism (see the module docstring)."""

    T: int

    def release(self, member, tau, rng: np.random.Generator) -> np.ndarray:
        """Releases of ``len(member)`` rounds, shape ``(R, T, ...)``."""
        ...

    def log_lr_steps(self, releases) -> np.ndarray:
        """Per-step log-LRs from releases, shape ``(R, T)``."""
        ...

    def epsilon(self, delta: float, tau: int = 1) -> float:
        """Ground-truth epsilon at ``delta`` (raises :class:`GroundTruthUnknown`)."""
        ...

    def params(self) -> dict[str, Any]:
        """Validated parameters (plain, JSON-serialisable values)."""
        ...


def is_mechanism(obj) -> bool:
    """True when ``obj`` implements the :class:`Mechanism` protocol."""
    return isinstance(obj, Mechanism)


class MechanismBase:
    """Shared behaviour: the SeMI statistics from :meth:`log_lr_steps` and defaults.

    Subclasses set ``T`` and implement ``release``, ``log_lr_steps`` and ``params``; they may
    override ``epsilon`` (ground truth) and ``final_log_lr``.
    """

    T: int

    #: Tests this mechanism's :meth:`score` can compute (``final`` needs ``final_log_lr``).
    tests: tuple[str, ...] = SEMI_TESTS

    def epsilon(self, delta: float, tau: int = 1) -> float:
        """Ground-truth :math:`\\varepsilon(\\delta)`; unknown unless a subclass knows it."""
        raise GroundTruthUnknown(f"{type(self).__name__} has no exact privacy guarantee")

    def params(self) -> dict[str, Any]:  # pragma: no cover - subclasses override
        """Validated parameters as a plain dict."""
        return {"mechanism": type(self).__name__, "T": int(self.T)}

    def score(self, releases, tau, *, tests=None, unif_pmf=None) -> dict[str, np.ndarray]:
        r"""Every requested test statistic from releases (the auditor's side of Alg. 2).

        .. math::

            S^{*}=\log\mathrm{LR}_\tau,\quad S^{\max}=\max_t\log\mathrm{LR}_t,\quad
            S^{\mathrm{Unif}}=\log\textstyle\sum_t\pi_t\mathrm{LR}_t,\quad
            S^{\mathrm{final}}=\log\mathrm{LR}^{o_T}_\tau .

        Parameters
        ----------
        releases : ndarray, shape (R, T, ...)
        tau : int or ndarray of int, shape (R,)
            Insertion time known to SeMI* and Final Observation.
        tests : sequence of str, optional
            Subset of :attr:`tests` (default: all).
        unif_pmf : array_like, shape (T,), optional
            Prior :math:`\pi` of SeMI-Unif (uniform by default, as in the seed).

        Returns
        -------
        dict of str -> ndarray, shape (R,)
        """
        tests = tuple(self.tests if tests is None else tests)
        lr = self.log_lr_steps(releases)
        out: dict[str, np.ndarray] = {}
        for name in tests:
            if name == Test.SEMI_STAR:
                out[name] = semi_star(lr, tau)
            elif name == Test.SEMI_UNIF:
                out[name] = semi_unif(lr, unif_pmf)
            elif name == Test.SEMI_MAX:
                out[name] = semi_max(lr)
            elif name == Test.FINAL and hasattr(self, "final_log_lr"):
                out[name] = np.asarray(self.final_log_lr(releases, tau), dtype=float)
            else:
                raise ValueError(f"tests must be drawn from {list(self.tests)}, got {name!r}")
        return out
