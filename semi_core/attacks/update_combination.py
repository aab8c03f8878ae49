"""Loss-based, insertion-time-oblivious baselines on a model trajectory (seed §5.2, after
Jagielski et al. 2023, "combining_mi_updates" §4: Delta and Back-Front attacks).

Input: the target's losses :math:`\\ell_t = \\ell(\\theta_t; z^*)` at :math:`t = 0..T` (last axis).
Larger score means "member".

.. math::

   S_{\\Delta\\,\\mathrm{diff}} = \\max_{t}(\\ell_{t-1} - \\ell_t),\\quad
   S_{\\Delta\\,\\mathrm{ratio}} = \\max_{t}\\frac{\\ell_{t-1}+c}{\\ell_t+c},\\quad
   S_{\\mathrm{BF\\,diff}} = \\ell_0 - \\ell_T,\\quad
   S_{\\mathrm{BF\\,ratio}} = \\frac{\\ell_0+c}{\\ell_T+c}.

Notes on the sources: the seed (§5.2) uses :math:`c = 0`; Jagielski et al. define ScoreRatio as
:math:`(\\ell(f_1)+c)/(\\ell(f_0)+c)` (new over old, small means member); the seed's old-over-new
orientation is the same test with the sign of the threshold flipped. Ratios are formed in log
space (:math:`\\log(\\ell_{t-1}+c) - \\log(\\ell_t+c)`) and exponentiated, so the maximiser is the
same as for the ratio itself.

When :math:`\\theta_0` is the same in every game (a fixed pretrained model, as in the seed's
§5.2 protocol and App. H.2), :math:`\\ell_0` is a constant, both Back-Front scores are increasing
functions of :math:`-\\ell_T`, and Back-Front Diff and Back-Front Ratio are the *same* test
(identical ROC curves and bounds); the seed plots them as two attacks.
"""

from __future__ import annotations

import numpy as np

from semi_core._validation import check_finite_array

__all__ = ["delta_diff", "delta_ratio", "back_front_diff", "back_front_ratio",
           "BASELINES", "baseline_scores"]


def _losses(losses, *, positive: bool, offset: float = 0.0) -> np.ndarray:
    arr = check_finite_array(losses, "losses")
    if arr.ndim < 1 or arr.shape[-1] < 2:
        raise ValueError(f"losses must have a last axis of length T+1 >= 2, got shape {arr.shape}")
    if positive:
        if not (np.isfinite(offset) and offset >= 0):
            raise ValueError(f"offset must be finite and >= 0, got {offset}")
        if (arr + offset <= 0).any():
            raise ValueError("ratio attacks need losses + offset > 0 (got a non-positive value)")
    return arr


def delta_diff(losses) -> np.ndarray:
    """Delta Diff: :math:`\\max_t(\\ell_{t-1} - \\ell_t)` over ``t = 1..T``."""
    arr = _losses(losses, positive=False)
    return np.max(arr[..., :-1] - arr[..., 1:], axis=-1)


def delta_ratio(losses, *, offset: float = 0.0) -> np.ndarray:
    """Delta Ratio: :math:`\\max_t (\\ell_{t-1}+c)/(\\ell_t+c)` (``offset`` = c, seed: 0)."""
    arr = np.log(_losses(losses, positive=True, offset=offset) + offset)
    return np.exp(np.max(arr[..., :-1] - arr[..., 1:], axis=-1))


def back_front_diff(losses) -> np.ndarray:
    """Back-Front Diff: :math:`\\ell_0 - \\ell_T`."""
    arr = _losses(losses, positive=False)
    return arr[..., 0] - arr[..., -1]


def back_front_ratio(losses, *, offset: float = 0.0) -> np.ndarray:
    """Back-Front Ratio: :math:`(\\ell_0+c)/(\\ell_T+c)` (``offset`` = c, seed: 0)."""
    arr = np.log(_losses(losses, positive=True, offset=offset) + offset)
    return np.exp(arr[..., 0] - arr[..., -1])


BASELINES = {
    "delta_diff": delta_diff,
    "delta_ratio": delta_ratio,
    "back_front_diff": back_front_diff,
    "back_front_ratio": back_front_ratio,
}


def baseline_scores(losses) -> dict[str, np.ndarray]:
    """All four baseline scores for a loss trajectory array ``(..., T+1)``."""
    return {name: fn(losses) for name, fn in BASELINES.items()}
