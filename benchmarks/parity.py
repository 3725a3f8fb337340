"""Print, per shared set, how often the store gives a bundle's answer.

For each bundle: ``analyze BUNDLE``; then import it into an empty store and analyse the
SLA from the store at the bundle's breach; then export the stored incident and analyse the
exported bundle. Each must give the same top 5 (same suspects, same order).

    python benchmarks/parity.py                        # every set, SQLite
    python benchmarks/parity.py --engine postgresql --sample 5
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import uuid
from pathlib import Path

SCENARIOS = Path(__file__).resolve().parents[2] / "shared" / "scenarios"
PG_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/test"


def top(result: dict, n: int = 5) -> list[tuple]:
    """Return the identities of the first ``n`` suspects."""
    out = []
    for s in result["suspects"][:n]:
        if s["kind"] == "change":
            out.append(("change", s["id"]))
        else:
            out.append((s["kind"], s.get("metric"), tuple(sorted(s["labels"].items()))))
    return out


def _migrate(url: str) -> None:
    from correlator.store.engine import make_engine
    from correlator.store.migrate import upgrade

    engine = make_engine(url)
    try:
        upgrade(engine)
    finally:
        engine.dispose()


def fresh_database(engine_name: str, tmp: Path) -> tuple[str, object]:
    """Return (url, cleanup) of an empty database with the schema."""
    if engine_name == "sqlite":
        url = f"sqlite:///{tmp / f'{uuid.uuid4().hex}.db'}"
        _migrate(url)
        return url, lambda: None
    import psycopg
    from sqlalchemy.engine import make_url

    name = f"causeline_parity_{uuid.uuid4().hex[:10]}"
    admin = PG_URL.replace("+psycopg", "")
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    url = make_url(PG_URL).set(database=name).render_as_string(hide_password=False)
    _migrate(url)

    def drop() -> None:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    return url, drop


def check(folder: Path, engine_name: str, tmp: Path) -> dict:
    """Return the three answers for one bundle and whether they agree."""
    from correlator.analysis import analyze
    from correlator.bundle import read_bundle, write_bundle
    from correlator.incidents.snapshot import analyze_stored
    from correlator.store.bundles import export_bundle, import_bundle, recorded_window
    from correlator.store.engine import make_engine

    bundle = read_bundle(folder)
    direct = analyze(bundle)
    url, drop = fresh_database(engine_name, tmp)
    engine = make_engine(url)
    try:
        import_bundle(engine=engine, bundle=bundle)
        stored = analyze_stored(engine, bundle.sla["name"], direct["breach_start"])
        start, end = recorded_window(engine=engine, sla_name=bundle.sla["name"])
        out = write_bundle(
            tmp / f"export-{uuid.uuid4().hex}",
            export_bundle(engine=engine, start=start, end=end, sla_name=bundle.sla["name"]),
        )
        again = analyze(read_bundle(out))
    finally:
        engine.dispose()
        drop()
    return {
        "direct": top(direct),
        "stored": top(stored),
        "exported": top(again),
        "breach": direct["breach_start"],
    }


def main() -> int:
    """Run the parity check and print one line per set."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--engine", choices=("sqlite", "postgresql"), default="sqlite")
    p.add_argument("--sample", type=int, default=0, help="bundles per set (0: all)")
    p.add_argument("--sets", nargs="*", default=["public", "petshop-low", "nezha-train"])
    p.add_argument("-v", "--verbose", action="store_true", help="print each mismatch")
    args = p.parse_args()
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.sets:
            folders = sorted(f for f in (SCENARIOS / name).iterdir() if (f / "sla.json").is_file())
            if args.sample:
                folders = folders[:: max(1, len(folders) // args.sample)][: args.sample]
            same_store = same_export = 0
            t0 = time.perf_counter()
            for folder in folders:
                got = check(folder, args.engine, Path(tmp))
                same_store += got["stored"] == got["direct"]
                same_export += got["exported"] == got["direct"]
                if args.verbose and got["stored"] != got["direct"]:
                    print(f"  {folder.name}: direct {got['direct']}\n    stored {got['stored']}")
            n = len(folders)
            failed += (n - same_store) + (n - same_export)
            print(
                f"{name:12s} {args.engine:10s} bundles {n:3d}  store top-5 same {same_store}/{n}"
                f"  export top-5 same {same_export}/{n}  ({time.perf_counter() - t0:.1f} s)"
            )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    raise SystemExit(main())
