"""``--content-only`` plan files: two runs that wrote the same plan give byte-identical files."""

from __future__ import annotations

import json

import pytest

from specswarm.plan.fold import Plan, fold
from specswarm.render import render_plan
from specswarm.render.diff import diff_plans, parse_plan
from specswarm.testing.synth import Swarm, minimal_spec


def same_plan(seed: int, voters_reversed: bool) -> Plan:
    """One plan's content, written by peers with other keys (``seed``), votes cast in another
    order, a rival split outvoted, each leaf written by another executor."""
    sw = Swarm(spec=minimal_spec(goal="A weekend in Lisbon"), seed=seed)
    a, b = sw.peers["decomposer"]
    scorers = sw.peers["scorer"][::-1] if voters_reversed else sw.peers["scorer"]
    win = sw.propose(a, "root", ["Alfama and the castle", "Belém"], leaf=True)
    rival = sw.propose(b, "root", ["Saturday", "Sunday"], leaf=True, strategy="by day")
    for i, s in enumerate(scorers):
        sw.vote(s, win, True, 90)
        sw.vote(s, rival, i == 0, 60)
    for s in scorers:
        sw.ballot(s, "root", [win, rival])
    plan = fold(sw.events)
    assert plan.root is not None
    executors = sw.peers["executor"][::-1] if voters_reversed else sw.peers["executor"]
    for i, leaf in enumerate(plan.root.children):
        ex = executors[i % len(executors)]
        sw.result(ex, leaf, sw.claim(ex, leaf), output=f"- Walk {i}\n- Eat pastéis de nata")
    return fold(sw.events)


@pytest.mark.parametrize("fmt", ["markdown", "json", "spec"])
def test_two_runs_of_one_plan_give_byte_identical_content_only_files(fmt: str) -> None:
    one, two = same_plan(1, False), same_plan(2, True)
    assert one.complete and two.complete and one.run_id != two.run_id
    assert one.content_digest == two.content_digest
    assert render_plan(one, fmt) != render_plan(two, fmt)  # a full export names its run
    text = render_plan(one, fmt, content_only=True)
    assert text == render_plan(two, fmt, content_only=True)
    for peer in one.roles:
        assert peer[-6:] not in text
    assert one.run_id not in text and one.digest[:16] not in text


def test_a_content_only_json_plan_is_diffed_like_a_full_one() -> None:
    plan = same_plan(1, False)
    full = parse_plan(render_plan(plan, "json"))
    content = parse_plan(render_plan(plan, "json", content_only=True))
    assert full is not None and content is not None and diff_plans(full, content) == []
    data = json.loads(render_plan(plan, "json", content_only=True))
    assert data["format"] == "specswarm-plan-content/1" and "run_id" not in data
    assert [c["id"] for c in data["root"]["children"]] == ["1", "2"]
