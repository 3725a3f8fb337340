"""User text made safe for Plotly, which renders a subset of HTML in labels and hovers."""

from __future__ import annotations

# Plotly turns these entities back into characters, so the text shows as typed.
MARKUP = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})
# In a hover template, braces too: a value must not become a %{...} field.
TEMPLATE = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", "{": "&#123;", "}": "&#125;"})


def plot_text(value) -> str:
    """Return ``value`` as text Plotly shows literally in a label, title or legend."""
    return str(value if value is not None else "").translate(MARKUP)


def template_text(value) -> str:
    """Return ``value`` as text a Plotly hover template shows literally."""
    return str(value if value is not None else "").translate(TEMPLATE)
