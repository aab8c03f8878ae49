"""Adapters that audit third-party DP training code with semi_core's games and bounds.

- :mod:`semi_core.integrations.opacus`: :func:`~semi_core.integrations.opacus.audit_opacus`
  drives Opacus' ``PrivacyEngine`` (optional extra ``semi_core[opacus]``).

Submodules import their third-party library lazily: ``import semi_core.integrations`` never
needs it.
"""

from __future__ import annotations

import importlib

_EXPORTS = {"audit_opacus": "opacus", "OpacusAuditReport": "opacus"}

__all__ = sorted(_EXPORTS)


def __getattr__(name):
    if name in _EXPORTS:
        return getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
