"""Fixtures for the provider tests: a started fake server per provider name."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.server import FakeServer
from tests.fakes.providers import make_fake


@pytest.fixture
def fake(provider_name: str) -> Iterator[FakeServer]:
    with make_fake(provider_name) as server:
        yield server
    assert not server.problems, server.problems
