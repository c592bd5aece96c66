"""The ledger across the tree (plan/ledger.py): which leaf is judged now, which may be written,
what the results before a leaf plan, and what a result is judged against -- all read off the
folded plan, the same at every peer and in every run."""

from __future__ import annotations

from specswarm.plan import fold
from specswarm.plan.ledger import (
    elsewhere,
    ledger,
    ready_to_write,
    result_in_turn,
    result_task,
)
from specswarm.plan.views import Plan
from specswarm.testing.synth import Swarm, minimal_spec


def two_stages() -> Swarm:
    """root -> Tokyo, Kyoto -> two leaves each, split and judged as a run with the board."""
    spec = minimal_spec(tree={"max_depth": 2, "min_children": 1, "select": "first"}, review={"results": True})
    sw = Swarm(spec=spec, seed=2)
    sw.accept("root", ["Tokyo", "Kyoto"])
    plan = fold(sw.events)
    tokyo = by_title(plan, "Tokyo").id
    sw.accept(tokyo, ["Tokyo museums", "Tokyo food"], leaf=True)
    return sw


def by_title(plan: Plan, title: str):  # type: ignore[no-untyped-def]
    return next(n for n in plan.nodes.values() if n.title == title)


def finish(sw: Swarm, title: str, text: str) -> None:
    leaf = by_title(fold(sw.events), title)
    ex = sw.peers["executor"][0]
    res = sw.result(ex, leaf.id, sw.claim(ex, leaf.id), output=text)
    for scorer in sw.peers["scorer"]:
        sw.vote(scorer, res, True, 90)


def test_leaves_are_judged_in_tree_order_and_wait_for_splits_before_them() -> None:
    sw = two_stages()
    plan = fold(sw.events)
    assert result_in_turn(plan).title == "Tokyo museums"  # type: ignore[union-attr]
    finish(sw, "Tokyo museums", "- 09:30 Tokyo National Museum")
    assert result_in_turn(fold(sw.events)).title == "Tokyo food"  # type: ignore[union-attr]
    finish(sw, "Tokyo food", "- 12:00 Tsukiji outer market")
    assert result_in_turn(fold(sw.events)) is None  # Kyoto is not split yet: its leaves come next
    kyoto = by_title(fold(sw.events), "Kyoto")
    sw.accept(kyoto.id, ["Kyoto temples", "Kyoto gardens"], leaf=True)
    assert result_in_turn(fold(sw.events)).title == "Kyoto temples"  # type: ignore[union-attr]


def test_every_leaf_is_written_at_once_when_the_shape_is_final_naming_the_other_branches() -> None:
    sw = two_stages()
    plan = fold(sw.events)
    assert not ready_to_write(plan, by_title(plan, "Tokyo museums"))  # Kyoto is not split yet
    sw.accept(by_title(plan, "Kyoto").id, ["Kyoto temples", "Kyoto gardens"], leaf=True)
    plan = fold(sw.events)
    assert all(ready_to_write(plan, by_title(plan, t)) for t in ("Tokyo food", "Kyoto gardens"))
    # a first result names the leaves of other branches, its siblings aside, with no lines
    named = elsewhere(plan, by_title(plan, "Tokyo museums"))
    assert [(w.title, w.lines, w.number) for w in named] == [
        ("Kyoto > Kyoto temples", (), "2.1"),
        ("Kyoto > Kyoto gardens", (), "2.2"),
    ]
    finish(sw, "Tokyo museums", "- 09:30 Tokyo National Museum")
    assert elsewhere(fold(sw.events), by_title(plan, "Kyoto temples"))[0].title == "Tokyo > Tokyo museums"


def test_the_ledger_holds_the_counted_results_before_a_leaf_siblings_apart_when_asked() -> None:
    sw = two_stages()
    finish(sw, "Tokyo museums", "- 09:30 Tokyo National Museum\n- 14:00 Mori Art Museum")
    plan = fold(sw.events)
    food = by_title(plan, "Tokyo food")
    written = ledger(plan, food)
    assert [(w.title, w.lines, w.number) for w in written] == [
        ("Tokyo museums", ("09:30 Tokyo National Museum", "14:00 Mori Art Museum"), "1.1")
    ]
    assert ledger(plan, food, siblings=False) == []
    task = result_task(plan, food)
    assert task.ledger == tuple(written)
    assert set(task.others) == {'"Tokyo museums" (1.1)', '"Kyoto" (2)'}
    assert task.own == "Tokyo Details of tokyo. Tokyo food Details of tokyo food."
