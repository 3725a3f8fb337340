"""Read range queries from a Prometheus-compatible HTTP API, chunked, retried and timed out."""

from __future__ import annotations

import math
from datetime import UTC, datetime

from correlator.bundle import Series
from correlator.promsource.chunks import plan_chunks
from correlator.promsource.convert import merge_series, series_from_result
from correlator.promsource.mapping import Mapping, MetricRule

RETRY_ON_STATUS = (429, 500, 502, 503, 504)


class PromSourceError(RuntimeError):
    """A query that failed; the message names the server, the query and the window."""


def _retry(retries: int, backoff: float):
    from urllib3.util.retry import Retry

    return Retry(
        total=retries,
        connect=retries,
        read=retries,
        status=retries,
        backoff_factor=backoff,
        status_forcelist=RETRY_ON_STATUS,
        allowed_methods=frozenset({"GET", "POST"}),
        raise_on_status=False,
    )


def connect(url: str, *, timeout: float = 30.0, retries: int = 3, backoff: float = 0.5):
    """Return a ``PrometheusConnect`` with bounded retries (exponential backoff) and a timeout."""
    from prometheus_api_client import PrometheusConnect

    return PrometheusConnect(
        url=url.rstrip("/"), retry=_retry(retries, backoff), timeout=timeout, disable_ssl=False
    )


def _when(ts: float) -> datetime:
    return datetime.fromtimestamp(ts, UTC)


class PrometheusReader:
    """Read vocabulary series through a mapping; ``client`` is any ``PrometheusConnect``-alike."""

    def __init__(self, url: str, mapping: Mapping, *, client=None, **options):
        self.url = url.rstrip("/")
        self.mapping = mapping
        self.client = client if client is not None else connect(self.url, **options)

    def query_range(self, query: str, start: float, end: float, step: float) -> list[dict]:
        """Run one PromQL range query in chunks and return the raw results of every chunk."""
        start, end = math.floor(start), math.ceil(end)
        results: list[dict] = []
        for s, e in plan_chunks(start, end, step, self.mapping.max_points):
            try:
                results += self.client.custom_query_range(
                    query, start_time=_when(s), end_time=_when(e), step=f"{step:g}"
                )
            except Exception as exc:  # requests, urllib3 and the client's own errors
                raise PromSourceError(
                    f"Prometheus at {self.url}: query {query!r} over [{s:.0f}, {e:.0f}] "
                    f"step {step:g}s failed: {type(exc).__name__}: {exc}"
                ) from exc
        return results

    def count(self, query: str, at: float) -> int:
        """Return how many series a query answers at a time (one instant query)."""
        try:
            result = self.client.custom_query(f"count(({query}))", params={"time": f"{at:.3f}"})
        except Exception as exc:  # requests, urllib3 and the client's own errors
            raise PromSourceError(
                f"Prometheus at {self.url}: count of {query!r} failed: {type(exc).__name__}: {exc}"
            ) from exc
        return int(float(result[0]["value"][1])) if result else 0

    def read_rule(self, rule: MetricRule, start: float, end: float, step: float) -> list[Series]:
        """Return one vocabulary metric's series in [start, end]."""
        return series_from_result(self.query_range(rule.query, start, end, step), rule)

    def read_raw(
        self, query: str, name: str, start: float, end: float, step: float | None = None
    ) -> list[Series]:
        """Return a PromQL query's series named ``name``, every label but ``__name__`` kept."""
        rule = MetricRule(metric=name, query=query, keep_all=True, drop=("__name__",))
        return self.read_rule(rule, start, end, float(step or self.mapping.step_seconds))

    def close(self) -> None:
        """Close the client's HTTP session, when it has one."""
        close = getattr(self.client, "close", None)
        if close is not None:
            close()

    def read(self, names, start: float, end: float, step: float | None = None) -> list[Series]:
        """Return the series of every named metric the mapping serves, in [start, end]."""
        step = float(step or self.mapping.step_seconds)
        out: list[Series] = []
        for name in sorted(set(names) & self.mapping.metrics):
            out += self.read_rule(self.mapping.rules[name], start, end, step)
        return merge_series(out)
