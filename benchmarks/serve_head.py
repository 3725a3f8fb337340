"""Run ``causeline`` with the sample rows counted, not written: the request path's ceiling.

``benchmarks/ingest.py --ceiling`` serves through this. The first argument names the head
(``none``, the one kept); the rest go to ``causeline``. Everything else of a batch runs as
usual (body, validation, series lookup and creation, events, the transaction and its
commit), so its rate is the most any layout of the samples could give the service.
The store's own head (keyed rows and runs, ``correlator/store/tsdb/head.py``) replaced the
prototype heads measured here before.

    CAUSELINE_DATABASE_URL=sqlite:///ceiling.db python benchmarks/serve_head.py none serve
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from causeline.cli import main  # noqa: E402
from correlator.store import ingest  # noqa: E402
from correlator.store.tsdb.read import SampleColumns  # noqa: E402


def count_only(*, conn: object, cols: SampleColumns, runs_ok: bool = True) -> int:
    """Report every row as new without writing it."""
    return len(cols)


if __name__ == "__main__":
    head = sys.argv.pop(1)
    if head != "none":
        sys.exit(f"serve_head.py: unknown head {head!r}; the one head here is 'none'")
    ingest.insert_columns = count_only  # store_batch looks it up at each call
    sys.exit(main())
