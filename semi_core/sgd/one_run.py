r"""One-run DP-SGD audits: ``m`` canaries, each included with probability 1/2, in ONE training run.

Steinke, Nasr & Jagielski (2023), *Privacy auditing with one (1) training run*, and
Mahloujifar, Melis & Chaudhuri (2024), *Auditing f-differential privacy in one run*: instead of
``R`` training runs with one canary each, one run carries ``m`` canaries whose inclusion bits
:math:`S_1..S_m` are independent Bernoulli(1/2); the auditor scores every canary from the run's
output, guesses the bits of the most confident ones, and certifies
:math:`\underline\varepsilon` from the number of correct guesses (:mod:`semi_core.audit.one_run`,
:mod:`semi_core.audit.one_run_fdp`).

**White-box** (:func:`one_run_white_box`). The canaries are Dirac gradient canaries
(:mod:`semi_core.sgd.dirac`: canary ``c`` is the gradient :math:`\pm M e_{j_c}` on its own
isolated coordinate :math:`j_c`, sign :math:`+` when :math:`S_c=1`, :math:`-` otherwise: the
replace-one neighbours of Nasr et al. 2023), inserted at *chosen* steps :math:`\tau_c` spread over
the run. The auditor knows every canary's step (the SeMI setting: seed ``semi_sequential_mi``
§4.2) and scores canary ``c`` by the optimal per-step log-LR at :math:`\tau_c`,

.. math::

    \mathrm{score}_c = \log\mathrm{LR}_{\tau_c}(s_{\tau_c,j_c})
    = \frac{2(s_{\tau_c,j_c}-a_c)}{\varsigma_c^2},\qquad
    s_{t,j} = -\frac{n}{\eta C}\,(\theta_t-\theta_{t-1})_j

(the ``dirac`` score of :class:`~semi_core.sgd.dirac.WhiteBoxScorer`; ``score="semi_sgd"``: the
SeMI-SGD per-step log-LR at :math:`\tau_c` with target gradient :math:`Ce_{j_c}`; beside it, the
Final Observation score :math:`\sum_t(s_{t,j_c}-a_c)` that does not use the step, whose noise
is that of all :math:`T` steps: :math:`\mu/\sqrt T`). On isolated
coordinates the ``m`` scores are independent and exactly
:math:`\mathcal N(\pm 2/\sigma_{DP}^2, 4/\sigma_{DP}^2)`: a :math:`\mu=2/\sigma_{DP}` GDP pair per
canary, the run's exact privacy (each record used once, fixed disjoint batches). Any
:class:`~semi_core.sgd.dirac.WhiteBoxMechanism` with ``m`` canaries per run works: our batched
trainer, or Opacus' optimizer through :class:`semi_core.integrations.opacus.OpacusMechanism`
(``prepare_opacus_setup(..., canary="dirac", canaries_per_run=m)``, fixed batches).

**Black-box** (:func:`one_run_black_box`). The canaries are input records
:math:`z_c=(A\,e_{f_c}, y_c)` on input features :math:`f_c` that are zero in every natural record
(:func:`black_box_canaries`); when :math:`S_c=1` canary ``c`` replaces a batch slot at step
:math:`\tau_c`, otherwise the slot keeps its natural record. The score is the final model's
negative loss :math:`-\ell(\theta_T; z_c)` (no intermediate model is read). The neighbours
differ by one record, so the run is still :math:`2/\sigma_{DP}`-GDP; the black-box score sees
the canary's one clipped gradient (norm :math:`\le C`, against :math:`2C` for the antipodal
Dirac pair) through the noise of all :math:`T` steps, so expect
:math:`\mu_{\mathrm{obs}}\lesssim 1/(\sigma_{DP}\sqrt T)`.

**Certification** (:func:`certify_one_run`): ``one-run`` (Steinke et al., distribution-free) and
``one-run-fdp`` with the Gaussian curve (``gdp``: assumes the per-canary trade-off curve is
Gaussian, exact here for white-box canaries) and the :math:`(\varepsilon,\delta)` curve. The
bound needs the bits to be independent Bernoulli(1/2): user-supplied bits whose class sizes rule
that out are refused before training
(:func:`~semi_core.audit.one_run.check_inclusion_balance`), and so is an ``m`` below
:func:`min_certifying_canaries` (the smallest ``m`` for which even all-correct guesses certify
:math:`\underline\varepsilon>0`).

Randomness: the bits come from ``child_seed(seed, 0)``, the run (batches, slots, noise) from
``child_seed(seed, 1)``: the same seed gives the same audit, bit for bit.
"""

from __future__ import annotations

import functools
import math
import time
from dataclasses import dataclass, field

import numpy as np
import torch

from semi_core._rng import child_seed
from semi_core._validation import (
    check_delta,
    check_failure_prob,
    check_int,
    check_positive,
)
from semi_core.audit import epsilon_lower_bound
from semi_core.audit.one_run import check_inclusion_balance
from semi_core.audit.report import AuditReport

from .accounting import dpsgd_epsilon
from .dirac import WhiteBoxMechanism, WhiteBoxScorer, WhiteBoxSetup, dirac_coordinates
from .dpsgd import DPSGDConfig
from .ghost import ghost_clipped_mean
from .grads import FunctionalModel, clip_rows

__all__ = ["ONE_RUN_METHODS", "OneRunAudit", "certify_one_run", "min_certifying_canaries",
           "spread_steps", "draw_inclusion", "one_run_white_box", "one_run_black_box",
           "synthetic_setup", "black_box_canaries", "MANY_RUN_METHODS", "tightness_table",
           "format_tightness"]

#: (name, method, keyword arguments) of the certified bounds of a one-run audit.
ONE_RUN_METHODS = (("one-run", "one-run", {}),
                   ("one-run-fdp (gdp)", "one-run-fdp", {"tradeoff": "gdp"}),
                   ("one-run-fdp (eps,delta)", "one-run-fdp", {"tradeoff": "eps-delta"}))


#: Test name of the white-box run's Final Observation score (the step not used).
FINAL = "final"


@dataclass(frozen=True, repr=False)
class OneRunAudit(AuditReport):
    """Result of one training run with ``m`` canaries (an
    :class:`~semi_core.audit.report.AuditReport`: ``bounds[score][method]`` and, white-box
    ``dirac`` only, ``bounds["final"][method]``).

    Attributes
    ----------
    kind : {"white-box", "black-box"}
    member : ndarray of bool, (m,)
        Inclusion bits :math:`S_c`.
    tau : ndarray of int, (m,)
        Insertion step of each canary (1-based).
    scores : ndarray, (m,)
        Score of each canary (higher = included).
    score : str
        Name of the score (the report's first test).
    bounds : dict
        ``{test: {method: AuditResult}}`` per method of :data:`ONE_RUN_METHODS`: the test
        ``score`` and, white-box ``dirac`` only, ``"final"``: the Final Observation score
        :math:`\\sum_t(s_{t,j_c}-a_c)` (the same release read without the insertion step).
    epsilon_true : float
        The run's exact :math:`\\varepsilon(\\delta)` (:math:`2/\\sigma_{DP}`-GDP).
    delta, failure_prob : float
    seconds : dict
        ``train``, ``score`` and ``certify`` wall seconds.
    params : dict
        Configuration (JSON metadata).
    """

    kind: str = ""
    member: np.ndarray | None = None
    tau: np.ndarray | None = None
    scores: np.ndarray | None = None
    score: str = ""
    epsilon_true: float = math.nan
    delta: float = math.nan
    failure_prob: float = math.nan
    seconds: dict = field(default_factory=dict)
    params: dict = field(default_factory=dict)

    @property
    def m(self) -> int:
        """Number of canaries."""
        return int(self.member.size)

    def by_method(self, test: str | None = None) -> dict[str, float]:
        """Certified :math:`\\underline\\varepsilon` of one test per method.

        Parameters
        ----------
        test : str, optional
            Default: the run's score; ``"final"``: the Final Observation score (``{}`` where
            not computed).

        Returns
        -------
        dict of str to float
        """
        per = self.bounds.get(self.score if test is None else test, {})
        return {k: float(r.epsilon_lower_bound) for k, r in per.items()}

    @property
    def bounds_step_unknown(self) -> dict[str, float]:
        """:meth:`by_method` of the Final Observation score (``{}`` where not computed)."""
        return self.by_method(FINAL)

    def ratios(self) -> dict:
        """:math:`\\underline\\varepsilon/\\varepsilon_{\\mathrm{true}}` per method.

        Returns
        -------
        dict of str to float
            The ratio of each method's bound to the true epsilon.
        """
        return {k: v / self.epsilon_true for k, v in self.by_method().items()}

    def ratios_step_unknown(self) -> dict:
        """:meth:`ratios` of :attr:`bounds_step_unknown`.

        Returns
        -------
        dict of str to float
            The ratio of each step-unknown bound to the true epsilon.
        """
        return {k: v / self.epsilon_true for k, v in self.bounds_step_unknown.items()}

    def __repr__(self) -> str:
        return (f"OneRunAudit(kind={self.kind!r}, m={self.m}, score={self.score!r}, "
                f"epsilon_true={self.epsilon_true:.4f}, best={self.best():.4f})")

    def to_dict(self) -> dict:
        """JSON-safe summary (no per-canary arrays).

        Returns
        -------
        dict
            The summary (bounds, true epsilon, delta, failure probability, timings, parameters).
        """
        return {"kind": self.kind, "m": self.m, "members": int(self.member.sum()),
                "score": self.score, "bounds": self.by_method(),
                "epsilon_true": self.epsilon_true, "delta": self.delta,
                "failure_prob": self.failure_prob, "seconds": dict(self.seconds),
                "params": dict(self.params),
                "bounds_step_unknown": self.bounds_step_unknown}

    def _entries(self) -> dict:
        return self.to_dict()


# ----------------------------------------------------------------------------- design checks
@functools.lru_cache(maxsize=64)
def min_certifying_canaries(delta: float = 1e-5, failure_prob: float = 0.05,
                            method: str = "one-run", tradeoff: str | None = None,
                            limit: int = 4096) -> int:
    r"""Smallest number of canaries ``m`` for which a one-run audit can certify
    :math:`\underline\varepsilon>0`.

    The best case is a balanced design (:math:`\lceil m/2\rceil` members) guessed perfectly:
    every score of a member above every non-member's, so each guess count of the
    pre-registered family (:func:`~semi_core.audit.one_run.guess_family`, Bonferroni over it)
    is all correct. Below this ``m`` no outcome of the run certifies anything
    (with :math:`\delta=0` and ``one-run`` it is about :math:`\log_2(|F|/\xi)`, :math:`|F|` the
    family's size).

    Parameters
    ----------
    delta : float
        In ``[0, 1)``.
    failure_prob : float
        :math:`\xi\in(0, 0.5]`.
    method : {"one-run", "one-run-fdp"}
    tradeoff : str, optional
        ``one-run-fdp`` curve (``gdp`` or ``eps-delta``).
    limit : int
        Largest ``m`` tried; beyond it a ``ValueError``.

    Returns
    -------
    int
        The smallest m, >= 1.
    """
    delta = check_delta(delta)
    failure_prob = check_failure_prob(failure_prob)
    if method not in ("one-run", "one-run-fdp"):
        raise ValueError(f"method must be 'one-run' or 'one-run-fdp', got {method!r}")
    kw = {} if tradeoff is None else {"tradeoff": tradeoff}
    for m in range(2, check_int(limit, "limit", minimum=2) + 1):
        n1 = (m + 1) // 2
        mem, non = np.arange(1.0, n1 + 1) + m, -np.arange(1.0, m - n1 + 1)
        e = epsilon_lower_bound(mem, non, delta=delta, failure_prob=failure_prob,
                                method=method, **kw).epsilon_lower_bound
        if e > 0:
            return m
    raise ValueError(f"no m <= {limit} certifies eps > 0 with method={method!r} at "
                     f"delta={delta:g}, failure_prob={failure_prob:g}")


def _check_m(m: int, *, delta: float, failure_prob: float) -> int:
    m = check_int(m, "m (canaries)", minimum=2)
    need = max(min_certifying_canaries(delta, failure_prob, name, kw.get("tradeoff"))
               for _, name, kw in ONE_RUN_METHODS)
    if m < need:
        raise ValueError(f"m = {m} canaries cannot certify anything: even if every guess is "
                         f"right, the one-run bounds give eps_LB = 0 below m = {need} canaries "
                         f"(delta={delta:g}, failure_prob={failure_prob:g}); use m >= {need} "
                         "(m >= 1000 for a useful bound)")
    return m


def spread_steps(m: int, steps: int) -> np.ndarray:
    r"""Insertion steps spread evenly over the run: :math:`\tau_c=1+\lfloor cT/m\rfloor`.

    Parameters
    ----------
    m : int
        Number of canaries, >= 1.
    steps : int
        Number of steps T, >= 1.

    Returns
    -------
    ndarray of int64, shape (m,)
        Insertion steps in 1..T, non-decreasing.
    """
    m = check_int(m, "m", minimum=1)
    steps = check_int(steps, "steps", minimum=1)
    return 1 + (np.arange(m, dtype=np.int64) * steps) // m


def draw_inclusion(m: int, seed) -> np.ndarray:
    """Independent Bernoulli(1/2) inclusion bits from ``child_seed(seed, 0)``.

    Parameters
    ----------
    m : int
        Number of canaries, >= 1.
    seed : int or numpy.random.SeedSequence
        Root seed.

    Returns
    -------
    ndarray of bool, shape (m,)
        The inclusion bits.
    """
    m = check_int(m, "m", minimum=1)
    return np.random.default_rng(child_seed(seed, 0)).random(m) < 0.5


def _check_design(m, member, taus, steps, seed, *, delta, failure_prob):
    """Bits and steps of ``m`` canaries: drawn, or the user's checked (module docstring)."""
    _check_m(m, delta=delta, failure_prob=failure_prob)
    if member is None:
        member = draw_inclusion(m, seed)
        try:
            check_inclusion_balance(int(member.sum()), int((~member).sum()), method="one-run")
        except ValueError:  # a valid draw lands here with probability < BALANCE_LEVEL (1e-3)
            raise ValueError(
                f"the inclusion bits drawn from seed={seed!r} have {int(member.sum())} members "
                f"of m = {m}: the one-run bounds refuse class sizes this unbalanced (two-sided "
                "binomial p < 1e-3, a valid Bernoulli(1/2) draw is refused with probability "
                "below 1e-3); use another seed") from None
    else:
        member = np.asarray(member)
        if member.shape != (m,) or member.dtype != bool:
            raise ValueError(f"member must be a bool array of shape ({m},) (one inclusion bit "
                             f"per canary), got dtype {member.dtype} and shape {member.shape}")
        check_inclusion_balance(int(member.sum()), int((~member).sum()), method="one-run")
    if taus is None:
        taus = spread_steps(m, steps)
    else:
        taus = np.broadcast_to(np.asarray(taus), (m,))
        if not np.issubdtype(taus.dtype, np.integer):
            raise ValueError(f"taus must be integers (insertion steps), got {taus.dtype}")
        if taus.min() < 1 or taus.max() > steps:
            raise ValueError(f"taus must be insertion steps in 1..{steps}, got values in "
                             f"{taus.min()}..{taus.max()}")
        taus = taus.astype(np.int64)
    return member, taus


def _one_run_results(member_scores, nonmember_scores, *, delta: float, failure_prob: float,
                     methods=ONE_RUN_METHODS) -> dict:
    """``{name: AuditResult}`` of one run's canary scores per method of ``methods``."""
    return {name: epsilon_lower_bound(member_scores, nonmember_scores, delta=delta,
                                      failure_prob=failure_prob, method=method, **kw)
            for name, method, kw in methods}


def certify_one_run(member_scores, nonmember_scores, *, delta: float,
                    failure_prob: float = 0.05, methods=ONE_RUN_METHODS) -> dict:
    """Certified :math:`\\underline\\varepsilon` of one run's canary scores per method
    (:func:`semi_core.audit.epsilon_lower_bound`; ``methods``: (name, method, kwargs)).

    Parameters
    ----------
    member_scores : array_like
        Scores of the included canaries.
    nonmember_scores : array_like
        Scores of the excluded canaries.
    delta : float
        The :math:`\\delta` of the bound, in [0, 1).
    failure_prob : float
        Probability that a bound is wrong, in (0, 1).
    methods : sequence of (str, str, dict)
        Name, method of :func:`semi_core.audit.epsilon_lower_bound` and its keywords.

    Returns
    -------
    dict of str to float
        The certified lower bound of each method.
    """
    return {k: float(r.epsilon_lower_bound) for k, r in _one_run_results(
        member_scores, nonmember_scores, delta=delta, failure_prob=failure_prob,
        methods=methods).items()}


# ----------------------------------------------------------------------------- white-box
def one_run_white_box(mech: WhiteBoxMechanism | WhiteBoxSetup, *, seed=0, member=None,
                      taus=None, score: str = "dirac", delta: float = 1e-5,
                      failure_prob: float = 0.05) -> OneRunAudit:
    r"""One white-box DP-SGD run with ``m`` Dirac canaries (module docstring).

    Parameters
    ----------
    mech : WhiteBoxMechanism or WhiteBoxSetup
        Dirac canaries, ``m = len(setup.coords)`` per run (at most the batch size): our
        batched trainer (a setup, e.g. :func:`synthetic_setup`) or a subclass such as Opacus'.
    seed : int or SeedSequence
        Bits from ``child_seed(seed, 0)``, the run from ``child_seed(seed, 1)``.
    member : array of bool, (m,), optional
        Inclusion bits; they must have been drawn independently with probability 1/2 (class
        sizes incompatible with that are refused). Default: drawn.
    taus : int or array of int, optional
        Insertion steps in ``1..T``; default :func:`spread_steps`.
    score : {"dirac", "semi_sgd"}
        The optimal Dirac per-step log-LR at :math:`\tau_c`, or SeMI-SGD's at :math:`\tau_c`.
    delta, failure_prob : float
        :math:`\delta\in[0,1)` and :math:`\xi\in(0,0.5]` of the certified bounds.

    Returns
    -------
    OneRunAudit
    """
    if isinstance(mech, WhiteBoxSetup):
        mech = WhiteBoxMechanism(mech)
    if not isinstance(mech, WhiteBoxMechanism):
        raise TypeError(f"mech must be a WhiteBoxMechanism or a WhiteBoxSetup, got "
                        f"{type(mech).__name__}")
    if mech.setup.kind != "dirac":
        raise ValueError("a white-box one-run audit needs Dirac canaries (setup.kind='dirac'); "
                         "for input-space canaries use one_run_black_box")
    if score not in ("dirac", "semi_sgd"):
        raise ValueError(f"score must be 'dirac' or 'semi_sgd', got {score!r}")
    delta = check_delta(delta)
    failure_prob = check_failure_prob(failure_prob)
    m = mech.k
    member, taus = _check_design(m, member, taus, mech.T, seed, delta=delta,
                                 failure_prob=failure_prob)
    t0 = time.perf_counter()
    releases = mech.release(member, taus, np.random.default_rng(child_seed(seed, 1)))
    t1 = time.perf_counter()
    scorer = WhiteBoxScorer(mech, semi="tau" if score == "semi_sgd" else False)
    scores = np.asarray(scorer(releases, taus)[score], dtype=float)
    t2 = time.perf_counter()
    bounds = {score: _one_run_results(scores[member], scores[~member], delta=delta,
                                      failure_prob=failure_prob)}
    t3 = time.perf_counter()
    if score == "dirac":  # the Final Observation score: the same run, step not used
        traj, idx = mech.trajectories(releases)
        final = (mech.standardised(traj, idx) - mech._a[idx, None]).sum(1)
        bounds[FINAL] = _one_run_results(final[member], final[~member], delta=delta,
                                         failure_prob=failure_prob)
    return OneRunAudit(bounds=bounds, kind="white-box", member=member, tau=taus, scores=scores,
                       score=score, epsilon_true=float(mech.epsilon(delta)), delta=delta,
                       failure_prob=failure_prob,
                       seconds={"train": t1 - t0, "score": t2 - t1, "certify": t3 - t2},
                       params={**mech.params(), "m": m})


# ----------------------------------------------------------------------------- black-box
def black_box_canaries(setup: WhiteBoxSetup, m: int, *, amplitude: float = 10.0, seed=0):
    r"""``m`` input canaries :math:`(A e_{f_c}, y_c)` on input features :math:`f_c` that are zero
    in every pool and reference record (labels uniform from ``child_seed(seed, 2)``).

    Needs a model whose first layer is ``nn.Linear`` reading flat features, and ``m`` all-zero
    input features; returns ``(x (m, features), y (m,))`` tensors.

    Parameters
    ----------
    setup : WhiteBoxSetup
        Model and data (the first layer must be ``nn.Linear``).
    m : int
        Number of canaries, >= 1 (at most the number of all-zero features).
    amplitude : float
        Feature value A of each canary, > 0.
    seed : int or numpy.random.SeedSequence
        Seed of the labels.

    Returns
    -------
    x : torch.Tensor, shape (m, features)
        The canaries' inputs.
    y : torch.Tensor, shape (m,)
        Their labels.
    """
    m = check_int(m, "m", minimum=1)
    amplitude = check_positive(amplitude, "amplitude")
    data = torch.cat([setup.pool_x.reshape(setup.pool_x.shape[0], -1),
                      setup.ref_x.reshape(setup.ref_x.shape[0], -1)])
    zero = np.flatnonzero((data == 0).all(0).numpy())
    if zero.size < m:
        raise ValueError(f"{m} input canaries need {m} input features that are zero in every "
                         f"record; the data has {zero.size}")
    classes = max(int(setup.ref_y.max()) + 1, int(setup.pool_y.max()) + 1, 2)
    x = torch.zeros(m, data.shape[1], dtype=setup.theta0.dtype)
    x[torch.arange(m), torch.as_tensor(zero[:m])] = amplitude
    rng = np.random.default_rng(child_seed(seed, 2))
    y = torch.as_tensor(rng.integers(0, classes, size=m), dtype=setup.pool_y.dtype)
    return x.reshape(m, *setup.pool_x.shape[1:]), y


def _train_black_box(setup: WhiteBoxSetup, cx, cy, member, taus, rng) -> torch.Tensor:
    """One DP-SGD run (fixed disjoint batches) with the included canaries in their slots;
    returns :math:`\\theta_T`."""
    cfg, fm = setup.cfg, setup.fm
    T, n = cfg.steps, cfg.batch_size
    pool = int(setup.pool_x.shape[0])
    if pool < T * n:
        raise ValueError(f"private pool has {pool} records, T*n = {T * n} are needed")
    batches = rng.choice(pool, size=T * n, replace=False).reshape(T, n)
    noise = torch.as_tensor(rng.standard_normal((T, fm.d)), dtype=setup.theta0.dtype)
    stack = fm.linear_stack()
    theta = setup.theta0.clone()
    for t in range(T):
        idx = torch.as_tensor(batches[t])
        x, y = setup.pool_x[idx].clone(), setup.pool_y[idx].clone()
        here = np.flatnonzero(member & (taus == t + 1))
        if here.size > n:
            raise ValueError(f"{here.size} included canaries at step {t + 1} exceed the batch "
                             f"size {n}: spread them over more steps or enlarge the batch")
        slots = torch.as_tensor(rng.choice(n, size=here.size, replace=False))
        x[slots], y[slots] = cx[torch.as_tensor(here)], cy[torch.as_tensor(here)]
        if stack is not None:
            mean = ghost_clipped_mean(stack, theta[None], x[None], y[None], clip=cfg.clip)[0]
        else:
            mean = clip_rows(fm.per_sample_grads(theta, x, y), cfg.clip).mean(0)
        theta = theta - cfg.lr * (mean + cfg.sigma_dp * cfg.clip / n * noise[t])
    return theta


def one_run_black_box(setup: WhiteBoxSetup, canaries=None, *, seed=0, member=None, taus=None,
                      m: int | None = None, delta: float = 1e-5,
                      failure_prob: float = 0.05) -> OneRunAudit:
    r"""One DP-SGD run with ``m`` input canaries, scored by the final model's loss.

    Parameters
    ----------
    setup : WhiteBoxSetup
        Model, :math:`\theta_0`, data and :class:`~semi_core.sgd.dpsgd.DPSGDConfig` (its canary
        fields are not used).
    canaries : (Tensor, Tensor), optional
        The user's records ``(x (m, ...), y (m,))``; default :func:`black_box_canaries` with
        ``m`` canaries.
    m : int, optional
        Number of default canaries (required when ``canaries`` is None).
    seed, member, taus, delta, failure_prob
        As in :func:`one_run_white_box`.

    Returns
    -------
    OneRunAudit
        Scores :math:`-\ell(\theta_T; z_c)`.
    """
    if not isinstance(setup, WhiteBoxSetup):
        raise TypeError(f"setup must be a WhiteBoxSetup, got {type(setup).__name__}")
    delta = check_delta(delta)
    failure_prob = check_failure_prob(failure_prob)
    if canaries is None:
        if m is None:
            raise ValueError("pass the canaries (x, y) or their number m")
        cx, cy = black_box_canaries(setup, _check_m(m, delta=delta,
                                                    failure_prob=failure_prob), seed=seed)
    else:
        cx, cy = (torch.as_tensor(c) for c in canaries)
        if cx.shape[0] != cy.shape[0] or (m is not None and cx.shape[0] != m):
            raise ValueError("canaries must be (x, y) with one label per canary "
                             f"(and m = {m} rows when m is given)")
        cx = cx.to(setup.theta0.dtype)
    m = int(cx.shape[0])
    cfg = setup.cfg
    member, taus = _check_design(m, member, taus, cfg.steps, seed, delta=delta,
                                 failure_prob=failure_prob)
    t0 = time.perf_counter()
    with torch.no_grad():
        theta = _train_black_box(setup, cx, cy, member, taus,
                                 np.random.default_rng(child_seed(seed, 1)))
    t1 = time.perf_counter()
    with torch.no_grad():
        scores = -setup.fm.losses_batched(theta[None], cx, cy)[0].numpy().astype(float)
    t2 = time.perf_counter()
    bounds = {"neg_final_loss": _one_run_results(scores[member], scores[~member], delta=delta,
                                                 failure_prob=failure_prob)}
    t3 = time.perf_counter()
    params = {"mechanism": "black-box-dp-sgd", "m": m, "T": cfg.steps,
              "batch_size": cfg.batch_size, "lr": cfg.lr, "clip": cfg.clip,
              "sigma_dp": cfg.sigma_dp, "d": int(setup.fm.d)}
    return OneRunAudit(kind="black-box", member=member, tau=taus, scores=scores,
                       score="neg_final_loss", bounds=bounds,
                       epsilon_true=float(dpsgd_epsilon(cfg.sigma_dp, delta)), delta=delta,
                       failure_prob=failure_prob,
                       seconds={"train": t1 - t0, "score": t2 - t1, "certify": t3 - t2},
                       params=params)


# ----------------------------------------------------------------------------- a synthetic task
def synthetic_setup(m: int, sigma_dp: float, *, steps: int = 3, classes: int = 3,
                    batch_size: int | None = None, lr: float = 0.5, clip: float = 1.0,
                    real_features: int = 8, zero_features: int | None = None,
                    seed=0) -> WhiteBoxSetup:
    r"""A linear softmax (no bias) on ``real_features`` Gaussian features plus ``zero_features``
    all-zero features (default ``m``: one per black-box canary; white-box canaries need only
    :math:`\lceil m/\text{classes}\rceil`), with ``min(m, n)`` isolated Dirac coordinates
    (the white-box audit's canaries: ``len(setup.coords)``): the setup of both one-run audits.

    The batch holds ``n = max(m, 64)`` records by default (white-box: the ``m`` canaries take
    distinct slots of a run); the pool holds ``steps * n`` records (each used once), 200 more
    are the reference records. Without a bias no natural gradient touches the zero features'
    weights, so canaries neither touch nor are touched by training. Randomness from
    ``child_seed(seed, 3)``.

    Parameters
    ----------
    m : int
        Number of canaries, >= 1.
    sigma_dp : float
        DP-SGD noise multiplier, > 0.
    steps : int
        Number of steps, >= 1.
    classes : int
        Number of classes, >= 2.
    batch_size : int, optional
        Batch size, >= 2; None = ``max(m, 64)``.
    lr : float
        Learning rate.
    clip : float
        Clipping norm.
    real_features : int
        Number of Gaussian features.
    zero_features : int, optional
        Number of all-zero features, >= 1; None = ``m``.
    seed : int or numpy.random.SeedSequence
        Root seed.

    Returns
    -------
    WhiteBoxSetup
        The setup.
    """
    m = check_int(m, "m", minimum=1)
    sigma_dp = check_positive(sigma_dp, "sigma_dp")
    steps = check_int(steps, "steps", minimum=1)
    classes = check_int(classes, "classes", minimum=2)
    n = max(m, 64) if batch_size is None else check_int(batch_size, "batch_size", minimum=2)
    zero = m if zero_features is None else check_int(zero_features, "zero_features", minimum=1)
    k = min(m, n)
    if classes * zero < k:
        raise ValueError(f"zero_features = {zero} gives {classes * zero} isolated coordinates, "
                         f"fewer than the {k} Dirac canaries: use zero_features >= "
                         f"{math.ceil(k / classes)}")
    features = check_int(real_features, "real_features", minimum=1) + zero
    records = steps * n + 200
    rng = np.random.default_rng(child_seed(seed, 3))
    w = rng.normal(size=(real_features, classes))
    x = np.zeros((records, features))
    x[:, :real_features] = rng.normal(size=(records, real_features))
    y = np.argmax(x[:, :real_features] @ w + rng.gumbel(size=(records, classes)), axis=1)
    g = torch.Generator().manual_seed(int(rng.integers(0, 2**62)))
    model = torch.nn.Linear(features, classes, bias=False).double()
    with torch.no_grad():
        model.weight.copy_(torch.randn(classes, features, generator=g, dtype=torch.float64)
                           / math.sqrt(real_features))
        model.weight[:, real_features:] = 0.0
    fm = FunctionalModel(model)
    theta0 = fm.theta()
    X, Y = torch.as_tensor(x), torch.as_tensor(y)
    cfg = DPSGDConfig(batch_size=n, steps=steps, lr=lr, clip=clip, sigma_dp=sigma_dp)
    ref_x, ref_y, pool_x, pool_y = X[:200], Y[:200], X[200:], Y[200:]
    ref = clip_rows(fm.per_sample_grads(theta0, ref_x, ref_y), cfg.clip)
    coords, mom = dirac_coordinates(ref, k)
    if np.any(mom != 0):  # cannot happen: classes * m zero-feature weights
        raise RuntimeError("not enough isolated coordinates for the canaries")
    return WhiteBoxSetup(fm=fm, theta0=theta0, pool_x=pool_x, pool_y=pool_y, ref_x=ref_x,
                         ref_y=ref_y, cfg=cfg, coords=coords, scale=4.0,
                         info={"mu": 2.0 / sigma_dp})



# ----------------------------------------------------------------------------- tightness table
#: Many-run audits beside the one-run ones: (name, method) on ``R = m`` runs, one canary each.
MANY_RUN_METHODS = (("gdp", "gdp"), ("band", "band"))


def tightness_table(epsilons=(1.0, 2.0, 4.0, 8.0), ms=(100, 1000, 5000), *,
                    delta: float = 1e-5, failure_prob: float = 0.05, steps: int = 3,
                    reps: int = 1, black_box: bool = True, many_runs: bool = True, seed=0,
                    progress=None) -> list[dict]:
    r""":math:`\underline\varepsilon/\varepsilon_{\mathrm{true}}` of ONE DP-SGD run with ``m``
    canaries (white-box and black-box, :func:`synthetic_setup` calibrated so that
    :math:`\varepsilon(\delta)=\varepsilon`), beside ``R = m`` runs of today's audit (one Dirac
    canary per run at :math:`\tau=2`, :func:`~semi_core.sgd.dirac.play_white_box`, certified by
    ``gdp`` and ``band``), with their costs.

    Returns one dict per ``(eps, m)``: ``wb``/``bb`` (ratios per :data:`ONE_RUN_METHODS`),
    ``runs`` (ratios per :data:`MANY_RUN_METHODS`), ``wb_seconds``/``bb_seconds`` (the one
    run: training + scoring), ``runs_seconds`` (the ``R`` runs of the small-batch game,
    measured) and ``runs_seconds_same_model`` (:math:`R\times` the white-box run's training
    time: ``R`` trainings of the one-run model); each the median over ``reps`` independent
    repetitions (seeds ``child_seed(seed, i, rep, attempt)`` for cell ``i``, the first attempt
    whose bits the class-size check accepts), ``*_all`` the values.

    Parameters
    ----------
    epsilons : sequence of float
        Target :math:`\varepsilon` of each cell, > 0.
    ms : sequence of int
        Numbers of canaries.
    delta : float
        The :math:`\delta` of every guarantee, in (0, 1).
    failure_prob : float
        Failure probability of every bound, in (0, 1).
    steps : int
        DP-SGD steps per run.
    reps : int
        Independent repetitions per cell, >= 1.
    black_box : bool
        Also run the black-box one-run audit.
    many_runs : bool
        Also run the many-runs audit for comparison.
    seed : int or numpy.random.SeedSequence
        Root seed.
    progress : callable, optional
        Progress reporter.

    Returns
    -------
    list of dict
        One row per ``(eps, m)`` as described above.
    """
    from .accounting import calibrate_sigma
    from .dirac import play_white_box

    delta = check_delta(delta)
    reps = check_int(reps, "reps", minimum=1)
    rows = []
    for i, (eps, m) in enumerate((e, mm) for e in epsilons for mm in ms):
        sigma = calibrate_sigma(float(eps), delta)
        if progress is not None:
            progress(f"one-run eps={eps:g} m={m}")
        samples: list[dict] = []
        for rep in range(reps):
            cell = _accepted_seed(m, seed, i, rep)
            one: dict = {}
            setup = synthetic_setup(m, sigma, steps=steps, zero_features=math.ceil(m / 3),
                                    seed=cell)
            wb = one_run_white_box(setup, seed=cell, delta=delta, failure_prob=failure_prob)
            one["wb"] = wb.ratios()
            one["wb_step_unknown"] = wb.ratios_step_unknown()
            one["wb_seconds"] = wb.seconds["train"] + wb.seconds["score"]
            one["runs_seconds_same_model"] = m * wb.seconds["train"]
            if black_box:
                setup = synthetic_setup(m, sigma, steps=steps, seed=cell)
                bb = one_run_black_box(setup, m=m, seed=cell, delta=delta,
                                       failure_prob=failure_prob)
                one["bb"] = bb.ratios()
                one["bb_seconds"] = bb.seconds["train"] + bb.seconds["score"]
            if many_runs:
                t0 = time.perf_counter()
                small = synthetic_setup(1, sigma, steps=steps, seed=cell)
                game = play_white_box(small, rounds=m, tau=min(2, steps), seed=cell,
                                      semi=False)
                mem, non = game.scores("dirac")
                one["runs_seconds"] = time.perf_counter() - t0
                one["runs"] = {name: float(epsilon_lower_bound(
                    mem, non, delta=delta, failure_prob=failure_prob,
                    method=method).epsilon_lower_bound) / eps
                    for name, method in MANY_RUN_METHODS}
            samples.append(one)
        row = {"eps": float(eps), "m": int(m), "sigma_dp": sigma, "mu": 2.0 / sigma,
               "reps": reps}
        for key, val in samples[0].items():
            if isinstance(val, dict):
                row[key] = {k: float(np.median([s[key][k] for s in samples])) for k in val}
                row[key + "_all"] = {k: [s[key][k] for s in samples] for k in val}
            else:
                row[key] = float(np.median([s[key] for s in samples]))
        rows.append(row)
    return rows


def _accepted_seed(m: int, *key):
    """The first ``child_seed(*key, attempt)`` whose drawn bits the class-size check accepts
    (a draw is refused with probability < 1e-3, so the accepted design differs from
    Bernoulli(1/2) by < 1e-3 in total variation: a bound's over-claim probability grows by
    < 1e-3)."""
    for attempt in range(100):
        ss = child_seed(*key, attempt)
        bits = draw_inclusion(m, ss)
        try:
            check_inclusion_balance(int(bits.sum()), int((~bits).sum()))
        except ValueError:
            continue
        return ss
    raise RuntimeError("100 draws of inclusion bits refused: the class-size check is broken")


def format_tightness(rows: list[dict]) -> str:
    """Markdown table of :func:`tightness_table` rows.

    Parameters
    ----------
    rows : list of dict
        Rows of :func:`tightness_table`.

    Returns
    -------
    str
        The Markdown table.
    """
    one = [n for n, _, _ in ONE_RUN_METHODS]
    has_bb = any("bb" in r for r in rows)
    has_runs = any("runs" in r for r in rows)
    unk = "one-run-fdp (gdp)"
    head = ["eps", "m", *[f"WB {n}" for n in one], f"WB {unk}, step unknown"]
    head += [f"BB {n}" for n in one] if has_bb else []
    head += [f"R=m runs {n}" for n, _ in MANY_RUN_METHODS] if has_runs else []
    head += ["one run s (WB)"] + (["one run s (BB)"] if has_bb else [])
    head += (["R runs s (small batch)"] if has_runs else []) + ["R runs s (same model, est.)"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [f"{r['eps']:g}", str(r["m"]), *[f"{r['wb'][n]:.3f}" for n in one],
                 f"{r['wb_step_unknown'][unk]:.3f}"]
        if has_bb:
            cells += [f"{r['bb'][n]:.3f}" for n in one]
        if has_runs:
            cells += [f"{r['runs'][n]:.3f}" for n, _ in MANY_RUN_METHODS]
        cells.append(f"{r['wb_seconds']:.1f}")
        if has_bb:
            cells.append(f"{r['bb_seconds']:.1f}")
        if has_runs:
            cells.append(f"{r['runs_seconds']:.1f}")
        cells.append(f"{r['runs_seconds_same_model']:.0f}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
