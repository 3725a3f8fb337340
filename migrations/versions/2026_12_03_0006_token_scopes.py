"""token scopes; a revoked token's name can be used again

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-03 03:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# SQLite keeps the initial schema's unique constraint on tokens.name unnamed; this names it.
NAMES = {"uq": "uq_%(table_name)s_%(column_0_name)s"}
ACTIVE = sa.text("NOT revoked")


def _name_constraint(bind) -> str:
    for uc in sa.inspect(bind).get_unique_constraints("tokens"):
        if uc["column_names"] == ["name"]:
            return uc["name"]
    raise RuntimeError("tokens has no unique constraint on name")


def upgrade() -> None:
    """Apply this revision: existing tokens become admin tokens, names unique among active."""
    scope = sa.Column("scope", sa.String(length=16), nullable=False, server_default="admin")
    bind = op.get_bind()
    if bind.dialect.name == "sqlite":
        with op.batch_alter_table("tokens", naming_convention=NAMES) as batch:
            batch.drop_constraint("uq_tokens_name", type_="unique")
            batch.add_column(scope)
    else:
        op.drop_constraint(_name_constraint(bind), "tokens", type_="unique")
        op.add_column("tokens", scope)
    op.create_index(
        "uq_tokens_active_name",
        "tokens",
        ["name"],
        unique=True,
        sqlite_where=ACTIVE,
        postgresql_where=ACTIVE,
    )


def downgrade() -> None:
    """Revert this revision (fails while a revoked and an active token share a name)."""
    op.drop_index("uq_tokens_active_name", table_name="tokens")
    with op.batch_alter_table("tokens") as batch:
        batch.drop_column("scope")
        batch.create_unique_constraint("uq_tokens_name", ["name"])
