"""The store's one time unit: unix seconds in Python, integer milliseconds in the database."""

from __future__ import annotations

from sqlalchemy import BigInteger, Dialect, event
from sqlalchemy.orm import Mapper
from sqlalchemy.types import TypeDecorator


class Millis(TypeDecorator[float]):
    """A time column: binds unix seconds (rounded to the millisecond), reads back seconds.

    Every record table (changes, incidents, alerts, on-call...) keeps its times this way, so
    no repository function converts by hand. Samples, chunks and rollups keep raw integer
    milliseconds: their hot paths bind through the driver, not SQLAlchemy.
    """

    impl = BigInteger
    cache_ok = True

    def process_bind_param(self, value: float | None, dialect: Dialect) -> int | None:
        """Return the milliseconds stored for unix seconds."""
        return None if value is None else round(float(value) * 1000)

    def process_result_value(self, value: int | None, dialect: Dialect) -> float | None:
        """Return the unix seconds of stored milliseconds."""
        return None if value is None else value / 1000.0


def as_written(seconds: float | None) -> float | int | None:
    """Return a read time as a person wrote it: whole seconds as an int (1700000000)."""
    return int(seconds) if seconds is not None and seconds.is_integer() else seconds


def to_millisecond(seconds: float) -> float:
    """Return unix seconds as a Millis column reads them back (whole milliseconds)."""
    return round(float(seconds) * 1000) / 1000.0


def _hold_what_is_stored(target, value, oldvalue, initiator):
    return None if value is None else to_millisecond(value)


def round_on_set(mapper: Mapper, cls: type) -> None:
    """Make a mapped class's Millis attributes hold, once set, what a read would return."""
    for attr in mapper.column_attrs:
        if isinstance(attr.columns[0].type, Millis):
            event.listen(getattr(cls, attr.key), "set", _hold_what_is_stored, retval=True)
