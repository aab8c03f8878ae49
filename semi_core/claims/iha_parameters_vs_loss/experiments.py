r"""Claims of ``iha_parameters_vs_loss.txt`` on its experiments: the tables, hyperparameters
and Hessian spectra of §4 and App. D-E.

Verdicts:

* ``tab7.purchase100`` -- Table 7 repeats Table 2's Purchase-100 column: **fails**; the rows
  carry identical TPRs at both FPRs (one run), the IHA AUC agrees (.703) but LOSS (.531 vs .529)
  and LiRA (.644 vs .634) differ by more than rounding; §D's prose (".53", ".63") follows
  Table 7.
* ``sec4.1.eq4.spectrum`` -- Eq. 4 (Thm 2.2 with Thm 2.3's noise) as the stationary variance at
  §4.1's hyperparameters (:math:`\lambda = 0.01`, :math:`\mu = 0.9`, :math:`\alpha = 5\cdot
  10^{-4}`) over the Hessian spectra App. E reports (near-zero and small negative eigenvalues):
  **holds only under** :math:`0 < \sigma_i < 2(1+\mu)/\lambda - \alpha`; at a negative
  eigenvalue the noise "covariance" :math:`2L_*\sigma_i/S` and Eq. 4's variance are negative
  (or the recursion has no stationary state), so Thm 3.1-3.2 do not cover the models the
  attack is run on without the damping of App. E.
* ``appE.grad_L0`` -- :math:`\nabla L_0 = \nabla L_1 - \nabla\ell(w, z_1)/n` with the
  normalisation of Assumption 3: holds (SymPy).
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from semi_core.symbolic import iha as D

from .._core import Claim, Outcome, lambdify, numeric_outcome, symbolic_outcome

SEED = "iha_parameters_vs_loss"

n = sp.Symbol("n", positive=True)

# Table 7, Purchase-100 column (AUC); the rows' TPR@1% / TPR@0.1% equal Table 2's exactly:
# LOSS 0.97 / 0.00, LiRA 4.70 / 0.98, IHA 13.69 / 7.52.
_TABLE7_AUC = {"auc_loss": 0.529, "auc_lira": 0.634, "auc_iha": 0.703}
_ROUNDING = 0.0005 + 1e-12          # both tables print three decimals


def _check_tables(forms, ctx):
    worst = None
    for k, v7 in _TABLE7_AUC.items():
        gap = abs(float(forms[k]) - v7)
        if worst is None or gap > worst[1]:
            worst = (k, gap, float(forms[k]), v7)
    k, gap, v2, v7 = worst
    if gap <= 2 * _ROUNDING:
        return Outcome(True, "Table 2 and Table 7 agree on the Purchase-100 AUCs within "
                             f"rounding (largest gap {gap:.4f})")
    return Outcome(False, f"{k}: Table 2 prints {v2:.3f}, Table 7 prints {v7:.3f} for the same "
                          f"run (identical TPR columns); the gap {gap:.3f} exceeds the "
                          f"rounding of three decimals ({2 * _ROUNDING:.3f})",
                   {"quantity": k, "table2": v2, "table7": v7, "gap": gap})


_Y = D.SYM
lam, S, Ls, mu, al, sig = (_Y[k] for k in ("lambda", "S", "L_*", "mu", "alpha", "sigma"))
#: §4.1's hyperparameters; the spectrum: App. E's near-zero and small negative eigenvalues,
#: moderate ones, and one beyond the step-size limit 2(1+mu)/lambda - alpha = 380.
_HYPER = {"lambda": 0.01, "mu": 0.9, "alpha": 5e-4}
_SPECTRUM = (-0.05, -1e-3, -1e-4, 1e-5, 1e-3, 0.2, 5.0, 100.0, 500.0)


def _check_spectrum(forms, ctx):
    f = lambdify(forms["Sigma"], [lam, mu, al, sig, S, Ls])
    lr, m, a = _HYPER["lambda"], _HYPER["mu"], _HYPER["alpha"]
    S_, L_ = 64.0, 0.5            # both scale Sigma linearly (Eq. 4); any positive values do
    limit = 2 * (1 + m) / lr - a
    pts, sv, rv = [], [], []
    for s_ in _SPECTRUM:
        if ctx.restricted and not 0 < s_ < limit:
            continue
        C_ = 2 * L_ * s_ / S_                      # Thm 2.3's leading noise in this direction
        pt = {"sigma": s_, **_HYPER, "S": S_, "L_*": L_}
        try:
            if C_ < 0:
                raise ValueError("noise variance 2 L_* sigma / S < 0: not a covariance")
            ref = float(D.lyapunov_covariance(np.array([[s_]]), np.array([[C_]]), lr=lr,
                                              momentum=m, weight_decay=a)[0, 0])
        except ValueError as exc:
            return Outcome(False, f"at sigma = {s_:g} (lambda = {lr}, mu = {m}, alpha = {a}) "
                                  f"there is no stationary variance ({exc}); Eq. 4 gives "
                                  f"{float(f(lr, m, a, s_, S_, L_)):.6g}",
                           {**pt, "stated": float(f(lr, m, a, s_, S_, L_)),
                            "reference": "none"})
        pts.append(pt)
        sv.append(float(f(lr, m, a, s_, S_, L_)))
        rv.append(ref)
    return numeric_outcome(pts, sv, rv, what="Eq. 4 per eigen-direction at §4.1's "
                           "hyperparameters", rtol=1e-8, atol=0.0,
                           ref_name="the discrete Lyapunov equation of (w_t, h_t)")


def _derived_grad_coefficient() -> sp.Expr:
    """c with grad L_0 = grad L_1 - c grad l(w, z_1), from Assumption 3's definitions."""
    w = sp.Symbol("w", real=True)
    ell1 = sp.Function("ell_1")(w)                 # loss of the target record
    rest = sp.Function("S")(w)                     # sum of m_i l(w, z_i) over i >= 2
    L0 = rest / n
    L1 = (ell1 + rest) / n
    c = sp.Symbol("c")
    sol = sp.solve(sp.Eq(sp.diff(L0, w), sp.diff(L1, w) - c * sp.diff(ell1, w)), c)
    return sp.simplify(sol[0])


def _check_grad(forms, ctx):
    return symbolic_outcome(forms["c"], _derived_grad_coefficient(), [n],
                            lambda g: {"n": float(g.integers(2, 10**6))}, ctx.rng("iha.appE"),
                            what="coefficient of grad l(w, z_1) in grad L_0")


def _claims() -> list[Claim]:
    def C(label, location, title, stated, hyp, check, method, **kw):
        return Claim(id=f"{SEED}:{label}", seed=SEED, location=location, title=title,
                     stated=stated, hypotheses=tuple(hyp), check=check, method=method, **kw)

    f = sp.Float
    return [
        C("tab7.purchase100", "§4.2 Table 2 vs App. D Table 7 (Purchase-100 column)",
          "the two tables report the same Purchase-100 run",
          {"auc_loss": f("0.531", 3), "auc_lira": f("0.644", 3), "auc_iha": f("0.703", 3)},
          ("identical TPR@1% and TPR@0.1% in every row: one run",), _check_tables, "numeric",
          perturb_key="auc_iha",
          notes="Table 2's LiRA .644 +- .004 and Table 7's .634 +- .003 are 2 standard errors "
                "of their difference apart although the TPRs coincide to two decimals; §D's "
                "text ('LOSS ... to ~0.53, LiRA-Online ... to ~0.63') follows Table 7, so Table "
                "2's LOSS and LiRA AUCs are the likely misprints (the comparison with IHA "
                "(.703) is unaffected in direction)."),
        C("sec4.1.eq4.spectrum", "§2.2 Eq. 4 / Thm 3.1 with §4.1's hyperparameters and "
          "App. E's Hessian spectra", "stationary fluctuation (Eq. 4) for the trained models",
          {"Sigma": lam / (S * (1 - mu)) * 2 * Ls * sig / ((sig + al)
                                                          * (2 - lam / (1 + mu) * (sig + al)))},
          ("Assumptions 1-2 (local minimum, stationary state)", "C from Thm 2.3 (leading term)",
           "lambda = 0.01, mu = 0.9, alpha = 5e-4 (§4.1)"), _check_spectrum, "numeric",
          derived={"Sigma": D.eq4_sigma()},
          condition="0 < sigma_i(H_*) < 2(1+mu)/lambda - alpha (= 380 at §4.1's values): a "
                    "positive definite Hessian, which App. E's spectra are not",
          notes="App. E: the Hessians of the audited models have near-zero and small negative "
                "eigenvalues, handled by damping with 0.2. The theory (Thm 2.3's C, Eq. 4, the "
                "log-determinant of Thm 3.1) is then outside its hypotheses: the damped "
                "Hessian used by IHA is a regularisation, not the H_* of Thms 3.1-3.2."),
        C("appE.grad_L0", "App. E (pre-computing nabla L_1)", "grad L_0 = grad L_1 - "
          "grad l(w, z_1)/n", {"c": 1 / n},
          ("L_0, L_1 as in Assumption 3 (both normalised by n)",), _check_grad, "symbolic",
          derived={"c": _derived_grad_coefficient()},
          notes="Consistent with Assumption 3 (L_0 keeps the 1/n of L_1, not 1/(n-1)); a "
                "leave-one-out mean loss would need (n grad L_1 - grad l)/(n-1)."),
    ]


CLAIMS = _claims()

#: Our conclusions, pinned for the registry tests (each still decided by its check).
EXPECTED_FAILS = {f"{SEED}:tab7.purchase100"}
EXPECTED_CONDITIONAL = {f"{SEED}:sec4.1.eq4.spectrum"}
