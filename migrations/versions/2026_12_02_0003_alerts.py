"""alerts: the outbox of chat/Alertmanager messages and silences

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-02 16:10:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""
    op.create_table(
        "alert_outbox",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("dedup_key", sa.String(length=400), nullable=False),
        sa.Column("incident_id", sa.Integer(), nullable=True),
        sa.Column("event", sa.String(length=16), nullable=False),
        sa.Column("channel", sa.String(length=100), nullable=False),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.Column("labels", sa.JSON(), nullable=False),
        sa.Column("top_suspect", sa.String(length=500), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", sa.BigInteger(), nullable=False),
        sa.Column("claimed_by", sa.String(length=200), nullable=False),
        sa.Column("claimed_until", sa.BigInteger(), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("sent_at", sa.BigInteger(), nullable=True),
        sa.Column("refreshed_at", sa.BigInteger(), nullable=True),
        sa.Column("silenced_until", sa.BigInteger(), nullable=True),
        sa.Column("last_error", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("dedup_key"),
    )
    with op.batch_alter_table("alert_outbox", schema=None) as batch_op:
        batch_op.create_index("ix_alert_outbox_incident_id", ["incident_id"], unique=False)
        batch_op.create_index("ix_alert_outbox_due", ["status", "next_attempt_at"], unique=False)
        batch_op.create_index("ix_alert_outbox_channel_sent", ["channel", "sent_at"], unique=False)
    op.create_table(
        "alert_silences",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("matchers", sa.JSON(), nullable=False),
        sa.Column("starts_at", sa.BigInteger(), nullable=False),
        sa.Column("ends_at", sa.BigInteger(), nullable=False),
        sa.Column("comment", sa.Text(), nullable=False),
        sa.Column("author", sa.String(length=200), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("alert_silences", schema=None) as batch_op:
        batch_op.create_index("ix_alert_silences_ends_at", ["ends_at"], unique=False)


def downgrade() -> None:
    """Revert this revision."""
    with op.batch_alter_table("alert_silences", schema=None) as batch_op:
        batch_op.drop_index("ix_alert_silences_ends_at")
    op.drop_table("alert_silences")
    with op.batch_alter_table("alert_outbox", schema=None) as batch_op:
        batch_op.drop_index("ix_alert_outbox_channel_sent")
        batch_op.drop_index("ix_alert_outbox_due")
        batch_op.drop_index("ix_alert_outbox_incident_id")
    op.drop_table("alert_outbox")
