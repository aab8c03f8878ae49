"""Claims of ``sequential_dp_auditing.txt`` (sequential (eps, delta)-DP auditing with the MMD).

Checked exactly on discrete mechanisms: hockey-stick divergences and MMDs of finite distributions
are finite sums, so every check below is an exact computation at random mechanisms and kernels,
plus the binary mechanism that makes Theorem 3.1's bound tight (so a tightened bound fails).

Claims ``thm3.1``, ``sec3.4.evalue``, ``sec3.2.richter``, ``thm3.2.i`` hold; ``remA.1`` fails (see its notes;
``semi-core verify``, ``docs/errata.md``).
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from .._core import Claim, Outcome, lambdify, mc_outcome, symbolic_outcome

SEED = "sequential_dp_auditing"

eps, delta = sp.symbols("epsilon delta", positive=True)
fx, fy, tau = sp.symbols("f_X f_Y tau", real=True)


def _hs(P, Q, e):
    return float(np.sum(np.maximum(P - np.exp(e) * Q, 0.0)))


def _random_mechanism(rng, k):
    P = rng.dirichlet(np.full(k, 0.7))
    Q = rng.dirichlet(np.full(k, 0.7))
    pts = rng.normal(size=(k, 2))
    bw = 10 ** rng.uniform(-1.5, 0.5)
    K = np.exp(-np.sum((pts[:, None] - pts[None]) ** 2, axis=-1) / (2 * bw**2))
    return P, Q, K


def _mmd(P, Q, K):
    v = P - Q
    return float(np.sqrt(max(v @ K @ v, 0.0)))


def _check_tau(forms, ctx):
    rng = ctx.rng("sda3.1")
    f = lambdify(forms["tau"], [eps, delta])
    for _ in range(300 if ctx.quick else 3000):
        P, Q, K = _random_mechanism(rng, int(rng.integers(2, 7)))
        e_ = rng.uniform(0, 4)
        d_ = max(_hs(P, Q, e_), _hs(Q, P, e_))  # the mechanism is exactly (e_, d_)-DP
        mmd, bound = _mmd(P, Q, K), float(f(e_, d_))
        if mmd > bound + 1e-12:
            return Outcome(False, f"an (eps={e_:.4g}, delta={d_:.4g})-DP pair on {len(P)} points "
                           f"has MMD {mmd:.6g} > tau = {bound:.6g}",
                           {"eps": e_, "delta": d_, "mmd": mmd, "tau": bound})
    for _ in range(20):
        e_, d_ = rng.uniform(0, 4), rng.uniform(0, 0.3)
        p = (np.exp(e_) + d_) / (1 + np.exp(e_))
        P, Q = np.array([p, 1 - p]), np.array([1 - p, p])
        assert max(_hs(P, Q, e_), _hs(Q, P, e_)) <= d_ + 1e-12  # it is (eps, delta)-DP
        mmd, bound = _mmd(P, Q, np.eye(2)), float(f(e_, d_))
        if mmd > bound + 1e-12 or mmd < bound - 1e-9:
            kind = "exceeds" if mmd > bound else "is not attained by"
            return Outcome(False, f"the tight binary (eps={e_:.4g}, delta={d_:.4g}) mechanism has "
                           f"MMD {mmd:.6g}; the bound {bound:.6g} {kind} it",
                           {"eps": e_, "delta": d_, "mmd": mmd, "tau": bound})
    return Outcome(True, "MMD <= tau(eps, delta) for random discrete mechanisms and Gaussian "
                         "kernels (delta = their exact hockey-stick divergence); attained by the "
                         "binary mechanism with p = (e^eps + delta)/(1 + e^eps)")


def _check_evalue(forms, ctx):
    rng = ctx.rng("sda.evalue")
    f = lambdify(forms["E"], [fx, fy, tau])
    worst = -np.inf
    for _ in range(300 if ctx.quick else 3000):
        k = int(rng.integers(2, 7))
        P, Q, K = _random_mechanism(rng, k)
        mmd = _mmd(P, Q, K)
        if mmd < 1e-9:
            continue
        c = (P - Q) if rng.random() < 0.5 else rng.normal(size=k)  # witness or any unit f
        fvals = K @ c / np.sqrt(c @ K @ c)                          # ||f||_H = 1
        t = mmd * (1 + rng.exponential(0.3) * (rng.random() < 0.5))  # null: MMD <= tau
        E = f(fvals[:, None], fvals[None, :], t)                    # E(x_i, y_j)
        mean = float(P @ E @ Q)
        if E.min() < -1e-12 or mean > 1 + 1e-12:
            return Outcome(False, f"with MMD={mmd:.4g} <= tau={t:.4g}: E[E_t] = {mean:.6g}, "
                           f"min E_t = {E.min():.4g}", {"mmd": mmd, "tau": t, "mean": mean,
                                                         "min": float(E.min())})
        worst = max(worst, mean)
    if worst < 1 - 1e-9:
        return Outcome(False, f"E[E_t] never reaches 1 (max {worst:.6g}): bound not attained")
    return Outcome(True, "E_t >= 0 and E_H0[E_t] <= 1 exactly for random mechanisms, kernels "
                         "and unit-norm f; equality at MMD = tau with the witness function")


def _check_lambda(forms, ctx):
    rng = ctx.rng("sda3.2")
    f = lambdify(forms["lambda_max"], [tau])
    for t in np.linspace(0.0, np.sqrt(2), 15):
        lam = float(f(t))
        worst = 1 + lam * (-2 - t)  # f(X) - f(Y) >= -2 when |f| <= ||f||_H sqrt(K(x,x)) <= 1
        if worst < -1e-12 or worst > 1e-12:
            kind = "negative wealth factor" if worst < 0 else "range not maximal"
            return Outcome(False, f"at tau={t:.4g}, lambda={lam:.6g}: worst factor "
                           f"1 + lambda(-2 - tau) = {worst:.4g} ({kind})",
                           {"tau": t, "lambda": lam, "worst_factor": worst})
    # Ville: P(sup_t K_t >= 1/alpha) <= alpha at the null boundary (binary mechanism, MMD = tau)
    R, steps, al = (4000, 200, 0.1) if ctx.quick else (20000, 500, 0.1)
    cases = []
    for e_ in (0.5, 1.5):
        p = np.exp(e_) / (1 + np.exp(e_))
        t = np.sqrt(2) * (2 * p - 1)
        lam = float(f(t))
        fxv = np.where(rng.random((R, steps)) < p, 1, -1) / np.sqrt(2)   # witness on {0, 1}
        fyv = np.where(rng.random((R, steps)) < 1 - p, 1, -1) / np.sqrt(2)
        logk = np.cumsum(np.log1p(lam * (fxv - fyv - t)), axis=1)
        hit = (logk.max(axis=1) >= np.log(1 / al)).mean()
        se = np.sqrt(al * (1 - al) / R)
        # one-sided: only an excess over alpha counts against the bound
        cases.append(({"eps": e_, "tau": t, "lambda": lam}, al, max(hit, al), se))
    out = mc_outcome(cases, what="Ville bound P(sup K_t >= 1/alpha) <= alpha (4 binomial SE)")
    if out.ok:
        out.detail = "lambda <= 1/(2+tau) is exactly the non-negativity range; " + out.detail
    return out


def _check_remA1(forms, ctx):
    derived = sp.sqrt(2) * (1 - 2 * (1 - delta) / (1 + sp.exp(eps)))
    return symbolic_outcome(forms["tau"], derived, [eps, delta],
                            lambda r: {"epsilon": r.uniform(0, 4), "delta": r.uniform(0, 0.5)},
                            ctx.rng("remA1"), what="rewriting of tau(eps, delta)")


mmd_ = sp.symbols("MMD", positive=True)


def _check_richter(forms, ctx):
    """§3.2: for 0 < tau < MMD <= sqrt 2 the per-step expected factor of the process built as
    Richter et al.'s is below Alg. 1's at lambda = 1/(2 + tau) (grid of 200 x 200 points)."""
    f = lambdify(forms["richter_factor"], [tau, mmd_])
    t = np.linspace(1e-4, np.sqrt(2) - 1e-4, 200)
    for t_ in t:
        m = np.linspace(t_ + 1e-6, np.sqrt(2), 200)
        lhs = f(t_, m)
        rhs = 1 + (m - t_) / (2 + t_)
        i = int(np.argmax(lhs - rhs))
        if lhs[i] >= rhs[i]:
            return Outcome(False, f"at tau = {t_:.4g}, MMD = {m[i]:.4g}: Richter-style factor "
                                  f"{lhs[i]:.6g} >= Alg. 1's {rhs[i]:.6g}",
                           {"tau": float(t_), "mmd": float(m[i]), "lhs": float(lhs[i]),
                            "rhs": float(rhs[i])})
    return Outcome(True, "(1 + tau/2 + (MMD - tau)/2) e^{-tau/2} < 1 + (MMD - tau)/(2 + tau) "
                         "on 0 < tau < MMD <= sqrt 2 (from 1 + tau/2 < e^{tau/2})")


def _claims() -> list[Claim]:
    def C(label, location, title, stated, hyp, check, method, **kw):
        return Claim(id=f"{SEED}:{label}", seed=SEED, location=location, title=title,
                     stated=stated, hypotheses=tuple(hyp), check=check, method=method, **kw)

    return [
        C("thm3.1", "§3.1, Theorem 3.1, Eq. (2) (App. A)", "MMD bound tau(eps, delta) for "
          "(eps, delta)-DP mechanisms",
          {"tau": sp.sqrt(2) * (1 - 2 * (1 - delta) / (1 + sp.exp(eps)))},
          ("0 <= K(x, y) <= 1", "A is (eps, delta)-DP"), _check_tau, "numeric",
          perturb_factor=1 / 1.1),
        C("remA.1", "App. A, Remark A.1 (first equality)", "tau(eps, delta) rewritten over "
          "1 + e^eps", {"tau": sp.sqrt(2) / (1 + sp.exp(eps)) * (1 + sp.exp(eps) - 2 + delta)},
          (), _check_remA1, "symbolic",
          corrected={"tau": sp.sqrt(2) / (1 + sp.exp(eps)) * (sp.exp(eps) - 1 + 2 * delta)},
          notes="with 2 delta the remark's next step '<= e^eps - 1 + delta' is false (eps = 0: "
                "sqrt(2) delta > delta); its conclusion, tau < e^eps - 1 + delta (1 + e^-eps) "
                "for eps > 0, still holds (the delta terms compare as 2 sqrt(2) u < (1 + u)^2, "
                "u = e^eps)."),
        C("sec3.4.evalue", "§3.4, e-value E_t", "E_t = (2 + f(X) - f(Y))/(2 + tau) is an "
          "e-value under H0", {"E": (2 + fx - fy) / (2 + tau)},
          ("||f_t||_H <= 1, f_t predictable", "H0: MMD <= tau"), _check_evalue, "numeric"),
        C("sec3.2.richter", "§3.2, the comparison with Richter et al. (display of E_H1[K~_t])",
          "a one-sided process as Richter et al.'s grows slower than Alg. 1's at "
          "lambda = 1/(2 + tau)",
          {"richter_factor": (1 + tau / 2) * sp.exp(-tau / 2)
           + (mmd_ - tau) / 2 * sp.exp(-tau / 2)},
          ("0 < tau < MMD <= sqrt 2", "f* the witness"), _check_richter, "numeric",
          perturb_factor=sp.Rational(11, 10)),
        C("thm3.2.i", "§3.2, Theorem 3.2 (i)", "betting range lambda <= 1/(2+tau) and Ville",
          {"lambda_max": 1 / (2 + tau)}, ("H0: MMD <= tau", "f* the witness"), _check_lambda,
          "numeric"),
    ]


CLAIMS = _claims()
