"""sample runs: a row per series per fresh batch and hour, beside keyed samples

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-05 02:30:00.000000

The table starts empty and nothing is converted: stored samples stay keyed rows or chunks,
and ingest writes runs of fresh samples from now on (``correlator.store.tsdb.head``). Going back
first needs a compaction of the runs' hours (``causeline db compact``), or they are lost.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""
    op.create_table(
        "sample_runs",
        sa.Column("hour", sa.Integer(), nullable=False),
        sa.Column("series_id", sa.Integer(), nullable=False),
        sa.Column("first_ts", sa.BigInteger(), nullable=False),
        sa.Column("last_ts", sa.BigInteger(), nullable=False),
        sa.Column("n_samples", sa.Integer(), nullable=False),
        sa.Column("ts", sa.LargeBinary(), nullable=False),
        sa.Column("value", sa.LargeBinary(), nullable=False),
        sa.PrimaryKeyConstraint("hour", "series_id", "first_ts"),
        # One b-tree on SQLite: a run (at most runs.RUN_MAX samples) fits in its page.
        sqlite_with_rowid=False,
    )


def downgrade() -> None:
    """Revert this revision (samples still in runs are lost: compact their hours first)."""
    op.drop_table("sample_runs")
