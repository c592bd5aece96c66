"""Prompt templates: the one renderer, and the checks a spec's templates get when it loads.

The catalogue of what each task's template is given (:data:`TASK_VARIABLES`) and its sample
values (:func:`sample_contexts`) live in :mod:`specswarm.spec.prompt_catalogue`. The model
layer builds the values (``specswarm.model.tasks``) and passes exactly these names
(``specswarm.model.prompts.render_task_prompt`` selects them); ``tests/test_prompting.py``
proves that every task's real context has these names and the shapes of the samples, so the
two cannot drift apart.

:func:`render` is the one renderer (sandboxed, ``StrictUndefined``): the loader renders
every template on the samples with it (:func:`template_problem`), the model layer on real
data. Either way a failure is a :class:`~specswarm.errors.PromptTemplateError` that names the
template's line, e.g. ``'travellers' is undefined in prompts.decompose:3 (available: goal, ...)``.
"""

from __future__ import annotations

import difflib
import traceback
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

import jinja2
from jinja2 import meta, nodes
from jinja2.sandbox import SandboxedEnvironment

from specswarm.errors import PromptTemplateError
from specswarm.spec.prompt_catalogue import TASK_VARIABLES, sample_contexts
from specswarm.spec.values import TASKS

BLOCKS = ("system", "prompt")
"""The blocks a template may split its two chat turns with (see ``specswarm.model.prompts``)."""
_NEEDS_PROMPT = "a template with a 'system' block needs a 'prompt' block too"

# --------------------------------------------------------------------------- rendering

ENV = SandboxedEnvironment(
    undefined=jinja2.StrictUndefined,
    autoescape=False,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=False,
)
"""The prompt templates' environment; model output and user text enter only as context data."""


@lru_cache(maxsize=64)
def _compile(text: str) -> jinja2.Template:
    return ENV.from_string(text)


def render(text: str, context: Mapping[str, Any], *, label: str = "prompt template") -> tuple[str, str]:
    """Render template ``text`` with ``context``; return ``(system, prompt)`` as rendered (the
    whole template is the prompt when it has no ``system`` block). Raise PromptTemplateError,
    naming the template as ``label`` and the line it failed on."""
    try:
        tmpl = _compile(text)
    except jinja2.TemplateSyntaxError as exc:
        raise _syntax_error(exc, label) from None
    if "system" in tmpl.blocks and "prompt" not in tmpl.blocks:
        message = f"missing block 'prompt' in {label} ({_NEEDS_PROMPT})"
        raise PromptTemplateError(message, label=label)
    try:
        if "system" not in tmpl.blocks:
            return "", tmpl.render(dict(context))
        ctx = tmpl.new_context(dict(context))
        return _block(tmpl, "system", ctx), _block(tmpl, "prompt", ctx)
    except Exception as exc:  # whatever a template can raise: undefined, sandbox, a filter's TypeError
        raise _render_error(exc, text, context, label) from None


def _block(tmpl: jinja2.Template, name: str, ctx: Any) -> str:
    try:
        return "".join(tmpl.blocks[name](ctx))
    except Exception:
        ENV.handle_exception()  # re-raises with the traceback at the template's lines (as render does)


@lru_cache(maxsize=256)
def template_problem(text: str, task: str, label: str) -> str | None:
    """What is wrong with ``task``'s template ``text`` (named ``label`` in the message), or
    None: it parses, uses only known blocks, filters, tests and ``task``'s variables (in every
    branch), and renders on both :func:`sample_contexts`. The first problem only."""
    if task not in TASK_VARIABLES:
        return f"no task {task!r} has a prompt template (expected one of: {', '.join(TASKS)})"
    try:
        tree = ENV.parse(text)
    except jinja2.TemplateSyntaxError as exc:
        return str(_syntax_error(exc, label))
    static = _static_problem(tree, task, label)
    if static:
        return static
    rich, sparse = sample_contexts(task)
    for context in (rich, sparse):
        try:
            render(text, context, label=label)
        except PromptTemplateError as exc:
            if context is rich:
                return str(exc)
            minimal = ", ".join(k for k in sparse if sparse[k] != rich[k])
            return f"{exc} (on the sparse sample, where {minimal} are empty or minimal)"
    return None


# --------------------------------------------------------------------------- what went wrong


def _at(label: str, line: int | None) -> str:
    return f"{label}:{line}" if line else label


def _syntax_error(exc: jinja2.TemplateSyntaxError, label: str) -> PromptTemplateError:
    return PromptTemplateError(
        f"Jinja2 syntax error in {_at(label, exc.lineno)}: {exc.message}", label=label, line=exc.lineno
    )


def _template_line(exc: BaseException) -> int | None:
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == "<template>"]
    return frames[-1].lineno if frames else None


def _render_error(exc: Exception, text: str, context: Mapping[str, Any], label: str) -> PromptTemplateError:
    line = _template_line(exc)
    where = _at(label, line)
    reason = exc.message if isinstance(exc, jinja2.TemplateError) and exc.message else str(exc)
    if isinstance(exc, jinja2.UndefinedError) and reason.endswith(" is undefined"):
        message = f"{reason} in {where} (available: {', '.join(context) or 'nothing'})"
    elif isinstance(exc, jinja2.UndefinedError) and " has no attribute " in reason:
        attr = reason.rsplit(" has no attribute ", 1)[1].strip("'\"")
        owner = _owner_of(attr, text, context, line)
        if owner is None:
            message = f"{reason} in {where}"
        else:
            name, keys = owner
            message = (
                f"{name!r} has no attribute {attr!r} in {where} ({name} has: {', '.join(keys) or 'nothing'})"
            )
    else:
        message = f"cannot render {where}: {reason.rstrip('.')}"
    return PromptTemplateError(message, label=label, line=line)


def _owner_of(
    attr: str, text: str, context: Mapping[str, Any], line: int | None
) -> tuple[str, list[str]] | None:
    """Which ``a.b`` lacks ``attr`` and the keys it has, when the template says (on ``line``):
    a chain of context names and attributes, or a loop variable over one."""
    tree = ENV.parse(text)  # it rendered as far as the failure, so it parses
    loops = {}
    for loop in tree.find_all(nodes.For):
        items = _value_of(loop.iter, context, {})
        if isinstance(loop.target, nodes.Name) and isinstance(items, list) and items:
            loops[loop.target.name] = items[0]
    for get in tree.find_all(nodes.Getattr):
        if get.attr != attr or (line is not None and get.lineno != line):
            continue
        owner = _value_of(get.node, context, loops)
        if isinstance(owner, Mapping) and attr not in owner:
            return _dotted(get.node), [str(k) for k in owner]
    return None


def _value_of(expr: nodes.Node, context: Mapping[str, Any], loops: Mapping[str, Any]) -> Any:
    """The sample value of ``a.b.c`` (names and attributes only), or None."""
    if isinstance(expr, nodes.Name):
        return context.get(expr.name, loops.get(expr.name))
    if isinstance(expr, nodes.Getattr):
        owner = _value_of(expr.node, context, loops)
        return owner.get(expr.attr) if isinstance(owner, Mapping) else None
    return None


def _dotted(expr: nodes.Node) -> str:
    if isinstance(expr, nodes.Getattr):
        return f"{_dotted(expr.node)}.{expr.attr}"
    return expr.name if isinstance(expr, nodes.Name) else "the value"


def _static_problem(tree: nodes.Template, task: str, label: str) -> str | None:
    """Blocks, filters, tests, then variable names, checked in every branch (rendering a
    sample reaches only the branches it takes). The first problem by line."""
    found = _unknown_parts(tree, label) or _unknown_names(tree, task, label)
    return min(found)[1] if found else None


def _unknown_parts(tree: nodes.Template, label: str) -> list[tuple[int, str]]:
    found = [
        (
            block.lineno,
            f"unknown block {block.name!r} in {_at(label, block.lineno)} "
            f"(expected {' and '.join(BLOCKS)}{_did_you_mean(block.name, BLOCKS)})",
        )
        for block in tree.find_all(nodes.Block)
        if block.name not in BLOCKS
    ]
    named = {block.name: block.lineno for block in tree.find_all(nodes.Block)}
    if "system" in named and "prompt" not in named:
        line = named["system"]
        found.append((line, f"missing block 'prompt' in {_at(label, line)} ({_NEEDS_PROMPT})"))
    for kind, noun, known, examples in (
        (nodes.Filter, "filter", ENV.filters, "join, default, upper, title, length"),
        (nodes.Test, "test", ENV.tests, "defined, none, number, string"),
    ):
        found += [
            (
                use.lineno,
                f"no {noun} named {use.name!r} in {_at(label, use.lineno)} "
                f"(expected a Jinja2 {noun} such as {examples}{_did_you_mean(use.name, list(known))})",
            )
            for use in tree.find_all(kind)
            if use.name not in known
        ]
    return found


def _unknown_names(tree: nodes.Template, task: str, label: str) -> list[tuple[int, str]]:
    """Names the template reads that ``task`` does not give (a name tested with ``is defined``
    may be absent: the template says what to do then)."""
    guarded = {
        test.node.name
        for test in tree.find_all(nodes.Test)
        if test.name in ("defined", "undefined") and isinstance(test.node, nodes.Name)
    }
    given = TASK_VARIABLES[task]
    try:
        read = meta.find_undeclared_variables(tree)  # compiles the tree
    except jinja2.TemplateSyntaxError as exc:
        return [(exc.lineno, str(_syntax_error(exc, label)))]
    found = []
    for name in read - set(given) - set(ENV.globals) - guarded:
        line = min((n.lineno for n in tree.find_all(nodes.Name) if n.name == name), default=0)
        hint = f"{_elsewhere(name, task)}available: {', '.join(given)}"
        found.append((line, f"{name!r} is undefined in {_at(label, line)} ({hint})"))
    return found


def _elsewhere(name: str, task: str) -> str:
    others = [t for t, names in TASK_VARIABLES.items() if name in names and t != task]
    return f"a variable of {' and '.join(others)}, not of {task}; " if others else ""


def _did_you_mean(word: str, choices: Sequence[str]) -> str:
    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.75)
    return f"; did you mean {close[0]!r}?" if close else ""
