"""Route files: validation, routing by model, severity and team, masking."""

from __future__ import annotations

import pytest

from correlator.alerts.masking import mask_secret, mask_url, scrub
from correlator.alerts.routing import parse_config, read_config_text

CONFIG = {
    "channels": [
        {"name": "a", "kind": "slack", "url": "https://hooks.slack.com/services/T/B/KEY123"},
        {"name": "b", "kind": "wecom", "url": "https://qyapi.weixin.qq.com/x?key=K"},
        {"name": "c", "kind": "webhook", "url": "http://pager/hook"},
    ],
    "routes": [
        {"model": "m1", "team": "algo", "channels": ["a"]},
        {"team": "infra", "min_severity": "major", "channels": ["b"], "continue": False},
        {"sla": ["s9"], "channels": ["c"]},
    ],
    "default": ["c"],
}


def _names(labels):
    return [c.name for c in parse_config(CONFIG).route(labels)]


def test_routing():
    assert _names({"model": "m1", "team": "algo", "severity": "minor"}) == ["a"]
    assert _names({"model": "m1", "team": "infra", "severity": "critical", "sla": "s9"}) == ["b"]
    assert _names({"model": "m1", "team": "infra", "severity": "minor", "sla": "s9"}) == ["c"]
    assert _names({"model": "m2", "team": "", "severity": "major"}) == ["c"]  # default


@pytest.mark.parametrize(
    ("change", "msg"),
    [
        ({"channels": [{"name": "x", "kind": "irc", "url": "http://h"}]}, "kind must be"),
        ({"channels": [{"name": "x", "kind": "slack", "url": "ftp://h"}]}, "http(s) URL"),
        ({"routes": [{"channels": ["nope"]}]}, "unknown channel 'nope'"),
        ({"routes": [{"channels": ["a"], "min_severity": "huge"}]}, "min_severity"),
        ({"channels": ["a"]}, "must be a mapping"),
    ],
)
def test_bad_config_is_refused(change, msg):
    with pytest.raises(ValueError, match=msg.replace("(", r"\(").replace(")", r"\)")):
        parse_config(CONFIG | change)


def test_yaml_error_does_not_quote_the_secret():
    with pytest.raises(ValueError) as info:
        read_config_text("channels:\n - url: https://x/SECRET\n  bad: [", ".yaml")
    assert "SECRET" not in str(info.value)


def test_env_expansion_and_masks():
    config = parse_config(
        {
            "channels": [
                {
                    "name": "a",
                    "kind": "webhook",
                    "url": "https://h/x/${HOOK_KEY}",
                    "secret": "${HOOK_KEY}",
                }
            ]
        },
        variables={"HOOK_KEY": "abcdefSECRET"},
    )
    channel = config.channels["a"]
    assert channel.url == "https://h/x/abcdefSECRET" and channel.secret == "abcdefSECRET"
    assert mask_url(channel.url) == "https://h/****"
    assert mask_url("https://hooks.slack.com/services/T000/B000/XXXXYYYYZZZZ") == (
        "https://hooks.slack.com/****ZZZZ"
    )
    assert mask_secret("SEC0123456789abcdef") == "****ef" and mask_secret("short") == "****"
    text = "POST https://h/x/abcdefSECRET failed; key abcdefSECRET"
    assert "SECRET" not in scrub(text, channel.url, channel.secret)


def test_variables_come_from_the_settings_not_from_routing(monkeypatch, tmp_path):
    from correlator.alerts.routing import load_config
    from correlator.settings import ServiceSettings

    routes = tmp_path / "routes.yaml"
    routes.write_text("channels:\n  - name: a\n    kind: webhook\n    url: https://h/${HOOK_KEY}\n")
    monkeypatch.setenv("HOOK_KEY", "from-env")
    settings = ServiceSettings(alert_routes_file=str(routes), alert_allowed_hosts="h")
    assert load_config(settings).channels["a"].url == "https://h/from-env"

    class Injected(ServiceSettings):
        def route_variables(self):
            return {"HOOK_KEY": "injected"}

    injected = Injected(alert_routes_file=str(routes), alert_allowed_hosts="h")
    assert load_config(injected).channels["a"].url == "https://h/injected"
    unset = parse_config({"channels": [{"name": "a", "kind": "webhook", "url": "https://h/${X}"}]})
    assert unset.channels["a"].url == "https://h/"
