"""Leave one group out: choose rule constants on the other groups, score the group held out.

Usage: .venv/bin/python benchmarks/held_out.py ../shared/scenarios/public [more folders]
       --groups onlineboutique,trainticket --grid client_side=0.25,0.5,0.75,1
       [--grid latency_least=0.1,0.3,0.5,1 ...]

Groups are as in ``benchmarks/ablation.py``. For each group held out, each ``--grid`` constant
takes the value that puts the most cases at rank 1 (then in the top 3) over the other groups,
the others at their shipped value; ties go to the constant's neutral value (the rule off, from
``ablation.NEUTRAL``) when it is in the grid. The held-out group is then scored with the
chosen values. A rule whose gain on a group vanishes when that group is held out was tuned
to it. truth.json is read here only.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from ablation import NEUTRAL, counts, load  # noqa: E402

from correlator.analysis import Config  # noqa: E402


def _on(got: dict, groups: list[str], name: str, value: float) -> tuple:
    """Return how a value scores on some groups: cases at rank 1, in the top 3, rule off."""
    rank1, top3 = sum(got[g][0] for g in groups), sum(got[g][1] for g in groups)
    return rank1, top3, value == NEUTRAL.get(name)


def main(argv: list[str] | None = None) -> int:
    """Print each group's shipped figure and its figure with constants chosen elsewhere."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--groups", default="", help="comma-separated substrings of case names")
    parser.add_argument(
        "--grid", action="append", required=True, help="NAME=v1,v2,... (repeatable)"
    )
    args = parser.parse_args(argv)
    grid = {}
    for item in args.grid:
        name, _, values = item.partition("=")
        grid[name] = [float(v) for v in values.split(",") if v]
    cases = load(args.folders, [g for g in args.groups.split(",") if g])
    shipped = Config()
    scores = {
        (name, v): counts(cases, dataclasses.replace(shipped, **{name: v}))
        for name, values in grid.items()
        for v in values
    }
    base = counts(cases, shipped)
    print(f"{'held out':32s} {'shipped':>10s} {'chosen elsewhere':>17s}  values")
    for held in cases:
        rest = [g for g in cases if g != held]
        chosen = {
            name: max(values, key=lambda v, n=name: _on(scores[(n, v)], rest, n, v))
            for name, values in grid.items()
        }
        got = counts(cases, dataclasses.replace(shipped, **chosen))[held]
        n = len(cases[held])
        print(
            f"{held + f' ({n})':32s} {base[held][0]:>4d} / {base[held][1]:<3d}"
            f" {got[0]:>8d} / {got[1]:<6d}  " + ", ".join(f"{k}={v:g}" for k, v in chosen.items()),
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
