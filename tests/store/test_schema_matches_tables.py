"""The schema the migrations build is the one tables.py declares, on both engines."""

from __future__ import annotations

import re

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from correlator.store.tables import Base

# Daily partitions of ``samples`` on PostgreSQL are made at run time (store/tsdb/partitions.py).
PARTITION = re.compile(r"samples_(p\d{8}|default)$")


def _declared_or_migrated(obj, name, type_, reflected, compare_to) -> bool:
    return not (type_ == "table" and reflected and PARTITION.match(name or ""))


def test_migrated_schema_equals_the_declared_tables(engine):
    with engine.connect() as conn:
        ctx = MigrationContext.configure(
            conn,
            opts={"include_object": _declared_or_migrated, "compare_type": True},
        )
        diff = compare_metadata(ctx, Base.metadata)
    assert diff == [], "\n".join(map(str, diff))
