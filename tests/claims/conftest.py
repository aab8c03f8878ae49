"""Fixtures of the claims tests: every verdict, computed once per session."""

from __future__ import annotations

import pytest

from semi_core.claims import verify


@pytest.fixture(scope="session")
def results():
    """``{claim id: ClaimResult}`` of every registered claim (quick sizes, seed 0)."""
    return {r.id: r for r in verify()}


@pytest.fixture
def cli_main(monkeypatch):
    """``semi_core.cli.main`` with only this subcommand registered (others are optional here)."""
    import semi_core.cli as cli

    monkeypatch.setattr(cli, "COMMAND_MODULES", ["verify"])
    return cli.main
