"""Scorer lenses: one editorial board, three reviewers who weigh a split differently."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import trio

from specswarm import critics
from specswarm.model import rate
from specswarm.model.replay import ScriptedModel
from specswarm.plan.fold import fold
from specswarm.protocol.bodies import CheckResult, Child, VoteBody, parse_body
from specswarm.protocol.events import read_event_log
from specswarm.spec import spec_from_mapping
from specswarm.swarm.roles.scorer import Scorer, shared_rating

from .test_critics_recorded_run import TOKYO, _FakeNode, events, pending_tokyo
from .test_model_tasks import ROOT, make_spec


def checks(**scores: int) -> list[CheckResult]:
    """Every check passing at 100, except those given (soft ones pass whatever their score)."""
    out = []
    for name in critics.CHECK_NAMES:
        score = scores.get(name, 100)
        hard = name in critics.HARD_CHECKS
        out.append(CheckResult(name, score, not hard or score == 100, f"{name} at {score}"))
    return out


def verdicts(cs: list[CheckResult]) -> dict[str, tuple[int, bool]]:
    return {name: critics.combine(cs, lens=critics.lens_named(name)) for name in critics.LENSES}


def test_the_same_split_through_three_lenses_gets_three_verdicts() -> None:
    # a fifth of the children vague (soft: 70), the parent's detail half covered (soft: 45)
    seen = verdicts(checks(vagueness=70, coverage=45))
    assert seen["feasibility"][1] is True
    assert seen["coverage"][1] is True
    assert seen["specificity"][1] is False  # its floor: a quarter vague vetoes
    assert len({score for score, _ in seen.values()}) == 3
    # coverage below its lens floor: only the coverage reviewer vetoes
    seen = verdicts(checks(coverage=35))
    assert {n: ok for n, (_, ok) in seen.items()} == {
        "feasibility": True,
        "coverage": False,
        "specificity": True,
    }
    # without a lens, the base weights and floors (as before lenses)
    assert critics.combine(checks(vagueness=70, coverage=45)) == critics.combine(
        checks(vagueness=70, coverage=45), lens=critics.lens_named("budget")
    )


@pytest.mark.parametrize("hard", sorted(critics.HARD_CHECKS))
def test_a_failed_hard_check_rejects_through_every_lens(hard: str) -> None:
    cs = checks(**{hard: 90})
    for name in (*critics.LENSES, "budget"):
        assert critics.combine(cs, lens=critics.lens_named(name))[1] is False, name


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


def test_an_unvetoed_split_is_rated_by_the_model() -> None:
    cs = checks(vagueness=70)
    assert not critics.vetoed(cs, critics.lens_named("feasibility"))
    assert critics.vetoed(cs, critics.lens_named("specificity"))  # its floor is 75
    assert critics.vetoed(checks(overlap=90))


def test_each_lens_weighs_its_own_graded_check() -> None:
    # the same split, one graded signal low at a time: only the lens that owns it moves much
    base = verdicts(checks())
    for signal, owner in (
        ("concreteness", "specificity"),
        ("sizing", "feasibility"),
        ("coverage", "coverage"),
    ):
        seen = verdicts(checks(**{signal: 40}))
        drop = {name: base[name][0] - seen[name][0] for name in critics.LENSES}
        assert drop[owner] >= 10, (signal, drop)
        assert all(drop[other] <= 3 for other in critics.LENSES if other != owner), (signal, drop)


def test_concreteness_counts_what_a_child_names_beyond_its_parent() -> None:
    parent = critics.Part("Visit Kyoto (4 days)", "temples and gardens", {"days": 4})
    named = [
        critics.Part(
            "Fushimi Inari and Kiyomizu-dera", "Gion at dusk, 2 hours in Nishiki Market", {"days": 2}
        ),
        critics.Part("Arashiyama and Kinkaku-ji", "the bamboo grove, then Ryoan-ji", {"days": 2}),
    ]
    themes = [
        critics.Part("Explore Kyoto's temples", "see the temples of Kyoto"),
        critics.Part("Enjoy the gardens", "relax in the gardens"),
    ]
    full, thin = critics.check_concreteness(parent, named), critics.check_concreteness(parent, themes)
    assert full.score == 100 and full.passed
    assert thin.score == 0 and thin.passed  # soft: vagueness is the check that fails
    assert "#1" in thin.note and "#2" in thin.note


def test_sizing_wants_amounts_details_and_no_part_holding_most_of_the_total() -> None:
    parent = critics.Part("Plan a week", facts={"days": 7})
    even = [
        critics.Part(f"Stage {k}", "what happens there, day by day, and why", {"days": d})
        for k, d in (("A", 2), ("B", 3), ("C", 2))
    ]
    lopsided = [
        critics.Part(f"Stage {k}", "what happens there, day by day, and why", {"days": d})
        for k, d in (("A", 5), ("B", 1), ("C", 1))
    ]
    bare = [critics.Part("Stage A"), critics.Part("Stage B"), critics.Part("Stage C")]
    scores = [critics.check_sizing(parent, c).score for c in (even, lopsided, bare)]
    assert scores[0] == 100
    assert 70 < scores[1] < 100 and "holds 71 %" in critics.check_sizing(parent, lopsided).note
    assert scores[2] == 30  # no amount, no detail; balance has nothing to judge


def test_a_passing_split_whose_parts_touch_scores_below_one_whose_parts_are_apart() -> None:
    parent = critics.Part("Plan a week in Italy")
    apart = [
        critics.Part("Rome: ancient ruins", "Colosseum at dawn"),
        critics.Part("Florence: galleries", "Uffizi, Accademia"),
    ]
    touching = [
        critics.Part("Rome: ancient ruins", "the Colosseum, then the Pantheon"),
        critics.Part("Florence: galleries", "the Uffizi; Pantheon replicas"),
    ]
    a, t = critics.check_overlap(parent, apart), critics.check_overlap(parent, touching)
    assert a.passed and t.passed  # one name shared detail-to-detail is not the same content
    assert a.score == 100 and 60 <= t.score < 100
    assert "Pantheon" in t.note


def test_a_rating_is_asked_only_when_it_can_change_the_vote() -> None:
    feas = critics.lens_named("feasibility")
    # every check at 100: approved even with a rating of 0 (0.8 * 100 >= 60)
    assert not critics.rating_decides(checks(), 0.2, 60, feas)
    # a vetoed split: rejected whatever the model says
    assert not critics.rating_decides(checks(overlap=90), 0.2, 60, feas)
    # mechanically near the threshold: the rating decides
    low = checks(**{name: 66 for name in ("vagueness", "coverage", "sizing", "concreteness")})
    mech = critics.combine(low, lens=feas)[0]
    assert critics.combine(low, 0, 0.2, 90, feas)[1] is False
    assert critics.rating_decides(low, 0.2, mech - 5, feas)
    # the weight decides how often: at 0 never, at 1 always (unless vetoed)
    assert not critics.rating_decides(low, 0.0, mech - 5, feas)
    assert critics.rating_decides(checks(), 1.0, 60, feas)


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
