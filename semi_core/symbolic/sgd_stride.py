r"""DP-SGD across a gap of ``k`` unobserved steps: the composed log-LR (checkpoints saved every k).

Model (SeMI seed §4.1-4.2 for one step, composed here): between two saved checkpoints
:math:`\theta_a, \theta_{a+k}` the ``k`` DP-SGD updates are
:math:`-\eta(\bar g_s + \xi_s)`, :math:`\bar g_s\sim\mathcal N(\mu_g,\Sigma_g/n)` independent
across steps (frozen gradients: the law at :math:`\theta_a` holds at every step of the gap),
:math:`\xi_s\sim\mathcal N(0,\sigma_{DP}^2C^2I/n^2)`; under :math:`H_1` the target replaces
one random gradient at exactly one step of the gap. With
:math:`N_k = \theta_{a+k}-\theta_a + k\eta\mu_g` and :math:`\delta_g = g^*-\mu_g`, along an
eigen-direction of :math:`\Sigma_g` (eigenvalue :math:`\lambda_j`, components
:math:`w, \delta`):

.. math::

   N_k\mid H_0\sim\mathcal N\Big(0,\eta^2 k\big(\tfrac{\lambda_j}{n}
   + \tfrac{\sigma_{DP}^2C^2}{n^2}\big)\Big),\qquad
   N_k\mid H_1\sim\mathcal N\Big(-\tfrac{\eta}{n}\delta,\eta^2\big(\tfrac{(kn-1)\lambda_j}{n^2}
   + \tfrac{k\sigma_{DP}^2C^2}{n^2}\big)\Big).

The laws are derived from the affine form of the ``k`` steps (:func:`gap_laws`, symbolic
``k``); :func:`gap_laws_explicit` sums ``k`` separate steps for a given integer ``k`` and the
tests prove both equal. At ``k = 1`` the coordinate log-LR is
``dp_sgd_log_lr_coord`` of :mod:`semi_core.symbolic.sgd`. The numeric twin is
:mod:`semi_core.sgd.stride_lr`.
"""

from __future__ import annotations

import functools

import sympy as sp

from . import _symbols as S
from ._core import LATEX_NAMES, Derivation, register
from .empirical_mean import affine_moments
from .gaussian import scalar_log_lr
from .sgd import clip, dg, eta, lam, sigma_dp, w

__all__ = ["k_steps", "gap_laws", "gap_laws_explicit", "dp_sgd_stride_log_lr_coord"]

#: Training steps between two saved checkpoints.
k_steps = sp.Symbol("k", positive=True, integer=True)
LATEX_NAMES.update({"k": "k"})

EXPECTED_NO_SEED = {"dp_sgd_stride_log_lr_coord"}

_ZERO = sp.Integer(0)
_SUM0 = sp.Symbol("SUM0", real=True)     # sum of the k batch means under H0
_OTHER = sp.Symbol("OTHER_STEPS", real=True)  # sum of the k-1 other batch means under H1
_REST = sp.Symbol("REST", real=True)     # mean of the n-1 random gradients at the target's step
_XIS = sp.Symbol("XISUM", real=True)     # sum of the k noise draws


def _noise_var():
    return sigma_dp**2 * clip**2 / S.n**2


def gap_laws(k=k_steps, mu_g=_ZERO):
    r"""``((mean0, var0), (mean1, var1))`` of :math:`N_k` along one direction, symbolic ``k``.

    The sum of ``k`` independent Gaussian batch means has mean :math:`k\mu_g` and variance
    :math:`k\lambda/n`; under :math:`H_1` ``k - 1`` of them are random and one holds
    :math:`((n-1)\bar R + g^*)/n`.

    Parameters
    ----------
    k : sympy.Expr
        Number of steps in the gap.
    mu_g : sympy.Expr
        Mean gradient along the direction.

    Returns
    -------
    tuple of sympy.Expr
        ``((mean0, var0), (mean1, var1))``.
    """
    n = S.n
    gstar = mu_g + dg
    N0 = -eta * (_SUM0 + _XIS - k * mu_g)
    N1 = -eta * (_OTHER + ((n - 1) * _REST + gstar) / n + _XIS - k * mu_g)
    noise = {_XIS: (0, k * _noise_var())}
    law0 = affine_moments(N0, {_SUM0: (k * mu_g, k * lam / n), **noise})
    law1 = affine_moments(N1, {_OTHER: ((k - 1) * mu_g, (k - 1) * lam / n),
                               _REST: (mu_g, lam / (n - 1)), **noise})
    return law0, law1


def gap_laws_explicit(k: int, target_step: int = 1, mu_g=_ZERO):
    """The same laws from ``k`` separate steps (one symbol per step's batch mean and noise).

    ``target_step`` in ``1..k`` is the step of the gap that holds the target under
    :math:`H_1` (the laws do not depend on it).

    Parameters
    ----------
    k : int
        Number of steps, >= 1.
    target_step : int
        Step of the target, in 1..k.
    mu_g : sympy.Expr
        Mean gradient along the direction.

    Returns
    -------
    tuple of sympy.Expr
        ``((mean0, var0), (mean1, var1))``.
    """
    if not 1 <= target_step <= k:
        raise ValueError(f"target_step must be in 1..{k}, got {target_step}")
    n = S.n
    gs = sp.symbols(f"G1:{k + 1}", real=True)
    xs = sp.symbols(f"XI1:{k + 1}", real=True)
    r = sp.Symbol("R_T", real=True)
    noise = {x: (0, _noise_var()) for x in xs}
    N0 = -eta * sum(g + x - mu_g for g, x in zip(gs, xs, strict=True))
    law0 = affine_moments(N0, {**{g: (mu_g, lam / n) for g in gs}, **noise})
    steps1 = [((n - 1) * r + mu_g + dg) / n if s == target_step else gs[s - 1]
              for s in range(1, k + 1)]
    N1 = -eta * sum(g + x - mu_g for g, x in zip(steps1, xs, strict=True))
    rvs1 = {g: (mu_g, lam / n) for s, g in enumerate(gs, start=1) if s != target_step}
    law1 = affine_moments(N1, {**rvs1, r: (mu_g, lam / (n - 1)), **noise})
    return law0, law1


@functools.cache
def _coord_expr():
    (mean0, var0), (mean1, var1) = gap_laws()
    return scalar_log_lr(w, mean0, var0, mean1, var1), (var0, var1, mean1 - mean0)


@register("dp_sgd_stride_log_lr_coord")
def dp_sgd_stride_log_lr_coord() -> Derivation:
    r"""DP-SGD log-LR of a ``k``-step gap along one eigen-direction of :math:`\Sigma_g`.

    Returns
    -------
    Derivation
        ``dp_sgd_stride_log_lr_coord`` (semi_sequential_mi §4.2 (Application to DP-SGD), composed
        over k steps): the expression in :math:`w, dg, lam, n, \eta, \sigma_{dp}, C, k` (the
        argument order of ``lambdify``); the seed prints no form of it. Holds when: frozen
        gradients: the clipped per-sample gradient law (mu_g, Sigma_g) and g* at theta_a hold at
        every step of the gap; batch means of different steps independent, each N(mu_g, Sigma_g/n);
        the target is in exactly one batch of the gap under H1; w, dg: components of N_k =
        theta_{a+k} - theta_a + k eta mu_g and delta_g on an eigenvector of Sigma_g (eigenvalue
        lam).
    """
    expr, _ = _coord_expr()
    return Derivation(
        name="dp_sgd_stride_log_lr_coord",
        expr=expr,
        symbols=(w, dg, lam, S.n, eta, sigma_dp, clip, k_steps),
        source="semi_sequential_mi §4.2 (Application to DP-SGD), composed over k steps",
        assumptions=("frozen gradients: the clipped per-sample gradient law (mu_g, Sigma_g) "
                     "and g* at theta_a hold at every step of the gap",
                     "batch means of different steps independent, each N(mu_g, Sigma_g/n)",
                     "the target is in exactly one batch of the gap under H1",
                     "w, dg: components of N_k = theta_{a+k} - theta_a + k eta mu_g and "
                     "delta_g on an eigenvector of Sigma_g (eigenvalue lam)"),
        seed_form=None,
        note="Not in the seed (it observes every step). Exact when the gradient law does "
             "not depend on theta; at k = 1 it is dp_sgd_log_lr_coord.",
        lhs=r"\log \mathrm{LR}_{k,j}",
    )
