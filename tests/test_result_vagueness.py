"""A leaf result that is general advice (no place, name, number or time on most lines) is asked
again once for names, numbers and times; the more concrete of the two answers is kept (which
lines are concrete: tests/critics/test_wording.py)."""

from __future__ import annotations

from specswarm.critics.wording import topic_hits
from specswarm.model import TaskCounts, execute
from specswarm.model.replay import ScriptedModel
from tests.critics.kit import CONCRETE, GENERAL
from tests.test_model_tasks import ROOT, Node, spec_of


def test_a_general_result_is_asked_again_for_names_and_numbers_and_the_concrete_one_kept() -> None:
    queue = [GENERAL, CONCRETE]
    model = ScriptedModel(lambda req: queue.pop(0))
    counts = TaskCounts()
    leaf = Node("p.1", "Food for the attendees", depth=2)
    out = execute(model, spec_of(), leaf, [ROOT], counts=counts)
    assert out == CONCRETE
    assert (counts.redone, counts.sharpened) == (1, 1)
    first, second = model.calls
    assert "general advice" not in first.prompt
    assert "general advice" in second.prompt and "names, numbers and times" in second.prompt


def test_the_first_answer_is_kept_when_the_second_is_no_more_concrete() -> None:
    queue = [GENERAL, "- Be ready.\n- Plan it well."]
    model = ScriptedModel(lambda req: queue.pop(0))
    counts = TaskCounts()
    out = execute(model, spec_of(), Node("p.1", "Food", depth=2), [ROOT], counts=counts)
    assert out == GENERAL
    assert counts.sharpened == 1 and len(model.calls) == 2


def test_a_concrete_result_is_not_asked_again() -> None:
    model = ScriptedModel(lambda req: CONCRETE)
    counts = TaskCounts()
    assert execute(model, spec_of(), Node("p.1", "Food", depth=2), [ROOT], counts=counts) == CONCRETE
    assert (counts.redone, counts.sharpened, len(model.calls)) == (0, 0, 1)


def test_a_concrete_answer_that_breaks_the_leafs_facts_does_not_replace_a_general_one() -> None:
    # the example run: "Visit Mount Fuji (3 days)" written for a one-day leaf, once asked for names
    queue = [GENERAL, "- Visit Mount Fuji (3 days)\n- Stay 2 nights at a Kawaguchiko ryokan"]
    model = ScriptedModel(lambda req: queue.pop(0))
    counts = TaskCounts()
    leaf = Node("p.1", "Visit Mount Fuji", depth=2, facts={"days": 1})
    assert execute(model, spec_of(), leaf, [ROOT], counts=counts) == GENERAL
    assert counts.sharpened == 1


def test_a_concrete_answer_off_its_task_does_not_replace_a_general_one() -> None:
    # a todo-cli run: asked for names, the model wrote "Place: ..., Company: ..." for a tags leaf
    general = "- Tags categorize tasks by topic.\n- Each task may carry several tags.\n- Keep tags short."
    off = '- Place: a text editor in Berlin\n- Company: "TodoList Inc."\n- Time Frame: 2 weeks'
    queue = [general, off]
    model = ScriptedModel(lambda req: queue.pop(0))
    leaf = Node("p.1", "Define how tags can be used to categorize tasks", depth=2)
    assert execute(model, spec_of(), leaf, [ROOT], counts=TaskCounts()) == general
    assert topic_hits(off, leaf.title) == 0 < topic_hits(general, leaf.title)
