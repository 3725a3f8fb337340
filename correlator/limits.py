"""The limits a stored record's fields share: the API refuses past them, the bundle reader too."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

MAX_TS = 1e11  # unix seconds; far beyond any real timestamp, safe in milliseconds
MAX_NAME = 200  # names, ids, labels' values, authors, targets
NAME_PATTERN = r"^[^\x00/]+$"  # a name is a URL path segment: no NUL, no "/"
MAX_SUMMARY = 10_000  # a change's summary, a model's description
MAX_DESCRIPTION = 100_000  # an SLA's written document (Markdown)

Seconds = Annotated[float, Field(ge=0, le=MAX_TS, allow_inf_nan=False)]  # a time: unix seconds
Text200 = Annotated[str, Field(max_length=MAX_NAME)]  # a short text: a label value, a person
