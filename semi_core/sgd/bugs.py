r"""A zoo of realistic DP-SGD implementation bugs, as drop-ins for one privatised step.

Correct DP-SGD (the step of :mod:`semi_core.sgd.dpsgd`; Opacus' ``DPOptimizer`` with
``loss_reduction="mean"``) releases, for a batch of ``n`` per-sample gradients :math:`g_i`,

.. math::

   \tilde g_t = \frac1n\Big(\sum_{i=1}^n \mathrm{clip}_C(g_i) + \sigma_{DP} C\,\xi_t\Big),
   \qquad \xi_t \sim \mathcal N(0, I)\ \text{independent over } t .

Each :class:`Bug` changes one thing. ``mu_factor`` is the factor by which the bug multiplies the
GDP parameter of the audited run (one record replaced, each record used once,
:math:`\mu = 2/\sigma_{DP}` when correct, :mod:`semi_core.sgd.accounting`), for an auditor who
controls the differing record's gradient (white-box Dirac canary, :mod:`semi_core.sgd.dirac`):

===========================  ===============================================  ======================
name                         what the code does                               true :math:`\mu`
===========================  ===============================================  ======================
``noise_unscaled``           noise :math:`\sigma_{DP}\xi` (not scaled by C)   :math:`2C/\sigma_{DP}`
``batch_clip``               clips the batch-mean gradient to C, not each     :math:`2n/\sigma_{DP}`
                             per-sample gradient (``clip_grad_norm_`` bug)
``noise_reused``             draws :math:`\xi` once and reuses it every step  :math:`\infty` (T ≥ 2)
``clip_mismatch``            clips per sample to :math:`kC`, noise for C      :math:`2k/\sigma_{DP}`
                             (the canary's gradient gets through at norm kC)
``wrong_batch_size``         noise divided by :math:`kn` instead of n         :math:`2k/\sigma_{DP}`
``sampling_rate_misreport``  correct mechanism; the accountant is told the    :math:`2/\sigma_{DP}`
                             batches were Poisson-sampled at rate
                             :math:`q = n/N` (the claimed ε is too small)
===========================  ===============================================  ======================

``noise_reused`` leaks the canary exactly: :math:`u_\tau - u_{t}` for :math:`t\ne\tau` cancels
the noise, so :math:`\varepsilon = \infty` for any :math:`\delta < 1` once :math:`T \ge 2`
(the contrast statistic of :mod:`semi_core.sgd.dirac` finds it). The Opacus drop-ins for the
same bugs are in :mod:`semi_core.integrations.opacus` (they override ``DPOptimizer``'s
``clip_and_accumulate`` / ``add_noise``); both read their parameters from the :class:`Bug`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from semi_core._validation import check_positive

from .grads import clip_rows

__all__ = ["Bug", "BUGS", "get_bug", "privatize"]


@dataclass(frozen=True)
class Bug:
    """One DP-SGD bug.

    Attributes
    ----------
    name : str
    description : str
    factor : float
        Strength ``k`` where the bug has one (``clip_mismatch``, ``wrong_batch_size``).
    """

    name: str
    description: str
    factor: float = 1.0

    def mu_factor(self, *, clip: float, n: int, steps: int) -> float:
        """Factor on :math:`\\mu = 2/\\sigma_{DP}` of the buggy run (``inf``: no privacy).

        Parameters
        ----------
        clip : float
            Clipping norm.
        n : int
            Batch size.
        steps : int
            Number of steps.

        Returns
        -------
        float
            The factor, > 0 (``inf`` when the bug removes privacy).
        """
        if self.name == "noise_unscaled":
            return float(clip)
        if self.name == "batch_clip":
            return float(n)
        if self.name == "noise_reused":
            return math.inf if steps >= 2 else 1.0
        if self.name in ("clip_mismatch", "wrong_batch_size"):
            return float(self.factor)
        return 1.0

    @property
    def misreports_accounting(self) -> bool:
        """True when the mechanism is correct and only the claimed ε is wrong."""
        return self.name == "sampling_rate_misreport"


BUGS: dict[str, Bug] = {b.name: b for b in (
    Bug("noise_unscaled", "noise std sigma instead of sigma*C (not scaled by the clip norm)"),
    Bug("batch_clip", "the batch-mean gradient is clipped to C instead of each per-sample "
        "gradient (clip_grad_norm_ on the batch gradient)"),
    Bug("noise_reused", "one noise vector drawn at the first step and reused at every step"),
    Bug("clip_mismatch", "per-sample gradients clipped to k*C while the noise is calibrated to "
        "C (the canary's gradient is clipped with a different C)", 4.0),
    Bug("wrong_batch_size", "noise divided by the wrong batch size k*n (e.g. the logical batch "
        "of k accumulated physical batches) instead of n", 2.0),
    Bug("sampling_rate_misreport", "correct mechanism on fixed (shuffled) batches, but the "
        "accountant is told they were Poisson-sampled at rate q = n/N"),
)}


def get_bug(name: str | None) -> Bug | None:
    """The :class:`Bug` called ``name`` (``None`` or ``"none"``: the correct implementation).

    Parameters
    ----------
    name : str or None
        A key of ``BUGS``, ``"none"`` or None.

    Returns
    -------
    Bug or None
        The bug, or None for the correct implementation.
    """
    if name is None or name == "none":
        return None
    if not isinstance(name, str) or name not in BUGS:
        raise ValueError(f"bug must be one of {['none', *BUGS]}, got {name!r}")
    return BUGS[name]


def privatize(grads: torch.Tensor, noise: torch.Tensor, *, clip: float, sigma_dp: float,
              bug: Bug | None = None, first_noise: torch.Tensor | None = None) -> torch.Tensor:
    """One privatised mean gradient, correct or with ``bug`` (our batched trainer's step).

    Parameters
    ----------
    grads : Tensor (..., n, d)
        Per-sample gradients of the batch (leading axes: replicas).
    noise : Tensor (..., d)
        Standard-normal :math:`\\xi_t` of this step.
    clip, sigma_dp : float
        :math:`C > 0` and :math:`\\sigma_{DP} \\ge 0`.
    bug : Bug or None
    first_noise : Tensor (..., d), optional
        :math:`\\xi_1` (used by ``noise_reused``; defaults to ``noise``).

    Returns
    -------
    Tensor (..., d)
        :math:`\\tilde g_t` of the module docstring (or its buggy variant).
    """
    clip = check_positive(clip, "clip")
    n = grads.shape[-2]
    name = None if bug is None else bug.name
    if name == "batch_clip":
        mean = clip_rows(grads.mean(-2), clip)
    elif name == "clip_mismatch":
        mean = clip_rows(grads, clip * bug.factor).mean(-2)
    else:
        mean = clip_rows(grads, clip).mean(-2)
    std = sigma_dp * clip / n
    if name == "noise_unscaled":
        std = sigma_dp / n
    elif name == "wrong_batch_size":
        std = sigma_dp * clip / (n * bug.factor)
    xi = first_noise if (name == "noise_reused" and first_noise is not None) else noise
    return mean + std * xi
