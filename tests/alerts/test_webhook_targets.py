"""Webhook targets: link-local (cloud metadata) and the service itself refused unless allowed."""

from __future__ import annotations

import json

import pytest

from causeline.cli import main
from correlator.alerts.routing import load_config
from correlator.settings import ServiceSettings

REFUSED = [
    "http://169.254.169.254/latest/meta-data/",
    "http://[fe80::1]:9000/hook",
    "http://[::ffff:169.254.169.254]/",
    "http://2852039166/",  # 169.254.169.254 written as one number
    "http://127.0.0.1:8400/api/v1/hooks/alertmanager",  # the service (bind 127.0.0.1:8400)
    "http://localhost:8400/x",
    "https://causeline.example/api/v1/hooks/alertmanager",  # the service's public_url
]


def _settings(url: str, **extra) -> ServiceSettings:
    routes = {"channels": [{"name": "meta", "kind": "webhook", "url": url}]}
    return ServiceSettings(
        alert_routes_json=json.dumps(routes),
        public_url="https://causeline.example",
        bind_host="127.0.0.1",
        bind_port=8400,
        **extra,
    )


@pytest.mark.parametrize("url", REFUSED)
def test_refused_with_the_channel_named(url):
    with pytest.raises(ValueError) as err:
        load_config(_settings(url))
    message = str(err.value)
    assert message.startswith("channel 'meta': its url is refused")
    assert "CAUSELINE_ALERT_ALLOWED_HOSTS" in message
    assert "meta-data" not in message and "hooks" not in message  # the URL is never echoed


def test_allowed_when_configured():
    allow = "169.254.0.0/16,fe80::/10,127.0.0.1,localhost,causeline.example"
    for url in REFUSED[:2] + REFUSED[4:]:
        config = load_config(_settings(url, alert_allowed_hosts=allow))
        assert config.channels["meta"].url == url


def test_ordinary_targets_pass():
    for url in ("http://127.0.0.1:18080/hook", "https://hooks.slack.com/services/T/B/x"):
        assert load_config(_settings(url)).channels["meta"].url == url


def test_alert_cli_says_which_channel(tmp_path, capsys):
    routes = tmp_path / "routes.yaml"
    routes.write_text("channels:\n - {name: meta, kind: webhook, url: 'http://169.254.169.254/'}\n")
    assert main(["alert", "channels", "--routes", str(routes)]) == 2
    err = capsys.readouterr().err
    assert "channel 'meta'" in err and "link-local" in err
