"""Every JSON route declares a response model, and /openapi.json shows its schema."""

from __future__ import annotations

import typing

from fastapi.routing import APIRoute
from fastapi.testclient import TestClient
from pydantic import BaseModel

from correlator.api.app import create_app
from correlator.api.schemas.base import Number, Ordered, Out
from correlator.settings import ServiceSettings

# Routes without a response model, and why. Anything else that answers JSON must declare one.
NO_MODEL = {
    # No body: 204.
    ("DELETE", "/api/v1/slas/{name}"): "204, no body",
    ("DELETE", "/api/v1/alerts/silences/{silence_id}"): "204, no body",
    # Not JSON.
    ("GET", "/api/v1/incidents/{incident_id}/review"): "Markdown (PlainTextResponse)",
    ("GET", "/metrics"): "Prometheus text exposition",
    ("POST", "/v1/metrics"): "OTLP ExportMetricsServiceResponse, protobuf or its JSON mapping",
    ("GET", "/docs"): "Swagger UI page (fastapi-offline)",
    ("GET", "/docs/oauth2-redirect"): "Swagger UI page (fastapi-offline)",
    ("GET", "/redoc"): "ReDoc page (fastapi-offline)",
    ("GET", "/api/v1/act/{token}"): "HTML page: what a chat action's link will do",
    ("POST", "/api/v1/act/{token}"): "HTML page: what the chat action did",
    # Prometheus' own documents, built as bytes and only documented (routes/promql.py).
    ("GET", "/api/v1/query"): "PromQL answer in Prometheus' shape",
    ("POST", "/api/v1/query"): "PromQL answer in Prometheus' shape",
    ("GET", "/api/v1/query_range"): "Prometheus matrix (store read) or PromQL answer",
    ("POST", "/api/v1/query_range"): "PromQL answer in Prometheus' shape",
}
# Of those, the ones whose JSON body /openapi.json still describes (``responses=``).
DOCUMENTED = {
    ("GET", "/api/v1/query"),
    ("POST", "/api/v1/query"),
    ("GET", "/api/v1/query_range"),
    ("POST", "/api/v1/query_range"),
}


def _api_routes(routes) -> list[APIRoute]:
    """Return the app's APIRoutes, looking into included routers wherever FastAPI nests them."""
    found: list[APIRoute] = []
    for route in routes:
        if isinstance(route, APIRoute):
            found.append(route)
        nested = getattr(route, "original_router", None)  # FastAPI's _IncludedRouter
        if nested is not None:
            found += _api_routes(nested.routes)
    return found


def _operations(app) -> dict[tuple[str, str], APIRoute]:
    return {(m, r.path): r for r in _api_routes(app.routes) for m in sorted(r.methods or ())}


def _model_of(annotation) -> type[BaseModel] | None:
    """Return the pydantic model a response model is, or lists; None for dict, Any and such."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if typing.get_origin(annotation) is list:
        (item,) = typing.get_args(annotation)
        return _model_of(item)
    return None


def _app():
    return create_app(ServiceSettings(database_url="sqlite://"))


def test_every_json_route_declares_a_model():
    ops = _operations(_app())
    assert len(ops) > 50, "the route walk found too few routes"
    missing = [
        f"{m} {p}: {r.response_model!r}"
        for (m, p), r in ops.items()
        if (m, p) not in NO_MODEL and _model_of(r.response_model) is None
    ]
    assert not missing, "routes answering JSON without a response model:\n" + "\n".join(missing)
    stale = sorted(set(NO_MODEL) - set(ops))
    assert not stale, f"NO_MODEL names routes that no longer exist: {stale}"
    modelled = sorted(k for k in NO_MODEL if _model_of(ops[k].response_model) is not None)
    assert not modelled, f"routes in NO_MODEL that now have a model: {modelled}"


def test_store_bodies_leave_out_what_the_handler_left_out():
    # An Out model's optional field reads null unless the route excludes unset fields.
    loose = [
        f"{m} {p}"
        for (m, p), r in _operations(_app()).items()
        if (model := _model_of(r.response_model)) is not None
        and issubclass(model, Out)
        and not r.response_model_exclude_unset
    ]
    assert not loose, "set response_model_exclude_unset=True on:\n" + "\n".join(loose)


def test_openapi_lists_a_schema_for_each_json_route():
    app = _app()
    with TestClient(app) as client:
        doc = client.get("/openapi.json").json()
    components = doc["components"]["schemas"]
    for (method, path), route in _operations(app).items():
        model = _model_of(route.response_model)
        if model is None and (method, path) not in DOCUMENTED:
            continue
        status = str(route.status_code or 200)
        schema = doc["paths"][path][method.lower()]["responses"][status]["content"][
            "application/json"
        ]["schema"]
        ref = schema.get("items", schema).get("$ref", "")
        name = ref.rpartition("/")[2]
        assert ref.startswith("#/components/schemas/") and name in components, (method, path)
        if model is not None:
            assert name == model.__name__, (method, path, name)
            assert components[name]["properties"], (method, path)


class _Thing(Out):
    name: str
    size: Number
    note: str | None = None


class _Shuffled(_Thing, Ordered):
    pass


def test_a_body_keeps_its_keys_and_numbers():
    given = {"name": "x", "size": 3, "extra": {"a": [1]}}
    body = _Thing.model_validate(given).model_dump_json(exclude_unset=True)
    assert body == '{"name":"x","size":3,"extra":{"a":[1]}}'  # no "note": null added
    again = _Thing.model_validate({"name": "y", "size": 3.0}).model_dump_json()
    assert again == '{"name":"y","size":3.0,"note":null}'


def test_an_ordered_body_keeps_the_handlers_key_order():
    given = {"size": 3, "extra": {"a": [1]}, "name": "x"}
    body = _Shuffled.model_validate(given).model_dump_json()
    assert body == '{"size":3,"extra":{"a":[1]},"name":"x"}'


def test_number_is_documented_as_a_json_number():
    assert _Thing.model_json_schema()["properties"]["size"]["type"] == "number"
