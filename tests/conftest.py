"""Shared fixtures. Keep this small: helpers that only one test file needs live in that file."""

from __future__ import annotations

import pytest
from hypothesis import Phase, settings

from specswarm.testing.synth import Swarm, complete_swarm

settings.register_profile("no-shrink", phases=[Phase.explicit, Phase.reuse, Phase.generate])
"""Failing examples are reported as found, not shrunk (``bench/mutate_fold.py`` only asks whether
a test fails: shrinking a large event set takes minutes)."""


@pytest.fixture
def swarm() -> Swarm:
    """A fresh synthetic run: run event + joins (2 decomposers, 3 scorers, 2 executors, 1 observer)."""
    return Swarm(seed=1)


@pytest.fixture(scope="session")
def converged() -> Swarm:
    """A converged synthetic run (fanout 3, depth 2, a rejected rival at the root). Do not mutate."""
    return complete_swarm(seed=7)
