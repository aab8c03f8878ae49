r"""Memory and time of one attack experiment, from its sizes alone (no torch import).

The one home of the estimate that :func:`semi_core.attacks.whitebox.experiment.run_attacks`
checks once the pool is loaded and ``semi-core attack`` checks from the arguments before
importing torch (with lower bounds of the pool's sizes, so the early check never refuses what
the exact one would accept). Each attack is charged what its path allocates
(``iha_parameters_vs_loss`` §4, App. E):

* every run: the models' weights ``M x d``, the membership matrix, one training chunk
  (batch schedules, weights/momentum/gradients, activations) and the target losses;
* IHA and SIF: the targets' per-sample gradients ``k x d`` per target model, and
    - ``hessian="exact"``: the dense Hessian ``d x d`` per target model (kept for the tables),
      its assembly (``torch.func.hessian``: ``d`` tangents through a chunk of records) and
      ``eigh`` (the symmetrised copy, the eigenvectors and LAPACK's workspace: about
      :math:`4d^2` beyond the kept Hessian);
    - ``hessian="cg"``: the CG state (a handful of ``k x d`` arrays) and the batched HVP
      (forward-over-reverse on the ``n`` training records, ``r`` = :func:`hvp_rows` of the
      ``k`` right-hand sides per call): no :math:`d^2` term;
* LOSS: nothing beyond the losses; LiRA / RMIA: the confidences of every model on the scored
  records (``M x k``, RMIA ``M x N``) and their batched forward pass;
* L-attack / LiRA-L: the leave-one-out models' weights and training.

.. math::

    \text{bytes}=8\Big[c_{\rm store}Md+\tfrac{MN}{8}+B_{\rm train}+\sum_{a}B_a\Big],\qquad
    B_{\rm exact}=(t+4)d^2+c_{\rm hess}\,d\,\min(n,512)\,A,\qquad
    B_{\rm cg}=c_{\rm cg}kd+2c_{\rm hvp}\,\min(k,r)\,n\,A

with :math:`A` the activations per record (input, hidden and output widths) and :math:`t` the
target models. The constants were checked against measured peak resident memory
(``tests/attacks/test_attack_budget.py``).
"""

from __future__ import annotations

import math

__all__ = ["BUNDLED_SHAPES", "model_shape", "attack_budget", "HESSIAN_ATTACKS", "hvp_rows"]

#: ``(records, features, classes)`` of the bundled attack datasets (scikit-learn's copies).
BUNDLED_SHAPES = {"digits-odd": (1797, 64, 2), "digits": (1797, 64, 10),
                  "breast-cancer": (569, 30, 2), "wine": (178, 13, 3)}

#: Attacks that need inverse-Hessian products (the ``iha*`` family and SIF).
HESSIAN_ATTACKS = ("iha", "iha-exact", "iha-cg", "sif")
_LIRA = ("lira-online", "lira-online-global", "lira-offline", "lira-offline-global")
_RMIA = ("rmia", "rmia-offline")
_LOO = ("l-attack", "lira-l")

#: Records per ``torch.func.hessian`` call (:func:`semi_core.sgd.hessian.mean_loss_hessian`).
_HESSIAN_CHUNK = 512
#: Models per training task (``TRAIN_CHUNK`` of the experiment).
_TRAIN_CHUNK = 64
#: Multiples of the array sizes that the measured peaks need (copies, autograd temporaries),
#: fitted on the upper side of peak-RSS measurements (digits MLP d = 2410 / 4810 and a
#: Purchase-100-shaped MLP d = 22532; docs in ``tests/attacks/test_attack_budget.py``).
_C_ACT, _C_STORE, _C_TRAIN_ACT, _C_HESS, _C_CG, _C_HVP, _C_FWD = 4.0, 2.0, 2.0, 0.75, 12.0, 1.5, 1.0
#: Bytes every run needs beyond its arrays (allocator pools, autograd and LAPACK workspaces).
_OVERHEAD = 100e6
#: Seconds: one SGD step of one model (fixed + per sample x parameter), one flop of the
#: Hessian assembly / eigh / HVPs (single-threaded float64, upper side of the measured rates).
_STEP_SECONDS, _STEP_SECONDS_PER_FLOP, _SECONDS_PER_FLOP = 5e-6, 5e-9, 2e-9
#: CG iterations charged in time (the damped Hessians of the experiments converge in fewer).
_CG_ITERATIONS = 200


#: Bytes of the batched HVP's activations per call (the CG matvec is applied in row chunks).
HVP_BYTES = 256e6


def hvp_rows(n_train, act) -> int:
    """Right-hand sides per batched HVP call: its activations (``rows x n x A`` floats, times
    the measured multiple) stay within :data:`HVP_BYTES`.

    Parameters
    ----------
    n_train, act : int or float
        Training records of the target model and activations per record.

    Returns
    -------
    int
        At least 1.
    """
    per_row = 8.0 * _C_HVP * max(_f(n_train), 1.0) * max(_f(act), 1.0)
    return max(1, int(min(HVP_BYTES / per_row, 2.0**31)))


def _f(v) -> float:
    try:
        return float(v)
    except OverflowError:          # an integer beyond the float range
        return math.inf


def model_shape(model: str, features: int, classes: int, hidden=16) -> tuple[int, int]:
    r"""``(d, A)``: parameters of :func:`~semi_core.sgd.reference_models.build_attack_model`
    and activation floats per record, :math:`A=F+c\,(\sum_i h_i+K)` (the input is shared, each
    layer's output, its tangent and its gradient are not: ``c`` = :data:`_C_ACT`).

    Parameters
    ----------
    model : {"logreg-mse", "logreg", "mlp"}
    features, classes : int
    hidden : int or tuple of int

    Returns
    -------
    tuple of int
    """
    if model == "logreg-mse":
        return features + 1, features + _C_ACT * 1
    if model == "logreg":
        return (features + 1) * classes, features + _C_ACT * classes
    widths = tuple(hidden) if isinstance(hidden, tuple | list) else (hidden,)
    d, prev = 0, features
    for w in (*widths, classes):
        d += (prev + 1) * w
        prev = w
    return d, features + _C_ACT * (sum(widths) + classes)


def attack_budget(attacks, *, hessian: str, n_models, n_records, n_targets, d, act,
                  target_models=1, steps, batch_size, member_prob=0.5, loo_targets=0,
                  loo_models=0) -> tuple[float, float, dict[str, float]]:
    r"""Peak bytes and seconds of :func:`~semi_core.attacks.whitebox.experiment.run_attacks`.

    Parameters
    ----------
    attacks : sequence of str
        Attack names (``iha`` uses ``hessian``).
    hessian : {"exact", "cg"}
    n_models, n_records, n_targets : int or float
        ``M``, the pool size ``N`` and the targets per target model ``k``.
    d, act : int or float
        Parameters and activations per record (:func:`model_shape`).
    target_models, steps, batch_size, member_prob, loo_targets, loo_models
        As in :class:`~semi_core.attacks.whitebox.experiment.AttackConfig` (``steps`` per
        model).

    Returns
    -------
    nbytes, seconds : float
        Estimated peak memory (the largest stage plus what is kept) and wall time.
    parts : dict
        Bytes per stage (``store``, ``train``, ``gradients``, ``exact``, ``cg``, ``lira``,
        ``rmia``, ``loo``), for the message and the tests.
    """
    M, N, k, d, A = (_f(v) for v in (n_models, n_records, n_targets, d, act))
    t, steps, bs = _f(target_models), _f(steps), _f(batch_size)
    n = member_prob * N                              # training records of a target model
    chunk = min(M, _TRAIN_CHUNK)
    parts: dict[str, float] = {}
    parts["store"] = 8.0 * (_C_STORE * M * d + M * N / 8 + 2 * t * k)
    parts["train"] = 8.0 * chunk * (steps * bs + 4 * d + _C_TRAIN_ACT * bs * A)
    seconds = M * steps * (_STEP_SECONDS + _STEP_SECONDS_PER_FLOP * bs * d)
    attacks = tuple(attacks)
    modes = {({"iha-exact": "exact", "iha-cg": "cg"}.get(a, hessian)) for a in attacks
             if a in HESSIAN_ATTACKS}
    if modes:
        # per-sample gradients of the targets (kept per target model) and of a chunk of rows
        parts["gradients"] = 8.0 * (t * k * d + 2 * min(n, 256.0) * (d + A))
    if "exact" in modes:
        h = min(n, float(_HESSIAN_CHUNK))
        parts["exact"] = 8.0 * ((t + 4) * d * d + _C_HESS * d * h * A)
        seconds += t * _SECONDS_PER_FLOP * (n * d * d + 4 * d ** 3 / 3)
    if "cg" in modes:
        # the HVP chunk twice: its activations and the allocator's cached blocks of the last
        parts["cg"] = 8.0 * (_C_CG * k * d + 2 * _C_HVP * min(k, hvp_rows(n, A)) * n * A)
        seconds += t * _SECONDS_PER_FLOP * _CG_ITERATIONS * 6 * k * n * A
    if any(a in _LIRA for a in attacks):
        parts["lira"] = 8.0 * M * k * (1 + _C_FWD * A)
    if any(a in _RMIA for a in attacks):
        parts["rmia"] = 8.0 * M * N * (1 + _C_FWD * A)
    if any(a in _LOO for a in attacks):
        L = (min(_f(loo_targets), k) + 1) * _f(loo_models)
        parts["loo"] = 8.0 * (_C_STORE * L * d + min(L, _TRAIN_CHUNK) * (steps * bs + 4 * d)
                              + L * min(_f(loo_targets), k) * (1 + _C_FWD * A))
        seconds += L * steps * (_STEP_SECONDS + _STEP_SECONDS_PER_FLOP * bs * d)
    # stages run one after another; the stored weights and the kept gradients stay throughout
    stages = [parts[s] for s in ("train", "exact", "cg", "lira", "rmia", "loo") if s in parts]
    nbytes = _OVERHEAD + parts["store"] + parts.get("gradients", 0.0) + max(stages)
    return nbytes, seconds, parts
