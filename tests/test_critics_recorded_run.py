"""The recorded real run (``tests/fixtures/japan-real-2c5e150.jsonl``: ``specswarm plan
goals/japan.yaml`` with the embedded model, every event signed) re-scored with the current
critics: all five splits its scorers accepted are rejected, for the reasons a careful reader
gives (Mount Fuji planned in three branches; Kyoto's days not adding up; Kyoto twice at the
root). And a scorer that votes today, on that run's own folded plan, says so in its vote."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import trio

from specswarm import critics
from specswarm.model.replay import ScriptedModel
from specswarm.plan.fold import fold
from specswarm.protocol.bodies import CheckResult, VoteBody
from specswarm.protocol.events import Event, check_event, make_event, read_event_log
from specswarm.protocol.identity import Identity
from specswarm.swarm.counters import NodeCounters
from specswarm.swarm.roles.scorer import NOTE_CHARS, Scorer

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

import rescore as rs  # noqa: E402

LOG = Path(__file__).parent / "fixtures" / "japan-real-2c5e150.jsonl"
KYOTO = "Visit Kyoto (4 days)"
TOKYO = "Visit Tokyo (5 days)"
GARDENS = "Explore Kyoto's traditional gardens and temples (3 days)"
FUJI = "Hike Mount Fuji (2 days)"
GOAL = "Plan a two-week trip to Japan"


def events() -> list[Event]:
    log = read_event_log(LOG)
    assert log.rejected == []
    return log.events


@pytest.fixture(scope="module", params=["at-vote", "final"])
def accepted(request: pytest.FixtureRequest) -> dict[str, rs.Rescored]:
    results = rs.rescore(events(), request.param)
    assert len(results) == 7
    acc = {r.node.title: r for r in results if r.old_status == "accepted"}
    assert set(acc) == {GOAL, KYOTO, TOKYO, GARDENS, FUJI}
    # the old scorers approved every one of them, unanimously
    assert all(r.old_approvals == 3 and r.old_rejections == 0 for r in acc.values())
    # and the two rival root splits are rejected too (Kyoto twice; Tokyo twice)
    rivals = [r for r in results if r.old_status != "accepted"]
    assert [r.new_approve for r in rivals] == [False, False]
    assert all(r.check("overlap").passed is False for r in rivals)
    return acc


def test_all_five_accepted_splits_are_now_rejected(accepted: dict[str, rs.Rescored]) -> None:
    assert [t for t, r in accepted.items() if r.new_approve] == []
    reasons = Counter(name for r in accepted.values() for name in r.hard_failures)
    assert reasons == {"facts": 4, "repeats": 3, "overlap": 2}
    assert {t: sorted(r.hard_failures) for t, r in accepted.items()} == {
        GOAL: ["overlap"],
        KYOTO: ["facts", "overlap", "repeats"],
        TOKYO: ["facts", "repeats"],
        GARDENS: ["facts", "repeats"],
        FUJI: ["facts"],
    }


def test_mount_fuji_planned_in_three_branches_is_caught_below_the_root(accepted: dict[str, Any]) -> None:
    # the root stage is the original; its two copies under Tokyo and under the gardens stage repeat it
    tokyo = accepted[TOKYO].check("repeats").note
    assert tokyo == (
        '#4 "Hike Mount Fuji" repeats the root stage "Hike Mount Fuji (2 days)" (same Mount Fuji and Hike): '
        "plan each thing in one place only"
    )
    gardens = accepted[GARDENS].check("repeats").note
    assert gardens.startswith(
        '#3 "Hike Mount Fuji (2 days)" repeats the root stage "Hike Mount Fuji (2 days)"'
    )
    assert accepted[FUJI].check("repeats").passed  # splitting the stage itself is no repeat


def test_kyotos_days_not_adding_up_is_caught(accepted: dict[str, Any]) -> None:
    kyoto = accepted[KYOTO].check("facts")
    assert kyoto.note.startswith(
        'days missing on #1 "Plan a day trip to Kyoto\'s traditional gardens and temples (3 days)" '
        "(its title says 3 days: declare days: 3)"
    )
    assert kyoto.note.endswith(
        "every child must declare days; their titles add up to 7 days, not the parent's 4"
    )
    gardens = accepted[GARDENS].check("facts")
    assert gardens.note.endswith("their titles add up to 4 days, not the parent's 3")
    # the Fuji stage's five preparation steps declare no days at all (2 days to split)
    assert accepted[FUJI].check("facts").note.endswith("every child must declare days")
    assert accepted[FUJI].check("facts").score == 0


def test_kyoto_twice_at_the_root_and_inside_the_kyoto_stage(accepted: dict[str, Any]) -> None:
    assert (
        accepted[GOAL]
        .check("overlap")
        .note.startswith(
            '#2 "Visit Kyoto (4 days)" and #4 "Explore Kyoto\'s traditional gardens and temples (3 days)" '
            "both plan Kyoto"
        )
    )
    repeats = accepted[KYOTO].check("repeats").note
    assert repeats.startswith(
        '#1 "Plan a day trip to Kyoto\'s traditional gardens and temples (3 days)" repeats the root stage '
        '"Explore Kyoto\'s traditional gardens and temples (3 days)"'
    )
    assert accepted[KYOTO].check("overlap").note.startswith('#1 "Plan a day trip to Kyoto')


def test_the_rescore_script_prints_old_and_new_verdicts(capsys: pytest.CaptureFixture[str]) -> None:
    assert rs.main([str(LOG), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "accepted proposals the current critics reject: 5 of 5" in out
    assert "failed hard checks among them: facts x4, overlap x2, repeats x3" in out
    assert "old status -> new verdict: accepted -> reject: 5, outvoted -> reject: 2" in out


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
