"""Two network namespaces joined by a veth pair, for tests that need a network other than the
host's (mDNS, a peer on "another machine"). The addresses (10.x.y.1 and 10.x.y.2, /24) exist only
on that veth pair; both namespaces and the pair are removed afterwards."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import pytest


def ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, timeout=10)


def need_netns() -> None:
    """Skip the test unless it may create network namespaces (root, iproute2)."""
    if os.geteuid() != 0 or shutil.which("ip") is None:
        pytest.skip("needs root and iproute2 to create network namespaces")


@dataclass(frozen=True)
class Side:
    """One namespace of the pair."""

    ns: str
    addr: str
    """Its address on the veth pair."""

    @property
    def prefix(self) -> tuple[str, ...]:
        """Run a command inside it: ``[*side.prefix, *cmd]``."""
        return ("ip", "netns", "exec", self.ns)


@contextmanager
def veth_pair(subnet: str = "10.77.0") -> Iterator[tuple[Side, Side]]:
    """Two new namespaces, ``SUBNET.1`` and ``SUBNET.2`` on a veth pair between them (loopback
    and multicast up); removed on exit."""
    need_netns()
    tag = os.urandom(3).hex()
    sides = (Side(f"ssw-test-{tag}-1", f"{subnet}.1"), Side(f"ssw-test-{tag}-2", f"{subnet}.2"))
    devs = (f"sswa{tag}", f"sswb{tag}")
    try:
        for side in sides:
            ip("netns", "add", side.ns)
        one, two = sides
        ip("link", "add", devs[0], "netns", one.ns, "type", "veth", "peer", "name", devs[1], "netns", two.ns)
        for side, dev in zip(sides, devs, strict=True):
            ip("-n", side.ns, "addr", "add", f"{side.addr}/24", "dev", dev)
            ip("-n", side.ns, "link", "set", dev, "up", "multicast", "on")
            ip("-n", side.ns, "link", "set", "lo", "up")
        yield sides
    finally:
        for side in sides:
            subprocess.run(["ip", "netns", "del", side.ns], capture_output=True, timeout=10)
