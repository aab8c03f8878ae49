"""Per-datum leakage closed forms as NumPy code, GENERATED from the SymPy derivations of
:mod:`semi_core.symbolic.leakage` by ``python -m semi_core.symbolic._leakage_codegen``.

Do not edit: change the derivation and regenerate (a test fails while this file differs from
what the derivations print). Same stable rewrites as ``Derivation.lambdify``; no SymPy
import.
"""
# ruff: noqa: E501

from __future__ import annotations

import numpy
from scipy.special import ndtr, ndtri

from semi_core._normal import phi_diff

__all__ = ['pdl_leakage',
           'pdl_power',
           'pdl_threshold',
           'pdl_sub_leakage',
           'pdl_sub_power',
           'pdl_sub_paper_leakage',
           'pdl_sub_paper_power',
           'pdl_miss_advantage',
           'pdl_miss_power',
           'pdl_miss_threshold',
           'pdl_miss_threshold_adv',
           'pdl_plugin_effective_score',
           'pdl_bernoulli_k3',
           'pdl_eq10_mean0',
           'pdl_eq10_var0',
           'pdl_eq10_k3_0',
           'pdl_eq10_mean1',
           'pdl_eq10_var1',
           'pdl_eq10_k3_1',
           'pdl_cornish_fisher',
           'pdl_edgeworth_cdf',
           'pdl_avg_mean0',
           'pdl_avg_var0',
           'pdl_avg_mean1',
           'pdl_avg_var1']


def pdl_leakage(m):
    r"""Asymptotic per-datum leakage (Cor 3.2 Eq. 8): TV of N(-m/2, m) and N(m/2, m).

    ``pdl_leakage`` (per_datum_leakage §3 Cor 3.2 Eq. (8)).

    .. math::

        \xi(m^{*}) = - \Phi\left(- \frac{\sqrt{m^{*}}}{2}\right) + \Phi\left(\frac{\sqrt{m^{*}}}{2}\right)

    Parameters
    ----------
    m : float or array_like
        Broadcast together, in the derivation's argument order.

    Returns
    -------
    ndarray or float
        The derived value.
    """
    return phi_diff((1/2)*numpy.sqrt(m), -1/2*numpy.sqrt(m))


def pdl_power(alpha, m):
    r"""Optimal power at FPR alpha (Cor 3.2 Eq. 9).

    ``pdl_power`` (per_datum_leakage §3 Cor 3.2 Eq. (9)).

    .. math::

        \mathrm{Pow}(\alpha) = \Phi\left(\sqrt{m^{*}} + \Phi^{-1}\left(\alpha\right)\right)

    Parameters
    ----------
    alpha : float or array_like
    m : float or array_like
        Broadcast together, in the derivation's argument order.

    Returns
    -------
    ndarray or float
        The derived value.
    """
    return ndtr(numpy.sqrt(m) + ndtri(alpha))


def pdl_threshold(alpha, m):
    r"""Neyman-Pearson threshold at FPR alpha (Cor 3.2; main-text sign).

    ``pdl_threshold`` (per_datum_leakage §3 Cor 3.2).

    .. math::

        \tau_{\alpha} = - \sqrt{m^{*}} \Phi^{-1}\left(\alpha\right) - \frac{m^{*}}{2}

    Parameters
    ----------
    alpha : float or array_like
    m : float or array_like
        Broadcast together, in the derivation's argument order.

    Returns
    -------
    ndarray or float
        The derived value.
    """
    return -numpy.sqrt(m)*ndtri(alpha) - 1/2*m


def pdl_sub_leakage(m, rho):
    r"""Leakage of the sub-sampled mean with a shared inclusion event (corrected Thm 4.3).

    ``pdl_sub_leakage`` (per_datum_leakage §4.2 Thm 4.3 (corrected)).

    .. math::

        \xi^{\mathrm{sub}} = \rho \left(- \Phi\left(- \frac{\sqrt{m^{*}}}{2 \sqrt{\rho}}\right) + \Phi\left(\frac{\sqrt{m^{*}}}{2 \sqrt{\rho}}\right)\right)

    Parameters
    ----------
    m : float or array_like
    rho : float or array_like
        Broadcast together, in the derivation's argument order.

    Returns
    -------
    ndarray or float
        The derived value.
    """
    return rho*phi_diff((1/2)*numpy.sqrt(m)/numpy.sqrt(rho), -1/2*numpy.sqrt(m)/numpy.sqrt(rho))


def pdl_sub_power(alpha, m, rho):
    r"""Optimal power at FPR alpha of the sub-sampled mean (corrected Thm 4.3).

    ``pdl_sub_power`` (per_datum_leakage §4.2 Eq. (16) (corrected)).

    .. math::

        \mathrm{Pow}^{\mathrm{sub}}(\alpha) = - \alpha \rho + \alpha + \rho \Phi\left(\frac{\sqrt{m^{*}}}{\sqrt{\rho}} + \Phi^{-1}\left(\alpha\right)\right)

    Parameters
    ----------
    alpha : float or array_like
    m : float or array_like
    rho : float or array_like
        Broadcast together, in the derivation's argument order.

    Returns
    -------
    ndarray or float
        The derived value.
    """
    return -alpha*rho + alpha + rho*ndtr(numpy.sqrt(m)/numpy.sqrt(rho) + ndtri(alpha))


def pdl_sub_paper_leakage(m, rho):
    r"""The paper's per-coordinate approximation: leakage at score rho m* (labelled approx).

    ``pdl_sub_paper_leakage`` (per_datum_leakage §4.2 Thm 4.3 as printed (per-coordinate approximation)).

    .. math::

        \xi^{\mathrm{sub}}_{\mathrm{paper}} = - \Phi\left(- \frac{\sqrt{m^{*}} \sqrt{\rho}}{2}\right) + \Phi\left(\frac{\sqrt{m^{*}} \sqrt{\rho}}{2}\right)

    Parameters
    ----------
    m : float or array_like
    rho : float or array_like
        Broadcast together, in the derivation's argument order.

    Returns
    -------
    ndarray or float
        The derived value.
    """
    return phi_diff((1/2)*numpy.sqrt(m)*numpy.sqrt(rho), -1/2*numpy.sqrt(m)*numpy.sqrt(rho))


def pdl_sub_paper_power(alpha, m, rho):
    r"""The paper's per-coordinate approximation of the power (Eq. 16 as printed).

    ``pdl_sub_paper_power`` (per_datum_leakage §4.2 Eq. (16) as printed).

    .. math::

        \mathrm{Pow}^{\mathrm{sub}}_{\mathrm{paper}} = \Phi\left(\sqrt{m^{*}} \sqrt{\rho} + \Phi^{-1}\left(\alpha\right)\right)

    Parameters
    ----------
    alpha : float or array_like
    m : float or array_like
    rho : float or array_like
        Broadcast together, in the derivation's argument order.

    Returns
    -------
    ndarray or float
        The derived value.
    """
    return ndtr(numpy.sqrt(m)*numpy.sqrt(rho) + ndtri(alpha))


def pdl_miss_advantage(m_scal, m_targ):
    r"""Advantage of the misspecified LR at its optimal threshold (m_scal > 0).

    ``pdl_miss_advantage`` (per_datum_leakage §4.3 Thm 4.5).

    .. math::

        \mathrm{Adv}(\mathcal A_{\mathrm{miss}}) = - \Phi\left(- \frac{m^{\mathrm{scal}}}{2 \sqrt{m^{\mathrm{targ}}}}\right) + \Phi\left(\frac{m^{\mathrm{scal}}}{2 \sqrt{m^{\mathrm{targ}}}}\right)

    Parameters
    ----------
    m_scal : float or array_like
    m_targ : float or array_like
        Broadcast together, in the derivation's argument order.

    Returns
    -------
    ndarray or float
        The derived value.
    """
    return phi_diff((1/2)*m_scal/numpy.sqrt(m_targ), -1/2*m_scal/numpy.sqrt(m_targ))


def pdl_miss_power(alpha, m_scal, m_targ):
    r"""Power at FPR alpha of the misspecified LR.

    ``pdl_miss_power`` (per_datum_leakage §4.3 (derived)).

    .. math::

        \mathrm{Pow}^{\mathrm{miss}}(\alpha) = \Phi\left(\frac{m^{\mathrm{scal}}}{\sqrt{m^{\mathrm{targ}}}} + \Phi^{-1}\left(\alpha\right)\right)

    Parameters
    ----------
    alpha : float or array_like
    m_scal : float or array_like
    m_targ : float or array_like
        Broadcast together, in the derivation's argument order.

    Returns
    -------
    ndarray or float
        The derived value.
    """
    return ndtr(m_scal/numpy.sqrt(m_targ) + ndtri(alpha))


def pdl_miss_threshold(alpha, m_targ):
    r"""Threshold at FPR alpha of the misspecified LR.

    ``pdl_miss_threshold`` (per_datum_leakage §4.3 (derived)).

    .. math::

        \tau^{\mathrm{miss}}_{\alpha} = - \sqrt{m^{\mathrm{targ}}} \Phi^{-1}\left(\alpha\right) - \frac{m^{\mathrm{targ}}}{2}

    Parameters
    ----------
    alpha : float or array_like
    m_targ : float or array_like
        Broadcast together, in the derivation's argument order.

    Returns
    -------
    ndarray or float
        The derived value.
    """
    return -numpy.sqrt(m_targ)*ndtri(alpha) - 1/2*m_targ


def pdl_miss_threshold_adv(m_scal, m_targ):
    r"""Advantage-optimal threshold of the misspecified LR (midpoint of the limit laws).

    ``pdl_miss_threshold_adv`` (per_datum_leakage §4.3 Thm 4.5).

    .. math::

        \tau^{\mathrm{miss}}_{\mathrm{adv}} = \frac{m^{\mathrm{scal}}}{2} - \frac{m^{\mathrm{targ}}}{2}

    Parameters
    ----------
    m_scal : float or array_like
    m_targ : float or array_like
        Broadcast together, in the derivation's argument order.

    Returns
    -------
    ndarray or float
        The derived value.
    """
    return (1/2)*m_scal - 1/2*m_targ


def pdl_plugin_effective_score(m, lambda_ref):
    r"""Effective leakage score of the plug-in LR: :math:`\mathrm{shift}^2/\mathrm{var}`.

    ``pdl_plugin_effective_score`` (per_datum_leakage §3 'Empirical likelihood ratio test' (Sankararaman T4.2.3)).

    .. math::

        m^{*}_{\mathrm{plug}} = \frac{\lambda m^{*}}{\lambda + 1}

    Parameters
    ----------
    m : float or array_like
    lambda_ref : float or array_like
        Broadcast together, in the derivation's argument order.

    Returns
    -------
    ndarray or float
        The derived value.
    """
    return lambda_ref*m/(lambda_ref + 1)


def pdl_bernoulli_k3(p_j):
    r"""Third cumulant of Bernoulli(p), from its cumulant generating function.

    ``pdl_bernoulli_k3`` (per_datum_leakage §5 (Bernoulli data)).

    .. math::

        \kappa_{3}(\mathrm{Bern}(p_j)) = p_{j} \left(p_{j} - 1\right) \left(2 p_{j} - 1\right)

    Parameters
    ----------
    p_j : float or array_like
        Broadcast together, in the derivation's argument order.

    Returns
    -------
    ndarray or float
        The derived value.
    """
    return p_j*(p_j - 1)*(2*p_j - 1)


def pdl_eq10_mean0(delta_j, sigma_j2, gamma_j2, n):
    r"""Mean of one coordinate's Eq. (10) term under H0 (exact).

    ``pdl_eq10_mean0`` (per_datum_leakage §3 Eq. (10), Thm 3.1 (App. C.2); §4.1 (C_sigma + C_gamma)).

    .. math::

        E_0[\ell^{\rm app}_j] = - \frac{\delta_{j}^{2}}{2 n \left(\gamma_{j}^{2} + \sigma_{j}^{2}\right)}

    Parameters
    ----------
    delta_j : float or array_like
    sigma_j2 : float or array_like
    gamma_j2 : float or array_like
    n : float or array_like
        Broadcast together, in the derivation's argument order.

    Returns
    -------
    ndarray or float
        The derived value.
    """
    return -1/2*delta_j**2/(n*(gamma_j2 + sigma_j2))


def pdl_eq10_var0(delta_j, sigma_j2, gamma_j2, n):
    r"""Variance of one coordinate's Eq. (10) term under H0 (exact).

    ``pdl_eq10_var0`` (per_datum_leakage §3 Eq. (10), Thm 3.1 (App. C.2); §4.1 (C_sigma + C_gamma)).

    .. math::

        V_0[\ell^{\rm app}_j] = \frac{\delta_{j}^{2}}{n \left(\gamma_{j}^{2} + \sigma_{j}^{2}\right)}

    Parameters
    ----------
    delta_j : float or array_like
    sigma_j2 : float or array_like
    gamma_j2 : float or array_like
    n : float or array_like
        Broadcast together, in the derivation's argument order.

    Returns
    -------
    ndarray or float
        The derived value.
    """
    return delta_j**2/(n*(gamma_j2 + sigma_j2))


def pdl_eq10_k3_0(delta_j, sigma_j2, gamma_j2, kappa_3j, n):
    r"""Third cumulant of one coordinate's Eq. (10) term under H0 (Edgeworth constant).

    ``pdl_eq10_k3_0`` (per_datum_leakage App. C.3 (Edgeworth, derived here for Eq. 10)).

    .. math::

        \kappa_{3,0}[\ell^{\rm app}_j] = \frac{\delta_{j}^{3} \kappa_{3,j}}{n^{2} \left(\gamma_{j}^{2} + \sigma_{j}^{2}\right)^{3}}

    Parameters
    ----------
    delta_j : float or array_like
    sigma_j2 : float or array_like
    gamma_j2 : float or array_like
    kappa_3j : float or array_like
    n : float or array_like
        Broadcast together, in the derivation's argument order.

    Returns
    -------
    ndarray or float
        The derived value.
    """
    return delta_j**3*kappa_3j/(n**2*(gamma_j2 + sigma_j2)**3)


def pdl_eq10_mean1(delta_j, sigma_j2, gamma_j2, n):
    r"""Mean of one coordinate's Eq. (10) term under H1 (exact).

    ``pdl_eq10_mean1`` (per_datum_leakage §3 Eq. (10), Thm 3.1 (App. C.2); §4.1 (C_sigma + C_gamma)).

    .. math::

        E_1[\ell^{\rm app}_j] = \frac{\delta_{j}^{2}}{2 n \left(\gamma_{j}^{2} + \sigma_{j}^{2}\right)}

    Parameters
    ----------
    delta_j : float or array_like
    sigma_j2 : float or array_like
    gamma_j2 : float or array_like
    n : float or array_like
        Broadcast together, in the derivation's argument order.

    Returns
    -------
    ndarray or float
        The derived value.
    """
    return (1/2)*delta_j**2/(n*(gamma_j2 + sigma_j2))


def pdl_eq10_var1(delta_j, sigma_j2, gamma_j2, n):
    r"""Variance of one coordinate's Eq. (10) term under H1 (exact, finite n).

    ``pdl_eq10_var1`` (per_datum_leakage §3 Eq. (10), Thm 3.1 (App. C.2); §4.1 (C_sigma + C_gamma)).

    .. math::

        V_1[\ell^{\rm app}_j] = \frac{\delta_{j}^{2} \left(\gamma_{j}^{2} n + n \sigma_{j}^{2} - \sigma_{j}^{2}\right)}{n^{2} \left(\gamma_{j}^{2} + \sigma_{j}^{2}\right)^{2}}

    Parameters
    ----------
    delta_j : float or array_like
    sigma_j2 : float or array_like
    gamma_j2 : float or array_like
    n : float or array_like
        Broadcast together, in the derivation's argument order.

    Returns
    -------
    ndarray or float
        The derived value.
    """
    return delta_j**2*(gamma_j2*n + n*sigma_j2 - sigma_j2)/(n**2*(gamma_j2 + sigma_j2)**2)


def pdl_eq10_k3_1(delta_j, sigma_j2, gamma_j2, kappa_3j, n):
    r"""Third cumulant of one coordinate's Eq. (10) term under H1 (Edgeworth constant).

    ``pdl_eq10_k3_1`` (per_datum_leakage App. C.3 (Edgeworth, derived here for Eq. 10)).

    .. math::

        \kappa_{3,1}[\ell^{\rm app}_j] = \frac{\delta_{j}^{3} \kappa_{3,j} \left(n - 1\right)}{n^{3} \left(\gamma_{j}^{2} + \sigma_{j}^{2}\right)^{3}}

    Parameters
    ----------
    delta_j : float or array_like
    sigma_j2 : float or array_like
    gamma_j2 : float or array_like
    kappa_3j : float or array_like
    n : float or array_like
        Broadcast together, in the derivation's argument order.

    Returns
    -------
    ndarray or float
        The derived value.
    """
    return delta_j**3*kappa_3j*(n - 1)/(n**3*(gamma_j2 + sigma_j2)**3)


def pdl_cornish_fisher(z_q, lambda_3):
    r"""First-order Cornish-Fisher quantile (inverse of the Edgeworth CDF).

    ``pdl_cornish_fisher`` (per_datum_leakage App. C (derived here)).

    .. math::

        q(z) = \frac{\lambda_{3} z_{q}^{2}}{6} - \frac{\lambda_{3}}{6} + z_{q}

    Parameters
    ----------
    z_q : float or array_like
    lambda_3 : float or array_like
        Broadcast together, in the derivation's argument order.

    Returns
    -------
    ndarray or float
        The derived value.
    """
    return (1/6)*lambda_3*z_q**2 - 1/6*lambda_3 + z_q


def pdl_edgeworth_cdf(u, lambda_3):
    r"""One-term Edgeworth CDF (standardised), the finite-n correction of Thm 3.1's limit.

    ``pdl_edgeworth_cdf`` (per_datum_leakage App. C.1 Thm C.5 (Petrov), App. C.3 Eq. (38)).

    .. math::

        F(u) = \frac{\sqrt{2} \lambda_{3} \left(- \left(\mathbf{M}^{\top}\boldsymbol{\Sigma}^{-1}\mathbf{M}\right)^{2} + 1\right) e^{- \frac{\left(\mathbf{M}^{\top}\boldsymbol{\Sigma}^{-1}\mathbf{M}\right)^{2}}{2}}}{12 \sqrt{\pi}} + \Phi\left(\mathbf{M}^{\top}\boldsymbol{\Sigma}^{-1}\mathbf{M}\right)

    Parameters
    ----------
    u : float or array_like
    lambda_3 : float or array_like
        Broadcast together, in the derivation's argument order.

    Returns
    -------
    ndarray or float
        The derived value.
    """
    return (1/12)*numpy.sqrt(2)*lambda_3*(1 - u**2)*numpy.exp(-1/2*u**2)/numpy.sqrt(numpy.pi) + ndtr(u)


def pdl_avg_mean0(r_j2):
    r"""Mean of one coordinate's average-datum log-LR under H0 (= -KL(P0||P1)).

    ``pdl_avg_mean0`` (per_datum_leakage App. B (Alg. 3/4, Eq. 22-24), derived).

    .. math::

        \mathbb E_0[\ell_j] = \frac{r_{j2} - \frac{\left(r_{j2} - 1\right) \log{\left(- r_{j2} + 1 \right)}}{2}}{r_{j2} - 1}

    Parameters
    ----------
    r_j2 : float or array_like
        Broadcast together, in the derivation's argument order.

    Returns
    -------
    ndarray or float
        The derived value.
    """
    return (r_j2 - 1/2*(r_j2 - 1)*numpy.log1p(-r_j2))/(r_j2 - 1)


def pdl_avg_var0(r_j2):
    r"""Variance of one coordinate's average-datum log-LR under H0.

    ``pdl_avg_var0`` (per_datum_leakage App. B (Alg. 3/4, Eq. 22-24), derived).

    .. math::

        \mathrm{Var}_0[\ell_j] = \frac{r_{j2} \left(r_{j2} + 1\right)}{\left(r_{j2} - 1\right)^{2}}

    Parameters
    ----------
    r_j2 : float or array_like
        Broadcast together, in the derivation's argument order.

    Returns
    -------
    ndarray or float
        The derived value.
    """
    return r_j2*(r_j2 + 1)/(r_j2 - 1)**2


def pdl_avg_mean1(r_j2):
    r"""Mean under H1 (= KL(P1||P0) = -log(1-r^2)/2).

    ``pdl_avg_mean1`` (per_datum_leakage App. B (Alg. 3/4, Eq. 22-24), derived).

    .. math::

        \mathbb E_1[\ell_j] = - \frac{\log{\left(- r_{j2} + 1 \right)}}{2}

    Parameters
    ----------
    r_j2 : float or array_like
        Broadcast together, in the derivation's argument order.

    Returns
    -------
    ndarray or float
        The derived value.
    """
    return -1/2*numpy.log1p(-r_j2)


def pdl_avg_var1(r_j2):
    r"""Variance under H1.

    ``pdl_avg_var1`` (per_datum_leakage App. B (Alg. 3/4, Eq. 22-24), derived).

    .. math::

        \mathrm{Var}_1[\ell_j] = r_{j2}

    Parameters
    ----------
    r_j2 : float or array_like
        Broadcast together, in the derivation's argument order.

    Returns
    -------
    ndarray or float
        The derived value.
    """
    return r_j2
