"""A scorer that votes today on the recorded real run's own folded plan
(``tests/fixtures/japan-real-2c5e150.jsonl``: ``specswarm plan goals/japan.yaml`` with the
embedded model, every event signed) rejects the Tokyo split its scorers accepted, and says why in
its vote. (The run re-scored by the critics alone: tests/critics/test_critics.py.)"""

from __future__ import annotations

from typing import Any

import trio

from specswarm import critics
from specswarm.model.replay import ScriptedModel
from specswarm.plan.fold import fold
from specswarm.protocol.bodies import CheckResult, VoteBody
from specswarm.protocol.events import check_event, make_event
from specswarm.protocol.identity import Identity
from specswarm.swarm.counters import NodeCounters
from specswarm.swarm.roles.scorer import NOTE_CHARS, Scorer
from tests.critics.kit import TOKYO, events


class _FakeNode:
    """What Scorer.act uses of a Node: a peer id, counters, publish, plan()."""

    def __init__(self, plan: Any) -> None:
        self.peer_id = "12D3KooWtestscorer"
        self.counters = NodeCounters()
        self.published: list[VoteBody] = []
        self._plan = plan

    async def publish(self, body: VoteBody) -> None:
        self.published.append(body)

    def plan(self) -> Any:
        return self._plan


def pending_tokyo() -> tuple[str, Any]:
    """The Tokyo split's id, and the run as it stood before any scorer voted on it."""
    evs = events()
    tokyo_id = next(
        e.id
        for e in evs
        if e.kind == "proposal" and any(c.title == "Hike Mount Fuji" for c in e.body.children)
    )
    return tokyo_id, fold([e for e in evs if not (e.kind == "vote" and e.body.proposal == tokyo_id)])


def test_a_scorer_voting_on_the_recorded_plan_rejects_the_tokyo_split() -> None:
    evs = events()
    # the run as it stood before any scorer voted on the Tokyo split: that proposal is pending
    tokyo_id, plan = pending_tokyo()
    tokyo = next(n for n in plan.nodes.values() if n.title == TOKYO)
    assert [p.status for p in tokyo.proposals] == ["pending"]
    node = _FakeNode(plan)
    model = ScriptedModel(lambda req: "Score: 95")
    scorer = Scorer(lambda: model, "feasibility")
    trio.run(scorer.act, node, plan)
    [vote] = node.published
    assert vote.proposal == tokyo_id and vote.approve is False
    # a failed hard check rejects whatever the model says: no generation is spent on it
    assert vote.model_score is None and model.calls == []
    assert [c.name for c in vote.checks] == list(critics.CHECK_NAMES)
    assert all(isinstance(c, CheckResult) and len(c.note) <= NOTE_CHARS for c in vote.checks)
    failed = [c.name for c in vote.checks if not c.passed]
    assert failed == ["repeats", "facts"]
    # the critique: one line per failed check, with the whole note
    lines = vote.critique.splitlines()
    assert [line.split(":")[0] for line in lines] == failed
    assert lines[0] == (
        'repeats: #4 "Hike Mount Fuji" repeats the root stage "Hike Mount Fuji (2 days)" '
        "(same Mount Fuji and Hike): plan each thing in one place only"
    )
    # the vote is a valid signed event of the run (schema: note lengths, check count)
    run = next(e for e in evs if e.kind == "run")
    signed = make_event(Identity(bytes(range(32))), run.run, "vote", 99, vote)
    event, reason = check_event(signed.to_json(), run.run)
    assert reason == "" and event is not None and event.body == vote


def test_long_notes_are_cut_in_the_vote_but_whole_in_the_critique() -> None:
    evs = events()
    kyoto_id = next(
        e.id for e in evs if e.kind == "proposal" and e.body.children[0].title.startswith("Plan a day")
    )
    plan = fold([e for e in evs if not (e.kind == "vote" and e.body.proposal == kyoto_id)])
    node = _FakeNode(plan)
    trio.run(Scorer(lambda: ScriptedModel(lambda req: "Score: 95"), "feasibility").act, node, plan)
    [vote] = node.published
    facts = next(c for c in vote.checks if c.name == "facts")
    assert len(facts.note) == NOTE_CHARS  # the full note is longer
    assert "their titles add up to 7 days, not the parent's 4" in vote.critique
    assert vote.approve is False
