"""breach and token times in milliseconds, as every other time of a record table

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-03 16:00:00.000000

``incidents.breach_start``/``breach_end``, ``recordings.breach_start`` and
``slas.breach_start`` kept float unix seconds; they become integer milliseconds (rounded),
the unit of ``opened_at`` and the rest (``correlator.store.millis.Millis``).
``tokens.created_at`` was written in whole seconds into its integer column: it is scaled to
milliseconds too.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

COLUMNS = {
    "incidents": (("breach_start", False), ("breach_end", True)),
    "recordings": (("breach_start", True),),
    "slas": (("breach_start", True),),
}


def _convert(to_millis: bool) -> None:
    bind = op.get_bind()
    new_type = sa.BigInteger() if to_millis else sa.Double()
    for table, columns in COLUMNS.items():
        for column, nullable in columns:
            scaled = f"ROUND({column} * 1000)" if to_millis else f"{column} / 1000.0"
            if bind.dialect.name == "postgresql":
                op.alter_column(
                    table, column, type_=new_type, postgresql_using=scaled, nullable=nullable
                )
                continue
            op.execute(f"UPDATE {table} SET {column} = {scaled}")
            with op.batch_alter_table(table) as batch:
                batch.alter_column(column, type_=new_type, existing_nullable=nullable)


def upgrade() -> None:
    """Apply this revision: seconds become milliseconds."""
    _convert(to_millis=True)
    op.execute("UPDATE tokens SET created_at = created_at * 1000")


def downgrade() -> None:
    """Revert this revision: milliseconds become seconds again."""
    _convert(to_millis=False)
    op.execute("UPDATE tokens SET created_at = created_at / 1000")
