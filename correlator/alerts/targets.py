"""Webhook targets causeline refuses: link-local (cloud metadata) and the service itself."""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
DEFAULT_PORTS = {"http": 80, "https": 443}


def host_address(host: str) -> Address | None:
    """Return the IP a URL host names literally (also 2852039166 and 0xa9.0xfe.. forms)."""
    try:
        addr = ipaddress.ip_address(host)
    except ValueError:
        if not host or any(c not in "0123456789abcdefxABCDEFX." for c in host):
            return None
        try:
            addr = ipaddress.IPv4Address(socket.inet_aton(host))
        except OSError:
            return None
    mapped = getattr(addr, "ipv4_mapped", None)
    return mapped or addr


def _port(parts) -> int | None:
    try:
        return parts.port or DEFAULT_PORTS.get(parts.scheme)
    except ValueError:
        return None


def _is_loopback(host: str, addr: Address | None) -> bool:
    return host == "localhost" or bool(addr and addr.is_loopback)


def _allowed(host: str, addr: Address | None, allowed: str) -> bool:
    for entry in allowed.lower().split(","):
        entry = entry.strip()
        if not entry:
            continue
        if entry == host:
            return True
        try:
            net = ipaddress.ip_network(entry, strict=False)
        except ValueError:
            continue
        if addr is not None and addr.version == net.version and addr in net:
            return True
    return False


def _is_service(host: str, addr: Address | None, port: int | None, settings) -> bool:
    public = urlsplit(getattr(settings, "public_url", "") or "")
    if public.hostname and host == public.hostname.lower() and port == _port(public):
        return True
    if port != getattr(settings, "bind_port", None):
        return False
    bind = (getattr(settings, "bind_host", "") or "").lower()
    if host == bind:
        return True
    bind_addr = host_address(bind)
    everywhere = bind_addr is not None and bind_addr.is_unspecified
    if _is_loopback(host, addr) and (everywhere or _is_loopback(bind, bind_addr)):
        return True
    return everywhere and addr is not None and addr.is_unspecified


def refused_target(url: str, settings) -> str | None:
    """Say why a channel URL is refused ('' or None when it may be used)."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    addr = host_address(host)
    if _allowed(host, addr, getattr(settings, "alert_allowed_hosts", None) or ""):
        return None
    if addr is not None and addr.is_link_local:
        return f"{host} is link-local (cloud metadata lives there)"
    if _is_service(host, addr, _port(parts), settings):
        return f"{host}:{_port(parts)} is this causeline service"
    return None
