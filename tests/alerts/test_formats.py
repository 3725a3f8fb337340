"""Each channel's payload, posted to a loopback receiver that checks it like the platform."""

from __future__ import annotations

import time

import pytest

from correlator.alerts import alertmanager
from correlator.alerts.channels import Channel
from correlator.alerts.formats import FORMATS, alert_format
from correlator.alerts.messages import build_message
from correlator.alerts.text import markdown
from correlator.alerts.transport import HttpTransport
from correlator.analysis.confidence import UNLIKE
from tests.alerts import platforms
from tests.alerts.receiver import Receiver
from tests.alerts.samples import SLA, T0, sample_incident

SECRET = "SECabcdef0123456789"


def _message(event="opened", **extra):
    inc = sample_incident(**extra)
    return build_message(
        inc, event, sla=SLA, public_url="https://causeline.example", value=120.0, now=T0 + 60
    )


def test_message_says_what_came_before_the_breach():
    text = markdown(_message())
    assert "model_latency_p99_ms > 50 for 120 s" in text
    assert "120 ms vs threshold 50 ms" in text  # with the metric's unit
    assert "2024-12-02 09:25:00 UTC" in text  # since when
    assert "local (host=gpu-node-2, instance=i-3)" in text
    assert "1. model_input_length_bucket{instance=i-3} [owner algo, 4 min before]" in text
    assert "long-input share 5% -> 35%" in text and "change chg-17" in text
    assert "fourth" not in text  # top 3 only
    assert "UNPLANNED: click_rank_v3 3.2.1 -> 3.3.0 canary" in text
    assert "li.wei (@li.wei)" in text and "wang.fang (@wang.fang)" in text
    assert "https://causeline.example/board?model=click_rank_v3&from=1733127900&to=" in text
    assert "https://causeline.example/incidents/3" in text


def test_the_next_step_comes_right_after_the_value():
    incident = sample_incident()
    incident["suspects"][0] |= {"next_step": "roll back the canary.", "person": "li.wei"}
    text = markdown(
        build_message(
            incident, "opened", sla=SLA, public_url="https://c.example", value=120.0, now=T0
        )
    )
    assert "- **Next step**: roll back the canary (ask li.wei)" in text
    assert text.index("**Value**") < text.index("**Next step**") < text.index("**Since**")


def test_resolve_message_has_duration_and_final_top_suspect():
    msg = _message("resolved", status="resolved", resolved_at=T0 + 1800, breach_end=T0 + 1790)
    text = markdown(msg)
    # The breach's length (its end, not the resolution), said as the page and review say it.
    assert msg.title.startswith("[CRITICAL] Resolved") and "**Duration**: 29m 50s" in text
    assert "Final top suspect" in text and "gpu_utilization_percent" not in text


CASES = [
    ("slack", None, lambda s: platforms.slack),
    ("feishu", SECRET, platforms.feishu),
    ("feishu", None, platforms.feishu),
    ("dingtalk", SECRET, platforms.dingtalk),
    ("dingtalk", None, platforms.dingtalk),
    ("wecom", None, lambda s: platforms.wecom),
    ("teams", None, lambda s: platforms.teams),
    ("webhook", SECRET, platforms.generic),
    ("grafana", "glsa_token", platforms.grafana),
]


@pytest.mark.parametrize(("kind", "secret", "checker"), CASES)
@pytest.mark.parametrize("event", ["opened", "resolved"])
def test_payload_accepted_by_platform_check(kind, secret, checker, event):
    receiver = Receiver(checker(secret)).start()
    transport = HttpTransport(5.0)
    try:
        fmt = alert_format(kind)
        base = receiver.url + {"dingtalk": "/robot/send?access_token=abc123", "grafana": ""}.get(
            kind, "/hook"
        )
        channel = Channel(name=kind, kind=kind, url=base, secret=secret)
        extra = {"resolved_at": T0 + 600} if event == "resolved" else {}
        payload = fmt.render(_message(event, **extra))
        req = fmt.request(payload, channel, now=time.time(), delivery_id="causeline-1")
        status, text = transport.post(req)
        assert fmt.error(status, text) is None, text
        assert len(receiver.posts) == 1
        if secret:  # the same message signed with a wrong secret is refused
            wrong = Channel(name=kind, kind=kind, url=base, secret=SECRET + "x")
            req = fmt.request(payload, wrong, now=time.time(), delivery_id="causeline-1")
            assert fmt.error(*transport.post(req)) is not None
    finally:
        transport.close()
        receiver.stop()


def test_alertmanager_alert_fields():
    alert = alertmanager.render(_message())
    channel = Channel(name="am", kind="alertmanager", url="http://am:9093", resend_seconds=30)
    req = alertmanager.request(alert, channel, now=T0, delivery_id="x")
    assert req.url == "http://am:9093/api/v2/alerts"
    body = __import__("json").loads(req.body)
    assert body[0]["labels"]["alertname"] == "CauselineSLABreach"
    assert body[0]["labels"]["incident"] == "3" and body[0]["labels"]["team"] == "algo"
    assert body[0]["startsAt"] == "2024-12-02T09:25:00.000Z"
    assert body[0]["endsAt"] == "2024-12-02T09:27:00.000Z"  # firing: 4 re-send periods
    assert all(isinstance(v, str) for v in body[0]["annotations"].values())
    resolved = alertmanager.render(_message("resolved", resolved_at=T0 + 600))
    assert resolved["endsAt"] == "2024-12-02T09:35:00.000Z"


def test_the_message_says_what_to_try_first_and_whom_to_ask():
    inc = sample_incident()
    inc["suspects"][1] |= {"next_step": "roll back model:click_rank_v3 3.3.0", "person": "ana"}
    opened = markdown(
        build_message(inc, "opened", sla=SLA, public_url="https://c.example", now=T0 + 60)
    )
    assert "change chg-17 [owner algo, 10 min before]" in opened
    assert "Next: roll back model:click_rank_v3 3.3.0 (ask ana)." in opened
    assert "canary on i-3, unplanned. Next: roll back" in opened  # the evidence ends first
    resolved = markdown(
        build_message(inc, "resolved", sla=SLA, public_url="https://c.example", now=T0 + 60)
    )
    assert "Next:" not in resolved


def test_the_registry_names_every_format_and_refuses_an_unknown_kind():
    from correlator.alerts.formats import FORMATS, KINDS, FollowingFormat

    assert KINDS == (
        "slack",
        "feishu",
        "dingtalk",
        "wecom",
        "teams",
        "webhook",
        "alertmanager",
        "grafana",
    )
    for fmt in FORMATS.values():
        assert callable(fmt.render) and callable(fmt.request) and callable(fmt.error)
    # Only Alertmanager keeps the first message's identity in later ones.
    assert [k for k, f in FORMATS.items() if isinstance(f, FollowingFormat)] == ["alertmanager"]
    with pytest.raises(ValueError, match="unknown channel kind 'pager'; one of slack, feishu"):
        alert_format("pager")


def test_grafana_annotation_is_a_point_then_a_region_tagged_and_linking_back():
    fmt = alert_format("grafana")
    opened = fmt.render(_message())
    assert opened["time"] == round(T0 * 1000) and "timeEnd" not in opened
    assert {"causeline", "incident:3", "event:opened", "model:click_rank_v3", "team:algo"} <= set(
        opened["tags"]
    )
    assert 'href="https://causeline.example/incidents/3"' in opened["text"]
    resolved = fmt.render(_message("resolved", resolved_at=T0 + 600))
    assert (resolved["time"], resolved["timeEnd"]) == (round(T0 * 1000), round((T0 + 600) * 1000))
    channel = Channel(name="g", kind="grafana", url="https://grafana.example/", secret="tok")
    req = fmt.request(opened, channel, now=T0, delivery_id="x")
    assert req.url == "https://grafana.example/api/annotations"
    assert req.headers["Authorization"] == "Bearer tok"
    hostile = fmt.render(_message(sla="<script>x</script>"))
    assert "<script>" not in hostile["text"]


@pytest.mark.parametrize(
    ("p", "said"),
    [
        (0.83, "| likely (83%): model input length on i-3"),
        (0.55, "| possibly (55%): model input length on i-3"),
        (0.31, "| unsure (31%): compare the top 3"),
    ],
)
def test_the_first_line_says_how_far_to_trust_the_top_suspect(p, said):
    msg = _message(confidence=p)
    assert msg.title == f"[CRITICAL] SLA breach: click_rank_v3 p99 latency {said}"
    assert msg.confidence == p
    assert markdown(msg).splitlines()[0].endswith(said)
    # Without a measured confidence, or once resolved, the title says nothing of it.
    assert _message().title == "[CRITICAL] SLA breach: click_rank_v3 p99 latency"
    assert "|" not in _message("resolved", confidence=p, resolved_at=T0 + 600).title


def test_the_first_line_says_when_no_past_incident_was_of_the_size():
    msg = _message(confidence=0.5, confidence_says=UNLIKE)
    assert msg.title.endswith("| unsure (no past incident had this many series): compare the top 3")


@pytest.mark.parametrize("kind", sorted(FORMATS))
def test_every_format_says_who_acknowledged(kind):
    # A name the sample's on-call and suspects do not hold: only the title can carry it.
    incident = sample_incident(acknowledged_by="ack.taker", acknowledged_at=T0 + 120)
    message = build_message(
        incident, "acknowledged", sla=SLA, public_url="https://c.example", value=120.0, now=T0
    )
    assert message.title.startswith("[CRITICAL] Acknowledged by ack.taker: ")
    rendered = str(alert_format(kind).render(message))
    assert "ack.taker" in rendered, kind
