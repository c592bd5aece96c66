"""Two plan exports (``specswarm render --format json``) -> what their content changed, node by node.

Pure: text in, :class:`Change` values and plain text out. Only the content counts: titles,
details, facts, whether a node is a leaf, the result texts and the order of children. Run ids,
peer ids, digests, proposals, votes, claims and timings are never read, so two runs of one spec
that wrote the same plan compare equal.

Node ids differ between runs, so nodes are matched by where they sit: the two roots, then,
below two matched nodes, their children by title (case and spacing ignored, first with first
when titles repeat), then the children left over on both sides in their order (a child whose
title was rewritten keeps its place). A child left over on one side only was added or removed.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

PLAN_FORMAT = "specswarm-plan/1"
PLAN_FORMATS = (PLAN_FORMAT, "specswarm-plan-content/1")
"""A full export and a content-only one (``--content-only``): both carry the content tree."""
MAX_LINES = 40
"""Most diff lines shown for one rewritten text (the rest is counted)."""

ChangeKind = Literal["added", "removed", "rewritten", "reordered"]


class PlanDocumentError(ValueError):
    """The text is not a plan export; the message says where (``root.children[1].title: ...``)."""


@dataclass(frozen=True)
class ContentNode:
    """What a node of a plan says, and nothing about who said it."""

    title: str
    detail: str
    facts: tuple[tuple[str, int | str], ...]
    leaf: bool
    result: str | None
    """The counted result's text (leaves with a result only)."""
    children: tuple[ContentNode, ...]

    def walk(self, path: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], ContentNode]]:
        """This node and every node below it, each with its path of titles, root first."""
        here = (*path, self.title)
        yield here, self
        for child in self.children:
            yield from child.walk(here)


@dataclass(frozen=True)
class Change:
    kind: ChangeKind
    path: tuple[str, ...]
    """Titles from the root to the node (the new plan's titles where the node is in both)."""
    field: str | None = None
    """For ``rewritten``: title, detail, facts, leaf or result."""
    old: str = ""
    new: str = ""


# --------------------------------------------------------------------------- reading


def parse_plan(text: str) -> ContentNode | None:
    """The content tree of a plan export (None: the export has no root); raise PlanDocumentError."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise PlanDocumentError(f"line {exc.lineno}: not JSON: {exc.msg}") from None
    if not isinstance(data, dict) or data.get("format") not in PLAN_FORMATS:
        raise PlanDocumentError(
            f"not a plan export (expected a JSON object with format {PLAN_FORMAT!r}, "
            "as `specswarm render EVENTS --format json` writes)"
        )
    if "root" not in data:
        raise PlanDocumentError("root: missing")
    root = data["root"]
    return None if root is None else _node(root, "root")


def _node(data: object, where: str) -> ContentNode:
    if not isinstance(data, Mapping):
        raise PlanDocumentError(f"{where}: expected an object")
    title = _field(data, where, "title", str)
    detail = _field(data, where, "detail", str)
    leaf = _field(data, where, "leaf", bool)
    facts = _field(data, where, "facts", dict)
    for key, value in facts.items():
        if isinstance(value, bool) or not isinstance(value, int | str):
            raise PlanDocumentError(f"{where}.facts.{key}: expected an integer or a string")
    children = _field(data, where, "children", list)
    result = data.get("result")
    text: str | None = None
    if result is not None:
        if not isinstance(result, Mapping) or not isinstance(result.get("output"), str):
            raise PlanDocumentError(f"{where}.result: expected null or an object with a text 'output'")
        text = result["output"]
    return ContentNode(
        title=title,
        detail=detail,
        facts=tuple(sorted(facts.items())),
        leaf=leaf,
        result=text,
        children=tuple(_node(c, f"{where}.children[{i}]") for i, c in enumerate(children)),
    )


def _field(data: Mapping[str, Any], where: str, key: str, kind: type) -> Any:
    if key not in data:
        raise PlanDocumentError(f"{where}.{key}: missing")
    value = data[key]
    if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
        raise PlanDocumentError(f"{where}.{key}: expected {'a' if kind is not int else 'an'} {kind.__name__}")
    return value


# --------------------------------------------------------------------------- comparing


def diff_plans(old: ContentNode | None, new: ContentNode | None) -> list[Change]:
    """Every content change from ``old`` to ``new``, in the new plan's tree order."""
    if old is None and new is None:
        return []
    if old is None or new is None:
        kind: ChangeKind = "added" if old is None else "removed"
        node = new if new is not None else old
        assert node is not None
        return [Change(kind, path) for path, _ in node.walk(())]
    out: list[Change] = []
    _compare(old, new, (), out)
    return out


def _key(title: str) -> str:
    return " ".join(title.split()).casefold()


def match_children(
    old: Sequence[ContentNode], new: Sequence[ContentNode]
) -> tuple[list[tuple[int, int]], list[int], list[int]]:
    """(matched (old index, new index) pairs, removed old indexes, added new indexes)."""
    free: dict[str, list[int]] = {}
    for j, child in enumerate(new):
        free.setdefault(_key(child.title), []).append(j)
    pairs: list[tuple[int, int]] = []
    left_old: list[int] = []
    for i, child in enumerate(old):
        same = free.get(_key(child.title))
        if same:
            pairs.append((i, same.pop(0)))
        else:
            left_old.append(i)
    taken = {j for _, j in pairs}
    left_new = [j for j in range(len(new)) if j not in taken]
    pairs.extend(zip(left_old, left_new, strict=False))
    return sorted(pairs), left_old[len(left_new) :], left_new[len(left_old) :]


def _compare(old: ContentNode, new: ContentNode, parent: tuple[str, ...], out: list[Change]) -> None:
    path = (*parent, new.title)
    if old.title != new.title:
        out.append(Change("rewritten", path, "title", old.title, new.title))
    if old.detail != new.detail:
        out.append(Change("rewritten", path, "detail", old.detail, new.detail))
    if old.facts != new.facts:
        out.append(Change("rewritten", path, "facts", _facts(old.facts), _facts(new.facts)))
    if old.leaf != new.leaf:
        out.append(Change("rewritten", path, "leaf", _yes(old.leaf), _yes(new.leaf)))
    if old.result != new.result:
        out.append(Change("rewritten", path, "result", old.result or "", new.result or ""))
    pairs, removed, added = match_children(old.children, new.children)
    order = [j for _, j in pairs]
    if order != sorted(order):
        titles = ("; ".join(c.title for c in side.children) for side in (old, new))
        out.append(Change("reordered", path, "children", *titles))
    of_new = {j: i for i, j in pairs}
    for j, child in enumerate(new.children):
        if j in of_new:
            _compare(old.children[of_new[j]], child, path, out)
        else:
            out.extend(Change("added", p) for p, _ in child.walk(path))
    for i in removed:
        out.extend(Change("removed", p) for p, _ in old.children[i].walk(path))


def _facts(facts: tuple[tuple[str, int | str], ...]) -> str:
    return ", ".join(f"{k}: {v}" for k, v in facts) or "(none)"


def _yes(flag: bool) -> str:
    return "leaf" if flag else "not a leaf"


# --------------------------------------------------------------------------- text


def format_changes(changes: Sequence[Change], old_name: str, new_name: str) -> str:
    """Plain text for a CI log: one header line per side, one line (plus diff lines) per change."""
    lines = [f"--- {old_name}", f"+++ {new_name}"]
    for c in changes:
        where = " > ".join(c.path)
        if c.kind == "added":
            lines.append(f"+ {where}")
        elif c.kind == "removed":
            lines.append(f"- {where}")
        elif c.kind == "reordered":
            lines.append(f"~ {where}: children reordered")
            lines += [f"    - {c.old}", f"    + {c.new}"]
        else:
            verb = "rewritten"
            if c.field in ("detail", "result") and not (c.old and c.new):
                verb = "added" if c.new else "removed"
            lines.append(f"~ {where}: {c.field} {verb}")
            lines += _text_diff(c.old, c.new)
    counts = {k: sum(1 for c in changes if c.kind == k) for k in ("added", "removed", "rewritten")}
    counts["rewritten"] += sum(1 for c in changes if c.kind == "reordered")
    if changes:
        lines.append(
            f"{len(changes)} change(s): {counts['added']} node(s) added, {counts['removed']} removed, "
            f"{counts['rewritten']} rewritten"
        )
    else:
        lines.append("no content changes")
    return "\n".join(lines) + "\n"


def _text_diff(old: str, new: str) -> list[str]:
    """The changed lines, ``    - old`` / ``    + new``, at most MAX_LINES of them."""
    diff = list(difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=0))[2:]
    got = [f"    {line[0]} {line[1:]}".rstrip() for line in diff if not line.startswith("@@")]
    if len(got) > MAX_LINES:
        got = got[:MAX_LINES] + [f"    ... {len(got) - MAX_LINES} more line(s)"]
    return got
