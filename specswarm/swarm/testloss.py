"""TEST ONLY: gossip loss injected at the receiving node, for chaos tests.

Unset in normal use; nothing outside tests sets :data:`TEST_LOSS_ENV`.
"""

from __future__ import annotations

import logging
import os
import random

log = logging.getLogger("specswarm.swarm.node")

TEST_LOSS_ENV = "SPECSWARM_TEST_GOSSIP_LOSS"
"""TEST ONLY: a fraction in [0, 1) of received gossip messages (events and announcements) that
a node drops on arrival, before applying them, as if the network had lost them; counted as
``dropped["test loss"]``. The RNG is seeded by ``SPECSWARM_TEST_GOSSIP_SEED`` (default 0) and the
peer id, so a chaos run is repeatable. Anti-entropy (request/response) is never dropped: it is
what must repair the loss. Unset in normal use."""
TEST_SEED_ENV = "SPECSWARM_TEST_GOSSIP_SEED"


class TestGossipLoss:
    """TEST ONLY: drops a seeded fraction of the gossip a node receives (see :data:`TEST_LOSS_ENV`)."""

    __test__ = False  # not a pytest test class, despite the name

    def __init__(self, loss: float, rng: random.Random) -> None:
        self.loss = loss
        self._rng = rng

    @classmethod
    def from_env(cls, peer_id: str) -> TestGossipLoss | None:
        """The loss :data:`TEST_LOSS_ENV` asks for, or None when it is unset (normal use)."""
        raw = os.environ.get(TEST_LOSS_ENV)
        if not raw:
            return None
        loss = float(raw)
        if not 0.0 <= loss < 1.0:
            raise ValueError(f"{TEST_LOSS_ENV} must be in [0, 1), got {raw!r}")
        seed = os.environ.get(TEST_SEED_ENV, "0")
        log.warning("test-only gossip loss %.2f is on (seed %s)", loss, seed)
        return cls(loss, random.Random(f"{seed}:{peer_id}"))

    def drops(self) -> bool:
        """Whether to drop the message that just arrived (one draw per message)."""
        return self._rng.random() < self.loss
