"""incidents: who acknowledged an incident, and when

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-06 03:20:00.000000

Two nullable columns; incidents stored before stay unacknowledged.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""
    op.add_column("incidents", sa.Column("acknowledged_at", sa.BigInteger(), nullable=True))
    op.add_column("incidents", sa.Column("acknowledged_by", sa.String(200), nullable=True))


def downgrade() -> None:
    """Revert this revision."""
    with op.batch_alter_table("incidents") as batch:
        batch.drop_column("acknowledged_by")
        batch.drop_column("acknowledged_at")
