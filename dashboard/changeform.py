"""The change form: turn field values into an API body, with validation messages."""

from __future__ import annotations

from dashboard.timeparse import parse_when

KINDS = ("deploy", "config", "feature", "image", "capacity", "infra")
OWNERS = ("algo", "infra")
STAGES = ("offline_eval", "shadow", "canary", "full", "rollback")
FIELDS = (
    "kind",
    "owner",
    "target",
    "summary",
    "labels",
    "scope",
    "planned_ts",
    "ts",
    "rollout_stage",
    "canary_percent",
    "version",
    "person",
)


def parse_labels(text: str) -> dict[str, str]:
    """Parse ``k=v, k2=v2`` into a dict; raise ValueError naming the bad part."""
    out = {}
    for part in (text or "").split(","):
        if not part.strip():
            continue
        key, sep, value = part.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"{part.strip()!r} is not key=value")
        out[key.strip()] = value.strip()
    return out


def change_body(values: dict, *, partial: bool = False) -> tuple[dict, dict[str, str]]:
    """Return (body, errors by field) from the form's values; partial for an edit."""
    body: dict = {}
    errors: dict[str, str] = {}
    for name in FIELDS:
        raw = values.get(name)
        if raw in (None, "", []):
            continue
        if name in ("planned_ts", "ts"):
            when = parse_when(str(raw))
            if when is None:
                errors[name] = "not a time: use now, now-10m, now+2h, ISO 8601 or unix seconds"
            else:
                body[name] = when
        elif name == "labels":
            try:
                body[name] = parse_labels(raw)
            except ValueError as exc:
                errors[name] = str(exc)
        elif name == "canary_percent":
            try:
                body[name] = float(raw)
            except ValueError:
                errors[name] = "a number from 0 to 100"
            else:
                if not 0 <= body[name] <= 100:
                    errors[name] = "a number from 0 to 100"
        else:
            body[name] = str(raw).strip() if isinstance(raw, str) else raw
    if not partial:
        for name in ("kind", "owner"):
            if name not in body:
                errors[name] = "required"
    if body.get("kind") and body["kind"] not in KINDS:
        errors["kind"] = f"one of {', '.join(KINDS)}"
    if body.get("owner") and body["owner"] not in OWNERS:
        errors["owner"] = "algo or infra"
    return body, errors
