"""Score ``analyze`` and two reference rankers on every incident bundle of a folder.

Usage: .venv/bin/python benchmarks/accuracy.py ../shared/scenarios/public [more folders]

Prints AC@1, AC@3, Avg@5 (mean of AC@1..AC@5), owner accuracy of the top suspect, the
median error of the found breach start and the time per case, for ``analyze`` and for the
published reference rankers of the RCAEval package (``pip install -e '.[bench]'``): BARO
and n-sigma by default, run on the same signals with the breach start as detection time
and the bundle's baseline as normal data. truth.json is read here only.

It ends with the confidence of the top suspect: its reliability (confidence bins against
the hit rate) and expected calibration error, with the shipped weights and fitted leaving
each group out, and the weights a fit on every group gives.

``--shuffles K`` runs causeline again with each bundle's series in K shuffled orders: the
figures must not move, since the order of a bundle's series means nothing.
"""

from __future__ import annotations

import argparse
import dataclasses
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
    confidence,  # noqa: E402
    signals,  # noqa: E402
)
from correlator.analysis import breach as breach_mod  # noqa: E402
from correlator.analysis.config import Config  # noqa: E402
from correlator.analysis.timeline import choose_grid, choose_step  # noqa: E402
from correlator.bundle import read_bundle  # noqa: E402

HIST_SUFFIXES = ("_bucket", "_sum", "_count")
# RCAEval methods run beside causeline (e_diagnosis and ht need salesforce-pyrca as well).
REFERENCE = ("baro", "nsigma")


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
    if suspect.get("members"):  # a group counts as its shared labels plus its first member
        labels = labels | suspect["members"][0]["labels"]
    if "service" not in labels and "server" in labels:  # a call edge counts as its callee
        labels = labels | {"service": labels["server"]}
    return all(labels.get(k) == v for k, v in cause.get("labels", {}).items())


def first_hit(suspects: list[dict], truth: dict) -> int | None:
    """Return the 1-based rank of the first suspect matching any root cause."""
    for i, s in enumerate(suspects, start=1):
        if any(matches(s, c) for c in truth["root_causes"]):
            return i
    return None


def _rows(series, grid):
    """Return the signals causeline scores (counters as rates) on a grid."""
    half = slice(0, max(grid.size // 2, 1))
    return signals.build(series, grid, kinds=Config().kinds, ref_cols=half)


def _frame(bundle):
    """Return (time-indexed frame of every signal, baseline included, breach start, row facts).

    The frame is what RCAEval's methods read: a ``time`` column and one column per signal,
    gaps filled forward then backward. The baseline, when the bundle has one, comes first as
    the normal data it is.
    """
    import pandas as pd

    series = [s for s in bundle.series if s.ts.size]
    grid = choose_grid(series, choose_step(series))
    found, _, _ = breach_mod.evaluate(series, bundle.sla, grid)
    sig = _rows(series, grid)
    facts = [(sig.names[i], sig.labels[i]) for i in range(len(sig.names))]
    cols = [str(i) for i in range(len(facts))]
    parts = [pd.DataFrame(sig.matrix.T, columns=cols).assign(time=grid.times)]
    base = [s for s in bundle.baseline or [] if s.ts.size]
    if base:
        bgrid = choose_grid(base, choose_step(base))
        bsig = _rows(base, bgrid)
        where = {sig.key(i): str(i) for i in range(len(facts))}
        named = {
            where[bsig.key(j)]: bsig.matrix[j]
            for j in range(len(bsig.names))
            if bsig.key(j) in where
        }
        # The baseline's timestamps are its own (often a later day): placed to end one step
        # before the window, as RCAEval's normal data must come before the detection time.
        shift = min(0.0, grid.times[0] - grid.step - bgrid.times[-1])
        frame = pd.DataFrame({c: named.get(c, np.full(bgrid.size, np.nan)) for c in cols})
        parts.insert(0, frame.assign(time=bgrid.times + shift))
    data = pd.concat(parts, ignore_index=True).ffill().bfill().fillna(0.0)
    return data, found.start, facts


def _within(labels: dict, wanted: dict) -> bool:
    """Say whether ``labels`` hold every label of ``wanted``."""
    return all(labels.get(k) == v for k, v in wanted.items())


def rcaeval_ranker(method: str):
    """Return a ranker running RCAEval's published ``method`` (detection time = breach start)."""
    import importlib

    from RCAEval import e2e

    # Some methods live in the package, others in a module of their name that the package
    # only imports on some Python versions.
    func = getattr(e2e, method, None)
    if not callable(func):
        func = getattr(importlib.import_module(f"RCAEval.e2e.{method}"), method)

    def rank(bundle, case=None) -> list[dict]:
        data, start, facts = _frame(bundle)
        if start is None:
            return []
        # A dataset name makes RCAEval drop the time column and constant columns, as in its runs.
        out = func(data, inject_time=start, dataset="causeline")
        suspects = []
        sla = bundle.sla
        for col in out["ranks"]:
            name, labels = facts[int(col)]
            if name == sla["metric"] and _within(labels, sla.get("labels") or {}):
                continue  # the breached series itself, as causeline leaves it out
            if len(suspects) == 5:
                break
            suspects.append({"kind": "series", "metric": name, "labels": labels, "owner": "infra"})
        return suspects

    return rank


# Run in a subprocess with an earlier commit's tree first on sys.path: argv is the tree, then
# case folders; prints one JSON line per case with its top suspects.
_EARLIER = """
import json, sys
sys.path.insert(0, sys.argv[1])
from correlator.analysis import analyze
from correlator.bundle import read_bundle
for case in sys.argv[2:]:
    found = analyze(read_bundle(case))["suspects"][:5]
    print(json.dumps({"case": case, "suspects": found}, default=str), flush=True)
"""


def earlier_suspects(rev: str, cases: list[Path]) -> dict[str, list[dict]]:
    """Return each case's top suspects by ``analyze`` as it was at commit ``rev``.

    The commit is checked out with ``git worktree add`` into a temporary folder and run in
    a subprocess with that tree first on ``sys.path``; the folder is removed afterwards.
    """
    import subprocess
    import tempfile

    root = Path(__file__).resolve().parents[1]
    with tempfile.TemporaryDirectory(prefix="causeline-against-") as tmp:
        tree = Path(tmp) / "tree"
        subprocess.run(
            ["git", "-C", str(root), "worktree", "add", "--detach", "--quiet", str(tree), rev],
            check=True,
        )
        try:
            out = subprocess.run(
                [sys.executable, "-c", _EARLIER, str(tree), *(str(c.resolve()) for c in cases)],
                cwd=tree,
                check=False,
                capture_output=True,
                text=True,
            )
            if out.returncode:
                raise RuntimeError(f"analyze at {rev} failed:\n{out.stderr[-2000:]}")
        finally:
            subprocess.run(
                ["git", "-C", str(root), "worktree", "remove", "--force", str(tree)], check=False
            )
    found = (json.loads(line) for line in out.stdout.splitlines() if line.startswith("{"))
    return {f["case"]: f["suspects"] for f in found}


def evaluate(
    folder: Path,
    reference: tuple[str, ...] = REFERENCE,
    earlier: dict[str, dict[str, list[dict]]] | None = None,
) -> dict:
    """Run every ranker on every case of a folder; return per-ranker figures.

    ``earlier`` maps a name (a commit) to each case's suspects found by that commit.
    """
    cases = sorted(p for p in folder.iterdir() if (p / "truth.json").is_file())
    rankers = {
        "causeline": lambda b, case: analyze(b)["suspects"],
    }
    for rev, found in (earlier or {}).items():
        rankers[rev] = lambda b, case, found=found: found.get(str(case.resolve()), [])
    for method in reference:
        rankers[method] = rcaeval_ranker(method)
    rows = {name: [] for name in rankers}
    for case in cases:
        truth = json.loads((case / "truth.json").read_text())
        for name, rank in rankers.items():
            t0 = time.perf_counter()
            bundle = read_bundle(case)
            suspects = rank(bundle, case)
            elapsed = time.perf_counter() - t0
            hit = first_hit(suspects[:5], truth)
            err, x = None, None
            if name == "causeline":
                full = analyze(bundle)
                got = full["breach_start"]
                err = abs(got - truth["breach_start"]) if got is not None else math.inf
                if full.get("confidence") is not None:  # None: too little data to claim one
                    x = ([s["score"] for s in suspects], len(bundle.series))
            owner_ok = bool(suspects) and suspects[0].get("owner") == truth.get("owner")
            rows[name].append(
                {
                    "case": case.name,
                    "hit": hit,
                    "time": None if name in (earlier or {}) else elapsed,  # not timed here
                    "owner": owner_ok,
                    "err": err,
                    "x": x,
                }
            )
    return rows


# The method's tunable choices, each with the values tried. Leave-one-set-out picks them on
# every other set and scores the set left out; the defaults in Config are the pick on all.
CHOICES = {
    "late_weight": (0.8, 0.5),
    "standing": (0.2, 0.5),
    "ramp_gain": (0.6, 0.8),
    "client_side": (0.5, 0.3),
    "latency_least": (0.3, 0.5),
}


def ac_figures(hits: list[int | None]) -> tuple[float, float]:
    """Return AC@1 and AC@3 of 1-based ranks (None: not in the list)."""
    n = len(hits) or 1
    return (
        sum(1 for h in hits if h == 1) / n,
        sum(1 for h in hits if h is not None and h <= 3) / n,
    )


def leave_one_set_out(folders: list[Path]) -> list[str]:
    """Return report lines: per set, in-sample figures beside those chosen without the set."""
    import itertools

    cases = {
        f: [
            (read_bundle(c), json.loads((c / "truth.json").read_text()))
            for c in sorted(f.iterdir())
            if (c / "truth.json").is_file()
        ]
        for f in folders
    }
    default = Config()
    grid = [
        dict(zip(CHOICES, values, strict=True)) for values in itertools.product(*CHOICES.values())
    ]
    hits: list[dict[Path, list]] = []
    for i, choice in enumerate(grid, start=1):
        cfg = dataclasses.replace(default, **choice)
        hits.append(
            {
                f: [first_hit(analyze(b, config=cfg)["suspects"][:5], t) for b, t in cs]
                for f, cs in cases.items()
            }
        )
        print(f"\r  tried {i}/{len(grid)} choices", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)

    def objective(k: int, sets) -> tuple:
        # Each set counts the same; ties go to the choice nearest the current defaults.
        score = sum(sum(ac_figures(hits[k][f])) / 2 for f in sets) / len(sets)
        moved = sum(getattr(default, n) != v for n, v in grid[k].items())
        return (round(score, 6), -moved)

    current = {n: getattr(default, n) for n in CHOICES}
    here = grid.index(current) if current in grid else None
    best_all = max(range(len(grid)), key=lambda k: objective(k, folders))
    lines = [f"best on all sets: {grid[best_all]}", f"current defaults: {current}"]
    for f in folders:
        others = [g for g in folders if g != f]
        k = max(range(len(grid)), key=lambda k: objective(k, others)) if others else best_all
        a1, a3 = ac_figures(hits[k][f])
        mine = ac_figures(hits[here][f]) if here is not None else (math.nan, math.nan)
        changed = {n: v for n, v in grid[k].items() if v != current[n]} or "the defaults"
        lines.append(
            f"{f}: in-sample AC@1 {mine[0]:.2f} AC@3 {mine[1]:.2f} | left out AC@1 {a1:.2f}"
            f" AC@3 {a3:.2f} (chosen on the others: {changed})"
        )
    return lines


def order_spread(folder: Path, shuffles: int) -> list[str]:
    """Return report lines: causeline's figures with each case's series in shuffled orders.

    A bundle's series order carries no meaning, so every figure should be the same.
    """
    cases = [c for c in sorted(folder.iterdir()) if (c / "truth.json").is_file()]
    ranks: dict[str, list] = {}
    for case in cases:
        bundle = read_bundle(case)
        truth = json.loads((case / "truth.json").read_text())
        ranks[case.name] = []
        for seed in range(shuffles):
            series = list(bundle.series)
            np.random.default_rng(seed).shuffle(series)
            found = analyze(dataclasses.replace(bundle, series=series))["suspects"]
            ranks[case.name].append(first_hit(found[:5], truth))
    per_seed = [ac_figures([r[k] for r in ranks.values()]) for k in range(shuffles)]
    ac1, ac3 = [a for a, _ in per_seed], [b for _, b in per_seed]
    moved = [f"{name} {r}" for name, r in ranks.items() if len(set(r)) > 1]
    return [
        f"  series shuffled {shuffles} times: AC@1 {min(ac1):.2f}-{max(ac1):.2f}"
        f"  AC@3 {min(ac3):.2f}-{max(ac3):.2f}; cases whose rank moved: {len(moved)}",
        *(f"    {m}" for m in moved),
    ]


def logo_groups(folder: Path, rows: dict, groups: list[str]) -> dict[str, dict[str, list]]:
    """Split a folder's rows by the group substrings its case names hold (else one group)."""
    out: dict[str, dict[str, list]] = {}
    for i, r in enumerate(rows["causeline"]):
        g = next((g for g in groups if g in r["case"]), None)
        name = folder.name if g is None else f"{folder.name}/{g}"
        group = out.setdefault(name, {n: [] for n in rows})
        for n in rows:
            group[n].append(rows[n][i])
    return out


def calibration(by_group: dict[str, dict[str, list]]) -> list[str]:
    """Return report lines: the confidence's reliability, shipped and fitted leaving each group out.

    Each group's confidences come from weights fitted on the other groups only, so the
    table shows how the confidence holds on incidents of a kind it never saw.
    """
    rows = {
        g: [r for r in group["causeline"] if r["x"] is not None] for g, group in by_group.items()
    }
    rows = {g: rs for g, rs in rows.items() if rs}
    y = {g: np.array([r["hit"] == 1 for r in rs], dtype=float) for g, rs in rows.items()}

    def fitted(groups: list[str]) -> tuple[tuple[float, ...], tuple[float, float]]:
        """Return weights fitted on the groups, and the range of log10 series they saw."""
        sizes = np.log10([r["x"][1] for g in groups for r in rows[g]])
        seen = (float(sizes.min()), float(sizes.max()))
        x = np.array([confidence.features(*r["x"], seen) for g in groups for r in rows[g]])
        return confidence.fit(x, np.concatenate([y[g] for g in groups])), seen

    def chances(g: str, weights, seen) -> np.ndarray:
        return np.array([confidence.confidence(*r["x"], weights, seen) for r in rows[g]])

    left_out = {}
    for g in rows:
        others = [o for o in rows if o != g]
        if others:
            left_out[g] = chances(g, *fitted(others))
    every_y = np.concatenate(list(y.values()))
    lines = [f"cases with a confidence: {every_y.size}"]
    lines.append(f"weights fitted on all groups: {fitted(list(rows))[0]}")
    lines.append(f"shipped weights: {confidence.WEIGHTS}")
    shipped = (confidence.WEIGHTS, confidence.SERIES_SEEN)
    tables = {"shipped": np.concatenate([chances(g, *shipped) for g in rows])}
    if left_out:
        tables["left-one-group-out"] = np.concatenate([left_out[g] for g in rows if g in left_out])
        every_y = np.concatenate([y[g] for g in rows if g in left_out])
    for name, p in tables.items():
        ys = every_y if name != "shipped" else np.concatenate(list(y.values()))
        table, ece = confidence.reliability(p, ys)
        sure = p >= 0.8
        lines.append(
            f"{name}: ECE {ece:.3f}; top suspects at confidence >= 0.8: {sure.sum()}"
            + (f", {ys[sure].mean():.2f} right" if sure.any() else "")
        )
        lines += [
            f"  {lo:.1f}-{hi:.1f}: {n:3d} cases, mean confidence {m:.2f}, top right {r:.2f}"
            for lo, hi, n, m, r in table
        ]
    return lines


def summary(rows: list[dict]) -> dict:
    """Return AC@1, AC@3, Avg@5, owner accuracy, median breach error and time per case."""
    n = len(rows)
    ac = [sum(1 for r in rows if r["hit"] and r["hit"] <= k) / n for k in range(1, 6)]
    errs = [r["err"] for r in rows if r["err"] is not None]
    times = [r["time"] for r in rows if r["time"] is not None]
    return {
        "AC@1": ac[0],
        "AC@3": ac[2],
        "Avg@5": sum(ac) / 5,
        "owner": sum(r["owner"] for r in rows) / n,
        "breach_err_s": statistics.median(errs) if errs else None,
        "s_per_case": statistics.mean(times) if times else None,
    }


def _print(rows: dict, indent: str) -> None:
    for name, r in rows.items():
        s = summary(r)
        err = "-" if s["breach_err_s"] is None else f"{s['breach_err_s']:.0f} s"
        print(
            f"{indent}  {name:10s} AC@1 {s['AC@1']:.2f}  AC@3 {s['AC@3']:.2f}"
            f"  Avg@5 {s['Avg@5']:.2f}  owner {s['owner']:.2f}  breach err {err}"
            + ("" if s["s_per_case"] is None else f"  {s['s_per_case']:.2f} s/case")
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
    parser.add_argument(
        "--reference",
        default=",".join(REFERENCE),
        help="comma-separated RCAEval methods to run beside causeline ('' for none)",
    )
    parser.add_argument(
        "--loso",
        action="store_true",
        help="also pick the method's choices (CHOICES) leaving each folder out, and score it",
    )
    parser.add_argument(
        "--shuffles",
        type=int,
        default=0,
        help="also run causeline with each bundle's series in this many shuffled orders",
    )
    parser.add_argument(
        "--against",
        default="",
        help="also run analyze as it was at this commit (a git worktree) and print it beside",
    )
    args = parser.parse_args(argv)
    reference = tuple(m for m in args.reference.split(",") if m)
    groups = [g for g in args.groups.split(",") if g]
    earlier = {}
    if args.against:
        cases = [
            c for f in args.folders for c in sorted(f.iterdir()) if (c / "truth.json").is_file()
        ]
        earlier[args.against] = earlier_suspects(args.against, cases)
    by_group: dict[str, dict[str, list]] = {}
    for folder in args.folders:
        rows = evaluate(folder, reference, earlier)
        for name, group in logo_groups(folder, rows, groups).items():
            by_group[name] = group
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
        if args.shuffles:
            print("\n".join(order_spread(folder, args.shuffles)))
    print("== per group (leave-one-group-out units): AC@1 / AC@3")
    names = list(next(iter(by_group.values()))) if by_group else []
    print(f"  {'group':34s} " + " ".join(f"{n[:12]:>12s}" for n in names))
    for gname, group in by_group.items():
        cells = [ac_figures([r["hit"] for r in group[n]]) for n in names]
        n_cases = len(group["causeline"])
        print(
            f"  {gname + f' ({n_cases})':34s} " + " ".join(f"{a:.2f} / {b:.2f}" for a, b in cells)
        )
    if by_group:
        print("== confidence of the top suspect: reliability (bins of confidence vs hit rate)")
        for line in calibration(by_group):
            print(f"  {line}")
    if args.loso:
        print("== leave one set out")
        for line in leave_one_set_out(args.folders):
            print(f"  {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
