"""Small helpers shared by test modules."""

from __future__ import annotations

import socket

from sqlalchemy import Engine, text

# Headless Chromium as the tests and benchmarks run it; without the background-networking
# flags it keeps trying hosts this machine cannot reach.
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--window-size=1400,1000",
)


def free_port() -> int:
    """Return a free TCP port on loopback."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def count_rows(engine: Engine, table: str = "samples") -> int:
    """Return the number of rows in a table."""
    with engine.connect() as conn:
        return conn.execute(text(f"SELECT COUNT(*) FROM {table}")).scalar_one()


def make_batch(
    n_series: int = 3,
    n_points: int = 5,
    t0: float = 1_700_000_000.0,
    step: float = 15.0,
    name: str = "gpu_utilization_percent",
) -> dict:
    """Return a wire-form batch of deterministic samples."""
    return {
        "series": [
            {
                "name": name,
                "labels": {"host": f"h{i}", "gpu": "0"},
                "timestamps": [t0 + k * step for k in range(n_points)],
                "values": [float(i * 100 + k) for k in range(n_points)],
            }
            for i in range(n_series)
        ]
    }
