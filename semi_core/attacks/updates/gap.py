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

from semi_core._rng import as_seed_sequence, child_seed
from semi_core._validation import check_int, check_positive, check_release_args
from semi_core.audit.roc import roc_metrics, tpr_at_fpr_se
from semi_core.game.play import play
from semi_core.game.result import GameResult
from semi_core.mechanisms.empirical_mean import EmpiricalMean
from semi_core.stats import errors
from semi_core.stats.statistics import semi_max, semi_unif
from semi_core.stats.update_combination import back_front_scores, combine, pair_scores

__all__ = ["UpdateMeanGame", "SufficientEmpiricalMean", "UpdateTests", "MultiUpdateTests",
           "update_game_mechanism", "gen_chi2_terms", "heuristic_cdf", "closed_form_tpr",
           "play_update_game", "gap_table", "multi_update_game", "fig8_sweep",
           "balanced_median_accuracy"]

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
        """The :class:`EmpiricalMean` with batches ``[n0, n1]`` and the target on axis 1.

        Returns
        -------
        EmpiricalMean
            The mechanism.
        """
        target = np.zeros(self.d)
        target[0] = self.distance
        return EmpiricalMean(n=[self.n0, self.n1], T=2, mu=0.0, cov=self.sigma**2, target=target)


def gen_chi2_terms(g: UpdateMeanGame, t: float, member: bool):
    r"""``(lam, h2, C)``: :math:`Q_t = \lambda_1\chi^2_d(h_1^2) + \lambda_2\chi^2_d(h_2^2) + C`
    (see the module docstring), ``lam`` sorted descending (``lam[0] > 0 > lam[1]``).

    Parameters
    ----------
    g : UpdateMeanGame
        The game.
    t : float
        Threshold parameter of the heuristic statistic.
    member : bool
        H1 (True) or H0.

    Returns
    -------
    lam : ndarray, shape (2,)
        Weights, descending.
    h2 : ndarray, shape (2,)
        Non-centralities.
    C : float
        Constant.
    """
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
    """:math:`P(Q_t \\le x)` under :math:`H_1` (``member``) or :math:`H_0`, by one quadrature.

    Parameters
    ----------
    g : UpdateMeanGame
        The game.
    t : float
        Parameter of the statistic.
    x : float
        The point.
    member : bool
        H1 (True) or H0.

    Returns
    -------
    float
        The probability, in [0, 1].
    """
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

    Parameters
    ----------
    g : UpdateMeanGame
        The game.
    fpr : float
        False-positive rate, in (0, 1).
    test : str
        A test of :data:`TESTS`.

    Returns
    -------
    float
        The TPR, in [0, 1].
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


class SufficientEmpiricalMean(EmpiricalMean):
    r""":class:`EmpiricalMean` whose releases come from exactly distributed batch means.

    Batch :math:`t` has mean :math:`\mathcal N(\mu_t,\Sigma_t/n_t)`, or, when the target is
    inserted in it, :math:`z/n_t + (n_t-1)\mu_t/n_t + \mathcal N(0, (n_t-1)\Sigma_t/n_t^2)`
    (one datum replaced by :math:`z`): the same law as :meth:`EmpiricalMean.release`, ``n_t``
    times cheaper (``combining_mi_updates`` App. B.2 uses only these means).
    """

    def release(self, member, tau, rng: np.random.Generator) -> np.ndarray:
        """Releases ``(R, T, d)`` from the batch means' exact laws.

        Parameters
        ----------
        member : array_like of bool, shape (R,)
            Whether the target is inserted.
        tau : int or array_like of int
            Insertion step(s).
        rng : numpy.random.Generator
            Source of randomness.

        Returns
        -------
        ndarray, shape (R, T, d)
            The releases.
        """
        member, taus = check_release_args(member, tau, self.T)
        R = member.size
        xb = rng.standard_normal((R, self.T, self.d))
        for t in range(self.T):
            n = float(self.n_t[t])
            et = xb[:, t] @ self.chol_t[t].T
            ins = member & (taus == t + 1)
            xb[:, t] = self.mu_t[t] + et / np.sqrt(n)
            if ins.any():  # a datum replaced by the target: the other n - 1 keep their law
                xb[ins, t] = (self.target / n + (n - 1) / n * self.mu_t[t]
                              + et[ins] * np.sqrt(n - 1) / n)
        return self.releases(xb)

    def params(self) -> dict:
        """Validated parameters, with the release mode.

        Returns
        -------
        dict
            The parameters with ``release = "sufficient"``.
        """
        return {**super().params(), "release": "sufficient"}


@dataclass(frozen=True)
class UpdateTests:
    r"""Scorer of the single-update game: every test of :data:`TESTS` (module docstring) on the
    releases :math:`(f_0, f_1)` of ``mech`` (target inserted at the update, :math:`\tau=2`)."""

    mech: EmpiricalMean
    c: float
    names: tuple[str, ...] = TESTS
    tau_free: bool = False

    def __call__(self, releases, tau, rng) -> dict[str, np.ndarray]:
        mech = self.mech
        z = mech.target
        f0, f1 = releases[:, 0], releases[:, 1]
        l0 = np.sum((f0 - z) ** 2, axis=1)
        l1 = np.sum((f1 - z) ** 2, axis=1)
        xbar = mech.batch_means(releases)[:, 1]
        tau = np.asarray(tau, dtype=np.int64)
        return {
            "optimal": mech.log_lr_steps(releases)[np.arange(tau.size), tau - 1],
            "final": mech.final_log_lr(releases, tau=tau),
            "b3-linear": (xbar - mech.mu_t[1]) @ (z - mech.mu_t[1]),
            "score-diff": combine(l0, l1, "diff"),
            "score-ratio": combine(l0, l1, "ratio", c=self.c),
        }


def update_game_mechanism(g: UpdateMeanGame, mode: str = "sufficient") -> EmpiricalMean:
    """The mechanism of the single-update game: :meth:`UpdateMeanGame.mechanism`
    (``mode="exact"``, every datum drawn) or its :class:`SufficientEmpiricalMean` twin.

    Parameters
    ----------
    g : UpdateMeanGame
        The game.
    mode : {"exact", "sufficient"}
        Every datum drawn, or the batch means' exact laws.

    Returns
    -------
    EmpiricalMean
        The mechanism.
    """
    if mode not in ("exact", "sufficient"):
        raise ValueError(f"mode must be 'exact' or 'sufficient', got {mode!r}")
    mech = g.mechanism()
    if mode == "exact":
        return mech
    return SufficientEmpiricalMean(n=[g.n0, g.n1], T=2, mu=0.0, cov=g.sigma**2,
                                   target=mech.target)


def play_update_game(g: UpdateMeanGame, rounds: int, seed=0, *, chunk: int = 20000,
                     mode: str = "sufficient", executor=None) -> GameResult:
    r"""Monte Carlo of the single-update game; every test of :data:`TESTS` on the same releases,
    as a :class:`GameResult` played by the one runner (:func:`semi_core.game.play.play`,
    :math:`B\sim\mathrm{Bernoulli}(1/2)`, :math:`\tau=2`, chunks of ``chunk`` rounds on
    ``executor``). ``mode="exact"`` draws every datum with the mechanism's own ``release``;
    ``"sufficient"`` draws the batch means from their exact laws (same distribution, ``n0``
    times cheaper).

    Parameters
    ----------
    g : UpdateMeanGame
        The game.
    rounds : int
        Number of games, >= 2.
    seed : int or numpy.random.SeedSequence
        Root seed.
    chunk : int
        Games per chunk.
    mode : {"exact", "sufficient"}
        How releases are drawn.
    executor : None, int or Executor
        Where the chunks run.

    Returns
    -------
    GameResult
        The games with one statistic per test.
    """
    rounds = check_int(rounds, "rounds", minimum=2)
    mech = update_game_mechanism(g, mode)
    res = play(mech, rounds, seed, tau=2, tests=(), scorers=(UpdateTests(mech, g.c),),
               chunk_size=chunk, executor=executor)
    res.metadata.update({"game": "update-empirical-mean", "mode": mode, **g.__dict__})
    return res


def gap_table(g: UpdateMeanGame, rounds: int = 40000, seed=0, fpr=(0.01, 0.1),
              mode: str = "sufficient", executor=None) -> dict:
    """TPR at each FPR for every test: closed form, Monte Carlo (delta-method SE from
    :func:`~semi_core.audit.roc.tpr_at_fpr_se`, which includes the threshold's own noise, and a
    Clopper-Pearson interval at the chosen threshold), the gap to the optimal test, and the
    Monte Carlo AUC. The games run on ``executor`` (the result does not depend on it).

    Parameters
    ----------
    g : UpdateMeanGame
        The game.
    rounds : int
        Number of games.
    seed : int or numpy.random.SeedSequence
        Root seed.
    fpr : sequence of float
        FPR levels.
    mode : {"exact", "sufficient"}
        How releases are drawn.
    executor : None, int or Executor
        Where the games run.

    Returns
    -------
    dict
        Per test and FPR: closed form, Monte Carlo, SE, interval and gap; AUCs; seconds.
    """
    t0 = time.perf_counter()
    cf = {t: {f"{f:g}": closed_form_tpr(g, f, t) for f in fpr} for t in TESTS}
    t_cf = time.perf_counter() - t0
    res = play_update_game(g, rounds, seed, mode=mode, executor=executor)
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


@dataclass(frozen=True)
class MultiUpdateTests:
    r"""Scorer of the k-update game (releases :math:`f_0..f_k` of ``mech``): SeMI-max and
    SeMI-Unif over the update steps, Back-Front (diff, ratio), Delta (max pair diff), and the
    entry guesses of Delta and of the LR (``entry-delta``, ``entry-lr``: the guessed step)."""

    mech: EmpiricalMean
    c: float
    names: tuple[str, ...] = ("semi-max", "semi-unif", "back-front-diff", "back-front-ratio",
                              "delta-diff", "entry-delta", "entry-lr")
    tau_free: bool = True

    def __call__(self, releases, tau, rng) -> dict[str, np.ndarray]:
        llr = self.mech.log_lr_steps(releases)[:, 1:]                     # update steps only
        loss = np.sum((releases - self.mech.target) ** 2, axis=-1)        # (R, k+1)
        pairs = pair_scores(loss, "diff")
        return {"semi-max": semi_max(llr), "semi-unif": semi_unif(llr),
                "back-front-diff": back_front_scores(loss, "diff"),
                "back-front-ratio": back_front_scores(loss, "ratio", c=self.c),
                "delta-diff": pairs.max(1),
                "entry-delta": pairs.argmax(1) + 2.0, "entry-lr": llr.argmax(1) + 2.0}


def multi_update_game(*, n0: int = 200, n_up: int = 10, k: int = 5, d: int = 20,
                      distance: float = 6.0, rounds: int = 20000, seed=0, c: float = 1e-3,
                      chunk_size: int = 4096, executor=None) -> dict:
    r"""k updates of the empirical mean, target in a uniform update :math:`\tau\in\{2..k+1\}`.

    Played by the one runner (:func:`semi_core.game.play.play` with the insertion-time prior
    uniform on the update steps, scorer :class:`MultiUpdateTests`). Membership: Back-Front
    (diff, ratio), Delta (max pair diff) vs the optimal sequential tests with unknown
    :math:`\tau` -- SeMI-max :math:`\max_t\log\mathrm{LR}_t` and SeMI-Unif
    :math:`\log\frac1k\sum_t\mathrm{LR}_t` over the update steps. Entry inference (member
    rounds): Delta's :math:`\arg\max_t` pair diff vs :math:`\arg\max_t\log\mathrm{LR}_t` (the
    MAP entry under a uniform prior), against the random baseline :math:`1/k` among members.

    Parameters
    ----------
    n0 : int
        Size of the base set.
    n_up : int
        Size of each update.
    k : int
        Number of updates, >= 1.
    d : int
        Dimension, >= 1.
    distance : float
        Mahalanobis distance of the target.
    rounds : int
        Number of games.
    seed : int or numpy.random.SeedSequence
        Root seed.
    c : float
        Damping of the ratio scores.
    chunk_size : int
        Games per chunk.
    executor : None, int or Executor
        Where the chunks run.

    Returns
    -------
    dict
        Membership TPRs/AUCs and entry accuracies per test.
    """
    k = check_int(k, "k", minimum=1)
    mech_t = np.zeros(check_int(d, "d", minimum=1))
    mech_t[0] = check_positive(distance, "distance")
    mech = EmpiricalMean(n=[check_int(n0, "n0", minimum=2)] +
                         [check_int(n_up, "n_up", minimum=2)] * k, T=k + 1, mu=0.0, cov=1.0,
                         target=mech_t)
    res = play(mech, check_int(rounds, "rounds", minimum=2), seed, tau=np.r_[0.0, np.full(k, 1 / k)],
               tests=(), scorers=(MultiUpdateTests(mech, c),), chunk_size=chunk_size,
               executor=executor)
    guess = {name: res.stats.pop(name) for name in ("entry-delta", "entry-lr")}
    res.metadata.update({"game": "multi-update-empirical-mean", "k": k, "n0": n0,
                         "n_up": n_up, "d": d, "distance": distance})
    out = {}
    for name in res.stats:
        rm = roc_metrics(*res.scores(name), fpr=(0.01, 0.1), interval="binomial")
        out[name] = {"auc": rm.auc, "tpr_at_fpr": dict(zip(("0.01", "0.1"), rm.tpr_at_fpr,
                                                            strict=True))}
    mem, tau = res.member, res.tau
    ent = {"delta-argmax": float(np.mean(guess["entry-delta"][mem] == tau[mem])),
           "lr-argmax": float(np.mean(guess["entry-lr"][mem] == tau[mem])),
           "random": 1.0 / k}
    return {"membership": out, "entry_among_members": ent, "rounds": res.rounds,
            "seconds": res.metadata["seconds"], "result": res}


def balanced_median_accuracy(scores, member) -> dict[str, float | int]:
    r"""Accuracy of the median (Batch) threshold on a balanced pool, as the seed's protocol has.

    The runner draws membership at random (:math:`B\sim\mathrm{Bernoulli}(1/2)`), while the
    median rule assumes half the pool are members: with :math:`n_1 \ne n_0` even perfectly
    separated scores are misclassified (Fig. 8 at :math:`n_1 = 2`: 0.9956 instead of 1). The
    pool is balanced first: the first :math:`k = \min(n_1, n_0)` members and non-members in
    game order (rounds are i.i.d., so this is a random balanced subsample), then the threshold
    is the pool's median (:func:`~semi_core.stats.update_combination.batch_threshold`,
    ``fraction_in = 0.5``) and

    .. math::

        \mathrm{acc} = \tfrac12\big(\mathrm{TPR} + 1 - \mathrm{FPR}\big),\qquad
        \mathrm{se} = \sqrt{\mathrm{acc}(1-\mathrm{acc})/(2k)}.

    Parameters
    ----------
    scores : array of shape (n,)
        Higher = member.
    member : bool array of shape (n,)

    Returns
    -------
    dict
        ``accuracy``, ``se``, ``pool`` (:math:`2k`), ``threshold``.
    """
    from semi_core.stats.update_combination import batch_threshold

    s = np.asarray(scores, dtype=float).ravel()
    m = np.asarray(member, dtype=bool).ravel()
    if s.shape != m.shape:
        raise ValueError(f"scores and member must have the same length, got {s.size} and {m.size}")
    i1, i0 = np.flatnonzero(m), np.flatnonzero(~m)
    k = min(i1.size, i0.size)
    if k == 0:
        raise ValueError("member must hold both members and non-members")
    i1, i0 = i1[:k], i0[:k]
    thr = batch_threshold(np.r_[s[i1], s[i0]], 0.5)
    acc = 0.5 * (np.mean(s[i1] > thr) + np.mean(s[i0] <= thr))
    return {"accuracy": float(acc), "se": float(np.sqrt(acc * (1 - acc) / (2 * k))),
            "pool": int(2 * k), "threshold": float(thr)}


def fig8_sweep(n1s=(2, 5, 10, 20, 50, 100, 200), *, n0: int = 200, d: int = 250,
               sigma: float = 0.1, distance: float | None = None, rounds: int = 20000,
               seed=0, executor=None) -> dict:
    r"""Fig. 8 of ``combining_mi_updates`` (App. C, mean estimation): membership accuracy of the
    Neyman-Pearson attack without the update (Alg. 3 on :math:`\hat\mu_1`: the *final*
    log-LR) and with it (the same test on :math:`\hat\mu_\Delta`, the optimal SeMI* log-LR of
    the two releases), against :math:`n_1`, at the seed's :math:`n_0 = 200`, :math:`d = 250`,
    :math:`\mu = 0`, :math:`\sigma = 0.1`.

    Both scores are log-likelihood ratios, so the balanced-prior decision is
    ``score > 0``; accuracy :math:`\tfrac12(\mathrm{TPR} + 1 - \mathrm{FPR})` with its binomial
    SE over ``rounds`` games. The seed draws the target from the data law
    (:math:`\|x-\mu\| \approx \sigma\sqrt d`); here it is fixed at that typical distance
    (``distance``, default :math:`\sigma\sqrt d`). ScoreDiff / ScoreRatio are given at their
    median threshold (the seed's Batch rule) beside them, on the balanced pool the rule
    assumes (:func:`balanced_median_accuracy`).

    Parameters
    ----------
    n1s : sequence of int
        Update sizes :math:`n_1`.
    n0 : int
        Size of the base set.
    d : int
        Dimension.
    sigma : float
        Data standard deviation.
    distance : float, optional
        Distance of the target; None = :math:`\sigma\sqrt d`.
    rounds : int
        Games per size.
    seed : int or numpy.random.SeedSequence
        Root seed.
    executor : None, int or Executor
        Where the games run.

    Returns
    -------
    dict
        One row per :math:`n_1` with the accuracies and their SEs.
    """
    dist = sigma * np.sqrt(d) if distance is None else distance
    rows = []
    for i, n1 in enumerate(n1s):
        g = UpdateMeanGame(n0=n0, n1=int(n1), d=d, sigma=sigma, distance=float(dist))
        res = play_update_game(g, rounds, child_seed(as_seed_sequence(seed), i),
                               executor=executor)
        row = {"n1": int(n1)}
        for t in ("final", "optimal", "score-diff", "score-ratio"):
            s = res.stats[t]
            if t in ("final", "optimal"):  # log-LRs: the balanced-prior decision is s > 0
                acc = 0.5 * (np.mean(s[res.member] > 0.0) + np.mean(s[~res.member] <= 0.0))
                row[t] = {"accuracy": float(acc),
                          "se": float(np.sqrt(acc * (1 - acc) / s.size))}
            else:
                bal = balanced_median_accuracy(s, res.member)
                row[t] = {"accuracy": bal["accuracy"], "se": bal["se"], "pool": bal["pool"]}
        rows.append(row)
    return {"n0": n0, "d": d, "sigma": sigma, "distance": float(dist), "rounds": rounds,
            "rows": rows}
