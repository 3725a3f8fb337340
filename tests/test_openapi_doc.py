"""docs/openapi.json is the API reference: it must match what the service serves."""

from __future__ import annotations

from pathlib import Path

from causeline.commands.openapi import openapi_text

DOC = Path(__file__).resolve().parents[1] / "docs" / "openapi.json"


def test_docs_openapi_is_current():
    assert DOC.read_text(encoding="utf-8") == openapi_text(), (
        "docs/openapi.json is stale: run `causeline openapi -o docs/openapi.json`"
    )
