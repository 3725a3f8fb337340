"""recordings: imported incident windows, declared breaches and baselines

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-03 02:30:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""
    op.create_table(
        "recordings",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("sla", sa.String(length=200), nullable=False),
        sa.Column("start", sa.BigInteger(), nullable=False),
        sa.Column("end", sa.BigInteger(), nullable=False),
        sa.Column("breach_start", sa.Double(), nullable=True),
        sa.Column("source", sa.String(length=500), nullable=False),
        sa.Column("imported_at", sa.BigInteger(), nullable=False),
        sa.Column("baseline", sa.LargeBinary(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("sla", "start", "end", name="uq_recordings_window"),
    )
    op.create_index("ix_recordings_sla", "recordings", ["sla"])


def downgrade() -> None:
    """Revert this revision."""
    op.drop_index("ix_recordings_sla", table_name="recordings")
    op.drop_table("recordings")
