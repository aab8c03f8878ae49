r"""Audit while you train: a thin adapter from any training loop to :class:`AnytimeOneRun`.

A loop that produces, at some steps, the scores of the canaries graded then (a Dirac canary's
white-box score right after its step, input canaries' losses at a checkpoint) and their labels
calls :class:`AnytimeCallback` with them; it updates the anytime-valid one-run audit
(:mod:`semi_core.audit.anytime_one_run`) and raises :class:`ClaimRefutedError` (or returns
``True``) the moment the claimed :math:`\varepsilon` is refuted, so the run can stop early. The
refutation and :math:`\underline\varepsilon` are valid at every step at once (Ville's
inequality), so stopping on them keeps the guarantee.

* the ``run.record`` path of a user loop: call ``callback(scores, member)`` after recording;
* any optimizer, Opacus' ``DPOptimizer`` included: ``callback.attach(optimizer, score_fn)``
  wraps ``optimizer.step`` so that ``score_fn()`` (``(scores, member)`` of the canaries graded
  after this step, or ``None``) is fed after every step; a plain ``torch.optim.Optimizer`` can
  also take ``optimizer.register_step_post_hook(callback.step_hook(score_fn))`` (Opacus'
  ``DPOptimizer`` does not support torch's step hooks, and its own ``attach_step_hook`` slot
  belongs to the privacy accountant).

The canaries must be graded in an order fixed in advance, each included with probability 1/2
independently, and the loop must not use the labels (the module docstring of
:mod:`semi_core.audit.anytime_one_run` states what the proof needs).
"""

from __future__ import annotations

from collections.abc import Callable

from semi_core.audit.anytime_one_run import AnytimeOneRun, ClaimRefutedError

__all__ = ["AnytimeCallback", "ClaimRefutedError"]

#: What the callback does when the claim is refuted.
ON_REFUTE = ("raise", "flag")


class AnytimeCallback:
    """Feed the canaries scored during training into an :class:`AnytimeOneRun`.

    Parameters
    ----------
    audit : AnytimeOneRun
        The audit to update.
    on_refute : {"raise", "flag"}
        ``"raise"``: raise :class:`ClaimRefutedError` when the claim is refuted;
        ``"flag"``: return ``True`` (``False`` while the claim stands).
    """

    def __init__(self, audit: AnytimeOneRun, *, on_refute: str = "raise"):
        if not isinstance(audit, AnytimeOneRun):
            raise TypeError(f"audit must be an AnytimeOneRun, got {type(audit).__name__}")
        if on_refute not in ON_REFUTE:
            raise ValueError(f"on_refute must be one of {ON_REFUTE}, got {on_refute!r}")
        self.audit, self.on_refute = audit, on_refute

    def __call__(self, scores, member) -> bool:
        """Grade the canaries scored now; ``True`` (or :class:`ClaimRefutedError`) once the
        claim is refuted.

        Parameters
        ----------
        scores, member : array-like
            As :meth:`AnytimeOneRun.update`.

        Returns
        -------
        bool
            Whether the claimed epsilon is refuted.
        """
        self.audit.update(scores, member)
        if self.audit.refuted and self.on_refute == "raise":
            a = self.audit
            raise ClaimRefutedError(
                f"claimed epsilon {a.claimed_epsilon:g} refuted after {a.refuted_at} canaries "
                f"(anytime-valid epsilon lower bound {a.epsilon_lower_bound:g} at failure "
                f"probability {a.failure_prob:g}, delta {a.delta:g}; assumption: {a.assumption})")
        return self.audit.refuted

    def step_hook(self, score_fn: Callable[[], tuple | None]) -> Callable:
        """A hook for ``torch.optim.Optimizer.register_step_post_hook`` (Opacus included).

        Parameters
        ----------
        score_fn : callable
            ``score_fn() -> (scores, member)`` of the canaries graded after this step, or
            ``None`` when none is.

        Returns
        -------
        callable
            ``hook(optimizer, args, kwargs)``.
        """
        _check_score_fn(score_fn)

        def hook(optimizer, args, kwargs) -> None:
            got = score_fn()
            if got is not None:
                self(*got)

        return hook

    def attach(self, optimizer, score_fn: Callable[[], tuple | None]):
        """Wrap ``optimizer.step`` (any optimizer, Opacus' ``DPOptimizer`` included) so that
        ``score_fn()`` is fed to the audit after every step.

        Parameters
        ----------
        optimizer : object with a ``step`` method
            Changed in place (its instance attribute ``step``); returned.
        score_fn : callable
            ``score_fn() -> (scores, member)`` or ``None``.

        Returns
        -------
        optimizer
        """
        _check_score_fn(score_fn)
        original = getattr(optimizer, "step", None)
        if not callable(original):
            raise TypeError(f"optimizer must have a step() method, got "
                            f"{type(optimizer).__name__}")

        def step(*args, **kwargs):
            out = original(*args, **kwargs)
            got = score_fn()
            if got is not None:
                self(*got)
            return out

        optimizer.step = step
        return optimizer


def _check_score_fn(score_fn) -> None:
    if not callable(score_fn):
        raise TypeError("score_fn must be callable: score_fn() -> (scores, member) or None")


#: The loops of :func:`bug_zoo_stopping`: the correct Dirac loop, its two bugs, the correct
#: loop with its canaries through the sampler, and the sampler at a misreported rate.
BUG_ZOO = ("correct", "clipping off", "noise / batch size", "correct (sampler)",
           "sample rate misreported")

#: Dirac magnitude M/C of the bug-zoo loops (a forgotten clipping lets the canary's M pass).
BUG_ZOO_SCALE = 8.0


def _zoo_loop(bug: str, *, m: int, steps: int, sigma: float, q_true: float, q_declared: float):
    """The :class:`OneRunLoop` of one bug-zoo loop and, for the sampler loops, the list that
    its ``train`` fills with the canaries' scores at every step (``-loss``)."""
    import torch
    from torch import nn
    from torch.func import functional_call, grad, vmap

    from semi_core.integrations.one_run_training import OneRunLoop

    f_real, zero, clip = 6, max(m, 8), 1.0
    sampler = bug in ("correct (sampler)", "sample rate misreported")
    n, lr = (64, 1.0) if sampler else (2000, 0.2)
    batch = round(q_true * n) if sampler else 128
    g = torch.Generator().manual_seed(0)
    X = torch.zeros(n, f_real + zero, dtype=torch.float64)
    X[:, :f_real] = torch.randn(n, f_real, generator=g, dtype=torch.float64)
    Y = (X[:, 0] > 0).long() + (X[:, 1] > 1).long()
    # input canaries: each alone on its own feature column (no natural record touches it)
    cx = torch.zeros(m, f_real + zero, dtype=torch.float64)
    cx[torch.arange(m), f_real + torch.arange(m)] = 10.0
    cy = torch.full((m,), 2, dtype=torch.long)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(f_real + zero, 8), nn.ReLU(), nn.Linear(8, 3)).double()
    trace: list = []
    with torch.no_grad():
        loss0 = nn.functional.cross_entropy(model(cx), cy, reduction="none").numpy()

    def train(model, run):
        opt = torch.optim.SGD(model.parameters(), lr=lr)
        params = dict(model.named_parameters())

        def loss(p, x, y):
            return nn.functional.cross_entropy(functional_call(model, p, (x[None],)), y[None])

        noise_sd = sigma * clip / (batch if bug == "noise / batch size" else 1)
        data = run.dataset(X, Y) if sampler else None
        trace.clear()
        for t in range(1, run.steps + 1):
            if sampler:      # Poisson sampling at the loop's TRUE rate
                keep = torch.rand(len(data[0]), generator=run.generator,
                                  dtype=torch.float64) < q_true
                x, y = data[0][keep], data[1][keep]
            else:
                idx = torch.randperm(n, generator=run.generator)[:batch]
                x, y = run.canary_batch(t, X[idx], Y[idx])
            gr = vmap(grad(loss), in_dims=(None, 0, 0))(
                {k: v.detach() for k, v in params.items()}, x, y)
            gr = run.canary_gradients(t, gr)
            norms = torch.cat([v.flatten(1) for v in gr.values()], 1).norm(dim=1)
            f = (torch.ones_like(norms) if bug == "clipping off"
                 else (clip / norms).clamp(max=1))
            for k, p in params.items():
                noise = noise_sd * torch.randn(p.shape, generator=run.generator, dtype=p.dtype)
                p.grad = ((gr[k] * f.view(-1, *[1] * p.dim())).sum(0) + noise) / batch
            opt.step()
            run.record(model)
            if sampler:
                with torch.no_grad():
                    trace.append(loss0 - nn.functional.cross_entropy(
                        model(cx), cy, reduction="none").numpy())

    kw = ({"canary": "input", "canary_records": (cx, cy), "sample_rate": q_declared}
          if sampler else {"canaries": m})
    loop = OneRunLoop(train, model, reference=(X[:128], Y[:128]), steps=steps, lr=lr,
                      batch_size=batch, noise_multiplier=sigma, max_grad_norm=clip,
                      scale=BUG_ZOO_SCALE,
                      **kw)
    return loop, trace


def bug_zoo_stopping(*, runs: int = 8, m: int = 200, steps: int = 10, seed=0,
                     delta: float = 1e-5, failure_prob: float = 0.05,
                     guess_fraction: float = 0.2, dirac_epsilon: float = 1.0,
                     sigma_sampler: float = 1.0, q_true: float = 0.5,
                     q_declared: float = 0.01) -> list[dict]:
    r"""When the anytime-valid one-run audit stops a DP-SGD run of the bug zoo, against the
    end-of-run one-run audit of the same canaries (:data:`BUG_ZOO`).

    Each of ``runs`` runs per loop trains a small plain-torch DP-SGD loop ONCE
    (:class:`~semi_core.integrations.one_run_training.OneRunLoop`, seeds spawned from
    ``seed``) with ``m`` canaries, each included with probability 1/2:

    * Dirac loops (``correct``, ``clipping off``, ``noise / batch size``): white-box Dirac
      canaries spread over the steps, each scored right after its own step; the noise
      multiplier is calibrated to ``dirac_epsilon`` for the relation the canaries play
      (:func:`~semi_core.sgd.accounting.calibrate_sigma`), the claim is the loop's own
      :math:`\varepsilon(\delta)`;
    * sampler loops: input canaries (each alone on its own feature column) go through the
      loop's Poisson sampler at rate ``q_true``; the claim is the accountant's
      :math:`\varepsilon(\delta)` of ``sigma_sampler`` at the declared rate (``q_true`` for
      ``correct (sampler)``, ``q_declared`` for ``sample rate misreported``):

      .. math::

          \varepsilon_{\rm claim}=\varepsilon_{\rm PLD}\big(\sigma, q_{\rm declared}, T,
          \delta\big) < \varepsilon_{\rm PLD}\big(\sigma, q_{\rm true}, T, \delta\big);

      canary :math:`c` of the group fixed in advance for step :math:`t`
      (:func:`~semi_core.sgd.one_run.spread_steps`) is scored by its loss after step
      :math:`t` (a black-box checkpoint read).

    The anytime audit grades the canaries step by step, in the order fixed in advance (step,
    then index), as a training callback would; the end-of-run audit (``one-run``, Steinke et
    al. 2023) reads every canary's final score (Dirac: the same scores; sampler: the loss of the
    final model) once step :math:`T` is done.

    Parameters
    ----------
    runs : int
        Runs per loop (>= 1).
    m, steps : int
        Canaries per run and DP-SGD steps.
    seed : int or SeedSequence
    delta, failure_prob : float
        Of both audits.
    guess_fraction : float
        Of the anytime audit's quantile rule.
    dirac_epsilon, sigma_sampler, q_true, q_declared : float
        The Dirac loops' calibrated epsilon; the sampler loops' noise multiplier, true and
        declared rates (``q_declared < q_true``).

    Returns
    -------
    list of dict
        One row per loop: the claim, the fraction of runs the anytime audit refutes, its median
        stopping step and canary (over the refuted runs), the median anytime bound, and the
        fraction of runs the end-of-run audit refutes (at step ``steps``, canary ``m``) with its
        median bound.
    """
    import numpy as np
    import torch

    from semi_core._validation import check_int, check_probability
    from semi_core.audit.bounds import epsilon_lower_bound
    from semi_core.integrations.one_run_training import audit_one_run
    from semi_core.sgd.accounting import calibrate_sigma
    from semi_core.sgd.one_run import spread_steps

    runs = check_int(runs, "runs", minimum=1)
    steps = check_int(steps, "steps", minimum=1)
    m = check_int(m, "m", minimum=2 * steps)
    q_true = check_probability(q_true, "q_true", low_open=True, high_open=False)
    q_declared = check_probability(q_declared, "q_declared", low_open=True, high_open=False)
    if not q_declared < q_true:
        raise ValueError(f"q_declared must be < q_true = {q_true}, got {q_declared}")
    seeds = (seed if isinstance(seed, np.random.SeedSequence)
             else np.random.SeedSequence(seed)).spawn(runs)
    sigma_dirac = calibrate_sigma(dirac_epsilon, delta)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    rows = []
    try:
        for bug in BUG_ZOO:
            sampler = bug in ("correct (sampler)", "sample rate misreported")
            q_decl = q_declared if bug == "sample rate misreported" else q_true
            loop, trace = _zoo_loop(bug, m=m, steps=steps,
                                    sigma=sigma_sampler if sampler else sigma_dirac,
                                    q_true=q_true, q_declared=q_decl)
            claimed = loop.epsilon(delta)
            stop_step, stop_canary, any_bound, end_bound = [], [], [], []
            for ss in seeds:
                res = audit_one_run(loop, seed=ss, claimed_epsilon=claimed, delta=delta,
                                    failure_prob=failure_prob, methods=("one-run",))
                if sampler:
                    tau = np.sort(spread_steps(m, steps))    # canary c graded after step tau_c
                    s = np.stack(trace)[tau - 1, np.arange(m)]
                    y = res.member
                    end = epsilon_lower_bound(trace[-1][y], trace[-1][~y], delta=delta,
                                              failure_prob=failure_prob, method="one-run")
                else:
                    order = np.lexsort((np.arange(m), res.taus))  # step, then index
                    s, y, tau = (res.scores["dirac"][order], res.member[order],
                                 res.taus[order])
                    end = res.result("dirac", "one-run")
                audit = AnytimeOneRun(claimed, delta=delta, failure_prob=failure_prob,
                                      n_canaries=m, guess_fraction=guess_fraction)
                for t in range(1, steps + 1):                # one callback per step
                    audit.update(s[tau == t], y[tau == t])
                at = audit.refuted_at
                if at is not None:
                    stop_canary.append(at)
                    stop_step.append(int(tau[at - 1]))
                any_bound.append(audit.epsilon_lower_bound)
                end_bound.append(end.epsilon_lower_bound)
            n_ref = len(stop_step)
            rows.append({
                "loop": bug, "claimed": claimed, "runs": runs, "m": m, "steps": steps,
                "anytime_refuted": n_ref / runs,
                "median_stop_step": float(np.median(stop_step)) if n_ref else "-",
                "median_stop_canary": float(np.median(stop_canary)) if n_ref else "-",
                "median_anytime_bound": float(np.median(any_bound)),
                "end_of_run_refuted": float(np.mean(np.asarray(end_bound) > claimed)),
                "median_end_of_run_bound": float(np.median(end_bound))})
    finally:
        torch.set_num_threads(threads)
    return rows
