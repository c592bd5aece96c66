"""The example the README links to (``docs/examples/``): a real-model run of goals/japan.yaml,
its signed event log and the Markdown it renders to. It must not go stale silently:

- the Markdown is exactly what the log renders to today (a renderer change regenerates it);
- the log was made with today's default prompt templates (a prompt change regenerates it);
- what today's critics say of its proposals (``bench/rescore.py``) is what
  docs/examples/README.md shows (a critics change regenerates that section).

Regenerate with the commands in docs/examples/README.md."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from specswarm.plan.fold import fold
from specswarm.protocol.bodies import RunBody
from specswarm.protocol.events import Event, read_event_log
from specswarm.render import render_plan

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "docs" / "examples"
LOG = EXAMPLES / "japan-events.jsonl"
MARKDOWN = EXAMPLES / "japan.md"

sys.path.insert(0, str(ROOT / "bench"))

import rescore as rs  # noqa: E402


def _events() -> list[Event]:
    log = read_event_log(LOG)
    assert log.rejected == [], "the example log holds lines that do not verify"
    return log.events


def test_the_example_markdown_is_what_its_log_renders_to() -> None:
    plan = fold(_events())
    assert plan.complete, "the example run did not complete"
    assert render_plan(plan, "markdown", None) == MARKDOWN.read_text(encoding="utf-8")


AWAITING_A_NEW_RUN: dict[str, str] = {}
"""Templates changed since the example was made, until it is made again with the real model
(the test fails once the example holds today's template: then drop its entry)."""


def test_the_example_was_made_with_todays_prompt_templates() -> None:
    run = next(e for e in _events() if e.kind == "run")
    assert isinstance(run.body, RunBody)
    prompts = run.body.spec.prompts
    for task in ("decompose", "refine", "score", "execute", "summarize"):
        today = (ROOT / "templates" / "prompts" / f"{task}.j2").read_text(encoding="utf-8")
        if task in AWAITING_A_NEW_RUN:
            assert getattr(prompts, task) != today, (
                f"the example holds today's {task}.j2: drop it from the list"
            )
            continue
        assert getattr(prompts, task) == today, f"templates/prompts/{task}.j2 changed: regenerate the example"


def test_the_examples_page_shows_what_todays_critics_say_of_it() -> None:
    page = (EXAMPLES / "README.md").read_text(encoding="utf-8")
    shown = re.search(r"<!-- rescore:begin -->\n```\n(.*?)```\n<!-- rescore:end -->", page, re.S)
    assert shown, "docs/examples/README.md lost its rescore markers"
    today = rs.summary(rs.rescore(_events()))
    assert shown.group(1).splitlines() == today, "the critics changed: regenerate the rescore section"
