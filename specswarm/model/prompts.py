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
:data:`specswarm.spec.prompting.TASK_VARIABLES`; :mod:`specswarm.model.tasks` builds
the values (``_Ask.context``) and :func:`render_task_prompt` passes exactly that
task's names. A template that fails on real data raises
:class:`~specswarm.errors.PromptTemplateError` (exit 2; not a ModelError: the spec is
wrong, not the model).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from specswarm.spec.prompting import TASK_VARIABLES, render


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
