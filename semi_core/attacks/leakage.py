r"""Per-datum membership attacks on the empirical mean and their simulation (``per_datum_leakage``).

Attacks (each a score, higher = member) on the releases of a
:class:`~semi_core.mechanisms.per_datum.PerDatumMean`:

``exact``
    Coordinate-wise exact log-LR mixed over the one shared inclusion event (Neyman-Pearson).
``approx``
    Eq. (10) with :math:`C_\sigma+C_\gamma` (§3, §4.1), mixed over inclusion when ``k < n``.
``paper-sub``
    The seed's per-coordinate sub-sampling LR (Eq. 15; its approximation).
``scalar``
    Dwork et al.'s scalar product :math:`(z^*-z^{\rm ref})^\top o` with one fresh reference
    point per game.
``plugin``
    Eq. (10) with :math:`\hat\mu_0,\hat C_0` from ``n0`` fresh reference points per game
    (diagonal :math:`\hat C_0`, variances shrunk towards their mean; known-variance and the
    seed's uncentred :math:`\frac1{n_0}\sum ZZ^\top` variants). Limit power:
    :math:`\Phi(\Phi^{-1}(\alpha)+\sqrt{m^*\lambda/(1+\lambda)})`, :math:`\lambda=n_0/n`.
``misspecified``
    Eq. (10) built for ``z_targ`` (Thm 4.5); the advantage-optimal threshold
    :math:`(m^{\rm scal}-m^{\rm targ})/2` is :func:`semi_core.stats.leakage.miss_threshold_adv`.

:func:`simulate_leakage` plays the per-datum game (seed Alg. 2) with the one runner
(:func:`semi_core.game.play.play`; each attack a scorer, :func:`leakage_scorers`; same seed =>
same result on any executor) and returns a :class:`~semi_core.game.result.GameResult` with one
score array per attack;
:func:`summarize_leakage` gives TPR at FPR (with SEs), AUC (DeLong SE) and the Bayes
adversary's advantage :math:`\Pr_1(\ell>0)-\Pr_0(\ell>0)` (binomial SE) per attack.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from semi_core._validation import check_finite_array, check_int, check_probability
from semi_core.game.play import play
from semi_core.game.result import GameResult
from semi_core.mechanisms.per_datum import AverageDatumMean, PerDatumMean, ProductLaw
from semi_core.sgd.gradstats import LowRankPlusDiagonal

__all__ = ["ATTACKS", "scalar_product", "reference_moments", "plugin_lr", "plugin_lr_full",
           "misspecified_lr", "LogLRScorer", "ScalarScorer", "PluginScorer",
           "MisspecifiedScorer", "leakage_scorers", "simulate_leakage", "summarize_leakage", "power_loss_curve",
           "most_exposed", "AverageLogLRScorer", "simulate_average_datum", "CovarianceMean"]

ATTACKS = ("exact", "approx", "paper-sub", "scalar", "plugin", "plugin-known-var",
           "plugin-uncentred", "misspecified")


def _check_mech(mech):
    if not isinstance(mech, PerDatumMean):
        raise TypeError(f"mech must be a PerDatumMean, got {type(mech).__name__}")
    return mech


def scalar_product(mech: PerDatumMean, releases, z_ref) -> np.ndarray:
    r"""Scalar-product test (Dwork et al. 2015, seed §3): :math:`(z^*-z^{\rm ref})^\top o`.

    ``z_ref`` is one reference point ``(d,)`` or one per game ``(R, d)``.

    Parameters
    ----------
    mech : PerDatumMean
        The mechanism (its target :math:`z^*`).
    releases : array_like, shape (R, 1, d)
        Releases.
    z_ref : array_like, shape (d,) or (R, d)
        Reference point(s).

    Returns
    -------
    ndarray, shape (R,)
        The score of each release (higher = member).
    """
    o = _check_mech(mech)._flat(releases)
    zr = check_finite_array(z_ref, "z_ref")
    if zr.shape[-1] != mech.d:
        raise ValueError(f"z_ref must have last axis {mech.d}, got {zr.shape}")
    return np.sum((mech.target - zr) * o, axis=-1)


def reference_moments(law: ProductLaw, n0: int, rounds: int, rng: np.random.Generator, *,
                      shrinkage: float = 0.1, centred: bool = True):
    r"""Per-game reference estimates :math:`(\hat\mu_0, \hat\sigma_0^2)` from ``n0`` fresh rows.

    Bernoulli/Poisson/Gaussian laws use sufficient statistics (counts; for Gaussian data the
    sample variance is drawn from its scaled :math:`\chi^2_{n_0-1}` law). Variances are shrunk
    towards their mean, :math:`(1-s)\hat\sigma_j^2+s\,\overline{\hat\sigma^2}`, so that no
    coordinate has a zero estimate. ``centred=False`` returns the seed's uncentred second
    moment :math:`\frac1{n_0}\sum_i Z_{ij}^2` (§3, as printed) instead of the variance.

    Parameters
    ----------
    law : ProductLaw
        The data law.
    n0 : int
        Reference rows per game, >= 2.
    rounds : int
        Number of games.
    rng : numpy.random.Generator
        Source of the reference rows.
    shrinkage : float
        Shrinkage s of the variances, in [0, 1].
    centred : bool
        Variance (True) or the seed's uncentred second moment.

    Returns
    -------
    mu0, var0 : ndarray, shape (rounds, d)
    """
    n0 = check_int(n0, "n0", minimum=2)
    s = check_probability(shrinkage, "shrinkage", low_open=False, high_open=False)
    d = law.d
    if law.family == "bernoulli":
        c = rng.binomial(n0, law.mean, (rounds, d)).astype(float)
        mu0 = c / n0
        m2 = mu0                                    # Z^2 = Z for 0/1 data
        v = mu0 * (1 - mu0) * n0 / (n0 - 1)
    elif law.family == "gaussian":
        mu0 = law.mean + np.sqrt(law.var / n0) * rng.standard_normal((rounds, d))
        v = law.var * rng.chisquare(n0 - 1, (rounds, d)) / (n0 - 1)
        m2 = v * (n0 - 1) / n0 + mu0**2
    else:
        rows = law.sample(rng, (rounds, n0))
        mu0 = rows.mean(axis=1)
        v = rows.var(axis=1, ddof=1)
        m2 = np.mean(rows**2, axis=1)
    est = v if centred else m2
    est = (1 - s) * est + s * est.mean(axis=1, keepdims=True)
    if (est <= 0).any():
        raise ValueError("a reference variance estimate is 0; use shrinkage > 0 or a larger n0")
    return mu0, est


def plugin_lr(mech: PerDatumMean, releases, mu0, var0) -> np.ndarray:
    r"""Plug-in Eq. (10) with per-game estimates (diagonal :math:`\hat C_0`), §3:

    .. math::

        \ell^{\rm app}_n(o;z^*,\hat\mu_0,\hat C_0)=(z^*-\hat\mu_0)^\top\hat C_0^{-1}(o-\hat\mu_0)
            -\tfrac{1}{2k}\|z^*-\hat\mu_0\|^2_{\hat C_0^{-1}}

    (:math:`\hat C_0` plus the known noise :math:`\tfrac kn C_\gamma`; mixed over inclusion).

    Parameters
    ----------
    mech : PerDatumMean
        The mechanism.
    releases : array_like, shape (R, 1, d)
        Releases.
    mu0 : array_like, shape (R, d) or (d,)
        Estimated means.
    var0 : array_like, shape (R, d) or (d,)
        Estimated variances (> 0).

    Returns
    -------
    ndarray, shape (R,)
        The plug-in log-LR of each release.
    """
    _check_mech(mech)
    v = np.asarray(var0, dtype=float) + mech.q * mech.noise_std**2
    return mech.approx_log_lr(releases, mean=mu0, var=v)


def plugin_lr_full(mech: PerDatumMean, releases, ref_rows, *, shrinkage=None) -> np.ndarray:
    r"""Plug-in Eq. (10) with a full shrunk covariance from one reference sample ``(n0, d)``.

    :math:`\hat C=s\,\mathrm{diag}(S)+(1-s)S`, :math:`S` the sample covariance; when
    :math:`n_0<d`, :math:`S` is singular and ``s > 0`` is needed (default
    :math:`s=d/(n_0+d)`). Solves use the Woodbury identity with an :math:`n_0\times n_0`
    Cholesky factor (no :math:`d\times d` inverse), in its one home
    :class:`semi_core.sgd.gradstats.LowRankPlusDiagonal`.

    Parameters
    ----------
    mech : PerDatumMean
        The mechanism.
    releases : array_like, shape (R, 1, d)
        Releases.
    ref_rows : array_like, shape (n0, d)
        One reference sample.
    shrinkage : float, optional
        Shrinkage s towards the diagonal, in [0, 1]; None = :math:`d/(n_0+d)`.

    Returns
    -------
    ndarray, shape (R,)
        The plug-in log-LR of each release.
    """
    o = _check_mech(mech)._flat(releases)
    X = check_finite_array(ref_rows, "ref_rows", ndim=2)
    n0, d = X.shape
    if d != mech.d or n0 < 2:
        raise ValueError(f"ref_rows must have shape (n0 >= 2, {mech.d}), got {X.shape}")
    s = d / (n0 + d) if shrinkage is None else check_probability(
        shrinkage, "shrinkage", low_open=False, high_open=False)
    mu0 = X.mean(axis=0)
    Xc = X - mu0
    diag = np.sum(Xc**2, axis=0) / (n0 - 1)
    a = s * diag + mech.q * mech.noise_std**2
    if (a <= 0).any():
        raise ValueError("shrinkage must be > 0 (and reference variances > 0) when n0 <= d")
    C = LowRankPlusDiagonal(a, Xc.T * math.sqrt((1 - s) / (n0 - 1)))   # diag(a) + W W^T
    dl = mech.target - mu0
    c = C.solve(dl)
    l_in = (o - mu0) @ c - dl @ c / (2 * mech.k)
    return mech._mix(l_in)


def misspecified_lr(mech: PerDatumMean, releases, z_targ) -> np.ndarray:
    """Eq. (10) built for a misspecified target ``z_targ`` (seed §4.3, Thm 4.5).

    Parameters
    ----------
    mech : PerDatumMean
        The mechanism.
    releases : array_like, shape (R, 1, d)
        Releases.
    z_targ : array_like, shape (d,)
        The target the attacker believes in.

    Returns
    -------
    ndarray, shape (R,)
        The misspecified log-LR of each release.
    """
    zt = check_finite_array(z_targ, "z_targ", ndim=1)
    if zt.shape != (_check_mech(mech).d,):
        raise ValueError(f"z_targ must have shape ({mech.d},), got {zt.shape}")
    return mech.approx_log_lr(releases, target=zt)


@dataclass(frozen=True)
class LogLRScorer:
    """Scorer: one of the mechanism's own log-LRs (``exact``, ``approx``, ``paper-sub``)."""

    mech: PerDatumMean
    name: str
    tau_free: bool = True

    @property
    def names(self) -> tuple[str, ...]:
        return (self.name,)

    def __call__(self, releases, tau, rng) -> dict[str, np.ndarray]:
        fn = {"exact": self.mech.exact_log_lr, "approx": self.mech.approx_log_lr,
              "paper-sub": self.mech.paper_sub_log_lr}[self.name]
        return {self.name: fn(releases)}


@dataclass(frozen=True)
class ScalarScorer:
    """Scorer: :func:`scalar_product` with one fresh reference point per round (from ``rng``)."""

    mech: PerDatumMean
    names: tuple[str, ...] = ("scalar",)
    tau_free: bool = True

    def __call__(self, releases, tau, rng) -> dict[str, np.ndarray]:
        return {"scalar": scalar_product(self.mech, releases,
                                         self.mech.law.sample(rng, releases.shape[0]))}


@dataclass(frozen=True)
class PluginScorer:
    """Scorer: :func:`plugin_lr` with per-round reference moments from ``n0`` fresh points
    (:func:`reference_moments`, from ``rng``); ``name`` is ``plugin``, ``plugin-known-var``
    (true variances) or ``plugin-uncentred`` (the seed's uncentred second moment)."""

    mech: PerDatumMean
    name: str
    n0: int
    shrinkage: float = 0.1
    tau_free: bool = True

    @property
    def names(self) -> tuple[str, ...]:
        return (self.name,)

    def __call__(self, releases, tau, rng) -> dict[str, np.ndarray]:
        R = releases.shape[0]
        mu0, v0 = reference_moments(self.mech.law, self.n0, R, rng, shrinkage=self.shrinkage,
                                    centred=self.name != "plugin-uncentred")
        if self.name == "plugin-known-var":
            v0 = np.broadcast_to(self.mech.law.var, mu0.shape)
        return {self.name: plugin_lr(self.mech, releases, mu0, v0)}


@dataclass(frozen=True)
class MisspecifiedScorer:
    """Scorer: :func:`misspecified_lr` for the attacker's target ``z_targ``."""

    mech: PerDatumMean
    z_targ: np.ndarray
    names: tuple[str, ...] = ("misspecified",)
    tau_free: bool = True

    def __call__(self, releases, tau, rng) -> dict[str, np.ndarray]:
        return {"misspecified": misspecified_lr(self.mech, releases, self.z_targ)}


def leakage_scorers(mech: PerDatumMean, attacks=("exact", "approx"), *, n0: int | None = None,
                    z_targ=None, shrinkage: float = 0.1) -> tuple:
    """The scorers of ``attacks`` (subset of :data:`ATTACKS`), validated; ``plugin*`` need
    ``n0``, ``misspecified`` needs ``z_targ``.

    Parameters
    ----------
    mech : PerDatumMean
        The mechanism.
    attacks : sequence of str
        Attacks, a subset of :data:`ATTACKS`.
    n0 : int, optional
        Reference rows of the plug-in attacks.
    z_targ : array_like, shape (d,), optional
        Target of the misspecified attack.
    shrinkage : float
        Shrinkage of the plug-in variances, in [0, 1].

    Returns
    -------
    tuple of Scorer
        One scorer per attack.
    """
    _check_mech(mech)
    attacks = tuple(attacks)
    bad = [a for a in attacks if a not in ATTACKS]
    if bad or not attacks:
        raise ValueError(f"attacks must be drawn from {list(ATTACKS)}, got {list(attacks)}")
    if len(set(attacks)) != len(attacks):
        raise ValueError(f"attacks must not repeat, got {list(attacks)}")
    plug = [a for a in attacks if a.startswith("plugin")]
    if plug:
        if n0 is None:
            raise ValueError("the plugin attacks need n0 (reference points per game)")
        n0 = check_int(n0, "n0", minimum=2)
        shrinkage = check_probability(shrinkage, "shrinkage", low_open=False, high_open=False)
    if "misspecified" in attacks:
        if z_targ is None:
            raise ValueError("the misspecified attack needs z_targ")
        z_targ = check_finite_array(z_targ, "z_targ", ndim=1)
        if z_targ.shape != (mech.d,):
            raise ValueError(f"z_targ must have shape ({mech.d},), got {z_targ.shape}")
    out = []
    for a in attacks:
        if a in ("exact", "paper-sub") and not mech.exact_available:
            raise ValueError(f"attack {a!r} needs the exact density of the release (a "
                             "bernoulli/gaussian/poisson law without noise, or gaussian data)")
        if a in ("exact", "approx", "paper-sub"):
            out.append(LogLRScorer(mech, a))
        elif a == "scalar":
            out.append(ScalarScorer(mech))
        elif a == "misspecified":
            out.append(MisspecifiedScorer(mech, z_targ))
        else:
            out.append(PluginScorer(mech, a, n0, shrinkage))
    return tuple(out)


def simulate_leakage(mech: PerDatumMean, rounds: int, seed=0, *, attacks=("exact", "approx"),
                     n0: int | None = None, z_targ=None, shrinkage: float = 0.1,
                     chunk_size: int = 1000, p_member: float = 0.5, executor=None,
                     progress: bool = False) -> GameResult:
    r"""Play the per-datum game (seed Alg. 1-2) and score every round with each attack.

    The game is played by the one runner (:func:`semi_core.game.play.play` on the
    :class:`~semi_core.mechanisms.per_datum.PerDatumMean`, ``T = 1``), each attack a scorer
    (:func:`leakage_scorers`) on the same releases.

    Parameters
    ----------
    mech : PerDatumMean
    rounds : int
    seed : int or SeedSequence
        Chunk ``k`` uses :func:`~semi_core._rng.child_seed` ``(seed, k)`` (result independent
        of anything but the seed and ``chunk_size``; the executor does not matter).
    attacks : sequence of str
        Subset of :data:`ATTACKS` (``plugin*`` need ``n0``, ``misspecified`` needs ``z_targ``).
    n0 : int, optional
        Reference points per game for the plug-in attacks.
    z_targ : array_like, optional
        Target the misspecified attacker uses.
    shrinkage, chunk_size, p_member
        Variance shrinkage of the plug-in attacks; rounds per chunk; :math:`\Pr(B=1)`.
    executor : Executor, int or None
        Where the chunks run (:class:`~semi_core.game.backends.Executor`).
    progress : bool
        Report progress (:mod:`semi_core._progress`).

    Returns
    -------
    GameResult
        ``stats[attack]`` for each attack; ``metadata`` holds parameters and seconds.
    """
    _check_mech(mech)
    rounds = check_int(rounds, "rounds", minimum=2)
    scorers = leakage_scorers(mech, attacks, n0=n0, z_targ=z_targ, shrinkage=shrinkage)
    out = play(mech, rounds, seed, p_member=p_member, tau=1, tests=(), scorers=scorers,
               chunk_size=chunk_size, executor=executor, progress=progress)
    out.metadata.update({"game": "per-datum", "attacks": list(attacks), "n0": n0})
    return out


@dataclass(frozen=True)
class AverageLogLRScorer:
    """Scorer: the exact log-LR of each round's own pair (z*, o) (seed App. B, Eq. 22-24)."""

    mech: AverageDatumMean
    names: tuple[str, ...] = ("exact",)
    tau_free: bool = True

    def __call__(self, releases, tau, rng) -> dict[str, np.ndarray]:
        return {"exact": self.mech.log_lr(releases)}


def simulate_average_datum(mech: AverageDatumMean, rounds: int, seed=0, *,
                           chunk_size: int = 1000, p_member: float = 0.5, executor=None,
                           progress: bool = False) -> GameResult:
    r"""Play the average-datum game (seed Alg. 3/4): a fresh target each round, scored by the
    exact LR of its pair. Played by the one runner (:func:`semi_core.game.play.play`,
    ``T = 1``); chunk ``k`` uses :func:`~semi_core._rng.child_seed` ``(seed, k)``.

    Parameters
    ----------
    mech : AverageDatumMean
        The mechanism.
    rounds : int
        Number of games.
    seed : int or numpy.random.SeedSequence
        Root seed.
    chunk_size : int
        Games per chunk.
    p_member : float
        Probability of a member game, in (0, 1).
    executor : None, int or Executor
        Where the chunks run (the result does not depend on it).
    progress : bool
        Report progress.

    Returns
    -------
    GameResult
        ``stats["exact"]``; summarise with :func:`summarize_leakage`.
    """
    if not isinstance(mech, AverageDatumMean):
        raise TypeError(f"mech must be an AverageDatumMean, got {type(mech).__name__}")
    rounds = check_int(rounds, "rounds", minimum=2)
    out = play(mech, rounds, seed, p_member=p_member, tau=1, tests=(),
               scorers=(AverageLogLRScorer(mech),), chunk_size=chunk_size, executor=executor,
               progress=progress)
    out.metadata.update({"game": "average-datum", "attacks": ["exact"]})
    return out


def summarize_leakage(result: GameResult, fpr=(0.01, 0.1)) -> dict[str, dict]:
    r"""Per attack: TPR at FPR (with delta-method SEs), AUC (DeLong SE) and the empirical
    advantage of the Bayes adversary :math:`\hat\Pr_1(\ell>0)-\hat\Pr_0(\ell>0)` (binomial SE;
    meaningful for the log-LR attacks, whose Bayes threshold is 0).

    Parameters
    ----------
    result : GameResult
        Games with one statistic per attack.
    fpr : sequence of float
        FPR levels.

    Returns
    -------
    dict of str to dict
        Per attack: TPRs, AUC, advantage and their SEs.
    """
    from semi_core.audit.roc import auc, tpr_at_fpr_se

    out = {}
    for name in result.tests:
        mem, non = result.scores(name)
        r = tpr_at_fpr_se(mem, non, fpr)
        a, a_se = auc(mem, non, se=True)
        p1, p0 = float(np.mean(mem > 0)), float(np.mean(non > 0))
        out[name] = {
            "tpr_at_fpr": {str(f): float(t) for f, t in zip(r["fpr"], r["tpr"], strict=True)},
            "tpr_se": {str(f): float(t) for f, t in zip(r["fpr"], r["se"], strict=True)},
            "tpr_resolvable": {str(f): bool(v) for f, v in
                               zip(r["fpr"], r["resolvable"], strict=True)},
            "fpr_resolution": r["fpr_resolution"],
            "auc": float(a), "auc_se": float(a_se),
            "bayes_advantage": p1 - p0,
            "bayes_advantage_se": math.sqrt(p1 * (1 - p1) / mem.size + p0 * (1 - p0) / non.size),
            "n_member": int(mem.size), "n_nonmember": int(non.size)}
    return out


def power_loss_curve(mech: PerDatumMean, ratios, rounds: int, seed=0, *, alpha: float = 0.01,
                     shrinkage: float = 0.1, chunk_size: int = 1000,
                     executor=None) -> list[dict]:
    r"""Power of the plug-in LR vs :math:`n_0/n` (theory :math:`m^*\lambda/(1+\lambda)` vs
    simulation, with estimated and with known variances), plus the oracle power.

    Parameters
    ----------
    mech : PerDatumMean
        The mechanism.
    ratios : sequence of float
        Values of :math:`n_0/n`, > 0.
    rounds : int
        Games per ratio.
    seed : int or numpy.random.SeedSequence
        Root seed.
    alpha : float
        False-positive rate, in (0, 1).
    shrinkage : float
        Shrinkage of the plug-in variances.
    chunk_size : int
        Games per chunk.
    executor : None, int or Executor
        Where the chunks run.

    Returns
    -------
    list of dict
        One row per ratio: theoretical and simulated powers.
    """
    from semi_core.stats import leakage as L

    rows = []
    for i, lam in enumerate(ratios):
        n0 = max(2, int(round(float(lam) * mech.n)))
        res = simulate_leakage(mech, rounds, np.random.SeedSequence([int(seed), 77, i]),
                               attacks=("approx", "plugin", "plugin-known-var"), n0=n0,
                               shrinkage=shrinkage, chunk_size=chunk_size, executor=executor)
        summ = summarize_leakage(res, (alpha,))
        m_eff = float(L.plugin_effective_score(mech.m_star, n0, mech.n))
        rows.append({"ratio": n0 / mech.n, "n0": n0, "m_eff": m_eff,
                     "theory_power": float(L.power(alpha, m_eff)),
                     "oracle_theory_power": float(L.power(alpha, mech.m_star)),
                     **{f"{k}_power": summ[k]["tpr_at_fpr"][str(alpha)] for k in summ},
                     **{f"{k}_se": summ[k]["tpr_se"][str(alpha)] for k in summ},
                     "seconds": res.metadata["seconds"]})
    return rows


def most_exposed(X, *, n: int | None = None, rank: int = 20, ridge: float = 1e-6) -> dict:
    r"""Rank the records of a dataset by their per-datum leakage score (seed Table 1).

    With the data's own per-coordinate mean and variance (product approximation, §3),
    :math:`m^*_i=\frac1n\sum_j(x_{ij}-\bar x_j)^2/(s_j^2+\text{ridge})`; the leakage of record
    ``i`` if the mean of ``n`` such records is released is :math:`2\Phi(\sqrt{m^*_i}/2)-1`.
    Constant columns (:math:`s_j=0`) carry no information and are dropped.

    Parameters
    ----------
    X : array_like, shape (N, d)
        The dataset.
    n : int, optional
        Size of the released mean; None = N.
    rank : int
        Number of records listed.
    ridge : float
        Added to each variance, >= 0.

    Returns
    -------
    dict
        The top records' indices, scores and leakages, and summary statistics.
    """
    from semi_core.stats import leakage as L

    X = check_finite_array(X, "X", ndim=2)
    N, d = X.shape
    n = N if n is None else check_int(n, "n", minimum=2)
    mu, var = X.mean(axis=0), X.var(axis=0)
    keep = var > 0
    if not keep.any():
        raise ValueError("X has no non-constant column")
    rank = check_int(rank, "rank", minimum=1, maximum=N)
    m = L.leakage_score(X[:, keep], mu[keep], var[keep] + ridge, n)
    order = np.argsort(-m, kind="stable")[:rank]
    return {"n": n, "d_used": int(keep.sum()), "records": N,
            "index": order.tolist(), "m_star": m[order].tolist(),
            "leakage": L.leakage(m[order]).tolist(),
            "m_star_median": float(np.median(m)), "m_star_all": m}


class CovarianceMean(PerDatumMean):
    r""":class:`~semi_core.mechanisms.per_datum.PerDatumMean` whose closed forms and Eq. (10)
    statistic use the full covariance of the data instead of its diagonal.

    The seed's closed forms assume independent columns (§3: :math:`C_\sigma` diagonal). For a
    population with correlated columns the limit experiment is still
    :math:`\ell\sim\mathcal N(\mp m/2, m)` with the Mahalanobis distance of the full covariance,
    :math:`m=\delta^\top(C+C_\gamma)^{-1}\delta/n` (:mod:`semi_core.symbolic.leakage_cov`,
    :func:`semi_core.stats.leakage.mahalanobis_score`), and the Neyman-Pearson statistic is
    Eq. (10) with that matrix (solved through its Cholesky factor). With sub-sampling the
    target's inclusion is one shared event (``inclusion="shared"``); the per-coordinate model
    is a product over independent columns and is refused.

    Parameters
    ----------
    law : ProductLaw
        The population's law (its rows are drawn as whole rows, so the releases carry the
        correlation; ``law.mean`` is :math:`\mu`).
    cov : array_like, shape (d, d)
        Covariance :math:`C` of one datum (``ddof = 0`` for a population's rows).
    n, target, noise_std, rho, mode
        As in :class:`~semi_core.mechanisms.per_datum.PerDatumMean` (``test`` is ``approx``).
    """

    def __init__(self, law: ProductLaw, cov, n: int, target, *, noise_std=0.0, rho=1.0,
                 mode: str = "exact"):
        from semi_core.stats.leakage import covariance_factor

        super().__init__(law, n, target, noise_std=noise_std, rho=rho, mode=mode,
                         test="approx", inclusion="shared")
        C = check_finite_array(cov, "cov", ndim=2)
        if C.shape != (self.d, self.d):
            raise ValueError(f"cov must have shape ({self.d}, {self.d}), got {C.shape}")
        self.cov = C
        g2 = self.noise_std ** 2
        # release variance in units of one row: C + C_gamma (k = n) and C + q C_gamma (given
        # inclusion, at sample size k)
        self._L_full = covariance_factor(C, noise_var=g2, name="the rows' covariance")
        self._L_in = self._L_full if self.k == self.n else covariance_factor(
            C, noise_var=self.q * g2, name="the rows' covariance")

    @staticmethod
    def _whiten(L: np.ndarray, v: np.ndarray) -> np.ndarray:
        from scipy.linalg import solve_triangular

        return solve_triangular(L, v, lower=True)

    @property
    def m_star(self) -> float:
        r""":math:`\delta^\top(C+C_\gamma)^{-1}\delta/n`."""
        w = self._whiten(self._L_full, self.target - self.law.mean)
        return float(w @ w / self.n)

    @property
    def m_in(self) -> float:
        r""":math:`\delta^\top(C+\tfrac kn C_\gamma)^{-1}\delta/k`."""
        w = self._whiten(self._L_in, self.target - self.law.mean)
        return float(w @ w / self.k)

    def approx_log_lr(self, releases, *, target=None, mean=None, var=None,
                      mixture: bool = True) -> np.ndarray:
        r"""Eq. (10) with the full covariance :math:`V=C+\tfrac kn C_\gamma`, mixed over the
        shared inclusion event when ``k < n``:
        :math:`\ell_{\rm in}=c^\top(o-\mu)-c^\top\delta/(2k)`, :math:`c=V^{-1}\delta` by two
        triangular solves. ``target``/``mean``/``var`` overrides (the diagonal plug-in and
        misspecified attacks) fall back to the diagonal form.

        Parameters
        ----------
        releases : array_like, shape (R, 1, d)
            Releases.
        target : array_like, shape (d,), optional
            Target override (diagonal form).
        mean : array_like, optional
            Mean override (diagonal form).
        var : array_like, optional
            Variance override (diagonal form).
        mixture : bool
            Mix over the inclusion event when ``k < n``.

        Returns
        -------
        ndarray, shape (R,)
            The log-LR of each release.
        """
        if target is not None or mean is not None or var is not None:
            return super().approx_log_lr(releases, target=target, mean=mean, var=var,
                                         mixture=mixture)
        from scipy.linalg import cho_solve

        o = self._flat(releases)
        dl = self.target - self.law.mean
        c = cho_solve((self._L_in, True), dl)
        l_in = (o - self.law.mean) @ c - dl @ c / (2 * self.k)
        return self._mix(l_in) if mixture else l_in

    def params(self) -> dict:
        """Validated parameters (JSON), with the covariance model named.

        Returns
        -------
        dict
            The parameters of :class:`PerDatumMean` with ``covariance``.
        """
        return {**super().params(), "mechanism": "CovarianceMean",
                "covariance": "full (Cholesky of C + C_gamma)"}
