"""What a source returns from one ``sample()`` call, and the ``Source`` protocol."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from collector.schema import Event


@dataclass(slots=True)
class Sample:
    """One value of one series at the time of the reading."""

    name: str
    labels: dict[str, str]
    value: float


@dataclass(slots=True)
class Reading:
    """The samples and events one source produced in one round."""

    samples: list[Sample] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)

    def add(self, name: str, value: float, labels: dict[str, str]) -> None:
        """Append one sample."""
        self.samples.append(Sample(name, labels, float(value)))

    def extend(self, other: Reading) -> None:
        """Append every sample and event of another reading."""
        self.samples.extend(other.samples)
        self.events.extend(other.events)


@runtime_checkable
class Source(Protocol):
    """A producer of samples: the agent calls ``sample()`` once per interval."""

    name: str

    def sample(self) -> Reading:
        """Return the current readings; raise only for a failure of the whole source."""
        ...

    def close(self) -> None:
        """Release threads, files and library handles."""
        ...
