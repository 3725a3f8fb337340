"""One time unit at the store boundary: seconds in Python, integer milliseconds stored."""

from __future__ import annotations

from alembic import command
from sqlalchemy import text

from correlator.store.changes import add_change, get_change, upsert_changes
from correlator.store.engine import write_transaction
from correlator.store.incidents import get_incident, open_incident, resolve_incident
from correlator.store.migrate import alembic_config, upgrade
from correlator.store.slas import get_sla, upsert_sla
from correlator.store.tokens import create_token, list_tokens
from tests.helpers import engine_at

NOW = 1_700_000_123.4567


def _raw(conn, sql: str) -> list[tuple]:
    return [tuple(r) for r in conn.execute(text(sql))]


def test_record_times_are_stored_as_milliseconds_and_read_as_seconds(engine):
    with write_transaction(engine) as conn:
        created = add_change(
            conn=conn,
            change={"id": "c1", "kind": "deploy", "owner": "algo", "ts": NOW, "planned_ts": 5.0},
            now=NOW,
        )
        incident = open_incident(
            conn=conn, sla="s", severity="major", breach_start=NOW - 60.25, now=NOW, by="t"
        )
        resolve_incident(conn=conn, incident_id=incident, now=NOW + 1, by="t", breach_end=NOW)
    with engine.connect() as conn:
        assert _raw(conn, "SELECT ts, planned_ts, registered_at FROM changes") == [
            (1_700_000_123_457, 5000, 1_700_000_123_457)
        ]
        assert _raw(conn, "SELECT breach_start, breach_end, opened_at FROM incidents") == [
            (1_700_000_063_207, 1_700_000_123_457, 1_700_000_123_457)
        ]
        stored = get_change(conn=conn, change_id="c1")
        got = get_incident(conn=conn, incident_id=incident)
    # What a write returns is what a later read gives: both to the millisecond.
    assert created == stored
    assert stored["ts"] == stored["registered_at"] == 1_700_000_123.457
    assert stored["planned_ts"] == 5.0 and stored["unplanned"] is True
    assert (got["breach_start"], got["breach_end"]) == (1_700_000_063.207, 1_700_000_123.457)
    assert got["resolved_at"] == 1_700_000_124.457


def test_whole_seconds_stay_whole_in_the_bundle_form(engine):
    with write_transaction(engine) as conn:
        upsert_changes(conn=conn, changes=[{"id": "c", "kind": "config", "ts": 1_700_000_000}])
        upsert_sla(conn=conn, sla={"name": "s", "metric": "m", "breach_start": 1_700_000_000})
    with engine.connect() as conn:
        change = get_change(conn=conn, change_id="c")
        sla = get_sla(conn=conn, name="s")
    assert change["ts"] == 1_700_000_000 and isinstance(change["ts"], int)
    assert sla["breach_start"] == 1_700_000_000 and isinstance(sla["breach_start"], int)


def test_the_migration_turns_stored_seconds_into_milliseconds_and_back(db_url):
    with engine_at(db_url, "0008") as eng:
        with eng.begin() as conn:
            conn.execute(
                text(
                    "INSERT INTO incidents (sla, status, severity, breach_start, breach_end, "
                    "opened_at, opened_by, snapshot) VALUES ('s', 'open', 'major', "
                    "1700000000.25, NULL, 1700000001000, '', '{}')"
                )
            )
            conn.execute(
                text(
                    "INSERT INTO slas (name, metric, labels, aggregate, for_seconds, "
                    "breach_start, extra) VALUES ('s', 'm', '{}', 'max', 0, 1700000000.5, '{}')"
                )
            )
            conn.execute(
                text(
                    "INSERT INTO tokens (name, token_hash, created_at, revoked, scope) "
                    "VALUES ('t', 'h', 1700000002, false, 'admin')"
                )
            )
        upgrade(eng)
        with eng.connect() as conn:
            assert _raw(conn, "SELECT breach_start, breach_end FROM incidents") == [
                (1_700_000_000_250, None)
            ]
            assert get_incident(conn=conn, incident_id=1)["breach_start"] == 1_700_000_000.25
            assert get_sla(conn=conn, name="s")["breach_start"] == 1_700_000_000.5
            assert list_tokens(conn=conn)[0]["created_at"] == 1_700_000_002.0
        cfg = alembic_config(db_url)
        with eng.begin() as conn:
            cfg.attributes["connection"] = conn
            command.downgrade(cfg, "0008")
        with eng.connect() as conn:
            assert _raw(conn, "SELECT breach_start FROM incidents") == [(1_700_000_000.25,)]
            assert _raw(conn, "SELECT created_at FROM tokens") == [(1_700_000_002,)]


def test_a_new_token_records_its_creation_time_in_milliseconds(engine):
    with write_transaction(engine) as conn:
        create_token(conn=conn, name="ci")
    with engine.connect() as conn:
        (stored,) = _raw(conn, "SELECT created_at FROM tokens")[0]
        listed = list_tokens(conn=conn)[0]["created_at"]
    assert stored > 1e12  # milliseconds: it was whole seconds before
    assert listed == stored / 1000
