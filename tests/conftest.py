"""Shared fixtures. Keep this small: helpers that only one test file needs live in that file."""

from __future__ import annotations

import pytest

from specswarm.testing.synth import Swarm, complete_swarm


@pytest.fixture
def swarm() -> Swarm:
    """A fresh synthetic run: run event + joins (2 decomposers, 3 scorers, 2 executors, 1 observer)."""
    return Swarm(seed=1)


@pytest.fixture(scope="session")
def converged() -> Swarm:
    """A converged synthetic run (fanout 3, depth 2, a rejected rival at the root). Do not mutate."""
    return complete_swarm(seed=7)
