"""Hypothesis strategies for PromQL text from a grammar, and request parameters around it.

``queries()`` draws four kinds of query. Half are well-typed queries of causeline's subset
(selectors with matchers, offsets, rate/irate/increase over range selectors, sum/avg/min/
max/count with by/without, histogram_quantile, arithmetic with a scalar side, numbers,
unary minus), over metric names that exist in tests/promql/data.py and ones that do not.
A quarter come from the same grammar let loose ("wild"): hostile and broken regexes, odd
escapes and durations, wrong arities, other functions and aggregations, strings,
subqueries, @, comparison and set operators, vector matching. The rest are near-valid
mutations (cut short, unbalanced, Unicode digits and letters, control characters,
identifiers at the length bound) and plain noise. ``instant_params()`` and
``range_params()`` draw time, start, end and step around the same data, valid and not.
"""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import strategies as st

from tests.promql import data


def words(text: str) -> tuple[str, ...]:
    """Return the space-separated words of ``text``."""
    return tuple(text.split())


MAX_QUERY_CHARS = 10_000  # correlator.promql.plan's bound: lengths around it are drawn
PRESENT = ("req_total", "temp", "lat_bucket")
ABSENT = words("nope req_total_x a:b:c Temp _ :x")
KEYWORDS = words("sum by without offset nan inf on bool and start")  # as metric names
LABELS = (*words("job inst le nolabel by offset _x __meta"), "l" * 300)
VALUES = ("a", "b", "1", "2", "+Inf", "0.5", "", "ü", "a\nb", '"', "'", "\\", "`", "\x00")
VALUES += ("\t", "x" * 3000)
# Regexes RE2 compiles, some of them catastrophic for a backtracking engine or big.
REGEXES = (
    *words(r".* .+ a|b [ab] [^a] (?i)A \d+ \p{L}+ \p{Greek} [[:alpha:]] ^a$ \z \Q(\E a{1000}"),
    *words(r"(a+)+$ (a|a)*b (.*)* (.*.*.*)*=.* (?U)a+ (?s). \x{10FFFF} (?P<n>a) ü+ 1|2 \+Inf"),
    "",
    "\x00",
    "|".join(f"v{i}" for i in range(400)),
    "a" * 5000,
)
# Regexes that RE2 or Prometheus refuse: bad syntax, past the repeat or memory bound,
# backreferences, lookaround, \C.
BAD_REGEXES = (
    *words(r"( ) [ [z-a] * a** \ \1 (?=a) (?<!a)b (?P<n>a)(?P=n) \C \x{110000} \uD800"),
    *words(r"a{1001} ((a{100}){100}){100} (((((a{10}){10}){10}){10}){10}) [[:nope:]] (?<n>a)"),
)
# Escapes written into a double-quoted string as they are: good, odd and broken ones.
ESCAPES = words(r"\n \t \\ \" \' \x00 \xff \u00e9 \U0001F600 \U00110000 \uD800 \udfff")
ESCAPES += words(r"\777 \400 \q \x \u12 \a\b\f\v")
DURATIONS = words("5m 1m 30s 15s 1h 1ms 999ms 1d 1w 1y 9y 10y 3650d 1h30m 1y2w3d4h5m6s7ms")
DURATIONS += ("5", "300")
BAD_DURATIONS = words("11y 3651d 0s 0 -5m 1.5m 1e3s 0x10s 5M 5mm 1m1h 1h1h 1us 1µs 1ns")
BAD_DURATIONS += words("５m ٥m 99999999999999999999d 292277026y 106751991167d")
BAD_DURATIONS += ("9223372036854775807ms", "", " 5m")
NUMBERS = words("0 1 0.5 .5 5. 1e308 1e309 1e-400 4.9e-324 NaN nan Inf +Inf inf 0x1F")
NUMBERS += words("0X1f 00012 9223372036854775807 18446744073709551616")
BAD_NUMBERS = words("0xffffffffffffffffff 0x 0x1p3 1_000 0b101 0o17 ١٢ ² 1e 1e+ .")
BAD_NUMBERS += ("1" * 400,)
PHIS = words("0 0.5 0.99 1 -0.5 1.5 2 NaN Inf -Inf (0.5) -(0.1)")
PHIS += ("0.5 + 0.25", "1 / 0", "2 ^ -1", "0.9 % 0.5")
RANGE_FUNCTIONS = ("rate", "irate", "increase")
AGGREGATIONS = ("sum", "avg", "min", "max", "count")
OTHER_AGGREGATIONS = ("topk", "bottomk", "quantile", "stddev", "stdvar", "group", "count_values")
OTHER_FUNCTIONS = words("abs time vector scalar absent sort clamp label_replace delta")
OTHER_FUNCTIONS += ("deriv", "sum_over_time", "nope_fn", "histogram_fraction", "rate")
ARITHMETIC = ("+", "-", "*", "/", "%", "^")
OTHER_OPERATORS = (*words("== != > < >= <= and or unless atan2"), "> bool", "== bool")
MODIFIERS = ("on(job)", "ignoring(inst)", "on() group_left", "ignoring(le) group_right(job)")
MATCH_OPS = ("=", "!=", "=~", "!~")
ODD_MATCH_OPS = ("==", "~=", "=!", "<>", ":", "")
AT = ("@ 1", "@ 0", "@ -1", "@ 1e20", "@ NaN", "@ start()", "@ end()", "@ foo()", "@")
# Characters a mutation puts in: Unicode digits and letters, controls, odd spaces, syntax.
ODD_CHARS = (
    *words("² ٣ ５ 𝟙 é ß Ω ǅ ﬁ \U0001f600 \ufffd"),
    *("\x00", "\x01", "\x1b", "\x7f", "\t", "\n", "\r", "\x0b", "\x0c", "\xa0", "\u200b"),
    *("\u2028", "\ufeff", "\u202e"),
    *words("\" ' ` \\ # @ { } [ ] ( ) , : = ~ ! - +"),
)
SPACES = ("  ", "\t", "\n", "\r\n", "\x0b", "\x0c", "\xa0", "\u2028", "\u200b", "")
NOISE = ("", " ", "#", "\n", "()", "{}", "[]", "x[", "-", "--1", "1 +", "@", "offset", "{{}}")


def rare(draw, one_in: int) -> bool:
    """Return True once in ``one_in`` draws: a grammar rule's odd branch."""
    return draw(st.integers(0, one_in - 1)) == 0


def _escape(raw: str, quote: str) -> str:
    body = raw.replace("\\", "\\\\").replace(quote, "\\" + quote).replace("\n", "\\n")
    return f"{quote}{body}{quote}"


@st.composite
def string_literal(draw, raw: st.SearchStrategy[str], wild: bool = False) -> str:
    """Return ``raw`` as a PromQL string in double, single or back quotes (wild: broken)."""
    text = draw(raw)
    if wild and rare(draw, 4):
        if draw(st.booleans()):
            escapes = draw(st.lists(st.sampled_from(ESCAPES), min_size=1, max_size=3))
            return '"' + "".join(escapes) + '"'
        return _escape(text, '"')[:-1]  # never closed
    style = draw(st.sampled_from(('"', '"', "'", "`")))
    if style == "`" and "`" not in text:
        return f"`{text}`"
    return _escape(text, style if style != "`" else '"')


def identifiers(first: str = "a-zA-Z_") -> st.SearchStrategy[str]:
    """Return short random identifiers."""
    return st.from_regex(rf"[{first}][a-zA-Z0-9_]{{0,8}}", fullmatch=True)


@st.composite
def matcher(draw, wild: bool) -> str:
    """Return one label matcher (wild: quoted names, odd operators, broken regexes)."""
    label = draw(st.one_of(st.sampled_from(LABELS), identifiers()))
    op = draw(st.sampled_from(MATCH_OPS))
    if wild and rare(draw, 8):
        label = f'"{label}.x"'  # Prometheus 3's quoted label name
    if wild and rare(draw, 10):
        op = draw(st.sampled_from(ODD_MATCH_OPS))
    if "~" in op:
        values = st.sampled_from(REGEXES)
        if wild:
            alphabet = "ab.*+?|()[]{}^$\\-:,0123456789dpPwWsS"
            values = st.one_of(values, st.sampled_from(BAD_REGEXES), st.text(alphabet, max_size=24))
    else:
        values = st.one_of(st.sampled_from(VALUES), st.text(max_size=8))
    space = draw(st.sampled_from(("", "", " ", "\n")))
    return f"{label}{space}{op}{space}{draw(string_literal(values, wild))}"


@st.composite
def selector(draw, wild: bool) -> str:
    """Return an instant vector selector: a name, with matchers in braces or in them."""
    names = [st.sampled_from(PRESENT), st.sampled_from(ABSENT), identifiers("a-zA-Z_:")]
    if wild:
        names.append(st.sampled_from(KEYWORDS))
    name = draw(st.one_of(names[0], *names))
    form = draw(st.sampled_from(("name", "name", "braces", "inside")))
    if form == "name":
        return name
    matchers = draw(st.lists(matcher(wild), max_size=4))
    if form == "inside":
        matchers.insert(draw(st.integers(0, len(matchers))), f'__name__="{name}"')
        name = ""
    if wild and rare(draw, 4):
        name = ""  # perhaps no matcher that needs a value: refused
    comma = "," if matchers and rare(draw, 8) else ""
    return f"{name}{{{', '.join(matchers)}{comma}}}"


def durations(wild: bool) -> st.SearchStrategy[str]:
    """Return durations: usual, up to the 10y bound (wild: past it, odd or wrong units)."""
    good = st.one_of(
        st.sampled_from(DURATIONS[:8]),
        st.sampled_from(DURATIONS),
        st.from_regex(r"[1-9][0-9]{0,3}[smh]|[1-9][0-9]{0,2}[dw]", fullmatch=True),
    )
    return st.one_of(good, st.sampled_from(BAD_DURATIONS)) if wild else good


@st.composite
def modifiers(draw, wild: bool) -> str:
    """Return an offset modifier, most often none (wild: an @ modifier)."""
    if draw(st.integers(0, 2)):
        return ""
    if wild and rare(draw, 3):
        return f" {draw(st.sampled_from(AT))}"
    sign = "-" if rare(draw, 3) else ""
    return f" offset {sign}{draw(durations(wild))}"


@st.composite
def range_call(draw, wild: bool) -> str:
    """Return rate, irate or increase over a range selector (wild: wrong arguments)."""
    func = draw(st.sampled_from(RANGE_FUNCTIONS))
    sel, dur, mod = draw(selector(wild)), draw(durations(wild)), draw(modifiers(wild))
    arg = f"{sel}[{dur}]{mod}"
    if wild and rare(draw, 3):
        arg = draw(st.sampled_from(("", sel, f"{sel}{mod}[{dur}]", f"{arg}, {arg}", f"({arg})")))
    return f"{func}({arg})"


def numbers(wild: bool) -> st.SearchStrategy[str]:
    """Return number literals: plain, at float's edges, NaN, Inf, hex (wild: near-numbers)."""
    good = st.one_of(
        st.sampled_from(NUMBERS),
        st.integers(-(10**6), 10**6).map(str),
        st.floats(allow_nan=False, allow_infinity=False).map(repr),
    )
    return st.one_of(good, st.sampled_from(BAD_NUMBERS)) if wild else good


def scalars(wild: bool) -> st.SearchStrategy[str]:
    """Return scalar expressions: numbers under arithmetic, minus and parentheses."""

    def extend(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        ops = st.sampled_from(ARITHMETIC)
        return st.one_of(
            st.tuples(children, ops, children).map(" ".join),
            children.map(lambda c: f"-{c}"),
            children.map(lambda c: f"({c})"),
        )

    return st.recursive(numbers(wild), extend, max_leaves=4)


SMALL = ("0", "1", "2", "3", "0.5", "-1", "1e308")
BUCKET_SELECTORS = ("", '{job="a"}', '{le!="0.5"}', '{le=~"0.1|\\\\+Inf"}', '{le="+Inf"}')


@st.composite
def buckets(draw, wild: bool) -> str:
    """Return the stored histogram's buckets, as they are, as rates, summed by le, or scaled."""
    text = "lat_bucket" + draw(st.sampled_from(BUCKET_SELECTORS))
    form = draw(st.integers(0, 3))
    if form == 1:
        text = f"{draw(st.sampled_from(RANGE_FUNCTIONS))}({text}[{draw(durations(wild))}])"
    elif form == 2:
        text = f"sum by (le{draw(st.sampled_from(('', ', job')))}) (rate({text}[5m]))"
    if draw(st.booleans()):  # small operands: counts of zero, equal or falling buckets
        op = draw(st.sampled_from(("%", *ARITHMETIC)))
        text = f"{text} {op} {draw(st.sampled_from(SMALL))}"
    return text


@st.composite
def quantiles(draw, wild: bool = False) -> str:
    """Return histogram_quantile at an edge phi (0, 1, outside) over the stored buckets."""
    phi = draw(st.sampled_from(("0", "1", "0.5", "-0", "0.25", "0.99", "NaN", "2", "-1")))
    text = f"histogram_quantile({phi}, {draw(buckets(wild))})"
    if rare(draw, 3):
        text = f"{draw(st.sampled_from(AGGREGATIONS))} by (job) ({text})"
    return text


@st.composite
def grouping(draw, wild: bool) -> str:
    """Return a by or without clause, its labels perhaps none, odd or repeated."""
    names = st.one_of(st.sampled_from(LABELS), identifiers())
    if wild:
        names = st.one_of(names, st.sampled_from(("job,", "1a", "'job'", '"job"', "le.x")))
    labels = draw(st.lists(names, max_size=3))
    return f"{draw(st.sampled_from(('by', 'without', 'BY', 'Without')))} ({', '.join(labels)})"


def _vector_rules(wild: bool):
    """Return the rules one level above an instant vector expression."""

    def extend(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        @st.composite
        def aggregation(draw) -> str:
            op = draw(st.sampled_from(AGGREGATIONS))
            inner = draw(children)
            if wild and rare(draw, 4):
                op = draw(st.sampled_from(OTHER_AGGREGATIONS))
                if op in ("topk", "bottomk", "quantile", "count_values"):
                    inner = draw(st.sampled_from(("3", "0.5", '"l"'))) + ", " + inner
            where = draw(st.integers(0, 2))
            if where == 0:
                return f"{op}({inner})"
            clause = draw(grouping(wild))
            return f"{op} {clause} ({inner})" if where == 1 else f"{op}({inner}) {clause}"

        @st.composite
        def quantile(draw) -> str:
            phi = draw(st.one_of(st.sampled_from(PHIS), scalars(wild)))
            args = [phi, draw(st.one_of(buckets(wild), children))]
            if wild and rare(draw, 4):
                args = draw(st.sampled_from((args[:1], args[::-1], [*args, args[1]], [])))
            return f"histogram_quantile({', '.join(args)})"

        @st.composite
        def binary(draw) -> str:
            op = draw(st.sampled_from(ARITHMETIC))
            lhs, rhs = draw(children), draw(scalars(wild))
            space = " "
            if wild and rare(draw, 3):
                op = draw(st.sampled_from((*OTHER_OPERATORS, *ARITHMETIC)))
                if rare(draw, 2):
                    op = f"{op} {draw(st.sampled_from(MODIFIERS))}"
                rhs = draw(st.one_of(children, st.just(rhs)))
                space = draw(st.sampled_from(SPACES))
            if draw(st.booleans()):
                lhs, rhs = rhs, lhs
            return f"{lhs}{space}{op}{space}{rhs}"

        @st.composite
        def other(draw) -> str:
            inner = draw(children)
            kind = draw(st.integers(0, 6 if wild else 1))
            if kind == 0:
                return f"+{inner}"
            if kind == 1:
                return f"{inner} # {draw(st.sampled_from(('c', '(((', '+1', '{}', '')))}\n"
            if kind == 2:
                return f"{draw(st.sampled_from(OTHER_FUNCTIONS))}({inner})"
            if kind == 3:  # a subquery
                step = draw(st.sampled_from(("", "1m", "15s", "0s")))
                return f"({inner})[{draw(durations(wild))}:{step}]"
            if kind == 4:
                return f"{inner} {draw(st.sampled_from(AT))}"
            if kind == 5:
                return f"{inner} offset {draw(durations(wild))}"
            return draw(string_literal(st.sampled_from(("s", "", "temp")), wild))

        return st.one_of(
            aggregation(),
            aggregation(),
            quantile(),
            binary(),
            binary(),
            children.map(lambda c: f"-{c}"),
            children.map(lambda c: f"({c})"),
            other(),
        )

    return extend


def vectors(wild: bool = False) -> st.SearchStrategy[str]:
    """Return instant vector expressions (wild: with the grammar's odd branches)."""
    leaves = st.one_of(
        st.tuples(selector(wild), modifiers(wild)).map("".join),
        range_call(wild),
    )
    return st.recursive(leaves, _vector_rules(wild), max_leaves=6)


@st.composite
def mutated(draw, base: st.SearchStrategy[str]) -> str:
    """Return ``base``'s text damaged once: cut, unbalanced, odd characters, long names."""
    text = draw(base)
    kind = draw(st.integers(0, 8))
    at = draw(st.integers(0, len(text)))
    if kind == 0:  # cut short
        return text[:at]
    if kind == 1:  # one bracket or quote dropped or added
        marks = [i for i, ch in enumerate(text) if ch in "()[]{}\"'`"]
        if marks and draw(st.booleans()):
            i = draw(st.sampled_from(marks))
            return text[:i] + text[i + 1 :]
        return text[:at] + draw(st.sampled_from("()[]{}\"'`")) + text[at:]
    if kind == 2:  # one odd character put in
        return text[:at] + draw(st.sampled_from(ODD_CHARS)) + text[at:]
    if kind == 3:  # one character swapped for an odd one
        return text[:at] + draw(st.sampled_from(ODD_CHARS)) + text[at + 1 :]
    if kind == 4:  # an identifier that takes the query to its length bound, or past it
        sizes = (255, 4096, MAX_QUERY_CHARS - len(text), MAX_QUERY_CHARS + 1 - len(text))
        return text[:at] + "a" * max(draw(st.sampled_from(sizes)), 1) + text[at:]
    if kind == 5:  # spaces swapped for odd ones
        return text.replace(" ", draw(st.sampled_from(SPACES)))
    if kind == 6:  # random text put in
        return text[:at] + draw(st.text(max_size=6)) + text[at:]
    if kind == 7:  # said twice
        return text + text
    return (
        text[:at] + draw(st.sampled_from("{[(")) * draw(st.sampled_from((63, 65, 80))) + text[at:]
    )


@st.composite
def queries(draw) -> str:
    """Return a query: of the subset, wild, mutated, or noise (10 : 5 : 4 : 1)."""
    kind = draw(st.integers(0, 19))
    if kind < 6:
        return draw(vectors())
    if kind < 8:
        return draw(quantiles())
    if kind < 10:
        return draw(scalars(wild=False))
    if kind < 15:
        return draw(vectors(wild=True))
    if kind < 19:
        return draw(mutated(st.one_of(vectors(), vectors(wild=True))))
    return draw(st.one_of(st.sampled_from(NOISE), st.text(max_size=20)))


BAD_TIMES = (
    *words("abc NaN Inf -Inf 1e308 9.3e15 -9.2e15 9.2e15 -1 0 now 0x10 1_700_000_000"),
    *words("0001-01-01T00:00:00 0001-01-01T00:00:00+23:59 9999-12-31T23:59:59Z 0001-01-01"),
    *words("2023-02-30T00:00:00Z 2023-01-01T25:00:00Z ١٧٠٠٠٠٠٠٠٠ 1700000000.5.5 1e"),
    "",
    " 1700000000 ",
    "\x00",
)
STEPS = words("15s 60 1m 30 2 1h 5m 15 1m30s 1d 0.5")
BAD_STEPS = words("0 -1 abc NaN Inf 1e308 11y 10y 0.0001 1ms -5m 5M ٥ 1e-300")
BAD_STEPS += ("", "9223372036854775807ms", "99999999999999999999d")


def _time_text(draw, seconds: int) -> str:
    """Return a time as Prometheus takes it: seconds, with a fraction, or RFC 3339."""
    form = draw(st.integers(0, 4))
    if form == 0:
        return f"{seconds}.{draw(st.integers(0, 999)):03d}"
    if form == 1:
        return datetime.fromtimestamp(seconds, UTC).isoformat().replace("+00:00", "Z")
    return str(seconds)


@st.composite
def instant_params(draw) -> dict[str, str]:
    """Return the time of an instant query: around the data, absent, or not a time."""
    kind = draw(st.integers(0, 9))
    if kind == 8:
        return {}
    if kind == 9:
        return {"time": draw(st.sampled_from(BAD_TIMES))}
    return {"time": _time_text(draw, data.END + draw(st.integers(-5400, 1800)))}


@st.composite
def range_params(draw) -> dict[str, str]:
    """Return start, end and step of a range query: mostly valid and short, some refused."""
    kind = draw(st.integers(0, 11))
    if kind == 10:  # some missing or unparseable
        params = {"start": str(data.START), "end": str(data.END), "step": "60"}
        for name in draw(st.lists(st.sampled_from(sorted(params)), min_size=1, unique=True)):
            if draw(st.booleans()):
                del params[name]
            else:
                params[name] = draw(st.sampled_from(BAD_STEPS if name == "step" else BAD_TIMES))
        return params
    if kind == 11:  # end before start, or past 11,000 points
        start = data.START + draw(st.integers(0, 3600))
        end = start - draw(st.integers(1, 3600)) if draw(st.booleans()) else start + 11_001 * 15
        return {"start": str(start), "end": str(end), "step": "15"}
    start = data.START + draw(st.integers(-1800, 3600))
    step = draw(st.sampled_from(STEPS))
    span = draw(st.integers(0, 90)) * 60
    first = _time_text(draw, start)
    return {"start": first, "end": _time_text(draw, start + span), "step": step}
