"""The libp2p transport: configuration and start-up of one py-libp2p host.

::

    async with open_libp2p_transport(seed, "/ip4/127.0.0.1/tcp/0", bootstrap=[addr],
                                     mdns=False, topic="specswarm/run/<id>") as t:
        await t.wait_for_mesh(timeout=10)
        await t.publish(b"...")

One host (Ed25519 key from a 32-byte seed, Noise, yamux) runs:

- **GossipSub** with every parameter that bites set explicitly
  (:class:`P2PConfig`; why, in ``docs/LIBP2P.md``), strict signing, our
  validator as the topic validator, and the subscription drained at once into a
  large channel;
- **paced publishing**: a token bucket plus a wait while any peer's 32-entry
  outbound queue is filling up, so a burst is delayed rather than silently lost;
- **request/response** on ``/specswarm/sync/1.0.0``: one length-prefixed request
  frame, one response frame per stream;
- **peer exchange** on ``/specswarm/peers/1.0.0``: each side sends its own
  addresses and those of the peers it is connected to, and a dialer keeps up to
  ``dial_target`` known peers dialled with backoff — so the swarm is a mesh, not a star, and
  losing the first peer partitions nothing. Bootstrap addresses are retried
  until they answer;
- optional **mDNS** discovery (zeroconf), bridged from zeroconf's thread into trio.

This module is the public face and the start-up; the run-time parts live in
private modules that only this package imports: ``_transport``
(:class:`Libp2pTransport`), ``_pubsub``, ``_reqresp``, ``_discovery``,
``_libp2p`` (typed host and stream access) and ``_config`` (:class:`P2PConfig`).
The py-libp2p 0.8.1 behaviour all of this relies on is in ``docs/LIBP2P.md``.
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

import libp2p
import libp2p.network.connection.swarm_connection as _swarm_connection
import multiaddr
import trio
from libp2p.crypto.ed25519 import create_new_key_pair
from libp2p.peer.id import ID
from libp2p.pubsub.gossipsub import PROTOCOL_ID_V11, GossipSub
from libp2p.pubsub.pubsub import Pubsub
from libp2p.tools.anyio_service import background_trio_service

from specswarm.errors import TransportError
from specswarm.transport._config import P2PConfig
from specswarm.transport._discovery import PEERS_PROTOCOL
from specswarm.transport._peerbook import split_p2p_addr
from specswarm.transport._reqresp import SYNC_PROTOCOL
from specswarm.transport._transport import Libp2pTransport
from specswarm.transport._tuning import tune_libp2p
from specswarm.transport._util import describe, unwrap_single_group

if TYPE_CHECKING:
    from libp2p.discovery.events.peerDiscovery import PeerDiscovery

__all__ = [
    "PEERS_PROTOCOL",
    "SYNC_PROTOCOL",
    "Libp2pTransport",
    "P2PConfig",
    "open_libp2p_transport",
    "peer_id_from_seed",
    "quiet_libp2p_logging",
]

log = logging.getLogger(__name__)


def quiet_libp2p_logging() -> None:
    """Keep libp2p's log records off the terminal at default verbosity.

    py-libp2p 0.8.1 (a) detaches its ``libp2p`` logger (no handler, no
    propagation) so its warnings reach Python's last-resort stderr handler, and
    (b) logs through the *root* logger from ``swarm_connection`` on the first
    connection, which silently runs ``logging.basicConfig()`` and so disables a
    later ``basicConfig`` of the application. We give ``libp2p`` a null handler
    (unless the user asked for its logs with ``LIBP2P_DEBUG``) and point
    ``swarm_connection``'s ``logging`` name at a proper child logger.
    """
    lib = logging.getLogger("libp2p")
    if not os.environ.get("LIBP2P_DEBUG"):
        lib.handlers[:] = [logging.NullHandler()]
        lib.setLevel(logging.CRITICAL)
        lib.propagate = False
    # The module only calls logging.debug/warning(...): a Logger has the same methods.
    vars(_swarm_connection)["logging"] = logging.getLogger(_swarm_connection.__name__)
    logging.getLogger("zeroconf").setLevel(logging.ERROR)
    logging.getLogger("async_service").setLevel(logging.CRITICAL)


quiet_libp2p_logging()
tune_libp2p()


def peer_id_from_seed(seed: bytes) -> str:
    """The base58 peer id a transport opened with ``seed`` will have."""
    if len(seed) != 32:
        raise ValueError(f"seed must be 32 bytes, got {len(seed)}")
    return ID.from_pubkey(create_new_key_pair(seed).public_key).to_base58()


def _parse_multiaddr(addr: str, what: str) -> multiaddr.Multiaddr:
    try:
        return multiaddr.Multiaddr(addr)
    except Exception as exc:
        raise TransportError(f"bad {what} {addr!r}: {describe(exc)}") from None


def _is_teardown_race(exc: BaseException) -> bool:
    """py-libp2p services may still try to spawn a task while they shut down."""
    if isinstance(exc, BaseExceptionGroup):
        return all(_is_teardown_race(e) for e in exc.exceptions)
    return (isinstance(exc, RuntimeError) and "closed to new arrivals" in str(exc)) or (
        type(exc).__name__ == "LifecycleError"
    )


def _check_port_free(listen: str, addr: multiaddr.Multiaddr) -> None:
    """Refuse a fixed port that another process holds.

    py-libp2p listens with SO_REUSEPORT, so a second peer on a taken port would
    *share* it (the kernel then splits incoming connections between them). The probe
    sets SO_REUSEADDR (as the listener does): connections of a peer that just died,
    lingering in TIME_WAIT on the port, do not make it taken -- a peer restarted on its
    own port must get it back.
    """
    for proto, family in (("ip4", socket.AF_INET), ("ip6", socket.AF_INET6)):
        try:
            host, port = addr.value_for_protocol(proto), int(addr.value_for_protocol("tcp"))
        except Exception:
            continue
        if not port:
            return
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind((host, port))
            except OSError as exc:
                raise TransportError(f"cannot listen on {listen}: {exc.strerror or exc}") from None
        return


def _new_gossipsub(config: P2PConfig) -> GossipSub:
    """GossipSub with every default that bites overridden (see ``docs/LIBP2P.md``)."""
    return GossipSub(
        # 1.1, not 1.2: 1.2's IDONTWANT makes every receiver send a control RPC to each of its
        # mesh peers for every message (each with the library's signed peer record, verified on
        # arrival); for our small messages that tripled the work per delivery
        protocols=[PROTOCOL_ID_V11],
        degree=config.degree,
        degree_low=config.degree_low,
        degree_high=config.degree_high,
        gossip_window=config.gossip_window,
        gossip_history=config.gossip_history,
        heartbeat_initial_delay=0.1,
        heartbeat_interval=config.heartbeat_interval,  # type: ignore[arg-type]
        prune_back_off=config.prune_back_off,
        unsubscribe_back_off=config.prune_back_off,
        do_px=False,
        adaptive_gossip_enabled=False,
        spam_protection_enabled=False,
        eclipse_protection_enabled=False,
    )


@asynccontextmanager
async def open_libp2p_transport(
    seed: bytes,
    listen: str = "/ip4/127.0.0.1/tcp/0",
    bootstrap: Sequence[str] = (),
    mdns: bool = False,
    topic: str | None = None,
    config: P2PConfig | None = None,
) -> AsyncIterator[Libp2pTransport]:
    """Run a libp2p peer until the block exits (or is cancelled).

    :param seed: 32-byte Ed25519 seed; the same seed gives the same peer id.
    :param listen: multiaddr to listen on (port 0 picks a free port).
    :param bootstrap: ``/ip4/../tcp/../p2p/<id>`` addresses, retried until they answer.
    :param mdns: discover peers on the LAN with mDNS (binds every interface!).
    :param topic: subscribe to this topic at once (else call ``subscribe`` later).
    :param config: tuning; :class:`P2PConfig` defaults when None.
    """
    if len(seed) != 32:
        raise ValueError(f"seed must be 32 bytes, got {len(seed)}")
    config = config or P2PConfig()
    tune_libp2p()  # here, not at import: a forked peer's environment is set after the imports
    listen_addr = _parse_multiaddr(listen, "listen address")
    _check_port_free(listen, listen_addr)
    for addr in bootstrap:
        _parse_multiaddr(addr, "bootstrap address")
        try:
            split_p2p_addr(addr)
        except ValueError as exc:
            raise TransportError(f"bad bootstrap address: {exc}") from None

    host = libp2p.new_host(
        key_pair=create_new_key_pair(seed),
        listen_addrs=[listen_addr],
        enable_mDNS=mdns,
    )
    gossipsub = _new_gossipsub(config)
    pubsub = Pubsub(host, gossipsub, strict_signing=True)
    transport = Libp2pTransport(host, pubsub, gossipsub, config)

    discovery: PeerDiscovery | None = None
    if mdns:
        from libp2p.discovery.events.peerDiscovery import peerDiscovery

        discovery = peerDiscovery
        discovery.register_peer_discovered_handler(transport._on_mdns_peer)
    started = closing = False
    try:
        async with (
            unwrap_single_group(),
            host.run(listen_addrs=[listen_addr]),
            background_trio_service(pubsub),
            background_trio_service(gossipsub),
            trio.open_nursery() as nursery,
        ):
            await pubsub.wait_until_ready()
            await transport._start(nursery, bootstrap, topic)
            started = True
            try:
                yield transport
            finally:
                closing = True
                transport._stop()
                nursery.cancel_scope.cancel()
    except OSError as exc:
        if started:
            raise
        raise TransportError(f"cannot listen on {listen}: {exc}") from None
    except BaseException as exc:
        if not (closing and _is_teardown_race(exc)):
            raise
        log.debug("ignored a libp2p teardown race: %r", exc)
    finally:
        if discovery is not None:
            discovery.unregister_peer_discovered_handler(transport._on_mdns_peer)
