"""Torch layer: per-sample gradients, DP-SGD, SeMI-SGD and the DP-SGD fine-tuning audit.

torch is an optional extra: this package imports its submodules lazily, so ``import semi_core``
never needs torch. Modules needing only NumPy/SciPy: :mod:`~semi_core.sgd.accounting`,
:mod:`~semi_core.sgd.gradstats`, :mod:`~semi_core.sgd.lr`, :mod:`~semi_core.sgd.linreg`,
:mod:`~semi_core.sgd.scorers`, :mod:`~semi_core.sgd.data`. Modules needing torch:
:mod:`~semi_core.sgd.grads`, :mod:`~semi_core.sgd.ghost`, :mod:`~semi_core.sgd.batched`,
:mod:`~semi_core.sgd.dpsgd`, :mod:`~semi_core.sgd.models`, :mod:`~semi_core.sgd.mechanism`,
:mod:`~semi_core.sgd.audit`, :mod:`~semi_core.sgd.experiments`.
"""

from __future__ import annotations

from semi_core._extras import import_lazily

_EXPORTS = {
    "FunctionalModel": "grads", "clip_rows": "grads", "clip_factors": "grads",
    "LowRankPlusDiagonal": "gradstats", "GradientStatistics": "gradstats",
    "gradient_statistics": "gradstats",
    "semi_sgd_log_lr": "lr", "dpsgd_log_lr": "lr", "dpsgd_covariances": "lr", "semi_max": "lr",
    "batched_dpsgd_log_lr": "batched", "batched_mahalanobis": "batched",
    "ghost_log_lr": "batched", "linear_stack": "ghost", "ghost_clipped_mean": "ghost",
    "ghost_parts": "ghost",
    "DPSGDConfig": "dpsgd", "draw_game": "dpsgd", "train_dpsgd": "dpsgd",
    "train_dpsgd_batched": "dpsgd",
    "gdp_mu_from_sigma": "accounting", "dpsgd_epsilon": "accounting",
    "calibrate_sigma": "accounting", "dp_accounting_epsilon": "accounting",
    "linreg_grad_mean": "linreg", "linreg_grad_cov": "linreg",
    "linreg_mahalanobis_at_optimum": "linreg", "H2Config": "linreg", "simulate_h2": "linreg",
    "h2_power_table": "linreg",
    "load_fashion_mnist": "data", "read_idx": "data", "load_digits": "data",
    "build_model": "models",
    "prepare_audit": "audit", "audit_games": "audit", "audit_bounds": "audit",
    "select_canary": "audit", "run_audit": "audit", "DPSGDAuditReport": "audit",
    "AuditSetup": "mechanism",
    "DPSGDMechanism": "mechanism", "LinRegSGDMechanism": "linreg",
    "LossBaselines": "scorers",
    "fig3_experiment": "experiments",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name):
    if name in _EXPORTS:
        return getattr(import_lazily(__name__, _EXPORTS[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
