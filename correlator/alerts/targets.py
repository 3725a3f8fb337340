"""Webhook targets causeline refuses: cloud metadata, "this host" and the service itself.

One rule serves twice: when the routes are read (a literal address in the URL, in any of
its numeric forms) and when a message is sent (every address the host resolves to, just
before connecting to one of them: ``transport.GuardedBackend``).
"""

from __future__ import annotations

import ipaddress
import socket
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from correlator.settings import ServiceSettings


Address = ipaddress.IPv4Address | ipaddress.IPv6Address
DEFAULT_PORTS = {"http": 80, "https": 443}
NAT64 = ipaddress.ip_network("64:ff9b::/96")  # the well-known NAT64 prefix: an IPv4 inside
THIS_HOST = ipaddress.ip_network("0.0.0.0/8")  # "this host on this network": reaches us
# Cloud metadata services outside link-local (169.254.0.0/16 and fe80::/10 hold the rest).
METADATA = {
    ipaddress.ip_address("fd00:ec2::254"): "AWS instance metadata over IPv6",
    ipaddress.ip_address("100.100.100.200"): "Alibaba Cloud instance metadata",
    ipaddress.ip_address("192.0.0.192"): "Oracle Cloud instance metadata",
    ipaddress.ip_address("168.63.129.16"): "the Azure host's wire server",
}
METADATA_NAMES = (
    "metadata.google.internal",
    "metadata.goog",
    "metadata.tencentyun.com",
    "instance-data",
    "instance-data.ec2.internal",
)
LOOPBACK_NAMES = ("localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback")


def normal_host(host: str) -> str:
    """Return a URL host as resolvers read it: lower case, no trailing dot, no brackets."""
    return host.strip("[]").lower().rstrip(".")


def host_address(host: str) -> Address | None:
    """Return the IP a host names literally, in any form (2852039166, 0xa9.0xfe.., ::ffff:..).

    An IPv4 inside an IPv6 address (IPv4-mapped, NAT64 64:ff9b::/96) is returned as IPv4,
    since that is where a connection to it goes.
    """
    host = normal_host(host)
    try:
        addr: Address = ipaddress.ip_address(host)
    except ValueError:
        if not host or any(c not in "0123456789abcdefx." for c in host):
            return None
        try:
            addr = ipaddress.IPv4Address(socket.inet_aton(host))
        except OSError:
            return None
    return _unwrapped(addr)


def _unwrapped(addr: Address) -> Address:
    if isinstance(addr, ipaddress.IPv6Address):
        if addr.ipv4_mapped is not None:
            return addr.ipv4_mapped
        if addr in NAT64:
            return ipaddress.IPv4Address(int(addr) & 0xFFFFFFFF)
        if addr.scope_id:
            return ipaddress.IPv6Address(str(addr).split("%")[0])
    return addr


def _port(parts) -> int | None:
    try:
        return parts.port or DEFAULT_PORTS.get(parts.scheme)
    except ValueError:
        return None


def _is_loopback(host: str, addr: Address | None) -> bool:
    loopback_name = host in LOOPBACK_NAMES or host.endswith(".localhost")
    return loopback_name or bool(addr and addr.is_loopback)


def _is_this_host(addr: Address | None) -> bool:
    return addr is not None and (addr.is_unspecified or addr in THIS_HOST)


def allowed(host: str, addr: Address | None, allowed_hosts: str | None) -> bool:
    """Say whether ``alert_allowed_hosts`` lists the host by name or a CIDR holding addr."""
    for entry in (allowed_hosts or "").lower().split(","):
        entry = entry.strip()
        if not entry:
            continue
        if normal_host(entry) == host:
            return True
        try:
            net = ipaddress.ip_network(entry, strict=False)
        except ValueError:
            continue
        if addr is not None and addr.version == net.version and addr in net:
            return True
    return False


def _is_service(
    host: str, addr: Address | None, port: int | None, settings: ServiceSettings | None
) -> bool:
    public = urlsplit(getattr(settings, "public_url", "") or "")
    if public.hostname and host == normal_host(public.hostname) and port == _port(public):
        return True
    if port != getattr(settings, "bind_port", None):
        return False
    bind = normal_host(getattr(settings, "bind_host", "") or "")
    if host == bind:
        return True
    bind_addr = host_address(bind)
    if addr is not None and addr == bind_addr:
        return True
    everywhere = _is_this_host(bind_addr)
    return _is_loopback(host, addr) and (everywhere or _is_loopback(bind, bind_addr))


def refused_address(
    host: str, addr: Address | None, port: int | None, settings: ServiceSettings | None
) -> str | None:
    """Say why a host (and the address it names or resolves to) is refused, else None."""
    if addr is not None:
        addr = _unwrapped(addr)
    shown = f"{host} ({addr})" if addr is not None and str(addr) != host else host
    if host in METADATA_NAMES:
        return f"{host} is a cloud metadata service"
    if _is_this_host(addr):
        return f"{shown} means this host itself (it reaches causeline's own ports)"
    if addr is not None and addr.is_link_local:
        return f"{shown} is link-local (cloud metadata lives there)"
    if addr in METADATA:
        return f"{shown} is {METADATA[addr]}"
    if _is_service(host, addr, port, settings):
        return f"{shown}:{port} is this causeline service"
    return None


def refused_target(url: str, settings: ServiceSettings | None) -> str | None:
    """Say why a channel URL is refused (None when it may be used)."""
    parts = urlsplit(url)
    host = normal_host(parts.hostname or "")
    addr = host_address(host)
    if allowed(host, addr, getattr(settings, "alert_allowed_hosts", None)):
        return None
    return refused_address(host, addr, _port(parts), settings)


def refused_resolved(
    host: str, port: int, addresses: list[str], settings: ServiceSettings | None
) -> str | None:
    """Say why a host is refused given every address it resolved to (None: all may be used).

    A host the allow-list names is used whatever it resolves to; a listed CIDR allows
    only the addresses in it. One refused address refuses the host: a resolver that
    answers with several could hand out the refused one next.
    """
    host = normal_host(host)
    allowed_hosts = getattr(settings, "alert_allowed_hosts", None)
    if allowed(host, None, allowed_hosts):
        return None
    for text in addresses:
        addr = host_address(text)
        if addr is None or allowed(host, addr, allowed_hosts):
            continue
        why = refused_address(host, addr, port, settings)
        if why:
            return why
    return None
