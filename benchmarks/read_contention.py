"""Reads beside busy threads: 24 h board reads while another thread parses ingest batches.

In the service a read runs in a worker thread while the event loop parses ingest bodies and
other workers build the board's figures. Python's sqlite3 gives the GIL back around every
fetched row; each time the reading thread then waits for a busy thread to hand it back, up
to the interpreter's switch interval (5 ms by default). So a read of many rows slows with the
switch interval times its rows. psycopg gives the GIL back once per query, and numpy
around its larger steps, so PostgreSQL reads slow less but still slow.

For each engine it stores ``--days`` of ``--series`` series ``--step`` seconds apart up to
now, with every complete hour rolled up, then compacts all but the two-hour head, as the
service keeps a store. For each switch interval it times ``read_range`` of 24 h of
``--read-series`` series at the board's step (3 min) and without a step: alone, then beside
a thread that parses ``benchmarks/ingest.py`` batches (10,000 samples each) for ``--duty`` of
its time. It prints the median read, how much slower than alone, and how many batches the
busy thread parsed per second against its rate alone (measured over 3 s first; on a shared
machine this last figure moves by a fifth from run to run).

    python benchmarks/read_contention.py
    python benchmarks/read_contention.py --engines sqlite --intervals 0.0005,0.00005 --duty 1
"""

from __future__ import annotations

import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ingest import drop_pg, make_bodies  # noqa: E402  (benchmarks/ingest.py)
from storage import DAY, fill, scratch_store, store_arguments  # noqa: E402  (benchmarks/storage.py)

BOARD_STEP = 180.0


class Parser:
    """A thread parsing ingest batches for ``duty`` of its time, as the event loop does."""

    def __init__(self, bodies: list[bytes], duty: float):
        self.bodies, self.duty = bodies, duty
        self.parsed = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        from collector.schema import parse_batch

        i = 0
        while not self._stop.is_set():
            began = time.perf_counter()
            parse_batch(orjson.loads(self.bodies[i % len(self.bodies)]))
            self.parsed += 1
            i += 1
            if self.duty < 1:
                time.sleep((time.perf_counter() - began) * (1 - self.duty) / self.duty)

    def __enter__(self) -> Parser:
        self.began = time.perf_counter()
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.rate = self.parsed / (time.perf_counter() - self.began)


def parse_rate(bodies: list[bytes], duty: float, seconds: float = 3.0) -> float:
    """Return batches/s of a Parser alone."""
    with Parser(bodies, duty) as parser:
        time.sleep(seconds)
    return parser.rate


def read_ms(engine, ids: list[int], end: float, step: float | None, repeats: int) -> float:
    """Return the median milliseconds of a 24 h read_range."""
    from correlator.store.tsdb.read import read_range

    times = []
    for _ in range(repeats):
        began = time.perf_counter()
        with engine.connect() as conn:
            read_range(conn=conn, series_ids=ids, start=end - DAY, end=end, step=step)
        times.append(time.perf_counter() - began)
    return float(np.median(times)) * 1000


def prepare(engine, args) -> None:
    """Store the data, roll it up and compact all but the two-hour head."""
    from correlator.store.migrate import upgrade
    from correlator.store.tsdb.compaction import compact
    from correlator.store.tsdb.rollups import roll_up

    upgrade(engine)
    fill(engine, args.series, args.days, args.step, args.end, "mixed")
    roll_up(engine=engine, max_hours=args.days * 24 + 2)
    compact(engine=engine, head_seconds=7200, max_hours=10**9)


def run(engine_name: str, args, bodies: list[bytes]) -> None:
    """Measure one engine at every switch interval."""
    from correlator.store.engine import make_engine

    ids = list(range(1, min(args.read_series, args.series) + 1))
    with tempfile.TemporaryDirectory() as folder:
        url, name = scratch_store(engine_name, folder)
        engine = make_engine(url)  # the store's own settings (SQLite pragmas)
        try:
            prepare(engine, args)
            print(f"\n{engine_name}: 24 h x {len(ids)} series, read alone and beside a parser")
            solo_rates = {duty: parse_rate(bodies, duty) for duty in args.duty}
            for interval in args.intervals:
                sys.setswitchinterval(interval)
                for label, step in (("board step", BOARD_STEP), ("no step", None)):
                    alone = read_ms(engine, ids, args.end, step, args.repeats)
                    for duty in args.duty:
                        with Parser(bodies, duty) as parser:
                            busy = read_ms(engine, ids, args.end, step, args.repeats)
                        print(
                            f"  switch {interval * 1e6:6.0f} us  {label:10}  alone {alone:7.0f} ms"
                            f"  beside a {duty:4.0%} parser {busy:7.0f} ms ({busy / alone:5.1f}x)"
                            f"  parser at {parser.rate / solo_rates[duty]:4.0%} of its rate alone"
                        )
        finally:
            engine.dispose()
            if name:
                drop_pg(name)


def main() -> None:
    """Parse arguments and measure each engine."""
    ap = store_arguments(__doc__, series=200, days=2, step=15.0)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument(
        "--intervals",
        default="0.005,0.0005,0.00005",
        help="sys.setswitchinterval values, seconds (Python's default is 0.005)",
    )
    ap.add_argument("--duty", default="1,0.3", help="busy shares of the parsing thread")
    args = ap.parse_args()
    args.intervals = [float(x) for x in args.intervals.split(",")]
    args.duty = [float(x) for x in args.duty.split(",")]
    args.end = time.time()
    bodies = make_bodies(200_000, 10_000, 20_000, 20)
    for engine_name in args.engines.split(","):
        run(engine_name, args, bodies)


if __name__ == "__main__":
    main()
