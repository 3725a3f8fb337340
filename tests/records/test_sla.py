"""One SLA record: the bundle reader, the CLI, the store and the API check the same fields."""

from __future__ import annotations

import pytest

from correlator.api.schemas.slas import SlaBase, SlaIn
from correlator.bundle import BundleError, check_sla
from correlator.records.sla import RULE_FIELDS, SlaRule, rule_problem
from correlator.store.engine import make_engine, write_transaction
from correlator.store.migrate import upgrade
from correlator.store.slas import SLA_FIELDS, get_sla, upsert_sla
from correlator.store.tables import Sla

GOOD = {"name": "p99", "metric": "model_latency_p99_ms", "op": ">", "threshold": 50}


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"aggregate": "p99"}, "aggregate"),
        ({"op": "above"}, "op"),
        ({"threshold": 1e16}, "threshold"),
        ({"threshold": "5"}, "threshold"),
        ({"for_seconds": -1}, "for_seconds"),
        ({"breach_start": 1e12}, "breach_start"),
        ({"metric": ""}, "metric"),
        ({"metric": "m" * 201}, "metric"),
    ],
)
def test_a_bad_field_is_refused_by_the_bundle_reader_and_the_api_alike(change, field):
    sla = GOOD | change
    assert rule_problem(sla).startswith(f"'{field}'")
    with pytest.raises(BundleError, match=f"sla.json: '{field}'"):
        check_sla(sla, "sla.json")
    if change != {"threshold": "5"}:  # the API reads JSON leniently: "5" is 5 there
        with pytest.raises(ValueError, match=field):
            SlaIn(**sla)


def test_a_declared_breach_needs_no_condition_and_a_condition_needs_both_parts():
    declared = {"name": "n", "metric": "m", "breach_start": 1_700_000_000}
    assert check_sla(declared, "sla.json") is declared
    with pytest.raises(BundleError, match="'threshold' must be a number"):
        check_sla({"name": "n", "metric": "m", "op": ">"}, "sla.json")
    with pytest.raises(BundleError, match="'op' must be"):
        check_sla({"name": "n", "metric": "m", "breach_start": None}, "sla.json")
    # Fields beyond the record pass through, as FORMAT.md allows.
    assert check_sla(GOOD | {"team_note": [1, 2]}, "sla.json")["team_note"] == [1, 2]


def test_the_store_and_the_api_take_their_fields_from_the_record(tmp_path):
    assert set(SLA_FIELDS) <= set(Sla.__table__.columns.keys())  # a column for each
    assert issubclass(SlaBase, SlaRule)
    # Every field of the record goes into the store and comes back the same.
    every = GOOD | {"labels": {"model": "m"}, "aggregate": "mean", "for_seconds": 30}
    every |= {"breach_start": 1_700_000_000.5}
    assert set(every) == set(SLA_FIELDS)
    engine = make_engine(f"sqlite:///{tmp_path / 'slas.db'}")
    try:
        upgrade(engine)
        with write_transaction(engine) as conn:
            upsert_sla(conn=conn, sla=every)
        with engine.connect() as conn:
            assert get_sla(conn=conn, name="p99") == every
    finally:
        engine.dispose()
    assert RULE_FIELDS == (
        "metric",
        "labels",
        "aggregate",
        "op",
        "threshold",
        "for_seconds",
        "breach_start",
    )
