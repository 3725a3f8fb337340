"""Container restarts as the kubelet records them in its pod log directory.

The kubelet writes each container's output to
``/var/log/pods/<namespace>_<pod>_<uid>/<container>/<restart_count>.log``:
the highest number there is the container's restart count. Reading it needs
only a read-only hostPath mount (which node log shippers already have), no
API token and no container runtime socket. The kubelet keeps the current and
the previous log, so the count survives while the pod exists.
"""

from __future__ import annotations

import logging
import os

from collector.reading import Reading

log = logging.getLogger(__name__)
DEFAULT_ROOT = "/var/log/pods"


class ContainerRestartSource:
    """Report ``container_restarts_total`` per container from the kubelet's log tree."""

    name = "restarts"

    def __init__(self, *, host: str, root: str = DEFAULT_ROOT):
        self._host = host
        self._root = root
        self._warned = False

    def sample(self) -> Reading:
        """Return one counter per container seen under the pod log root."""
        out = Reading()
        try:
            pods = os.listdir(self._root)
        except OSError as exc:
            if not self._warned:
                log.info("no container restarts: %s not readable (%s)", self._root, exc.strerror)
                self._warned = True
            return out
        for pod_dir in pods:
            parts = pod_dir.split("_")
            if len(parts) < 3:
                continue
            namespace, pod = parts[0], "_".join(parts[1:-1])
            base = os.path.join(self._root, pod_dir)
            try:
                containers = os.listdir(base)
            except OSError:
                continue
            for container in containers:
                count = self._restart_count(os.path.join(base, container))
                if count is not None:
                    out.add(
                        "container_restarts_total",
                        count,
                        {
                            "host": self._host,
                            "namespace": namespace,
                            "instance": pod,
                            "container": container,
                        },
                    )
        return out

    @staticmethod
    def _restart_count(path: str) -> int | None:
        try:
            names = os.listdir(path)
        except OSError:
            return None
        counts = [int(n.split(".")[0]) for n in names if n.split(".")[0].isdigit()]
        return max(counts) if counts else None

    def close(self) -> None:
        """Release nothing."""
