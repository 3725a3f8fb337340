"""Fixtures of the collector tests: recorded NVML fakes, exposition texts, free ports."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import free_port

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "collector"


@pytest.fixture
def fixtures_dir() -> Path:
    """Return the collector fixture folder."""
    return FIXTURES


@pytest.fixture
def port() -> int:
    """Return a free loopback port."""
    return free_port()
