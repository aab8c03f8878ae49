r"""Per-datum leakage of the empirical mean with a full covariance (``per_datum_leakage`` §3,
generalised: the seed assumes independent columns, :math:`C_\sigma` diagonal).

In the limit experiment the release is Gaussian, :math:`o\sim\mathcal N(\mu,\Sigma/n)` under
:math:`H_0` and :math:`\mathcal N(\mu+\delta/n,\Sigma/n)` under :math:`H_1`,
:math:`\delta=z^*-\mu`, :math:`\Sigma=C_\sigma+C_\gamma` (any symmetric positive definite
matrix). The log-LR is linear in :math:`o`,

.. math::

    \ell(o)=\delta^\top\Sigma^{-1}(o-\mu)-\frac{1}{2n}\delta^\top\Sigma^{-1}\delta,

so :math:`\ell\sim\mathcal N(\mp m/2, m)` with :math:`m=\delta^\top\Sigma^{-1}\delta/n`: the
seed's Thm 3.1 with the Mahalanobis distance of the full covariance (its diagonal form only
when :math:`\Sigma` is diagonal).
"""

from __future__ import annotations

import sympy as sp

__all__ = ["full_covariance_log_lr"]


def full_covariance_log_lr(dim: int = 2) -> dict[str, sp.Expr]:
    r"""Derive the log-LR and its laws for a general ``dim x dim`` covariance.

    Parameters
    ----------
    dim : int
        Dimension of the symbolic derivation (2 or 3 keeps SymPy fast).

    Returns
    -------
    dict
        ``log_lr`` (in the symbols ``o_j``), ``mean0``, ``var0``, ``mean1``, ``var1`` of
        :math:`\ell` under each hypothesis, ``m`` (:math:`\delta^\top\Sigma^{-1}\delta/n`),
        and ``symbols`` (``delta``, ``sigma`` the symmetric matrix, ``n``, ``o``, ``mu``).
    """
    n = sp.Symbol("n", positive=True)
    d = sp.Matrix(sp.symbols(f"delta0:{dim}", real=True))
    o = sp.Matrix(sp.symbols(f"o0:{dim}", real=True))
    mu = sp.Matrix(sp.symbols(f"mu0:{dim}", real=True))
    S = sp.Matrix(dim, dim, lambda i, j: sp.Symbol(f"s{min(i, j)}{max(i, j)}", real=True))
    Si = S.inv()

    def logpdf(x, mean):   # up to the constant shared by both hypotheses
        r = x - mean
        return -(n / 2) * (r.T * Si * r)[0]

    ell = sp.expand(logpdf(o, mu + d / n) - logpdf(o, mu))
    a = sp.Matrix([sp.diff(ell, v) for v in o])             # ell = a^T o + b (linear)
    b = sp.expand(ell - (a.T * o)[0])
    var = sp.simplify((a.T * (S / n) * a)[0])
    mean0 = sp.simplify((a.T * mu)[0] + b)
    mean1 = sp.simplify((a.T * (mu + d / n))[0] + b)
    m = sp.simplify((d.T * Si * d)[0] / n)
    return {"log_lr": ell, "mean0": mean0, "var0": var, "mean1": mean1, "var1": var, "m": m,
            "symbols": {"delta": d, "sigma": S, "n": n, "o": o, "mu": mu}}
