"""The head's runs: a series' fresh samples of one batch and one hour in one row.

Agents and remote-write senders send each series several points a batch. Stored as keyed
rows (``samples``), every point costs an index entry; a run (``sample_runs``) costs one for
up to ``RUN_MAX`` points, so fresh ingest writes runs. A series' points of a batch become a
run where they are fresh (hours ingest does not mark late), at least ``RUN_MIN`` of them,
and all later than what the store holds for the series in that hour; the rest goes as keyed
rows, less the timestamps runs hold. So runs of a series and hour follow one another in
time and a timestamp is stored once. Compaction moves runs into chunks with the keyed rows;
reads take them as chunks (``correlator.store.tsdb.chunks``).

On PostgreSQL, writers of fresh rows hold the head lock for their transaction: shared for
keyed rows, alone for runs, so no two check and write the same series at once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from sqlalchemy import Connection

from correlator.store.dialect import hours_between, hours_where, qmark_rows
from correlator.store.engine import driver_connection
from correlator.store.tsdb.rollup_state import HOUR_MS
from correlator.store.tsdb.series import CHUNK

RUN_MIN = 4  # fewer points of a series in a batch (an agent's one a scrape) go keyed
RUN_MAX = 56  # points a run holds at most: 0.9 kB, within a 4 KiB SQLite page's row
# pg_advisory_xact_lock key of fresh-row writers (lock_head).
HEAD_LOCK_KEY = 0x68656164

_COLUMNS = "hour, series_id, first_ts, last_ts, n_samples, ts, value"
_SQLITE_INSERT = f"INSERT INTO sample_runs ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)"
_COPY = f"COPY sample_runs ({_COLUMNS}) FROM STDIN (FORMAT BINARY)"
_COPY_HEADER = b"PGCOPY\n\xff\r\n\x00" + bytes(8)
# A run's record up to its timestamps: the field count, then (length, value) of each field.
_RUN_HEAD = np.dtype(
    [
        ("fields", ">i2"),
        ("hour_len", ">i4"),
        ("hour", ">i4"),
        ("sid_len", ">i4"),
        ("sid", ">i4"),
        ("first_len", ">i4"),
        ("first", ">i8"),
        ("last_len", ">i4"),
        ("last", ">i8"),
        ("n_len", ">i4"),
        ("n", ">i4"),
        ("ts_len", ">i4"),
    ]
)
# A (hour, series) pair's last stored ms in runs and in keyed rows: an index probe each.
_RUN_LAST = (
    "(SELECT r.last_ts FROM sample_runs r WHERE r.hour = c.h AND r.series_id = c.s "
    "ORDER BY r.first_ts DESC LIMIT 1)"
)
_KEYED_LAST = "(SELECT MAX(k.ts) FROM samples k WHERE k.hour = c.h AND k.series_id = c.s)"


@dataclass(frozen=True, slots=True)
class Head:
    """What the fresh rows' hours held when the head lock was taken: runs, keyed rows."""

    runs: bool
    keyed: bool


@dataclass(slots=True)
class Run:
    """One decoded run: a series' samples of one hour, ms timestamps in order."""

    series_id: int
    hour: int
    ts: np.ndarray
    values: np.ndarray


def encode(ts: np.ndarray, values: np.ndarray) -> tuple[bytes, bytes]:
    """Return a run's blobs: little-endian int64 ms and float64 values, bit for bit."""
    ts, values = np.asarray(ts, dtype="<i8"), np.asarray(values, dtype="<f8")  # no copy
    return ts.tobytes(), values.tobytes()


def decode(ts_blob: bytes, value_blob: bytes) -> tuple[np.ndarray, np.ndarray]:
    """Return a run's int64 ms timestamps and float64 values."""
    ts = np.frombuffer(ts_blob, dtype="<i8").astype(np.int64)
    values = np.frombuffer(value_blob, dtype="<f8").astype(np.float64)
    if ts.shape != values.shape or not len(ts):
        raise ValueError("corrupt sample run: timestamps and values do not match")
    return ts, values


def lock_head(*, conn: Connection, exclusive: bool, first_hour: int, last_hour: int) -> Head:
    """Take the fresh-row writers' lock; return what hours [first, last] hold.

    The lock is PostgreSQL's alone (SQLite has one writer), exclusive for a writer of runs.
    Keyed rows are looked for only then (a writer of keyed rows needs only to know of runs;
    ``keyed`` is True for it). Lock and probes go in one round trip, as statements of their
    own, so the probes' snapshots come after the lock.
    """
    tables = ("sample_runs", "samples") if exclusive else ("sample_runs",)
    probes = [_first_hour_sql(t, first_hour, last_hour) for t in tables]
    if conn.dialect.name != "postgresql":
        found = [conn.exec_driver_sql(sql).scalar() is not None for sql in probes]
    else:
        func = "pg_advisory_xact_lock" if exclusive else "pg_advisory_xact_lock_shared"
        found = []
        with driver_connection(conn).cursor() as cur:
            cur.execute("; ".join([f"SELECT {func}({HEAD_LOCK_KEY})", *probes]))
            while cur.nextset():
                found.append(cur.fetchone()[0] is not None)
    return Head(runs=found[0], keyed=found[1] if exclusive else True)


def groups(hour: np.ndarray, series_id: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return the first row and length of each (hour, series) group of rows sorted by both."""
    if not len(hour):
        return np.empty(0, np.int64), np.empty(0, np.int64)
    new = np.r_[True, (np.diff(hour) != 0) | (np.diff(series_id) != 0)]
    starts = np.flatnonzero(new)
    return starts, np.diff(np.r_[starts, len(hour)])


def first_of_twins(hour: np.ndarray, series_id: np.ndarray, ts: np.ndarray) -> np.ndarray:
    """Return a mask keeping the first of rows (sorted by key) with one (hour, series, ts)."""
    twin = (np.diff(hour) == 0) & (np.diff(series_id) == 0) & (np.diff(ts) == 0)
    return np.r_[True, ~twin]


def last_stored(
    *, conn: Connection, hours: Sequence[int], series_ids: Sequence[int], head: Head
) -> np.ndarray:
    """Return, for each (hour, series) pair, its last stored ms in runs or keyed rows (-1: none).

    Only the tables ``head`` says hold rows in these hours are probed: none, no query.
    """
    wanted = [part for part, held in ((_RUN_LAST, head.runs), (_KEYED_LAST, head.keyed)) if held]
    if not wanted:
        return np.full(len(hours), -1, dtype=np.int64)
    postgres = conn.dialect.name == "postgresql"
    best = ", ".join(f"COALESCE({part}, -1)" for part in wanted)
    if len(wanted) > 1:
        best = f"GREATEST({best})" if postgres else f"MAX({best})"
    found: list[int] = []
    cur = driver_connection(conn).cursor()
    try:
        for i in range(0, len(hours), CHUNK):
            h, s = hours[i : i + CHUNK], series_ids[i : i + CHUNK]
            if postgres:  # arrays as text: psycopg's lists cost more
                cur.execute(
                    f"SELECT {best} FROM unnest(%s::int4[], %s::int4[]) WITH ORDINALITY "
                    "AS c(h, s, i) ORDER BY c.i",
                    [_pg_array(h), _pg_array(s)],
                )
            else:
                flat = [v for k, pair in enumerate(zip(h, s, strict=True)) for v in (k, *pair)]
                cur.execute(
                    f"WITH c(i, h, s) AS (VALUES {qmark_rows(len(h), 3)}) "
                    f"SELECT {best} FROM c ORDER BY i",
                    flat,
                )
            found += [row[0] for row in cur.fetchall()]
    finally:
        cur.close()
    return np.array(found, dtype=np.int64)


def _pg_array(values: Sequence[int]) -> str:
    return "{" + ",".join(map(str, values)) + "}"


def pieces(starts: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return the first row and length of each run of these groups: RUN_MAX rows at most."""
    per_group = -(-lengths // RUN_MAX)
    group = np.repeat(np.arange(len(starts)), per_group)
    k = np.arange(len(group)) - np.repeat(np.cumsum(per_group) - per_group, per_group)
    first = starts[group] + k * RUN_MAX
    return first, np.minimum(RUN_MAX, starts[group] + lengths[group] - first)


def write(
    *,
    conn: Connection,
    hour: np.ndarray,
    series_id: np.ndarray,
    ts: np.ndarray,
    values: np.ndarray,
    starts: np.ndarray,
    counts: np.ndarray,
) -> None:
    """Store rows [start, start + count) of these columns as runs, one each.

    The caller checked them: each is one series and hour, and none overlaps a stored sample.
    """
    if not len(starts):
        return
    raw = driver_connection(conn)
    if conn.dialect.name == "postgresql":
        data = copy_data(hour, series_id, ts, values, starts, counts)
        with raw.cursor() as cur, cur.copy(_COPY) as copy:
            copy.write(data)
        return
    ts_bytes, value_bytes = encode(ts, values)
    rows = [
        (h, s, first, last, n, ts_bytes[8 * a : 8 * (a + n)], value_bytes[8 * a : 8 * (a + n)])
        for h, s, first, last, n, a in zip(
            hour[starts].tolist(),
            series_id[starts].tolist(),
            ts[starts].tolist(),
            ts[starts + counts - 1].tolist(),
            counts.tolist(),
            starts.tolist(),
            strict=True,
        )
    ]
    cur = raw.cursor()
    try:
        cur.executemany(_SQLITE_INSERT, rows)
    finally:
        cur.close()


def copy_data(
    hour: np.ndarray,
    series_id: np.ndarray,
    ts: np.ndarray,
    values: np.ndarray,
    starts: np.ndarray,
    counts: np.ndarray,
) -> bytes:
    """Return runs (rows [start, start + count) of the columns) as PostgreSQL binary COPY data.

    Runs of one length are one numpy array of records (``_RUN_HEAD``, the timestamps, the
    values' length, the values): a batch's runs mostly share one or two lengths.
    """
    parts = [_COPY_HEADER]
    for n in np.unique(counts).tolist():
        first = starts[counts == n]
        rows = first[:, None] + np.arange(n)
        record = np.dtype(
            [("head", _RUN_HEAD), ("ts", "<i8", (n,)), ("value_len", ">i4"), ("value", "<f8", (n,))]
        )
        out = np.empty(len(first), record)
        head = out["head"]
        head["fields"] = 7
        head["hour_len"] = head["sid_len"] = head["n_len"] = 4
        head["first_len"] = head["last_len"] = 8
        head["hour"], head["sid"] = hour[first], series_id[first]
        head["first"], head["last"] = ts[first], ts[first + n - 1]
        head["n"], head["ts_len"], out["value_len"] = n, 8 * n, 8 * n
        out["ts"], out["value"] = ts[rows], values[rows]
        parts.append(out.tobytes())
    parts.append(b"\xff\xff")  # the trailer: -1 as a field count
    return b"".join(parts)


def _select(
    conn: Connection,
    series_ids: Sequence[int],
    first_hour: int,
    last_hour: int,
    window: tuple[int, int] | None,
) -> list[tuple]:
    """Return (series_id, hour, n_samples, ts, value) of runs, by series, hour and time."""
    lo, hi = window if window is not None else (-(2**62), 2**62)
    mark = "%s" if conn.dialect.name == "postgresql" else "?"
    out: list[tuple] = []
    cur = driver_connection(conn).cursor()
    try:
        for i in range(0, len(series_ids), CHUNK):
            ids = [int(s) for s in series_ids[i : i + CHUNK]]
            cur.execute(
                "SELECT series_id, hour, n_samples, ts, value FROM sample_runs "
                f"WHERE hour >= {mark} AND hour <= {mark} AND last_ts >= {mark} "
                f"AND first_ts <= {mark} AND series_id IN ({','.join([mark] * len(ids))}) "
                "ORDER BY series_id, hour, first_ts",
                [int(first_hour), int(last_hour), int(lo), int(hi), *ids],
            )
            out += cur.fetchall()
    finally:
        cur.close()
    return out


def read(
    *,
    conn: Connection,
    series_ids: Sequence[int],
    first_hour: int,
    last_hour: int,
    window: tuple[int, int] | None = None,
) -> list[Run]:
    """Return the runs of these series in hours [first, last] (touching the ms window if given)."""
    return [
        Run(sid, hour, *decode(bytes(ts_blob), bytes(value_blob)))
        for sid, hour, _, ts_blob, value_blob in _select(
            conn, series_ids, first_hour, last_hour, window
        )
    ]


def rows(
    *,
    conn: Connection,
    series_ids: Sequence[int],
    first_hour: int,
    last_hour: int,
    window: tuple[int, int] | None = None,
) -> np.ndarray:
    """Return (series_id, ms, value) rows of ``read``'s runs, by series and time: one decode."""
    return _rows(_select(conn, series_ids, first_hour, last_hour, window))


def _rows(found: Sequence[tuple]) -> np.ndarray:
    """Return the (series_id, ms, value) rows of (series_id, _, n, ts, value) runs in order."""
    if not found:
        return np.empty((0, 3))
    sid, _, n, ts_blobs, value_blobs = zip(*found, strict=True)
    ts = np.frombuffer(b"".join(map(bytes, ts_blobs)), dtype="<i8")
    values = np.frombuffer(b"".join(map(bytes, value_blobs)), dtype="<f8")
    counts = np.array(n, dtype=np.int64)
    if len(ts) != len(values) or len(ts) != counts.sum():
        raise ValueError("corrupt sample run: timestamps, values and counts do not match")
    ids = np.repeat(np.array(sid, dtype=np.float64), counts)
    return np.column_stack([ids, ts.astype(np.float64), values])


def _first_hour_sql(table: str, first_hour: int, last_hour: int) -> str:
    """Return a query for the first hour in [first, last] the table holds, or NULL.

    MIN is an index seek to the first entry: PostgreSQL planned ``SELECT 1 ... LIMIT 1`` on
    a fresh partition as a bitmap scan of all the hour's entries (3 ms at 100,000).
    """
    return (
        f"SELECT MIN(hour) FROM {table} WHERE hour >= {int(first_hour)} "
        f"AND hour <= {int(last_hour)}"
    )


def held(
    *, conn: Connection, series_id: np.ndarray, ts: np.ndarray, hour: np.ndarray
) -> np.ndarray:
    """Return which rows (series id, ms, hour; sorted by hour) runs hold."""
    if not len(ts):
        return np.zeros(0, dtype=bool)
    found = read(
        conn=conn,
        series_ids=np.unique(series_id).tolist(),
        first_hour=int(hour.min()),
        last_hour=int(hour.max()),
        window=(int(ts.min()), int(ts.max())),
    )
    return held_by(series_id, ts, found)


def held_by(series_id: np.ndarray, ts: np.ndarray, found: Sequence) -> np.ndarray:
    """Return which rows (series id, ms) the found runs or chunks (``series_id``, ``ts``) hold."""
    mask = np.zeros(len(ts), dtype=bool)
    order = np.argsort(series_id, kind="stable")  # each series' rows: one slice of order
    by_series = series_id[order]
    for part in found:
        lo = np.searchsorted(by_series, part.series_id, side="left")
        hi = np.searchsorted(by_series, part.series_id, side="right")
        rows = order[lo:hi]
        mask[rows[np.isin(ts[rows], part.ts)]] = True
    return mask


def take_fresh(
    *,
    conn: Connection,
    hour: np.ndarray,
    series_id: np.ndarray,
    ts: np.ndarray,
    values: np.ndarray,
    groups: tuple[np.ndarray, np.ndarray],
    allow: bool = True,
    head: Head = Head(runs=True, keyed=True),
) -> tuple[int, np.ndarray]:
    """Store fresh rows (sorted by key, no twins) as runs where they may be; return the rest.

    ``groups`` are the rows' (hour, series) groups (``groups``). Return (samples written as
    runs, mask of the rows still to store keyed). Those rows lose the timestamps runs hold
    already. Without ``allow``, no run is written; ``head`` says what the rows' hours held
    before (``lock_head``): without runs there, none holds a row.
    """
    keyed = np.ones(len(ts), dtype=bool)
    written = 0
    starts, lengths = groups
    big = lengths >= RUN_MIN
    if allow and big.any():
        starts, lengths = starts[big], lengths[big]
        last = last_stored(
            conn=conn,
            hours=hour[starts].tolist(),
            series_ids=series_id[starts].tolist(),
            head=head,
        )
        after = ts[starts] > last
        starts, lengths = starts[after], lengths[after]
        first, counts = pieces(starts, lengths)
        write(
            conn=conn,
            hour=hour,
            series_id=series_id,
            ts=ts,
            values=values,
            starts=first,
            counts=counts,
        )
        edges = np.zeros(len(ts) + 1, dtype=np.int64)
        edges[starts] += 1  # groups do not overlap: each start and each end once
        edges[starts + lengths] -= 1
        keyed = np.cumsum(edges[:-1]) == 0  # rows of no run written
        written = int(lengths.sum())
    if head.runs and keyed.any():
        rows = np.flatnonzero(keyed)
        stored = held(conn=conn, series_id=series_id[rows], ts=ts[rows], hour=hour[rows])
        keyed[rows[stored]] = False
    return written, keyed


def first_time(*, conn: Connection) -> int | None:
    """Return the first sample time runs hold in ms, or None without runs."""
    return conn.exec_driver_sql(
        "SELECT MIN(first_ts) FROM sample_runs WHERE hour = (SELECT MIN(hour) FROM sample_runs)"
    ).scalar()


def last_time(*, conn: Connection, until_ms: int | None = None) -> int | None:
    """Return the last sample time runs hold in ms, at or before until_ms when given."""
    if until_ms is None:
        return conn.exec_driver_sql(
            "SELECT MAX(last_ts) FROM sample_runs WHERE hour = (SELECT MAX(hour) FROM sample_runs)"
        ).scalar()
    until = int(until_ms)
    hour = conn.exec_driver_sql(  # the last hour with a sample by then
        "SELECT MAX(hour) FROM sample_runs "
        f"WHERE hour <= {until // HOUR_MS} AND first_ts <= {until}"
    ).scalar()
    if hour is None:
        return None
    best = conn.exec_driver_sql(
        f"SELECT MAX(last_ts) FROM sample_runs WHERE hour = {hour} AND last_ts <= {until}"
    ).scalar()
    for ts_blob, value_blob in conn.exec_driver_sql(  # runs going on past it: a series' last
        "SELECT ts, value FROM sample_runs "
        f"WHERE hour = {hour} AND first_ts <= {until} AND last_ts > {until}"
    ):
        stamps, _ = decode(bytes(ts_blob), bytes(value_blob))
        best = max(best or 0, int(stamps[stamps <= until][-1]))
    return best


def first_hour(*, conn: Connection, at_least: int = 0) -> int | None:
    """Return the first hour holding a run, at or after ``at_least``."""
    return conn.exec_driver_sql(
        f"SELECT MIN(hour) FROM sample_runs WHERE hour >= {int(at_least)}"
    ).scalar()


def hours_of(*, conn: Connection, first: int, last: int) -> set[int]:
    """Return the hours in [first, last] holding runs: a seek each."""
    return set(hours_between(conn, "sample_runs", first, last))


def series_of(*, conn: Connection, hour: int) -> list[int]:
    """Return the series with runs in this hour."""
    return list(
        conn.exec_driver_sql(
            f"SELECT DISTINCT series_id FROM sample_runs WHERE hour = {int(hour)}"
        ).scalars()
    )


def array(
    *, conn: Connection, hours: Sequence[int], series: tuple[int, int | None] = (0, None)
) -> np.ndarray:
    """Return the (series_id, ms, value) rows runs hold in these hours and series ids, sorted."""
    found = conn.exec_driver_sql(
        f"SELECT series_id, hour, n_samples, ts, value FROM sample_runs "
        f"WHERE {hours_where(hours, series)} ORDER BY series_id, hour, first_ts"
    ).all()
    return _rows(found)


def delete(
    *, conn: Connection, hours: Sequence[int], series: tuple[int, int | None] = (0, None)
) -> None:
    """Delete the runs of these hours and series ids."""
    conn.exec_driver_sql(f"DELETE FROM sample_runs WHERE {hours_where(hours, series)}")


def delete_series(*, conn: Connection, series_id: int, from_hour: int) -> None:
    """Delete a series' runs of ``from_hour`` on."""
    conn.exec_driver_sql(
        f"DELETE FROM sample_runs WHERE series_id = {int(series_id)} AND hour >= {int(from_hour)}"
    )


def sample_count(*, conn: Connection, from_hour: int = 0, to_hour: int = 2**31 - 1) -> int:
    """Return how many samples the runs of hours [from_hour, to_hour) hold."""
    return int(
        conn.exec_driver_sql(
            "SELECT COALESCE(SUM(n_samples), 0) FROM sample_runs "
            f"WHERE hour >= {int(from_hour)} AND hour < {int(to_hour)}"
        ).scalar_one()
    )


def drop_hours(*, conn: Connection, from_hour: int, to_hour: int) -> int:
    """Delete the runs of hours [from_hour, to_hour); return the samples they held."""
    held = sample_count(conn=conn, from_hour=from_hour, to_hour=to_hour)
    conn.exec_driver_sql(
        f"DELETE FROM sample_runs WHERE hour >= {int(from_hour)} AND hour < {int(to_hour)}"
    )
    return held


def series_bounds(*, conn: Connection, hours: Sequence[int]) -> tuple[int | None, int | None]:
    """Return the least and greatest series id with runs in these hours."""
    lo, hi = conn.exec_driver_sql(
        f"SELECT MIN(series_id), MAX(series_id) FROM sample_runs WHERE {hours_where(hours)}"
    ).one()
    return lo, hi
