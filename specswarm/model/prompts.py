"""Render a role's prompt template into a (system, user) pair.

Templates are Jinja2, rendered in a sandbox with ``StrictUndefined`` (a typo
in a template is an error, not an empty string). Model output and user text
only ever enter as *data* in the context, never as template source.

A template splits the two chat turns with blocks::

    {% block system %}You split goals into parts ...{% endblock %}
    {% block prompt %}Goal to split: {{ node.title }} ...{% endblock %}

A template without blocks is all user prompt (empty system turn). A template
with a ``system`` block must also have a ``prompt`` block. Blocks were chosen
over a ``---`` separator line because goal or context text may itself contain
such a line.

Context every template receives (built by ``_Ask.context`` in
:mod:`specswarm.model.tasks`): ``goal``,
``context``, ``node`` (id, title, detail, depth, facts), ``ancestors`` (root first),
``siblings``, ``strategy``, ``critiques`` (list of str), ``constraints`` (the
ones that apply to this node), ``limits`` (min_children, max_children, target: the count to ask for),
``is_last_level``, ``fact_fields`` (sum-constraint fields children must state);
``proposal`` (children) for score and refine; ``leaf`` for execute.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import jinja2
from jinja2.sandbox import SandboxedEnvironment

from specswarm.errors import ModelError

_ENV = SandboxedEnvironment(
    undefined=jinja2.StrictUndefined,
    autoescape=False,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=False,
)


@lru_cache(maxsize=64)
def _compile(template_text: str) -> jinja2.Template:
    try:
        return _ENV.from_string(template_text)
    except jinja2.TemplateSyntaxError as exc:
        raise ModelError(f"prompt template line {exc.lineno}: {exc.message}") from exc


def _tidy(text: str) -> str:
    lines = [ln.rstrip() for ln in text.strip().splitlines()]
    out: list[str] = []
    for ln in lines:  # at most one blank line in a row
        if ln or (out and out[-1]):
            out.append(ln)
    return "\n".join(out)


def render_prompt(template_text: str, **ctx: Any) -> tuple[str, str]:
    """Render ``template_text`` with ``ctx``; return ``(system, prompt)``."""
    tmpl = _compile(template_text)
    try:
        if "system" not in tmpl.blocks:
            return "", _tidy(tmpl.render(**ctx))
        if "prompt" not in tmpl.blocks:
            raise ModelError("a prompt template with a system block needs a prompt block too")
        context = tmpl.new_context(dict(ctx))
        system = "".join(tmpl.blocks["system"](context))
        prompt = "".join(tmpl.blocks["prompt"](context))
    except jinja2.UndefinedError as exc:
        raise ModelError(f"prompt template: {exc.message}") from exc
    except jinja2.TemplateError as exc:  # includes SecurityError from the sandbox
        raise ModelError(f"prompt template: {exc}") from exc
    return _tidy(system), _tidy(prompt)
