"""partitions: daily RANGE(hour) partitions of samples on PostgreSQL, 1-minute rollups

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-02 16:45:00.000000
"""

import time
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_SAMPLES = (
    "CREATE TABLE samples (hour int4 NOT NULL, series_id int4 NOT NULL, ts int8 NOT NULL, "
    "value float8, CONSTRAINT samples_pkey PRIMARY KEY (hour, series_id, ts))"
)


def upgrade() -> None:
    """Apply this revision."""
    op.create_table(
        "samples_1m",
        sa.Column("hour", sa.Integer(), nullable=False),
        sa.Column("series_id", sa.Integer(), nullable=False),
        sa.Column("ts", sa.BigInteger(), nullable=False),
        sa.Column("min", sa.Double(), nullable=True),
        sa.Column("max", sa.Double(), nullable=True),
        sa.Column("sum", sa.Double(), nullable=True),
        sa.Column("count", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("hour", "series_id", "ts"),
        sqlite_with_rowid=False,
    )
    bind = op.get_bind()
    if bind.dialect.name != "postgresql":
        return
    from correlator.store.tsdb import create_partitions

    op.execute("ALTER TABLE samples RENAME TO samples_unpartitioned")
    op.execute("ALTER INDEX samples_pkey RENAME TO samples_unpartitioned_pkey")
    op.execute(_SAMPLES + " PARTITION BY RANGE (hour)")
    op.execute("CREATE TABLE samples_default PARTITION OF samples DEFAULT")
    days = bind.exec_driver_sql("SELECT DISTINCT hour / 24 FROM samples_unpartitioned").scalars()
    today = int(time.time()) // 86_400
    create_partitions(conn=bind, days=[*days, *range(today, today + 4)])
    op.execute(
        "INSERT INTO samples SELECT hour, series_id, ts, value FROM samples_unpartitioned "
        "ORDER BY hour, series_id, ts"
    )
    op.execute("DROP TABLE samples_unpartitioned")


def downgrade() -> None:
    """Revert this revision."""
    op.drop_table("samples_1m")
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute("ALTER TABLE samples RENAME TO samples_partitioned")
    op.execute("ALTER INDEX samples_pkey RENAME TO samples_partitioned_pkey")
    op.execute(_SAMPLES)
    op.execute(
        "INSERT INTO samples SELECT hour, series_id, ts, value FROM samples_partitioned "
        "ORDER BY hour, series_id, ts"
    )
    op.execute("DROP TABLE samples_partitioned CASCADE")
