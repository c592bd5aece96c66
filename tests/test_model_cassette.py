"""Real answers of the embedded model, replayed: the whole task pipeline on true model text.

``tests/cassettes/real_japan.jsonl`` was recorded from the default model
(Qwen2.5-Coder-1.5B Q4_K_M, gpt4all, greedy) with the default prompt
templates. If a template changes, the prompts change and these tests fail
with a ReplayMissError naming the prompt: re-record the cassette then.
"""

from __future__ import annotations

from pathlib import Path

from specswarm.critics import check_split, combine
from specswarm.model import Child, ReplayModel, TaskCounts, decompose, execute, rate
from specswarm.spec import GoalSpec, spec_from_mapping

from .test_model_tasks import GOAL, ROOT, Node, make_spec

CASSETTE = Path(__file__).parent / "cassettes" / "real_japan.jsonl"


def spec() -> GoalSpec:
    s = make_spec()
    s["model"]["backend"] = "replay"
    s["model"]["cassette"] = str(CASSETTE)
    return spec_from_mapping(s)


def test_real_decompose_rate_execute_replayed() -> None:
    counts = TaskCounts()
    model = ReplayModel(CASSETTE)
    assert model.name == "replay:qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
    kids = decompose(model, spec(), ROOT, [], [], "geography", [], counts=counts)
    # The model's days add up to 16, not 14: the split is fitted in code (proportions kept,
    # "N days" in the titles rewritten), without asking the model again.
    assert [(c.title, c.facts) for c in kids] == [
        ("Travel to Tokyo for 5 days", {"days": 5}),
        ("Visit Kyoto for 5 days", {"days": 5}),
        ("Explore local cuisine in Kyoto", {"days": 2}),
        ("Relax at a local hotel or resort in Tokyo", {"days": 2}),
    ]
    assert counts.retries == 0 and counts.fitted == 1
    checks = {c.name: c for c in check_split(spec(), ROOT, kids, 0)}
    assert checks["constraints"].passed
    # The cassette's rating and execution were recorded on the model's own (unfitted) split.
    original = [
        Child("Travel to Tokyo for 7 days", kids[0].detail.replace("5 days", "7 days"), facts={"days": 7}),
        Child("Visit Kyoto for 6 days", kids[1].detail.replace("5 days", "6 days"), facts={"days": 6}),
        Child(kids[2].title, kids[2].detail, facts={"days": 2}),
        Child(kids[3].title, kids[3].detail, facts={"days": 1}),
    ]
    bad = {c.name: c for c in check_split(spec(), ROOT, original, 0)}
    assert bad["constraints"].note == "days add up to 16, expected 14"
    model_score = rate(model, spec(), ROOT, original, counts=counts)
    assert model_score is not None and model_score >= 70  # the model likes it anyway
    score, approve = combine(list(bad.values()), model_score, 0.2)
    assert approve is False
    kids = original
    out = execute(model, spec(), Node("x", kids[0].title, kids[0].detail, depth=1), [ROOT], counts=counts)
    assert out.startswith("- ") and "Tokyo" in out
    assert counts.to_json() == {
        "retries": 0,
        "loops_cut": 0,
        "fitted": 1,
        "redone": 0,
        "revised": 0,
        "sharpened": 0,
        "astray": 0,
        "off_task": 0,
        "mended": 0,
        "completed": 0,
        "rewritten": 0,
        "repaired": 0,
        "varied": 0,
        "varied_requests": 0,
        "failures": {},
        "bad_outputs": {},
        "structured": {},
        "free": {"decompose": 1, "score": 1, "execute": 1},  # gpt4all's answers are free text
    }
    assert GOAL in model._records[next(iter(model._records))]["prompt"]
