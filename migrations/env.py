"""Alembic environment: runs migrations on the connection or URL the caller gives."""

from alembic import context

from correlator.store.engine import make_engine
from correlator.store.tables import Base

config = context.config
target_metadata = Base.metadata


def run_migrations_online() -> None:
    """Run migrations on a given connection, or on an engine made from the configured URL."""
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    engine = make_engine(config.get_main_option("sqlalchemy.url"))
    with engine.connect() as conn:
        _run(conn)
    engine.dispose()


def _run(connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    raise SystemExit("causeline migrations run online only: use `causeline db upgrade`")
run_migrations_online()
