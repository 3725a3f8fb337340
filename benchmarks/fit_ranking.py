"""Fit the exponents of the ranking's factors on the shared sets, leaving each group out.

Usage: .venv/bin/python benchmarks/fit_ranking.py ../shared/scenarios/public [more folders]
       [--groups onlineboutique,trainticket] [--lambdas 0.3,1,3,10,30]

The score of a row is a product of factors (``correlator/analysis/scoring.py``: severity,
timing, persistence, topology, ...), each with exponent 1 unless ``Config.exponents`` names
it. This fits those exponents as a conditional logit: in each incident, the chance that a
row is the cause is proportional to exp(sum_k v_k log factor_k), and the fit maximises the
chance given to the true cause's rows, with a ridge pulling every v_k towards one shared
value (today's product, all exponents equal). The exponents are v / that shared value.

For each group (a folder, split by the ``--groups`` substrings of case names): the ridge
strength is chosen by leaving each of the other groups out in turn (the held-out
likelihood), the exponents are fitted on the other groups, and the group is ranked with
them by ``analyze``. It prints per group AC@1 / AC@3 as is and as held out with fitted
exponents, then the exponents fitted on every group. truth.json is read here only.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

import numpy as np
from scipy.optimize import minimize
from scipy.special import logsumexp

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from ablation import load  # noqa: E402
from accuracy import first_hit, matches  # noqa: E402

from correlator.analysis import Config, analyze  # noqa: E402
from correlator.analysis.pipeline import run_analysis  # noqa: E402

# Factors that gate rather than weigh: the breached series itself scores 0 at any exponent.
GATES = ("symptom",)
ROWS = 400  # rows per incident kept for the fit, best score first: the rest never rank


def case_rows(bundle, truth: dict, cfg: Config) -> tuple[np.ndarray, np.ndarray, list[str]] | None:
    """Return (log factors of the scored rows, which rows are a true cause, factor names)."""
    causes = [c for c in truth["root_causes"] if c["kind"] == "series"]
    res = run_analysis(bundle, config=cfg)
    s = res.scored
    if s is None or not causes:
        return None
    names = [k for k in s.factors if k not in GATES]
    keep = np.flatnonzero(s.score > 0)
    keep = keep[np.argsort(-s.score[keep], kind="stable")][:ROWS]
    logs = np.column_stack([np.log(np.maximum(s.factors[k][keep], 1e-12)) for k in names])
    sig = s.signals
    hit = np.array(
        [
            any(
                matches({"kind": "series", "metric": sig.names[i], "labels": sig.labels[i]}, c)
                for c in causes
            )
            for i in keep
        ]
    )
    if not hit.any():
        return None
    return logs, hit, names


def nll(v: np.ndarray, cases: list) -> float:
    """Return the negative log chance the model gives the true causes, summed over cases."""
    total = 0.0
    for logs, hit, _ in cases:
        s = logs @ v
        total -= logsumexp(s[hit]) - logsumexp(s)
    return total


def fit(cases: list, lam: float, k: int) -> np.ndarray:
    """Return exponents fitted with a ridge of strength ``lam`` towards one shared value."""

    def loss(p: np.ndarray) -> float:
        v, beta = p[:k], p[k]
        return nll(v, cases) + lam * float(np.sum((v - beta) ** 2))

    start = np.ones(k + 1)
    res = minimize(loss, start, method="L-BFGS-B")
    v, beta = res.x[:k], res.x[k]
    return v / beta if beta > 1e-6 else np.ones(k)


def held_out_nll(w: np.ndarray, cases: list) -> float:
    """Return the negative log chance of left-out cases, only the temperature refitted."""
    t = minimize(lambda b: nll(b[0] * w, cases), [1.0], method="L-BFGS-B").x[0]
    return nll(t * w, cases)


def choose_lambda(train: dict[str, list], lambdas: list[float], k: int) -> float:
    """Return the ridge strength with the best likelihood on each training group left out."""
    best, best_lam = np.inf, lambdas[0]
    for lam in lambdas:
        total = 0.0
        for g in train:
            rest = [c for h, cs in train.items() if h != g for c in cs]
            w = fit(rest, lam, k)
            total += held_out_nll(w, train[g])
        if total < best:
            best, best_lam = total, lam
    return best_lam


def figures(group: list, cfg: Config) -> tuple[float, float]:
    """Return AC@1 and AC@3 of ``analyze`` with ``cfg`` on a group's cases."""
    hits = [first_hit(analyze(b, config=cfg)["suspects"][:5], t) for b, t in group]
    n = max(len(hits), 1)
    return sum(h == 1 for h in hits) / n, sum(h is not None and h <= 3 for h in hits) / n


def main(argv: list[str] | None = None) -> int:
    """Print each group's figures as is and held out with fitted exponents."""
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        epilog="example: .venv/bin/python benchmarks/fit_ranking.py ../shared/scenarios/public "
        "../shared/scenarios/nezha-train --groups onlineboutique,trainticket",
    )
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--groups", default="", help="comma-separated substrings of case names")
    parser.add_argument("--lambdas", default="0.3,1,3,10,30", help="ridge strengths tried")
    args = parser.parse_args(argv)
    lambdas = [float(x) for x in args.lambdas.split(",")]
    cases = load(args.folders, [g for g in args.groups.split(",") if g])
    default = Config()
    rows: dict[str, list] = {}
    names: list[str] = []
    for g, group in cases.items():
        rows[g] = []
        for b, t in group:
            got = case_rows(b, t, default)
            if got is not None:
                rows[g].append(got)
                names = got[2]
    k = len(names)
    print("factors:", ", ".join(names))
    print(f"{'group':32s} {'as is':>12s} {'held out':>12s}  lambda")
    for g, group in cases.items():
        train = {h: cs for h, cs in rows.items() if h != g}
        lam = choose_lambda(train, lambdas, k)
        w = fit([c for cs in train.values() for c in cs], lam, k)
        cfg = dataclasses.replace(default, exponents=tuple(zip(names, map(float, w), strict=True)))
        a1, a3 = figures(group, default)
        h1, h3 = figures(group, cfg)
        print(f"{g:32s} {a1:5.2f} / {a3:4.2f} {h1:5.2f} / {h3:4.2f}  {lam:g}", flush=True)
        print("   " + ", ".join(f"{n} {x:.2f}" for n, x in zip(names, w, strict=True)), flush=True)
    lam = choose_lambda(rows, lambdas, k)
    w = fit([c for cs in rows.values() for c in cs], lam, k)
    print(f"fitted on every group (lambda {lam:g}):")
    print("   " + ", ".join(f"({n!r}, {x:.2f})" for n, x in zip(names, w, strict=True)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
