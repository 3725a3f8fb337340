"""The Prometheus side of the per-metric choice: mapped metrics, and raw selectors on request."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from correlator.bundle import Series
from correlator.promsource.convert import merge_series
from correlator.promsource.mapping import Mapping, load_mapping
from correlator.promsource.narrow import narrowed, pushed_down
from correlator.promsource.reader import PrometheusReader
from correlator.selector import Selector

if TYPE_CHECKING:
    from correlator.settings import ServiceSettings


class PrometheusSource:
    """A metric source for the store windows and the query API: mapped metrics, raw selectors."""

    def __init__(self, reader: PrometheusReader, *, step: float | None = None):
        self.reader = reader
        self.step = step

    @property
    def url(self) -> str:
        """Return the server's URL."""
        return self.reader.url

    @property
    def metrics(self) -> frozenset[str]:
        """Return the vocabulary names read from Prometheus."""
        return self.reader.mapping.metrics

    def read(self, *, names, start: float, end: float) -> list[Series]:
        """Return the named metrics' series in [start, end]."""
        return self.reader.read(names, start, end, self.step)

    def count(self, *, names, at: float) -> int:
        """Return how many series the named metrics' rules answer at a time."""
        rules = self.reader.mapping.rules
        return sum(self.reader.count(rules[n].query, at) for n in sorted(set(names) & self.metrics))

    def read_in_scope(
        self, *, names, start: float, end: float, values: dict, max_series: int | None
    ) -> tuple[list[Series], list[str]]:
        """Return the named metrics' series of a scope's label values, and what was left out.

        A rule whose query is a plain selector is read narrowed to the scope (``narrow.py``);
        another is read whole only when it answers at most ``max_series`` series (None: read
        whole, uncounted).
        """
        step = float(self.step or self.reader.mapping.step_seconds)
        wanted = {k: set(v) for k, v in values.items()}
        out: list[Series] = []
        left_out: list[str] = []
        for name in sorted(set(names) & self.metrics):
            rule = self.reader.mapping.rules[name]
            query = narrowed(rule, wanted)
            if query is None and max_series is not None:
                held = self.reader.count(rule.query, end)
                if held > max_series:
                    left_out.append(f"{name}: {held} series, not narrowed to the scope")
                    continue
            out += self.reader.read_rule(replace(rule, query=query or rule.query), start, end, step)
        return merge_series(out), left_out

    def select(
        self, *selectors: Selector, start: float, end: float, step: float | None = None
    ) -> list[Series]:
        """Return the mapped series any selector picks, read once (matchers apply after mapping).

        A named metric whose rule is a plain selector is asked for the selectors' matchers
        (``pushed_down``), so a panel of four hosts' GPUs does not read the fleet's.
        """
        given = {sel.name for sel in selectors if sel.name}
        if any(not sel.name for sel in selectors):  # no metric name: every mapped metric
            found = self.reader.read(self.metrics, start, end, step or self.step)
        else:
            step = float(step or self.step or self.reader.mapping.step_seconds)
            out: list[Series] = []
            for name in sorted(given & self.metrics):
                rule = self.reader.mapping.rules[name]
                query = pushed_down(rule, [sel for sel in selectors if sel.name == name])
                out += self.reader.read_rule(
                    replace(rule, query=query or rule.query), start, end, step
                )
            found = merge_series(out)
        return [s for s in found if any(sel.matches(s.name, s.labels) for sel in selectors)]

    def select_raw(
        self, selector: Selector, *, start: float, end: float, step: float | None = None
    ) -> list[Series]:
        """Return what a named selector picks on the server as it is (every label kept)."""
        if not selector.name:
            raise ValueError("a raw Prometheus read needs a metric name")
        return self.reader.read_raw(selector.promql(), selector.name, start, end, step or self.step)

    def close(self) -> None:
        """Release the HTTP connections."""
        self.reader.close()


def make_source(
    url: str,
    mapping: Mapping | str | None = None,
    *,
    step: float | None = None,
    timeout: float = 30.0,
    retries: int = 3,
) -> PrometheusSource:
    """Return a source for a server URL and a mapping (object, file path, or built-in)."""
    if not isinstance(mapping, Mapping):
        mapping = load_mapping(mapping)
    reader = PrometheusReader(url, mapping, timeout=timeout, retries=retries)
    return PrometheusSource(reader, step=step)


def source_from_settings(settings: ServiceSettings) -> PrometheusSource | None:
    """Return the source the settings' prometheus_* fields describe, or None without a URL."""
    url = getattr(settings, "prometheus_url", None)
    if not url:
        return None
    return make_source(
        url,
        settings.prometheus_mapping,
        step=settings.prometheus_step_seconds,
        timeout=settings.prometheus_timeout_seconds,
        retries=settings.prometheus_retries,
    )
