"""What each platform checks on an incoming message, done the way the platform does it."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time

from correlator.alerts import webhook

HOUR = 3600


def _feishu_sign(ts: str, secret: str) -> str:
    key = f"{ts}\n{secret}".encode()
    return base64.b64encode(hmac.new(key, digestmod=hashlib.sha256).digest()).decode()


def feishu(secret: str | None):
    """Feishu bot: signature from body timestamp + secret; interactive card fields."""

    def check(path, query, headers, body):
        data = json.loads(body)
        if secret:
            ts = data.get("timestamp", "")
            if abs(time.time() - int(ts or 0)) > HOUR or data.get("sign") != _feishu_sign(
                ts, secret
            ):
                return 200, {
                    "code": 19021,
                    "msg": "sign match fail or timestamp is not within one hour from current time",
                }
        card = data.get("card") or {}
        ok = (
            data.get("msg_type") == "interactive"
            and card.get("header", {}).get("title", {}).get("content")
            and card.get("elements")
            and all("tag" in e for e in card["elements"])
        )
        return 200, ({"code": 0, "msg": "success"} if ok else {"code": 9499, "msg": "bad card"})

    return check


def dingtalk(secret: str | None):
    """DingTalk robot: timestamp (ms) and sign in the query; markdown title and text."""

    def check(path, query, headers, body):
        data = json.loads(body)
        if secret:
            ts = query.get("timestamp", "0")
            want = base64.b64encode(
                hmac.new(secret.encode(), f"{ts}\n{secret}".encode(), hashlib.sha256).digest()
            ).decode()
            if abs(time.time() * 1000 - int(ts)) > HOUR * 1000 or query.get("sign") != want:
                return 200, {"errcode": 310000, "errmsg": "sign not match"}
        md = data.get("markdown") or {}
        ok = data.get("msgtype") == "markdown" and md.get("title") and md.get("text")
        return 200, {"errcode": 0 if ok else 40035, "errmsg": "ok" if ok else "missing parameter"}

    return check


def wecom(path, query, headers, body):
    """WeCom robot: markdown content of at most 4096 bytes."""
    data = json.loads(body)
    content = (data.get("markdown") or {}).get("content") or ""
    ok = data.get("msgtype") == "markdown" and 0 < len(content.encode()) <= 4096
    return 200, {"errcode": 0 if ok else 40058, "errmsg": "ok" if ok else "invalid content"}


def slack(path, query, headers, body):
    """Slack webhook: Block Kit limits (header 150, section 3000, fields 10 x 2000, buttons)."""
    data = json.loads(body)
    blocks = data.get("blocks") or []
    ok = bool(data.get("text")) and 0 < len(blocks) <= 50
    for b in blocks:
        if b["type"] == "header":
            ok &= b["text"]["type"] == "plain_text" and len(b["text"]["text"]) <= 150
        elif b["type"] == "section":
            if "text" in b:
                ok &= b["text"]["type"] == "mrkdwn" and len(b["text"]["text"]) <= 3000
            if "fields" in b:
                ok &= len(b["fields"]) <= 10 and all(len(f["text"]) <= 2000 for f in b["fields"])
        elif b["type"] == "actions":
            for e in b["elements"]:
                ok &= e["type"] == "button" and len(e["text"]["text"]) <= 75
                ok &= len(e["url"]) <= 3000
        elif b["type"] != "context":
            ok = False
    return (200, "ok") if ok else (400, "invalid_blocks")


def teams(path, query, headers, body):
    """Teams workflow: a message with an Adaptive Card attachment."""
    data = json.loads(body)
    att = (data.get("attachments") or [{}])[0]
    card = att.get("content") or {}
    ok = (
        data.get("type") == "message"
        and att.get("contentType") == "application/vnd.microsoft.card.adaptive"
        and card.get("type") == "AdaptiveCard"
        and card.get("version")
        and card.get("body")
    )
    return (202, "") if ok else (400, "bad card")


def generic(secret: str):
    """A receiver of causeline's generic webhook that verifies the signature as documented."""

    def check(path, query, headers, body):
        if not webhook.verify(secret, headers, body, now=time.time()):
            return 401, {"error": "bad signature"}
        data = json.loads(body)
        if data.get("schema") != webhook.SCHEMA or not headers.get(webhook.DELIVERY_HEADER):
            return 400, {"error": "bad body"}
        return 200, {"ok": True}

    return check


def grafana(token: str | None):
    """Grafana's annotations API: the documented fields, the service account token."""

    def check(path, query, headers, body):
        if token and headers.get("Authorization") != f"Bearer {token}":
            return 401, {"message": "Unauthorized"}
        data = json.loads(body)
        ok = path == "/api/annotations" and isinstance(data.get("time"), int)
        ok &= isinstance(data.get("text"), str) and bool(data["text"])
        tags = data.get("tags")
        ok &= isinstance(tags, list) and all(isinstance(t, str) and t for t in tags)
        if "timeEnd" in data:
            ok &= isinstance(data["timeEnd"], int) and data["timeEnd"] >= data["time"]
        ok &= set(data) <= {"time", "timeEnd", "tags", "text", "dashboardUID", "panelId"}
        if not ok:
            return 400, {"message": "bad annotation"}
        return 200, {"message": "Annotation added", "id": 1}

    return check
