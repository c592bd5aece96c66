"""Results through the board, in a whole swarm (in memory, scripted model): the scorers judge each
leaf's result in tree order, an executor writes a rejected one again with the board's critique
(``revises``), and every run delivers, judged or not."""

from __future__ import annotations

import re
from collections.abc import Callable

import trio

from specswarm.model.base import GenerationRequest
from specswarm.model.replay import ScriptedModel, scripted_answer
from specswarm.plan import Plan
from specswarm.plan.views import NodeView
from specswarm.testing.local import LocalSwarm, run_local
from tests.swarmkit import swarm_spec

THIN = "- See the sights\n- Have lunch\n- Walk around"
REJECTED = "An earlier answer to this task was rejected by the reviewers."


def run(
    answer: Callable[[GenerationRequest], str], max_revisions: int = 1, seed: int = 4, rivals: int = 1
) -> tuple[Plan, list[str]]:
    """A depth-1 run (three leaves) with ``answer`` as the model; the plan and every execute
    prompt asked."""
    spec = swarm_spec(decomposers=1, scorers=3, executors=2, max_depth=1)
    assert spec["review"] == {"results": True, "revisions": 1, "rivals": 1, "summaries": True}  # made today
    spec["review"]["revisions"] = max_revisions
    spec["review"]["rivals"] = rivals
    prompts: list[str] = []

    def model() -> ScriptedModel:
        def respond(req: GenerationRequest) -> str:
            if req.prompt.startswith("Overall goal:") and "\nTask: " in req.prompt:
                prompts.append(req.prompt)
            return answer(req)

        return ScriptedModel(respond)

    _, swarm, _ = trio.run(lambda: run_local(spec, model, seed=seed, timeout=60))
    return plan_of(swarm), prompts


def plan_of(swarm: LocalSwarm) -> Plan:
    plans = [n.plan() for n in swarm.nodes.values()]
    assert len({p.digest for p in plans}) == 1 and plans[0].complete
    return plans[0]


STAY = "These lines of this task are written and stay:"


def thin_first(req: GenerationRequest) -> str:
    """A thin first answer; asked for the lines it lacks, specific ones."""
    if "\nTask: " in req.prompt and "5 to 8 lines" in req.system and STAY not in req.prompt:
        return THIN
    return scripted_answer(req)


def restating_first(req: GenerationRequest) -> str:
    """At first, lines that only restate the task (nothing worth keeping); a result written again
    after the board's critique is specific."""
    if "\nTask: " in req.prompt and "5 to 8 lines" in req.system and REJECTED not in req.prompt:
        task = re.search(r"^Task: (.*?)(?: \(.*\))?$", req.prompt, re.M)
        assert task is not None
        return f"- {task.group(1)}\n- {task.group(1)} now"
    return scripted_answer(req)


def test_a_scripted_run_passes_the_board_leaf_by_leaf() -> None:
    plan, prompts = run(scripted_answer)
    leaves = plan.leaves()
    assert leaves and all(n.result is not None and n.result.status == "accepted" for n in leaves)
    for n in leaves:
        assert n.result is not None and n.result.approvals >= plan.spec.quorum_size()  # type: ignore[union-attr]
        assert all(
            v.checks and [c.name for c in v.checks] == ["concrete", "on_task", "new", "consistent"]
            for v in n.result.votes
        )
    # leaves were judged in tree order: each leaf's first vote comes after the counted votes of
    # the leaves before it
    first_votes = [min(v.lamport for r in n.results for v in r.votes) for n in leaves]
    deciding = [max(v.lamport for v in n.result.votes) for n in leaves if n.result]  # type: ignore[union-attr]
    assert all(first_votes[i + 1] > deciding[i] for i in range(len(leaves) - 1)), (first_votes, deciding)


def test_a_thin_result_is_completed_before_the_board_sees_it() -> None:
    plan, prompts = run(thin_first, rivals=0)  # a rival writes a rejected result afresh
    leaves = plan.leaves()
    asked = [p for p in prompts if STAY in p]
    assert len(asked) >= len(leaves)  # one per first result; a rejected one is completed again
    for n in leaves:
        assert n.result is not None and n.result.approvals >= plan.spec.quorum_size()  # type: ignore[union-attr]
        assert len(n.result.output.splitlines()) >= 6
    # the first leaf's thin lines stay, first, and the model's answer adds what the board asks for
    first = leaves[0].result
    assert (
        first is not None
        and first.revises is None
        and first.output.startswith("- Have lunch\n- Walk around\n")
    )
    # a later leaf that repeated them was rejected by the board (new) and completed without them
    counted = [line for n in leaves if n.result for line in n.result.output.splitlines()]
    assert len(counted) == len(set(counted))
    assert all("more line" in p and "for this task, each different from these" in p for p in asked)
    assert not any(REJECTED in p for p in prompts)  # nothing had to be written afresh


def test_a_first_result_still_thin_is_written_once_more_before_the_board_sees_it() -> None:
    sampled: list[str] = []

    def thin_unless_sampled(req: GenerationRequest) -> str:
        """Greedy: a thin answer, and nothing new when asked for the missing lines."""
        if "\nTask: " not in req.prompt or "5 to 8 lines" not in req.system:
            return scripted_answer(req)
        if req.temperature > 0:
            sampled.append(req.prompt)
            return scripted_answer(req)
        return THIN

    plan, prompts = run(thin_unless_sampled, rivals=0)
    leaves = plan.leaves()
    assert len(sampled) == len(leaves)  # once per leaf, and never again
    for n in leaves:
        assert n.result is not None and n.result.revises is None and n.result.status == "accepted"
        assert len(n.result.output.splitlines()) >= 5 and "See the sights" not in n.result.output
    assert not any(REJECTED in p for p in prompts)


def test_a_rejected_result_is_written_again_with_the_boards_critique() -> None:
    plan, prompts = run(restating_first)
    for n in plan.leaves():
        assert n.result is not None and n.result.revises is not None
        rejected = next(r for r in n.results if r.id == n.result.revises)
        assert rejected.status == "rejected" and rejected.output.endswith(" now")
        assert all(not v.approve and "concrete: 2 item lines" in v.critique for v in rejected.votes)
        # a rival (review.rivals: 1) wrote it again too, under a rival's claim: two writers
        again = [r for r in n.results if r.revises == rejected.id]
        rivals = {c.id for c in n.claims if c.rival == rejected.id}
        assert len(again) == 2 and len({r.author for r in again}) == 2
        assert [r.claim in rivals for r in again].count(True) == 1
        assert n.claim_holder == rejected.author
    revisions = [p for p in prompts if REJECTED in p]
    assert len(revisions) == 2 * len(plan.leaves())
    # the failed check is turned into an instruction; nothing rejected is quoted (a small model
    # copies what its prompt quotes)
    assert all("- 5 to 8 lines, each naming an actual place" in p for p in revisions)
    assert not any(" now" in p or "concrete:" in p for p in revisions)


def test_a_result_rejected_every_time_ends_as_the_best_draft() -> None:
    plan, prompts = run(
        lambda req: THIN if "\nTask: " in req.prompt else scripted_answer(req), max_revisions=1
    )
    for n in plan.leaves():
        assert n.result is not None and n.result.approvals == 0 and n.result.status == "accepted"
        # the first result and its revisions, the holder's and a rival's (one round)
        assert [r.status for r in n.results] in (["accepted", "rejected", "rejected"], ["accepted"])


def leaf_titled(plan: Plan, title: str) -> NodeView:
    return next(n for n in plan.leaves() if n.title == title)
