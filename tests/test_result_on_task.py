"""A leaf's result keeps to its own task: an item that does a sibling leaf's task (it names a
word only that sibling's title has, and none only its own title has) is left out, and counted; a
result doing only its siblings' tasks is written again (the items the critics find off task:
tests/critics/test_wording.py)."""

from __future__ import annotations

from specswarm.model import TaskCounts, execute
from specswarm.model.replay import ScriptedModel
from tests.critics.kit import LIST_ALL, SIBLINGS
from tests.test_model_tasks import ROOT, Node, spec_of


def test_execute_leaves_out_a_siblings_task_and_counts_it() -> None:
    model = ScriptedModel(lambda req: LIST_ALL)
    counts = TaskCounts()
    leaf = Node("p.0", "Describe how to list all tasks, including completed ones", depth=2)
    siblings = [Node(f"p.{i + 1}", t, depth=2) for i, t in enumerate(SIBLINGS)]
    out = execute(model, spec_of(), leaf, [ROOT], siblings=siblings, counts=counts)
    assert "todo delete" not in out and "todo tag" not in out and "todo list --all" in out
    assert counts.off_task == 2 and counts.to_json()["off_task"] == 2 and counts.redone == 0


def test_a_result_doing_only_its_siblings_tasks_is_written_again_naming_them() -> None:
    # seen with the embedded model: "Task completion" answered with creation, editing and
    # deletion, its siblings' tasks, while those siblings were being written in parallel
    astray = "- Creation: `todo add`\n- Deletion: `todo delete <id>`"
    own = "- Completion: `todo done <id>` marks it done, with the time 2026-12-01 10:00"
    model = ScriptedModel(lambda req: own if "Do not write the following again" in req.prompt else astray)
    counts = TaskCounts()
    leaf = Node("p.0", "Task completion", depth=2)
    siblings = [Node("p.1", "Task creation", depth=2), Node("p.2", "Task deletion", depth=2)]
    out = execute(model, spec_of(), leaf, [ROOT], siblings=siblings, counts=counts)
    assert out == own
    assert (counts.astray, counts.redone, len(model.calls)) == (1, 1, 2)
    assert "- Deletion: `todo delete <id>`" in model.calls[1].prompt
    # a result with an item of its own is kept, its siblings' items left out, not written again
    mixed = ScriptedModel(lambda req: f"{astray}\n{own}")
    counts = TaskCounts()
    assert execute(mixed, spec_of(), leaf, [ROOT], siblings=siblings, counts=counts) == own
    assert (counts.astray, counts.redone, counts.off_task, len(mixed.calls)) == (0, 0, 2, 1)
