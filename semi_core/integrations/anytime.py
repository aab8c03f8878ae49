r"""Audit while you train: a thin adapter from any training loop to :class:`AnytimeOneRun`.

A loop that produces, at some steps, the scores of the canaries graded then (a Dirac canary's
white-box score right after its step, input canaries' losses at a checkpoint) and their labels
calls :class:`AnytimeCallback` with them; it updates the anytime-valid one-run audit
(:mod:`semi_core.audit.anytime_one_run`) and raises :class:`ClaimRefutedError` (or returns
``True``) the moment the claimed :math:`\varepsilon` is refuted, so the run can stop early. The
refutation and :math:`\underline\varepsilon` are valid at every step at once (Ville's
inequality), so stopping on them keeps the guarantee.

* the ``run.record`` path of a user loop: call ``callback(scores, member)`` after recording;
* any ``torch.optim.Optimizer`` (Opacus' ``DPOptimizer`` included):
  ``optimizer.register_step_post_hook(callback.step_hook(score_fn))`` with ``score_fn()``
  returning ``(scores, member)`` of the canaries graded at this step, or ``None``.

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
        if not callable(score_fn):
            raise TypeError("score_fn must be callable: score_fn() -> (scores, member) or None")

        def hook(optimizer, args, kwargs) -> None:
            got = score_fn()
            if got is not None:
                self(*got)

        return hook
