"""A person's own panels: shared in the URL, kept per model or service in the browser."""

from __future__ import annotations

from dashboard.series_panels import panel_param, read_panel_param

MAX_PANELS = 10


def keep_key(model: str | None, services: list[str] | None) -> str:
    """Return the key panels are kept under: the model, else the first service ('' for none)."""
    if model:
        return f"model:{model}"
    if services:
        return f"service:{services[0]}"
    return ""


def _kept(saved: dict | None, key: str) -> list[str]:
    values = (saved or {}).get(key) if key else None
    return [v for v in values if isinstance(v, str)] if isinstance(values, list) else []


def restore(current: list[str], saved: dict | None, key: str) -> list[str]:
    """Return the panels to show: the URL's and those kept for this key, none kept for others."""
    mine = _kept(saved, key)
    others = {v for k in (saved or {}) if k != key for v in _kept(saved, k)} - set(mine)
    shown = [p for p in current if p not in others]
    return (shown + [p for p in mine if p not in shown])[:MAX_PANELS]


def add(
    current: list[str], saved: dict | None, key: str, name: str | None, text: str | None, keep: bool
) -> tuple[list[str], dict, str]:
    """Return the panels and kept panels after adding one, and what to tell the person."""
    saved = {k: list(v) for k, v in (saved or {}).items() if isinstance(v, list)}
    value = panel_param(name or "", text or "")
    if read_panel_param(value) is None:
        return current, saved, f'cannot read {text!r}: write metric{{label="value"}}'
    if value in current:
        return current, saved, "That panel is on the board already."
    if len(current) >= MAX_PANELS:
        return current, saved, f"At most {MAX_PANELS} panels of your own; remove one first."
    said = "Added; share it with the link to this view."
    if keep and key:
        saved[key] = [*_kept(saved, key), value][-MAX_PANELS:]
        said = f"Added and kept for {key.replace(':', ' ', 1)} in this browser."
    elif keep:
        said = "Added; choose a model or service to keep panels for it."
    return [*current, value], saved, said


def forget(saved: dict | None, key: str, current: list[str]) -> dict | None:
    """Return the kept panels without those of this key no longer shown (None: no change)."""
    mine = _kept(saved, key)
    left = [v for v in mine if v in current]
    if left == mine:
        return None
    return {**(saved or {}), key: left}
