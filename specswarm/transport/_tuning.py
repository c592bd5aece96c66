"""Two per-message costs of py-libp2p 0.8.1 that grow with the swarm, cut where the library
lets us (:func:`tune_libp2p`, called once when the transport module is imported).

Measured with py-spy on a scorer of a 16-peer swarm on 2 cores (scripted model; 1,482 samples
over 30 s; docs/LIBP2P.md):

1. **A window update for every read.** Yamux's ``PY_YAMUX_RELEASE_ON_READ`` defaults on: every
   gossip message read sends a WINDOW_UPDATE frame back at once, one more Noise-encrypted frame
   and ``send`` syscall per message received (276 of the 1,482 samples, 19 %). Off, the credit
   is released in batches of half the receive window, as go-yamux does. The library reads the
   variable at call time; a user who set it keeps their value.
2. **The sender's signed peer record, verified on every RPC.** Every pubsub RPC carries the
   sender's signed peer record, and every receiver decodes it and checks its Ed25519
   signature again (103 samples, 7 %), although a peer sends the same bytes until its
   addresses change. A record this host has already accepted from the same peer (the same
   bytes) is taken as accepted again for :data:`RECORD_RECHECK` seconds; anything else goes
   through the library's own check.
"""

from __future__ import annotations

import os
import time
from collections import OrderedDict
from typing import Any

import libp2p.pubsub.gossipsub as _gossipsub
import libp2p.pubsub.pubsub as _pubsub
from libp2p.pubsub import utils as _pubsub_utils

RECORD_RECHECK = 600.0
"""Seconds a signed peer record accepted once is not verified again (the library keeps it 2 h)."""
RECORD_MEMORY = 4096
"""(host, sender, record) triples remembered, at most."""

_check = _pubsub_utils.maybe_consume_signed_record
_clock = time.monotonic
_accepted: OrderedDict[tuple[int, bytes, bytes], float] = OrderedDict()


def consume_signed_record_once(msg: Any, host: Any, peer_id: Any) -> bool:
    """``maybe_consume_signed_record`` that skips a record this ``host`` accepted from ``peer_id``
    within :data:`RECORD_RECHECK` seconds (same bytes: same verdict); else the library's check."""
    if not msg.HasField("senderRecord"):
        return True
    key = (id(host), peer_id.to_bytes() if peer_id is not None else b"", bytes(msg.senderRecord))
    now = _clock()
    at = _accepted.get(key)
    if at is not None and now - at < RECORD_RECHECK:
        return True
    ok = bool(_check(msg, host, peer_id))
    if ok:
        _accepted[key] = now
        _accepted.move_to_end(key)
        while len(_accepted) > RECORD_MEMORY:
            _accepted.popitem(last=False)
    return ok


TUNING_ENV = "SPECSWARM_LIBP2P_TUNING"
"""``0``: leave the library as it is (for measuring what the cuts save)."""


def tune_libp2p() -> None:
    """Apply both cuts, or with ``SPECSWARM_LIBP2P_TUNING=0`` undo them (idempotent)."""
    on = os.environ.get(TUNING_ENV, "1").strip() != "0"
    if on:
        os.environ.setdefault("PY_YAMUX_RELEASE_ON_READ", "0")
    for module in (_pubsub, _gossipsub):
        vars(module)["maybe_consume_signed_record"] = consume_signed_record_once if on else _check
