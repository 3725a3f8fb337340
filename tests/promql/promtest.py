"""Prometheus' own PromQL test files (``promql/testdata/*.test``), read and run on causeline.

A file holds ``load <interval>`` blocks of series (Prometheus' expanding notation: ``0+10x5``,
``_``, ``stale``), ``clear``, and ``eval[_fail|_ordered] instant at <time> <query>`` blocks
with the expected samples. ``run_file`` evaluates each eval block with causeline's planner
and evaluator over the loaded samples and says what became of it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import promql_parser

from correlator.promql.evaluate import EvalError, Raw, run
from correlator.promql.plan import Unsupported, parse_query
from correlator.selector import Selector

TESTDATA = Path(__file__).parent / "prometheus-testdata"
STALE = float("nan")  # a staleness marker, as causeline's evaluator reads it
EPSILON = 1e-6  # Prometheus' test tolerance (promql/test.go almostEqual)
MIN_NORMAL = 2.2250738585072014e-308

_UNSIGNED = r"(?:[iI]nf|NaN|nan|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)"
_ITEM = re.compile(
    rf"^(?P<start>[+-]?{_UNSIGNED})(?:(?P<inc>[+-]{_UNSIGNED}))?(?:x(?P<times>\d+))?$"
)
_BLANK = re.compile(r"^_(?:x(?P<times>\d+))?$")
_EVAL = re.compile(r"^(eval|eval_fail|eval_ordered) instant at (\S+) (.+)$")


class TestFileError(ValueError):
    """A line of a test file that cannot be read; the message names the file and line."""


@dataclass
class Loaded:
    """One series of a load block: labels with ``__name__``, times (ms) and values."""

    labels: dict[str, str]
    ts: list[int] = field(default_factory=list)
    values: list[float] = field(default_factory=list)
    stale: list[bool] = field(default_factory=list)


@dataclass
class Eval:
    """One eval block: the query, its time, and the samples (or scalar) it must give."""

    line: int
    kind: str
    at_ms: int
    query: str
    expected: list[tuple[dict[str, str] | None, float]]
    data: list[Loaded]


@dataclass
class Outcome:
    """What became of an eval block: pass, differ, unsupported or unstorable, and why.

    unstorable: the evaluator's answer agrees, over samples holding NaN or infinite values,
    which the store does not hold.
    """

    case: Eval
    status: str
    reason: str = ""


def _number(text: str) -> float:
    if text.lower().lstrip("+-") == "inf":
        return -math.inf if text.startswith("-") else math.inf
    if text.lower().lstrip("+-") == "nan":
        return math.nan
    if text.lower().lstrip("+-").startswith("0x"):
        return float(int(text, 16))
    return float(text)


def _duration_ms(text: str) -> int:
    if re.fullmatch(r"0+[a-z]*", text):
        return 0  # "0m": the parser refuses a zero duration
    return round(promql_parser.parse_duration(text).total_seconds() * 1000)


def expand(tokens: list[str]) -> list[float | None]:
    """Return the values a series line holds: None for ``_``, NaN for ``stale``."""
    out: list[float | None] = []
    for token in tokens:
        blank = _BLANK.match(token)
        if blank:
            out += [None] * int(blank["times"] or 1)
            continue
        if token == "stale":
            out.append(STALE)
            continue
        item = _ITEM.match(token)
        if item is None:
            raise ValueError(f"cannot read series value {token!r}")
        value, times = _number(item["start"]), item["times"]
        if times is None:
            out.append(value)
            continue
        inc = _number(item["inc"]) if item["inc"] else 0.0
        for _ in range(int(times) + 1):  # n repeats and the value at time 0
            out.append(value)
            value += inc
    return out


def split_metric(text: str) -> tuple[str, str]:
    """Return (selector text, rest) of a line that starts with ``name{...}`` or ``{...}``."""
    depth, quoted, i = 0, False, 0
    while i < len(text):
        char = text[i]
        if quoted:
            if char == "\\":
                i += 1
            elif char == '"':
                quoted = False
        elif char == '"':
            quoted = True
        elif char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return text[: i + 1], text[i + 1 :]
        elif char.isspace() and depth == 0:
            return text[:i], text[i:]
        i += 1
    return text, ""


def labels_of(text: str) -> dict[str, str]:
    """Return the labels (with ``__name__``) of a series as a test file writes it."""
    expr = promql_parser.parse(text)
    labels = {m.name: m.value for m in expr.matchers.matchers}
    if expr.name:
        labels["__name__"] = expr.name
    return labels


def read_file(path: Path) -> Iterator[Eval]:
    """Yield the eval blocks of a test file, each with the series loaded before it."""
    lines = path.read_text().splitlines()
    data: list[Loaded] = []
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        i += 1
        if not line or line.startswith("#"):
            continue
        try:
            if line == "clear":
                data = []
            elif line.startswith("load "):
                step = _duration_ms(line.split()[1])
                while i < len(lines) and lines[i].strip() and lines[i][:1].isspace():
                    data.append(_series(lines[i].strip(), step))
                    i += 1
            else:
                match = _EVAL.match(line)
                if match is None:
                    raise ValueError("expected load, clear or eval")
                kind, at, query = match.groups()
                expected = []
                start = i
                while i < len(lines) and lines[i].strip() and lines[i][:1].isspace():
                    expected.append(_expected(lines[i].strip()))
                    i += 1
                yield Eval(start, kind, _duration_ms(at), query, expected, list(data))
        except (ValueError, SyntaxError) as exc:
            raise TestFileError(f"{path.name}:{i}: {exc}") from exc


def _series(line: str, step: int) -> Loaded:
    metric, rest = split_metric(line)
    series = Loaded(labels_of(metric))
    for n, value in enumerate(expand(rest.split())):
        if value is not None:
            series.ts.append(n * step)
            series.stale.append(value is STALE)
            series.values.append(math.nan if value is STALE else value)
    return series


def _expected(line: str) -> tuple[dict[str, str] | None, float]:
    if line[0] not in "{" and not line[0].isalpha() or line.split()[0].lower() in ("inf", "nan"):
        return None, _number(line.split()[0])  # a scalar
    metric, rest = split_metric(line)
    labels = labels_of(metric) if metric != "{}" else {}
    values = [v for v in expand(rest.split()) if v is not None]
    return labels, values[0]


def almost_equal(a: float, b: float) -> bool:
    """Return whether two results agree as Prometheus' tests compare them."""
    if math.isnan(a) and math.isnan(b):
        return True
    if a == b:
        return True
    diff = abs(a - b)
    if a == 0 or b == 0 or diff < MIN_NORMAL:
        return diff < EPSILON * MIN_NORMAL
    return diff / (abs(a) + abs(b)) < EPSILON


def memory_fetch(data: list[Loaded], unstorable: list[str]) -> Callable:
    """Return an evaluator fetch over loaded series; note a series the store cannot hold."""

    def fetch(selector: Selector, start_ms: int, end_ms: int) -> list[Raw]:
        out = []
        for series in data:
            name = series.labels.get("__name__", "")
            rest = {k: v for k, v in series.labels.items() if k != "__name__"}
            if not selector.matches(name, rest):
                continue
            ts = np.array(series.ts, dtype=np.int64)
            values = np.array(series.values, dtype=float)
            stale = np.array(series.stale, dtype=bool)
            keep = (ts >= start_ms) & (ts <= end_ms)
            real = values[keep & ~stale]
            if real.size and not np.isfinite(real).all():
                unstorable.append(f"{name} holds NaN or infinite samples")
            if keep.any():
                out.append(Raw(dict(series.labels), ts[keep], values[keep], stale[keep]))
        return out

    return fetch


def _compare(case: Eval, value) -> str:
    """Return why the evaluator's answer differs from the expected one, or "" if it agrees."""
    if isinstance(value, np.ndarray):
        return compare(case, float(value[0]))
    return compare(case, [(v.labels, float(v.values[0])) for v in value if v.present[0]])


def compare(case: Eval, got: float | list[tuple[dict[str, str], float]]) -> str:
    """Return why an answer (a scalar, or labels and values) differs, or "" if it agrees."""
    if isinstance(got, float):
        if len(case.expected) != 1 or case.expected[0][0] is not None:
            return f"scalar {got!r} where a vector was expected"
        want = case.expected[0][1]
        return "" if almost_equal(got, want) else f"scalar {got!r} != {want!r}"
    if len(got) != len(case.expected):
        return f"{len(got)} series where {len(case.expected)} were expected: {got[:4]}"
    if case.kind == "eval_ordered":
        pairs = list(zip(got, case.expected, strict=True))
    else:
        expected = {tuple(sorted((want or {}).items())): v for want, v in case.expected}
        pairs = []
        for labels, v in got:
            key = tuple(sorted(labels.items()))
            if key not in expected:
                return f"unexpected series {labels}"
            pairs.append(((labels, v), (dict(key), expected[key])))
    for (labels, v), (want_labels, want) in pairs:
        if labels != (want_labels or {}):
            return f"series {labels} where {want_labels} was expected"
        if not almost_equal(v, want):
            return f"{labels}: {v!r} != {want!r}"
    return ""


def run_case(case: Eval) -> Outcome:
    """Evaluate one eval block and compare it with what Prometheus 2.42 answers."""
    unstorable: list[str] = []
    steps = np.array([case.at_ms], dtype=np.int64)
    try:
        value = run(parse_query(case.query), steps, memory_fetch(case.data, unstorable))
    except Unsupported as exc:
        if case.kind == "eval_fail":
            return Outcome(case, "pass")
        return Outcome(case, "unsupported", str(exc))
    except EvalError as exc:
        return Outcome(case, "pass" if case.kind == "eval_fail" else "differ", f"error: {exc}")
    if case.kind == "eval_fail":
        return Outcome(case, "differ", "answered where Prometheus refuses")
    why = _compare(case, value)
    if why:
        return Outcome(case, "differ", why)
    if unstorable:  # the evaluator agrees; the store would not hold these samples
        return Outcome(case, "unstorable", unstorable[0])
    return Outcome(case, "pass")


def run_file(path: Path) -> list[Outcome]:
    """Return the outcome of every eval block of a test file."""
    return [run_case(case) for case in read_file(path)]
