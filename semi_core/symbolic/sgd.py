r"""SeMI for (DP-)SGD: derived log-LRs and numeric entry points (SeMI seed §4, App. F).

Model (seed §4.1, App. F): conditionally on :math:`\theta_{\tau-1}` the batch gradient is
:math:`\bar g \sim \mathcal N(\mu_g, \Sigma_g/n)`; under :math:`H_1^\tau` one of the ``n``
per-sample gradients is the target's :math:`g^*`. The update is
:math:`\theta_\tau = \theta_{\tau-1} - \eta(\bar g + \xi)` with DP noise
:math:`\xi \sim \mathcal N(0, \sigma_{\mathrm{DP}}^2 C^2 I/n^2)` (:math:`\sigma_{\mathrm{DP}}=0`
for plain SGD). With :math:`N = \theta_\tau - \theta_{\tau-1} + \eta\mu_g` and
:math:`\delta_g = g^* - \mu_g`:

.. math::

    N \mid H_0 \sim \mathcal N\!\Big(0, \eta^2\big(\tfrac{\Sigma_g}{n}
        + \tfrac{\sigma_{\mathrm{DP}}^2C^2}{n^2}I\big)\Big),\qquad
    N \mid H_1 \sim \mathcal N\!\Big(-\tfrac{\eta}{n}\delta_g, \eta^2\big(\tfrac{(n-1)\Sigma_g}{n^2}
        + \tfrac{\sigma_{\mathrm{DP}}^2C^2}{n^2}I\big)\Big).

Without noise the covariances are proportional and the log-LR is Theorem 4.1 / F.4 (derived
with MatrixSymbol algebra). With noise they are not proportional, but both are
:math:`a\Sigma_g + bI`, so they share the eigenvectors of :math:`\Sigma_g`: the log-LR is a sum
over eigen-directions of a scalar Gaussian log-LR (derived symbolically, evaluated numerically
after ``numpy.linalg.eigh``). Clipping enters only through the statistics
:math:`(\mu_g, \Sigma_g, g^*)`, which must then be those of the *clipped* gradients.
"""

from __future__ import annotations

import functools

import numpy as np
import sympy as sp
from scipy.linalg import solve_triangular

from semi_core._validation import check_covariance
from semi_core.symbolic._core import NUMERIC_MODULES, _stable_logs, is_zero

from .._validation import check_batch_size, check_finite_array, check_positive
from . import _symbols as S
from ._core import LATEX_NAMES, Derivation, register, tidy
from ._display import add, dev, frac, mul, neg, sq
from .empirical_mean import affine_moments, display_log_lr
from .gaussian import matrixsymbol_log_lr, scalar_log_lr

__all__ = [
    "sgd_log_lr_derivation",
    "dp_sgd_log_lr_coord",
    "sgd_log_lr",
    "dp_sgd_log_lr",
    "dp_sgd_coefficients",
]

eta = sp.Symbol("eta", positive=True)
sigma_dp = sp.Symbol("sigma_dp", nonnegative=True)
clip = sp.Symbol("C", positive=True)
lam = sp.Symbol("lam", positive=True)       # eigenvalue of Sigma_g
w = sp.Symbol("w", real=True)               # component of N along the eigenvector
dg = sp.Symbol("dg", real=True)             # component of delta_g along the eigenvector
q_g = sp.Symbol("q_g", nonnegative=True)
ell_g = sp.Symbol("ell_g", real=True)
m_g = sp.Symbol("m_g", nonnegative=True)
LATEX_NAMES.update({"w": r"\tilde{N}_{j}", "dg": r"\tilde{\delta}_{g,j}", "lam": r"\lambda_{j}"})

_G0 = sp.Symbol("G0", real=True)     # batch gradient under H0
_R = sp.Symbol("R", real=True)       # mean of the n-1 random per-sample gradients under H1
_XI = sp.Symbol("XI", real=True)     # DP noise


_ZERO = sp.Integer(0)


def _update_laws(var_g, noise_var, mu_g=_ZERO, gstar=None):
    """Moments of N = -eta (gbar + xi - mu_g) along one direction under H0 and H1."""
    gstar = mu_g + dg if gstar is None else gstar
    n = S.n
    N0 = -eta * (_G0 + _XI - mu_g)
    N1 = -eta * (((n - 1) * _R + gstar) / n + _XI - mu_g)
    noise = {_XI: (0, noise_var)}
    law0 = affine_moments(N0, {_G0: (mu_g, var_g / n), **noise})
    law1 = affine_moments(N1, {_R: (mu_g, var_g / (n - 1)), **noise})
    return law0, law1


def _thm41_seed():
    n = S.n
    return (-S.d * sp.log((n - 1) / n) / 2 - n / (2 * (n - 1) * eta**2) * q_g
            - n / ((n - 1) * eta) * ell_g - m_g / (2 * (n - 1)))


@register("sgd_log_lr")
def sgd_log_lr_derivation() -> Derivation:
    r"""Theorem 4.1 / F.4: SeMI-SGD log-LR in :math:`N^\top\Sigma_g^{-1}N`, etc.

    Returns
    -------
    Derivation
        ``sgd_log_lr`` (semi_sequential_mi §4.1 Thm 4.1 / App. F.2 Thm F.4): the expression in
        :math:`q_{g}, \ell_{g}, m_{g}, n, \eta, d` (the argument order of ``lambdify``); proven
        equal to the seed's printed form. Holds when: gbar | theta_{tau-1} ~ N(mu_g, Sigma_g/n),
        Sigma_g positive definite; N = theta_tau - theta_{tau-1} + eta mu_g, delta_g = g* - mu_g.
    """
    d, n = S.d, S.n
    (mean0, var0), (mean1, var1) = _update_laws(sp.Integer(1), sp.Integer(0))
    shift = sp.factor(sp.diff(mean1 - mean0, dg))   # = -eta / n per unit of delta_g
    Nm = sp.MatrixSymbol("N", d, 1)
    Dm = sp.MatrixSymbol("delta_g", d, 1)
    Sg = sp.MatrixSymbol("Sigma_g", d, d)
    table = {("N", "N"): q_g, ("N", "delta_g"): ell_g, ("delta_g", "delta_g"): m_g}
    expr = matrixsymbol_log_lr(Nm, shift * Dm, var0 * Sg, var1 * Sg, metric=Sg, table=table)
    expr = tidy(sp.simplify(expr), [q_g, ell_g, m_g])
    return Derivation(
        name="sgd_log_lr",
        expr=expr,
        symbols=(q_g, ell_g, m_g, n, eta, d),
        source="semi_sequential_mi §4.1 Thm 4.1 / App. F.2 Thm F.4",
        assumptions=("gbar | theta_{tau-1} ~ N(mu_g, Sigma_g/n), Sigma_g positive definite",
                     "N = theta_tau - theta_{tau-1} + eta mu_g, delta_g = g* - mu_g"),
        seed_form=_thm41_seed(),
        note="The linear term is -n/((n-1) eta) N'Sigma_g^-1 delta_g (negative because the "
             "update moves against the gradient); the seed's sign is correct.",
        lhs=r"\log \mathrm{LR}_{\mathrm{SGD}}",
        display=display_log_lr(n, q_g, ell_g, m_g, d, scale=eta, sign=-1),
    )


@functools.cache
def _dp_coord_expr():
    (mean0, var0), (mean1, var1) = _update_laws(lam, sigma_dp**2 * clip**2 / S.n**2)
    llr = scalar_log_lr(w, mean0, var0, mean1, var1)
    return sp.expand(sp.expand_log(sp.simplify(llr), force=True)), (var0, var1, mean1 - mean0)


@register("dp_sgd_log_lr_coord")
def dp_sgd_log_lr_coord() -> Derivation:
    r"""DP-SGD log-LR along one eigen-direction of :math:`\Sigma_g` (noise folded in).

    Returns
    -------
    Derivation
        ``dp_sgd_log_lr_coord`` (semi_sequential_mi §4.2 (Application to DP-SGD) with Thm 4.1): the
        expression in :math:`w, dg, lam, n, \eta, \sigma_{dp}, C` (the argument order of
        ``lambdify``); the seed prints no form of it. Holds when: lam: eigenvalue of Sigma_g (> 0,
        or >= 0 when sigma_dp > 0); w, dg: components of N and delta_g on its eigenvector; xi ~ N(0,
        sigma_dp^2 C^2 I / n^2).
    """
    derived, (var0, var1, shift) = _dp_coord_expr()
    expr = (-sp.log(sp.factor(var1 / var0)) / 2 + w**2 / (2 * var0)
            - (w - shift) ** 2 / (2 * var1))

    if not is_zero(expr - derived):
        raise AssertionError("display form of the DP-SGD coordinate log-LR is not equal")
    noise = mul(sigma_dp**2, clip**2)
    v0, v1 = add(mul(S.n, lam), noise), add(mul(dev(S.n, 1), lam), noise)
    display = add(neg(frac(sp.log(frac(v1, v0)), 2)), frac(mul(S.n**2, w**2), mul(2, eta**2, v0)),
                  neg(frac(sq(add(mul(S.n, w), mul(eta, dg))), mul(2, eta**2, v1))))
    return Derivation(
        name="dp_sgd_log_lr_coord",
        expr=expr,
        symbols=(w, dg, lam, S.n, eta, sigma_dp, clip),
        source="semi_sequential_mi §4.2 (Application to DP-SGD) with Thm 4.1",
        assumptions=("lam: eigenvalue of Sigma_g (> 0, or >= 0 when sigma_dp > 0)",
                     "w, dg: components of N and delta_g on its eigenvector",
                     "xi ~ N(0, sigma_dp^2 C^2 I / n^2)"),
        seed_form=None,
        note="Not in the seed (see claim semi_sequential_mi:thm4.1.dpsgd). The full log-LR is "
             "the sum over eigen-directions; at sigma_dp = 0 it reduces to Thm 4.1 (proven in "
             "tests/symbolic/test_sym_sgd.py).",
        lhs=r"\log \mathrm{LR}_{j}",
        display=display,
    )


# ---------------------------------------------------------------------------------------------
# Numeric entry points (for semi_core.sgd / torch callers)
# ---------------------------------------------------------------------------------------------


def _check_common(N, delta_g, Sigma_g):
    delta_g = np.atleast_1d(check_finite_array(delta_g, "delta_g", ndim=(0, 1)))
    d = delta_g.size
    Sigma_g = np.atleast_2d(check_finite_array(Sigma_g, "Sigma_g"))
    if Sigma_g.shape != (d, d):
        raise ValueError(f"Sigma_g must have shape ({d}, {d}) to match delta_g, "
                         f"got {Sigma_g.shape}")
    if not np.allclose(Sigma_g, Sigma_g.T, rtol=1e-10, atol=1e-12 * max(1.0, abs(Sigma_g).max())):
        raise ValueError("Sigma_g must be symmetric")
    N = check_finite_array(N, "N")
    if d == 1 and (N.ndim == 0 or N.shape[-1] != 1):
        N = N[..., None]
    if N.shape[-1] != d:
        raise ValueError(f"N must have last dimension {d} (= len(delta_g)), got {N.shape}")
    return N, delta_g, Sigma_g, d


def sgd_log_lr(N, delta_g, Sigma_g, n, eta_value) -> np.ndarray:
    r"""Theorem 4.1 evaluated numerically (Cholesky whitening of :math:`\Sigma_g`).

    .. math::

        \log\mathrm{LR} = -\frac d2\log\frac{n-1}{n} - \frac{n}{2(n-1)\eta^2}N^\top\Sigma_g^{-1}N
            - \frac{n}{(n-1)\eta}N^\top\Sigma_g^{-1}\delta_g - \frac{m^*}{2(n-1)}

    Parameters
    ----------
    N : array_like, shape (..., d)
        :math:`\theta_\tau - \theta_{\tau-1} + \eta\mu_g`.
    delta_g : array_like, shape (d,)
        Target gradient minus mean gradient.
    Sigma_g : array_like, shape (d, d)
        Per-sample gradient covariance, positive definite.
    n : int >= 2
        Batch size at the insertion step.
    eta_value : float > 0
        Learning rate at the insertion step.

    Returns
    -------
    ndarray, shape (...)
    """


    N, delta_g, Sigma_g, d = _check_common(N, delta_g, Sigma_g)
    n = check_batch_size(n)
    eta_value = check_positive(eta_value, "eta")
    _, L = check_covariance(Sigma_g, "Sigma_g", d=d)
    flat = N.reshape(-1, d)
    wN = solve_triangular(L, flat.T, lower=True)
    wd = solve_triangular(L, delta_g, lower=True)
    f = sgd_log_lr_derivation().lambdify()
    out = f(np.einsum("ij,ij->j", wN, wN), wd @ wN, float(wd @ wd), float(n), eta_value, float(d))
    return np.asarray(out, dtype=float).reshape(N.shape[:-1])


def _eigen(Sigma_g, sigma_dp_value):
    lam_, U = np.linalg.eigh(Sigma_g)
    scale = max(1.0, float(np.abs(lam_).max()))
    if lam_.min() < -1e-10 * scale:
        raise ValueError(f"Sigma_g must be positive semi-definite, smallest eigenvalue {lam_.min()}")
    lam_ = np.where(lam_ < 1e-14 * scale, 0.0, lam_)  # round-off zeros, not a clip of data
    if sigma_dp_value == 0 and lam_.min() <= 0:
        raise ValueError("Sigma_g must be positive definite when sigma_dp = 0")
    return lam_, U


def dp_sgd_coefficients(eigvals, n, eta_value, sigma_dp_value, clip_value) -> dict:
    r"""Per-eigen-direction coefficients of the DP-SGD log-LR (for torch or other backends).

    Along eigenvector :math:`j` with :math:`\tilde N_j = u_j^\top N`,
    :math:`\tilde\delta_j = u_j^\top\delta_g`:

    .. math::

        \log\mathrm{LR}_j = a_j\tilde N_j^2 + b_j\tilde N_j\tilde\delta_j + c_j\tilde\delta_j^2 + e_j,
        \qquad \log\mathrm{LR} = \sum_j \log\mathrm{LR}_j .

    Parameters
    ----------
    eigvals : array_like, shape (d,) or ()
        Eigenvalues of the gradient covariance, >= 0.
    n : int
        Batch size, >= 2.
    eta_value : float
        Learning rate, > 0.
    sigma_dp_value : float
        Noise multiplier, >= 0.
    clip_value : float
        Clipping norm, > 0.

    Returns
    -------
    dict with arrays ``quad`` (a), ``cross`` (b), ``target`` (c), ``const`` (e), shape of eigvals.
    """
    lam_ = check_finite_array(eigvals, "eigvals", ndim=(0, 1))
    n = check_batch_size(n)
    eta_value = check_positive(eta_value, "eta")
    clip_value = check_positive(clip_value, "clip")
    if not np.isfinite(sigma_dp_value) or sigma_dp_value < 0:
        raise ValueError(f"sigma_dp must be finite and >= 0, got {sigma_dp_value}")
    if (lam_ < 0).any() or (sigma_dp_value == 0 and (lam_ <= 0).any()):
        raise ValueError("eigvals must be >= 0 (> 0 when sigma_dp = 0)")
    fns = _coefficient_functions()
    args = (lam_, float(n), eta_value, float(sigma_dp_value), clip_value)
    return {k: np.broadcast_to(np.asarray(f(*args), dtype=float), lam_.shape).copy()
            for k, f in fns.items()}


@functools.cache
def _coefficient_functions():
    expr = sp.expand(dp_sgd_log_lr_coord().expr)
    poly = sp.Poly(expr, w, dg)
    parts = {"quad": poly.coeff_monomial(w**2), "cross": poly.coeff_monomial(w * dg),
             "target": poly.coeff_monomial(dg**2), "const": poly.coeff_monomial(1)}
    if sp.expand(sum(c * mono for c, mono in zip(parts.values(),
                                                  (w**2, w * dg, dg**2, 1))) - expr) != 0:
        raise AssertionError("DP-SGD coordinate log-LR is not a quadratic in (w, dg)")
    syms = (lam, S.n, eta, sigma_dp, clip)
    return {k: sp.lambdify(syms, _stable_logs(sp.simplify(v)), modules=NUMERIC_MODULES)
            for k, v in parts.items()}


def dp_sgd_log_lr(N, delta_g, Sigma_g, n, eta_value, sigma_dp_value, clip_value) -> np.ndarray:
    r"""DP-SGD log-LR with the Gaussian noise folded into both hypotheses.

    .. math::

        \log\mathrm{LR} = \sum_j \Big[-\tfrac12\log\frac{v_{1,j}}{v_{0,j}}
            + \frac{\tilde N_j^2}{2v_{0,j}} - \frac{(\tilde N_j + \eta\tilde\delta_j/n)^2}{2v_{1,j}}\Big],

    :math:`v_{0,j} = \eta^2(\lambda_j/n + \sigma_{\mathrm{DP}}^2C^2/n^2)`,
    :math:`v_{1,j} = \eta^2((n-1)\lambda_j/n^2 + \sigma_{\mathrm{DP}}^2C^2/n^2)`, eigen-pairs
    :math:`(\lambda_j, u_j)` of :math:`\Sigma_g`. Equals :func:`sgd_log_lr` at ``sigma_dp = 0``.
    A singular :math:`\Sigma_g` is allowed when ``sigma_dp > 0``.

    Parameters
    ----------
    N : array_like, shape (..., d)
        :math:`\theta_\tau - \theta_{\tau-1} + \eta\mu_g`.
    delta_g : array_like, shape (d,)
    Sigma_g : array_like, shape (d, d)
        Symmetric positive semi-definite (definite when ``sigma_dp = 0``).
    n : int >= 2
    eta_value : float > 0
    sigma_dp_value : float >= 0
        Noise multiplier.
    clip_value : float > 0
        Clipping norm C.

    Returns
    -------
    ndarray, shape (...)
    """
    N, delta_g, Sigma_g, d = _check_common(N, delta_g, Sigma_g)
    if not isinstance(sigma_dp_value, int | float | np.floating | np.integer) or isinstance(
            sigma_dp_value, bool):
        raise TypeError(f"sigma_dp must be a real number, got {type(sigma_dp_value).__name__}")
    lam_, U = _eigen(Sigma_g, float(sigma_dp_value))
    coef = dp_sgd_coefficients(lam_, n, eta_value, float(sigma_dp_value), clip_value)
    wN = N.reshape(-1, d) @ U
    wd = delta_g @ U
    out = (wN**2 @ coef["quad"] + wN @ (coef["cross"] * wd)
           + float(coef["target"] @ wd**2) + float(coef["const"].sum()))
    return out.reshape(N.shape[:-1])
