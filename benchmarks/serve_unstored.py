"""Run ``causeline`` with sample rows counted but never written: the request path alone.

``benchmarks/ingest.py --ceiling`` serves through this. Everything else of a batch runs
as usual (body, validation, series lookup and creation, events, the transaction and its
commit), so the rate it reaches is the most any sample layout could give the service.

    python benchmarks/serve_unstored.py serve --port 8000
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from causeline.cli import main  # noqa: E402
from correlator.store import ingest  # noqa: E402
from correlator.store.samples import SampleColumns  # noqa: E402


def count_only(*, conn: object, cols: SampleColumns) -> int:
    """Report every row as new without writing it."""
    return len(cols)


if __name__ == "__main__":
    ingest.insert_columns = count_only  # store_batch looks it up at each call
    sys.exit(main())
