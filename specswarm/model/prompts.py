"""Render a role's prompt template into a (system, user) pair.

Templates are Jinja2, rendered in a sandbox with ``StrictUndefined`` (a typo
in a template is an error, not an empty string) by the one renderer,
:func:`specswarm.spec.prompting.render` -- the same one ``load_spec`` checks every
template with on sample data. Model output and user text only ever enter as *data*
in the context, never as template source.

A template splits the two chat turns with blocks::

    {% block system %}You split goals into parts ...{% endblock %}
    {% block prompt %}Goal to split: {{ node.title }} ...{% endblock %}

A template without blocks is all user prompt (empty system turn). A template
with a ``system`` block must also have a ``prompt`` block. Blocks were chosen
over a ``---`` separator line because goal or context text may itself contain
such a line.

What each task's template sees is catalogued in
:data:`specswarm.spec.prompt_catalogue.TASK_VARIABLES`; :mod:`specswarm.model.asking` builds
the values (``Ask.context``) and :func:`render_task_prompt` passes exactly that
task's names. A template that fails on real data raises
:class:`~specswarm.errors.PromptTemplateError` (exit 2; not a ModelError: the spec is
wrong, not the model).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from specswarm.spec.prompt_catalogue import TASK_VARIABLES
from specswarm.spec.prompting import render


def _tidy(text: str) -> str:
    lines = [ln.rstrip() for ln in text.strip().splitlines()]
    out: list[str] = []
    for ln in lines:  # at most one blank line in a row
        if ln or (out and out[-1]):
            out.append(ln)
    return "\n".join(out)


def render_prompt(template_text: str, **ctx: Any) -> tuple[str, str]:
    """Render ``template_text`` with ``ctx``; return ``(system, prompt)``.

    Raises PromptTemplateError (naming the template ``prompt template`` and its line)."""
    system, prompt = render(template_text, ctx)
    return _tidy(system), _tidy(prompt)


def render_task_prompt(task: str, template_text: str, context: Mapping[str, Any]) -> tuple[str, str]:
    """Render ``task``'s template with the variables :data:`TASK_VARIABLES` gives that task,
    taken from ``context`` (which must hold them all); return ``(system, prompt)``.

    Raises PromptTemplateError naming ``prompts.<task>`` and the template's line."""
    given = {name: context[name] for name in TASK_VARIABLES[task]}
    system, prompt = render(template_text, given, label=f"prompts.{task}")
    return _tidy(system), _tidy(prompt)


_QUOTED = re.compile(r'(?:#\d+\s*)?"[^"]*"(?:\s*\([^)]*\))?')


def plain_critiques(lines: Sequence[str], node_title: str) -> list[str]:
    """The reviewers' critique lines ("repeats: #1 \"Tokyo\" repeats the root stage ...") as
    what to do next, naming no part: given titles, the small model writes them back as its
    "improved" split (measured: a todo-cli revision was its rejected split again, and a split
    given the titles beside it was those titles). What each check asks is said in plain words;
    numbers and the terms still to cover stay."""
    out: list[str] = []
    for line in lines:
        check, _, note = line.partition(":")
        check, note = check.strip(), note.strip()
        if check == "repeats" and "already proposed" in note:
            said = "this split, or most of it, was proposed before: split it another way"
        elif check == "repeats":
            said = (
                f'some parts planned again what is planned elsewhere in the tree, or restated "{node_title}" '
                f'itself: every part must be one piece of "{node_title}" only'
            )
        elif check == "overlap":
            said = "two or more parts covered the same thing: give every part a subject of its own"
        elif check in ("vagueness", "concreteness"):
            said = "some parts named nothing concrete: name the thing each part is about"
        elif check == "coverage" and "not covered:" in note:
            said = "together the parts must also cover: " + note.split("not covered:", 1)[1].strip()
        else:
            said = " ".join(_QUOTED.sub("a part", note).split()) or check
        if said not in out:
            out.append(said)
    return out
