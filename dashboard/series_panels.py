"""Panels built from series selectors, grouped by metric family and node, whatever the names."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from dashboard import selectors
from dashboard.panels import Panel
from dashboard.units import unit_of

# Name parts that say which statistic or direction of one quantity a metric is:
# latency_avg and latency_p99 are one family, node_network_receive/transmit_bytes too.
STATS = {"avg", "mean", "median", "max", "min", "receive", "transmit", "read", "write"}
_QUANTILE = re.compile(r"^p\d{2,4}$")
NODE_LABELS = ("service", "host", "instance", "model")
ROLE_NAMES = {
    "model": "Model",
    "system": "System",
    "sla": "SLA",
    "suspect": "Suspect",
    "service": "Service",
    "custom": "Yours",
}


def _is_stat(token: str) -> bool:
    return token in STATS or _QUANTILE.match(token) is not None


def family_of(metric: str) -> str:
    """Return a metric's family: its name without statistic or direction parts."""
    head, *rest = metric.split("_")
    kept = [head, *(t for t in rest if not _is_stat(t))]
    return "_".join(kept)


def variant_of(metric: str) -> str:
    """Return the statistic or direction parts of a metric's name ('' when none)."""
    return " ".join(t for t in metric.split("_")[1:] if _is_stat(t))


def node_of(labels: dict[str, str]) -> str:
    """Return the node a label set names (service, host, instance or model), as key=value."""
    for key in NODE_LABELS:
        if labels.get(key):
            return f"{key}={labels[key]}"
    return ""


@dataclass(slots=True)
class Want:
    """One series selector the board should draw, and why (SLA, suspect, service)."""

    role: str
    metric: str
    labels: dict[str, str]
    tags: list[str] = field(default_factory=list)  # e.g. the SLA's name, a suspect's rank

    @property
    def selector(self) -> str:
        """Return the selector text of this want."""
        return selectors.exact(self.metric, self.labels)


def _key(text: str) -> str:
    return re.sub(r"[^a-zA-Z0-9_:=.-]+", "_", text)[:120]


def group_panels(wants: list[Want]) -> list[Panel]:
    """Return one panel per (metric family, node), in the order the wants first name them."""
    groups: dict[tuple[str, str, str], list[Want]] = {}
    for want in wants:
        unit = unit_of(want.metric)
        family = family_of(want.metric)
        groups.setdefault((family, node_of(want.labels), unit.label), []).append(want)
    panels = []
    for (family, node, label), members in groups.items():
        role = members[0].role
        tags = list(dict.fromkeys(t for w in members for t in w.tags))
        metrics = tuple(dict.fromkeys(w.metric for w in members))
        title = " · ".join(p for p in (" ".join(tags), family, node) if p)
        unit = unit_of(metrics[0])
        panels.append(
            Panel(
                key=_key(f"{role}:{family}:{node}"),
                title=title,
                unit=label,
                metrics=metrics,
                scope="fixed",
                board=role,
                drift=family.endswith("_bucket"),
                selectors=tuple(dict.fromkeys(w.selector for w in members)),
                rate=unit.rate,
                factor=unit.factor,
            )
        )
    return panels


def custom_panel(index: int, name: str, text: str) -> Panel:
    """Return the panel of a person's selector; ValueError when it cannot be read."""
    metric, _labels = selectors.read(text)
    unit = unit_of(metric)
    return Panel(
        key=f"custom:{index}",
        title=name or text,
        unit=unit.label,
        metrics=(metric,) if metric else (),
        scope="fixed",
        board="custom",
        drift=bool(metric and metric.endswith("_bucket")),
        selectors=(text.strip(),),
        rate=unit.rate,
        factor=unit.factor,
    )


def panel_param(name: str, text: str) -> str:
    """Return a custom panel as one ``panel`` URL value: ``NAME|SELECTOR`` or ``SELECTOR``."""
    name = clean_name(name)
    return f"{name}|{text.strip()}" if name and name != text.strip() else text.strip()


def clean_name(name: str | None) -> str:
    """Return a panel name fit for the URL form (no '|', at most 80 characters)."""
    return " ".join((name or "").replace("|", " ").split())[:80]


def read_panel_param(value: str) -> tuple[str, str] | None:
    """Return (name, selector) of a ``panel`` URL value, or None when it holds no selector."""
    value = (value or "").strip()
    try:
        selectors.read(value)
        return "", value
    except ValueError:
        pass
    name, sep, text = value.partition("|")
    if not sep:
        return None
    try:
        selectors.read(text)
    except ValueError:
        return None
    return clean_name(name), text.strip()
