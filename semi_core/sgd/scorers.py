r"""Scorers of the SGD games (:class:`~semi_core.game.play.Scorer`): the loss-based baselines.

The DP-SGD audit (:mod:`semi_core.sgd.audit`) and the linear-regression game
(:mod:`semi_core.sgd.linreg`) report, beside the SeMI statistics of the runner, the four
insertion-time-oblivious baselines of :mod:`semi_core.stats.update_combination` on the canary's
losses :math:`\ell_t=\ell(\theta_t;z^*)`, :math:`t=0..T`, along each released trajectory (seed
§5.2, after Jagielski et al. 2023). :class:`LossBaselines` is that scorer for any mechanism with
``canary_losses(releases) -> (R, T+1)``; it does not read :math:`\tau`, so
:func:`~semi_core.game.play.play_sweep` scores each chunk once for every swept :math:`\tau`.

The SGD games name their SeMI statistics after the seed's attacks: ``semi_sgd`` is SeMI*
(the DP-SGD log-LR at the known :math:`\tau`) and ``semi_max`` is SeMI-max
(:func:`attack_names`). NumPy only (the linear-regression game needs no torch).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from semi_core._names import Test
from semi_core.game.result import GameResult
from semi_core.stats.update_combination import BASELINES

__all__ = ["LossBaselines", "ATTACK_TESTS", "ATTACKS", "attack_names"]

#: Attack name -> runner test name of the SeMI statistics of the SGD games.
ATTACK_TESTS: dict[str, str] = {"semi_sgd": Test.SEMI_STAR.value,
                                "semi_max": Test.SEMI_MAX.value}
#: Every attack of the SGD games, in report order.
ATTACKS: tuple[str, ...] = (*ATTACK_TESTS, *BASELINES)


@dataclass(frozen=True)
class LossBaselines:
    """Scorer: Delta Diff, Delta Ratio, Back-Front Diff and Back-Front Ratio of the canary's
    losses along each trajectory (:data:`semi_core.stats.update_combination.BASELINES`).

    Parameters
    ----------
    mech : mechanism
        Any mechanism with ``canary_losses(releases) -> (R, T+1)`` (losses at
        :math:`\\theta_0..\\theta_T`); picklable for Dask workers.
    """

    mech: Any
    names: ClassVar[tuple[str, ...]] = tuple(BASELINES)
    tau_free: ClassVar[bool] = True

    def __call__(self, releases, tau, rng: np.random.Generator) -> dict[str, np.ndarray]:
        losses = self.mech.canary_losses(releases)
        return {name: fn(losses) for name, fn in BASELINES.items()}


def attack_names(res: GameResult) -> GameResult:
    """The result with its SeMI statistics renamed to the attack names (``semi-star`` ->
    ``semi_sgd``, ``semi-max`` -> ``semi_max``), attacks in :data:`ATTACKS` order.

    Parameters
    ----------
    res : GameResult
        A result of the SGD games.

    Returns
    -------
    GameResult
        The same games with renamed statistics.
    """
    back = {test: name for name, test in ATTACK_TESTS.items()}
    stats = {back.get(k, k): v for k, v in res.stats.items()}
    order = [a for a in ATTACKS if a in stats] + [k for k in stats if k not in ATTACKS]
    return GameResult(res.member, res.tau, {k: stats[k] for k in order}, res.seed,
                      dict(res.metadata), res.partial)
