"""sample chunks: compressed per-series chunks of samples older than the head

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-03 13:00:00.000000

The table starts empty: the compaction job (or ``causeline db compact``, with progress and
safe to stop and rerun) moves existing raw samples into chunks one hour at a time.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""
    op.create_table(
        "sample_chunks",
        sa.Column("series_id", sa.Integer(), nullable=False),
        sa.Column("hour", sa.Integer(), nullable=False),
        sa.Column("end_hour", sa.Integer(), nullable=False),
        sa.Column("first_ts", sa.BigInteger(), nullable=False),
        sa.Column("last_ts", sa.BigInteger(), nullable=False),
        sa.Column("n_samples", sa.Integer(), nullable=False),
        sa.Column("ts", sa.LargeBinary(), nullable=False),
        sa.Column("value", sa.LargeBinary(), nullable=False),
        sa.PrimaryKeyConstraint("series_id", "hour"),
        # A rowid table on SQLite: WITHOUT ROWID keeps rows over about 1 kB in overflow
        # pages, a whole 4 kB page for a chunk's last bytes.
    )
    op.create_index("ix_sample_chunks_hour", "sample_chunks", ["hour"])
    if op.get_bind().dialect.name == "postgresql":
        # pcodec output does not compress further: skip TOAST's futile pglz attempt.
        op.execute("ALTER TABLE sample_chunks ALTER COLUMN ts SET STORAGE EXTERNAL")
        op.execute("ALTER TABLE sample_chunks ALTER COLUMN value SET STORAGE EXTERNAL")


def downgrade() -> None:
    """Revert this revision (chunked samples are lost: run without compaction first)."""
    op.drop_index("ix_sample_chunks_hour", table_name="sample_chunks")
    op.drop_table("sample_chunks")
