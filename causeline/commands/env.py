"""``causeline env diff A B``: compare two environment fingerprints."""

from __future__ import annotations

import json
import os

from causeline.commands.errors import CliError
from causeline.commands.options import iso_time, subparser

EXAMPLE = (
    "causeline env diff gpu-node-1 gpu-node-2 --server http://causeline:8400\n"
    "  causeline env diff training.json serving.json"
)


def register(sub) -> None:
    """Add the ``env`` subcommand group."""
    p = subparser(
        sub, "env", "environment fingerprints (GPU, driver, CUDA, packages)", EXAMPLE.split("\n")[0]
    )
    env_sub = p.add_subparsers(dest="env_command", metavar="SUBCOMMAND", required=True)
    d = subparser(env_sub, "diff", "show how two environment fingerprints differ", EXAMPLE)
    d.add_argument("a", help="fingerprint JSON file or host name")
    d.add_argument("b", help="fingerprint JSON file or host name")
    d.add_argument(
        "--server",
        default=os.environ.get("CAUSELINE_SERVER") or os.environ.get("CAUSELINE_AGENT_SERVER"),
        help="service URL, to fetch host names' latest fingerprints (env CAUSELINE_SERVER)",
    )
    d.add_argument(
        "--token",
        default=os.environ.get("CAUSELINE_TOKEN"),
        help="API token if the service asks for one (env CAUSELINE_TOKEN)",
    )
    d.add_argument("--json", action="store_true", help="print the differences as JSON")
    d.set_defaults(func=run_diff)


def _load(ref: str, args) -> tuple[str, dict]:

    if os.path.exists(ref):
        try:
            with open(ref) as fh:
                doc = json.load(fh)
        except (OSError, ValueError) as exc:
            raise CliError(f"cannot read fingerprint file {ref}: {exc}") from exc
        return ref, doc.get("fingerprint", doc) if isinstance(doc, dict) else doc
    if not args.server:
        raise CliError(f"{ref!r} is not a file; pass --server to fetch the host's fingerprint")
    import httpx

    from collector.fingerprint_api import latest_fingerprint

    try:
        with httpx.Client(timeout=10) as client:
            doc = latest_fingerprint(client, args.server, ref, args.token)
    except httpx.HTTPStatusError as exc:
        if exc.response.status_code == 404:
            raise CliError(f"the service has no fingerprint of host {ref!r}") from exc
        raise CliError(f"fetching the fingerprint of {ref!r}: {exc}") from exc
    except httpx.HTTPError as exc:
        raise CliError(f"cannot reach {args.server}: {exc}") from exc
    return f"{ref} ({iso_time(doc.get('ts'))})", doc["fingerprint"]


def _show(value) -> str:
    return "-" if value is None else json.dumps(value) if not isinstance(value, str) else value


def run_diff(args) -> int:
    """Print the differences; exit 0 when equal, 1 when they differ."""
    from collector.fingerprint import diff_fingerprints

    name_a, a = _load(args.a, args)
    name_b, b = _load(args.b, args)
    diffs = diff_fingerprints(a, b)
    if args.json:
        print(
            json.dumps(
                {"a": name_a, "b": name_b, "differences": [d.to_json() for d in diffs]}, indent=2
            )
        )
        return 1 if diffs else 0
    if not diffs:
        print(f"no differences between {name_a} and {name_b}")
        return 0
    width = max(len(d.path) for d in diffs)
    print(f"{'':{width}}  A = {name_a}\n{'':{width}}  B = {name_b}")
    for d in diffs:
        print(f"{d.path:{width}}  {_show(d.a)}  ->  {_show(d.b)}")
    return 1
