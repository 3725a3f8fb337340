"""Agent settings from defaults, a config file, ``CAUSELINE_AGENT_*`` variables and flags.

Later layers win: defaults < file (TOML or JSON) < environment < command line.
Durations accept ``500ms``, ``10s``, ``5m``, ``1h`` or plain seconds.
"""

from __future__ import annotations

import json
import os
import re
import socket
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields

ENV_PREFIX = "CAUSELINE_AGENT_"
DEFAULT_SOURCES = ("host", "gpu", "restarts", "fingerprint")
_DURATION = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*(ms|s|m|h)?\s*$")
_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, None: 1.0}


class ConfigError(ValueError):
    """A setting that cannot be used, with the setting named."""


def parse_duration(value) -> float:
    """Return seconds from ``10s``-style text or a number."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    match = _DURATION.match(str(value))
    if not match:
        raise ConfigError(f"{value!r} is not a duration such as 500ms, 10s, 5m or 1h")
    return float(match.group(1)) * _UNITS[match.group(2)]


@dataclass
class AgentConfig:
    """Every agent setting; lists of dicts configure logs, scrapes and checks."""

    server: str | None = None
    token: str | None = None
    host: str | None = None
    interval: float = 10.0
    sources: list[str] = field(default_factory=lambda: list(DEFAULT_SOURCES))
    spool_dir: str = "/var/lib/causeline/spool"
    spool_max_bytes: int = 256 * 1024 * 1024
    batch_max_samples: int = 50_000
    batch_max_age: float | None = None
    retry_max: float = 30.0
    metrics_port: int | None = 9465
    metrics_addr: str = "0.0.0.0"
    pod_log_root: str = "/var/log/pods"
    fingerprint_packages: list[str] | None = None
    fingerprint_interval: float = 3600.0
    logs: list[dict] = field(default_factory=list)
    scrape: list[dict] = field(default_factory=list)
    checks: list[dict] = field(default_factory=list)
    remote_write_url: str | None = None
    remote_write_headers: dict[str, str] = field(default_factory=dict)
    remote_write_bearer_token: str | None = None
    remote_write_username: str | None = None
    remote_write_password: str | None = None
    remote_write_timeout: float = 30.0

    def resolved_host(self) -> str:
        """Return the host label: the setting, else the machine's host name."""
        return self.host or socket.gethostname()


_DURATIONS = {
    "interval",
    "batch_max_age",
    "fingerprint_interval",
    "retry_max",
    "remote_write_timeout",
}
_INTS = {"spool_max_bytes", "batch_max_samples", "metrics_port"}
_LISTS = {"sources", "fingerprint_packages"}
_JSON_LISTS = {"logs", "scrape", "checks"}
_JSON_MAPS = {"remote_write_headers"}
_RESERVED_HEADERS = {
    "content-encoding",
    "content-type",
    "content-length",
    "x-prometheus-remote-write-version",
}


def _coerce(name: str, value):
    if value is None or value == "":
        return None
    try:
        if name in _DURATIONS:
            return parse_duration(value)
        if name in _INTS:
            return int(value)
        if name in _LISTS and isinstance(value, str):
            return [v.strip() for v in value.split(",") if v.strip()]
        if name in _JSON_LISTS and isinstance(value, str):
            return json.loads(value)
        if name in _JSON_MAPS:
            return _string_map(name, json.loads(value) if isinstance(value, str) else value)
    except (ValueError, TypeError) as exc:
        raise ConfigError(f"{name}: {exc}") from exc
    return value


def _string_map(name: str, value) -> dict[str, str]:
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise ConfigError(f"{name}: give a table of names to string values")
    return value


_POSITIVE = (
    "interval",
    "spool_max_bytes",
    "batch_max_samples",
    "retry_max",
    "fingerprint_interval",
    "remote_write_timeout",
)


def _check_bounds(config: AgentConfig) -> None:
    for name in _POSITIVE:
        if getattr(config, name) <= 0:
            raise ConfigError(f"{name} must be positive, not {getattr(config, name)!r}")
    if config.batch_max_age is not None and config.batch_max_age < 0:
        raise ConfigError(
            f"batch_max_age must be 0 (the default) or more, not {config.batch_max_age!r}"
        )
    if config.metrics_port is not None and not 0 <= config.metrics_port <= 65535:
        raise ConfigError(f"metrics_port must be 0 (off) to 65535, not {config.metrics_port!r}")


def _check_remote_write(config: AgentConfig) -> None:
    if config.remote_write_url and not config.remote_write_url.startswith(("http://", "https://")):
        raise ConfigError("remote_write_url must be an http:// or https:// URL")
    basic = config.remote_write_username is not None or config.remote_write_password is not None
    if basic and (config.remote_write_username is None or config.remote_write_password is None):
        raise ConfigError("remote_write_username and remote_write_password go together")
    if basic and config.remote_write_bearer_token:
        raise ConfigError("give remote_write_bearer_token or a username and password, not both")
    for name in config.remote_write_headers:
        if name.lower() in _RESERVED_HEADERS:
            raise ConfigError(f"remote_write_headers: {name} is set by the remote-write protocol")
        if name.lower() == "authorization" and (basic or config.remote_write_bearer_token):
            raise ConfigError("remote_write_headers: Authorization is set by the auth settings")


def _apply(config: AgentConfig, values: dict, origin: str) -> None:
    known = {f.name for f in fields(AgentConfig)}
    for key, value in values.items():
        name = key.replace("-", "_")
        if name not in known:
            raise ConfigError(f"{origin}: unknown setting {key!r}; known: {sorted(known)}")
        coerced = _coerce(name, value)
        if coerced is not None:
            setattr(config, name, coerced)


def read_file(path: str) -> dict:
    """Return the settings of a TOML (``.toml``) or JSON file."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror}") from exc
    try:
        values = json.loads(data) if path.endswith(".json") else tomllib.loads(data.decode())
    except (ValueError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: {exc}") from exc
    return values.get("agent", values)


def load_config(
    *, file: str | None = None, env: Mapping[str, str] | None = None, overrides: dict | None = None
) -> AgentConfig:
    """Merge defaults, the file, the environment and explicit overrides."""
    config = AgentConfig()
    env = os.environ if env is None else env
    file = file or env.get(ENV_PREFIX + "CONFIG")
    if file:
        _apply(config, read_file(file), file)
    from_env = {
        k[len(ENV_PREFIX) :].lower(): v
        for k, v in env.items()
        if k.startswith(ENV_PREFIX) and k != ENV_PREFIX + "CONFIG"
    }
    _apply(config, from_env, "environment")
    _apply(config, {k: v for k, v in (overrides or {}).items() if v is not None}, "flags")
    _check_bounds(config)
    _check_remote_write(config)
    return config
