"""Fixtures of the real-CLI tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.realcli.harness import World, private_world


@pytest.fixture
def world() -> Iterator[World]:
    """One private world (home, git project, real daemon) for one test."""
    with private_world() as w:
        yield w
