"""How peers move bytes: one interface, an in-memory hub and libp2p.

``specswarm.transport`` imports no libp2p (it costs ~0.7 s and ~85 MB); the
libp2p names below load :mod:`specswarm.transport.p2p` on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from specswarm.transport.base import RequestHandler, Transport, TransportStats, Validator
from specswarm.transport.memory import MemoryNetwork, MemoryTransport, open_memory_network

if TYPE_CHECKING:
    from specswarm.transport.p2p import Libp2pTransport, P2PConfig, open_libp2p_transport

__all__ = [
    "Libp2pTransport",
    "MemoryNetwork",
    "MemoryTransport",
    "P2PConfig",
    "RequestHandler",
    "Transport",
    "TransportStats",
    "Validator",
    "open_libp2p_transport",
    "open_memory_network",
]

_LAZY = {"Libp2pTransport", "P2PConfig", "open_libp2p_transport"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from specswarm.transport import p2p

        return getattr(p2p, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
