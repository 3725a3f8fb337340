"""Score ``analyze`` on incident bundles made worse the ways real scrapes are: gaps, a coarser
scrape, more noise.

Usage: .venv/bin/python benchmarks/robustness.py ../shared/scenarios/public [more folders]
       .venv/bin/python benchmarks/robustness.py ../shared/scenarios/public --seeds 5 --cases

For each folder it prints AC@1 and AC@3 of the bundles as they are, then of each variant:
- ``gaps``: each sample dropped with probability ``--gap`` (0.1), as missed scrapes;
- ``coarse``: every ``--every``-th (2) sample kept, as a longer scrape interval;
- ``noise``: Gaussian noise of ``--noise`` (0.5) times each series' own point-to-point
  spread added to gauges (counters and histogram series are left as they are).

Random variants run once per seed (``--seeds``); their figures are the mean over seeds.
A ranking that holds only on the exact samples it was tuned on will move here.
truth.json is read here only, to score.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from accuracy import ac_figures, first_hit  # noqa: E402

from correlator.analysis import analyze  # noqa: E402
from correlator.bundle import Bundle, Series, read_bundle  # noqa: E402

COUNTER_SUFFIXES = ("_bucket", "_count", "_sum", "_total")


def gaps(bundle: Bundle, rng: np.random.Generator, share: float) -> Bundle:
    """Return the bundle with each sample dropped with probability ``share``."""
    out = []
    for s in bundle.series:
        keep = rng.random(s.ts.size) >= share
        out.append(Series(s.name, s.labels, s.ts[keep], s.values[keep]))
    return replace(bundle, series=out)


def coarse(bundle: Bundle, every: int) -> Bundle:
    """Return the bundle with every ``every``-th sample of each series kept."""
    out = [Series(s.name, s.labels, s.ts[::every], s.values[::every]) for s in bundle.series]
    return replace(bundle, series=out)


def noisy(bundle: Bundle, rng: np.random.Generator, factor: float) -> Bundle:
    """Return the bundle with noise of ``factor`` x each gauge's point-to-point spread added."""
    out = []
    for s in bundle.series:
        finite = s.values[np.isfinite(s.values)]
        if s.name.endswith(COUNTER_SUFFIXES) or finite.size < 5:
            out.append(s)
            continue
        d = np.diff(finite)
        spread = 1.4826 * float(np.median(np.abs(d - np.median(d)))) / np.sqrt(2)
        out.append(
            Series(s.name, s.labels, s.ts, s.values + rng.normal(0, factor * spread, s.ts.size))
        )
    return replace(bundle, series=out)


def main(argv: list[str] | None = None) -> int:
    """Print the figures of each folder as it is and of its variants."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--seeds", type=int, default=3, help="runs of each random variant")
    parser.add_argument("--gap", type=float, default=0.1, help="share of samples dropped")
    parser.add_argument("--every", type=int, default=2, help="keep every N-th sample")
    parser.add_argument("--noise", type=float, default=0.5, help="noise x point-to-point spread")
    parser.add_argument("--cases", action="store_true", help="print each case whose rank moved")
    args = parser.parse_args(argv)
    variants: dict[str, Callable[[Bundle, int], Bundle]] = {
        "gaps": lambda b, seed: gaps(b, np.random.default_rng(seed), args.gap),
        "coarse": lambda b, seed: coarse(b, args.every),
        "noise": lambda b, seed: noisy(b, np.random.default_rng(seed), args.noise),
    }
    for folder in args.folders:
        cases = sorted(p for p in folder.iterdir() if (p / "truth.json").is_file())
        base: list[int | None] = []
        moved: dict[str, list[tuple[float, float]]] = {k: [] for k in variants}
        hits: dict[tuple[str, int], list[int | None]] = {}
        for case in cases:
            truth = json.loads((case / "truth.json").read_text())
            bundle = read_bundle(case)
            first = first_hit(analyze(bundle)["suspects"][:5], truth)
            base.append(first)
            for name, make in variants.items():
                for seed in range(args.seeds if name != "coarse" else 1):
                    hit = first_hit(analyze(make(bundle, seed))["suspects"][:5], truth)
                    hits.setdefault((name, seed), []).append(hit)
                    if args.cases and hit != first:
                        print(f"    {name:7s} seed {seed}  {case.name:45s} {first} -> {hit}")
        for (name, _seed), got in hits.items():
            moved[name].append(ac_figures(got))
        a1, a3 = ac_figures(base)
        line = [f"== {folder} ({len(cases)} cases)", f"  as they are  AC@1 {a1:.2f}  AC@3 {a3:.2f}"]
        for name, figures in moved.items():
            m1 = float(np.mean([f[0] for f in figures]))
            m3 = float(np.mean([f[1] for f in figures]))
            runs = f"{len(figures)} run{'s' if len(figures) > 1 else ''}"
            line.append(f"  {name:12s} AC@1 {m1:.2f}  AC@3 {m3:.2f}  ({runs})")
        print("\n".join(line), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
