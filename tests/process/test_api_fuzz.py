"""Property-based runs over the OpenAPI schema: no generated request gets a 5xx."""

from __future__ import annotations

import schemathesis
from hypothesis import HealthCheck, given, settings

EXAMPLES = 12
# The routers of the shared process (this package's features).
PROCESS_TAGS = {"changes", "hooks", "models", "slas", "incidents", "oncall", "capacity", "catalog"}


def _fuzz(client, keep) -> tuple[int, list[str]]:
    schema = schemathesis.openapi.from_asgi("/openapi.json", client.app)
    auth = {"Authorization": client.headers["Authorization"]}
    failures: list[str] = []
    seen = 0
    for result in schema.get_all_operations():
        operation = result.ok()
        if not keep(set(operation.tags or [])):
            continue
        seen += 1

        @given(case=operation.as_strategy())
        @settings(
            max_examples=EXAMPLES,
            deadline=None,
            derandomize=True,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        def run(case):
            try:
                resp = case.call(headers=auth)
            except Exception as exc:  # the test client re-raises server errors
                failures.append(f"{case.method} {case.formatted_path}: {exc!r:.200}")
                return
            if resp.status_code >= 500:
                failures.append(
                    f"{case.method} {case.formatted_path} {case.query} {case.body!r:.200}"
                    f" -> {resp.status_code} {resp.text[:200]}"
                )

        run()
    return seen, sorted(set(failures))


def test_process_operations_never_answer_5xx(client):
    seen, failures = _fuzz(client, lambda tags: bool(tags & PROCESS_TAGS))
    assert seen >= 25
    assert not failures, "\n".join(failures[:20])


def test_whole_schema_never_answers_5xx(client):
    seen, failures = _fuzz(client, lambda tags: not tags & PROCESS_TAGS)
    assert not failures, "\n".join(failures[:20])
