r"""Auditing a DP-SGD update with the update attacks (``combining_mi_updates`` §5.7, Q6).

One *fixed* canary per run makes the runs i.i.d. draws of one membership game (the seed instead
pools many points of the same model, which are not independent): each of ``rounds`` runs trains
its own :math:`f_0`, draws a fresh update set, and with probability 1/2 the canary replaces one
of its records (replace-one neighbours); the update is DP-SGD
(:mod:`semi_core.attacks.updates.training`). The attack score is ScoreDiff/ScoreRatio of the
canary's loss between :math:`f_0` and :math:`f_1` (and the no-update loss on :math:`f_1`). The
game goes through :func:`semi_core.audit.report.certify_game` (the one certifying entry
point :func:`semi_core.audit.bounds.epsilon_lower_bound` per test), and the bounds are
compared with the update's exact :math:`\varepsilon(\delta)` (:math:`\mu`-GDP, :math:`\mu = 2\sqrt{E}/\sigma_{DP}`).

The canary is a record of the attacker's pool with its label changed to the class the base
model finds least likely on average (a "mislabeled" canary: a strong, standard audit choice).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, replace

import numpy as np
import torch

from semi_core._rng import as_seed_sequence, child_seed
from semi_core._validation import check_delta, check_int, check_release_args
from semi_core.audit.report import AuditReport, certify_game
from semi_core.audit.roc import roc_metrics
from semi_core.game.play import play
from semi_core.game.result import GameResult
from semi_core.mechanisms.base import MechanismBase
from semi_core.sgd.models import build_model
from semi_core.stats.binomial import clopper_pearson_lower
from semi_core.stats.gdp import gdp_epsilon
from semi_core.stats.update_combination import combine

from .experiment import UpdateConfig, check_training_work
from .experiment.data import _draw, _pools
from .training import run_updates, train_replicas, update_mu

__all__ = ["UpdateCanaryMechanism", "CanaryLossScorer", "dp_mechanism", "dp_game", "dp_audit",
           "precision_epsilon", "paper_rdp_epsilon", "rdp_orders", "dp_protocol_sweep"]

#: Seed streams of the DP-update game (``child_seed(cfg.seed, key)``): the data split and the
#: model initialisation are those of :func:`~.experiment.run_experiment`, the games its own.
_S_SPLIT, _S_GAME, _S_MODEL, _S_PROBE = 0, 6, 3, 7


class UpdateCanaryMechanism(MechanismBase):
    r"""One run of base training + one (DP-)SGD update per round, with a fixed canary.

    ``T = 2`` releases: the parameter snapshots :math:`(f_0, f_1)` (``(R, 2, d)``). Each round
    draws its own :math:`D_0` (``n0`` records) and update set (``n_up`` records) from the
    learner's pool; a member round replaces one record of :math:`D_\tau` by the canary
    (:math:`\tau = 2`: the update, the game of ``combining_mi_updates`` §5.7; :math:`\tau = 1`:
    the base set). Training: :func:`~semi_core.attacks.updates.training.run_updates` on the
    round's own generator (replicas are trained together, each as if alone).

    The update has no tractable likelihood ratio, so the mechanism offers no SeMI test
    (``tests = ()``): it is played with scorers (:class:`CanaryLossScorer`).
    :meth:`log_lr_steps` returns the canary's loss decrease per step,
    :math:`(\ell(\theta_{\mathrm{init}})-\ell(f_0),\ \ell(f_0)-\ell(f_1))` -- a per-round statistic
    of the releases for the protocol's checks, *not* a log-likelihood ratio.
    """

    T = 2
    tests = ()

    def __init__(self, cfg: UpdateConfig, fm, theta_init, x_all, y_all, src, pool,
                 canary: int, canary_label: int):
        self.cfg = replace(cfg, k=1)
        self.fm, self.theta_init = fm, theta_init
        self.x, self.y = x_all, y_all
        self.src = np.asarray(src, dtype=bool)
        self.pool = np.asarray(pool, dtype=np.int64)
        self.canary = check_int(canary, "canary", minimum=0, maximum=len(y_all) - 1)
        self.canary_label = check_int(canary_label, "canary_label", minimum=0)
        if self.canary in set(self.pool.tolist()):
            raise ValueError("the canary must not be a record of the learner's pool")
        self._cx = torch.as_tensor(x_all[self.canary][None], dtype=torch.float64)
        self._cy = torch.tensor([self.canary_label])

    def params(self) -> dict:
        """Validated parameters (JSON).

        Returns
        -------
        dict
            The configuration of the update and the canary.
        """
        return {"mechanism": "update-canary", "T": 2, "update": self.cfg.update,
                "model": self.cfg.model, "n0": self.cfg.n0, "n_up": self.cfg.n_up,
                "clip": self.cfg.clip, "sigma_dp": self.cfg.sigma_dp,
                "update_mu": _finite_or_none(update_mu(self.cfg.update_cfg)),
                "canary": self.canary, "canary_label": self.canary_label}

    def epsilon_true(self, delta: float) -> float:
        r"""Exact :math:`\varepsilon(\delta)` of the update (:math:`\mu`-GDP,
        :math:`\mu = 2\sqrt{E}/\sigma_{DP}`; ``inf`` without noise).

        Parameters
        ----------
        delta : float
            The :math:`\delta` of the profile, in (0, 1).

        Returns
        -------
        float
            :math:`\varepsilon(\delta)`, >= 0 (``inf`` without noise).
        """
        mu = update_mu(self.cfg.update_cfg)
        return gdp_epsilon(mu, delta) if np.isfinite(mu) else float("inf")

    def release(self, member, tau, rng: np.random.Generator) -> np.ndarray:
        """Train ``len(member)`` runs (batched replicas) and release ``(f_0, f_1)``.

        Parameters
        ----------
        member : array_like of bool, shape (R,)
            Whether the canary is in the update.
        tau : int or array_like of int
            Insertion step (2: the update).
        rng : numpy.random.Generator
            Source of the runs' seeds.

        Returns
        -------
        ndarray, shape (R, 2, d)
            Parameters before and after the update.
        """
        member, taus = check_release_args(member, tau, 2)
        R, cfg = member.size, self.cfg
        rngs = [np.random.default_rng(s) for s in
                np.random.SeedSequence(rng.integers(2**63, size=4).tolist()).spawn(R)]
        base, upd = [], []
        for g in rngs:  # each round's data from its own generator (not a game loop)
            d0, cand = _draw(g, self.pool, self.src, cfg, 2 * cfg.n_up)
            base.append(d0)
            upd.append(cand[:cfg.n_up])
        base, upd = np.stack(base), np.stack(upd)
        bx = torch.as_tensor(self.x[base], dtype=torch.float64)
        by = torch.as_tensor(self.y[base], dtype=torch.long)
        ux = torch.as_tensor(self.x[upd], dtype=torch.float64).unsqueeze(1)
        uy = torch.as_tensor(self.y[upd], dtype=torch.long).unsqueeze(1)
        m1 = torch.as_tensor(member & (taus == 1))
        m2 = torch.as_tensor(member & (taus == 2))
        bx[m1, 0], by[m1, 0] = self._cx[0], self.canary_label
        ux[m2, 0, 0], uy[m2, 0, 0] = self._cx[0], self.canary_label
        snaps = run_updates(self.fm, self.theta_init, bx, by, ux, uy, update=cfg.update,
                            base_cfg=cfg.base_cfg, update_cfg=cfg.update_cfg, rngs=rngs)
        return snaps.numpy()

    def canary_losses(self, releases) -> np.ndarray:
        """Cross-entropy of the canary on every released snapshot, ``(R, T)``.

        Parameters
        ----------
        releases : array_like, shape (R, 2, d)
            Snapshots.

        Returns
        -------
        ndarray, shape (R, 2)
            The canary's loss on each snapshot.
        """
        th = torch.as_tensor(np.asarray(releases, dtype=np.float64))
        if th.ndim != 3 or th.shape[1:] != (2, self.fm.d):
            raise ValueError(f"releases must have shape (R, 2, {self.fm.d}), got "
                             f"{tuple(th.shape)}")
        with torch.no_grad():
            flat = torch.func.vmap(self.fm.losses, in_dims=(0, None, None))(
                th.reshape(-1, self.fm.d), self._cx, self._cy)
        return flat.reshape(th.shape[0], 2).numpy()

    def log_lr_steps(self, releases) -> np.ndarray:
        """The canary's loss decrease per step (see the class docstring: not an LR).

        Parameters
        ----------
        releases : array_like, shape (R, 2, d)
            Snapshots.

        Returns
        -------
        ndarray, shape (R, 2)
            The loss decrease (0 at the first step).
        """
        loss = self.canary_losses(releases)
        with torch.no_grad():
            l_init = float(self.fm.losses(self.theta_init, self._cx, self._cy)[0])
        return np.stack([l_init - loss[:, 0], loss[:, 0] - loss[:, 1]], axis=1)


def _finite_or_none(v: float):
    return float(v) if np.isfinite(v) else None


@dataclass(frozen=True)
class CanaryLossScorer:
    r"""Scorer of :class:`UpdateCanaryMechanism`: ``update-<combiner>`` (ScoreDiff/ScoreRatio of
    the canary's loss between :math:`f_0` and :math:`f_1`) and ``final-loss``
    (:math:`-\ell(f_1)`, the no-update attack); higher = member."""

    mech: UpdateCanaryMechanism
    combiner: str = "diff"
    c: float = 1e-3
    tau_free: bool = True

    @property
    def names(self) -> tuple[str, ...]:
        return (f"update-{self.combiner}", "final-loss")

    def __call__(self, releases, tau, rng) -> dict[str, np.ndarray]:
        loss = self.mech.canary_losses(releases)
        return {f"update-{self.combiner}": combine(loss[:, 0], loss[:, 1], self.combiner,
                                                   c=self.c),
                "final-loss": -loss[:, 1]}


def dp_mechanism(cfg: UpdateConfig) -> UpdateCanaryMechanism:
    """The :class:`UpdateCanaryMechanism` of ``cfg``: data pools cut from ``cfg.seed``, the
    canary (first record of the shadow pool) with the label a model trained on one base set
    finds least likely (a mislabeled canary).

    Parameters
    ----------
    cfg : UpdateConfig
        The experiment's configuration.

    Returns
    -------
    UpdateCanaryMechanism
        The mechanism.
    """
    cfg = replace(cfg, k=1)
    root = as_seed_sequence(cfg.seed)
    x_all, y_all, src, pools = _pools(cfg, np.random.default_rng(child_seed(root, _S_SPLIT)))
    n_classes = int(y_all.max()) + 1
    canary_idx = int(pools["shadow"][0])
    fm, theta_init, _ = build_model(cfg.model, x_all[:32], y_all[:32], n_classes,
                                    seed_seq=child_seed(root, _S_MODEL), epochs=0,
                                    hidden=cfg.hidden)
    g = np.random.default_rng(child_seed(root, _S_PROBE))
    d0, _ = _draw(g, pools["learner"], src, cfg, 2 * cfg.n_up)
    probe = train_replicas(fm, theta_init[None],
                           torch.as_tensor(x_all[d0][None], dtype=torch.float64),
                           torch.as_tensor(y_all[d0][None], dtype=torch.long), cfg.base_cfg, [g])
    cx = torch.as_tensor(x_all[canary_idx][None], dtype=torch.float64)
    with torch.no_grad():
        losses = torch.stack([fm.losses(probe[0], cx, torch.tensor([c]))[0]
                              for c in range(n_classes)])
    return UpdateCanaryMechanism(cfg, fm, theta_init, x_all, y_all, src, pools["learner"],
                                 canary_idx, int(torch.argmax(losses)))


def dp_game(cfg: UpdateConfig, rounds: int = 200, *, combiner: str = "diff",
            chunk_size: int = 256, executor=None, progress: bool = False) -> GameResult:
    r"""Play ``rounds`` single-update games with one fixed canary (:func:`dp_mechanism`) on the
    one runner (:func:`semi_core.game.play.play`, :math:`\tau = 2`, stream
    ``child_seed(cfg.seed, 1)``); a :class:`GameResult` with stats ``update-<combiner>`` and
    ``final-loss`` (higher = member). ``chunk_size`` runs are trained together per chunk; the
    result does not depend on ``executor``.

    Parameters
    ----------
    cfg : UpdateConfig
        The experiment's configuration.
    rounds : int
        Number of games, >= 4.
    combiner : {"diff", "ratio"}
        How the two losses are combined.
    chunk_size : int
        Runs trained together.
    executor : None, int or Executor
        Where the chunks run.
    progress : bool
        Report progress.

    Returns
    -------
    GameResult
        Stats ``update-<combiner>`` and ``final-loss``.
    """
    rounds = check_int(rounds, "rounds", minimum=4)
    check_training_work(replace(cfg, k=1), rounds, "the DP-update audit: training the runs")
    mech = dp_mechanism(cfg)
    res = play(mech, rounds, child_seed(as_seed_sequence(cfg.seed), _S_GAME), tau=2, tests=(),
               scorers=(CanaryLossScorer(mech, combiner, cfg.c),), chunk_size=chunk_size,
               executor=executor, progress=progress)
    res.seed = cfg.seed
    res.metadata.update({"game": "dp-update-canary", "update": cfg.update,
                         "sigma_dp": cfg.sigma_dp, "clip": cfg.clip,
                         "update_mu": update_mu(mech.cfg.update_cfg), "canary": mech.canary,
                         "canary_label": mech.canary_label})
    return res


def dp_audit(cfg: UpdateConfig, *, delta: float = 1e-4, rounds: int = 200,
             combiner: str = "diff", failure_prob: float = 0.05, executor=None) -> dict:
    r"""Certified :math:`\underline\varepsilon` (DKW and Clopper-Pearson split) of the update
    attack and of the no-update loss, against the exact :math:`\varepsilon(\delta)`
    (games on ``executor``, :func:`dp_game`).

    Parameters
    ----------
    cfg : UpdateConfig
        The experiment's configuration.
    delta : float
        The :math:`\delta` of the bounds, in [0, 1).
    rounds : int
        Number of games.
    combiner : {"diff", "ratio"}
        How the two losses are combined.
    failure_prob : float
        Failure probability of each bound.
    executor : None, int or Executor
        Where the games run.

    Returns
    -------
    dict
        Bounds per score and method, and the exact epsilon.
    """
    delta = check_delta(delta)
    res = dp_game(cfg, rounds, combiner=combiner, executor=executor)
    mu = res.metadata["update_mu"]
    out = {"epsilon_true": gdp_epsilon(mu, delta) if np.isfinite(mu) else float("inf"),
           "update_mu": mu, "delta": delta, "rounds": rounds, "attacks": {}}
    bounds, ceilings = certify_game(res, ("dkw", "cp"), delta=delta, failure_prob=failure_prob)
    report = AuditReport(bounds=bounds, ceilings=ceilings, game=res)
    for name in res.tests:
        m_, n_ = res.scores(name)
        rm = roc_metrics(m_, n_, fpr=(0.01, 0.1), interval="binomial")
        out["attacks"][name] = {
            "epsilon_lower_bound": {k: report.epsilon_lower_bound(name, k) for k in bounds[name]},
            "epsilon_max_certifiable": {k: report.epsilon_max_certifiable(name, k)
                                        for k in bounds[name]},
            "auc": rm.auc,
            "tpr_at_fpr": dict(zip(("0.01", "0.1"), rm.tpr_at_fpr, strict=True))}
    out["seconds"] = res.metadata["seconds"]
    return out


# --------------------------------------------------------------------------------------------
# the seed's own DP protocol (§5.7, Fig. 6): an epsilon sweep, precision -> epsilon
# --------------------------------------------------------------------------------------------

def precision_epsilon(true_positives: int, called_in: int, *, confidence: float = 0.98) -> dict:
    r"""The seed's conversion of an attack's precision into an :math:`\varepsilon` lower bound.

    An :math:`(\varepsilon, 0)`-DP update bounds the precision of any attack on a balanced
    game by :math:`p \le e^\varepsilon/(1+e^\varepsilon)` (Jagielski et al. §5.7 after
    [20, 33]), so

    .. math::

        \underline\varepsilon = \log\frac{p_L}{1-p_L}\quad (0 \text{ if } p_L \le 1/2),

    with :math:`p_L` the one-sided Clopper-Pearson lower bound on the precision at
    ``confidence`` (the seed: 98 %). The seed prints :math:`\varepsilon \ge p/(1-p)`, without
    the logarithm (a slip: :math:`p/(1-p) = e^\varepsilon`); this is the bound with it.

    Parameters
    ----------
    true_positives : int
        Members among those called IN, >= 0.
    called_in : int
        Points called IN, >= 1.
    confidence : float
        Confidence of the Clopper-Pearson bound, in (0, 1).

    Returns
    -------
    dict
        The precision, its lower bound and :math:`\underline\varepsilon`.
    """
    tp = check_int(true_positives, "true_positives", minimum=0)
    n = check_int(called_in, "called_in", minimum=1)
    if tp > n:
        raise ValueError(f"true_positives = {tp} exceeds called_in = {n}")
    if not (0.5 <= confidence < 1.0):
        raise ValueError(f"confidence must be in [0.5, 1), got {confidence}")
    p_low = float(clopper_pearson_lower(tp, n, 1.0 - confidence))
    eps = float(np.log(p_low / (1.0 - p_low))) if p_low > 0.5 else 0.0
    return {"precision": tp / n, "precision_lower": p_low, "called_in": n,
            "true_positives": tp, "epsilon_lower_bound": eps, "confidence": confidence}


#: Largest RDP order :func:`paper_rdp_epsilon` searches before it gives up.
RDP_MAX_ORDER = 2**16


def rdp_orders(max_order: int) -> list[float]:
    """Opacus' default RDP orders (1.1 .. 63) extended by integers about 5 % apart up to
    ``max_order``: Opacus' default stops at 63, where a large noise multiplier's optimum is
    far higher (SGD-Full at sigma 128: optimum near 545).

    Parameters
    ----------
    max_order : int
        Largest order.

    Returns
    -------
    list of float
        The orders, ascending.
    """
    from opacus.accountants import RDPAccountant

    top = check_int(max_order, "max_order", minimum=64)
    ext = np.unique(np.round(np.geomspace(64, top, max(2, int(np.log(top / 64) / 0.05) + 2))))
    return list(RDPAccountant.DEFAULT_ALPHAS) + [float(a) for a in ext if a > 63]


def paper_rdp_epsilon(cfg: UpdateConfig, delta: float, *, return_order: bool = False):
    r""":math:`\varepsilon(\delta)` of the update as the seed accounts it (TF Privacy's RDP
    accountant: Poisson-sampled Gaussian, add/remove, sampling rate
    :math:`q = \min(1, B/n_{up})`, :math:`E\lceil n_{up}/B\rceil` steps; here Opacus'
    ``RDPAccountant``, the same analysis). Our own accounting
    (:func:`~semi_core.attacks.updates.training.update_mu`) is the exact :math:`\mu`-GDP of the
    shuffled, replace-one update actually run; the two differ in sampling and neighbouring
    relation, so they are shown side by side, never substituted.

    The conversion :math:`\varepsilon = \min_\alpha \mathrm{RDP}(\alpha) +
    \log(1/\delta)/(\alpha-1)` is searched over :func:`rdp_orders`, starting at order 1024
    and doubling the largest order while the optimum sits at it (Opacus' default orders stop
    at 63, which floored this column at about 0.066 for SGD-Full at sigma 128; the optimum
    there is near order 545 and gives 0.0088). An optimum still at :data:`RDP_MAX_ORDER`
    raises instead of returning a floor.

    Parameters
    ----------
    cfg : UpdateConfig
        A DP update (``sigma_dp > 0``).
    delta : float in (0, 1)
    return_order : bool
        Also return the optimal order.

    Returns
    -------
    float, or (float, float) with ``return_order``
    """
    delta = check_delta(delta)
    if cfg.sigma_dp <= 0:
        raise ValueError("paper_rdp_epsilon needs a DP update (sigma_dp > 0)")
    # lazy: Opacus is an optional dependency, needed only for this accounting
    from opacus.accountants import RDPAccountant

    upd = cfg.update_cfg
    n = cfg.n_up if cfg.update == "sgd-new" else cfg.n0 + cfg.n_up
    q = min(1.0, upd.batch_size / n)
    steps = upd.epochs * int(np.ceil(n / upd.batch_size))
    acc = RDPAccountant()
    acc.history = [(float(cfg.sigma_dp), q, steps)]
    top = 1024
    while True:
        orders = rdp_orders(top)
        with warnings.catch_warnings():  # the edge case is handled below
            warnings.simplefilter("ignore", UserWarning)
            eps, best = acc.get_privacy_spent(delta=delta, alphas=orders)
        if best < orders[-1]:
            break
        if top >= RDP_MAX_ORDER:
            raise ValueError(f"the RDP optimum of sigma_dp = {cfg.sigma_dp} lies beyond order "
                             f"{RDP_MAX_ORDER}: epsilon(delta) cannot be computed here")
        top *= 2
    return (float(eps), float(best)) if return_order else float(eps)


def dp_protocol_sweep(cfg: UpdateConfig, sigmas, *, delta: float = 1e-4,
                      confidence: float = 0.98, combiners=("diff", "ratio"),
                      executor=None) -> dict:
    r"""The seed's §5.7 protocol: for each noise multiplier, ``cfg.trials`` models of one DP
    update, every candidate's precision at the 10 % Batch rule pooled over the models, turned
    into :math:`\underline\varepsilon` by :func:`precision_epsilon`; beside it the update's
    :math:`\varepsilon(\delta)` from our exact GDP accounting and from the seed's RDP
    accounting (:func:`paper_rdp_epsilon`).

    The seed pools "20 models with 20 points in each" as 400 trials; points of one model are
    not independent, so the Clopper-Pearson confidence is nominal (the fixed-canary game of
    :func:`dp_audit` is the valid audit). Returns ``{"rows": [...]}``, one per sigma.

    Parameters
    ----------
    cfg : UpdateConfig
        The experiment's configuration.
    sigmas : sequence of float
        Noise multipliers.
    delta : float
        The :math:`\delta` of the accounting.
    confidence : float
        Confidence of the precision bounds.
    combiners : sequence of str
        Combiners of the scores.
    executor : None, int or Executor
        Where the models train.

    Returns
    -------
    dict
        ``{"rows": [...]}``, one row per sigma.
    """
    from .experiment import run_experiment

    delta = check_delta(delta)
    rows = []
    for sigma in sigmas:
        c = replace(cfg, k=1, sigma_dp=float(sigma), clip=cfg.clip or 0.5)
        run = run_experiment(c, executor=executor)
        m = run.member
        L = run.scores["loss"]
        attacks = {}
        scores = {f"update-{comb}": combine(L[:, 0], L[:, 1], comb, c=c.c) for comb in combiners}
        scores["no-update-loss"] = -L[:, 1]
        for name, s in scores.items():
            tp = called = 0
            for r in range(s.shape[0]):
                thr = float(np.quantile(s[r], 0.9, method="lower"))
                tp += int(np.sum(s[r, m] > thr))
                called += int(np.sum(s[r] > thr))
            attacks[name] = precision_epsilon(tp, max(called, 1), confidence=confidence) \
                if called else {"precision": None, "epsilon_lower_bound": 0.0, "called_in": 0}
        mu = update_mu(c.update_cfg)
        rows.append({"sigma_dp": float(sigma), "clip": c.clip, "update": c.update,
                     "epsilon_ours_gdp": gdp_epsilon(mu, delta), "update_mu": mu,
                     "epsilon_paper_rdp": paper_rdp_epsilon(c, delta),
                     "final_model_accuracy": run.test_accuracy[
                         "final_model_accuracy_on_test_points"],
                     "models": int(L.shape[0]), "attacks": attacks})
    return {"delta": delta, "confidence": confidence, "n_up": cfg.n_up, "rows": rows}
