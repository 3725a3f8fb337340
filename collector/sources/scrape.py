"""Scrape a model server's Prometheus endpoint and map it to the vocabulary."""

from __future__ import annotations

import time
from collections.abc import Callable

import httpx

from collector.exposition import parse_exposition
from collector.reading import Reading
from collector.sources.scrape_maps import MAPPERS


class ScrapeSource:
    """Fetch ``url`` each round; ``flavor`` is triton, vllm, torchserve or causeline."""

    def __init__(
        self,
        url: str,
        *,
        flavor: str,
        labels: dict[str, str],
        client: httpx.Client | None = None,
        timeout: float = 5.0,
        monotonic: Callable[[], float] = time.monotonic,
    ):
        if flavor not in MAPPERS:
            raise ValueError(f"unknown scrape flavor {flavor!r}; one of {sorted(MAPPERS)}")
        self.name = f"scrape:{flavor}"
        self.url = url
        self._mapper = MAPPERS[flavor](labels)
        self._client = client or httpx.Client(timeout=timeout)
        self._own_client = client is None
        self._monotonic = monotonic
        self._last: float | None = None
        self._up_labels = {**labels, "target": url}

    def sample(self) -> Reading:
        """Scrape once; an unreachable target yields ``model_scrape_up 0``."""
        try:
            resp = self._client.get(self.url)
            resp.raise_for_status()
            scraped = parse_exposition(resp.text)
        except (httpx.HTTPError, ValueError) as exc:
            out = Reading()
            out.add("model_scrape_up", 0, self._up_labels)
            self._last = None  # the next good scrape re-bases counters
            self._mapper.deltas = type(self._mapper.deltas)()
            if not isinstance(exc, httpx.HTTPError):
                raise
            return out
        now = self._monotonic()
        seconds = 0.0 if self._last is None else now - self._last
        self._last = now
        out = self._mapper.map(scraped, seconds)
        out.add("model_scrape_up", 1, self._up_labels)
        return out

    def close(self) -> None:
        """Close the HTTP client if this source made it."""
        if self._own_client:
            self._client.close()
