"""Tail a JSON-lines inference log into the model-side vocabulary.

One request per line, e.g. ``{"ts": ..., "latency_ms": 12.5, "batch_size": 8,
"input_length": 310, "score": 0.71, "status": "ok"}`` (field names
configurable). The tail follows rotation (rename + new file: the old file is
read to its end first) and truncation (start again from 0), and keeps its
position (inode, offset) in a state file so a restarted agent resumes.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable
from typing import BinaryIO

from collector.reading import Reading
from collector.requests import Request, RequestStats

log = logging.getLogger(__name__)
DEFAULT_FIELDS = {
    "ts": "ts",
    "latency_ms": "latency_ms",
    "batch_size": "batch_size",
    "input_length": "input_length",
    "score": "score",
    "status": "status",
}
MAX_READ_BYTES = 64 * 1024 * 1024


class LogTailSource:
    """Read new lines of one JSON-lines log each round."""

    name = "logtail"

    def __init__(
        self,
        path: str,
        *,
        labels: dict[str, str],
        fields: dict[str, str] | None = None,
        state_file: str | None = None,
        monotonic: Callable[[], float] = time.monotonic,
    ):
        self.path = path
        self.fields = {**DEFAULT_FIELDS, **(fields or {})}
        self.state_file = state_file
        self._stats = RequestStats(labels)
        self._monotonic = monotonic
        self._window_start = monotonic()
        self._fh: BinaryIO | None = None
        self._inode: int | None = None
        self._partial = b""
        self.bad_lines = 0
        self._restore()

    def _restore(self) -> None:
        state = None
        if self.state_file and os.path.exists(self.state_file):
            try:
                with open(self.state_file) as fh:
                    state = json.load(fh)
            except (OSError, ValueError) as exc:
                log.warning("ignoring unreadable tail state %s: %s", self.state_file, exc)
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return
        if not self._open() or self._fh is None:
            return  # gone since the stat (rotated away): the next round opens the new file
        if state and state.get("inode") == st.st_ino and state.get("offset", 0) <= st.st_size:
            self._fh.seek(state["offset"])
        elif not state:
            self._fh.seek(0, os.SEEK_END)  # first start: only new requests

    def _open(self) -> bool:
        try:
            fh = open(self.path, "rb")  # noqa: SIM115 - held open across rounds
        except FileNotFoundError:
            return False
        if self._fh:
            self._fh.close()
        self._fh = fh
        self._inode = os.fstat(fh.fileno()).st_ino
        self._partial = b""
        return True

    def _read_lines(self) -> list[bytes]:
        lines: list[bytes] = []
        if self._fh is None and not self._open():
            return lines
        assert self._fh is not None  # set above; _open() only ever replaces it with a file
        while True:
            try:
                st = os.stat(self.path)
            except FileNotFoundError:
                st = None
            if st is not None and st.st_ino == self._inode and st.st_size < self._fh.tell():
                log.info("%s was truncated; reading from the start", self.path)
                self._fh.seek(0)
                self._partial = b""
            lines.extend(self._chunk())
            if st is not None and st.st_ino != self._inode:
                lines.extend(self._chunk())  # the rotated file's rest, then the new file
                if self._partial:
                    lines.append(self._partial)
                self._open()
                continue
            return lines

    def _chunk(self) -> list[bytes]:
        assert self._fh is not None  # only called by _read_lines, after it opened the file
        data = self._partial + self._fh.read(MAX_READ_BYTES)
        if not data:
            return []
        *lines, self._partial = data.split(b"\n")
        return lines

    def _parse(self, line: bytes) -> Request | None:
        f = self.fields
        try:
            obj = json.loads(line)
            latency = obj.get(f["latency_ms"])
            return (
                None if latency is None else float(latency),
                str(obj.get(f["status"], "ok")),
                _num(obj.get(f["batch_size"])),
                _num(obj.get(f["input_length"])),
                _num(obj.get(f["score"])),
            )
        except (ValueError, TypeError, AttributeError):
            self.bad_lines += 1
            return None

    def sample(self) -> Reading:
        """Aggregate the lines appended since the last round."""
        requests = [
            r for line in self._read_lines() if line.strip() if (r := self._parse(line)) is not None
        ]
        now = self._monotonic()
        seconds, self._window_start = now - self._window_start, now
        out = self._stats.window(requests, seconds)
        self._save()
        return out

    def _save(self) -> None:
        if not self.state_file or self._fh is None:
            return
        offset = self._fh.tell() - len(self._partial)
        tmp = self.state_file + ".tmp"
        with open(tmp, "w") as fh:
            json.dump({"path": self.path, "inode": self._inode, "offset": offset}, fh)
        os.replace(tmp, self.state_file)

    def close(self) -> None:
        """Save the position and close the file."""
        self._save()
        if self._fh:
            self._fh.close()
            self._fh = None


def _num(value) -> float | None:
    return None if value is None else float(value)
