"""Rival decomposers are asked for different numbers of parts (specswarm/model/splits.py split_target)."""

from __future__ import annotations

from specswarm.model.splits import split_target


def test_rivals_ask_for_different_numbers_of_parts() -> None:
    strategies = ("geography", "activity", "days")
    targets = [split_target(s, strategies, 2, 6) for s in strategies]
    assert targets == [4, 3, 5]
    assert len(set(targets)) == 3


def test_the_target_stays_within_the_spec_limits_and_cycles() -> None:
    strategies = ("a", "b", "c", "d")
    assert [split_target(s, strategies, 4, 4) for s in strategies] == [4, 4, 4, 4]
    assert [split_target(s, strategies, 3, 7) for s in strategies] == [4, 3, 5, 4]
    assert split_target("b", strategies, 4, 7) == 4  # 3 is below min_children


def test_an_undeclared_strategy_asks_the_first_strategy_s_number() -> None:
    assert split_target("by hand", ("geography", "activity"), 2, 6) == 4
