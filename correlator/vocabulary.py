"""The fixed words of causeline's records, each defined once: kinds, teams, stages, aggregates.

Each is a ``Literal`` type for the API's bodies and a tuple of its values for checks
elsewhere (the bundle reader, the store, alert routing).
"""

from __future__ import annotations

from typing import Literal, get_args

ChangeKind = Literal["deploy", "config", "feature", "image", "capacity", "infra"]
CHANGE_KINDS: tuple[str, ...] = get_args(ChangeKind)

Team = Literal["algo", "infra"]  # the two teams that own suspects, changes and on-call
TEAMS: tuple[str, ...] = get_args(Team)

RolloutStage = Literal["offline_eval", "shadow", "canary", "full", "rollback"]
ROLLOUT_STAGES: tuple[str, ...] = get_args(RolloutStage)

# How an SLA folds its series (one per instance...) into one value per time.
Aggregate = Literal["max", "min", "mean", "sum"]
AGGREGATES: tuple[str, ...] = get_args(Aggregate)
DEFAULT_AGGREGATE: Aggregate = "max"

Op = Literal[">", "<"]  # an SLA is breached above (">") or below ("<") its threshold

# Least to most severe: alert routes send a severity and the ones above it.
Severity = Literal["info", "minor", "major", "critical"]
SEVERITIES: tuple[str, ...] = get_args(Severity)
DEFAULT_SEVERITY: Severity = "major"

# What a chat message announces.
AlertEvent = Literal[
    "opened", "updated", "acknowledged", "assigned", "escalated", "snoozed", "resolved"
]

# The parts of a model card, each free text (correlator/incidents/cards.py checks them).
MODEL_CARD_PARTS: tuple[str, ...] = (
    "purpose",
    "input_schema",
    "output_schema",
    "feature_dependencies",
    "offline_evaluation",
    "resource_needs",
    "known_risks",
    "random_seed",
    "locked_dependencies",
)
