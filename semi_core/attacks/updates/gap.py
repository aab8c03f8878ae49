r"""How far ScoreDiff / ScoreRatio are from the optimal test, on the empirical-mean game.

Game (``semi_sequential_mi`` §3 with per-step batch sizes; ``combining_mi_updates`` App. B.2):
:class:`~semi_core.mechanisms.empirical_mean.EmpiricalMean` with batches ``[n0, n1]``, isotropic
:math:`\mathcal N(\mu,\sigma^2 I_d)` data, the target :math:`z` inserted in the *update* batch
(:math:`\tau = 2`). The "model" is the running mean: :math:`f_0 = \hat\mu_1` (mean of
:math:`D_0`), :math:`f_1 = \hat\mu_2` (mean of :math:`D_0\cup D_1`), and the loss is
:math:`\ell(f) = \|f - z\|^2` (the loss whose minimiser is the mean, App. B.1). Tests (higher =
member):

* **optimal**: the LR of the update :math:`\bar X_2` (SeMI* at :math:`\tau = 2`, exact errors
  from :mod:`semi_core.stats.errors`) -- by isolation, the LR of the pair :math:`(f_0, f_1)`;
* **final**: the Final Observation LR of :math:`f_1` alone (no update);
* **B.3 linear**: :math:`s = \langle \bar X_2 - \mu, z - \mu\rangle` (Lemma B.3), two normal laws;
* **ScoreDiff**: :math:`\ell(f_0) - \ell(f_1)`; **ScoreRatio**:
  :math:`\log(\ell(f_0)+c) - \log(\ell(f_1)+c)`.

Closed form of the heuristics (derived here). Rotate so that :math:`z-\mu = a e_1`. Per
coordinate :math:`j`, :math:`v_j = (f_{0,j}-\mu_j, \bar X_{2,j}-\mu_j)` is Gaussian with
covariance :math:`\mathrm{diag}(\sigma^2/n_0, s_w^2)` and mean :math:`(0, m_{w,j})`
(:math:`s_w^2 = \sigma^2/n_1`, :math:`m_w = 0` under :math:`H_0`;
:math:`s_w^2 = \sigma^2(n_1-1)/n_1^2`, :math:`m_{w,1} = a/n_1` under :math:`H_1`). With
:math:`f_1 - \mu = (n_0 v_{j,1} + n_1 v_{j,2})/n`, for any :math:`t > 0`

.. math::

   Q_t = \ell(f_1) - t\,\ell(f_0) = \sum_j v_j^\top A_t v_j + b_{t,j}^\top v_j + c_{t,j},\quad
   A_t = \begin{pmatrix} (n_0/n)^2 - t & n_0n_1/n^2\\ n_0n_1/n^2 & (n_1/n)^2\end{pmatrix},

:math:`b_{t,j} = \delta_j(2t - 2n_0/n, -2n_1/n)`, :math:`c_{t,j} = (1-t)\delta_j^2`.
Whitening and diagonalising :math:`LA_tL = P\Lambda P^\top` (:math:`\det A_t = -t(n_1/n)^2 < 0`:
one positive, one negative eigenvalue) and completing the square, the :math:`d` i.i.d.
coordinates add up to a *generalised chi-square with two terms*

.. math::

   Q_t = \lambda_1 X_1 + \lambda_2 X_2 + C_t,\qquad X_i\sim\chi^2_d(h_i^2)\ \text{independent},

whose CDF is the one-dimensional integral
:math:`P(Q_t\le x)=\int F_{X_1}\big((x-C_t-\lambda_2 u)/\lambda_1\big)\,f_{X_2}(u)\,du`
(:math:`\lambda_1>0`). ScoreDiff is :math:`-Q_1`; ScoreRatio :math:`> s` iff
:math:`Q_{e^{-s}} < c(e^{-s}-1)`. Each FPR is matched by a root search on the threshold.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from scipy import integrate, optimize, stats
from scipy.special import ndtr, ndtri

from semi_core._rng import as_seed_sequence
from semi_core._validation import check_int, check_positive
from semi_core.audit.roc import roc_metrics, tpr_at_fpr_se
from semi_core.game.result import GameResult
from semi_core.mechanisms.empirical_mean import EmpiricalMean
from semi_core.stats import errors
from semi_core.stats.update_combination import combine

__all__ = ["UpdateMeanGame", "gen_chi2_terms", "heuristic_cdf", "closed_form_tpr",
           "play_update_game", "gap_table", "multi_update_game"]

TESTS = ("optimal", "final", "b3-linear", "score-diff", "score-ratio")


@dataclass(frozen=True)
class UpdateMeanGame:
    """Parameters of the single-update empirical-mean game (``n0``, ``n1``, ``d``, ``sigma``,
    distance :math:`a=\\|z-\\mu\\|`, ratio damping ``c``)."""

    n0: int = 200
    n1: int = 10
    d: int = 50
    sigma: float = 1.0
    distance: float = 8.0
    c: float = 1e-3

    def __post_init__(self):
        check_int(self.n0, "n0", minimum=2)
        check_int(self.n1, "n1", minimum=2)
        check_int(self.d, "d", minimum=1)
        check_positive(self.sigma, "sigma")
        check_positive(self.distance, "distance")
        check_positive(self.c, "c")

    def mechanism(self) -> EmpiricalMean:
        """The :class:`EmpiricalMean` with batches ``[n0, n1]`` and the target on axis 1."""
        target = np.zeros(self.d)
        target[0] = self.distance
        return EmpiricalMean(n=[self.n0, self.n1], T=2, mu=0.0, cov=self.sigma**2, target=target)


def gen_chi2_terms(g: UpdateMeanGame, t: float, member: bool):
    r"""``(lam, h2, C)``: :math:`Q_t = \lambda_1\chi^2_d(h_1^2) + \lambda_2\chi^2_d(h_2^2) + C`
    (see the module docstring), ``lam`` sorted descending (``lam[0] > 0 > lam[1]``)."""
    n0, n1, s2 = g.n0, g.n1, g.sigma**2
    n = n0 + n1
    A = np.array([[(n0 / n) ** 2 - t, n0 * n1 / n**2], [n0 * n1 / n**2, (n1 / n) ** 2]])
    sw2 = s2 * (n1 - 1) / n1**2 if member else s2 / n1
    L = np.diag([np.sqrt(s2 / n0), np.sqrt(sw2)])
    lam, P = np.linalg.eigh(L @ A @ L)
    order = np.argsort(lam)[::-1]
    lam, P = lam[order], P[:, order]
    # coordinate 1 carries delta = a and the H1 mean shift; the other d - 1 are centred
    delta = g.distance
    m = np.array([0.0, delta / n1 if member else 0.0])
    b = delta * np.array([2 * t - 2 * n0 / n, -2 * n1 / n])
    lin = P.T @ (2 * L @ A @ m + L @ b)
    const = m @ A @ m + b @ m + (1 - t) * delta**2
    h = lin / (2 * lam)
    C = const - np.sum(lin**2 / (4 * lam))
    return lam, h**2, C


def heuristic_cdf(g: UpdateMeanGame, t: float, x: float, member: bool) -> float:
    """:math:`P(Q_t \\le x)` under :math:`H_1` (``member``) or :math:`H_0`, by one quadrature."""
    lam, h2, C = gen_chi2_terms(g, t, member)
    d = g.d
    x2 = stats.ncx2(d, h2[1]) if h2[1] > 0 else stats.chi2(d)
    x1 = stats.ncx2(d, h2[0]) if h2[0] > 0 else stats.chi2(d)

    def f(u):
        return x1.cdf((x - C - lam[1] * u) / lam[0]) * x2.pdf(u)

    lo, hi = x2.ppf(1e-13), x2.isf(1e-13)
    mid = x2.median()
    val = integrate.quad(f, lo, mid, limit=200, epsabs=1e-12)[0] + \
        integrate.quad(f, mid, hi, limit=200, epsabs=1e-12)[0]
    return float(min(max(val, 0.0), 1.0))


def _solve(fun, target: float, lo: float, hi: float) -> float:
    while fun(lo) > target:
        lo -= max(1.0, abs(lo))
    while fun(hi) < target:
        hi += max(1.0, abs(hi))
    return optimize.brentq(lambda v: fun(v) - target, lo, hi, xtol=1e-12, rtol=1e-12)


def closed_form_tpr(g: UpdateMeanGame, fpr: float, test: str) -> float:
    r"""TPR at FPR ``fpr`` of ``test`` in :data:`TESTS`, from closed forms.

    ``optimal`` / ``final``: :func:`semi_core.stats.errors.tpr_at_fpr` (SeMI* / Final
    Observation at :math:`\tau = 2`); ``b3-linear``:
    :math:`\Phi\big((a^2/n_1 - \sigma a\,\Phi^{-1}(1-\alpha)/\sqrt{n_1})/
    (\sigma a\sqrt{n_1-1}/n_1)\big)`; the heuristics by the generalised chi-square above.
    """
    if not (0.0 < fpr < 1.0):
        raise ValueError(f"fpr must be in (0, 1), got {fpr}")
    mech = g.mechanism()
    if test == "optimal":
        return float(errors.tpr_at_fpr(mech, fpr, "semi-star", tau=2))
    if test == "final":
        return float(errors.tpr_at_fpr(mech, fpr, "final", tau=2))
    a, s, n1 = g.distance, g.sigma, g.n1
    if test == "b3-linear":
        thr = s * a / np.sqrt(n1) * ndtri(1 - fpr)
        return float(ndtr((a**2 / n1 - thr) / (s * a * np.sqrt(n1 - 1) / n1)))
    if test == "score-diff":
        # member score -Q_1 > x  <=>  Q_1 < -x ; FPR = P0(Q_1 < q)
        q = _solve(lambda v: heuristic_cdf(g, 1.0, v, False), fpr, -a**2, a**2)
        return heuristic_cdf(g, 1.0, q, True)
    if test == "score-ratio":
        c = g.c

        def rate(sv, member):
            tt = np.exp(-sv)
            return heuristic_cdf(g, tt, c * (tt - 1.0), member)
        # FPR(s) decreases in s
        sv = _solve(lambda v: -rate(v, False), -fpr, -1.0, 1.0)
        return rate(sv, True)
    raise ValueError(f"test must be one of {TESTS}, got {test!r}")


def _scores(g: UpdateMeanGame, mech: EmpiricalMean, rel: np.ndarray) -> dict[str, np.ndarray]:
    z = mech.target
    f0, f1 = rel[:, 0], rel[:, 1]
    l0 = np.sum((f0 - z) ** 2, axis=1)
    l1 = np.sum((f1 - z) ** 2, axis=1)
    xbar = mech.batch_means(rel)[:, 1]
    return {
        "optimal": mech.log_lr_steps(rel)[:, 1],
        "final": mech.final_log_lr(rel, tau=2),
        "b3-linear": (xbar - mech.mu_t[1]) @ (z - mech.mu_t[1]),
        "score-diff": combine(l0, l1, "diff"),
        "score-ratio": combine(l0, l1, "ratio", c=g.c),
    }


def _sufficient_release(mech: EmpiricalMean, member, rng) -> np.ndarray:
    r"""Releases from exactly distributed batch means (target in batch 2): batch 1
    :math:`\mathcal N(\mu,\Sigma/n_0)`; batch 2 :math:`\mathcal N(\mu,\Sigma/n_1)` under
    :math:`H_0`, :math:`z/n_1 + \mathcal N((n_1-1)\mu/n_1, (n_1-1)\Sigma/n_1^2)` under
    :math:`H_1`."""
    R, d = member.size, mech.d
    n0, n1 = (float(v) for v in mech.n_t)
    e = rng.standard_normal((R, 2, d)) @ mech.chol_t[0].T
    xb = np.empty((R, 2, d))
    xb[:, 0] = mech.mu_t[0] + e[:, 0] / np.sqrt(n0)
    h0 = mech.mu_t[1] + e[:, 1] / np.sqrt(n1)
    h1 = mech.target / n1 + (n1 - 1) / n1 * mech.mu_t[1] + e[:, 1] * np.sqrt(n1 - 1) / n1
    xb[:, 1] = np.where(member[:, None], h1, h0)
    return mech.releases(xb)


def play_update_game(g: UpdateMeanGame, rounds: int, seed=0, *, chunk: int = 20000,
                     mode: str = "sufficient") -> GameResult:
    """Monte Carlo of the single-update game; every test of :data:`TESTS` on the same releases,
    as a :class:`GameResult`. ``mode="exact"`` draws every datum with the mechanism's own
    ``release``; ``"sufficient"`` draws the batch means from their exact laws (same
    distribution, ``n0`` times cheaper)."""
    rounds = check_int(rounds, "rounds", minimum=2)
    if mode not in ("exact", "sufficient"):
        raise ValueError(f"mode must be 'exact' or 'sufficient', got {mode!r}")
    mech = g.mechanism()
    root = as_seed_sequence(seed)
    member = np.r_[np.ones(rounds // 2, bool), np.zeros(rounds - rounds // 2, bool)]
    parts = {k: [] for k in TESTS}
    t0 = time.perf_counter()
    starts = list(range(0, rounds, chunk))
    for lo, child in zip(starts, root.spawn(len(starts)), strict=True):
        rng = np.random.default_rng(child)
        mem = member[lo:lo + chunk]
        rel = mech.release(mem, 2, rng) if mode == "exact" else _sufficient_release(mech, mem,
                                                                                    rng)
        for k, v in _scores(g, mech, rel).items():
            parts[k].append(v)
    return GameResult(member=member, tau=np.full(rounds, 2),
                      stats={k: np.concatenate(v) for k, v in parts.items()}, seed=None,
                      metadata={"game": "update-empirical-mean", "mode": mode, **g.__dict__,
                                "seconds": time.perf_counter() - t0})


def gap_table(g: UpdateMeanGame, rounds: int = 40000, seed=0, fpr=(0.01, 0.1),
              mode: str = "sufficient") -> dict:
    """TPR at each FPR for every test: closed form, Monte Carlo (delta-method SE from
    :func:`~semi_core.audit.roc.tpr_at_fpr_se`, which includes the threshold's own noise, and a
    Clopper-Pearson interval at the chosen threshold), the gap to the optimal test, and the
    Monte Carlo AUC."""
    t0 = time.perf_counter()
    cf = {t: {f"{f:g}": closed_form_tpr(g, f, t) for f in fpr} for t in TESTS}
    t_cf = time.perf_counter() - t0
    res = play_update_game(g, rounds, seed, mode=mode)
    rows = {}
    for t in TESTS:
        m_, n_ = res.scores(t)
        rm = roc_metrics(m_, n_, fpr=fpr, interval="binomial")
        se = tpr_at_fpr_se(m_, n_, fpr)["se"]
        rows[t] = {
            "closed_form": cf[t],
            "monte_carlo": {f"{f:g}": v for f, v in zip(fpr, rm.tpr_at_fpr, strict=True)},
            "mc_se": {f"{f:g}": float(v) for f, v in zip(fpr, se, strict=True)},
            "mc_interval": {f"{f:g}": iv for f, iv in zip(fpr, rm.tpr_at_fpr_interval,
                                                          strict=True)},
            "gap_to_optimal_closed_form": {f"{f:g}": cf["optimal"][f"{f:g}"] - cf[t][f"{f:g}"]
                                           for f in fpr},
            "auc_mc": rm.auc,
        }
    return {"game": g.__dict__, "rounds": rounds, "rows": rows,
            "seconds_closed_form": t_cf, "seconds_mc": res.metadata["seconds"]}


def multi_update_game(*, n0: int = 200, n_up: int = 10, k: int = 5, d: int = 20,
                      distance: float = 6.0, rounds: int = 20000, seed=0, c: float = 1e-3
                      ) -> dict:
    r"""k updates of the empirical mean, target in a uniform update :math:`\tau\in\{2..k+1\}`.

    Membership: Back-Front (diff, ratio), Delta (max pair diff) vs the optimal sequential tests
    with unknown :math:`\tau` -- SeMI-max :math:`\max_t\log\mathrm{LR}_t` and SeMI-Unif
    :math:`\log\frac1k\sum_t\mathrm{LR}_t` over the update steps. Entry inference (member rounds):
    Delta's :math:`\arg\max_t` pair diff vs :math:`\arg\max_t\log\mathrm{LR}_t` (the MAP entry
    under a uniform prior), against the random baseline :math:`1/k` among members.
    """
    mech_t = np.zeros(d)
    mech_t[0] = distance
    mech = EmpiricalMean(n=[n0] + [n_up] * k, T=k + 1, mu=0.0, cov=1.0, target=mech_t)
    rng = np.random.default_rng(as_seed_sequence(seed))
    member = rng.random(rounds) < 0.5
    tau = rng.integers(2, k + 2, size=rounds)
    t0 = time.perf_counter()
    rel = mech.release(member, tau, rng)
    llr = mech.log_lr_steps(rel)[:, 1:]                                  # update steps only
    loss = np.sum((rel - mech.target) ** 2, axis=-1)                    # (R, k+1)
    from scipy.special import logsumexp

    from semi_core.stats.update_combination import back_front_scores, pair_scores
    pairs = pair_scores(loss, "diff")
    st = {"semi-max": llr.max(1), "semi-unif": logsumexp(llr, axis=1) - np.log(k),
          "back-front-diff": back_front_scores(loss, "diff"),
          "back-front-ratio": back_front_scores(loss, "ratio", c=c),
          "delta-diff": pairs.max(1)}
    res = GameResult(member=member, tau=tau, stats=st, seed=seed,
                     metadata={"game": "multi-update-empirical-mean", "k": k, "n0": n0,
                               "n_up": n_up, "d": d, "distance": distance})
    out = {}
    for name in st:
        rm = roc_metrics(*res.scores(name), fpr=(0.01, 0.1), interval="binomial")
        out[name] = {"auc": rm.auc, "tpr_at_fpr": dict(zip(("0.01", "0.1"), rm.tpr_at_fpr,
                                                            strict=True))}
    mem = member
    ent = {"delta-argmax": float(np.mean(pairs[mem].argmax(1) + 2 == tau[mem])),
           "lr-argmax": float(np.mean(llr[mem].argmax(1) + 2 == tau[mem])),
           "random": 1.0 / k}
    return {"membership": out, "entry_among_members": ent, "rounds": rounds,
            "seconds": time.perf_counter() - t0, "result": res}
