"""``causeline model``: register models, submit model cards, list impact of a service."""

from __future__ import annotations

import json
import time
from pathlib import Path

from causeline.commands.errors import CliError
from causeline.commands.options import subparser
from causeline.commands.records import add_common, author_of, reading, show, writing
from correlator.vocabulary import TEAMS


def register(sub) -> None:
    """Add the model subcommand and its actions."""
    p = subparser(
        sub,
        "model",
        "the model registry: models, cards, instances, impact of a shared service",
        "causeline model card click_rank_v3 3.3.0 card.json",
    )
    acts = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    add = subparser(
        acts,
        "add",
        "register a model",
        'causeline model add click_rank_v3 --owner algo --description "CTR ranking"',
    )
    add.add_argument("name")
    add.add_argument("--owner", choices=TEAMS, default="algo")
    add.add_argument("--description", default="")
    add_common(add, author=True)
    add.set_defaults(func=add_cmd)
    card = subparser(
        acts,
        "card",
        "submit the model card of a version (JSON file)",
        "causeline model card click_rank_v3 3.3.0 card.json",
    )
    card.add_argument("name")
    card.add_argument("version")
    card.add_argument("file", help="card JSON (see docs/process.md)")
    add_common(card, author=True)
    card.set_defaults(func=card_cmd)
    inst = subparser(
        acts,
        "instance",
        "register an instance of a model",
        "causeline model instance click_rank_v3 rank-0 --version 3.3.0 --host gpu-node-1",
    )
    inst.add_argument("name")
    inst.add_argument("instance")
    inst.add_argument("--version", default="")
    inst.add_argument("--host", default="")
    add_common(inst, author=True)
    inst.set_defaults(func=instance_cmd)
    ls = subparser(acts, "list", "list models", "causeline model list")
    add_common(ls)
    ls.set_defaults(func=list_cmd)
    imp = subparser(
        acts,
        "impact",
        "which models and instances depend on a service",
        "causeline model impact user-features",
    )
    imp.add_argument("service")
    add_common(imp)
    imp.set_defaults(func=impact_cmd)


def add_cmd(args) -> int:
    """Register a model."""
    from correlator.store.registry import ModelExists, add_model

    model = {"name": args.name, "owner": args.owner, "description": args.description}
    try:
        with writing(args) as conn:
            show(add_model(conn=conn, model=model | {"author": author_of(args)}, now=time.time()))
    except ModelExists as exc:
        raise CliError(f"model {exc} exists") from exc
    return 0


def card_cmd(args) -> int:
    """Check and store a model card."""
    from correlator.incidents.cards import card_errors
    from correlator.store.registry import get_model, put_card

    try:
        card = json.loads(Path(args.file).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CliError(f"{args.file}: {exc}") from exc
    if not isinstance(card, dict):
        raise CliError(f"{args.file}: the card must be a JSON object")
    errors = card_errors(card)
    if errors:
        raise CliError("invalid model card:\n" + "\n".join(f"  {f}: {m}" for f, m in errors))
    with writing(args) as conn:
        if get_model(conn=conn, name=args.name) is None:
            raise CliError(f"no model {args.name}; add it with `causeline model add {args.name}`")
        show(
            put_card(
                conn=conn,
                model=args.name,
                version=args.version,
                card=card,
                author=author_of(args),
                now=time.time(),
            )
        )
    return 0


def instance_cmd(args) -> int:
    """Register an instance."""
    from correlator.store.registry import add_instance, get_model

    with writing(args) as conn:
        if get_model(conn=conn, name=args.name) is None:
            raise CliError(f"no model {args.name}")
        inst = {"instance": args.instance, "version": args.version, "host": args.host}
        show(
            add_instance(
                conn=conn,
                model=args.name,
                instance=inst | {"author": author_of(args)},
                now=time.time(),
            )
        )
    return 0


def list_cmd(args) -> int:
    """Print the models."""
    from correlator.store.registry import list_models

    with reading(args) as conn:
        for m in list_models(conn=conn):
            print(f"{m['name']:30} {m['owner']:5} versions: {', '.join(m['versions']) or '-'}")
    return 0


def impact_cmd(args) -> int:
    """Print the impact review of a shared service."""
    from correlator.store.registry import impact

    with reading(args) as conn:
        got = impact(conn=conn, service=args.service)
    if not got["models"]:
        print(f"nothing is known to depend on service:{got['service']}")
    for m in got["models"]:
        print(
            f"{m['model']:30} via {'+'.join(m['via']):14} "
            f"versions: {', '.join(m['versions']) or '-'}"
            f"  instances: {', '.join(m['instances']) or '-'}"
        )
    return 0
