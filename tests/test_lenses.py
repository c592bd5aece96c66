"""Scorer lenses: one editorial board, three reviewers who weigh a split differently. Here: the
roster deals them, a vote records its lens, the model is asked each lens's question, a scorer
votes through its lens (the lenses' weights and floors: tests/critics/test_lenses.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import trio

from specswarm import critics
from specswarm.model import rate
from specswarm.model.replay import ScriptedModel
from specswarm.plan.fold import fold
from specswarm.protocol.bodies import Child, VoteBody, parse_body
from specswarm.protocol.events import read_event_log
from specswarm.spec import spec_from_mapping
from specswarm.swarm.roles.scorer import Scorer, shared_rating
from tests.critics.kit import TOKYO, events

from .test_model_tasks import ROOT, make_spec
from .test_scorer_recorded_run import _FakeNode, pending_tokyo


def test_the_roster_deals_lenses_like_strategies() -> None:
    raw = make_spec()
    raw["roles"]["scorer"] = {"count": 4, "lenses": ["feasibility", "budget"]}
    seats = [s for s in spec_from_mapping(raw).roster() if s.role == "scorer"]
    assert [s.strategy for s in seats] == ["feasibility", "budget", "feasibility", "budget"]
    raw["roles"]["scorer"] = {"count": 3}
    seats = [s for s in spec_from_mapping(raw).roster() if s.role == "scorer"]
    assert [s.strategy for s in seats] == ["feasibility", "coverage", "specificity"]


def test_a_vote_records_its_lens_and_an_old_vote_keeps_its_bytes() -> None:
    vote = VoteBody("p" * 64, True, 80, "", (), None, "coverage")
    assert vote.to_json()["lens"] == "coverage"
    assert parse_body("vote", vote.to_json()) == vote
    old = VoteBody("p" * 64, True, 80, "", (), None)
    assert "lens" not in old.to_json()  # events signed before lenses hash to the same ids
    assert parse_body("vote", old.to_json()).lens is None


def _vote_pending_tokyo(lens: str, answer: Any) -> tuple[VoteBody, list[Any]]:
    _, plan = pending_tokyo()
    assert any(n.title == TOKYO for n in plan.nodes.values())
    node = _FakeNode(plan)
    model = ScriptedModel(answer)
    trio.run(Scorer(lambda: model, lens).act, node, plan)
    [vote] = node.published
    return vote, model.calls


def test_each_lens_asks_the_model_its_own_question() -> None:
    def answer(req: Any) -> str:
        return "Score: 90" if "one lens, feasibility" in req.prompt else "Score: 40"

    model = ScriptedModel(answer)
    spec = spec_from_mapping(make_spec())
    kids = [Child("Tokyo (7 days)", facts={"days": 7}), Child("Kyoto (7 days)", facts={"days": 7})]
    got = {name: rate(model, spec, ROOT, kids, lens=critics.lens_named(name)) for name in critics.LENSES}
    assert got == {"feasibility": 90, "coverage": 40, "specificity": 40}
    prompts = [c.prompt for c in model.calls]
    assert all(critics.LENSES[n].question in p for n, p in zip(critics.LENSES, prompts, strict=True))
    assert len(set(prompts)) == 3
    # without a lens the prompt is the one the replayed cassette was recorded with
    rate(model, spec, ROOT, kids)
    assert "one lens" not in model.calls[-1].prompt


def test_a_scorer_votes_through_its_lens() -> None:
    feas, _ = _vote_pending_tokyo("feasibility", lambda req: "Score: 90")
    spec, _ = _vote_pending_tokyo("specificity", lambda req: "Score: 90")
    assert (feas.lens, spec.lens) == ("feasibility", "specificity")
    assert feas.score != spec.score  # the same checks, weighed differently
    assert not feas.approve and not spec.approve  # the Tokyo split repeats the root's Fuji hike


def test_a_rating_is_reused_only_from_the_same_lens() -> None:
    evs = events()
    plan = fold(evs)
    node = _FakeNode(plan)
    voted = next(p for n in plan.nodes.values() for p in n.proposals if p.votes)
    # the recorded run's votes carry no lens: no lens reuses them
    assert shared_rating(node, voted.node, voted.id, "feasibility") is None
    # a plan whose votes carry lenses
    relensed = []
    for e in evs:
        if e.kind == "vote":
            body = VoteBody(**{**e.body.__dict__, "lens": "coverage", "model_score": 77})
            e = type(e)(e.run, e.kind, e.author, e.lamport, body, e.sig)
        relensed.append(e)
    node = _FakeNode(fold(relensed))
    assert shared_rating(node, voted.node, voted.id, "coverage") == 77
    assert shared_rating(node, voted.node, voted.id, "feasibility") is None


def test_a_scorer_does_not_spend_a_generation_on_a_vote_the_checks_decide() -> None:
    # the committed example run (docs/examples): today's checks approve some of its splits
    evs = read_event_log(Path(__file__).parent.parent / "docs" / "examples" / "japan-events.jsonl").events
    plan = fold(evs)
    spec = plan.spec
    assert spec is not None
    lens = critics.lens_named("coverage")

    def mechanical(n: Any, p: Any) -> tuple[int, bool]:
        relatives = critics.relatives_in_tree(plan.nodes, n.id)
        return critics.combine(critics.check_split(spec, n, p.children, n.depth, relatives), lens=lens)

    # a node of that run opened again (its votes and ballots taken away), whose first pending
    # proposal (the one a scorer votes on first) today's checks approve through this lens, well
    # above the threshold (a rating of 0 would not reject it)
    def opened(n: Any) -> Any:
        ids = {q.id for q in n.proposals}
        kept = [
            e
            for e in evs
            if not (e.kind == "vote" and e.body.proposal in ids)
            and not (e.kind == "ballot" and e.body.node == n.id)
        ]
        pending = fold(kept)
        return pending if pending.nodes[n.id].accepted is None else None

    candidates = []
    for n in sorted(plan.nodes.values(), key=lambda n: (n.depth, n.id)):
        pending = opened(n) if n.proposals else None
        first = (
            next((p for p in pending.nodes[n.id].proposals if p.status == "pending"), None)
            if pending
            else None
        )
        if first is not None and mechanical(n, first)[1]:
            candidates.append((n, first))
    n, target = max(candidates, key=lambda np: mechanical(*np)[0])
    assert mechanical(n, target)[0] * 0.8 >= spec.tree.approve_threshold
    pending = opened(n)
    node = _FakeNode(pending)
    model = ScriptedModel(lambda req: "Score: 10")
    trio.run(Scorer(lambda: model, "coverage").act, node, pending)
    vote = next(v for v in node.published if v.proposal == target.id)
    assert vote.approve and vote.model_score is None and model.calls == []
    assert node.counters.ratings_skipped >= 1
