"""Fixtures of the collector tests: recorded NVML fakes, exposition texts, free ports."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "collector"


@pytest.fixture
def fixtures_dir() -> Path:
    """Return the collector fixture folder."""
    return FIXTURES


def free_port() -> int:
    """Return a TCP port free on loopback right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def port() -> int:
    """Return a free loopback port."""
    return free_port()
