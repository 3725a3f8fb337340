"""The sample engine's face: ``SampleStore`` names exactly what the package provides."""

from __future__ import annotations

import inspect

import correlator.store.tsdb as tsdb
from correlator.store.tsdb import SampleStore


def _members() -> list[str]:
    return [
        name
        for name, value in vars(SampleStore).items()
        if callable(value) and not name.startswith("_")
    ]


def _shape(fn, drop_self: bool) -> list[tuple[str, object, bool]]:
    params = list(inspect.signature(fn).parameters.values())
    if drop_self:
        params = params[1:]
    return [(p.name, p.kind, p.default is inspect.Parameter.empty) for p in params]


def test_every_protocol_member_is_on_the_face_with_its_signature():
    members = _members()
    assert len(members) >= 15, members
    for name in members:
        assert name in tsdb.__all__, f"{name} is in SampleStore but not in __all__"
        provided = getattr(tsdb, name)
        assert _shape(provided, False) == _shape(getattr(SampleStore, name), True), name


def test_the_faces_functions_are_all_in_the_protocol_or_upkeep_helpers():
    functions = {n for n in tsdb.__all__ if inspect.isfunction(getattr(tsdb, n))}
    # Helpers that are not a store's operation: a read's deadline check, the job's schedule.
    helpers = {"check_deadline", "periodic", "run_retention_job"}
    assert functions - helpers == set(_members())


def test_every_name_in_all_exists():
    missing = [name for name in tsdb.__all__ if not hasattr(tsdb, name)]
    assert missing == []
