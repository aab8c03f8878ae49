r"""Claims of ``semi_sequential_mi.txt`` on the steps of its proofs and restatements (App. A, D,
E) and on the correspondences the text draws between its results (§4.1).

The lemmas themselves are checked in :mod:`semi_core.claims.semi_sequential_mi.formulas`; here
each intermediate equation a reader would reuse is checked on its own: the coefficients, the
discriminants and the roots of the quadratic acceptance regions (App. A.2-A.5), the
independence of the batch means (App. D), the metric of Lemma B.5's ellipsoid, the threshold
of SeMI-max for a target level (App. E.2), §3.1's "this term becomes negligible and we retrieve
their test statistic" and "Theorem 4.1 has the structure of Theorem 3.1 with the batch mean
replaced by :math:`N/\eta_\tau`" (§4.1).

Derived sides come from the symbolic layer (the conditional laws of Lemma B.1,
``em_cond_*``) or from the Gaussian densities themselves; Monte Carlo checks state their
tolerance in standard errors.

Findings (``semi-core verify``):

* ``appD.indep`` -- "the batch means are independent under both hypotheses": not under
  :math:`\widetilde{\mathbf H}_1` (insertion time drawn by the Crafter), where
  :math:`\mathrm{Cov}(\bar X_s,\bar X_t)=-(z^*-\mu)^2/(n^2T^2)` for :math:`s\ne t` (fails;
  harmless for Theorem 3.10, which only needs independence under each
  :math:`\mathbf H_1^t`).
* ``lemB.5.metric`` -- Lemma B.5's ellipsoid :math:`\|\mathbf U\|^2_{\Sigma^{-1}}` read with
  App. B's notation :math:`\|x\|_\Sigma=\sqrt{x^\top\Sigma^{-1}x}` is :math:`U^\top\Sigma U`; the
  proof uses :math:`U^\top\Sigma^{-1}U` (fails as written; notation slip).
* ``sec4.1.structure`` -- Theorem 4.1 is Theorem 3.1 with :math:`\mathbf N_\tau` replaced by
  :math:`-N/\eta_\tau` (the text says :math:`N/\eta_\tau`: the linear term changes sign; fails).
"""

from __future__ import annotations

import functools

import numpy as np
import sympy as sp
from scipy import optimize, stats

from .._core import (
    Claim,
    Outcome,
    derived_form,
    lambdify,
    mc_outcome,
    numeric_outcome,
    symbolic_outcome,
)

SEED = "semi_sequential_mi"

n, s, tau, T = sp.symbols("n sigma tau T", positive=True)
z, mu, g, Nv, W = sp.symbols("z mu gamma N W", real=True)
eta, Sg = sp.symbols("eta Sigma_g", positive=True)
dg = sp.Symbol("delta_g", real=True)
al = sp.Symbol("alpha", positive=True)
cov = sp.Symbol("cov", real=True)

#: the bracket of the discriminants, K(gamma) = (z-mu)^2/sigma^2 - log((N-1)/N) - 2 gamma
_K = (z - mu) ** 2 / s**2 - sp.log((n - 1) / n) - 2 * g


def _cond(k: str) -> sp.Expr:
    """Conditional law of mu_hat_tau given mu_hat_{tau-1} (Lemma B.1, symbolic layer)."""
    return derived_form(f"em_cond_{k}", {"tau": tau, "n": n, "sigma": s, "mu": mu, "z": z})


@functools.lru_cache(maxsize=1)
def _quadratic_in_N():
    """Coefficients (c2, c1, c0) of log LR_tau in N = mu_hat_tau - m0, from Lemma B.1's laws:
    log N(N; m1-m0, v1) - log N(N; 0, v0) expanded in N."""
    v0, v1 = _cond("var_h0"), _cond("var_h1")
    dm = sp.simplify(_cond("mean_h1") - _cond("mean_h0"))
    ll = (-sp.log(2 * sp.pi * v1) / 2 - (Nv - dm) ** 2 / (2 * v1)
          + sp.log(2 * sp.pi * v0) / 2 + Nv**2 / (2 * v0))
    poly = sp.Poly(sp.expand(ll), Nv)
    c2, c1, c0 = (sp.simplify(poly.coeff_monomial(Nv**k)) for k in (2, 1, 0))
    return c2, c1, c0, v0, v1, dm


def _samp(rng, *, final=False):
    """A random point of the parameter space with gamma <= gamma_max (the lemmas' range)."""
    n_ = float(rng.integers(2, 60))
    s_, mu_ = rng.uniform(0.3, 3), rng.normal()
    z_ = mu_ + rng.normal(0, 3) * s_
    T_ = float(rng.integers(1, 12))
    N_ = n_ * T_ if final else n_
    gmax = 0.5 * ((z_ - mu_) ** 2 / s_**2 - np.log((N_ - 1) / N_))
    return {"n": n_, "sigma": s_, "mu": mu_, "z": z_, "T": T_, "tau": float(rng.integers(1, 9)),
            "gamma": gmax - rng.exponential(2.0)}


# ----------------------------------------------------------------------------- App. A.2

def _check_A2(forms, ctx):
    c2, c1, c0, v0, v1, dm = _quadratic_in_N()
    derived = {"quad_coef": 1 / (2 * v0) - 1 / (2 * v1), "lin_coef": dm / v1,
               "const": dm**2 / (2 * v1)}
    syms = [n, s, tau, mu, z]
    outs = [symbolic_outcome(forms[k], sp.simplify(derived[k]), syms, _samp,
                             ctx.rng(f"A2-{k}"), what=f"App. A.2 {k}") for k in derived]
    # and they are the coefficients of the log LR in N (c2 = quad_coef, c1 = lin_coef)
    outs.append(symbolic_outcome(forms["quad_coef"], c2, syms, _samp, ctx.rng("A2-c2"),
                                 what="quad_coef vs the N^2 coefficient of the log LR"))
    outs.append(symbolic_outcome(forms["lin_coef"], c1, syms, _samp, ctx.rng("A2-c1"),
                                 what="lin_coef vs the N coefficient of the log LR"))
    bad = [o for o in outs if not o.ok]
    return bad[0] if bad else Outcome(True, "the three coefficients of App. A.2 equal those "
                                            "derived from Lemma B.1's conditional laws; "
                                      + outs[0].detail)


# ----------------------------------------------------------------------------- App. A.3-A.4

def _check_A3(forms, ctx):
    """Discriminant vs c1^2 - 4 c2 (c0 - gamma); the stated roots annihilate the quadratic and
    the standardised roots give alpha = Phi(a + b) - Phi(a - b) (Lemma 3.5's a, b)."""
    c2, c1, c0, v0, *_ = _quadratic_in_N()
    syms = [n, s, tau, mu, z, g]
    out = symbolic_outcome(forms["Delta"], sp.expand(c1**2 - 4 * c2 * (c0 - g)), syms, _samp,
                           ctx.rng("A3-Delta"), what="App. A.3 discriminant")
    if not out.ok:
        return out
    quad = lambdify(c2 * Nv**2 + c1 * Nv + c0 - g, [Nv, *syms])
    roots = {k: lambdify(forms[k], syms) for k in ("N_lo", "N_hi")}
    sd0 = lambdify(sp.sqrt(v0), syms)
    rng = ctx.rng("A3-roots")
    pts, sv, rv = [], [], []
    for _ in range(30):
        p = _samp(rng)
        args = [p[str(v)] for v in syms]
        lo, hi = roots["N_lo"](*args), roots["N_hi"](*args)
        scale = abs(complex(quad(0.0, *args))) + 1.0
        a_ = (p["z"] - p["mu"]) * np.sqrt(p["n"]) / p["sigma"]
        b_ = np.sqrt((p["n"] - 1) * ((p["z"] - p["mu"]) ** 2 / p["sigma"] ** 2
                                     - np.log((p["n"] - 1) / p["n"]) - 2 * p["gamma"]))
        pts += [p, p, p]
        with np.errstate(all="ignore"):
            sv += [quad(lo, *args) / scale, quad(hi, *args) / scale,
                   stats.norm.cdf(hi / sd0(*args)) - stats.norm.cdf(lo / sd0(*args))]
        rv += [0.0, 0.0, stats.norm.cdf(a_ + b_) - stats.norm.cdf(a_ - b_)]
    return numeric_outcome(pts, sv, rv, what="App. A.3 roots (quadratic at N_1,2; P_0(N_1 <= "
                           "N <= N_2))", rtol=1e-9, atol=1e-9,
                           ref_name="zero / Lemma 3.5's alpha")


def _check_A4(forms, ctx):
    """(N_1,2 - mu_1)/sigma_1 from the derived roots (vertex -c1/(2 c2), half-width
    sqrt(Delta)/(2|c2|)) and the H1 law of N (Lemma B.1: mean m1 - m0, sd sqrt(v1))."""
    c2, c1, c0, v0, v1, dm = _quadratic_in_N()
    disc = c1**2 - 4 * c2 * (c0 - g)
    vert, half = -c1 / (2 * c2), sp.sqrt(disc) / (2 * sp.Abs(c2))
    syms = [n, s, tau, mu, z, g]
    outs = [symbolic_outcome(forms[k], (vert + sgn * half - dm) / sp.sqrt(v1), syms, _samp,
                             ctx.rng(f"A4-{k}"), what=f"App. A.4 standardised root {k}")
            for k, sgn in (("std_lo", -1), ("std_hi", 1))]
    bad = [o for o in outs if not o.ok]
    return bad[0] if bad else Outcome(True, "both standardised roots equal (root - mu_1)/sigma_1 "
                                            "of the derived roots; " + outs[0].detail)


# ----------------------------------------------------------------------------- App. A.5

def _check_A5(forms, ctx):
    """Coefficients and discriminant of the Final Observation test in W = mu_hat_T - mu, from
    the Gaussian laws of App. A.5-A.6: W ~ N(0, s^2/N) (H0), N((z-mu)/N, (N-1)s^2/N^2) (H1),
    N = nT."""
    NT = n * T
    ll = (-sp.log(2 * sp.pi * (NT - 1) * s**2 / NT**2) / 2
          - (W - (z - mu) / NT) ** 2 / (2 * (NT - 1) * s**2 / NT**2)
          + sp.log(2 * sp.pi * s**2 / NT) / 2 + W**2 / (2 * s**2 / NT))
    poly = sp.Poly(sp.expand(ll), W)
    der = {f"c{k}": sp.simplify(poly.coeff_monomial(W**k)) for k in (2, 1, 0)}
    der["Delta"] = sp.expand(der["c1"] ** 2 - 4 * der["c2"] * (der["c0"] - g))
    syms = [n, T, s, mu, z, g]
    for k in ("c0", "c1", "c2", "Delta"):
        out = symbolic_outcome(forms[k], der[k], syms, lambda r: _samp(r, final=True),
                               ctx.rng(f"A5-{k}"), what=f"App. A.5 {k}^(T)")
        if not out.ok:
            return out
    return Outcome(True, "c0^(T), c1^(T), c2^(T) and the discriminant equal those of the Final "
                         "Observation log LR derived from the laws of W (n -> nT)")


# ----------------------------------------------------------------------------- App. D

def _check_D_indep(forms, ctx):
    """Cov(Xbar_1, Xbar_2) under H1~ (tau uniform on {1..T}): Monte Carlo of the batch means
    (one sample of the inserted batch replaced by z), SE of the sample covariance."""
    rng = ctx.rng("appD-indep")
    R = 200_000 if ctx.quick else 1_000_000
    f = lambdify(forms["cov"], [z, mu, s, n, T])
    cases = []
    for T_, n_, dz in ((2, 10, 3.0), (3, 5, 2.0)):
        tau_ = rng.integers(0, T_, R)
        xb = rng.standard_normal((R, T_)) / np.sqrt(n_)           # mu = 0, sigma = 1
        # batch tau has one point replaced by z: ((n-1) mean_{n-1} + z)/n
        xb[np.arange(R), tau_] = (rng.standard_normal(R) * np.sqrt(n_ - 1) + dz) / n_
        a, b = xb[:, 0], xb[:, 1]
        prod = (a - a.mean()) * (b - b.mean())
        cases.append(({"T": T_, "n": n_, "z_minus_mu": dz, "sigma": 1.0},
                      float(f(dz, 0.0, 1.0, n_, T_)), float(prod.mean()),
                      float(prod.std(ddof=1) / np.sqrt(R))))
    return mc_outcome(cases, what="Cov(Xbar_1, Xbar_2) under H1~ (tau ~ U{1..T})")


# ----------------------------------------------------------------------------- App. E.2

def _alpha0(gam, n_, m_):
    """Lemma 3.5 (registered as holding): single-batch Type I error at threshold gamma."""
    a_ = np.sqrt(m_ * n_)
    b_ = np.sqrt(max((n_ - 1) * (m_ - np.log1p(-1 / n_) - 2 * gam), 0.0))
    return stats.norm.cdf(a_ + b_) - stats.norm.cdf(a_ - b_)


def _check_E2(forms, ctx):
    """FPR of SeMI-max at the threshold that gives each batch the stated level alpha_0: Monte
    Carlo under H0 (T batch means, the exact single-batch log LR from Gaussian densities),
    binomial SE; it must equal the target alpha (4 SE); the Bonferroni level alpha/T must stay
    below alpha and within (T-1) alpha^2 / (2T) of it (exact)."""
    rng = ctx.rng("appE2")
    R = 200_000 if ctx.quick else 1_000_000
    f = lambdify(forms["alpha0"], [al, T])
    fb = lambdify(forms["alpha0_bonferroni"], [al, T])
    n_, m_ = 10, 9.0
    cases = []
    for a_, T_ in ((0.05, 5), (0.05, 10)):
        a0 = float(f(a_, T_))
        if not 0 < a0 < 1:
            return Outcome(False, f"alpha_0 = {a0:.4g} is not a level",
                           {"alpha": a_, "T": T_, "alpha0": a0})
        gmax = 0.5 * (m_ - np.log1p(-1 / n_))
        gam = optimize.brentq(lambda x, t=a0: _alpha0(x, n_, m_) - t, gmax - 60, gmax)
        xb = rng.standard_normal((R, T_)) / np.sqrt(n_)       # mu = 0, sigma = 1, z = 3
        ll = (stats.norm.logpdf(xb, 3.0 / n_, np.sqrt(n_ - 1) / n_)
              - stats.norm.logpdf(xb, 0.0, 1 / np.sqrt(n_)))
        fpr = float((ll.max(axis=1) >= gam).mean())
        cases.append(({"alpha": a_, "T": T_, "n": n_, "m": m_}, a_, fpr,
                      float(np.sqrt(a_ * (1 - a_) / R))))
        bonf = 1 - (1 - float(fb(a_, T_))) ** T_
        if not (bonf <= a_ and a_ - bonf <= (T_ - 1) * a_**2 / (2 * T_) + 1e-15):
            return Outcome(False, f"Bonferroni level alpha/T gives FPR {bonf:.6g} for target "
                                  f"{a_} (T = {T_})", {"alpha": a_, "T": T_, "fpr": bonf})
    out = mc_outcome(cases, what="FPR of SeMI-max at the threshold alpha_0(gamma*) = stated "
                                 "level")
    if not out.ok:
        return out
    return Outcome(True, out.detail + "; Bonferroni alpha/T is conservative and within "
                                      "(T-1) alpha^2/(2T) of alpha")


# ----------------------------------------------------------------------------- §4.1

def _check_structure(forms, ctx):
    """Theorem 3.1 (d = 1) with N_tau := the stated substitute, Sigma := Sigma_g,
    z* - mu := delta_g, against the exact log-density ratio of N (Lemmas F.1-F.2:
    N ~ N(0, eta^2 S/n) under H0, N(-eta delta_g/n, eta^2 (n-1) S/n^2) under H1)."""
    Nt = forms["N_tau"]
    thm31 = (-sp.log((n - 1) / n) / 2 - n / (2 * (n - 1)) * Nt**2 / Sg
             + n / (n - 1) * Nt * dg / Sg - dg**2 / (2 * (n - 1) * Sg))
    f = lambdify(thm31, [Nv, dg, Sg, n, eta])
    rng = ctx.rng("sec4.1.structure")
    pts, sv, rv = [], [], []
    for _ in range(20):
        n_, e_, S_ = float(rng.integers(2, 100)), rng.uniform(0.01, 2), rng.uniform(0.2, 4)
        d_ = rng.normal(0, 3) * np.sqrt(S_)
        N_ = rng.normal(-e_ * d_ / n_, e_ * np.sqrt(S_ / n_))
        pts.append({"n": n_, "eta": e_, "Sigma_g": S_, "delta_g": d_, "N": N_})
        sv.append(f(N_, d_, S_, n_, e_))
        rv.append(stats.norm.logpdf(N_, -e_ * d_ / n_, e_ * np.sqrt((n_ - 1) * S_) / n_)
                  - stats.norm.logpdf(N_, 0.0, e_ * np.sqrt(S_ / n_)))
    return numeric_outcome(pts, sv, rv, what="Theorem 3.1 with N_tau replaced as stated",
                           rtol=1e-9, atol=1e-9, ref_name="the exact log LR of the SGD update")


# ----------------------------------------------------------------------------- App. B.3 notation

def _check_B5_metric(forms, ctx):
    """Lemma B.5's event {||U||^2_{Sigma^-1} <= R^2} read with App. B's notation
    ||x||_A = sqrt(x^T A^-1 x), i.e. U^T M U <= R^2 with M = Sigma^(metric_exponent); compared
    round by round with the event {log LR >= gamma} (Theorem B.2) on the same draws of N under
    H0 (d = 2, diagonal Sigma, R^2 with the corrected constant of claim lemB.5). Paired
    Monte Carlo: SE of the difference of the two frequencies from the disagreement rate."""
    rng = ctx.rng("lemB.5.metric")
    R = 100_000 if ctx.quick else 400_000
    p_ = float(forms["metric_exponent"])
    cases = []
    for n_, sig in ((10, (0.5, 3.0)), (4, (0.2, 1.5))):
        sig = np.asarray(sig)
        u = rng.normal(0, 1.5, 2) * np.sqrt(sig)            # z* - mu
        m_ = float(np.sum(u**2 / sig))
        gmax = 0.5 * (m_ - 2 * np.log((n_ - 1) / n_))
        gam = gmax - 1.0
        N = rng.standard_normal((R, 2)) * np.sqrt(sig / n_)
        llr = (-np.log((n_ - 1) / n_) - n_ / (2 * (n_ - 1)) * np.sum(N**2 / sig, 1)
               + n_ / (n_ - 1) * np.sum(N * u / sig, 1) - m_ / (2 * (n_ - 1)))
        r2 = 2 * (n_ - 1) / n_ * (m_ / 2 - gam - np.log((n_ - 1) / n_))
        U = N - u
        stated = np.sum(U**2 * sig**p_, 1) <= r2
        ref = llr >= gam
        dis = float(np.mean(stated != ref))
        se = max(np.sqrt(dis * (1 - dis) / R), 1.0 / R)
        cases.append(({"n": n_, "sigma2": ",".join(f"{v:g}" for v in sig), "m": m_,
                       "gamma": gam}, float(stated.mean()), float(ref.mean()), float(se)))
    return mc_outcome(cases, what="P0(U^T Sigma^p U <= R^2) vs P0(log LR >= gamma)")


# ----------------------------------------------------------------------------- §3.1 asymptotics

def _asym_moments(n_, d_, m_):
    """Exact mean/variance, under H0 and H1, of D = log LR_tau (Theorem 3.1) minus Azize &
    Basu's statistic (z*-mu)^T Sigma^-1 N_tau - m/(2n) on the batch, in whitened coordinates
    (u = Sigma^-1/2 (z*-mu) along e_1, |u|^2 = m): D = A |w|^2 + B sqrt(m) w_1 + const with
    A = -n/(2(n-1)), B = 1/(n-1); w ~ N(0, I/n) (H0), N(u/n, (n-1)/n^2 I) (H1) (Lemma B.4)."""
    A, B = -n_ / (2 * (n_ - 1)), np.sqrt(m_) / (n_ - 1)
    out = {}
    for h, (nu1, v) in (("0", (0.0, 1 / n_)), ("1", (np.sqrt(m_) / n_, (n_ - 1) / n_**2))):
        mean = A * d_ * v + A * nu1**2 + B * nu1
        var = A**2 * 2 * v**2 * d_ + A**2 * 4 * nu1**2 * v + B**2 * v + 4 * A * B * nu1 * v
        out["mean" + h], out["var" + h] = mean, var
    return out


def _check_asym(forms, ctx):
    """§3.1: the extra quadratic term 'becomes negligible as n -> infinity and we retrieve their
    test statistic': along d = tau n (tau = 5) with Azize & Basu's score m_AB = m/n fixed, the
    standard deviation of D and the difference of its means under H1 and H0 (what would change
    a test) must tend to the stated limits (exact moments, checked to shrink and to fall below
    0.02 at n = 25,600); the exact moments are cross-checked by Monte Carlo at n = 100 (4 SE)."""
    lim_sd, lim_sep = float(forms["sd_limit"]), float(forms["sep_limit"])
    tau_, mab = 5, 2.0
    trail = []
    for n_ in (100, 400, 1600, 6400, 25600):
        mo = _asym_moments(n_, tau_ * n_, mab * n_)
        trail.append((n_, np.sqrt(max(mo["var0"], mo["var1"])), mo["mean1"] - mo["mean0"]))
    n_, sd_, sep_ = trail[-1]
    shrinking = all(a[1] >= b[1] for a, b in zip(trail, trail[1:], strict=False))
    if abs(sd_ - lim_sd) > 0.02 or abs(sep_ - lim_sep) > 0.02 or not shrinking:
        return Outcome(False, f"at n = {n_} (d = {tau_ * n_}) sd(D) = {sd_:.4g}, separation "
                              f"{sep_:.4g}; stated limits {lim_sd:g}, {lim_sep:g}",
                       {"n": n_, "sd": float(sd_), "separation": float(sep_)})
    rng = ctx.rng("sec3.1.asym")
    R, n_ = (4000 if ctx.quick else 20000), 100
    d_, m_ = tau_ * n_, mab * n_
    mo = _asym_moments(n_, d_, m_)
    cases = []
    for h, (nu1, v) in (("0", (0.0, 1 / n_)), ("1", (np.sqrt(m_) / n_, (n_ - 1) / n_**2))):
        w = rng.standard_normal((R, d_)) * np.sqrt(v)
        w[:, 0] += nu1
        D = -n_ / (2 * (n_ - 1)) * np.sum(w**2, 1) + np.sqrt(m_) / (n_ - 1) * w[:, 0]
        c = (D - D.mean()) ** 2
        cases.append(({"n": n_, "d": d_, "H": h, "moment": "mean"}, mo["mean" + h],
                      float(D.mean()), float(D.std(ddof=1) / np.sqrt(R))))
        cases.append(({"n": n_, "d": d_, "H": h, "moment": "var"}, mo["var" + h],
                      float(D.var(ddof=1)), float(c.std(ddof=1) / np.sqrt(R))))
    out = mc_outcome(cases, what="exact moments of D (Monte Carlo cross-check)")
    if not out.ok:
        return out
    return Outcome(True, "sd(D) and the H1-H0 shift of D shrink to 0 along d = 5n: "
                   + ", ".join(f"n={a}: sd {b:.3g}, shift {c:.3g}" for a, b, c in trail)
                   + "; " + out.detail)


# ----------------------------------------------------------------------------- registry

def _claims() -> list[Claim]:
    def C(label, location, title, stated, hyp, check, method, **kw):
        return Claim(id=f"{SEED}:{label}", seed=SEED, location=location, title=title,
                     stated=stated, hypotheses=tuple(hyp), check=check, method=method, **kw)

    root = s * sp.sqrt(n - 1) / (tau * sp.sqrt(n)) * sp.sqrt(_K)
    NT = n * T
    KT = (z - mu) ** 2 / s**2 - sp.log((NT - 1) / NT) - 2 * g
    d1 = ("d = 1", "D = N(mu, sigma^2), batches of n", "gamma <= gamma_max")
    return [
        C("appA.2.coeffs", "App. A.2 (proof of Theorem 3.4), 'Simplification'",
          "coefficients 1/(2v0) - 1/(2v1), (m1-m0)/v1, (m1-m0)^2/(2v1)",
          {"quad_coef": -tau**2 * n / (2 * (n - 1) * s**2),
           "lin_coef": (z - mu) * tau * n / ((n - 1) * s**2),
           "const": (z - mu) ** 2 / (2 * (n - 1) * s**2)}, d1[:2], _check_A2, "symbolic",
          perturb_key="lin_coef"),
        C("appA.3.roots", "App. A.3 (proof of Lemma 3.5), discriminant and roots N_1,2",
          "acceptance interval of SeMI* in N = (Xbar_tau - mu)/tau",
          {"Delta": tau**2 * n / (s**2 * (n - 1)) * _K,
           "N_lo": (z - mu) / tau - root, "N_hi": (z - mu) / tau + root}, d1, _check_A3,
          "numeric", perturb_key="N_hi"),
        C("appA.4.std", "App. A.4 (proof of Lemma 3.6), standardised roots",
          "(N_1,2 - mu_1)/sigma_1 = (z*-mu) sqrt(n-1)/sigma -+ sqrt(n) sqrt(K)",
          {"std_lo": (z - mu) * sp.sqrt(n - 1) / s - sp.sqrt(n) * sp.sqrt(_K),
           "std_hi": (z - mu) * sp.sqrt(n - 1) / s + sp.sqrt(n) * sp.sqrt(_K)}, d1,
          _check_A4, "symbolic", perturb_key="std_hi"),
        C("appA.5.coeffs", "App. A.5 (proof of Lemma 3.7), c^(T) and discriminant",
          "Final Observation log LR = c0 + c1 W + c2 W^2 and its discriminant",
          {"c0": -sp.log((NT - 1) / NT) / 2 - (z - mu) ** 2 / (2 * (NT - 1) * s**2),
           "c1": NT * (z - mu) / ((NT - 1) * s**2), "c2": -NT / (2 * (NT - 1) * s**2),
           "Delta": NT / (s**2 * (NT - 1)) * KT}, ("d = 1", "stationary", "W = mu_hat_T - mu"),
          _check_A5, "symbolic", perturb_key="c1",
          notes="The coefficients and the discriminant are right; the roots W_1,2 printed "
                "next to them are not (claim appA.5.roots)."),
        C("lemB.5.metric", "App. B.3, Lemma B.5 with App. B's notation ||x||_Sigma = "
          "sqrt(x^T Sigma^-1 x)", "the ellipsoid ||U||^2_{Sigma^-1} <= R^2 of Lemma B.5",
          {"metric_exponent": sp.Integer(1)},
          ("Sigma diagonal", "||x||_A = sqrt(x^T A^-1 x) (App. B, Notation)"),
          _check_B5_metric, "monte-carlo", corrected={"metric_exponent": sp.Integer(-1)},
          notes="With App. B's own notation, ||U||^2_{Sigma^-1} = U^T Sigma U; the proof (and "
                "Corollary B.6) use U^T Sigma^-1 U, i.e. ||U||^2_Sigma in that notation. The "
                "literal reading changes alpha unless Sigma = I (d = 2, Sigma = diag(0.5, 3): "
                "see the counterexample)."),
        C("appD.indep", "App. D, Notation ('independent under both hypotheses')",
          "batch means independent under H0 and under H1~ (tau uniform)",
          {"cov": sp.Integer(0)}, ("tau ~ U{1..T} under H1~", "d = 1"), _check_D_indep,
          "monte-carlo", corrected={"cov": -(z - mu) ** 2 / (n**2 * T**2)},
          notes="Under the mixture H1~ only one batch carries z*, so the batch means are "
                "negatively correlated: Cov(Xbar_s, Xbar_t) = -(z*-mu)^2/(n^2 T^2), s != t "
                "(T = 2, n = 10, z*-mu = 3: -0.0225). They are independent under H0 and under "
                "each H1^t, which is all Theorem 3.10 and Theorem E.1 use."),
        C("appE.2.threshold", "App. E.2 (after Corollary E.2), level of SeMI-max",
          "alpha_0(gamma*) = 1 - (1-alpha)^(1/T) gives FPR alpha; Bonferroni alpha/T "
          "approximates it", {"alpha0": 1 - (1 - al) ** (1 / T), "alpha0_bonferroni": al / T},
          ("stationary", "d = 1", "n = 10, m* = 9"), _check_E2, "monte-carlo",
          perturb_key="alpha0"),
        C("sec3.1.asymptotic", "§3.1 'Connection to the Asymptotic Results' (after "
          "Theorem 3.1)", "the extra quadratic term is negligible as n grows; Azize & Basu's "
          "statistic is retrieved", {"sd_limit": sp.Integer(0), "sep_limit": sp.Integer(0)},
          ("d, n -> infinity with d/n = tau = 5", "Azize & Basu's score m*/n = 2 fixed"),
          _check_asym, "asymptotic",
          perturb=lambda f: {**f, "sd_limit": sp.Rational(1, 2)},
          notes="D = log LR_tau - [(z*-mu)^T Sigma^-1 N_tau - m*/(2n)] has standard deviation "
                "about sqrt(d/2)/n and an H1-H0 shift of (d + m*)/(2n(n-1)), both -> 0 along "
                "d = tau n with m*/n fixed, so the two tests become equivalent (the quadratic "
                "term itself tends to the constant -d/(2n), not to 0)."),
        C("sec4.1.structure", "§4.1 after Theorem 4.1 ('the batch mean replaced by the scaled "
          "parameter update N/eta_tau')", "Theorem 4.1 is Theorem 3.1 with N_tau -> N/eta",
          {"N_tau": Nv / eta}, ("Gaussian batch gradients", "Sigma -> Sigma_g, z*-mu -> delta_g",
                                "shown for d = 1"), _check_structure, "numeric",
          corrected={"N_tau": -Nv / eta},
          notes="N/eta_tau = (theta_tau - theta_{tau-1})/eta_tau + mu_g = -(g_tau - mu_g): the "
                "batch-mean deviation is -N/eta_tau, which is why Theorem 4.1's linear term "
                "carries a minus sign. Theorem 4.1 (and F.4) also call m* = delta_g^T "
                "Sigma_g^-1 delta_g 'the Mahalanobis distance'; it is its square (as in "
                "Theorem 3.1)."),
    ]


CLAIMS = _claims()

#: Our conclusions, pinned for the registry tests (each still decided by its check).
EXPECTED_FAILS = {f"{SEED}:appD.indep", f"{SEED}:sec4.1.structure",
                  f"{SEED}:lemB.5.metric"}
EXPECTED_CONDITIONAL: set[str] = set()
