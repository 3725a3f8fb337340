"""Two environment fingerprints side by side, flattened to dotted keys."""

from __future__ import annotations

import json


def flatten(value, prefix: str = "") -> dict[str, str]:
    """Flatten nested dicts into dotted keys; lists and scalars become text."""
    if isinstance(value, dict):
        out: dict[str, str] = {}
        for key, inner in value.items():
            out.update(flatten(inner, f"{prefix}.{key}" if prefix else str(key)))
        return out
    if isinstance(value, list):
        return {prefix: json.dumps(value, sort_keys=True)}
    return {prefix: "" if value is None else str(value)}


def env_diff(left: dict, right: dict) -> list[tuple[str, str, str, bool]]:
    """Return (key, left value, right value, same) rows, differences first."""
    a, b = flatten(left), flatten(right)
    rows = [
        (k, a.get(k, "—"), b.get(k, "—"), a.get(k) == b.get(k)) for k in sorted(a.keys() | b.keys())
    ]
    return sorted(rows, key=lambda r: (r[3], r[0]))
