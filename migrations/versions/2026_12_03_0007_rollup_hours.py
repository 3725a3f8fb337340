"""rollup hours: which hours of raw samples samples_1m answers for

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-03 10:00:00.000000

Rollups written before this revision came from retention, which dropped their raw samples:
their hours start EXPIRED. The rollup job catches up on the rest, a bounded number per pass.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# tsdb.rollup_state's EXPIRED and EXPIRED_LATE, fixed here as this revision wrote them
EXPIRED, EXPIRED_LATE = 2, 3


def upgrade() -> None:
    """Apply this revision."""
    table = op.create_table(
        "samples_1m_hours",
        sa.Column("hour", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("state", sa.SmallInteger(), nullable=False),
        sa.PrimaryKeyConstraint("hour"),
    )
    bind = op.get_bind()
    bounds = bind.exec_driver_sql("SELECT MIN(hour), MAX(hour) FROM samples_1m").first()
    if bounds is None or bounds[0] is None:
        return
    first, last = bounds
    # Raw samples there came after retention dropped the hour; retention merges them later.
    late = set(
        bind.exec_driver_sql(
            f"SELECT DISTINCT hour FROM samples WHERE hour BETWEEN {first} AND {last}"
        ).scalars()
    )
    rows = [
        {"hour": h, "state": EXPIRED_LATE if h in late else EXPIRED} for h in range(first, last + 1)
    ]
    op.bulk_insert(table, rows)


def downgrade() -> None:
    """Revert this revision."""
    op.drop_table("samples_1m_hours")
