"""Ablate each rule of the ranking: set its Config constant to a neutral value, score every group.

Usage: .venv/bin/python benchmarks/ablation.py ../shared/scenarios/public [more folders]
       [--groups onlineboutique,trainticket] [--only name,name]

A group is a folder, split by the ``--groups`` substrings of its case names (the units of
leave-one-group-out). For each constant the table gives, per group, the change in cases at
rank 1 and in the top 3 when the rule is switched off (its neutral value), and a verdict:
``keep`` when switching it off loses a case in some group, ``drop`` when it loses none.
Then each group is scored as if it had been held out: with only the rules that pay in some
other group switched on, then re-checked (a rule switched off that another group gains a
case by, once those rules are off, is back on), and the rules that pay in one group only
are named.
Constants without a neutral value (window sizes, the out-of-range threshold, bounds) are
structure, not rules, and are not ablated. truth.json is read here only.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from accuracy import first_hit  # noqa: E402

from correlator.analysis import Config, analyze  # noqa: E402
from correlator.bundle import read_bundle  # noqa: E402

OFF = 1e12  # a time scale or threshold so large that the rule never acts

# Each rule's constant -> the value that switches the rule off (a weight of 1, a share of
# 0, a threshold never reached).
NEUTRAL: dict[str, float] = {
    "reference_gap_s": 0.0,
    "rel_floor": 0.0,
    "band_q": 50.0,
    "ramp_gain": OFF,
    "ramp_rows": 0,
    "late_weight": 1.0,
    "persistence": 0.0,
    "out_of_scope": 1.0,
    "callee_traffic": 1.0,
    "client_side": 1.0,
    "latency_least": 1.0,
    "support": 0.0,
    "support_most": 1,
    "explains_ratio": 0.0,
    "wave_nodes": OFF,
    "censored": 1.0,
    "standing": 1.0,
    "harmless": 1.0,
    "explained": 0.0,
    "change_unconfirmed": 1.0,
}


def load(folders: list[Path], groups: list[str]) -> dict[str, list]:
    """Return each group's cases as (bundle, truth), read once."""
    out: dict[str, list] = {}
    for folder in folders:
        for case in sorted(folder.iterdir()):
            if not (case / "truth.json").is_file():
                continue
            g = next((g for g in groups if g in case.name), None)
            name = folder.name if g is None else f"{folder.name}/{g}"
            truth = json.loads((case / "truth.json").read_text())
            out.setdefault(name, []).append((read_bundle(case), truth))
    return out


def counts(cases: dict[str, list], cfg: Config) -> dict[str, tuple[int, int]]:
    """Return per group the cases with the cause at rank 1 and in the top 3."""
    out = {}
    for name, group in cases.items():
        hits = [first_hit(analyze(b, config=cfg)["suspects"][:5], t) for b, t in group]
        out[name] = (sum(h == 1 for h in hits), sum(h is not None and h <= 3 for h in hits))
    return out


def main(argv: list[str] | None = None) -> int:
    """Print the ablation table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--groups", default="", help="comma-separated substrings of case names")
    parser.add_argument("--only", default="", help="comma-separated constants to ablate")
    args = parser.parse_args(argv)
    groups = [g for g in args.groups.split(",") if g]
    only = [n for n in args.only.split(",") if n] or list(NEUTRAL)
    cases = load(args.folders, groups)
    default = Config()
    base = counts(cases, default)
    names = list(cases)
    # Kinds are code; exponents are the fit's hook (benchmarks/fit_ranking.py), all 1 unless set.
    tuned = [f for f in dataclasses.fields(Config) if f.name not in ("kinds", "exponents")]
    print("constants in Config:", len(tuned))
    print(
        "as is (cases at rank 1 / top 3): "
        + "  ".join(f"{g} {a}/{b}" for g, (a, b) in base.items())
    )
    print(
        f"{'constant':20s} {'value':>8s} {'off':>8s}  " + " ".join(f"{g[-14:]:>14s}" for g in names)
    )
    pays: dict[str, set[str]] = {}  # rule -> the groups that lose a case without it
    for i, name in enumerate(only, start=1):
        got = counts(cases, switched_off(default, [name]))
        deltas = {g: (got[g][0] - base[g][0], got[g][1] - base[g][1]) for g in names}
        pays[name] = {g for g, (d1, d3) in deltas.items() if d1 < 0 or d3 < 0}
        loses = bool(pays[name])
        verdict = "keep" if loses else "drop"
        cells = " ".join(f"{d1:+6d} / {d3:+4d}" for d1, d3 in deltas.values())
        print(
            f"{name:20s} {getattr(default, name)!s:>8.8s} {NEUTRAL[name]:>8.3g}"
            f"  {cells}  {verdict}",
            flush=True,
        )
        print(f"\r  {i}/{len(only)}", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    held_out(cases, default, base, pays)
    return 0


def switched_off(default: Config, rules) -> Config:
    """Return the config with each named rule at its neutral value."""
    return dataclasses.replace(default, **{n: type(getattr(default, n))(NEUTRAL[n]) for n in rules})


def held_out(cases: dict[str, list], default: Config, base, pays: dict[str, set[str]]) -> None:
    """Print each group scored with only the rules the other groups show to pay.

    A rule that pays in one group alone was kept for the cases in view: left out with its
    group, nothing else would have kept it. This is the figure that group would have had.
    """
    print("leave-one-group-out: each group with only the rules the other groups show to pay")
    for g in sorted(cases, key=lambda g: base[g][0] / max(len(cases[g]), 1)):
        off = [n for n, where in pays.items() if not where - {g}]
        got = counts({g: cases[g]}, switched_off(default, off))[g]
        n = len(cases[g])
        print(
            f"  {g:34s} as is {base[g][0] / n:.2f} / {base[g][1] / n:.2f}, held out "
            f"{got[0] / n:.2f} / {got[1] / n:.2f}  (off: {', '.join(sorted(off)) or '-'})"
        )
        back = rechecked(cases, default, g, off, [r for r in off if pays[r]])
        if back:
            again = counts({g: cases[g]}, switched_off(default, set(off) - set(back)))[g]
            print(
                f"  {'':34s} re-checked {again[0] / n:.2f} / {again[1] / n:.2f}  "
                f"(back on: {', '.join(sorted(back))})"
            )
    single = {n: next(iter(w)) for n, w in pays.items() if len(w) == 1}
    print(
        "rules that pay in one group only: "
        + (", ".join(f"{n} ({g})" for n, g in sorted(single.items())) or "none")
    )
    if single:
        got = counts(cases, switched_off(default, single))
        print(
            "every group without them: "
            + "  ".join(
                f"{g} {got[g][0]}/{got[g][1]} (as is {base[g][0]}/{base[g][1]})" for g in cases
            )
        )


def rechecked(
    cases: dict[str, list], default: Config, g: str, off: list[str], rules: list[str]
) -> list[str]:
    """Return the ``rules`` among those ``off`` with ``g`` held out that pay once they are off.

    Two rules may carry the same cases of another group: each alone then seems to pay
    nowhere. Without ``g`` the others would be judged from where its rules are off, so each
    is switched back on there and kept when some other group gains a case by it and none
    loses more than one.
    """
    others = {h: c for h, c in cases.items() if h != g}
    ref = counts(others, switched_off(default, off))
    back = []
    for rule in rules:
        got = counts(others, switched_off(default, [r for r in off if r != rule]))
        gains = any(got[h][0] > ref[h][0] or got[h][1] > ref[h][1] for h in others)
        if gains and all(min(got[h][0] - ref[h][0], got[h][1] - ref[h][1]) >= -1 for h in others):
            back.append(rule)
    return back


if __name__ == "__main__":
    sys.exit(main())
