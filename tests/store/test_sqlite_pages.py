"""SQLite page size: a new store gets the store's; a file made before keeps its own and its rows."""

from __future__ import annotations

from collector.schema import Batch, SeriesBatch
from correlator.store import engine as engine_module
from correlator.store.engine import SQLITE_PAGE_SIZE, make_engine
from correlator.store.migrate import upgrade
from correlator.store.tsdb.ingest import store_batch

T0 = 1_700_000_000.0


def _page_size(engine) -> int:
    with engine.connect() as conn:
        return conn.exec_driver_sql("PRAGMA page_size").scalar_one()


def _ingest(engine, start: float) -> int:
    """Store 30 points of two series from ``start``; return the samples stored in all."""
    batch = Batch(
        series=[
            SeriesBatch("gpu_util", {"host": h}, [start + 15 * k for k in range(30)], [0.5] * 30)
            for h in ("a", "b")
        ]
    )
    assert store_batch(engine=engine, batch=batch).inserted == 60
    with engine.connect() as conn:
        return conn.exec_driver_sql("SELECT COUNT(*) FROM samples").scalar_one()


def test_a_new_sqlite_store_gets_the_store_page_size(tmp_path):
    engine = make_engine(f"sqlite:///{tmp_path / 'new.db'}")
    upgrade(engine)
    assert SQLITE_PAGE_SIZE == 16384
    assert _page_size(engine) == SQLITE_PAGE_SIZE
    assert _ingest(engine, T0) == 60
    engine.dispose()


def test_a_store_made_with_other_pages_keeps_them_and_its_rows(tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path / 'old.db'}"
    with monkeypatch.context() as patch:  # as SQLite's default made every store before
        patch.setattr(engine_module, "SQLITE_PAGE_SIZE", 4096)
        old = make_engine(url)
        upgrade(old)
        assert _page_size(old) == 4096
        assert _ingest(old, T0) == 60
        old.dispose()
    engine = make_engine(url)
    upgrade(engine)
    assert _page_size(engine) == 4096
    assert _ingest(engine, T0 + 3600) == 120
    with engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA integrity_check").scalar_one() == "ok"
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar_one() == "wal"
    engine.dispose()
