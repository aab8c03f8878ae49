"""What defines one attack experiment: the attack names, :class:`AttackConfig` and the
seed's SGD defaults.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace

import numpy as np

from semi_core._validation import check_int, check_positive, check_probability
from semi_core.sgd.data import ATTACK_DATASETS
from semi_core.sgd.momentum import SGDConfig
from semi_core.sgd.reference_models import ATTACK_MODELS

__all__ = ["ATTACKS", "LOO_ATTACKS", "WHITEBOX_ATTACKS", "LIRA_ATTACKS", "RMIA_ATTACKS",
           "FILE_DATASETS", "MSE_CONVENTIONS", "TRAIN_CHUNK", "AttackConfig", "default_sgd",
           "parse_attacks"]


#: Attack names (``iha`` uses ``AttackConfig.hessian``; ``-global``: one variance per side).
ATTACKS = ("iha", "iha-exact", "iha-cg", "loss", "sif", "lira-online", "lira-online-global",
           "lira-offline", "lira-offline-global", "rmia", "rmia-offline", "l-attack", "lira-l")
#: Datasets read from local files (``data_path``): IDX train files (MNIST / Fashion-MNIST;
#: ``idx-odd``: label mod 2, the seed's MNIST-Odd) and CSV / npz tables (Purchase-100 style).
FILE_DATASETS = ("idx", "idx-odd", "file")

#: Attacks that need leave-one-out reference models (scored on the LOO subset only).
LOO_ATTACKS = ("l-attack", "lira-l")
#: Attacks of :class:`WhiteBoxScorer` (the target model's weights only).
WHITEBOX_ATTACKS = ("iha", "iha-exact", "iha-cg", "loss", "sif")
#: Attacks of :class:`LiRAScorer` (the target and its reference models' confidences).
LIRA_ATTACKS = ("lira-online", "lira-online-global", "lira-offline", "lira-offline-global")
#: Loss conventions of ``logreg-mse``: the auditor's loss over the package's
#: :math:`\tfrac12(\sigma-y)^2`. ``"half"``: the package's; ``"mean"``: the authors' code
#: (``torch.nn.MSELoss``, :math:`(\sigma-y)^2`), with lr and weight decay as declared for it.
MSE_CONVENTIONS = {"half": 1.0, "mean": 2.0}
#: Attacks of :class:`RMIAScorer` (Zarifzadeh et al. 2024 on the same reference models).
RMIA_ATTACKS = ("rmia", "rmia-offline")
#: Models trained per task of the runner (one batched training call; part of the seeding).
TRAIN_CHUNK = 64


def parse_attacks(value) -> tuple[str, ...]:
    """A comma-separated string or sequence of names from :data:`ATTACKS` (order kept).

    Parameters
    ----------
    value : str or sequence of str
        Attack names (comma-separated in a string).

    Returns
    -------
    tuple of str
        The names, without duplicates, in the given order.
    """
    items = value.split(",") if isinstance(value, str) else list(value)
    out = tuple(dict.fromkeys(str(v).strip() for v in items if str(v).strip()))
    bad = [a for a in out if a not in ATTACKS]
    if not out or bad:
        raise ValueError(f"attacks must be drawn from {list(ATTACKS)}, got {list(bad or out)}")
    return out


def default_sgd(dataset: str, model: str) -> SGDConfig:
    """The seed's :math:`(\\lambda,\\mu,\\alpha)=(0.01,0.9,5\\cdot10^{-4})`, batch 32, and enough
    epochs for the bundled settings to reach the stationary regime (loss flat in the log).

    Parameters
    ----------
    dataset : str
        Bundled dataset.
    model : {"logreg-mse", "logreg", "mlp"}
        Architecture.

    Returns
    -------
    SGDConfig
        The training configuration.
    """
    epochs = {"logreg-mse": 60.0, "logreg": 40.0, "mlp": 80.0}.get(model, 40.0)
    if dataset in ("breast-cancer", "wine"):
        epochs *= 2
    return SGDConfig(lr=0.01, momentum=0.9, weight_decay=5e-4, batch_size=32, epochs=epochs)


@dataclass(frozen=True)
class AttackConfig:
    """Everything that defines one attack experiment (JSON metadata of its results)."""

    dataset: str = "digits-odd"
    model: str = "logreg-mse"
    n_models: int = 64
    n_targets: int | None = 500
    target_models: int = 1
    hessian: str = "exact"
    damping: float = 0.2
    hidden: int | tuple[int, ...] = 16
    loo_targets: int = 100
    loo_models: int = 8
    cg_tol: float = 1e-10
    member_prob: float = 0.5
    rmia_gamma: float = 1.0
    rmia_a: float = 0.3
    mse_convention: str = "half"
    sgd: SGDConfig | None = None
    data_path: str | None = None
    pool_size: int | None = None

    def __post_init__(self):
        if self.dataset not in ATTACK_DATASETS + FILE_DATASETS:
            raise ValueError(f"dataset must be one of {ATTACK_DATASETS + FILE_DATASETS}, got "
                             f"{self.dataset!r}")
        if (self.dataset in FILE_DATASETS) != (self.data_path is not None):
            raise ValueError(f"data_path is needed exactly for the file datasets {FILE_DATASETS} "
                             f"(dataset {self.dataset!r}, data_path {self.data_path!r})")
        if self.pool_size is not None:
            check_int(self.pool_size, "pool_size", minimum=4)
        if self.model not in ATTACK_MODELS:
            raise ValueError(f"model must be one of {ATTACK_MODELS}, got {self.model!r}")
        check_int(self.n_models, "n_models", minimum=5)
        if self.n_targets is not None:
            check_int(self.n_targets, "n_targets", minimum=2)
        check_int(self.target_models, "target_models", minimum=1, maximum=self.n_models - 4)
        if self.hessian not in ("exact", "cg"):
            raise ValueError(f"hessian must be 'exact' or 'cg', got {self.hessian!r}")
        if not (isinstance(self.damping, int | float) and np.isfinite(self.damping)
                and self.damping >= 0):
            raise ValueError(f"damping must be finite and >= 0, got {self.damping!r}")
        if isinstance(self.hidden, list):
            object.__setattr__(self, "hidden", tuple(self.hidden))
        for h in (self.hidden if isinstance(self.hidden, tuple) else (self.hidden,)):
            check_int(h, "hidden", minimum=1)
        if isinstance(self.hidden, tuple) and not self.hidden:
            raise ValueError("hidden must hold at least one width")
        check_int(self.loo_targets, "loo_targets", minimum=2)
        check_int(self.loo_models, "loo_models", minimum=2)
        check_positive(self.cg_tol, "cg_tol")
        check_probability(self.member_prob, "member_prob")
        check_positive(self.rmia_gamma, "rmia_gamma")
        if self.mse_convention not in MSE_CONVENTIONS:
            raise ValueError(f"mse_convention must be one of {list(MSE_CONVENTIONS)}, got "
                             f"{self.mse_convention!r}")
        if self.mse_convention != "half" and self.model != "logreg-mse":
            raise ValueError("mse_convention applies only to model 'logreg-mse'")
        if not (isinstance(self.rmia_a, int | float) and 0.0 <= self.rmia_a <= 1.0):
            raise ValueError(f"rmia_a must be in [0, 1], got {self.rmia_a!r}")
        if self.sgd is None:
            object.__setattr__(self, "sgd", default_sgd(self.dataset, self.model))

    @property
    def loss_scale(self) -> float:
        """The auditor's loss over the trained loss (:data:`MSE_CONVENTIONS`)."""
        return MSE_CONVENTIONS[self.mse_convention]

    def train_sgd(self) -> SGDConfig:
        r"""The configuration the models are trained with, on the package's loss
        :math:`\ell=\tfrac12(\sigma-y)^2`: for ``mse_convention="mean"`` (SGD with
        :math:`(\lambda,\alpha)` on :math:`2\ell`) the identical run
        :math:`(2\lambda,\alpha/2)` on :math:`\ell` (momentum buffer scaled by 2, same
        weights).

        Returns
        -------
        SGDConfig
            The configuration on :math:`\ell`.
        """
        s = self.loss_scale
        return self.sgd if s == 1.0 else replace(self.sgd, lr=s * self.sgd.lr,
                                                  weight_decay=self.sgd.weight_decay / s)

    def to_dict(self) -> dict:
        """The configuration as a JSON-safe dict (``sgd`` as its own dict).

        Returns
        -------
        dict
            Every field by name.
        """
        out = asdict(self)
        out["sgd"] = self.sgd.to_dict()
        return out
