"""Small HTML building blocks shared by pages."""

from __future__ import annotations

from dash import html


def table(headers: list[str], rows: list[list], *, id_=None, class_name="grid") -> html.Table:
    """Return a plain HTML table."""
    kwargs = {"id": id_} if id_ else {}
    return html.Table(
        [
            html.Thead(html.Tr([html.Th(h) for h in headers])),
            html.Tbody([html.Tr([html.Td(c) for c in row]) for row in rows]),
        ],
        className=class_name,
        **kwargs,
    )


def error_box(message: str) -> html.Div:
    """Return an error message box."""
    return html.Div(message, className="error")


def write_button(label: str, id_, can_write: bool) -> html.Button:
    """Return a button that is disabled (with a reason) on a read-only dashboard."""
    return html.Button(
        label,
        id=id_,
        n_clicks=0,
        disabled=not can_write,
        title="" if can_write else "read-only dashboard",
    )
