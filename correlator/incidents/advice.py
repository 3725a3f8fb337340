"""Who to ask about each top suspect, and what to try first, from its kind."""

from __future__ import annotations

import re
from urllib.parse import urlencode

TOP = 5  # suspects that get a person and a next step
_URL = re.compile(r"https?://[^\s)>\]\"']+")
_SATURATION = re.compile(r"^(node|gpu|host|container)_|cpu|memory|disk")
_DRIFT = re.compile(r"input|score|feature_value|embedding")


def runbook(sla: dict) -> str | None:
    """Return the first link of the SLA's document (its runbook), or None."""
    found = _URL.search(str(sla.get("description") or ""))
    return found.group(0) if found else None


def _on_call(oncall: dict, team: str) -> str | None:
    who = oncall.get(team)  # algo or infra: a contact dict, or None when nobody is on call
    return who.get("person") or None if isinstance(who, dict) else None


def _where(labels: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(labels.items())) or "all series"


def _series_step(s: dict, model: str) -> str:
    metric, labels = str(s.get("metric") or ""), s.get("labels") or {}
    if s.get("drift") or (metric.endswith("_bucket") and _DRIFT.search(metric)):
        return (
            f"check what feeds {labels.get('model') or model or 'the model'}: compare the "
            f"producer of {metric.removesuffix('_bucket')} with the model card's input "
            "schema and the last good distribution"
        )
    host = labels.get("host") or labels.get("instance")
    if host and _SATURATION.search(metric):
        query = urlencode({"model": model}) if model else ""
        plan = f"/capacity?{query}" if query else "/capacity"
        return f"drain or scale {host} ({metric} moved); capacity plan: {plan}"
    if labels.get("service"):
        return f"ask the owner of service {labels['service']} about {metric} ({_where(labels)})"
    return f"look at {metric} on {_where(labels)} from its onset"


# Change kinds a rollback of the target undoes; any other change (a feature launched
# upstream, a kernel, a capacity move) is reverted as itself, its summary saying what it was.
ROLLED_BACK = frozenset({"deploy", "model", "image", "config", "version", "release"})


def _change_step(s: dict, change: dict | None) -> tuple[str, str | None]:
    change = change or {}
    what = change.get("target") or change.get("summary") or s.get("id")
    version = f" {change['version']}" if change.get("version") else ""
    kind = str(change.get("kind") or "deploy")
    if kind in ROLLED_BACK or not change.get("summary"):
        step = f"roll back {what}{version} (change {s.get('id')})"
    else:  # "revert demo-chg-3 (feature): query-expansion launched upstream ..."
        summary = " ".join(str(change["summary"]).split())[:160].rstrip(".")
        step = f"revert change {s.get('id')} ({kind}): {summary}"
    if change.get("url"):
        step += f" from its pipeline run: {change['url']}"
    return step, change.get("author") or change.get("person")


def advise(suspects: list[dict], *, changes: list[dict], oncall: dict, model: str) -> list[dict]:
    """Return the suspects with ``person`` and ``next_step`` on the top ones.

    A change names its author or the deploy's actor and says to roll it back (with the
    pipeline link its deploy hook sent); a series names the on-call person of its owning
    team and says what to check from its kind: drift, a saturated host or GPU, a service.
    """
    by_id = {c.get("id"): c for c in changes}
    out = []
    for i, s in enumerate(suspects):
        s = dict(s)
        if i < TOP:
            if s.get("kind") == "change":
                s["next_step"], person = _change_step(s, by_id.get(s.get("id")))
            else:
                s["next_step"], person = _series_step(s, model), None
            s["person"] = person or _on_call(oncall, str(s.get("owner") or ""))
        out.append(s)
    return out
