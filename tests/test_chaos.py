"""Chaos: real peer processes, real libp2p, the scripted model; SIGKILLs, late joiners, gossip loss.

Every scenario (tests/chaos.py) ends with the same invariants: the plan converges, every live
peer and the observer hold one digest, and nothing accepted before the fault is lost.
``SPECSWARM_CHAOS_SEEDS=N`` (default 2) runs each scenario with seeds 0..N-1 (or a comma list);
``bench/chaos_report.py`` runs them over many seeds and prints a pass-count table.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.chaos import SCENARIOS, chaos_seeds

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("seed", chaos_seeds())
@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_chaos(scenario: str, seed: int, tmp_path: Path) -> None:
    SCENARIOS[scenario](tmp_path, seed)
