"""Leaf results through the board (``review.results``): votes, quorum, revisions, the fallback,
and what the exports show of them. The rule's properties (order, duplicates, redelivery, noise)
are in tests/test_fold_properties.py; these are the cases by name."""

from __future__ import annotations

import json
from typing import Any

from specswarm.plan import FoldState, fold
from specswarm.plan.views import NodeView, Plan
from specswarm.protocol.bodies import ResultBody
from specswarm.protocol.events import Event, check_event
from specswarm.render import render_plan
from specswarm.testing.synth import Swarm, one_split_spec


def board(max_revisions: int = 2, judged: bool = True) -> tuple[Swarm, str]:
    """A run of three scorers (a quorum of all three) whose root is split into two leaves;
    returns the swarm and the first leaf's id."""
    spec: dict[str, Any] = one_split_spec(scorers=3, executors=2)
    spec["tree"]["max_revisions"] = max_revisions
    spec["review"] = {"results": judged}
    sw = Swarm(spec=spec, seed=3)
    sw.accept("root", ["Lisbon old town", "Sintra day trip"], leaf=True)
    leaf = fold(sw.events).leaves()[0].id
    return sw, leaf


def write(sw: Swarm, leaf: str, text: str, revises: Event | None = None, by: int = 0) -> Event:
    ex = sw.peers["executor"][by]
    claims = [e for e in sw.events if e.kind == "claim" and e.author == ex.peer_id and e.wire["leaf"] == leaf]
    claim = claims[0] if claims else sw.claim(ex, leaf)
    return sw.result(ex, leaf, claim, output=text, revises=revises.id if revises else None)


def judge(sw: Swarm, result: Event, approve: bool, scorers: int = 3, score: int | None = None) -> None:
    for scorer in sw.peers["scorer"][:scorers]:
        failed = () if approve else ("concrete",)
        sw.vote(
            scorer, result, approve, score if score is not None else (90 if approve else 30), failed=failed
        )


def node(plan: Plan, leaf: str) -> NodeView:
    return plan.nodes[leaf]


def test_a_result_counts_once_a_quorum_of_scorers_approves_it() -> None:
    sw, leaf = board()
    res = write(sw, leaf, "- 09:00 Alfama walk")
    assert node(fold(sw.events), leaf).result is None
    assert node(fold(sw.events), leaf).status == "reviewing"
    judge(sw, res, True, scorers=2)
    assert node(fold(sw.events), leaf).result is None  # two of the three needed
    judge(sw, res, True)
    n = node(fold(sw.events), leaf)
    assert n.result is not None and n.result.id == res.id
    assert (n.status, n.result.status, n.result.approvals) == ("done", "accepted", 3)


def test_a_rejected_result_is_written_again_and_the_revision_counts() -> None:
    sw, leaf = board()
    first = write(sw, leaf, "- see the sights")
    judge(sw, first, False, scorers=1)
    assert [r.status for r in node(fold(sw.events), leaf).results] == ["rejected"]  # 1 > n - q = 0
    second = write(sw, leaf, "- 09:00 Alfama walk\n- 12:30 lunch at Time Out Market", revises=first)
    judge(sw, second, True)
    n = node(fold(sw.events), leaf)
    assert n.result is not None and n.result.id == second.id and n.result.revises == first.id
    assert [(r.id, r.status) for r in n.results] == [(second.id, "accepted"), (first.id, "rejected")]


def test_once_the_revisions_are_used_up_the_best_rejected_result_counts() -> None:
    sw, leaf = board(max_revisions=1)
    first = write(sw, leaf, "- see the sights")
    judge(sw, first, False, score=20)
    assert node(fold(sw.events), leaf).result is None
    second = write(sw, leaf, "- walk around", revises=first)
    judge(sw, second, False, score=40)
    n = node(fold(sw.events), leaf)
    assert n.result is not None and n.result.id == second.id  # the higher mean score
    assert n.result.status == "accepted" and n.result.approvals == 0
    assert fold(sw.events).complete is False  # the other leaf has no result yet


def test_a_revision_that_repeats_the_rejected_text_ends_the_chain() -> None:
    sw, leaf = board(max_revisions=2)
    first = write(sw, leaf, "- see the sights")
    judge(sw, first, False)
    second = write(sw, leaf, "-  see the   sights", revises=first)  # the same, spacing aside
    judge(sw, second, False)
    assert node(fold(sw.events), leaf).result is not None


def test_copies_written_in_a_race_count_once_in_the_chain() -> None:
    sw, leaf = board(max_revisions=1)
    a = write(sw, leaf, "- see the sights", by=0)
    b = write(sw, leaf, "- see the sights", by=1)  # another executor's claim, the same text
    judge(sw, a, False)
    judge(sw, b, False)
    assert node(fold(sw.events), leaf).result is None  # one distinct text of the two allowed


def test_votes_of_peers_that_are_not_scorers_do_not_count() -> None:
    sw, leaf = board()
    res = write(sw, leaf, "- 09:00 Alfama walk")
    for peer in [*sw.peers["executor"], *sw.peers["decomposer"]]:
        sw.vote(peer, res, True, 100)
    assert node(fold(sw.events), leaf).result is None


def test_a_run_whose_results_are_not_judged_keeps_the_first_result() -> None:
    sw, leaf = board(judged=False)
    res = write(sw, leaf, "- anything")
    n = node(fold(sw.events), leaf)
    assert n.result is not None and n.result.id == res.id and n.result.status is None and n.results == ()


def test_a_vote_heard_before_its_result_is_counted_when_the_result_arrives() -> None:
    sw, leaf = board()
    res = write(sw, leaf, "- 09:00 Alfama walk")
    judge(sw, res, True)
    state = FoldState([e for e in sw.events if e.id != res.id])
    assert node(state.plan(), leaf).result is None
    state.apply(res)
    assert node(state.plan(), leaf).result is not None
    assert state.plan().digest == fold(sw.events).digest


def test_revises_is_absent_from_a_first_result_so_older_results_keep_their_ids() -> None:
    body = ResultBody("root", "a" * 64, "text", "m")
    assert "revises" not in body.to_json()
    sw, leaf = board()
    first = write(sw, leaf, "- a")
    second = write(sw, leaf, "- b", revises=first)
    assert check_event(second.to_bytes())[0] == second
    assert second.wire["revises"] == first.id


def test_the_exports_show_the_boards_verdicts() -> None:
    sw, leaf = board()
    first = write(sw, leaf, "- see the sights")
    judge(sw, first, False)
    second = write(sw, leaf, "- 09:00 Alfama walk", revises=first)
    judge(sw, second, True)
    plan = fold(sw.events)
    data = json.loads(render_plan(plan, "json"))  # validated against plan.schema.json
    exported = next(c for c in data["root"]["children"] if c["id"] == leaf)
    assert exported["result"]["status"] == "accepted" and exported["result"]["revises"] == first.id
    assert exported["result"]["tally"] == {"approve": 3, "reject": 0, "mean_score": 90}
    assert [d["status"] for d in exported["drafts"]] == ["rejected"]
    assert len(exported["drafts"][0]["votes"]) == 3
    md = render_plan(plan, "markdown")
    assert "; accepted by the board (3 approving votes), revising `" in md
    assert "1 rejected draft" in md and "see the sights" in md and "Failed checks: concrete" in md
    content = render_plan(plan, "markdown", content_only=True)
    assert first.id[:8] not in content and "see the sights" in content
    assert first.id not in render_plan(plan, "json", content_only=True)


def test_a_run_without_judged_results_exports_as_before() -> None:
    sw, leaf = board(judged=False)
    write(sw, leaf, "- anything")
    data = fold(sw.events).to_json()
    exported = next(c for c in data["root"]["children"] if c["id"] == leaf)
    assert set(exported["result"]) == {"id", "author", "output", "model"} and "drafts" not in exported


def test_a_copy_of_the_counted_text_is_no_draft_in_the_markdown() -> None:
    """Whether a racing executor wrote the counted text a second time depends on timing; the
    Markdown, like the content digest, does not."""
    sw, leaf = board()
    res = write(sw, leaf, "- 09:00 Alfama walk")
    judge(sw, res, True)
    plain = render_plan(fold(sw.events), "markdown")
    copy = write(sw, leaf, "-  09:00 Alfama walk", by=1)
    judge(sw, copy, False)
    plan = fold(sw.events)
    assert [r.status for r in node(plan, leaf).results] == ["accepted", "rejected"]
    assert "rejected draft" not in render_plan(plan, "markdown")
    assert render_plan(plan, "markdown").count("Alfama") == plain.count("Alfama")
