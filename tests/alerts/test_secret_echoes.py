"""A receiver echoing a channel's secret in any encoding never gets a piece of it served."""

from __future__ import annotations

import json
from urllib.parse import quote, unquote

import pytest
from fastapi.testclient import TestClient

from correlator.alerts.masking import scrub, scrub_cut
from correlator.alerts.outbox import enqueue_incident_event
from correlator.alerts.worker import OutboxWorker
from correlator.api.app import create_app
from correlator.store.engine import write_transaction
from correlator.store.tables import AlertOutbox
from correlator.store.tokens import create_token
from tests.alerts.conftest import alert_settings, store_incident
from tests.alerts.receiver import Receiver

PATH = "/hooks/T0AbCdEf/B1GhIjKl/Zx9Yw8Vu7Ts6Rq5Po4"
QUERY = "sig=Mn3Lk2Jh1Gf0Dd9Ss8"
SIGNING = "SEC7f3a9b2c4d5e6f708192a3b4c5d6e7f8"
BEARER = "tok-9Qp8Wo7Ei6Ru5Ty4"
PIECE = 8


def _json_slashes(s: str) -> str:
    return json.dumps(s)[1:-1].replace("/", "\\/")


ECHOES = {
    "json-escaped": lambda s: _json_slashes(s),
    "unicode-escaped": lambda s: s.replace("/", "\\u002F").replace("=", "\\u003d"),
    "percent-encoded": lambda s: quote(s, safe=""),
    "percent-encoded twice": lambda s: quote(quote(s, safe=""), safe=""),
    "upper-cased": str.upper,
    "lower-cased": str.lower,
    "html entities": lambda s: s.replace("/", "&#x2F;").replace("=", "&#61;"),
    "prefix": lambda s: s[: len(s) // 2],
    "middle": lambda s: s[3:15],
}


def _decoded(text: str) -> str:
    """Return text with every encoding an echo might use undone, lower-cased."""
    for _ in range(3):
        text = unquote(text.replace("\\/", "/").replace("\\u002F", "/").replace("\\u003d", "="))
        text = text.replace("&#x2F;", "/").replace("&#61;", "=")
    return text.lower()


def _leaks(served: str, *secrets: str) -> list[str]:
    """Return every piece of 8 characters of a secret found in the served text, decoded."""
    plain = _decoded(served)
    return [
        s[i : i + PIECE]
        for s in secrets
        for i in range(len(s) - PIECE + 1)
        if s[i : i + PIECE].lower() in plain
    ]


@pytest.mark.parametrize("form", list(ECHOES))
@pytest.mark.parametrize("secret", ["path", "query", "signing", "bearer"])
def test_scrub_masks_every_encoding_of_a_secret(form, secret):
    url = f"https://hooks.example.com{PATH}?{QUERY}"
    value = {"path": PATH, "query": QUERY, "signing": SIGNING, "bearer": BEARER}[secret]
    echo = ECHOES[form](value)
    text = f'{{"error": "bad request: [{echo}]", "code": 7}}'
    out = scrub(text, url, SIGNING, f"Bearer {BEARER}", BEARER)
    piece = value if form not in ("prefix", "middle") else echo
    assert not _leaks(out, piece), out
    assert out == '{"error": "bad request: [****]", "code": 7}'


def test_scrub_keeps_the_host_and_ordinary_words():
    url = f"https://hooks.example.com{PATH}?{QUERY}"
    text = f"POST https://hooks.example.com{_json_slashes(PATH)} refused: invalid_token"
    assert scrub(text, url) == "POST https://hooks.example.com**** refused: invalid_token"


@pytest.mark.parametrize("cut", [3, 5, 7, 9, 20])
def test_a_cut_through_an_encoded_secret_leaves_no_piece(cut):
    encoded = quote(SIGNING.lower(), safe="")
    text = "answer: " + encoded
    out = scrub_cut(text, len("answer: ") + cut, SIGNING)
    assert out.startswith("answer: ") and not out[len("answer: ") :].strip("*")


def test_tokens_that_are_no_channel_secret_are_masked_too():
    text = '{"error": "signature mismatch", "request": "c2VjcmV0LWtleS0xMjM0NTY3ODkw"}'
    out = scrub_cut(text, 1000, SIGNING)
    assert out == '{"error": "signature mismatch", "request": "****"}'


def _echo_all(path, query, headers, body):
    """Answer 400 with the URL, query and Authorization echoed in several encodings."""
    got = path + "?" + "&".join(f"{k}={v}" for k, v in query.items())
    auth = headers.get("Authorization", "")
    parts = [ECHOES[f](got) for f in ECHOES] + [ECHOES[f](auth) for f in ECHOES]
    return 400, {"error": " | ".join(parts)}


def test_served_outbox_holds_no_piece_of_any_echo(engine):
    receiver = Receiver(_echo_all).start()
    try:
        channel = {
            "name": "hook",
            "kind": "webhook",
            "url": f"{receiver.url}{PATH}?{QUERY}",
            "secret": SIGNING,
            "headers": {"Authorization": f"Bearer {BEARER}"},
        }
        settings = alert_settings(engine, [channel], alert_max_attempts=1)
        incident = store_incident(engine)
        with write_transaction(engine) as conn:
            enqueue_incident_event(conn=conn, incident=incident, event="opened", settings=settings)
            writer = create_token(conn=conn, name="w", scope="write")
        assert OutboxWorker(engine, settings, holder="w1").run_once()["failed"] == 1
        with TestClient(create_app(settings, engine=engine)) as c:
            resp = c.get("/api/v1/alerts/outbox", headers={"Authorization": f"Bearer {writer}"})
        assert resp.status_code == 200
        (row,) = resp.json()
        assert row["last_error"].startswith("HTTP 400 (request refused): ")
        assert not _leaks(resp.text, PATH.strip("/"), QUERY, SIGNING, BEARER)
        assert not _leaks(row["last_error"], PATH.strip("/"), QUERY, SIGNING, BEARER)
    finally:
        receiver.stop()


def test_an_error_stored_before_scrubbing_is_scrubbed_when_served(engine):
    channel = {"name": "hook", "kind": "webhook", "url": f"https://hooks.example.com{PATH}"}
    settings = alert_settings(engine, [channel], alert_max_attempts=1)
    incident = store_incident(engine)
    with write_transaction(engine) as conn:
        enqueue_incident_event(conn=conn, incident=incident, event="opened", settings=settings)
        conn.execute(
            AlertOutbox.__table__.update().values(
                status="failed", last_error=f"HTTP 404: no hook {quote(PATH, safe='')}"
            )
        )
        writer = create_token(conn=conn, name="w", scope="write")
    with TestClient(create_app(settings, engine=engine)) as c:
        resp = c.get("/api/v1/alerts/outbox", headers={"Authorization": f"Bearer {writer}"})
    assert resp.json()[0]["last_error"] == "HTTP 404: no hook ****"
    with engine.connect() as conn:  # what is stored stays as it was
        stored = conn.exec_driver_sql("SELECT last_error FROM alert_outbox").scalar_one()
    assert quote(PATH, safe="") in stored


def test_outbox_needs_a_write_token(engine):
    settings = alert_settings(engine, [])
    with write_transaction(engine) as conn:
        ingest = create_token(conn=conn, name="i", scope="ingest")
        writer = create_token(conn=conn, name="w", scope="write")
    with TestClient(create_app(settings, engine=engine)) as c:
        assert c.get("/api/v1/alerts/outbox").status_code == 401
        denied = c.get("/api/v1/alerts/outbox", headers={"Authorization": f"Bearer {ingest}"})
        assert denied.status_code == 403 and "needs scope 'write'" in denied.json()["detail"]
        ok = c.get("/api/v1/alerts/outbox", headers={"Authorization": f"Bearer {writer}"})
        assert ok.status_code == 200 and ok.json() == []
