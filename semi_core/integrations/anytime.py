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
