"""A leaf's result keeps to its own task: an item that does a sibling leaf's task (it names a
word only that sibling's title has, and none only its own title has) is left out, and counted."""

from __future__ import annotations

from specswarm.critics.wording import keep_on_task, off_task
from specswarm.model import TaskCounts, execute
from specswarm.model.replay import ScriptedModel
from tests.test_model_tasks import ROOT, Node, spec_of

SIBLINGS = ["Describe how to delete tasks", "Describe how to view tasks with specific tags"]
LIST_ALL = (
    "- List every task: `todo list` prints one line per task, as `3 Buy milk 2026-12-01`.\n"
    "- Delete a task: `todo delete <id>` removes it.\n"
    "- View tasks with a tag: `todo tag work` shows them.\n"
    "- Show completed ones too: `todo list --all`, done ones marked with an x after the 3."
)


def test_an_item_doing_a_siblings_task_is_off_task() -> None:
    title = "Describe how to list all tasks, including completed ones"
    # "task" and "describe" are in every title: they tell nothing apart
    assert off_task(LIST_ALL, title, SIBLINGS) == [
        "- Delete a task: `todo delete <id>` removes it.",
        "- View tasks with a tag: `todo tag work` shows them.",
    ]
    # naming its own task's word too ("list"), an item is kept: it may join the two
    both = "- Delete from the list: `todo delete <id>`"
    assert off_task(both, title, SIBLINGS) == []
    kept, dropped = keep_on_task(LIST_ALL, title, SIBLINGS)
    assert dropped == 2
    assert kept.splitlines() == [LIST_ALL.splitlines()[0], LIST_ALL.splitlines()[3]]


def test_an_item_naming_its_own_task_too_is_kept_and_context_words_do_not_count() -> None:
    title = "Visit Fushimi Inari"
    siblings = ["Explore Gion at night"]
    text = "- Fushimi Inari at 7:00, then walk to Gion for lunch\n- Dinner in Gion at 19:00"
    assert off_task(text, title, siblings) == ["- Dinner in Gion at 19:00"]
    # a word the leaf's ancestors or the goal hold ("Kyoto") belongs to every leaf
    text = "- Take the JR Nara line from Kyoto station\n- Gion in the evening"
    assert off_task(text, title, ["Explore Gion and Kyoto"], context=["Two days in Kyoto"]) == [
        "- Gion in the evening"
    ]


def test_continuation_lines_go_with_their_item_and_a_result_all_off_task_is_kept_whole() -> None:
    title = "Book the venue"
    text = "- Venue: Kulturbrauerei, 200 seats\n- Catering: lunch boxes\n  - 12 EUR each, from Dean & David"
    kept, dropped = keep_on_task(text, title, ["Order the catering"])
    assert (kept, dropped) == ("- Venue: Kulturbrauerei, 200 seats", 1)
    # nothing of its own task left: kept as it was (a repeat of a sibling is judged elsewhere)
    whole = "- Catering: lunch boxes from Dean & David"
    assert keep_on_task(whole, title, ["Order the catering"]) == (whole, 0)
    assert keep_on_task(whole, title, []) == (whole, 0)


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
