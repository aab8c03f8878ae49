"""What defines one update experiment: :class:`UpdateConfig` (validated; errors name the field)
and the allowed scores, thresholds, datasets, models and shifts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from semi_core._validation import check_int, check_positive

from ..training import OPTIMIZERS, UPDATES, TrainConfig

__all__ = ["UpdateConfig", "DEFAULT_LR", "SCORES", "THRESHOLDS", "DATASETS", "MODELS", "SHIFTS",
           "check_shift_pairs"]


#: Default learning rates (base, SGD-New, SGD-Full) per optimizer: SGD's are tuned for features
#: in [0, 1] (digits); Adam's keep the seed's ratios (New a tenth of Full, Full = base, §5.1).
DEFAULT_LR = {"sgd": (0.2, 0.05, 0.2), "adam": (0.01, 0.001, 0.01)}

SCORES = ("loss", "lira")
THRESHOLDS = ("batch", "transfer", "rank")
DATASETS = ("digits", "file")
MODELS = ("logreg", "mlp")
_SRC, _TGT = (0, 1, 2, 5, 6, 7), (3, 4, 8, 9)
#: Distribution-shift settings (§5.6, ``shift_alpha > 0``): BREEDS-like subpopulation shift on
#: fixed digit subclasses; its Hard / Easy pairs; covariate shift, Hard / Easy; the user's own
#: (source, target) subclass pairs (``shift_pairs``: App. C's CINIC-10 Table 8 / 9 layout).
SHIFTS = ("subpopulation", "subpop-hard", "subpop-easy", "covariate-hard", "covariate-easy",
          "subpop-pairs")


def check_shift_pairs(pairs, name: str = "shift_pairs") -> tuple[tuple[int, int], ...]:
    """``((source, target), ...)``: at least two pairs of distinct labels, no label twice.

    Parameters
    ----------
    pairs : sequence of (int, int)
        One (source subclass, target subclass) label pair per class of the task.
    name : str
        The argument's name for the error messages.

    Returns
    -------
    tuple of (int, int)
        The pairs.
    """
    try:
        out = tuple((int(a), int(b)) for a, b in pairs)
        ok = all(float(a) == int(a) and float(b) == int(b) for a, b in pairs)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be (source, target) label pairs, got {pairs!r}") from None
    if not ok:
        raise ValueError(f"{name} labels must be integers, got {pairs!r}")
    if len(out) < 2:
        raise ValueError(f"{name} needs at least 2 (source, target) pairs (one per class of "
                         f"the task), got {len(out)}")
    flat = [v for pr in out for v in pr]
    if min(flat) < 0:
        raise ValueError(f"{name} labels must be >= 0, got {out}")
    if len(set(flat)) != len(flat):
        raise ValueError(f"{name}: every label may appear once (source or target of one "
                         f"class), got {out}")
    return out


@dataclass(frozen=True)
class UpdateConfig:
    """Everything that defines one experiment (validated; errors name the field).

    Defaults mirror the seed's FMNIST setting scaled to digits: logistic regression, ``n0``
    = 300, SGD-New 10 epochs at a tenth of the base rate... rescaled so that the update moves
    the model (digits features in [0, 1]); SGD-Full fewer epochs on the union at the base rate.
    ``optimizer="adam"`` trains every phase with Adam (the seed's choice for CIFAR-10 and IMDb);
    a learning rate left at ``None`` takes its optimizer's default (:data:`DEFAULT_LR`).
    """

    dataset: str = "digits"
    model: str = "logreg"
    update: str = "sgd-new"
    k: int = 1
    n_up: int = 10
    n0: int = 300
    trials: int = 20
    n_ref: int = 8
    c: float = 1e-3
    base_epochs: int = 30
    base_lr: float | None = None
    new_epochs: int = 10
    new_lr: float | None = None
    full_epochs: int = 3
    full_lr: float | None = None
    optimizer: str = "sgd"
    batch_size: int = 32
    hidden: int = 64
    shift_alpha: float = 0.0
    shift: str = "subpopulation"
    shift_pairs: tuple[tuple[int, int], ...] | None = None
    data: str | None = None
    label_column: int | str = 0
    clip: float | None = None
    sigma_dp: float = 0.0
    seed: int = 0

    def __post_init__(self):
        if self.optimizer not in OPTIMIZERS:
            raise ValueError(f"optimizer must be one of {OPTIMIZERS}, got {self.optimizer!r}")
        for f, v in zip(("base_lr", "new_lr", "full_lr"), DEFAULT_LR[self.optimizer],
                        strict=True):  # a learning rate left out takes its optimizer's default
            if getattr(self, f) is None:
                object.__setattr__(self, f, v)
        if self.dataset not in DATASETS:
            raise ValueError(f"dataset must be one of {DATASETS}, got {self.dataset!r}")
        if (self.dataset == "file") != (self.data is not None):
            raise ValueError("data (a file or IDX directory) is needed exactly with dataset "
                             f"'file', got dataset {self.dataset!r} and data {self.data!r}")
        if not isinstance(self.label_column, int | np.integer | str) or \
                isinstance(self.label_column, bool):
            raise ValueError("label_column must be an integer or a header name, got "
                             f"{self.label_column!r}")
        if self.model not in MODELS:
            raise ValueError(f"model must be one of {MODELS}, got {self.model!r}")
        if self.update not in UPDATES:
            raise ValueError(f"update must be one of {UPDATES}, got {self.update!r}")
        check_int(self.k, "k", minimum=1, maximum=50)
        check_int(self.n_up, "n_up", minimum=2)
        check_int(self.n0, "n0", minimum=10)
        check_int(self.trials, "trials", minimum=2)
        check_int(self.n_ref, "n_ref", minimum=2)
        check_positive(self.c, "c")
        for f in ("base_epochs", "new_epochs", "full_epochs"):
            check_int(getattr(self, f), f, minimum=1)
        for f in ("base_lr", "new_lr", "full_lr"):
            check_positive(getattr(self, f), f)
        check_int(self.batch_size, "batch_size", minimum=1)
        check_int(self.hidden, "hidden", minimum=1)
        if not (0.0 <= self.shift_alpha <= 1.0):
            raise ValueError(f"shift_alpha must be in [0, 1], got {self.shift_alpha}")
        if self.shift not in SHIFTS:
            raise ValueError(f"shift must be one of {SHIFTS}, got {self.shift!r}")
        if (self.shift == "subpop-pairs") != (self.shift_pairs is not None):
            raise ValueError("shift_pairs (the user's (source, target) subclass pairs) goes "
                             f"exactly with shift 'subpop-pairs', got shift {self.shift!r} and "
                             f"shift_pairs {self.shift_pairs!r}")
        if self.shift_pairs is not None:
            object.__setattr__(self, "shift_pairs", check_shift_pairs(self.shift_pairs))
        check_int(self.seed, "seed", minimum=0)
        TrainConfig(1, 1.0, clip=self.clip, sigma_dp=self.sigma_dp)  # validates clip/sigma_dp

    @property
    def update_cfg(self) -> TrainConfig:
        """:math:`A_{\\mathrm{up}}`: SGD-New or SGD-Full hyper-parameters (+ DP)."""
        if self.update == "sgd-new":
            return TrainConfig(self.new_epochs, self.new_lr, self.batch_size, self.clip,
                               self.sigma_dp, self.optimizer)
        return TrainConfig(self.full_epochs, self.full_lr, self.batch_size, self.clip,
                           self.sigma_dp, self.optimizer)

    @property
    def base_cfg(self) -> TrainConfig:
        """:math:`A_{\\mathrm{train}}` on :math:`D_0` (plain SGD)."""
        return TrainConfig(self.base_epochs, self.base_lr, self.batch_size,
                           optimizer=self.optimizer)
