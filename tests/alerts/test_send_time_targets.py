"""At send time the host's resolved addresses pass the same rule, and the checked one is used."""

from __future__ import annotations

import pytest

from correlator.alerts.channels import HttpRequest
from correlator.alerts.outbox import enqueue_incident_event
from correlator.alerts.transport import HttpTransport, RefusedTarget
from correlator.alerts.worker import OutboxWorker
from correlator.settings import ServiceSettings
from correlator.store.engine import write_transaction
from correlator.store.tables import AlertOutbox
from tests.alerts.conftest import alert_settings, store_incident
from tests.alerts.receiver import Receiver

NAME = "hooks.receiver.test"


def _resolver(answers: dict[str, list[str]], asked: list[str]):
    def resolve(host: str, port: int) -> list[str]:
        asked.append(host)
        return answers[host]

    return resolve


def _request(port: int, host: str = NAME) -> HttpRequest:
    return HttpRequest(url=f"http://{host}:{port}/hook", body=b"{}", headers={})


def _settings(**extra) -> ServiceSettings:
    return ServiceSettings(bind_host="127.0.0.1", bind_port=8400, **extra)


def test_a_name_is_sent_to_the_address_that_was_checked():
    receiver = Receiver().start()
    asked: list[str] = []
    transport = HttpTransport(
        5.0, settings=_settings(), resolver=_resolver({NAME: ["127.0.0.1"]}, asked)
    )
    try:
        assert transport.post(_request(receiver.port))[0] == 200
    finally:
        transport.close()
        receiver.stop()
    assert asked == [NAME]
    assert receiver.posts[0]["headers"]["Host"] == f"{NAME}:{receiver.port}"


@pytest.mark.parametrize(
    ("addresses", "port", "why"),
    [
        (["169.254.169.254"], 80, "link-local"),
        (["93.184.216.34", "fd00:ec2::254"], 80, "AWS instance metadata over IPv6"),
        (["100.100.100.200"], 80, "Alibaba Cloud instance metadata"),
        (["0.0.0.0"], 9000, "means this host"),
        (["::ffff:127.0.0.1"], 8400, "this causeline service"),
        (["127.0.0.1"], 8400, "this causeline service"),
    ],
)
def test_a_name_resolving_to_a_refused_address_is_never_connected(addresses, port, why):
    receiver = Receiver().start() if port != 80 else None
    transport = HttpTransport(5.0, settings=_settings(), resolver=_resolver({NAME: addresses}, []))
    try:
        with pytest.raises(RefusedTarget) as err:
            transport.post(_request(port))
    finally:
        transport.close()
        if receiver:
            receiver.stop()
    assert why in str(err.value) and "CAUSELINE_ALERT_ALLOWED_HOSTS" in str(err.value)


def test_the_allow_list_holds_at_send_time_too():
    receiver = Receiver().start()
    settings = _settings(alert_allowed_hosts=NAME)
    transport = HttpTransport(5.0, settings=settings, resolver=_resolver({NAME: ["0.0.0.0"]}, []))
    try:
        assert transport.post(_request(receiver.port))[0] == 200
    finally:
        transport.close()
        receiver.stop()


def test_the_worker_fails_a_row_whose_host_resolves_to_metadata(engine):
    receiver = Receiver().start()
    try:
        channel = {"name": "hook", "kind": "webhook", "url": f"http://{NAME}/k3yPath0123456"}
        settings = alert_settings(engine, [channel])
        incident = store_incident(engine)
        with write_transaction(engine) as conn:
            enqueue_incident_event(conn=conn, incident=incident, event="opened", settings=settings)
        transport = HttpTransport(
            5.0, settings=settings, resolver=_resolver({NAME: ["169.254.169.254"]}, [])
        )
        report = OutboxWorker(engine, settings, holder="w1", transport=transport).run_once()
        transport.close()
        assert report["failed"] == 1 and report["retry"] == 0
        with engine.connect() as conn:
            error = conn.execute(AlertOutbox.__table__.select()).one().last_error
        assert error.startswith("refused at send time: ") and "link-local" in error
        assert "k3yPath" not in error
    finally:
        receiver.stop()


def test_the_worker_checks_at_send_time_by_default():
    worker = OutboxWorker(None, _settings(), holder="w1")  # type: ignore[arg-type]
    try:
        with pytest.raises(RefusedTarget, match="means this host"):
            worker.transport.post(_request(9000, host="0"))  # 0 is 0.0.0.0: this host
    finally:
        worker.close()


@pytest.mark.parametrize("address", ["0.0.0.0", "169.254.169.254", "100.100.100.200"])
def test_a_transport_built_without_settings_still_refuses_what_no_setting_allows(address):
    transport = HttpTransport(5.0, resolver=_resolver({NAME: [address]}, []))
    try:
        with pytest.raises(RefusedTarget, match="refused at send time"):
            transport.post(_request(9))
    finally:
        transport.close()
