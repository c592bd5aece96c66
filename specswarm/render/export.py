"""Render a folded :class:`~specswarm.plan.fold.Plan` as Markdown, JSON or a software spec.

* ``json`` is ``Plan.to_json()`` with sorted keys, plus ``schedule`` when the plan has one
  (:mod:`specswarm.plan.schedule`), checked against ``schemas/plan.schema.json`` (a failure
  there is a bug in specswarm, not in the run). Neither digest covers the schedule: it is
  computed from the content they cover.
* ``markdown`` and ``spec`` are Jinja2 templates (``templates/plan.md.j2`` and
  ``templates/spec.md.j2``, or a user template named by the spec's ``output.template``).

Templates run in a :class:`~jinja2.sandbox.SandboxedEnvironment` with
:class:`~jinja2.StrictUndefined`. Everything a peer or a model wrote (titles,
details, critiques, outputs) reaches a template only as *data*: it is never
compiled, so ``{{ 7*7 }}`` in a node title is printed as is. The Markdown filters
below also keep such text from breaking the document: headings, fences, setext
underlines and raw HTML tags at the start of a line are escaped, and Mermaid
labels are reduced to a safe alphabet.

The context a template sees (documented for user templates):

``plan``
    The JSON export: ``Plan.to_json()`` and ``schedule`` when there is one (see the schema).
``schedule``
    The schedules (one per field a ``sum`` constraint adds up; ``[]`` without one), as the
    export's ``schedule``: ``field``, ``total``, ``slots`` (the nodes below the root in order:
    ``number``, ``depth``, ``title``, ``leaf``, ``amount``, ``start``, ``end``, ``shared``) and
    ``notes`` (``kind`` sum or missing, ``number``, ``title``; ``got`` / ``expected`` or ``parts``).
``nodes``
    The tree depth-first, one dict per node: ``node`` (the JSON node), ``number``
    (outline number, ``""`` for the root), ``level`` (Markdown heading level),
    ``key`` (a Mermaid-safe id), ``parent_key``, ``requirement`` / ``component`` /
    ``task`` (``R1``, ``C2``, ``T3`` labels for the spec; ``None`` where they do not apply),
    ``claimed_by`` (author of a leaf's winning claim, else ``None``).
``root``, ``requirements``, ``components``, ``tasks``
    Subsets of ``nodes``.
``quorum``
    The number of approvals a split needs (``None`` if the plan has no run).
``roles``
    Participant counts by role.
``t``
    The headings in the plan's language (``overview``, ``schedule``, ``provenance``, ``status``,
    ``swarm``, ``part``): the spec's ``language``, else the goal's (English when not known).
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

import jinja2
from jinja2.exceptions import SecurityError
from jinja2.sandbox import SandboxedEnvironment
from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

from specswarm.errors import TemplateError
from specswarm.plan.schedule import schedules_json
from specswarm.plan.views import Plan
from specswarm.render.content import content_context
from specswarm.render.content import content_only as content_only_data
from specswarm.render.filters import FILTERS, fenced_lines
from specswarm.resources import load_schema, template_dir
from specswarm.spec.language import plan_language

FORMATS = ("markdown", "json", "spec")
BUILTIN_TEMPLATES = {"markdown": "plan.md.j2", "spec": "spec.md.j2"}


class PlanSchemaError(RuntimeError):
    """Our own JSON export does not match ``schemas/plan.schema.json``: a bug in specswarm."""


def render_plan(
    plan: Plan, fmt: str, template: str | Path | None = None, *, content_only: bool = False
) -> str:
    """Render ``plan`` as ``fmt`` (``markdown``, ``json`` or ``spec``); the text ends with a newline.

    ``template``: a Jinja2 template file used instead of the built-in one (markdown and
    spec only; ignored for json, whose shape is fixed by the schema). ``content_only``: leave
    out everything that names the run (:mod:`specswarm.render.content`), so two runs that
    wrote the same plan render byte for byte the same.
    """
    if fmt not in FORMATS:
        raise ValueError(f"fmt must be one of {', '.join(FORMATS)}; got {fmt!r}")
    data = export_data(plan)
    if fmt == "json":
        if content_only:
            check_plan_json(data)
            return json.dumps(content_only_data(data), sort_keys=True, indent=2, ensure_ascii=False) + "\n"
        return render_json(data)
    context = build_context(plan, data)
    context["content_only"] = False
    if content_only:
        context = content_context(context, content_only_data(data))
    if template is None:
        tmpl = _builtin_env().get_template(BUILTIN_TEMPLATES[fmt])
        return _finish(tmpl.render(context))
    return _render_user_template(Path(template), context)


def export_data(plan: Plan) -> dict[str, Any]:
    """The JSON export's data: ``Plan.to_json()``, and the schedule when the plan has one (an
    addition of the export: ``Plan.to_json()`` and the digests stay as they are)."""
    data = plan.to_json()
    schedule = schedules_json(plan)
    if schedule:
        data["schedule"] = schedule
    return data


def render_json(data: Mapping[str, Any]) -> str:
    """The JSON export: validated, keys sorted, two-space indent."""
    check_plan_json(data)
    return json.dumps(data, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def check_plan_json(data: Mapping[str, Any]) -> None:
    """Raise :class:`PlanSchemaError` listing every place ``data`` breaks plan.schema.json."""
    # best_match descends into oneOf branches, to the error that names the deepest field.
    errors = sorted(
        (best_match([e]) for e in _plan_validator().iter_errors(data)),
        key=lambda e: list(map(str, e.absolute_path)),
    )
    if errors:
        lines = [
            f"  {'/'.join(map(str, e.absolute_path)) or '(plan)'}: {e.message[:200]}" for e in errors[:10]
        ]
        raise PlanSchemaError(
            "the plan export does not match schemas/plan.schema.json "
            "(a bug in specswarm, please report it):\n" + "\n".join(lines)
        )


@cache
def _plan_validator() -> Draft202012Validator:
    schema = load_schema("plan.schema.json")
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


# -- the template context ------------------------------------------------------------------


def _headings(plan: Plan) -> dict[str, str]:
    """The rendered plan's headings, in the plan's language (:mod:`specswarm.spec.language`)."""
    spec = plan.spec
    if spec is None:
        return plan_language("").headings
    return plan_language(spec.goal, spec.context, spec.language).headings


def build_context(plan: Plan, data: Mapping[str, Any]) -> dict[str, Any]:
    """The variables every template sees (see the module docstring)."""
    nodes: list[dict[str, Any]] = []
    counters: Counter[str] = Counter()

    def visit(node: Mapping[str, Any], number: str, parent: dict[str, Any] | None) -> None:
        depth = node["depth"]
        entry: dict[str, Any] = {
            "node": node,
            "number": number,
            "level": min(depth + 1, 6),
            "key": f"n{len(nodes)}",
            "parent_key": parent["key"] if parent else None,
            "requirement": None,
            "component": None,
            "task": None,
            "claimed_by": plan.nodes[node["id"]].claim_holder if node["id"] in plan.nodes else None,
        }
        if depth == 1:
            counters["R"] += 1
            entry["requirement"] = f"R{counters['R']}"
        elif parent is not None:
            entry["requirement"] = parent["requirement"]
        if depth > 0 and not node["leaf"]:
            counters["C"] += 1
            entry["component"] = f"C{counters['C']}"
        elif parent is not None and parent["component"]:
            entry["component"] = parent["component"]
        if node["leaf"]:
            counters["T"] += 1
            entry["task"] = f"T{counters['T']}"
        nodes.append(entry)
        for i, child in enumerate(node["children"], 1):
            visit(child, f"{number}.{i}" if number else str(i), entry)

    if data["root"] is not None:
        visit(data["root"], "", None)
    quorum = plan.spec.quorum_size() if plan.spec else None
    return {
        "plan": data,
        "nodes": nodes,
        "root": nodes[0] if nodes else None,
        "requirements": [n for n in nodes if n["node"]["depth"] == 1],
        "components": [n for n in nodes if n["component"] and not n["node"]["leaf"]],
        "tasks": [n for n in nodes if n["task"]],
        "quorum": quorum,
        "t": _headings(plan),
        "schedule": data.get("schedule", []),
        "roles": dict(Counter(p["role"] for p in data["participants"])),
    }


def _environment(loader: jinja2.BaseLoader) -> SandboxedEnvironment:
    env = SandboxedEnvironment(
        loader=loader,
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(FILTERS)
    return env


@cache
def _builtin_env() -> SandboxedEnvironment:
    return _environment(jinja2.FileSystemLoader(str(template_dir())))


def _render_user_template(path: Path, context: Mapping[str, Any]) -> str:
    if not path.is_file():
        raise TemplateError(f"{path}: output template not found")
    # The user's folder first, then ours, so a user template may include our partials.
    env = _environment(jinja2.FileSystemLoader([str(path.parent), str(template_dir())]))
    try:
        return _finish(env.get_template(path.name).render(context))
    except jinja2.TemplateSyntaxError as exc:
        raise TemplateError(f"{path}:{exc.lineno}: template syntax: {exc.message}") from None
    except (jinja2.UndefinedError, SecurityError) as exc:
        raise TemplateError(f"{path}: cannot render: {exc}") from None


def _finish(text: str) -> str:
    """Collapse the runs of blank lines template logic leaves behind (not inside fenced code),
    strip trailing spaces, end with one newline."""
    lines = text.splitlines()
    code, _ = fenced_lines(lines)
    out: list[str] = []
    for i, line in enumerate(lines):
        if i in code:
            out.append(line)
            continue
        line = line.rstrip()
        if not line and out and not out[-1]:
            continue
        out.append(line)
    return "\n".join(out).strip("\n") + "\n"


__all__ = [
    "FORMATS",
    "PlanSchemaError",
    "TemplateError",
    "build_context",
    "check_plan_json",
    "export_data",
    "render_json",
    "render_plan",
]


def write_output(text: str, out: Path | None) -> None:
    """Write a rendered plan to ``out`` (parents created) or to stdout, ending with a newline."""
    text = text if text.endswith("\n") else text + "\n"
    if out is None:
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")
