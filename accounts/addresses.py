"""Which address a request came from, for the login limits (accounts/services/login_limits.py).

Behind a proxy every request arrives from the proxy's own address; the client's is in the
``X-Forwarded-For`` the proxy sends. That header is believed only from a proxy the operator
named (``TRUSTED_PROXIES``): from anyone else it is whatever the client chose to write.
A proxy appends the address it saw to the list it received (nginx's
``$proxy_add_x_forwarded_for``), so the list is read from the right, hop by hop, as long as
each hop is a trusted proxy; the first that is not is the client. Everything to its left
came from the client and is ignored.

Plain Python (no Django), tested directly."""

import ipaddress
from collections.abc import Iterable, Sequence

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Address = ipaddress.IPv4Address | ipaddress.IPv6Address

# IPv6 clients usually hold a whole /64: counting single addresses would let one client
# rotate through millions of them.
IPV6_PREFIX = 64


def parse_networks(entries: Iterable[str]) -> tuple[Network, ...]:
    """``["10.0.0.5", "172.16.0.0/12", "::1"]`` as networks (an address is a /32 or /128).
    A bad entry raises ``ValueError`` naming it."""
    networks = []
    for entry in entries:
        try:
            networks.append(ipaddress.ip_network(entry.strip(), strict=False))
        except ValueError:
            raise ValueError(
                f"{entry!r} is not an IP address or network (e.g. 10.0.0.5 or 172.16.0.0/12)"
            ) from None
    return tuple(networks)


def parse_address(text: str) -> Address | None:
    """An address, IPv4-mapped IPv6 (``::ffff:192.0.2.5``) read as the IPv4 it is; None when
    ``text`` is not one."""
    try:
        address = ipaddress.ip_address(text.strip())
    except ValueError:
        return None
    if address.version == 6 and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def counted_as(address: Address) -> str:
    """How the limits count ``address``: itself (IPv4), or its /64 (IPv6)."""
    if address.version == 4:
        return str(address)
    return str(ipaddress.ip_network(f"{address}/{IPV6_PREFIX}", strict=False))


def client_address(
    remote_addr: str, forwarded_for: str | None, trusted: Sequence[Network]
) -> str | None:
    """The client's address as the limits count it (see the module's docstring), or None
    when a hop that decides it is not an address."""
    hops = [hop.strip() for hop in forwarded_for.split(",")] if forwarded_for else []
    for text in [remote_addr, *reversed(hops)]:
        address = parse_address(text)
        if address is None:
            return None
        if not any(address in network for network in trusted):
            return counted_as(address)
    # Every hop was a trusted proxy: the request came from one of them (a health check).
    return counted_as(address)
