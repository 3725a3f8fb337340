"""Who is using the dashboard, and whether they may write."""

from __future__ import annotations

import getpass
import ipaddress
from dataclasses import dataclass


def is_loopback(host: str) -> bool:
    """Return whether a bind address is loopback-only."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True, slots=True)
class Access:
    """The person behind a request (None when unknown) and why writes are refused."""

    user: str | None
    read_only_reason: str | None

    @property
    def can_write(self) -> bool:
        """Return whether this request may write."""
        return self.read_only_reason is None


def resolve_access(
    *, headers, bind_host: str, user_header: str | None, has_token: bool, local_user=None
) -> Access:
    """Decide the person and write permission of one request."""
    if not has_token:
        return Access(None, "the dashboard has no service token (CAUSELINE_DASHBOARD_API_TOKEN)")
    if user_header:
        user = (headers.get(user_header) or "").strip()
        if not user:
            return Access(None, f"no {user_header} header from the auth proxy")
        return Access(user, None)
    if is_loopback(bind_host):
        return Access(local_user or getpass.getuser(), None)
    return Access(
        None,
        f"bound to {bind_host} with no auth configured "
        "(put it behind an auth proxy and set CAUSELINE_DASHBOARD_USER_HEADER)",
    )
