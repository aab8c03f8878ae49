r"""SGD's stationary law and the optimal membership score (``iha_parameters_vs_loss`` §2.2-3, App. B-C).

Everything is derived per eigen-direction of :math:`\mathbf H_*` (eigenvalue :math:`\sigma`):
once the :math:`\alpha^2\mathbf w^*\mathbf w^{*\top}` term of the noise is dropped (as the seed
does after Eq. 11), :math:`\mathbf C`, :math:`\boldsymbol\Sigma` and :math:`\mathbf H_*` commute
and every matrix identity of App. B-C is a scalar identity in each direction, which SymPy proves.
With :math:`k=\sigma+\alpha`, :math:`c=\lambda/(1+\mu)`:

.. math::

    \Sigma_\sigma=\frac{\lambda^2 C_\sigma}{(1-\mu^2)\,ck(2-ck)}\ \text{(Thm 2.2)},\qquad
    C_\sigma=\frac{2L_*\sigma}{S}\ \text{(Thm 2.3, leading term)},

    \Sigma_\sigma^{-1}=\frac{S(1-\mu)}{2\lambda L_*}\Big(2(1-c\alpha)-c\sigma
        +\alpha(2-c\alpha)\frac1\sigma\Big)\ \text{(Eq. 12)} .

The Gaussian :math:`\mathcal N(\mathbf w_i^*,\boldsymbol\Sigma)` log-likelihood ratio of
:math:`\mathbf w` between :math:`\mathbf w_1^*` (target in) and :math:`\mathbf w_0^*` (out) with
:math:`\mathbf v_i=\mathbf H_*^{-1}\nabla L_i(\mathbf w)` and
:math:`\nabla L_1=\nabla L_0+\nabla\ell/n` gives Theorem 3.2 term by term
(:func:`thm32_terms`). Numeric twins: :func:`stationary_covariance` (Thm 2.2),
:func:`eq4_covariance` (Eq. 4), and the exact stationary covariance of the linear recursion with
additive noise, :func:`lyapunov_covariance` (independent reference: discrete Lyapunov equation
of the state :math:`(\mathbf w_t,\mathbf h_t)`).

Seed slips found here (registered in :mod:`semi_core.claims.iha_parameters_vs_loss`): Thm 3.1
misses the :math:`\tfrac12` before :math:`\sum_i\ln(\cdot)` and misplaces a parenthesis
(:math:`2-c(\sigma_i+\alpha)(\sigma_i+\alpha)`); Eq. 11 (Sherman-Morrison) misses
:math:`\alpha^2` in the denominator; Eq. 15 ends with :math:`L(\mathbf w^*)` for
:math:`L(\mathbf w)`; App. C.2 prints the eigenvalues of :math:`\Sigma` with the reciprocal
prefactor and Eq. 22 has an extra :math:`1/n`; Thm 2.3's :math:`-\alpha^2\mathbf w\mathbf w^\top`
does not commute with :math:`\mathbf H` (the §2.2 remark holds only at :math:`\alpha=0`).
"""

from __future__ import annotations

import numpy as np
import sympy as sp
from scipy.linalg import solve_discrete_lyapunov

from .._validation import check_finite_array, check_positive
from ._core import Derivation, register
from ._display import add, dev, frac, mul, neg, sq

__all__ = ["SYM", "thm22_sigma", "eq4_sigma", "precision_eq10", "precision_eq12",
           "logdet_term", "log_density_w_terms", "thm32_log_lr", "thm32_terms",
           "stationary_covariance", "eq4_covariance", "lyapunov_covariance"]

lam, S, Ls, n = sp.symbols("lambda S L_* n", positive=True)
mu = sp.Symbol("mu", nonnegative=True)
al = sp.Symbol("alpha", nonnegative=True)
sig = sp.Symbol("sigma", positive=True)
Cs = sp.Symbol("C_sigma", positive=True)
g0, gz, v, ell = sp.symbols("g_0 g_z v ell", real=True)
Lw = sp.Symbol("L_w", positive=True)

#: The symbols of this module by name (for the claims registry).
SYM = {"lambda": lam, "S": S, "L_*": Ls, "n": n, "mu": mu, "alpha": al, "sigma": sig,
       "C_sigma": Cs, "g_0": g0, "g_z": gz, "v": v, "ell": ell, "L_w": Lw}

_c = lam / (1 + mu)
_k = sig + al
_pref = S * (1 - mu) / (2 * lam * Ls)


def thm22_sigma() -> sp.Expr:
    r"""Thm 2.2 (Liu et al. 2021) in one eigen-direction:
    :math:`\Sigma=\lambda^2C/((1-\mu^2)\,ck(2-ck))`, :math:`k=\sigma+\alpha`.

    Returns
    -------
    sympy.Expr
        :math:`\Sigma` in the module's symbols.
    """
    return lam**2 * Cs / ((1 - mu**2) * _c * _k * (2 - _c * _k))


def eq4_sigma() -> sp.Expr:
    r"""Eq. 4 derived: Thm 2.2 with Thm 2.3's leading noise :math:`C=2L_*\sigma/S`.

    Returns
    -------
    sympy.Expr
        :math:`\Sigma` with :math:`C=2L_*\sigma/S`, simplified.
    """
    return sp.simplify(thm22_sigma().subs(Cs, 2 * Ls * sig / S))


def precision_eq10() -> sp.Expr:
    r"""Eq. 10 per direction: :math:`\Sigma^{-1}` (derived as ``1 / eq4_sigma``).

    Returns
    -------
    sympy.Expr
        :math:`\Sigma^{-1}`.
    """
    return sp.simplify(1 / eq4_sigma())


def precision_eq12() -> sp.Expr:
    r"""Eq. 12 as expanded by the seed (proven equal to :func:`precision_eq10`).

    Returns
    -------
    sympy.Expr
        The seed's expansion of :math:`\Sigma^{-1}`.
    """
    return _pref * (2 * (1 - lam * al / (1 + mu)) - lam / (1 + mu) * sig
                    + al * (2 - lam * al / (1 + mu)) / sig)


def logdet_term() -> sp.Expr:
    r""":math:`-\tfrac12\ln\Sigma_\sigma` up to terms free of :math:`\sigma` and :math:`L_*`:
    :math:`\tfrac12\ln\frac{(2-ck)k}{\sigma}-\tfrac12\ln L_*` per direction (equal to
    ``-log(eq4_sigma())/2 + log(2 lambda / (S (1 - mu)))/2``; tested).

    Returns
    -------
    sympy.Expr
        The :math:`\sigma`- and :math:`L_*`-dependent part of :math:`-\tfrac12\ln\Sigma_\sigma`.
    """
    return sp.log((2 - _c * _k) * _k / sig) / 2 - sp.log(Ls) / 2


def log_density_w_terms() -> sp.Expr:
    r"""The :math:`\mathbf w`-dependent part of :math:`\ln p(\mathbf w\mid\mathbf w^*)` in one
    direction, with :math:`v=w-w^*`: :math:`-\tfrac12\Sigma^{-1}v^2` (Eq. 13).

    Returns
    -------
    sympy.Expr
        :math:`-\tfrac12\Sigma^{-1}v^2`.
    """
    return -precision_eq12() * v**2 / 2


def thm32_log_lr() -> sp.Expr:
    r"""Per-direction :math:`\ln p(\mathbf w\mid\mathbf w_1^*)-\ln p(\mathbf w\mid\mathbf w_0^*)`
    with :math:`v_i=g_i/\sigma`, :math:`g_1=g_0+g_z/n`.

    Returns
    -------
    sympy.Expr
        The per-direction log-LR, expanded.
    """
    v0, v1 = g0 / sig, (g0 + gz / n) / sig
    return sp.expand(-precision_eq12() * (v1**2 - v0**2) / 2)


def thm32_terms() -> dict[str, sp.Expr]:
    r"""Theorem 3.2's terms per direction as derived here: the per-direction share of
    :math:`\ell/n` is :math:`\tfrac12\sigma(v_1^2-v_0^2)` (quadratic loss), and

    .. math::

        \text{LR}=\frac{S(1-\mu)}{2nL_*}\Big(\frac{\ell}{1+\mu}-\frac{I_1+I_2+I_3+I_4}
            \lambda\Big).

    Returns
    -------
    dict of str to sympy.Expr
        ``prefactor`` and ``I1`` .. ``I4``.
    """
    c = lam * al / (1 + mu)
    return {
        "prefactor": S * (1 - mu) / (2 * n * Ls),
        "I1": (1 - c) / n * (gz / sig) ** 2,
        "I2": 2 * (1 - c) * (g0 / sig) * (gz / sig),
        "I3": al / (2 * n) * (2 - c) * gz**2 / sig**3,
        "I4": al * (2 - c) * g0 * gz / sig**3,
    }


def thm32_ell() -> sp.Expr:
    r"""The per-direction :math:`\ell` implied by the quadratic model:
    :math:`\ell=n\cdot\tfrac12\sigma(v_1^2-v_0^2)`.

    Returns
    -------
    sympy.Expr
        :math:`\ell`, expanded.
    """
    v0, v1 = g0 / sig, (g0 + gz / n) / sig
    return sp.expand(n * sig * (v1**2 - v0**2) / 2)


def thm32_assemble(terms: dict[str, sp.Expr]) -> sp.Expr:
    """Eq. 7's argument from its terms, with the per-direction :math:`\\ell`.

    Parameters
    ----------
    terms : dict of str to sympy.Expr
        ``prefactor`` and ``I1`` .. ``I4`` (:func:`thm32_terms`).

    Returns
    -------
    sympy.Expr
        Eq. 7's argument (compared with :func:`thm32_log_lr` in the tests).
    """
    return terms["prefactor"] * (thm32_ell() / (1 + mu)
                                 - (terms["I1"] + terms["I2"] + terms["I3"] + terms["I4"]) / lam)


def _precision_num_display() -> sp.Expr:
    r""":math:`S(1-\mu)(\sigma+\alpha)\big(2(1+\mu)-\lambda(\sigma+\alpha)\big)`: the factored
    numerator of :math:`\Sigma_\sigma^{-1}` (display; the last factor is :math:`(1+\mu)(2-ck)`,
    positive in the stationary regime)."""
    k = add(sig, al)
    return mul(S, dev(1, mu), k, dev(mul(2, add(1, mu)), mul(lam, k)))


def _display_eq4() -> sp.Expr:
    r""":math:`\Sigma_\sigma` as one fraction (:math:`1+\mu` cleared from :math:`c`)."""
    return frac(mul(2, lam, Ls, sig, add(1, mu)), _precision_num_display())


def _display_eq12() -> sp.Expr:
    r""":math:`\Sigma_\sigma^{-1}` as one factored fraction."""
    return frac(_precision_num_display(), mul(2, lam, Ls, sig, add(1, mu)))


def _display_thm32() -> sp.Expr:
    r"""Per-direction log-LR :math:`-\tfrac12\Sigma_\sigma^{-1}(v_1^2-v_0^2)` with
    :math:`v_1^2-v_0^2 = g_z(2ng_0+g_z)/(n^2\sigma^2)`, collected."""
    coef = frac(_precision_num_display(), mul(4, lam, Ls, add(1, mu), sq(n), sig**3))
    return neg(mul(coef, gz, add(mul(2, n, g0), gz)))


@register("iha_eq4_sigma")
def _der_eq4() -> Derivation:
    return Derivation(
        name="iha_eq4_sigma", expr=eq4_sigma(), symbols=(lam, mu, al, S, Ls, sig),
        source="iha_parameters_vs_loss §2.2 Eq. 4 (Thm 2.2 + Thm 2.3, leading term)",
        assumptions=("quadratic loss", "stationary state", "alpha^2 w w^T term dropped"),
        seed_form=lam / (S * (1 - mu)) * 2 * Ls * sig / (_k * (2 - _c * _k)),
        lhs=r"\Sigma_{\sigma}", display=_display_eq4())


@register("iha_precision_eq12")
def _der_eq12() -> Derivation:
    return Derivation(
        name="iha_precision_eq12", expr=precision_eq10(), symbols=(lam, mu, al, S, Ls, sig),
        source="iha_parameters_vs_loss App. B Eq. 10-12",
        assumptions=("alpha^2 w w^T term dropped (Eq. 11)",), seed_form=precision_eq12(),
        lhs=r"\Sigma_{\sigma}^{-1}", display=_display_eq12())


@register("iha_thm32_log_lr")
def _der_thm32() -> Derivation:
    return Derivation(
        name="iha_thm32_log_lr", expr=thm32_log_lr(), symbols=(lam, mu, al, S, Ls, sig, g0, gz, n),
        source="iha_parameters_vs_loss §3.2 Thm 3.2 / App. C Eq. 17 (one eigen-direction)",
        assumptions=("Assumption 3: equal H_* and L_*", "nabla L_i(w) = H_* (w - w_i^*)"),
        seed_form=sp.expand(thm32_assemble(thm32_terms())),
        lhs=r"\ln\frac{p(\mathbf w\mid\mathbf w_1^*)}{p(\mathbf w\mid\mathbf w_0^*)}",
        display=_display_thm32())


# ----------------------------------------------------------------------------- numeric twins

def _check_hyper(lr, momentum, weight_decay):
    lr = check_positive(lr, "lr")
    if not 0 <= momentum < 1:
        raise ValueError(f"momentum must be in [0, 1), got {momentum!r}")
    if not (weight_decay >= 0 and np.isfinite(weight_decay)):
        raise ValueError(f"weight_decay must be finite and >= 0, got {weight_decay!r}")
    return lr, float(momentum), float(weight_decay)


def _sym_matrix(a, name: str) -> np.ndarray:
    arr = check_finite_array(a, name, ndim=2)
    if arr.shape[0] != arr.shape[1] or not np.allclose(arr, arr.T, atol=1e-12):
        raise ValueError(f"{name} must be a symmetric square matrix, got shape {arr.shape}")
    return 0.5 * (arr + arr.T)


def stationary_covariance(H, C, *, lr: float, momentum: float, weight_decay: float = 0.0
                          ) -> np.ndarray:
    r"""Thm 2.2: :math:`\boldsymbol\Sigma=[cB(2I-cB)]^{-1}\lambda^2\mathbf C/(1-\mu^2)`,
    :math:`B=\mathbf H+\alpha I`, :math:`c=\lambda/(1+\mu)` (``C`` must commute with ``H``).

    Parameters
    ----------
    H : array_like, shape (d, d)
        Symmetric Hessian.
    C : array_like, shape (d, d)
        Symmetric gradient-noise covariance commuting with ``H``.
    lr : float
        Learning rate :math:`\lambda`, > 0.
    momentum : float
        Momentum :math:`\mu`, in [0, 1).
    weight_decay : float
        Weight decay :math:`\alpha`, >= 0.

    Returns
    -------
    ndarray, shape (d, d)
        The stationary covariance.

    Raises
    ------
    ValueError
        If ``C`` does not commute with ``H`` (the theorem's hypothesis) or the recursion is
        unstable (an eigenvalue of :math:`cB` outside :math:`(0, 2)`).
    """
    lr, mom, wd = _check_hyper(lr, momentum, weight_decay)
    H, C = _sym_matrix(H, "H"), _sym_matrix(C, "C")
    if H.shape != C.shape:
        raise ValueError(f"H and C must have the same shape, got {H.shape} and {C.shape}")
    scale = max(1.0, np.abs(H).max() * np.abs(C).max())
    if np.abs(H @ C - C @ H).max() > 1e-10 * scale:
        raise ValueError("C must commute with H (Thm 2.2's hypothesis)")
    c = lr / (1 + mom)
    vals, U = np.linalg.eigh(H + wd * np.eye(H.shape[0]))
    x = c * vals
    if np.any(x <= 0) or np.any(x >= 2):
        raise ValueError("lr * (eigenvalues of H + weight_decay I) / (1 + momentum) must lie in "
                         "(0, 2) for a stationary state")
    M = U @ np.diag(1.0 / (x * (2 - x))) @ U.T
    out = M @ C * lr**2 / (1 - mom**2)
    return 0.5 * (out + out.T)


def eq4_covariance(H, w_star, *, loss: float, batch_size: int, lr: float, momentum: float,
                   weight_decay: float = 0.0, alpha_term: bool = False) -> np.ndarray:
    r"""Eq. 4: :math:`\frac{\lambda}{S(1-\mu)}(2L_*\mathbf H-[\alpha^2\mathbf w^*\mathbf w^{*\top}])
    (\mathbf H+\alpha I)^{-1}(2I-c(\mathbf H+\alpha I))^{-1}` (the bracket only with
    ``alpha_term``; the product is then not symmetric in general, and its symmetric part is
    returned).

    Parameters
    ----------
    H : array_like, shape (d, d)
        Symmetric Hessian at the optimum.
    w_star : array_like, shape (d,)
        The optimum (used by ``alpha_term`` only).
    loss : float
        Loss :math:`L_*` at the optimum.
    batch_size : int
        Batch size S.
    lr : float
        Learning rate :math:`\lambda`, > 0.
    momentum : float
        Momentum :math:`\mu`, in [0, 1).
    weight_decay : float
        Weight decay :math:`\alpha`, >= 0.
    alpha_term : bool
        Include the :math:`\alpha^2\mathbf w^*\mathbf w^{*\top}` bracket.

    Returns
    -------
    ndarray, shape (d, d)
        The (symmetric part of the) Eq. 4 covariance.
    """
    lr, mom, wd = _check_hyper(lr, momentum, weight_decay)
    H = _sym_matrix(H, "H")
    w = check_finite_array(w_star, "w_star", ndim=1, shape=(H.shape[0],))
    check_positive(loss, "loss")
    check_positive(batch_size, "batch_size")
    B = H + wd * np.eye(H.shape[0])
    A = 2 * loss * H - (wd**2 * np.outer(w, w) if alpha_term else 0.0)
    out = lr / (batch_size * (1 - mom)) * A @ np.linalg.solve(B, np.linalg.inv(
        2 * np.eye(H.shape[0]) - lr / (1 + mom) * B))
    return 0.5 * (out + out.T)


def lyapunov_covariance(H, C, *, lr: float, momentum: float, weight_decay: float = 0.0
                        ) -> np.ndarray:
    r"""Exact stationary covariance of :math:`\mathbf w_t` for Eq. 2 on the quadratic
    :math:`L_{\rm tot}` with additive noise of covariance ``C`` (any ``C``): the state
    :math:`\mathbf s_t=(\mathbf w_t,\mathbf h_t)` follows :math:`\mathbf s_t=A\mathbf s_{t-1}+
    B\boldsymbol\eta_t`,

    .. math::

        A=\begin{pmatrix}I-\lambda K&-\lambda\mu I\\ K&\mu I\end{pmatrix},\quad
        B=\begin{pmatrix}-\lambda I\\ I\end{pmatrix},\quad K=\mathbf H+\alpha I,

    and :math:`P=APA^\top+B\mathbf CB^\top` (``scipy.linalg.solve_discrete_lyapunov``).

    Parameters
    ----------
    H : array_like, shape (d, d)
        Symmetric Hessian.
    C : array_like, shape (d, d)
        Symmetric noise covariance (any).
    lr : float
        Learning rate :math:`\lambda`, > 0.
    momentum : float
        Momentum :math:`\mu`, in [0, 1).
    weight_decay : float
        Weight decay :math:`\alpha`, >= 0.

    Returns
    -------
    ndarray, shape (d, d)
        Stationary covariance of :math:`\mathbf w_t` (the upper-left block of P).
    """
    lr, mom, wd = _check_hyper(lr, momentum, weight_decay)
    H, C = _sym_matrix(H, "H"), _sym_matrix(C, "C")
    d = H.shape[0]
    K = H + wd * np.eye(d)
    eye = np.eye(d)
    A = np.block([[eye - lr * K, -lr * mom * eye], [K, mom * eye]])
    if np.max(np.abs(np.linalg.eigvals(A))) >= 1:
        raise ValueError("the SGD recursion is unstable for these lr/momentum/H (no stationary "
                         "state)")
    B = np.vstack([-lr * eye, eye])
    P = solve_discrete_lyapunov(A, B @ C @ B.T)
    out = P[:d, :d]
    return 0.5 * (out + out.T)
