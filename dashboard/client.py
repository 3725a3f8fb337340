"""A small HTTP client for the causeline service API."""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlsplit

import httpx
import numpy as np
import orjson

from dashboard.access import is_loopback


class ApiError(Exception):
    """A failed API call: the status and the service's message, ready to show."""

    def __init__(self, status: int, message: str, fields: dict[str, str] | None = None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.fields = fields or {}

    def explained(self) -> str:
        """Return what to show next to a form: each field and its reason, else the message."""
        return "; ".join(f"{k}: {v}" for k, v in self.fields.items()) or self.message


@dataclass(slots=True)
class FetchedSeries:
    """One fetched series: name, labels and float arrays of unix seconds and values."""

    name: str
    labels: dict[str, str]
    ts: np.ndarray
    values: np.ndarray


def _error(response: httpx.Response) -> ApiError:
    try:
        detail = response.json().get("detail")
    except ValueError:
        detail = response.text
    fields: dict[str, str] = {}
    if isinstance(detail, list):
        for item in detail:
            loc = [str(p) for p in item.get("loc", []) if p != "body"]
            name = item.get("field") or ".".join(loc) or "body"
            fields[name] = item.get("msg", "invalid")
        message = "; ".join(f"{k}: {v}" for k, v in fields.items())
    elif isinstance(detail, dict):
        fields[str(detail.get("field", "body"))] = str(detail.get("reason", detail))
        message = "; ".join(f"{k}: {v}" for k, v in fields.items())
    else:
        message = str(detail)
    return ApiError(response.status_code, message or response.reason_phrase, fields)


def segment(text) -> str:
    """Return text as one URL path segment: reserved characters and dot names escaped."""
    quoted = quote(str(text), safe="")
    return quoted.replace(".", "%2E") if set(quoted) <= {"."} else quoted


def transfer_headers(base_url: str) -> dict[str, str]:
    """Return headers asking a service on this machine not to compress: it costs CPU only."""
    host = urlsplit(base_url).hostname or ""
    return {"Accept-Encoding": "identity"} if is_loopback(host) else {}


def parse_matrix(doc: dict) -> list[FetchedSeries]:
    """Convert a Prometheus matrix response into series."""
    out = []
    for item in doc.get("data", {}).get("result", []):
        labels = dict(item["metric"])
        name = labels.pop("__name__", "")
        pairs = item.get("values", [])
        ts = np.fromiter((p[0] for p in pairs), np.float64, len(pairs))
        values = np.array([p[1] for p in pairs], dtype=np.float64)
        out.append(FetchedSeries(name, labels, ts, values))
    return out


class Routes:
    """The service's routes by name, over ``get``, ``post`` and ``put``.

    ``ApiClient`` sends them; a test's fake client answers ``get``/``post`` by path and gets
    the names for free. Pages call these, never a path of their own.
    """

    def get(self, path: str, **params) -> Any:
        """GET a path with query parameters."""
        raise NotImplementedError

    def post(self, path: str, body: dict | None = None, *, author: str | None = None) -> Any:
        """POST a JSON body as ``author``."""
        raise NotImplementedError

    def put(self, path: str, body: dict, *, author: str | None = None) -> Any:
        """PUT a JSON body as ``author``."""
        raise NotImplementedError

    def series(self, match: str, limit: int = 1000) -> list[dict]:
        """Return the series (name, labels) matching a selector."""
        return self.get("/api/v1/series", match=[match], limit=limit)["data"]

    def label_values(self, name: str, match: str | None = None, limit: int = 1000) -> list[str]:
        """Return the stored values of a label (of the series a selector matches, if given)."""
        match_list = [match] if match else None
        path = f"/api/v1/label/{segment(name)}/values"
        return self.get(path, match=match_list, limit=limit)["data"]

    def metric_catalog(self, limit: int = 1000, contains: str | None = None) -> dict:
        """Return the stored metric names with their series counts and label names."""
        return self.get("/api/v1/metadata/metrics", limit=limit, contains=contains or None)

    def changes(self, start=None, end=None, **filters) -> list[dict]:
        """Return changes in a window, oldest first."""
        return self.get("/api/v1/changes", start=start, end=end, **filters)

    def topology(self) -> dict:
        """Return the service graph."""
        return self.get("/api/v1/topology")

    def slas(self) -> list[dict]:
        """Return every SLA."""
        return self.get("/api/v1/slas")

    def incidents(self) -> list[dict]:
        """Return the incidents, newest first (without their suspects)."""
        return self.get("/api/v1/incidents")

    def incident(self, incident_id) -> dict:
        """Return one incident with its suspects, notes and timeline."""
        return self.get(f"/api/v1/incidents/{segment(incident_id)}")

    def incident_review(self, incident_id) -> str:
        """Return the incident's review as Markdown."""
        return self.get(f"/api/v1/incidents/{segment(incident_id)}/review")

    def act_on_incident(
        self, incident_id, action: str, body: dict | None, *, author: str | None
    ) -> dict:
        """Take an action on an incident (acknowledge, assign, resolve, notes, rerank...)."""
        path = f"/api/v1/incidents/{segment(incident_id)}/{segment(action)}"
        return self.post(path, body, author=author)

    def models(self) -> list[dict]:
        """Return the registered models."""
        return self.get("/api/v1/models")

    def model(self, name: str) -> dict:
        """Return one model with its versions."""
        return self.get(f"/api/v1/models/{segment(name)}")

    def model_card(self, name: str, version: str) -> dict:
        """Return a model version's card."""
        return self.get(f"/api/v1/models/{segment(name)}/versions/{segment(version)}/card")

    def fingerprints(self) -> list[dict]:
        """Return the environment fingerprints."""
        return self.get("/api/v1/fingerprints")

    def capacity_plan(self, body: dict) -> dict:
        """Return a capacity plan for the figures given."""
        return self.post("/api/v1/capacity/plan", body)

    def save_change(self, body: dict, *, author: str | None, change_id: str | None = None):
        """Record a change, or edit the one with ``change_id``; return it as stored."""
        if change_id is None:
            return self.post("/api/v1/changes", body, author=author)
        return self.put(f"/api/v1/changes/{segment(change_id)}", body, author=author)

    def on_call(self, model: str | None = None) -> dict:
        """Return who is on call now, per team (for a model, when given)."""
        return self.get("/api/v1/oncall", model=model)

    def rotations(self) -> list[dict]:
        """Return the on-call rotations."""
        return self.get("/api/v1/oncall/rotations")

    def overrides(self) -> list[dict]:
        """Return the on-call overrides."""
        return self.get("/api/v1/oncall/overrides")

    def add_on_call(self, kind: str, body: dict, *, author: str | None) -> dict:
        """Add a rotation or an override (``kind``: rotations, overrides)."""
        return self.post(f"/api/v1/oncall/{segment(kind)}", body, author=author)

    def sla(self, name: str) -> dict:
        """Return one SLA."""
        return self.get(f"/api/v1/slas/{segment(name)}")

    def save_sla(self, name: str, body: dict, *, author: str | None) -> dict:
        """Replace an SLA; return it as stored."""
        return self.put(f"/api/v1/slas/{segment(name)}", body, author=author)


class ApiClient(Routes):
    """Call the service's read and write endpoints; writes carry the person as author."""

    def __init__(
        self,
        base_url: str,
        *,
        token: str | None = None,
        timeout: float = 30.0,
        reader_token: Callable[[], str | None] | None = None,
    ):
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        headers.update(transfer_headers(base_url))
        self.base_url = base_url.rstrip("/")
        self.has_token = token is not None
        # The signed-in person's token, when there is one: reads go with it, not the service's.
        self.reader_token = reader_token
        self._http = httpx.Client(base_url=self.base_url, headers=headers, timeout=timeout)

    def close(self) -> None:
        """Close the connection pool."""
        self._http.close()

    def _call(self, method: str, path: str, **kwargs):
        reader = self.reader_token() if self.reader_token and method == "GET" else None
        if reader and "headers" not in kwargs:
            kwargs["headers"] = {"Authorization": f"Bearer {reader}"}
        try:
            response = self._http.request(method, path, **kwargs)
        except httpx.InvalidURL as exc:
            raise ApiError(400, f"not a valid request: {exc}") from exc
        except httpx.HTTPError as exc:
            raise ApiError(0, f"cannot reach the service at {self.base_url}: {exc}") from exc
        if response.status_code >= 400:
            raise _error(response)
        kind = response.headers.get("content-type", "")
        if kind.startswith("application/json"):
            return orjson.loads(response.content)
        if kind.startswith("text/html"):  # no API route: a page of a mounted app answered
            raise ApiError(404, f"the service has nothing at {path}")
        return response.text

    def whoami(self, token: str) -> str:
        """Return the name of a person's token; ApiError 401 when it is invalid or revoked."""
        doc = self._call("GET", "/api/v1/whoami", headers={"Authorization": f"Bearer {token}"})
        return str(doc["name"])

    def get(self, path: str, **params):
        """GET a path with query parameters (None values left out)."""
        return self._call("GET", path, params={k: v for k, v in params.items() if v is not None})

    def post(self, path: str, body: dict | None = None, *, author: str | None = None):
        """POST a JSON body, adding the author."""
        return self._call("POST", path, json=_with_author(body, author))

    def put(self, path: str, body: dict, *, author: str | None = None):
        """PUT a JSON body, adding the author."""
        return self._call("PUT", path, json=_with_author(body, author))

    def query_range(
        self, matches: list[str], start: float, end: float, step: float | None = None
    ) -> list[FetchedSeries]:
        """Return the series matching the selectors in [start, end]."""
        if not matches:
            return []
        doc = self.get("/api/v1/query_range", match=matches, start=start, end=end, step=step)
        return parse_matrix(doc)

    def query_many(
        self,
        groups: list[list[str]],
        start: float,
        end: float,
        step: float | None = None,
        *,
        failed: dict[int, ApiError] | None = None,
    ) -> list[list[FetchedSeries]]:
        """Run several range queries at once and return their series, in order.

        With ``failed``, a group the service refuses (a bad selector, say) reads as no series
        and its error is kept under its index; an unreachable service still raises.
        """

        def one(index_matches):
            index, matches = index_matches
            try:
                return self.query_range(matches, start, end, step)
            except ApiError as exc:
                if failed is None or exc.status == 0:
                    raise
                failed[index] = exc
                return []

        caller = contextvars.copy_context()  # workers see this request (the reader's token)

        def in_context(item):
            return caller.copy().run(one, item)

        with ThreadPoolExecutor(max_workers=max(1, min(4, len(groups)))) as pool:
            return list(pool.map(in_context, enumerate(groups)))


def _with_author(body: dict | None, author: str | None) -> dict:
    body = dict(body or {})
    if author:
        body["author"] = author
    return body
