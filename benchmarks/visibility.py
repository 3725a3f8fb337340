"""How visible each incident's root cause is in its own signals: a ceiling for the ranking.

Usage: .venv/bin/python benchmarks/visibility.py ../shared/scenarios/nezha-train [--cases]

For every bundle whose truth names a series cause, it runs ``analyze`` and prints the
strongest deviation (peak robust |z|, the analysis' own measure) among the cause's rows
whose onset is by the breach, how many other scored rows deviate more by then, and the
rank ``analyze`` gives the cause. A cause that never leaves its normal range (|z| under
``Config.off_z``), or that dozens of unrelated rows outdo, cannot be put first from
deviation alone: topology, changes or other signals (traces, logs) must. truth.json is
read here only.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from accuracy import first_hit, matches  # noqa: E402

from correlator.analysis.config import Config  # noqa: E402
from correlator.analysis.pipeline import run_analysis  # noqa: E402
from correlator.bundle import read_bundle  # noqa: E402

WEAK_Z = 5.0  # below this a deviation is within what a 1-minute grid's noise often reaches


def visibility(case: Path, cfg: Config) -> dict | None:
    """Return the root's best |z| by the breach, the rows stronger than it, and its rank."""
    truth = json.loads((case / "truth.json").read_text())
    causes = [c for c in truth["root_causes"] if c["kind"] == "series"]
    if not causes:
        return None
    result = run_analysis(read_bundle(case), config=cfg)
    s = result.scored
    if s is None:
        return {"case": case.name, "best_z": 0.0, "stronger": 0, "rank": None}
    sig = s.signals
    is_root = np.array(
        [
            any(matches({"kind": "series", "metric": n, "labels": lbl}, c) for c in causes)
            for n, lbl in zip(sig.names, sig.labels, strict=True)
        ]
    )
    by_breach = s.lead >= -result.grid.step  # within a step the order cannot be told
    strength = np.where(by_breach, s.anomalies.strength, 0.0)
    best = float(strength[is_root].max()) if is_root.any() else 0.0
    stronger = int(((strength > best) & ~is_root & (s.score > 0)).sum())
    suspects = result.to_dict()["suspects"]
    rank = first_hit(suspects, truth)
    return {"case": case.name, "best_z": best, "stronger": stronger, "rank": rank}


def main(argv: list[str] | None = None) -> int:
    """Print each folder's visibility figures (and each case's with --cases)."""
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="example: .venv/bin/python benchmarks/visibility.py "
        "../shared/scenarios/nezha-train --cases",
    )
    ap.add_argument("folders", nargs="+", type=Path)
    ap.add_argument("--cases", action="store_true", help="print each case too")
    args = ap.parse_args(argv)
    cfg = Config()
    for folder in args.folders:
        cases = sorted(c for c in folder.iterdir() if (c / "truth.json").is_file())
        rows = [r for r in (visibility(c, cfg) for c in cases) if r is not None]
        if not rows:
            print(f"== {folder}: no series causes")
            continue
        z = np.array([r["best_z"] for r in rows])
        first = sum(r["rank"] == 1 for r in rows)
        top3 = sum(r["rank"] is not None and r["rank"] <= 3 for r in rows)
        print(
            f"== {folder} ({len(rows)} series causes): root |z| < {cfg.off_z:g} in "
            f"{int((z < cfg.off_z).sum())}, < {WEAK_Z:g} in {int((z < WEAK_Z).sum())}; "
            f"outdone by 10+ rows in {sum(r['stronger'] >= 10 for r in rows)}; "
            f"ranked first in {first}, in the top 3 in {top3}"
        )
        if args.cases:
            for r in rows:
                print(
                    f"    {r['case']:44s} root |z| {r['best_z']:7.1f}  "
                    f"stronger rows {r['stronger']:4d}  rank {r['rank']}"
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
