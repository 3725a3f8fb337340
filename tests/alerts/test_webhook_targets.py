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


# The service binds 127.0.0.1:8400 in these settings; "this host" and metadata in any form.
REFUSED_MORE = {
    "http://0.0.0.0:8400/": "means this host",
    "http://0:8400/": "means this host",
    "http://0.0.0.0:9000/": "means this host",
    "http://[::]:8400/": "means this host",
    "http://[::ffff:0.0.0.0]:8400/": "means this host",
    "http://0.1.2.3/": "means this host",
    "http://[fd00:ec2::254]/latest/meta-data/": "AWS instance metadata over IPv6",
    "http://100.100.100.200/latest/meta-data/": "Alibaba Cloud instance metadata",
    "http://192.0.0.192/": "Oracle Cloud",
    "http://2130706433:8400/": "this causeline service",
    "http://0x7f.1:8400/": "this causeline service",
    "http://017700000001:8400/": "this causeline service",
    "http://127.0.0.2:8400/": "this causeline service",
    "http://[::ffff:127.0.0.1]:8400/": "this causeline service",
    "http://[::1]:8400/": "this causeline service",
    "http://localhost.:8400/": "this causeline service",
    "http://app.localhost:8400/": "this causeline service",
    "https://causeline.example./x": "this causeline service",
    "http://0xa9fea9fe/": "link-local",
    "http://0251.0376.0251.0376/": "link-local",
    "http://169.254.43518/": "link-local",
    "http://[::ffff:a9fe:a9fe]/": "link-local",
    "http://[64:ff9b::a9fe:a9fe]/": "link-local",
    "http://[fe80::1%25eth0]/": "link-local",
    "http://metadata.google.internal/computeMetadata/v1/": "cloud metadata service",
    "http://METADATA.GOOGLE.INTERNAL./": "cloud metadata service",
}


@pytest.mark.parametrize("url", list(REFUSED_MORE))
def test_this_host_metadata_and_numeric_forms_are_refused(url):
    with pytest.raises(ValueError) as err:
        load_config(_settings(url))
    message = str(err.value)
    assert message.startswith("channel 'meta': its url is refused: ")
    assert REFUSED_MORE[url] in message and "CAUSELINE_ALERT_ALLOWED_HOSTS" in message
    assert "meta-data" not in message and "computeMetadata" not in message


def test_private_and_unique_local_targets_stay_allowed():
    for url in (
        "http://10.1.2.3:8400/hook",
        "http://[fd00::5]/hook",
        "http://[fd00:ec2::253]/hook",
        "http://127.0.0.1:9000/hook",
    ):
        assert load_config(_settings(url)).channels["meta"].url == url


def test_the_allow_list_still_opens_them():
    allow = "fd00:ec2::254,100.100.100.200/32,0.0.0.0,metadata.google.internal"
    for url in (
        "http://[fd00:ec2::254]/",
        "http://100.100.100.200/",
        "http://0.0.0.0:9000/",
        "http://metadata.google.internal./",
    ):
        assert load_config(_settings(url, alert_allowed_hosts=allow)).channels["meta"].url == url
