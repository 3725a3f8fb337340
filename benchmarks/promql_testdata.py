"""Prometheus' own PromQL test files on causeline: how many eval blocks pass, and why not.

Runs every ``eval`` block of ``tests/promql/prometheus-testdata/*.test`` (Prometheus v2.42.0)
through causeline's planner and evaluator and prints, per file, the blocks that pass, differ
(a wrong answer: the tests fail on any), are refused as unsupported (400 ``bad_data``) or
agree over samples the store does not hold (NaN or infinite values: "unstorable"); then the
refusals by reason.

    python benchmarks/promql_testdata.py            # the table and the reasons
    python benchmarks/promql_testdata.py --list     # every block that does not pass
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.promql.promtest import TESTDATA, run_file  # noqa: E402

STATUSES = ("pass", "differ", "unsupported", "unstorable")


def main() -> None:
    """Print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--list", action="store_true", help="print every block not passing")
    args = parser.parse_args()
    total: Counter = Counter()
    reasons: Counter = Counter()
    print(f"{'file':<22}{'evals':>6}" + "".join(f"{s:>12}" for s in STATUSES))
    for path in sorted(TESTDATA.glob("*.test")):
        outcomes = run_file(path)
        counts = Counter(o.status for o in outcomes)
        total.update(counts)
        row = "".join(f"{counts[s]:>12}" for s in STATUSES)
        print(f"{path.name:<22}{len(outcomes):>6}{row}")
        for o in outcomes:
            if o.status == "unsupported":
                reasons[o.reason.split(" (supported")[0][:90]] += 1
            if args.list and o.status != "pass":
                print(f"  {path.name}:{o.case.line} {o.status}: {o.case.query} | {o.reason}")
    n = sum(total.values())
    row = "".join(f"{total[s]:>12}" for s in STATUSES)
    print(f"{'all':<22}{n:>6}{row}")
    print(f"pass: {total['pass'] / n:.1%} of eval blocks; differ: {total['differ']}")
    print("\nrefused, by reason:")
    for reason, count in reasons.most_common():
        print(f"{count:>5}  {reason}")


if __name__ == "__main__":
    main()
