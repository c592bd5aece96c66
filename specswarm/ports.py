"""Free TCP ports for listeners this package starts (peers, the model service, its workers).

A port the kernel hands out for ``bind(port 0)`` comes from the same ephemeral range as the
source ports of outgoing connections, so between probing it and listening on it another
process's dial may take it ("Address already in use"). :func:`free_port` picks a port below
that range instead, which outgoing connections never use, and falls back to the kernel's
choice when the range leaves no room.
"""

from __future__ import annotations

import random
import socket
from pathlib import Path

RANGE_FILE = Path("/proc/sys/net/ipv4/ip_local_port_range")
LOWEST = 20000  # listeners are picked from LOWEST up to the ephemeral range's first port
TRIES = 64
_rng = random.SystemRandom()


def ephemeral_range() -> tuple[int, int]:
    """The kernel's range for outgoing source ports (Linux's default where it cannot be read)."""
    try:
        lo, hi = (int(x) for x in RANGE_FILE.read_text().split()[:2])
    except (OSError, ValueError):
        return 32768, 60999
    return lo, hi


def _bindable(family: socket.AddressFamily, host: str, port: int) -> int | None:
    with socket.socket(family, socket.SOCK_STREAM) as s:
        try:
            s.bind((host, port))
        except OSError:
            return None
        return int(s.getsockname()[1])


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port on ``host`` (an IPv4 or IPv6 address) that nothing listens on right now and
    that outgoing connections do not take: below the ephemeral range when it leaves room."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    lo, _ = ephemeral_range()
    if lo - LOWEST >= 1000:
        for _ in range(TRIES):
            port = _bindable(family, host, _rng.randrange(LOWEST, lo))
            if port is not None:
                return port
    port = _bindable(family, host, 0)
    if port is None:
        raise OSError(f"no free TCP port on {host}")
    return port
