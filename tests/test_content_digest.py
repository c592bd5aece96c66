"""The content digest: what a plan says, independent of who said it and when. Two runs that
planned the same thing (other keys, other run, other votes and signatures) agree on it; a
changed title, detail, fact, result or shape changes it. Every export carries it."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from specswarm.plan import ROOT, Plan, child_id, fold
from specswarm.render import render_plan
from specswarm.testing.synth import Swarm

TITLES = ["Day one in Alfama", "Day two in Belem"]
SUBTITLES = ["Morning walk", "Evening meal"]


def planned(
    seed: int,
    *,
    rival: bool = False,
    result: Callable[[str], str] = lambda title: f"- Book the {title.lower()}",
    subtitles: list[str] = SUBTITLES,
) -> Plan:
    """A complete run of the same plan content, signed by the peers of ``seed``."""
    sw = Swarm(seed=seed)
    if rival:  # a rejected rival: votes and proposals are not content
        bad = sw.propose(sw.peers["decomposer"][-1], ROOT, ["Misc", "Other"], strategy="by day")
        for scorer in sw.peers["scorer"]:
            sw.vote(scorer, bad, False, 20)
    root = sw.accept(ROOT, TITLES)
    for i in range(len(TITLES)):
        node = child_id(root.id, i)
        sw.accept(node, subtitles, leaf=True, by=i)
    plan = fold(sw.events)
    for leaf in plan.leaves():
        ex = sw.peers["executor"][0]
        claim = sw.claim(ex, leaf.id)
        sw.result(ex, leaf.id, claim, output=result(f"{plan.nodes[leaf.parent or ROOT].title} {leaf.title}"))
    final = fold(sw.events)
    assert final.complete
    return final


def test_same_content_from_different_peers_and_runs_gives_one_content_digest() -> None:
    a, b = planned(1), planned(2, rival=True)
    assert a.run_id != b.run_id and set(a.roles).isdisjoint(b.roles)
    assert a.digest != b.digest  # the full digest names the run and the events
    assert a.content_digest == b.content_digest
    assert a.tree_content() == b.tree_content()


@pytest.mark.parametrize(
    "other",
    [
        lambda: planned(3, result=lambda t: f"- Book the {t.lower()} early"),  # one word of every result
        lambda: planned(
            3, result=lambda t: "- Walk instead" if "Evening" in t else f"- Book the {t.lower()}"
        ),
        lambda: planned(3, subtitles=["Morning walk", "Night meal"]),  # a title
        lambda: planned(3, subtitles=["Evening meal", "Morning walk"]),  # the order of children
        lambda: planned(3, subtitles=["Morning walk", "Evening meal", "Late drinks"]),  # the shape
    ],
    ids=["every-result", "one-result", "title", "order", "shape"],
)
def test_a_change_of_content_changes_the_content_digest(other: Callable[[], Plan]) -> None:
    assert other().content_digest != planned(1).content_digest


def test_every_export_carries_both_digests() -> None:
    plan = planned(1)
    doc = json.loads(render_plan(plan, "json"))
    assert doc["content_digest"] == plan.content_digest and doc["digest"] == plan.digest
    for fmt in ("markdown", "spec"):
        text = render_plan(plan, fmt)
        assert f"**Content digest:** `{plan.content_digest}`" in text
        assert f"`{plan.digest}`" in text
