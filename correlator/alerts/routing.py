"""Alert routing rules: the channels, and which of them get an alert by model, severity, team."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from correlator.alerts.channels import Channel
from correlator.alerts.formats import KINDS
from correlator.alerts.targets import refused_target
from correlator.vocabulary import DEFAULT_SEVERITY, SEVERITIES

if TYPE_CHECKING:
    from correlator.settings import ServiceSettings


_ENV = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


@dataclass(frozen=True, slots=True)
class Route:
    """Send to ``channels`` when every given condition holds; stop unless ``continue_``."""

    channels: tuple[str, ...]
    models: tuple[str, ...] = ()
    slas: tuple[str, ...] = ()
    teams: tuple[str, ...] = ()
    min_severity: str = "info"
    continue_: bool = True

    def matches(self, labels: dict[str, str]) -> bool:
        """Say whether an alert with these labels takes this route."""
        if self.models and labels.get("model") not in self.models:
            return False
        if self.slas and labels.get("sla") not in self.slas:
            return False
        if self.teams and labels.get("team") not in self.teams:
            return False
        sev = labels.get("severity", DEFAULT_SEVERITY)
        rank = SEVERITIES.index(sev) if sev in SEVERITIES else len(SEVERITIES)
        return rank >= SEVERITIES.index(self.min_severity)


@dataclass(frozen=True, slots=True)
class AlertConfig:
    """Every channel by name, the routes in order, and the channels used when none matches."""

    channels: dict[str, Channel]
    routes: tuple[Route, ...] = ()
    default: tuple[str, ...] = ()

    def route(self, labels: dict[str, str]) -> list[Channel]:
        """Return the channels an alert with these labels goes to, each once."""
        names: list[str] = []
        matched = False
        for r in self.routes:
            if r.matches(labels):
                matched = True
                names += [n for n in r.channels if n not in names]
                if not r.continue_:
                    break
        if not matched:
            names = list(self.default)
        return [self.channels[n] for n in names]


def _expand(value, variables: Mapping[str, str]):
    """Return a string with each ``${VAR}`` replaced by its variable ("" when unset)."""
    if isinstance(value, str):
        return _ENV.sub(lambda m: variables.get(m.group(1), ""), value)
    return value


def _tuple(value) -> tuple[str, ...]:
    if value is None:
        return ()
    return (str(value),) if isinstance(value, str) else tuple(str(v) for v in value)


def parse_config(data: dict, variables: Mapping[str, str] | None = None) -> AlertConfig:
    """Return the config from its dict form; raise ValueError naming what is wrong.

    ``${VAR}`` in a channel's url, secret and headers reads ``variables`` (none: "").
    """
    variables = variables or {}
    channels: dict[str, Channel] = {}
    for i, c in enumerate(data.get("channels") or []):
        if not isinstance(c, dict):
            raise ValueError(f"channels[{i}]: must be a mapping with name, kind, url")
        name, kind = str(c.get("name") or ""), str(c.get("kind") or c.get("type") or "")
        if not name or name in channels:
            raise ValueError(f"channels[{i}]: a unique 'name' is required")
        if kind not in KINDS:
            raise ValueError(f"channels[{i}] ({name}): kind must be one of {', '.join(KINDS)}")
        url = _expand(c.get("url") or "", variables)
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"channels[{i}] ({name}): 'url' must be an http(s) URL")
        channels[name] = Channel(
            name=name,
            kind=kind,
            url=url,
            secret=_expand(c.get("secret"), variables) or None,
            rate_per_minute=int(c.get("rate_per_minute", 20)),
            headers={
                str(k): _expand(str(v), variables) for k, v in (c.get("headers") or {}).items()
            },
            resend_seconds=float(c.get("resend_seconds", 60.0)),
        )
    routes = []
    for i, r in enumerate(data.get("routes") or []):
        if not isinstance(r, dict):
            raise ValueError(f"routes[{i}]: must be a mapping with channels")
        sev = str(r.get("min_severity", "info"))
        if sev not in SEVERITIES:
            raise ValueError(f"routes[{i}]: min_severity must be one of {', '.join(SEVERITIES)}")
        route = Route(
            channels=_tuple(r.get("channels")),
            models=_tuple(r.get("model", r.get("models"))),
            slas=_tuple(r.get("sla", r.get("slas"))),
            teams=_tuple(r.get("team", r.get("teams"))),
            min_severity=sev,
            continue_=bool(r.get("continue", True)),
        )
        routes.append(route)
    default = _tuple(data["default"]) if "default" in data else tuple(channels)
    for name in [n for r in routes for n in r.channels] + list(default):
        if name not in channels:
            raise ValueError(f"route names unknown channel {name!r}")
    return AlertConfig(channels=channels, routes=tuple(routes), default=default)


def read_config_text(
    text: str, suffix: str = ".json", variables: Mapping[str, str] | None = None
) -> AlertConfig:
    """Parse a YAML or JSON route file's text."""
    if suffix in (".yaml", ".yml"):
        import yaml

        try:
            data = yaml.safe_load(text) or {}
        except yaml.YAMLError as exc:  # its message quotes the line, which may hold a secret
            mark = getattr(exc, "problem_mark", None)
            where = f" at line {mark.line + 1}" if mark else ""
            raise ValueError(f"not valid YAML{where}") from None
    else:
        try:
            data = json.loads(text or "{}")
        except ValueError as exc:
            raise ValueError(f"not valid JSON at line {getattr(exc, 'lineno', '?')}") from None
    if not isinstance(data, dict):
        raise ValueError("the routes file must hold a mapping with 'channels' and 'routes'")
    return parse_config(data, variables)


def check_targets(config: AlertConfig, settings: ServiceSettings) -> AlertConfig:
    """Return the config; raise ValueError naming a channel whose URL is refused."""
    for channel in config.channels.values():
        why = refused_target(channel.url, settings)
        if why:
            raise ValueError(
                f"channel {channel.name!r}: its url is refused: {why}; list the host in "
                "CAUSELINE_ALERT_ALLOWED_HOSTS (comma-separated hosts or CIDRs) to allow it"
            )
    return config


def load_config(settings: ServiceSettings) -> AlertConfig:
    """Return the config from the settings' routes file, or their inline JSON, else none.

    ``${VAR}`` reads the settings' ``route_variables()`` (``ServiceSettings``: the
    environment, read by the composition root's settings, not here).
    """
    variables = settings.route_variables()
    path = getattr(settings, "alert_routes_file", None)
    if path:
        p = Path(path)
        config = read_config_text(p.read_text(encoding="utf-8"), p.suffix.lower(), variables)
        return check_targets(config, settings)
    inline = getattr(settings, "alert_routes_json", None)
    if inline:
        return check_targets(read_config_text(inline, ".json", variables), settings)
    return AlertConfig(channels={})
