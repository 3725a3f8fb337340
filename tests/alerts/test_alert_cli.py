"""``causeline alert``: the routes file checked, masked, and a test message sent."""

from __future__ import annotations

from causeline.cli import main
from tests.alerts import platforms
from tests.alerts.receiver import Receiver

ROUTES = """
channels:
  - name: ding
    kind: dingtalk
    url: {url}/robot/send?access_token=TOKEN0123456789abcdef
    secret: ${{DING_SECRET}}
routes:
  - model: click_rank_v3
    min_severity: major
    channels: [ding]
default: []
"""


def test_channels_and_test_message(tmp_path, capsys, monkeypatch):
    receiver = Receiver(platforms.dingtalk("SECdingding0123456789")).start()
    monkeypatch.setenv("DING_SECRET", "SECdingding0123456789")
    try:
        path = tmp_path / "alerts.yaml"
        path.write_text(ROUTES.format(url=receiver.url))
        assert main(["alert", "channels", "--routes", str(path)]) == 0
        out = capsys.readouterr().out
        assert "ding\tdingtalk\thttp://127.0.0.1:" in out and "TOKEN" not in out
        assert "signed" in out and "route model=click_rank_v3 severity>=major -> ding" in out
        assert main(["alert", "test", "ding", "--routes", str(path)]) == 0
        assert len(receiver.posts) == 1
        assert "test message" in receiver.posts[0]["json"]["markdown"]["text"]
        title = receiver.posts[0]["json"]["markdown"]["title"]
        assert title.startswith("[TEST]") and "SLA breach" not in title  # not a real page
        monkeypatch.setenv("DING_SECRET", "wrong-secret-value")
        assert main(["alert", "test", "ding", "--routes", str(path)]) == 2
        assert "310000" in capsys.readouterr().err
    finally:
        receiver.stop()


def test_no_webhook_url_in_logs(tmp_path, caplog):
    import logging

    from correlator.alerts.channels import Channel
    from correlator.alerts.formats import alert_format
    from correlator.alerts.transport import HttpTransport
    from tests.alerts.test_formats import _message

    receiver = Receiver().start()
    caplog.set_level(logging.DEBUG)
    try:
        channel = Channel(name="s", kind="slack", url=receiver.url + "/services/T0/B0/SECRETXYZ")
        transport = HttpTransport(5.0)
        fmt = alert_format("slack")
        status, _ = transport.post(
            fmt.request(fmt.render(_message()), channel, now=0, delivery_id="")
        )
        transport.close()
        assert status == 200 and "SECRETXYZ" not in caplog.text
    finally:
        receiver.stop()


def test_test_message_checks_the_resolved_address_as_the_worker_does(tmp_path, capsys, monkeypatch):
    import socket

    receiver = Receiver().start()
    real = socket.getaddrinfo
    name = "hooks.example.test"  # a name no rule refuses, resolving to "this host"

    def getaddrinfo(host, port, *args, **kwargs):
        if host == name:
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("0.0.0.0", port))]
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    routes = (
        f"channels:\n  - name: hook\n    kind: webhook\n    url: http://{name}:{receiver.port}/x\n"
    )
    path = tmp_path / "alerts.yaml"
    path.write_text(routes + "routes: []\ndefault: [hook]\n")
    try:
        assert main(["alert", "test", "hook", "--routes", str(path)]) == 2
    finally:
        receiver.stop()
    err = capsys.readouterr().err
    assert receiver.posts == []
    assert "refused at send time" in err and "0.0.0.0" in err and "this host" in err, err
    assert err.count("\n") == 1, err
