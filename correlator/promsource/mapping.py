"""The mapping from vocabulary metric names to PromQL queries and label rules."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
_LABEL = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
BUILT_IN = "built-in"  # ``extends: built-in`` starts from the shipped mapping
MAX_EXTENDS = 4  # files one mapping may stand on, in a chain


class MappingError(ValueError):
    """A mapping file that cannot be used; names the file and the field."""


@dataclass(frozen=True)
class LabelRule:
    """Make one output label from a source label, optionally rewritten by a regex."""

    target: str
    source: str
    regex: re.Pattern | None = None
    replacement: str = r"\1"

    def apply(self, labels: dict[str, str]) -> str | None:
        """Return the output value, or None when the source label is absent or empty."""
        value = labels.get(self.source)
        if not value:
            return None
        if self.regex is None:
            return value
        match = self.regex.fullmatch(value)
        return match.expand(self.replacement) if match else value


@dataclass(frozen=True)
class MetricRule:
    """How one vocabulary metric is read: its PromQL query and the labels it keeps."""

    metric: str
    query: str
    labels: tuple[LabelRule, ...] = ()
    keep: tuple[str, ...] = ()
    keep_all: bool = False
    drop: tuple[str, ...] = ("job", "__name__")
    scale: float = 1.0

    def convert_labels(self, raw: dict[str, str]) -> dict[str, str]:
        """Return the vocabulary labels of one result series."""
        if self.keep_all:
            out = {k: v for k, v in raw.items() if k not in self.drop}
        else:
            out = {k: raw[k] for k in self.keep if raw.get(k)}
        for rule in self.labels:
            value = rule.apply(raw)
            if value is not None:
                if rule.source != rule.target and self.keep_all:
                    out.pop(rule.source, None)
                out[rule.target] = value
        return out


@dataclass(frozen=True)
class Mapping:
    """Every metric read from Prometheus, by vocabulary name."""

    rules: dict[str, MetricRule] = field(default_factory=dict)
    max_points: int = 11_000
    step_seconds: float = 15.0
    origin: str = "<built-in>"

    @property
    def metrics(self) -> frozenset[str]:
        """Return the vocabulary names this mapping serves."""
        return frozenset(self.rules)


def _labels(spec: object, where: str) -> tuple[LabelRule, ...]:
    if spec is None:
        return ()
    if not isinstance(spec, dict):
        raise MappingError(f"{where}.labels: must map output label -> source label")
    out = []
    for target, src in spec.items():
        if not isinstance(target, str) or not _LABEL.fullmatch(target):
            raise MappingError(f"{where}.labels: {target!r} is not a label name")
        if isinstance(src, str):
            out.append(LabelRule(target, src))
            continue
        if not isinstance(src, dict) or not isinstance(src.get("from"), str):
            raise MappingError(f"{where}.labels.{target}: give a label name or {{from, regex}}")
        regex = None
        if src.get("regex") is not None:
            try:
                regex = re.compile(str(src["regex"]))
            except re.error as exc:
                raise MappingError(f"{where}.labels.{target}.regex: {exc}") from exc
        out.append(LabelRule(target, src["from"], regex, str(src.get("replacement", r"\1"))))
    return tuple(out)


def _names(spec: object, where: str) -> tuple[str, ...]:
    if spec is None:
        return ()
    if not isinstance(spec, list) or not all(isinstance(x, str) for x in spec):
        raise MappingError(f"{where}: must be a list of label names")
    return tuple(spec)


def _rule(metric: str, spec: object, where: str) -> MetricRule:
    if isinstance(spec, str):
        spec = {"query": spec}
    if not isinstance(spec, dict) or not isinstance(spec.get("query"), str):
        raise MappingError(f"{where}: needs a 'query' (a PromQL expression)")
    unknown = set(spec) - {"query", "labels", "keep", "drop", "scale", "help"}
    if unknown:
        raise MappingError(f"{where}: unknown field(s) {', '.join(sorted(unknown))}")
    keep = spec.get("keep", [])
    keep_all = keep == "all"
    scale = spec.get("scale", 1.0)
    if not isinstance(scale, int | float) or isinstance(scale, bool):
        raise MappingError(f"{where}.scale: must be a number")
    return MetricRule(
        metric=metric,
        query=spec["query"].strip(),
        labels=_labels(spec.get("labels"), where),
        keep=() if keep_all else _names(keep, f"{where}.keep"),
        keep_all=keep_all,
        drop=_names(spec.get("drop", ["job"]), f"{where}.drop") + ("__name__",),
        scale=float(scale),
    )


def parse_mapping(doc: object, origin: str = "<mapping>", base: Mapping | None = None) -> Mapping:
    """Validate a parsed mapping document; raise ``MappingError`` naming the field.

    With ``base`` (the mapping the document ``extends``), the document's rules replace the
    base's rules of the same metrics and keep the others.
    """
    if not isinstance(doc, dict):
        raise MappingError(f"{origin}: must be a mapping with 'metrics' and 'passthrough'")
    fields = {"version", "max_points", "step_seconds", "metrics", "passthrough", "extends"}
    unknown = set(doc) - fields
    if unknown:
        raise MappingError(f"{origin}: unknown field(s) {', '.join(sorted(unknown))}")
    if doc.get("version", 1) != 1:
        raise MappingError(f"{origin}: version must be 1")
    rules: dict[str, MetricRule] = {}
    metrics = doc.get("metrics") or {}
    if not isinstance(metrics, dict):
        raise MappingError(f"{origin}: 'metrics' must map vocabulary name -> rule")
    for name, spec in metrics.items():
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise MappingError(f"{origin}: metrics: {name!r} is not a metric name")
        rules[name] = _rule(name, spec, f"{origin}: metrics.{name}")
    passthrough = doc.get("passthrough") or []
    if not isinstance(passthrough, list):
        raise MappingError(f"{origin}: 'passthrough' must be a list of metric names")
    for name in passthrough:
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise MappingError(f"{origin}: passthrough: {name!r} is not a metric name")
        if name in rules:
            raise MappingError(f"{origin}: {name} is both in 'metrics' and 'passthrough'")
        rules[name] = MetricRule(metric=name, query=name, keep_all=True)
    if base is not None:
        rules = {**base.rules, **rules}
    max_points = doc.get("max_points", base.max_points if base else 11_000)
    step = doc.get("step_seconds", base.step_seconds if base else 15.0)
    if not isinstance(max_points, int) or max_points < 2:
        raise MappingError(f"{origin}: max_points must be an integer >= 2")
    if not isinstance(step, int | float) or step <= 0:
        raise MappingError(f"{origin}: step_seconds must be a positive number")
    return Mapping(rules=rules, max_points=max_points, step_seconds=float(step), origin=origin)


def load_mapping(path: str | Path | None = None, *, _chain: tuple[Path, ...] = ()) -> Mapping:
    """Read a mapping YAML file, or the built-in default when no path is given.

    A file may say ``extends: built-in`` or ``extends: OTHER.yml`` (relative to itself) to
    start from that mapping and replace or add rules (e.g. a model server's metrics).
    """
    from correlator.promsource.defaults import DEFAULT_MAPPING_YAML

    if path is None:
        return parse_mapping(yaml.safe_load(DEFAULT_MAPPING_YAML), "<built-in mapping>")
    path = Path(path)
    try:
        doc = yaml.safe_load(path.read_text())
    except OSError as exc:
        raise MappingError(f"{path}: cannot read: {exc}") from exc
    except yaml.YAMLError as exc:
        raise MappingError(f"{path}: broken YAML: {exc}") from exc
    return parse_mapping(doc, str(path), _extended(doc, path, _chain))


def _extended(doc: object, path: Path, chain: tuple[Path, ...]) -> Mapping | None:
    """Return the mapping a document extends, or None; refuse cycles and long chains."""
    parent = doc.get("extends") if isinstance(doc, dict) else None
    if parent is None:
        return None
    if not isinstance(parent, str) or not parent:
        raise MappingError(f"{path}: extends: give '{BUILT_IN}' or a mapping file's path")
    if parent == BUILT_IN:
        return load_mapping()
    chain = (*chain, path.resolve())
    target = (path.parent / parent).resolve()
    if target in chain:
        raise MappingError(f"{path}: extends: {parent} extends this file again (a cycle)")
    if len(chain) >= MAX_EXTENDS:
        raise MappingError(f"{path}: extends: more than {MAX_EXTENDS} files in a chain")
    return load_mapping(target, _chain=chain)
