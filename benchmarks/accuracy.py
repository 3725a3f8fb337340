"""Score ``analyze`` and two reference rankers on every incident bundle of a folder.

Usage: .venv/bin/python benchmarks/accuracy.py ../shared/scenarios/public [more folders]

Prints AC@1, AC@3, Avg@5 (mean of AC@1..AC@5), owner accuracy of the top suspect, the
median error of the found breach start and the time per case, for ``analyze`` and for
n-sigma (max |z| against mean/std of the hour before) and a BARO-style robust scorer
(median/IQR of the window before the anomaly onset). truth.json is read here only.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from correlator.analysis import (
    analyze,  # noqa: E402
    signals,  # noqa: E402
)
from correlator.analysis import breach as breach_mod  # noqa: E402
from correlator.analysis.timeline import choose_grid, choose_step  # noqa: E402
from correlator.bundle import read_bundle  # noqa: E402

HIST_SUFFIXES = ("_bucket", "_sum", "_count")


def base_metric(name: str) -> str:
    """Return a histogram's metric for its _bucket/_sum/_count series, else the name."""
    for suffix in HIST_SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def matches(suspect: dict, cause: dict) -> bool:
    """Say whether a ranked suspect matches one truth root cause (FORMAT.md rules)."""
    if cause["kind"] == "change":
        return suspect.get("kind") == "change" and suspect.get("id") == cause["id"]
    if suspect.get("kind") != "series":
        return False
    if "metric" in cause and base_metric(suspect["metric"]) != base_metric(cause["metric"]):
        return False
    labels = suspect.get("labels") or {}
    return all(labels.get(k) == v for k, v in cause.get("labels", {}).items())


def first_hit(suspects: list[dict], truth: dict) -> int | None:
    """Return the 1-based rank of the first suspect matching any root cause."""
    for i, s in enumerate(suspects, start=1):
        if any(matches(s, c) for c in truth["root_causes"]):
            return i
    return None


def _setup(bundle):
    series = [s for s in bundle.series if s.ts.size]
    grid = choose_grid(series, choose_step(series))
    found, _, _ = breach_mod.evaluate(series, bundle.sla, grid)
    b = int(np.clip(grid.index(found.start), 0, grid.size - 1))
    sig = signals.build(series, grid, ref_cols=slice(0, max(b - 1, 1)))
    return grid, found, b, sig


def _baseline_stats(bundle, robust: bool) -> dict:
    if not bundle.baseline:
        return {}
    base = [s for s in bundle.baseline if s.ts.size]
    bgrid = choose_grid(base, choose_step(base))
    bsig = signals.build(base, bgrid, ref_cols=slice(None))
    out = {}
    for i in range(len(bsig.names)):
        row = bsig.matrix[i][np.isfinite(bsig.matrix[i])]
        if row.size < 3:
            continue
        if robust:
            q1, med, q3 = np.percentile(row, [25, 50, 75])
            out[bsig.key(i)] = (med, q3 - q1)
        else:
            out[bsig.key(i)] = (row.mean(), row.std())
    return out


def reference_ranker(bundle, *, robust: bool) -> list[dict]:
    """Rank series by max |z| after the onset: n-sigma (mean/std) or BARO-style (median/IQR)."""
    grid, found, b, sig = _setup(bundle)
    if found.start is None:
        return []
    window = max(1, math.ceil(600 / grid.step))  # anomaly window: 10 min before the breach on
    post = max(1, math.ceil(120 / grid.step))
    hour = max(2, math.ceil(3600 / grid.step))
    lo = max(b - window, 0)
    ref = sig.matrix[:, max(lo - hour, 0) : lo]
    test = sig.matrix[:, lo : b + post + 1]
    with np.errstate(all="ignore"):
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            if ref.shape[1] == 0:
                center = spread = np.full(len(sig.names), np.nan)
            elif robust:
                q1, med, q3 = np.nanpercentile(ref, [25, 50, 75], axis=1)
                center, spread = med, q3 - q1
            else:
                center, spread = np.nanmean(ref, axis=1), np.nanstd(ref, axis=1)
    stats = _baseline_stats(bundle, robust)
    for i in range(len(sig.names)):
        got = stats.get(sig.key(i))
        if got is not None:
            center[i], spread[i] = got
    # The same floor as causeline's: a flat series still spreads 2% of its level.
    spread = np.fmax(spread, 0.02 * np.abs(center))
    spread = np.where(np.isfinite(spread) & (spread > 0), spread, 1e-9)
    with np.errstate(all="ignore"):
        z = np.abs(test - center[:, None]) / spread[:, None]
    score = np.nan_to_num(np.nanmax(np.where(np.isfinite(z), z, -1), axis=1), nan=-1)
    order = np.argsort(-score)[:5]
    return [
        {"kind": "series", "metric": sig.names[i], "labels": sig.labels[i], "owner": "infra"}
        for i in order
    ]


def evaluate(folder: Path) -> dict:
    """Run every ranker on every case of a folder; return per-ranker figures."""
    cases = sorted(p for p in folder.iterdir() if (p / "truth.json").is_file())
    rankers = {
        "causeline": lambda b: analyze(b)["suspects"],
        "n-sigma": lambda b: reference_ranker(b, robust=False),
        "baro": lambda b: reference_ranker(b, robust=True),
    }
    rows = {name: [] for name in rankers}
    for case in cases:
        truth = json.loads((case / "truth.json").read_text())
        for name, rank in rankers.items():
            t0 = time.perf_counter()
            bundle = read_bundle(case)
            suspects = rank(bundle)
            elapsed = time.perf_counter() - t0
            hit = first_hit(suspects[:5], truth)
            err = None
            if name == "causeline":
                got = analyze(bundle)["breach_start"]
                err = abs(got - truth["breach_start"]) if got is not None else math.inf
            owner_ok = bool(suspects) and suspects[0].get("owner") == truth.get("owner")
            rows[name].append(
                {"case": case.name, "hit": hit, "time": elapsed, "owner": owner_ok, "err": err}
            )
    return rows


def summary(rows: list[dict]) -> dict:
    """Return AC@1, AC@3, Avg@5, owner accuracy, median breach error and time per case."""
    n = len(rows)
    ac = [sum(1 for r in rows if r["hit"] and r["hit"] <= k) / n for k in range(1, 6)]
    errs = [r["err"] for r in rows if r["err"] is not None]
    return {
        "AC@1": ac[0],
        "AC@3": ac[2],
        "Avg@5": sum(ac) / 5,
        "owner": sum(r["owner"] for r in rows) / n,
        "breach_err_s": statistics.median(errs) if errs else None,
        "s_per_case": sum(r["time"] for r in rows) / n,
    }


def _print(rows: dict, indent: str) -> None:
    for name, r in rows.items():
        s = summary(r)
        err = "-" if s["breach_err_s"] is None else f"{s['breach_err_s']:.0f} s"
        print(
            f"{indent}  {name:10s} AC@1 {s['AC@1']:.2f}  AC@3 {s['AC@3']:.2f}"
            f"  Avg@5 {s['Avg@5']:.2f}  owner {s['owner']:.2f}  breach err {err}"
            f"  {s['s_per_case']:.2f} s/case"
        )


def main(argv: list[str] | None = None) -> int:
    """Print the figures for each folder."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--cases", action="store_true", help="print each case's rank too")
    parser.add_argument(
        "--groups",
        default="",
        help="comma-separated substrings of case names: also print figures per group",
    )
    args = parser.parse_args(argv)
    groups = [g for g in args.groups.split(",") if g]
    for folder in args.folders:
        rows = evaluate(folder)
        print(f"== {folder} ({len(rows['causeline'])} cases)")
        _print(rows, "")
        for g in groups:
            sub = {n: [r for r in rs if g in r["case"]] for n, rs in rows.items()}
            if sub["causeline"]:
                print(f"  -- cases with '{g}' ({len(sub['causeline'])})")
                _print(sub, "  ")
        if args.cases:
            for i, r in enumerate(rows["causeline"]):
                ranks = " ".join(f"{n}={rows[n][i]['hit']}" for n in rows)
                print(f"    {r['case']:40s} {ranks}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
