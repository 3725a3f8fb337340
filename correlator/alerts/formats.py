"""Every alert format by channel kind, in one registry behind one small protocol."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from correlator.alerts import (
    alertmanager,
    dingtalk,
    feishu,
    grafana,
    slack,
    teams,
    webhook,
    wecom,
)
from correlator.alerts.channels import Channel, HttpRequest
from correlator.alerts.messages import Message


class AlertFormat(Protocol):
    """What a channel kind provides: its payload, the POST that carries it, the answer's error."""

    def render(self, message: Message) -> dict:
        """Return the platform payload of a message."""
        ...

    def request(
        self, payload: dict, channel: Channel, *, now: float, delivery_id: str
    ) -> HttpRequest:
        """Return the POST that sends a payload to a channel."""
        ...

    def error(self, status: int, text: str) -> str | None:
        """Return None when the platform took the message, else a short error."""
        ...


@runtime_checkable
class FollowingFormat(AlertFormat, Protocol):
    """A format whose later messages of an incident carry parts of its first one."""

    def follow(self, payload: dict, first: dict) -> dict:
        """Return a later payload that keeps what identifies the first one."""
        ...


FORMATS: dict[str, AlertFormat] = {
    "slack": slack,
    "feishu": feishu,
    "dingtalk": dingtalk,
    "wecom": wecom,
    "teams": teams,
    "webhook": webhook,
    "alertmanager": alertmanager,
    "grafana": grafana,
}
KINDS = tuple(FORMATS)


def alert_format(kind: str) -> AlertFormat:
    """Return the format of a channel kind; raise ValueError naming the known kinds."""
    try:
        return FORMATS[kind]
    except KeyError:
        raise ValueError(f"unknown channel kind {kind!r}; one of {', '.join(KINDS)}") from None
