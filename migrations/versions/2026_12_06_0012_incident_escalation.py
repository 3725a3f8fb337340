"""incidents: whom an incident is with, how often it was escalated, and its snooze

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-06 05:20:00.000000

Nullable columns and a count that starts at 0; incidents stored before stay unassigned,
never escalated and not snoozed.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""
    op.add_column("incidents", sa.Column("assignee", sa.String(200), nullable=True))
    op.add_column(
        "incidents", sa.Column("escalations", sa.Integer(), nullable=False, server_default="0")
    )
    op.add_column("incidents", sa.Column("escalated_at", sa.BigInteger(), nullable=True))
    op.add_column("incidents", sa.Column("snoozed_until", sa.BigInteger(), nullable=True))


def downgrade() -> None:
    """Revert this revision."""
    with op.batch_alter_table("incidents") as batch:
        batch.drop_column("snoozed_until")
        batch.drop_column("escalated_at")
        batch.drop_column("escalations")
        batch.drop_column("assignee")
