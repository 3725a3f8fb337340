"""Assembly of an agent from its configuration (the composition root of the agent)."""

from __future__ import annotations

import json
import logging
import os

from collector.agent import Agent
from collector.batcher import Batcher
from collector.config import AgentConfig, ConfigError
from collector.destination import BatchSink, Destination, Destinations, Sender
from collector.health import AgentHealth
from collector.reading import Source
from collector.remote_write import RemoteWriteSender
from collector.shipper import Backoff, Shipper
from collector.spool import Spool

log = logging.getLogger(__name__)


def _fingerprint_collector(config: AgentConfig):
    from collector.fingerprint import DEFAULT_PACKAGES, collect_fingerprint

    packages = config.fingerprint_packages or DEFAULT_PACKAGES
    return lambda: collect_fingerprint(packages=packages)


def build_sources(config: AgentConfig, *, for_print: bool = False) -> list[Source]:
    """Create the configured sources; threads start only where the agent needs them."""
    host = config.resolved_host()
    out: list[Source] = []
    for name in config.sources:
        if name == "host":
            from collector.sources.host import HostSource

            out.append(HostSource(host=host))
        elif name == "gpu":
            from collector.sources.gpu import GpuSource

            out.append(GpuSource(host=host, xid_events=not for_print))
        elif name == "restarts":
            from collector.sources.restarts import ContainerRestartSource

            out.append(ContainerRestartSource(host=host, root=config.pod_log_root))
        elif name == "fingerprint":
            if not for_print:
                from collector.sources.fingerprint import FingerprintSource

                out.append(
                    FingerprintSource(
                        _fingerprint_collector(config),
                        host=host,
                        server=config.server,
                        token=config.token,
                        interval=config.fingerprint_interval,
                    )
                )
        else:
            raise ConfigError(
                f"unknown source {name!r}; use host, gpu, restarts, fingerprint "
                "(logs, scrape and checks are configured as lists)"
            )
    out.extend(_logs(config, host))
    out.extend(_scrapes(config, host))
    if config.checks:
        out.append(_checks(config, host, start_thread=not for_print))
    return out


def _logs(config: AgentConfig, host: str) -> list[Source]:
    from collector.sources.logtail import LogTailSource

    out: list[Source] = []
    for i, spec in enumerate(config.logs):
        if "path" not in spec or "model" not in spec:
            raise ConfigError(f"logs[{i}]: needs 'path' and 'model'")
        labels = {"model": spec["model"], "host": host}
        if spec.get("instance"):
            labels["instance"] = spec["instance"]
        out.append(
            LogTailSource(
                spec["path"],
                labels=labels,
                fields=spec.get("fields"),
                state_file=spec.get("state_file"),
            )
        )
    return out


def _scrapes(config: AgentConfig, host: str) -> list[Source]:
    from collector.sources.scrape import ScrapeSource

    out: list[Source] = []
    for i, spec in enumerate(config.scrape):
        if "url" not in spec or "flavor" not in spec:
            raise ConfigError(f"scrape[{i}]: needs 'url' and 'flavor'")
        labels = {"host": host, **({"instance": spec["instance"]} if spec.get("instance") else {})}
        try:
            out.append(ScrapeSource(spec["url"], flavor=spec["flavor"], labels=labels))
        except ValueError as exc:
            raise ConfigError(f"scrape[{i}]: {exc}") from exc
    return out


def _checks(config: AgentConfig, host: str, *, start_thread: bool):
    from collector.config import parse_duration
    from collector.sources.synthetic import CheckTarget, SyntheticCheckSource

    targets = []
    for i, spec in enumerate(config.checks):
        spec = dict(spec)
        if "url" not in spec:
            raise ConfigError(f"checks[{i}]: needs 'url'")
        if "interval" in spec:
            spec["interval"] = parse_duration(spec["interval"])
        card_path = spec.pop("card", None)
        try:
            if card_path:
                with open(card_path) as fh:
                    targets.append(CheckTarget.from_card(json.load(fh), **spec))
            else:
                targets.append(CheckTarget(**spec))
        except (OSError, ValueError, TypeError) as exc:
            raise ConfigError(f"checks[{i}]: {exc}") from exc
    return SyntheticCheckSource(targets, host=host, start_thread=start_thread)


REMOTE_WRITE_SPOOL = "remote-write"  # under spool_dir: its own spool, its own bound


def build_destinations(config: AgentConfig, health: AgentHealth) -> list[Destination]:
    """Return causeline's ingest and/or the remote-write endpoint, each with its own spool."""
    out: list[Destination] = []
    if config.server or config.token:
        if not (config.server and config.token):
            raise ConfigError(
                "--server and --token are needed together (or CAUSELINE_AGENT_SERVER/_TOKEN)"
            )
        spool = Spool(config.spool_dir, max_bytes=config.spool_max_bytes, health=health)
        shipper = Shipper(
            spool,
            server=config.server,
            token=config.token,
            health=health,
            backoff=Backoff(cap=config.retry_max),
        )
        out.append(Destination("causeline", spool, shipper))
    health.own_delivery = bool(out)
    if config.remote_write_url:
        out.append(_remote_write(config, config.remote_write_url, health))
    if not out:
        raise ConfigError(
            "--server and --token are needed (or CAUSELINE_AGENT_SERVER/_TOKEN), "
            "or remote_write_url to send to a Prometheus remote-write endpoint"
        )
    return out


def _remote_write(config: AgentConfig, url: str, health: AgentHealth) -> Destination:
    own = AgentHealth()
    health.add_destination("remote_write", own)
    directory = os.path.join(config.spool_dir, REMOTE_WRITE_SPOOL)
    spool = Spool(directory, max_bytes=config.spool_max_bytes, health=own)
    basic = None
    if config.remote_write_username is not None and config.remote_write_password is not None:
        basic = (config.remote_write_username, config.remote_write_password)
    sender = RemoteWriteSender(
        spool,
        url=url,
        headers=config.remote_write_headers,
        bearer_token=config.remote_write_bearer_token,
        basic_auth=basic,
        timeout=config.remote_write_timeout,
        backoff=Backoff(cap=config.retry_max),
        health=own,
    )
    return Destination("remote_write", spool, sender)


def build_agent(config: AgentConfig, sources: list[Source] | None = None) -> Agent:
    """Return a ready agent (spools, senders, batcher) for ``config``."""
    health = AgentHealth()
    destinations = build_destinations(config, health)
    spool: BatchSink
    shipper: Sender
    if len(destinations) == 1:
        spool, shipper = destinations[0].spool, destinations[0].sender
    else:
        spool = shipper = Destinations(destinations, health=health)
    batcher = Batcher(
        max_samples=config.batch_max_samples,
        max_age=config.batch_max_age or max(config.interval, 10.0),
    )
    if sources is None:
        sources = build_sources(config)
    return Agent(
        sources,
        host=config.resolved_host(),
        interval=config.interval,
        spool=spool,
        shipper=shipper,
        batcher=batcher,
        health=health,
    )
