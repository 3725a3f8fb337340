"""The incident record the store hands out is the one the API's schemas describe."""

from __future__ import annotations

from correlator.api.schemas.incidents import IncidentOut, IncidentSummary, NoteOut
from correlator.records.incident import IncidentRecord, IncidentSummaryRecord, NoteRecord
from correlator.store.engine import write_transaction
from correlator.store.incidents import add_note, get_incident, list_incidents, open_incident


def test_each_record_has_the_fields_of_its_api_body():
    assert set(IncidentSummaryRecord.__required_keys__) == set(IncidentSummary.model_fields)
    assert set(IncidentRecord.__required_keys__) == set(IncidentOut.model_fields)
    assert set(NoteRecord.__required_keys__) == set(NoteOut.model_fields)


def test_the_store_returns_exactly_the_records_keys(engine):
    with write_transaction(engine) as conn:
        found = open_incident(
            conn=conn, sla="p99", severity="page", breach_start=100.0, now=160.0, by="evaluator"
        )
        add_note(conn=conn, incident_id=found, author="ana", team="algo", text="look", now=170.0)
    with engine.connect() as conn:
        whole = get_incident(conn=conn, incident_id=found)
        listed = list_incidents(conn=conn)
    assert whole is not None and set(whole) == set(IncidentRecord.__required_keys__)
    assert set(whole["notes"][0]) == set(NoteRecord.__required_keys__)
    assert [set(i) for i in listed] == [set(IncidentSummaryRecord.__required_keys__)]
    IncidentOut.model_validate(whole)  # and the API takes it as it is
