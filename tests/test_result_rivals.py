"""Rival rounds of leaf results (``review.rivals``): a rejected result written again by its
holder and by a rival under a rival's claim, the round awaited, its best revision counted. The
rule's properties are in tests/test_fold_properties.py; these are the cases by name."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from specswarm.plan import fold
from specswarm.protocol.bodies import ClaimBody
from specswarm.protocol.events import Event, check_event
from specswarm.render import render_plan
from specswarm.swarm.roles.rivals import next_target, rival_seats
from specswarm.swarm.roles.writing import _rivals_heard, holder_work
from specswarm.testing.synth import Swarm
from tests.test_result_board import board, judge, node, write


def rival(
    sw: Swarm, leaf: str, target: Event, text: str | None = None, by: int = 1
) -> tuple[Event, Event | None]:
    """Executor ``by``'s rival claim to write ``target`` again, and (with ``text``) its revision."""
    ex = sw.peers["executor"][by]
    claim = sw.claim(ex, leaf, rival=target.id)
    res = sw.result(ex, leaf, claim, output=text, revises=target.id) if text is not None else None
    return claim, res


def rejected_first(max_revisions: int = 1) -> tuple[Swarm, str, Event]:
    sw, leaf = board(max_revisions=max_revisions)
    first = write(sw, leaf, "- see the sights")
    judge(sw, first, False, score=20)
    return sw, leaf, first


def test_a_round_counts_nothing_until_every_writer_has_written_then_its_best() -> None:
    sw, leaf, first = rejected_first()
    claim, _ = rival(sw, leaf, first)
    mine = write(sw, leaf, "- 09:00 Alfama walk", revises=first)
    judge(sw, mine, True, score=80)
    n = node(fold(sw.events), leaf)
    # the holder's revision is approved, but the rival's claim is not written yet
    assert n.result is None and n.status == "reviewing"
    assert {r.id: r.status for r in n.results}[mine.id] == "approved"
    assert n.claim_holder == first.author and n.claim != claim.id  # a rival's claim never wins
    theirs = sw.result(sw.peers["executor"][1], leaf, claim, output="- 10:00 Belem tower", revises=first.id)
    n = node(fold(sw.events), leaf)
    assert n.result is None  # written, not judged yet
    judge(sw, theirs, True, score=95)
    n = node(fold(sw.events), leaf)
    assert n.result is not None and n.result.id == theirs.id  # scored higher, though approved later
    assert {r.id: r.status for r in n.results}[mine.id] == "outvoted"


def test_the_round_chooses_the_same_whatever_arrives_first() -> None:
    sw, leaf, first = rejected_first()
    _, theirs = rival(sw, leaf, first, "- 10:00 Belem tower")
    assert theirs is not None
    judge(sw, theirs, True, score=70)
    assert node(fold(sw.events), leaf).result is None  # the holder's revision is owed
    mine = write(sw, leaf, "- 09:00 Alfama walk", revises=first)
    judge(sw, mine, True, score=85)
    n = node(fold(sw.events), leaf)
    assert n.result is not None and n.result.id == mine.id
    assert fold(list(reversed(sw.events))).digest == fold(sw.events).digest


def test_a_superseded_rival_claim_owes_nothing() -> None:
    sw, leaf, first = rejected_first()
    claim, _ = rival(sw, leaf, first)
    mine = write(sw, leaf, "- 09:00 Alfama walk", revises=first)
    judge(sw, mine, True)
    assert node(fold(sw.events), leaf).result is None
    sw.claim(sw.peers["executor"][0], leaf, supersedes=claim.id, rival=first.id)  # taken over...
    assert node(fold(sw.events), leaf).result is None  # ...and owed by the new claim
    sw2, leaf2, first2 = rejected_first()
    claim2, _ = rival(sw2, leaf2, first2)
    sw2.claim(sw2.peers["executor"][0], leaf2, supersedes=claim2.id)  # a plain claim kills it
    mine2 = write(sw2, leaf2, "- 09:00 Alfama walk", revises=first2)
    judge(sw2, mine2, True)
    got = node(fold(sw2.events), leaf2).result
    assert got is not None and got.id == mine2.id


def test_a_revision_naming_a_rival_claim_not_heard_yet_counts_nothing() -> None:
    """Gossip need not deliver the rival's claim before the holder's revision made after it: a
    peer holding the revision alone must not count it, and judge the next leaf by it."""
    sw, leaf, first = rejected_first()
    claim, _ = rival(sw, leaf, first)
    heard = _rivals_heard(node(fold(sw.events), leaf), first.id)
    assert heard == (claim.id,)
    ex = sw.peers["executor"][0]
    held = next(e for e in sw.events if e.kind == "claim" and e.author == ex.peer_id)
    mine = sw.result(ex, leaf, held, output="- 09:00 Alfama walk", revises=first.id, rivals=heard)
    assert check_event(mine.to_bytes())[0] == mine and mine.wire["rivals"] == [claim.id]
    judge(sw, mine, True, score=85)
    early = [e for e in sw.events if e.id != claim.id]
    n = node(fold(early), leaf)
    assert n.result is None and {r.id: r.status for r in n.results}[mine.id] == "approved"
    theirs = sw.result(sw.peers["executor"][1], leaf, claim, output="- 10:00 Belem tower", revises=first.id)
    judge(sw, theirs, True, score=95)
    assert node(fold([e for e in sw.events if e.id != claim.id]), leaf).result is None
    got = node(fold(sw.events), leaf).result
    assert got is not None and got.id == theirs.id


@settings(max_examples=60, deadline=None)
@given(st.sampled_from([60, 85, 95]), st.booleans(), st.randoms(use_true_random=False))
def test_a_counted_round_result_is_what_every_later_view_counts(
    score: int, approve: bool, rnd: random.Random
) -> None:
    """Delivered in any order that keeps a vote after its result and a result after its claim,
    a view holding part of a round counts nothing of the leaf or what the whole set counts."""
    sw, leaf, first = rejected_first()
    claim, _ = rival(sw, leaf, first)
    ex = sw.peers["executor"][0]
    held = next(e for e in sw.events if e.kind == "claim" and e.author == ex.peer_id)
    mine = sw.result(ex, leaf, held, output="- 09:00 Alfama walk", revises=first.id, rivals=(claim.id,))
    judge(sw, mine, approve, score=85 if approve else 30)
    theirs = sw.result(sw.peers["executor"][1], leaf, claim, output="- 10:00 Belem tower", revises=first.id)
    judge(sw, theirs, True, score=score)
    final = node(fold(sw.events), leaf).result
    assert final is not None
    before = {e.id: set() for e in sw.events}  # event -> what must arrive before it
    for e in sw.events:
        for key in ("result", "claim"):
            if isinstance(e.wire.get(key), str) and e.wire[key] in before:
                before[e.id].add(e.wire[key])
    pending, order = list(sw.events), []
    while pending:
        ready = [e for e in pending if before[e.id] <= {o.id for o in order}]
        pick = rnd.choice(ready)
        pending.remove(pick)
        order.append(pick)
        got = node(fold(order), leaf).result if leaf in fold(order).nodes else None
        assert got is None or got.id == final.id


def rejected_round(
    sw: Swarm, leaf: str, target: Event, texts: tuple[str, str], scores: tuple[int, int]
) -> tuple[Event, Event]:
    """A round writing ``target`` again: the rival's revision, then the holder's, both rejected
    with ``scores``."""
    _, theirs = rival(sw, leaf, target, texts[0])
    mine = write(sw, leaf, texts[1], revises=target)
    assert theirs is not None
    judge(sw, theirs, False, score=scores[0])
    judge(sw, mine, False, score=scores[1])
    return theirs, mine


def test_with_rivals_the_chain_counts_rounds_not_texts() -> None:
    sw, leaf, first = rejected_first(max_revisions=2)
    theirs, _ = rejected_round(sw, leaf, first, ("- walk around", "- have lunch"), (40, 30))
    n = node(fold(sw.events), leaf)
    assert n.result is None  # three texts, but one round of the two allowed
    # the next round writes again the round's best (the rival's), holder first
    target = next_target(n)
    assert target is not None and target.id == theirs.id and holder_work(n) == "revise"
    again, _ = rejected_round(sw, leaf, theirs, ("- walk along the river", "- walk by the sea"), (45, 35))
    n = node(fold(sw.events), leaf)
    assert n.result is not None and n.result.id == again.id  # the best rejected one


def test_the_holder_waits_for_a_rejected_result_and_its_rivals_seats() -> None:
    sw, leaf, first = rejected_first()
    n = node(fold(sw.events), leaf)
    target = next_target(n)
    assert target is not None and target.id == first.id and holder_work(n) == "revise"
    ranked = [e.peer_id for e in sw.peers["executor"]]
    assert rival_seats(n, ranked, 1, lambda p: False) == [ranked[1]]  # never the holder
    assert rival_seats(n, ranked, 1, lambda p: p == ranked[1]) == []  # nobody live
    mine = write(sw, leaf, "- 09:00 Alfama walk", revises=first)
    rival(sw, leaf, first)
    n = node(fold(sw.events), leaf)
    assert holder_work(n) is None  # written: the rival's revision is awaited
    assert next_target(n) is not None  # ...which the rival still writes
    judge(sw, mine, True)
    assert holder_work(node(fold(sw.events), leaf)) is None


def test_a_rival_claim_round_trips_and_older_claims_keep_their_ids() -> None:
    assert "rival" not in ClaimBody("leaf", None).to_json()
    sw, leaf, first = rejected_first()
    claim, _ = rival(sw, leaf, first)
    assert check_event(claim.to_bytes())[0] == claim and claim.wire["rival"] == first.id


def test_a_result_under_another_executors_claim_is_not_judged() -> None:
    sw, leaf = board()
    ex0, ex1 = sw.peers["executor"][:2]
    claim = sw.claim(ex0, leaf)
    stolen = sw.result(ex1, leaf, claim, output="- 09:00 Alfama walk")
    judge(sw, stolen, True)
    n = node(fold(sw.events), leaf)
    assert n.result is None and n.results == ()


def test_the_markdown_shows_the_revision_scored_lower() -> None:
    sw, leaf, first = rejected_first()
    _, theirs = rival(sw, leaf, first, "- 10:00 Belem tower")
    mine = write(sw, leaf, "- 09:00 Alfama walk", revises=first)
    assert theirs is not None
    judge(sw, theirs, True, score=70)
    judge(sw, mine, True, score=85)
    md = render_plan(fold(sw.events), "markdown")
    assert "Review: 1 rejected draft, 1 approved draft scored lower" in md
    assert f"**Approved, scored lower** `{theirs.id[:8]}`" in md and "a mean score of 70 against 85" in md
    assert "Belem tower" in md


def test_a_rival_writes_the_whole_result_afresh_where_the_holder_keeps_good_lines() -> None:
    from specswarm.model.judged import write_judged
    from specswarm.model.replay import ScriptedModel, scripted_answer
    from specswarm.plan.ledger import result_task
    from specswarm.spec.load import spec_from_json
    from specswarm.swarm.roles.base import ancestors_of
    from tests.swarmkit import swarm_spec

    sw, leaf = board()
    plan = fold(sw.events)
    n, spec = node(plan, leaf), plan.spec
    assert spec is not None
    spec = spec_from_json({**spec.to_json(), "prompts": swarm_spec()["prompts"]})  # the default templates
    rejected = "- 09:00 Alfama walk from Sé Cathedral\n- 12:30 lunch at Time Out Market, 15 EUR\n- sights"

    def asked(afresh: bool) -> list[str]:
        prompts: list[str] = []

        def respond(req):  # type: ignore[no-untyped-def]
            prompts.append(req.prompt)
            return scripted_answer(req)

        write_judged(
            ScriptedModel(respond), spec, n, ancestors_of(plan, n), result_task(plan, n),
            failed=["concrete"], previous=rejected, afresh=afresh,
        )  # fmt: skip
        return prompts

    holder, rival_ = asked(False), asked(True)
    assert "These lines of this task are written and stay:" in holder[0] and "Alfama" in holder[0]
    assert "rejected by the reviewers" in rival_[0] and "Alfama" not in rival_[0]


def test_a_holder_s_revision_that_would_say_the_rejected_result_again_is_written_afresh() -> None:
    """The holder keeps a rejected result's good lines and asks for the rest; when the model
    gives none it can keep, the lines left out only for a name another leaf plans are put back
    (a thin result fails the reader), and that is the rejected result again: it is written
    afresh instead, told what failed."""
    from dataclasses import replace

    from specswarm.critics.results import Written
    from specswarm.model.judged import says_again, write_judged
    from specswarm.model.replay import ScriptedModel
    from specswarm.plan.ledger import result_task
    from specswarm.spec.load import spec_from_json
    from specswarm.swarm.roles.base import ancestors_of
    from tests.swarmkit import swarm_spec

    sw, leaf = board()
    plan = fold(sw.events)
    n, spec = node(plan, leaf), plan.spec
    assert spec is not None
    spec = spec_from_json({**spec.to_json(), "prompts": swarm_spec()["prompts"]})  # the default templates
    lines = [
        "14:00 tram 28 through Alfama, 3 EUR",  # names what an earlier leaf plans
        "12:30 lunch at Time Out Market, 15 EUR",
        "10:00 Belem Tower and the Jeronimos cloister, 6 EUR",
        "16:30 Gulbenkian Museum, 10 EUR",
        "19:00 fado dinner at Clube de Fado, 40 EUR",
    ]
    rejected = "\n".join(f"- {line}" for line in lines)
    earlier = Written("Old town", ("09:00 Alfama walk from the Castelo to the river",), "1")
    task = replace(result_task(plan, n), ledger=(earlier,))
    prompts: list[str] = []

    def respond(req):  # type: ignore[no-untyped-def]
        prompts.append(req.prompt)
        return f"- {lines[0]}" if "written and stay" in req.prompt else "- 08:00 LX Factory, free"

    out = write_judged(
        ScriptedModel(respond), spec, n, ancestors_of(plan, n), task,
        failed=["new"], previous=rejected, attempt=1,
    )  # fmt: skip
    assert "These lines of this task are written and stay:" in prompts[0]
    assert any("rejected by the reviewers" in p for p in prompts[1:])
    assert not says_again(out, rejected) and "LX Factory" in out
    assert says_again("- Day 2: b\n- Day 1: a", "- a\n- b") and not says_again("- a", "- a\n- b")


def test_the_live_view_and_a_stall_name_an_awaited_rival() -> None:
    from specswarm.render.live import node_status
    from specswarm.swarm.launcher.diagnose import _leaf_stuck

    sw, leaf, first = rejected_first()
    claim, _ = rival(sw, leaf, first)
    mine = write(sw, leaf, "- 09:00 Alfama walk", revises=first)
    judge(sw, mine, False)
    n = node(fold(sw.events), leaf)
    names = {claim.author: "executor-1"}
    assert node_status(n, names) == "written again by executor-1 as a rival, and by its holder"
    assert "a rival's revision by executor-1 is awaited" in _leaf_stuck(n, {"executor", "scorer"}, names)
