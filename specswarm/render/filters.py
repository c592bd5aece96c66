"""Template filters: model text is data, and must not break the document it lands in.

Every string a model wrote passes through one of these before it reaches Markdown or a
Mermaid label, so a heading, a fence, raw HTML or a list marker in a leaf's output
stays text.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from typing import Any

from specswarm.protocol.canonical import canonical_bytes
from specswarm.protocol.identity import short_id

_HTML_TAG = re.compile(r"<(?=[A-Za-z/!?])")
_BLOCK_START = re.compile(r"^( {0,3})(#|`{3}|~{3}|=+\s*$|-{2,}\s*$)")
_FENCE_OPEN = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
_FENCE_CLOSE = re.compile(r"^ {0,3}(`{3,}|~{3,})\s*$")
_LIST_ITEM = re.compile(r"^\s{0,3}(?:[-*+]|\d+[.)])(?:\s|$)")
_CODE_SPAN = re.compile(r"(?<![\\`])(`+)(?!`).*?(?<!`)\1(?!`)")


def _escape_tags(line: str) -> str:
    """``line`` with raw HTML tags escaped, except inside code spans (`` `<task_id>` ``): a code
    span is shown as written, an entity in it would show as "&lt;". A backtick after a
    backslash opens no span (CommonMark: it is escaped), so what follows it is escaped."""
    out, at = [], 0
    for m in _CODE_SPAN.finditer(line):
        out += [_HTML_TAG.sub("&lt;", line[at : m.start()]), m.group(0)]
        at = m.end()
    return "".join([*out, _HTML_TAG.sub("&lt;", line[at:])])


def md_inline(text: Any) -> str:
    """One line of Markdown: newlines folded, raw HTML tags and a leading ``#`` escaped."""
    line = " ".join(str(text).split())
    line = _escape_tags(line)
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


def fenced_lines(lines: list[str]) -> tuple[set[int], bool]:
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
    code, closed = fenced_lines(lines)
    if fences is None and not closed:
        code = set()
    out = []
    for i, line in enumerate(lines):
        line = line.rstrip()
        if i in code:
            out.append(line)
            continue
        line = _escape_tags(line)
        out.append(_BLOCK_START.sub(r"\1\\\2", line))
    return out


_MERMAID_ENTITIES = {
    "#": "#35;",
    '"': "#quot;",
    "<": "#lt;",
    ">": "#gt;",
    "&": "#amp;",
    "`": "#96;",
}
"""Characters a quoted Mermaid label cannot hold as written (``"`` ends it, ``#`` opens an entity,
``<``/``>``/``&`` read as HTML, a backtick run could close the Markdown fence around the
diagram), and the entity codes Mermaid shows as those characters."""
_MERMAID_ENTITY = re.compile("[" + re.escape("".join(_MERMAID_ENTITIES)) + "]")


def _shown_width(text: str) -> int:
    """How many places ``text`` takes on screen: combining marks (a Devanagari vowel sign, an
    accent written as its own code point) and zero-width characters take none."""
    return sum(1 for ch in text if unicodedata.category(ch) not in ("Mn", "Me", "Cf"))


def mermaid_label(text: Any, width: int = 32) -> str:
    """A Mermaid node label that keeps every character of ``text``: whitespace and control
    characters folded to single spaces, the characters a quoted label cannot hold written as
    Mermaid entity codes (``#quot;``, ``#35;``, ...), and the words wrapped into lines of about
    ``width`` places joined by ``<br/>`` (a word longer than a line stays whole)."""
    words = "".join(" " if unicodedata.category(ch) in ("Cc", "Zl", "Zp") else ch for ch in str(text)).split()
    lines: list[list[str]] = []
    used = 0
    for word in words:
        size = _shown_width(word)
        if lines and used + 1 + size <= width:
            lines[-1].append(word)
            used += 1 + size
        else:
            lines.append([word])
            used = size
    label = "<br/>".join(
        _MERMAID_ENTITY.sub(lambda m: _MERMAID_ENTITIES[m.group(0)], " ".join(line)) for line in lines
    )
    return label or "(untitled)"


def short_peer(peer_id: Any) -> str:
    """A peer id as people read it: ``…`` and its :func:`short_id`; a role label that stands
    for a peer in a content-only export (``concrete scorer``) as it is."""
    text = str(peer_id)
    return "…" + short_id(text) if text.startswith("12D3KooW") else text


_BULLET = re.compile(r"^ {0,3}(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?(.*?)\s*$")


def _split_items(text: Any) -> tuple[list[str], list[str]]:
    """(the lines that are not list items, the list items with their markers removed and
    their indented continuation lines joined). A code block right under an item (its fences
    closed) stays part of the item as lines: its text first, the block after it, each line
    as written (:func:`md_item` renders it)."""
    rest: list[str] = []
    items: list[str] = []
    lines = str(text).strip().splitlines()
    code, closed = fenced_lines([line.lstrip() for line in lines])
    if not closed:
        code = set()  # an unclosed fence is text, joined into its item as before
    in_item = with_code = False
    for i, line in enumerate(lines):
        if i in code and in_item:
            items[-1] += "\n" + line.rstrip()
            with_code = True
            continue
        m = _BULLET.match(line) if i not in code else None
        if m:
            items.append(m.group(1))
            in_item, with_code = True, False
        elif in_item and line[:1].isspace() and line.strip():
            items[-1] += ("\n" if with_code else " ") + line.strip()
        else:
            in_item = False
            rest.append(line)
    return rest, [i for i in items if i]


def bullets(text: Any) -> list[str]:
    """The bullet or numbered-list items of ``text``, one string each (markers removed,
    wrapped continuation lines joined; a code block under an item kept: :func:`md_item`)."""
    return _split_items(text)[1]


def prose(text: Any) -> str:
    """``text`` without its list items (what :func:`bullets` leaves), trimmed."""
    return "\n".join(_split_items(text)[0]).strip()


def md_item(item: Any) -> str:
    """A list item (one of :func:`bullets`) as the content of a Markdown list item: its text as
    one line (:func:`md_inline`); a code block it holds indented under it, as a block of the
    item, its lines as written (the fences are closed: :func:`_split_items` checked)."""
    lines = str(item).split("\n")
    if len(lines) == 1:
        return md_inline(item)
    code, _ = fenced_lines([line.lstrip() for line in lines])
    out: list[str] = []
    block: list[str] = []

    def flush() -> None:
        indent = min((len(b) - len(b.lstrip()) for b in block if b.strip()), default=0)
        out.extend(("  " + b[indent:]) if b.strip() else "" for b in block)
        block.clear()

    for i, line in enumerate(lines):
        if i in code:
            block.append(line)
            continue
        flush()
        out.append(("  " if out else "") + md_inline(line))
    flush()
    return "\n".join(out)


def failed_checks(proposal: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The failed mechanical checks of a proposal's votes, each (name, note) once, in vote order."""
    seen: dict[tuple[str, str], dict[str, Any]] = {}
    for vote in proposal["votes"]:
        for check in vote["checks"]:
            if not check["passed"]:
                seen.setdefault((check["name"], check["note"]), dict(check))
    return list(seen.values())


def in_content_order(items: Any) -> list[Any]:
    """Votes or proposals (export dicts) in an order that depends on what they say, not on who
    said it when (a reproducible plan renders the same in every run): votes by lens, then score
    and critique; proposals by status, strategy, then children."""

    def key(item: Mapping[str, Any]) -> bytes:
        if "children" in item:
            return canonical_bytes([item.get("status"), item.get("strategy"), item.get("children")])
        return canonical_bytes([item.get("lens") or "", item.get("score"), item.get("critique")])

    return sorted(items or (), key=key)


def rejected_drafts(drafts: Any, counted: Any = None, status: str = "rejected") -> list[Any]:
    """A leaf's rejected drafts (export dicts; with ``status`` "outvoted", the approved ones
    another counts over: a rival round's), each text once and none with the text of the
    ``counted`` result (two executors that raced on a leaf may have written the same one twice:
    whether a copy was written depends on timing, what the leaf says does not), in the order
    they were written."""

    def text(d: Any) -> str:
        return " ".join(str(d.get("output", "")).split()) if d else ""

    seen: dict[str, Any] = {text(counted): None} if counted else {}
    for draft in drafts or ():
        if draft.get("status") == status:
            seen.setdefault(text(draft), draft)
    return [d for d in seen.values() if d is not None]


def plural(count: int, word: str, many: str | None = None) -> str:
    """``1 vote``, ``2 votes``."""
    return f"{count} {word if count == 1 else (many or word + 's')}"


FILTERS = {
    "md_inline": md_inline,
    "md_cell": md_cell,
    "md_text": md_text,
    "md_quote": md_quote,
    "mermaid_label": mermaid_label,
    "short_peer": short_peer,
    "bullets": bullets,
    "plural": plural,
    "failed_checks": failed_checks,
    "in_content_order": in_content_order,
    "rejected_drafts": rejected_drafts,
    "prose": prose,
    "md_item": md_item,
}
