"""Adapters that audit third-party DP training code with semi_core's games and bounds.

- :mod:`semi_core.integrations.opacus`: :func:`~semi_core.integrations.opacus.audit_opacus`
  drives Opacus' ``PrivacyEngine`` (optional extra ``semi_core[opacus]``).
- :mod:`semi_core.integrations.training`: :class:`~semi_core.integrations.training.TrainingLoop`
  and :func:`~semi_core.integrations.training.audit_training` audit the user's own DP-SGD
  training function (their model, data, loss, optimizer and step) white-box.
- :mod:`semi_core.integrations.one_run_training`: the same training function trained once with
  ``m`` canaries (:class:`~semi_core.integrations.one_run_training.OneRunLoop`,
  :func:`~semi_core.integrations.one_run_training.audit_one_run`).
- :mod:`semi_core.integrations.checkpoints`: the checkpoints a user saved
  (``semi-core audit-checkpoints``).

Submodules import their third-party library lazily: ``import semi_core.integrations`` never
needs it.
"""

from __future__ import annotations

from semi_core._extras import import_lazily

_EXPORTS = {"audit_opacus": "opacus", "OpacusAuditReport": "opacus",
            "TrainingLoop": "training", "audit_training": "training",
            "OneRunLoop": "one_run_training", "audit_one_run": "one_run_training"}

__all__ = sorted(_EXPORTS)


def __getattr__(name):
    if name in _EXPORTS:
        return getattr(import_lazily(__name__, _EXPORTS[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
