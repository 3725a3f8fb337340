"""Component ids of every page, in one place."""

from __future__ import annotations

# Shell
URL = "url"
BANNER = "access-banner"

# Board
BOARD_GRAPH = "board-graph"
BOARD_MODEL = "board-model"
BOARD_INSTANCE = "board-instance"
BOARD_HOST = "board-host"
BOARD_GPU = "board-gpu"
BOARD_PRESET = "board-preset"
BOARD_REFRESH = "board-refresh"
BOARD_INTERVAL = "board-interval"
BOARD_WINDOW = "board-window"
BOARD_VIEW_URL = "board-view-url"
BOARD_LINK = "board-link"
BOARD_STATUS = "board-status"
BOARD_HISTORY = "board-history"
BOARD_SERVICE = "board-service"
BOARD_NOTES = "board-notes"
BOARD_QUERY_PROBLEMS = "board-query-problems"
BOARD_PANELS = "board-panels"  # the person's own panels (URL form values)
BOARD_PANEL_SELECTOR = "board-panel-selector"
BOARD_PANEL_NAME = "board-panel-name"
BOARD_PANEL_KEEP = "board-panel-keep"
BOARD_PANEL_ADD = "board-panel-add"
BOARD_PANEL_MSG = "board-panel-msg"
BOARD_FROM = "board-from"  # absolute range: typed start
BOARD_TO = "board-to"
BOARD_APPLY = "board-apply"
BOARD_RANGE_MSG = "board-range-msg"
BOARD_ZONE = "board-zone"  # "UTC" or "local"
BOARD_BROWSER_ZONE = "board-browser-zone"  # the browser's IANA time zone
BOARD_KEPT = "board-kept"  # browser local storage: kept panels by model or service

# Metric browser
METRICS_FILTER = "metrics-filter"
METRICS_TABLE = "metrics-table"
METRICS_COUNT = "metrics-count"

# Incidents
INCIDENT_IMPORTED = "incident-imported"
INCIDENT_HEADLINE = "incident-headline"
INCIDENT_STATE = "incident-state"
INCIDENT_ACK = "incident-ack"
INCIDENT_RESOLVE = "incident-resolve"
INCIDENT_ESCALATE = "incident-escalate"
INCIDENT_SNOOZE = "incident-snooze"
INCIDENT_ASSIGN = "incident-assign"
INCIDENT_ASSIGN_TO = "incident-assign-to"
INCIDENT_ID = "incident-id"
INCIDENT_SUSPECTS = "incident-suspects"
INCIDENT_NOTES = "incident-notes"
INCIDENT_NOTE_TEXT = "incident-note-text"
INCIDENT_NOTE_TEAM = "incident-note-team"
INCIDENT_NOTE_ADD = "incident-note-add"
INCIDENT_NOTE_MSG = "incident-note-msg"
INCIDENT_RERANK = "incident-rerank"
INCIDENT_RERANK_MSG = "incident-rerank-msg"
INCIDENT_BODY = "incident-body"

# Change calendar
CHANGES_KIND = "changes-kind"
CHANGES_OWNER = "changes-owner"
CHANGES_DAYS = "changes-days"
CHANGES_TIMELINE = "changes-timeline"
CHANGES_LIST = "changes-list"
CHANGES_RELOAD = "changes-reload"
CHANGE_FORM = "change-form"  # prefix of the form's fields: change-form-<field>
CHANGE_SUBMIT = "change-submit"
CHANGE_EDIT_ID = "change-edit-id"
CHANGE_UPDATE = "change-update"
CHANGE_MSG = "change-msg"

# Models
MODELS_PICK = "models-pick"
MODELS_DETAIL = "models-detail"
ENV_LEFT = "env-left"
ENV_RIGHT = "env-right"
ENV_DIFF = "env-diff"
ENV_ALL = "env-all"  # show the keys that agree too

# Capacity
CAPACITY_SOURCE = "capacity-source"
CAPACITY_FIELD = "capacity"  # prefix: capacity-<field>
CAPACITY_RUN = "capacity-run"
CAPACITY_RESULT = "capacity-result"


def field(prefix: str, name: str) -> str:
    """Return the id of a form field."""
    return f"{prefix}-{name}"


# On call
ONCALL_LISTING = "oncall-listing"
ONCALL_TEAM = "oncall-team"
ONCALL_MODEL = "oncall-model"
ONCALL_PERSON = "oncall-person"
ONCALL_CONTACT = "oncall-contact"
ONCALL_START = "oncall-start"
ONCALL_END = "oncall-end"
ONCALL_REASON = "oncall-reason"
ONCALL_SUBMIT = "oncall-submit"
ONCALL_MSG = "oncall-msg"
ONCALL_VIEW = "oncall-view"
ONCALL_ROT_NAME = "oncall-rot-name"
ONCALL_ROT_TEAM = "oncall-rot-team"
ONCALL_ROT_MODEL = "oncall-rot-model"
ONCALL_ROT_MEMBERS = "oncall-rot-members"
ONCALL_ROT_START = "oncall-rot-start"
ONCALL_ROT_PERIOD = "oncall-rot-period"
ONCALL_ROT_SUBMIT = "oncall-rot-submit"
ONCALL_ROT_MSG = "oncall-rot-msg"

# SLAs
SLAS_LISTING = "slas-listing"
SLAS_UNKNOWN = "slas-unknown"
SLAS_OP = "slas-op"
SLAS_PICK = "slas-pick"
SLAS_THRESHOLD = "slas-threshold"
SLAS_FOR = "slas-for"
SLAS_SEVERITY = "slas-severity"
SLAS_DOC = "slas-doc"
SLAS_SAVE = "slas-save"
SLAS_MSG = "slas-msg"
