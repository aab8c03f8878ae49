"""The up-front work estimate of the update experiment (:func:`check_training_work`).
"""

from __future__ import annotations

from semi_core._validation import check_int, check_work
from semi_core.attacks.updates.experiment.config import UpdateConfig

__all__ = ["check_training_work"]


#: Seconds per replica and per record-epoch of SGD (upper-side, one core; logistic regression,
#: the MLP), from ``benchmarks/bench_updates.py``.
_SECONDS_PER_RECORD_EPOCH = {"logreg": 2e-6, "mlp": 2e-5}


def check_training_work(cfg: UpdateConfig, runs: int, what: str, *, features: int = 64,
                        classes: int = 10) -> None:
    r"""Refuse up front (:func:`semi_core._validation.check_work`) training that cannot be meant.

    .. math::

        \text{bytes} \approx 8\,r\,\big((n_0 + 2kn_{up})\,p + (k+1)\,d_\theta\big),\qquad
        \text{seconds} \approx r\,c\,\big(E_0 n_0 + k E_{up} n_{up}'\big)

    for ``r`` runs of ``p`` features (``features``; 64 for digits), :math:`d_\theta` parameters and ``c`` seconds per
    record-epoch (:math:`n_{up}' = n_0 + k n_{up}` for SGD-Full).

    Parameters
    ----------
    cfg : UpdateConfig
        The experiment's configuration.
    runs : int
        Number of runs r.
    what : str
        What is refused (named in the message).
    features : int
        Number of features p.
    classes : int
        Number of classes.
    """
    k, n_up, n0 = cfg.k, cfg.n_up, cfg.n0
    p = check_int(features, "features", minimum=1)
    classes = check_int(classes, "classes", minimum=2)
    d_theta = (p + 1) * classes if cfg.model == "logreg" else \
        (p + 1) * cfg.hidden + (cfg.hidden + 1) * classes
    nbytes = 8.0 * runs * ((n0 + 2 * k * n_up) * p + (k + 1) * d_theta)
    upd = cfg.update_cfg
    per_update = upd.epochs * (n_up if cfg.update == "sgd-new" else n0 + k * n_up)
    seconds = runs * _SECONDS_PER_RECORD_EPOCH[cfg.model] * (cfg.base_epochs * n0 +
                                                              k * per_update)
    check_work(f"{what} ({runs} runs of n0 = {n0}, k = {k}, n_up = {n_up})", nbytes=nbytes,
               seconds=seconds, hint="use fewer trials / reference runs (--trials, --n-ref) or "
                                     "smaller sets")
