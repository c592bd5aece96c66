"""Render a folded :class:`~specswarm.plan.fold.Plan` as Markdown, JSON or a software spec.

* ``json`` is ``Plan.to_json()`` with sorted keys, checked against
  ``schemas/plan.schema.json`` (a failure there is a bug in specswarm, not in the run).
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
    ``Plan.to_json()`` (see the schema).
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
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

import jinja2
from jinja2.sandbox import SandboxedEnvironment
from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

from specswarm.errors import SpecSwarmError
from specswarm.plan.fold import Plan, quorum_size
from specswarm.resources import load_schema, template_dir

FORMATS = ("markdown", "json", "spec")
BUILTIN_TEMPLATES = {"markdown": "plan.md.j2", "spec": "spec.md.j2"}


class TemplateError(SpecSwarmError):
    """A user template could not be loaded or rendered (names the file and line)."""


class PlanSchemaError(RuntimeError):
    """Our own JSON export does not match ``schemas/plan.schema.json``: a bug in specswarm."""


def render_plan(plan: Plan, fmt: str, template: str | Path | None = None) -> str:
    """Render ``plan`` as ``fmt`` (``markdown``, ``json`` or ``spec``); the text ends with a newline.

    ``template``: a Jinja2 template file used instead of the built-in one (markdown and
    spec only; ignored for json, whose shape is fixed by the schema).
    """
    if fmt not in FORMATS:
        raise ValueError(f"fmt must be one of {', '.join(FORMATS)}; got {fmt!r}")
    data = plan.to_json()
    if fmt == "json":
        return render_json(data)
    context = build_context(plan, data)
    if template is None:
        tmpl = _builtin_env().get_template(BUILTIN_TEMPLATES[fmt])
        return _finish(tmpl.render(context))
    return _render_user_template(Path(template), context)


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
            "claimed_by": _claimant(plan, node["id"]),
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
    n_scorers = _declared_scorers(plan.spec)
    try:
        quorum = quorum_size(plan.spec.get("quorum", "majority"), n_scorers) if plan.spec else None
    except ValueError:
        quorum = None
    return {
        "plan": data,
        "nodes": nodes,
        "root": nodes[0] if nodes else None,
        "requirements": [n for n in nodes if n["node"]["depth"] == 1],
        "components": [n for n in nodes if n["component"] and not n["node"]["leaf"]],
        "tasks": [n for n in nodes if n["task"]],
        "quorum": quorum,
        "roles": dict(Counter(p["role"] for p in data["participants"])),
    }


def _claimant(plan: Plan, node_id: str) -> str | None:
    """Author of a leaf's winning claim (``Plan.to_json()`` carries only the claim's id)."""
    view = plan.nodes.get(node_id)
    if view is None or view.claim is None:
        return None
    return next((c.author for c in view.claims if c.id == view.claim), None)


def _declared_scorers(spec: Mapping[str, Any] | None) -> int:
    try:
        return int((spec or {}).get("roles", {}).get("scorer", {}).get("count", 1))
    except (AttributeError, TypeError, ValueError):
        return 1


# -- filters: model text is data, and must not break the document --------------------------

_HTML_TAG = re.compile(r"<(?=[A-Za-z/!?])")
_BLOCK_START = re.compile(r"^( {0,3})(#|`{3}|~{3}|=+\s*$|-{2,}\s*$)")
_FENCE_OPEN = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
_FENCE_CLOSE = re.compile(r"^ {0,3}(`{3,}|~{3,})\s*$")
_LIST_ITEM = re.compile(r"^\s{0,3}(?:[-*+]|\d+[.)])(?:\s|$)")
_MERMAID_UNSAFE = re.compile(r"[^\w .,:'!?+\-/&%()]+")


def md_inline(text: Any) -> str:
    """One line of Markdown: newlines folded, raw HTML tags and a leading ``#`` escaped."""
    line = " ".join(str(text).split())
    line = _HTML_TAG.sub("&lt;", line)
    line = re.sub(r"^(\d+)([.)])(?=\s|$)", r"\1\\\2", line)
    return re.sub(r"^([#>+=]|-(?=\s|$))", r"\\\1", line)


def md_cell(text: Any) -> str:
    """Like :func:`md_inline`, for a table cell (pipes escaped)."""
    return md_inline(text).replace("|", "\\|")


def md_text(text: Any) -> str:
    """Multi-line prose kept as Markdown. Lines that would open a heading or a setext
    underline, and raw HTML tags, are escaped; fenced code blocks are kept only when every
    one of them is closed (else their fences are escaped too, so none can swallow the rest
    of the document)."""
    return "\n".join(_neutralize(str(text).strip().splitlines(), fences=None))


def md_quote(text: Any, prefix: str = "> ") -> str:
    """Multi-line text as a Markdown block quote. Lists, emphasis and code fences inside
    keep working (a fence cannot outlive the quote); headings and HTML tags are escaped.

    A plain line right after a list is separated from it by an empty quoted line, so it
    reads as the new paragraph the writer meant rather than as part of the last item.
    """
    out: list[str] = []
    in_list = False
    for line in _neutralize(str(text).strip().splitlines() or [""], fences=True):
        item = bool(_LIST_ITEM.match(line))
        if in_list and line and not item and not line[0].isspace():
            out.append(prefix.rstrip())
        if item:
            in_list = True
        elif not line or not line[0].isspace():
            in_list = False
        out.append((prefix + line).rstrip())
    return "\n".join(out)


def _fenced_lines(lines: list[str]) -> tuple[set[int], bool]:
    """Indexes of the lines inside (or opening/closing) fenced code blocks, and whether
    every block is closed (CommonMark rules: a closing fence repeats the opening character
    at least as many times and carries no info string)."""
    inside: set[int] = set()
    opening: tuple[str, int] | None = None
    for i, line in enumerate(lines):
        if opening is None:
            m = _FENCE_OPEN.match(line)
            if m and not (m.group(1)[0] == "`" and "`" in m.group(2)):
                opening = (m.group(1)[0], len(m.group(1)))
                inside.add(i)
            continue
        inside.add(i)
        m = _FENCE_CLOSE.match(line)
        if m and m.group(1)[0] == opening[0] and len(m.group(1)) >= opening[1]:
            opening = None
    return inside, opening is None


def _neutralize(lines: list[str], fences: bool | None) -> list[str]:
    """Escape headings, setext underlines and HTML tags outside code; ``fences``: keep
    code fences (True), keep them only if all are closed (None)."""
    code, closed = _fenced_lines(lines)
    if fences is None and not closed:
        code = set()
    out = []
    for i, line in enumerate(lines):
        line = line.rstrip()
        if i in code:
            out.append(line)
            continue
        line = _HTML_TAG.sub("&lt;", line)
        out.append(_BLOCK_START.sub(r"\1\\\2", line))
    return out


def mermaid_label(text: Any, width: int = 32) -> str:
    """A short Mermaid node label: a safe alphabet only (no quotes, brackets, newlines,
    ``#``, ``;`` or backticks), cut to ``width`` characters at a word boundary."""
    label = " ".join(_MERMAID_UNSAFE.sub(" ", str(text).replace('"', "'")).split())
    if len(label) > width:
        cut = label[: width - 1]
        label = (cut.rsplit(" ", 1)[0] if " " in cut else cut).rstrip(" ,.:-") + "…"
    return label or "(untitled)"


def short_peer(peer_id: Any) -> str:
    """The last six characters of a libp2p peer id (the 12D3KooW prefix is the same for all)."""
    return "…" + str(peer_id)[-6:]


_BULLET = re.compile(r"^ {0,3}(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?(.*?)\s*$")


def _split_items(text: Any) -> tuple[list[str], list[str]]:
    """(the lines that are not list items, the list items with their markers removed and
    their indented continuation lines joined)."""
    rest: list[str] = []
    items: list[str] = []
    in_item = False
    for line in str(text).strip().splitlines():
        m = _BULLET.match(line)
        if m:
            items.append(m.group(1))
            in_item = True
        elif in_item and line[:1].isspace() and line.strip():
            items[-1] += " " + line.strip()
        else:
            in_item = False
            rest.append(line)
    return rest, [i for i in items if i]


def bullets(text: Any) -> list[str]:
    """The bullet or numbered-list items of ``text``, one string each (markers removed,
    wrapped continuation lines joined)."""
    return _split_items(text)[1]


def prose(text: Any) -> str:
    """``text`` without its list items (what :func:`bullets` leaves), trimmed."""
    return "\n".join(_split_items(text)[0]).strip()


def failed_checks(proposal: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The failed mechanical checks of a proposal's votes, each (name, note) once, in vote order."""
    seen: dict[tuple[str, str], dict[str, Any]] = {}
    for vote in proposal["votes"]:
        for check in vote["checks"]:
            if not check["passed"]:
                seen.setdefault((check["name"], check["note"]), dict(check))
    return list(seen.values())


def plural(count: int, word: str, many: str | None = None) -> str:
    """``1 vote``, ``2 votes``."""
    return f"{count} {word if count == 1 else (many or word + 's')}"


_FILTERS = {
    "md_inline": md_inline,
    "md_cell": md_cell,
    "md_text": md_text,
    "md_quote": md_quote,
    "mermaid_label": mermaid_label,
    "short_peer": short_peer,
    "bullets": bullets,
    "plural": plural,
    "failed_checks": failed_checks,
    "prose": prose,
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
    env.filters.update(_FILTERS)
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
    except (jinja2.UndefinedError, jinja2.sandbox.SecurityError) as exc:
        raise TemplateError(f"{path}: cannot render: {exc}") from None


def _finish(text: str) -> str:
    """Collapse the runs of blank lines template logic leaves behind (not inside fenced code),
    strip trailing spaces, end with one newline."""
    lines = text.splitlines()
    code, _ = _fenced_lines(lines)
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
