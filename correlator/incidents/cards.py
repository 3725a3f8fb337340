"""Model card checks: the article's six parts plus random seed and locked dependencies."""

from __future__ import annotations

import re

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from correlator.vocabulary import MODEL_CARD_PARTS

_LOCK_LINE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._\-\[\],]*\s*(===?|@)\s*\S+.*$")


def _schema_error(value) -> str | None:
    if not isinstance(value, dict) or not value:
        return "must be a non-empty JSON Schema object"
    try:
        Draft202012Validator.check_schema(value)
    except SchemaError as exc:
        where = "/".join(str(p) for p in exc.path) or "(root)"
        return f"not a valid JSON Schema at {where}: {exc.message}"
    return None


def _lock_error(value) -> str | None:
    if not isinstance(value, str) or not value.strip():
        return "must be the text of a lock file (name==version lines)"
    for n, line in enumerate(value.splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith(("#", "-", "--")):
            continue
        if not _LOCK_LINE.match(line):
            return f"line {n} {line!r} is not pinned (expected name==version)"
    return None


def card_errors(card: dict) -> list[tuple[str, str]]:
    """Return (field, message) for every problem of a model card; empty when it is valid."""
    errors: list[tuple[str, str]] = []
    for part in MODEL_CARD_PARTS:
        if card.get(part) is None or card.get(part) == "":
            errors.append((part, "is required"))
    if errors:
        return errors
    if not isinstance(card["purpose"], str):
        errors.append(("purpose", "must be text"))
    for part in ("input_schema", "output_schema"):
        msg = _schema_error(card[part])
        if msg:
            errors.append((part, msg))
    deps = card["feature_dependencies"]
    if not isinstance(deps, list) or not all(
        isinstance(d, str) or (isinstance(d, dict) and isinstance(d.get("service"), str))
        for d in deps
    ):
        errors.append(("feature_dependencies", "must be a list of {service, features} or names"))
    for part in ("offline_evaluation", "resource_needs"):
        if not isinstance(card[part], dict):
            errors.append((part, "must be an object"))
    risks = card["known_risks"]
    if not isinstance(risks, list) or not all(isinstance(r, str) for r in risks):
        errors.append(("known_risks", "must be a list of strings"))
    seed = card["random_seed"]
    if not isinstance(seed, int) or isinstance(seed, bool):
        errors.append(("random_seed", "must be an integer"))
    msg = _lock_error(card["locked_dependencies"])
    if msg:
        errors.append(("locked_dependencies", msg))
    return errors
