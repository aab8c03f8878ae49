"""The validated configuration of an Opacus audit (:class:`OpacusAuditConfig`) and the checks
made before any model is trained: the canary's update resolvable, the work able to finish.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

import torch

from semi_core._validation import (
    check_delta,
    check_failure_prob,
    check_int,
    check_positive,
    check_work,
)
from semi_core.game.backends import Executor
from semi_core.integrations.opacus._common import CANARIES, ENGINES, SAMPLERS
from semi_core.sgd.bugs import get_bug
from semi_core.stats.update_combination import BASELINES

__all__ = ["OpacusAuditConfig"]


@dataclass(frozen=True)
class OpacusAuditConfig:
    """What :func:`audit_opacus` audits and how: validated as a whole on construction, before
    any model is built or trained (every field is a keyword of :func:`audit_opacus`).

    Attributes
    ----------
    noise_multiplier, max_grad_norm : float > 0
        :math:`\\sigma_{DP}` and :math:`C` (finite).
    batch_size, steps : int
        ``n >= 2`` and ``T >= 1``.
    canary : {"dirac", "gradient-mahalanobis", "input"}
    tau : int in 1..T or None
        Insertion step (``sampler="fixed"``; ignored for ``"poisson"``).
    rounds : int >= 2
        Runs; each carries ``canaries_per_run`` games.
    delta : float in (0, 1)
        Where Opacus' accountants and the exact :math:`\\varepsilon` can be computed (checked
        by :func:`audit_opacus` before training).
    lr : float > 0
        SGD learning rate (finite).
    sampler : {"fixed", "poisson"}
    bug : str or None
        A bug of :data:`semi_core.sgd.bugs.BUGS`.
    canaries_per_run : int in 1..batch_size
        Dirac canaries per run (``> 1`` needs ``canary="dirac"``).
    dirac_scale : float >= 1
        The Dirac canary's gradient norm in units of ``C``.
    failure_prob : float in (0, 0.5]
    engine : {"opacus", "batched"}
    semi : bool or "tau"
    n_reference : int >= 2
        Reference records for the gradient statistics.
    runs_per_chunk : int >= 1
        Runs per chunk of the game runner (the unit of work and of seeding).
    """

    noise_multiplier: float
    max_grad_norm: float
    batch_size: int
    steps: int
    canary: str = "dirac"
    tau: int | None = 5
    rounds: int = 1000
    delta: float = 1e-5
    lr: float = 0.5
    sampler: str = "fixed"
    bug: str | None = None
    canaries_per_run: int = 1
    dirac_scale: float = 4.0
    failure_prob: float = 0.05
    engine: str = "opacus"
    semi: bool | str = True
    n_reference: int = 128
    runs_per_chunk: int = 64

    def __post_init__(self):
        def put(name, value):
            object.__setattr__(self, name, value)

        put("noise_multiplier", check_positive(self.noise_multiplier, "noise_multiplier"))
        put("max_grad_norm", check_positive(self.max_grad_norm, "max_grad_norm"))
        put("lr", check_positive(self.lr, "lr"))
        put("batch_size", check_int(self.batch_size, "batch_size", minimum=2))
        put("steps", check_int(self.steps, "steps", minimum=1))
        put("rounds", check_int(self.rounds, "rounds", minimum=2))
        delta = check_delta(self.delta)
        if delta == 0:
            raise ValueError("delta must be in (0, 1) for the accountants, got 0")
        put("delta", delta)
        put("failure_prob", check_failure_prob(self.failure_prob))
        if self.canary not in CANARIES:
            raise ValueError(f"canary must be one of {CANARIES}, got {self.canary!r}")
        if self.sampler not in SAMPLERS:
            raise ValueError(f"sampler must be one of {SAMPLERS}, got {self.sampler!r}")
        if self.engine not in ENGINES:
            raise ValueError(f"engine must be one of {ENGINES}, got {self.engine!r}")
        if self.semi is not True and self.semi is not False and self.semi != "tau":
            raise ValueError(f"semi must be True, False or 'tau', got {self.semi!r}")
        the_bug = get_bug(self.bug)
        put("bug", None if the_bug is None else the_bug.name)
        put("canaries_per_run", check_int(self.canaries_per_run, "canaries_per_run",
                                          minimum=1, maximum=self.batch_size))
        if self.canaries_per_run > 1 and self.canary != "dirac":
            raise ValueError("canaries_per_run > 1 needs canary='dirac'")
        scale = check_positive(self.dirac_scale, "dirac_scale")
        if scale < 1:
            raise ValueError(f"dirac_scale must be >= 1 (the canary's gradient norm is "
                             f"dirac_scale * C and must reach the clip norm), got {scale}")
        put("dirac_scale", scale)
        put("n_reference", check_int(self.n_reference, "n_reference", minimum=2))
        put("runs_per_chunk", check_int(self.runs_per_chunk, "runs_per_chunk", minimum=1))
        if self.sampler == "fixed":
            if self.tau is None:
                raise ValueError(f"tau must be an integer in 1..{self.steps} for "
                                 "sampler='fixed'")
            put("tau", check_int(self.tau, "tau", minimum=1, maximum=self.steps))
        else:
            if self.engine == "batched":
                raise ValueError("engine='batched' replays fixed batches: use sampler='fixed'")
            if the_bug is not None and the_bug.misreports_accounting:
                raise ValueError("bug 'sampling_rate_misreport' misreports fixed batches as "
                                 "Poisson: use sampler='fixed'")
            if self.canary not in ("dirac", "input"):
                raise ValueError("sampler='poisson' supports canary='dirac' or 'input'")
            put("tau", 1)  # not used: Opacus' Poisson sampler decides when the canary is seen
        # the trajectory must stay finite: |update| <= lr (C + noise) per step
        growth = self.lr * self.max_grad_norm * (1.0 + 10.0 * self.noise_multiplier) * (
            self.steps * self.dirac_scale)
        if not growth < _MAX_GROWTH:
            raise ValueError(f"lr * max_grad_norm * (1 + 10 noise_multiplier) * steps * "
                             f"dirac_scale = {growth:.3g} bounds the parameters' growth and "
                             f"must stay below {_MAX_GROWTH:.0e} (far from overflow): lower lr, "
                             "max_grad_norm, noise_multiplier or steps")

    @property
    def games(self) -> int:
        """Canary games: ``rounds`` runs times the canaries per run (one under Poisson)."""
        return self.rounds * (self.canaries_per_run if self.sampler == "fixed" else 1)

    def to_dict(self) -> dict:
        """The fields as a plain dict.

        Returns
        -------
        dict of str
            Every field by name.
        """
        return {f.name: getattr(self, f.name) for f in fields(self)}


#: Largest ``lr * C * (1 + 10 sigma) * T * scale`` accepted: parameters stay far from overflow.
_MAX_GROWTH = 1e100
#: Seconds per trained step assumed by the up-front work estimate (an optimistic floor, so
#: only work that cannot finish is refused): Opacus' hooks path and the batched trainer.
_SECONDS_PER_STEP = {"opacus": 1e-3, "batched": 2e-5}
#: Opacus' PRV accountant: bytes and (floor) seconds per accounted step (measured: 0.3 GB and
#: about 10 s at 10^4 steps).
_PRV_BYTES_PER_STEP = 2.5e4
_PRV_SECONDS_PER_STEP = 1e-4


def _check_resolution(cfg: OpacusAuditConfig, theta0: torch.Tensor) -> None:
    r"""The canary's share of an update, :math:`\eta C / n`, must be resolvable in the
    parameters' precision (relative rounding error of :math:`\theta_t - \theta_{t-1}` at most
    1 %); below it every score would be rounding noise."""
    step = cfg.lr * cfg.max_grad_norm / cfg.batch_size
    scale = max(1.0, float(theta0.abs().max()))
    floor = 100.0 * torch.finfo(theta0.dtype).eps * scale
    if not step >= floor:
        raise ValueError(f"lr * max_grad_norm / batch_size = {step:.3g} is below the resolution "
                         f"of the model's {theta0.dtype} parameters (|theta| up to {scale:.3g}: "
                         f"needs >= {floor:.3g}): the canary's update would be lost in rounding; "
                         "raise lr or max_grad_norm")


def _check_audit_work(cfg: OpacusAuditConfig, ex: Executor) -> None:
    """Refuse, before anything is built, work that cannot finish: the runs and their scores,
    and Opacus' PRV accountant (whose grid grows with the number of steps)."""
    stats = 4 + len(BASELINES)
    check_work(f"audit_opacus: {cfg.rounds} runs x {cfg.steps} steps ({cfg.engine} engine) and "
               f"Opacus' PRV accountant over {cfg.steps} steps",
               nbytes=max(8.0 * cfg.games * (stats + 2), _PRV_BYTES_PER_STEP * cfg.steps),
               seconds=cfg.rounds * cfg.steps * _SECONDS_PER_STEP[cfg.engine] / max(
                   1, ex.parallelism) + _PRV_SECONDS_PER_STEP * cfg.steps,
               hint="fewer rounds or steps, or more workers (--workers/--scheduler)")


def _config(config, options) -> OpacusAuditConfig:
    if config is None:
        return OpacusAuditConfig(**options)
    if not isinstance(config, OpacusAuditConfig):
        raise TypeError(f"config must be an OpacusAuditConfig, got {type(config).__name__}")
    return replace(config, **options) if options else config
