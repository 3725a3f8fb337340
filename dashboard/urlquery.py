"""A page URL's query as a person may type it: repeated keys, commas, junk."""

from __future__ import annotations

MAX_VALUE = 1000  # characters of one value
MAX_VALUES = 50  # values of one key


def _texts(value) -> list[str]:
    if value is None:
        return []
    items = value if isinstance(value, list | tuple) else [value]
    return [str(v)[:MAX_VALUE] for v in items if isinstance(v, str | int | float)]


def one(query: dict, key: str) -> str | None:
    """Return the last value given for a key (None when absent)."""
    texts = _texts(query.get(key))
    return texts[-1].strip() if texts else None


def many(query: dict, key: str) -> list[str]:
    """Return every value of a key, repeated or comma-separated, blanks dropped, in order."""
    out: list[str] = []
    for text in _texts(query.get(key)):
        for part in text.split(","):
            part = part.strip()
            if part and part not in out:
                out.append(part)
    return out[:MAX_VALUES]


def repeated(query: dict, key: str) -> list[str]:
    """Return every value of a repeated key as given (no comma splitting), blanks dropped."""
    return [t for t in _texts(query.get(key)) if t.strip()][:MAX_VALUES]


def listed(value) -> list[str]:
    """Return a component's value (None, one value or a list) as a list of non-empty strings."""
    items = value if isinstance(value, list) else [value] if value else []
    return [str(v) for v in items if isinstance(v, str | int | float) and str(v)]
