"""Summaries of split nodes (``review.summaries``): the fold's rule by name (the properties --
order, duplicates, redelivery, noise -- are in tests/test_fold_properties.py), what the exports
show, the model's answer checked where it is written, and one whole swarm in memory."""

from __future__ import annotations

import json
from typing import Any

import pytest
import trio

from specswarm.model.base import GenerationRequest
from specswarm.model.parse import OutputError
from specswarm.model.replay import ScriptedModel, scripted_answer
from specswarm.model.summary import fallback_summary, parse_summary, summarize
from specswarm.model.tasks import GaveUpError
from specswarm.plan import ROOT, fold
from specswarm.plan.summaries import summary_sources
from specswarm.plan.views import Plan
from specswarm.protocol.bodies import _run_spec
from specswarm.protocol.canonical import canonical_bytes
from specswarm.render import render_plan
from specswarm.spec import spec_from_mapping
from specswarm.testing.local import run_local
from specswarm.testing.synth import Swarm, complete_swarm, minimal_spec
from tests.swarmkit import swarm_spec

TREE = {"max_depth": 2, "min_children": 2, "max_children": 8}


def summarized(seed: int = 1, summaries: bool = True) -> Swarm:
    """A converged run of depth 2 (a root, three split children, nine leaves), no summary yet."""
    spec = minimal_spec(tree=TREE, review={"results": False, "summaries": summaries})
    return complete_swarm(seed=seed, spec=spec, rival=False)


def sources_of(plan: Plan, node: str) -> tuple[str, ...]:
    sources = summary_sources([plan.nodes[c] for c in plan.nodes[node].children])
    assert sources is not None
    return sources


def test_a_plan_with_summaries_completes_only_once_every_split_node_has_one() -> None:
    sw = summarized()
    plan = fold(sw.events)
    assert all(n.result for n in plan.leaves()) and not plan.complete
    assert summary_sources([plan.nodes[c] for c in plan.root.children]) is None  # type: ignore[union-attr]
    sw.summarize_all()
    plan = fold(sw.events)
    assert plan.complete and all(n.summary for n in plan.nodes.values() if not n.leaf)
    root = plan.root
    assert root is not None and root.summary is not None
    assert root.summary.sources == tuple(plan.nodes[c].summary.id for c in root.children)  # type: ignore[union-attr]
    assert plan.counts["summary"] == 4 and plan.counts["summaries_uncounted"] == 0


def test_an_early_summary_is_not_counted_and_the_node_waits_for_one_written_from_its_parts() -> None:
    sw = summarized()
    ex = sw.peers["executor"][0]
    plan = fold(sw.events)
    first = plan.nodes[plan.root.children[0]]  # type: ignore[union-attr]
    # the root summarized from a leaf result of its first child: none of its own children's
    early = sw.summary(ex, ROOT, [plan.nodes[first.children[0]].result.id] * 3)  # type: ignore[union-attr]
    sw.summarize_all()
    plan = fold(sw.events)
    assert plan.complete and plan.root.summary.id != early.id  # type: ignore[union-attr]
    assert plan.counts["summaries_uncounted"] == 1


def test_of_several_summaries_the_least_by_lamport_author_id_counts_and_only_executors_write() -> None:
    sw = summarized()
    plan = fold(sw.events)
    node = plan.root.children[0]  # type: ignore[union-attr]
    sources = sources_of(plan, node)
    scorer, ex0, ex1 = sw.peers["scorer"][0], *sw.peers["executor"][:2]
    rogue = sw.summary(scorer, node, sources, "By a scorer.", lamport=1)
    later = sw.summary(ex0, node, sources, "Later.", lamport=90)
    sooner = sw.summary(ex1, node, sources, "Sooner.", lamport=80)
    plan = fold(sw.events)
    assert plan.nodes[node].summary is not None and plan.nodes[node].summary.id == sooner.id
    assert {rogue.id, later.id}.isdisjoint({plan.nodes[node].summary.id})
    assert fold(reversed(sw.events)).digest == plan.digest


def test_a_summary_stops_counting_when_a_part_it_was_written_from_no_longer_counts() -> None:
    sw = summarized()
    sw.summarize_all()
    plan = fold(sw.events)
    first = plan.nodes[plan.root.children[0]]  # type: ignore[union-attr]
    leaf = plan.nodes[first.children[0]]
    # an older claim on the leaf, with its result: that result counts now (the least claim)
    ex = sw.peers["executor"][1]
    claim = sw.claim(ex, leaf.id, lamport=0)
    sw.result(ex, leaf.id, claim, output="An older claim's result")
    plan = fold(sw.events)
    assert plan.nodes[leaf.id].result.claim == claim.id  # type: ignore[union-attr]
    assert plan.nodes[first.id].summary is None and plan.root.summary is None  # type: ignore[union-attr]
    assert not plan.complete
    sw.summarize_all()
    assert fold(sw.events).complete


def test_without_summaries_the_plan_and_its_exports_are_as_before() -> None:
    sw = summarized(summaries=False)
    plan = fold(sw.events)
    assert plan.complete and "summary" not in plan.counts
    assert "summary" not in json.dumps(plan.to_json()["root"])
    assert "summary" not in json.dumps(plan.tree_content())


def test_a_run_event_made_before_summaries_folds_without_them() -> None:
    spec = spec_from_mapping(
        {
            "goal": "Plan a day",
            "roles": {"decomposer": {"count": 1}, "scorer": {"count": 1}, "executor": {"count": 1}},
        }
    )
    raw = spec.to_json()
    assert (
        raw["review"] == {"results": True, "revisions": 1, "rivals": 1, "summaries": True}
        and raw["prompts"]["summarize"]
    )
    del raw["prompts"]["summarize"], raw["review"]["summaries"], raw["review"]["revisions"]
    del raw["review"]["rivals"]
    old = _run_spec(canonical_bytes(raw))
    assert old.review.summaries is False and old.review.results is True and old.prompts.summarize == ""
    assert old.review.revisions == old.tree.max_revisions == 2  # the chain such a run judged by
    assert old.review.rivals == 0  # its holders revised alone
    assert "summarize" not in old.to_json()["prompts"]


# -- the exports ---------------------------------------------------------------------------------


def rendered(fmt: str, content_only: bool = False) -> str:
    sw = summarized()
    sw.summarize_all()
    plan = fold(sw.events)
    return render_plan(plan, fmt, content_only=content_only)


@pytest.mark.parametrize("content_only", [False, True])
def test_markdown_puts_the_roots_summary_under_overview_and_each_split_nodes_under_its_heading(
    content_only: bool,
) -> None:
    text = rendered("markdown", content_only)
    overview = text.index("## Overview")
    assert text.index("Summary of root.") > overview and text.index("Summary of root.") < text.index(
        "```mermaid"
    )
    for i in (1, 2, 3):
        heading = text.index(f"\n## {i}. Part 1.{i} of root")
        nxt = text.index("\n## ", heading + 1) if i < 3 else len(text)
        assert "Summary of " in text[heading:nxt]


@pytest.mark.parametrize("content_only", [False, True])
def test_json_carries_a_summary_per_split_node(content_only: bool) -> None:
    data = json.loads(rendered("json", content_only))
    root = data["root"]
    assert root["summary"]["text"] == "Summary of root."
    assert all(c["summary"]["text"].startswith("Summary of ") for c in root["children"])
    assert all("summary" not in leaf for c in root["children"] for leaf in c["children"])
    if content_only:
        assert root["summary"]["author"] == "executor" and root["summary"]["id"].startswith("s")


def test_the_spec_format_has_the_overview_and_each_milestones_summary() -> None:
    text = rendered("spec")
    assert text.index("Summary of root.") < text.index("## 2. Requirements")
    components = text[text.index("## 3. Components") : text.index("## 4. Tasks")]
    assert components.count("Summary of ") == 3


# -- the model's answer --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        ("", "empty"),
        ("- Kyoto\n- Nara\n- Osaka", "a list"),
        ("```\ncode\n```", "code"),
        ('{"summary": "x"}', "JSON"),
        ("# Summary\nKyoto and Nara.", "headings"),
        ("Kyoto is great. " * 30, "too long"),
        ("Kyoto.", "too short"),
        ("Kyoto and Nara fill 9 days with temples and deer parks.", "names 9"),
    ],
)
def test_a_garbage_summary_is_refused_naming_the_problem(answer: str, problem: str) -> None:
    with pytest.raises(OutputError, match=problem):
        parse_summary(answer, known="Kyoto (4 days)\nNara day trip")


def test_a_summary_is_kept_as_one_paragraph() -> None:
    got = parse_summary("Summary: Kyoto takes 4 days of temples.\nNara is a day trip.", known="4 days")
    assert got == "Kyoto takes 4 days of temples. Nara is a day trip."


def test_the_task_asks_again_then_gives_up_and_the_fallback_joins_the_titles() -> None:
    spec = spec_from_mapping(
        {
            "goal": "Plan a day",
            "roles": {"decomposer": {"count": 1}, "scorer": {"count": 1}, "executor": {"count": 1}},
        }
    )
    plan = fold(summarized().events)
    node = plan.root
    assert node is not None
    kids = [
        {"title": f"Part {i}", "detail": "", "facts": {}, "leaf": True, "text": "- a line"} for i in (1, 2)
    ]
    garbage = ScriptedModel(lambda req: "- one\n- two")
    with pytest.raises(GaveUpError):
        summarize(garbage, spec, node, [], kids)
    assert len(garbage.calls) == 3 and "could not be used: the answer was a list" in garbage.calls[-1].prompt
    good = ScriptedModel()
    assert summarize(good, spec, node, [], kids).endswith("Each of them is settled in its own step below.")
    assert "Part 1 and Part 2" in good.calls[0].prompt or "Part 1" in good.calls[0].prompt
    assert (
        fallback_summary("Kyoto (4 days)", ["Temples", "Nara day trip"])
        == "Kyoto (4 days): Temples; Nara day trip."
    )


# -- a whole swarm -------------------------------------------------------------------------------


def run(
    spec: dict[str, Any], answer: Any = scripted_answer, seed: int = 4
) -> tuple[Plan, list[GenerationRequest]]:
    asked: list[GenerationRequest] = []

    def model() -> ScriptedModel:
        def respond(req: GenerationRequest) -> str:
            asked.append(req)
            return str(answer(req))

        return ScriptedModel(respond)

    _, swarm, _ = trio.run(lambda: run_local(spec, model, seed=seed, timeout=60))
    plans = [n.plan() for n in swarm.nodes.values()]
    assert len({p.digest for p in plans}) == 1 and plans[0].complete
    return plans[0], asked


def garbage_summaries(req: GenerationRequest) -> str:
    return "- not\n- prose" if "\nSummarize: " in f"\n{req.prompt}" else scripted_answer(req)


def test_a_swarm_summarizes_bottom_up_and_without_the_switch_writes_no_summary() -> None:
    spec = swarm_spec(decomposers=1, scorers=3, executors=2, max_depth=2)
    plan, asked = run(spec)
    split = [n for n in plan.walk() if not n.leaf]
    assert len(split) > 1 and all(n.summary is not None and not n.summary.fallback for n in split)
    asks = [r for r in asked if r.prompt.lstrip().startswith("Overall goal:") and "\nSummarize: " in r.prompt]
    assert len(asks) == len(split)  # one writer per node: no executor wrote a summary twice
    assert plan.counts["summary"] == len(split)
    # the root's summary came last, from its children's summaries
    root = plan.root
    assert root is not None and root.summary is not None
    assert all(
        root.summary.lamport > plan.nodes[c].summary.lamport for c in root.children if plan.nodes[c].summary
    )  # type: ignore[union-attr]

    spec["review"]["summaries"] = False
    plan, asked = run(spec)
    assert "summary" not in plan.counts and not any("\nSummarize: " in r.prompt for r in asked)

    spec["review"]["summaries"] = True
    plan, _ = run(spec, garbage_summaries)
    assert all(n.summary is not None and n.summary.fallback for n in plan.walk() if not n.leaf)
