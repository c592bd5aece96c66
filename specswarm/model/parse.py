"""Turn untrusted model text into validated data, or say precisely what is wrong.

Model output is data, never trusted: these functions accept what small models actually write
(code fences, chatty prose around the answer, ``-``/``*``/``•`` bullets, ``1.``/``1)``/``Step
1:`` numbering, markdown bold, JSON arrays or objects) and then enforce the rules in code: the
child count, title and detail lengths, no (near-)duplicates, no child repeating its parent.

A schema-constrained answer (:mod:`specswarm.model.schemas`) is JSON and takes the same road,
read whole before any clean-up. Problems raise :class:`OutputError`, its message written for
the model: :mod:`specswarm.model.tasks` feeds it back in a retry prompt. Children come out as
:class:`~specswarm.protocol.bodies.Child`, the type a proposal body carries.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable

from specswarm.critics import near_duplicate
from specswarm.model.titles import FORMAT_ECHO, bare_title, labelled_records
from specswarm.protocol.bodies import Child as Child

MAX_TITLE = 80
MAX_DETAIL = 400
MAX_OUTPUT = 4000
"""Executor output longer than this (characters) is cut at a line boundary."""
REPEAT_LIMIT = 3
"""A line that occurs this many times marks a loop; its later copies are cut."""


class OutputError(ValueError):
    """Model output that cannot be used; the message says why (and is shown to the model)."""


# ---------------------------------------------------------------------------
# text clean-up

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\n(.*?)(?:```|\Z)", re.S)
_BOLD = re.compile(r"(\*\*|__)(.+?)\1")
_BULLET = re.compile(
    r"""^(?P<indent>[ \t]*)
        (?:[-*•+▪‣◦]\s+                      # - item
          |\(?\d{1,2}[.)]\s+                 # 1. item / 1) item / (1) item
          |(?:step|part|phase|stage|item)\s*\d{1,2}\s*[:.)-]\s*  # Step 1: item
          |\#{1,6}\s+\d{1,2}[.)]?\s*         # ### 1. item
        )(?P<body>.*\S)\s*$""",
    re.X | re.I,
)
_SEPARATORS = (": ", "：", " — ", " – ", " - ", " -- ", " | ", "; ", "；")
"""Where a list item's title ends and its detail begins; the full-width colon and semicolon of
Chinese and Japanese text need no space after them ("第一天：东京")."""
_END_PUNCT = ".:;,。．：；，"
"""Punctuation a title does not end with."""
_LABEL = re.compile(r"^(?:step|part|phase|stage|item|option|task|point)\s*\d{1,2}$", re.I)
# the answer format's own placeholder ("- Short title: one sentence of concrete detail") written back
_FACT = re.compile(r"\(?\b([A-Za-z_]\w{0,30})\s*[:=]\s*(\d{1,6})\b\)?")


def strip_markdown(text: str) -> str:
    """Remove bold/italic markers, inline code ticks and heading hashes; collapse spaces."""
    text = _BOLD.sub(r"\2", text)
    text = re.sub(r"(?<!\w)[*_]([^*_\n]+)[*_](?!\w)", r"\1", text)
    text = text.replace("`", "")
    text = re.sub(r"^#+\s*", "", text)
    return re.sub(r"\s+", " ", text).strip()


_HAS_WORD = re.compile(r"[^\W_]")
_FENCES = ("```", "~~~")
_DOUBLED_MARKER = re.compile(r"^(\s*)[-*•]\s+[-*•]\s+(?=\S)", re.M)
"""A list item whose text begins with another marker ("- - Visit Nara"): one marker is meant."""


def cut_repeats(text: str, limit: int = REPEAT_LIMIT) -> tuple[str, bool]:
    """Drop the later copies of any non-empty line seen ``limit`` or more times; return the
    cleaned text and whether a loop was found. Repeated blank lines are squeezed too. A line
    without a letter or digit (``{``, ``---``) or a code fence (one per block) is no loop."""
    lines = text.splitlines()
    keys = [ln.strip().lower() for ln in lines]
    counts = Counter(k for k in keys if _HAS_WORD.search(k) and not k.startswith(_FENCES))
    looping = {k for k, n in counts.items() if n >= limit}
    seen: set[str] = set()
    out: list[str] = []
    for ln in lines:
        key = ln.strip().lower()
        if key in looping:
            if key in seen:
                continue
            seen.add(key)
        if not key and out and not out[-1].strip():
            continue
        out.append(ln)
    return "\n".join(out).strip(), bool(looping)


def unfence(text: str) -> str:
    """The inside of the first code fence, or the text itself when there is none."""
    m = _FENCE.search(text)
    return m.group(2) if m else text


def trim_words(text: str, limit: int) -> str:
    """Cut ``text`` to at most ``limit`` characters at a word boundary."""
    text = text.strip()
    if len(text) <= limit:
        return text
    cut = text[: limit + 1]
    space = cut.rfind(" ")
    cut = cut[:space] if space >= limit // 2 else text[:limit]
    return cut.rstrip(" ,;:.-—–(")


# ---------------------------------------------------------------------------
# items: JSON first, then list lines


def _cut_short(text: str) -> str | None:
    """The complete parts of a JSON split cut off at the token cap, as a JSON array
    (``{"parts": [{...}, {...}, {"title": "Thi`` gives the first two), or None."""
    body = unfence(text).strip()
    start = body.find("[")
    if not body.startswith("{") or start < 0:
        return None
    whole = re.findall(r"\{[^{}]*\}", body[start:])
    return "[" + ",".join(whole) + "]" if whole else None


def _json_items(text: str) -> list[tuple[str, str, dict[str, int | str]]] | None:
    """Items of a JSON array/object answer, or None when the text holds no usable JSON."""
    candidates = [unfence(text).strip()]
    for opener, closer in (("[", "]"), ("{", "}")):
        a, b = text.find(opener), text.rfind(closer)
        if 0 <= a < b:
            candidates.append(text[a : b + 1])
    salvaged = _cut_short(text)
    if salvaged is not None:
        candidates.append(salvaged)  # last: only when the whole answer is not valid JSON
    for cand in candidates:
        if not cand or cand[0] not in "[{":
            continue
        try:
            data = json.loads(cand)
        except ValueError:
            continue
        if isinstance(data, dict):
            lists = [v for v in data.values() if isinstance(v, list)]
            data = lists[0] if lists else [data]
        if not isinstance(data, list):
            continue
        items: list[tuple[str, str, dict[str, int | str]]] = []
        for entry in data:
            if isinstance(entry, str):
                items.append((entry, "", {}))
            elif isinstance(entry, dict):
                title = next(
                    (
                        str(entry[k])
                        for k in ("title", "name", "subgoal", "task", "step", "goal")
                        if entry.get(k)
                    ),
                    "",
                )
                detail = next(
                    (
                        str(entry[k])
                        for k in ("detail", "details", "description", "desc", "summary")
                        if entry.get(k)
                    ),
                    "",
                )
                if title:
                    extra = {
                        k: v for k, v in entry.items() if isinstance(v, int | str) and not isinstance(v, bool)
                    }
                    items.append((title, detail, extra))
        if items:
            return items
    return None


def _join(pieces: list[str]) -> str:
    out = ""
    for piece in pieces:
        if out and not re.search(r"[.!?:;,。．！？：；，]$", out):
            out += "."
        out = f"{out} {piece}" if out else piece
    return out


def _line_items(text: str) -> list[tuple[str, str]]:
    """Bullet or numbered items as (first line, continuation lines joined)."""
    items: list[tuple[str, str]] = []
    current: list[str] | None = None
    top_indent: int | None = None
    pending: list[str] = []  # non-list lines after a blank line: continuation or closing prose
    blank = False
    for raw in text.splitlines():
        line = raw.rstrip()
        if not line.strip():
            blank = True
            continue
        m = _BULLET.match(line)
        indent = len(line) - len(line.lstrip())
        if m and (top_indent is None or indent <= top_indent):
            if current is not None:
                current.extend(pending)
                items.append((current[0], _join(current[1:])))
            top_indent = indent if top_indent is None else top_indent
            current, pending, blank = [m.group("body")], [], False
            continue
        if current is None:
            continue  # prose before the list
        body = m.group("body") if m else line.strip()
        if blank and indent == 0 and not m:
            pending.append(body)
        else:
            current.extend(pending)
            pending = []
            current.append(body)
        blank = False
    if current is not None:
        items.append((current[0], _join(current[1:])))  # trailing prose in `pending` is dropped
    return items


def _split_title(item: str) -> tuple[str, str]:
    """Split 'Title: detail', 'Title：detail', 'Title — detail', 'Title - detail' at the first
    separator (:data:`_SEPARATORS`); labels like 'Step 2:' go."""
    text = strip_markdown(item)
    for _ in range(2):
        best: tuple[int, str] | None = None
        for sep in _SEPARATORS:
            i = text.find(sep)
            if i > 0 and (best is None or i < best[0]):
                best = (i, sep)
        if best is None:
            return text, ""
        i, sep = best
        left, right = text[:i].strip(), text[i + len(sep) :].strip()
        if _LABEL.match(left) and right:
            text = right  # "Step 2: Title - detail" -> try again without the label
            continue
        if len(left) <= MAX_TITLE and len(left.split()) <= 14 and right:
            return left, right
        return text, ""
    return text, ""


def extract_facts(text: str, fields: Iterable[str]) -> tuple[str, dict[str, int | str]]:
    """Pull ``field: N`` facts (e.g. ``(days: 3)``) out of ``text``; return the cleaned text.

    Several explicit facts for one field add up. Also accepts ``N field``
    (``3 days``) when it occurs exactly once and no explicit ``field: N`` was given.
    """
    wanted = {f.lower(): f for f in fields}
    facts: dict[str, int | str] = {}

    def take(m: re.Match[str]) -> str:
        name = m.group(1).lower()
        if name in wanted or name.rstrip("s") in {w.rstrip("s") for w in wanted}:
            key = wanted.get(name) or next(
                w for w in wanted.values() if w.lower().rstrip("s") == name.rstrip("s")
            )
            # "Tokyo (days: 2); Nikko (days: 1)" states 3 days for this part.
            facts[key] = int(facts.get(key, 0)) + int(m.group(2))
            return ""
        return m.group(0)

    cleaned = _FACT.sub(take, text)
    for f in wanted.values():
        if f in facts:
            continue
        stem_ = re.escape(f.rstrip("s"))
        found = re.findall(rf"\b(\d{{1,4}})\s+{stem_}s?\b", text, re.I)
        if len(found) == 1:
            facts[f] = int(found[0])
    cleaned = re.sub(r"\(\s*\)", "", cleaned)
    cleaned = re.sub(r"\s+([.,;:!?])", r"\1", cleaned)
    return re.sub(r"\s+", " ", cleaned).strip(" ,;-—–"), facts


def parse_children(
    text: str,
    *,
    min_children: int,
    max_children: int,
    parent_title: str = "",
    goal: str = "",
    fact_fields: Iterable[str] = (),
    leaves: bool = False,
) -> list[Child]:
    """Parse a decompose answer into at most ``max_children`` validated children.

    Raises :class:`OutputError` when fewer than ``min_children`` usable ones remain.
    """
    if not text.strip():
        raise OutputError("the answer was empty")
    whole = text
    text, _ = cut_repeats(text)
    fields = list(fact_fields)
    raw: list[tuple[str, str, dict[str, int | str]]] = []
    from_json = _json_items(whole)  # as answered: cutting JSON's repeated lines breaks it
    if from_json is None and text != whole:
        from_json = _json_items(text)
    if from_json is not None:
        for title, detail, extra in from_json:
            title, facts_t = extract_facts(strip_markdown(title), fields)
            detail, facts_d = extract_facts(strip_markdown(detail), fields)
            given = {
                f: int(extra[f])
                for f in fields
                if isinstance(extra.get(f), int) or str(extra.get(f, "")).isdigit()
            }
            raw.append((title, detail, {**facts_d, **facts_t, **given}))
    else:
        for head, more in _line_items(unfence(text)) or _line_items(text):
            # Facts first: "Tokyo (days: 4): sights" must not split at "days:".
            cleaned, facts = extract_facts(strip_markdown(head), fields)
            more, facts_more = extract_facts(strip_markdown(more), fields)
            title, detail = _split_title(cleaned)
            raw.append((title, _join([p for p in (detail, more) if p]), {**facts_more, **facts}))
    raw = labelled_records(raw)
    if not raw:
        raise OutputError('no list found: write one part per line, starting with "- "')
    children: list[Child] = []
    dropped: list[str] = []
    for title, detail, facts in raw:
        title = trim_words(bare_title(title.rstrip(_END_PUNCT)), MAX_TITLE)
        detail = trim_words(detail, MAX_DETAIL)
        echo = FORMAT_ECHO.match(title)
        if echo or any(p and near_duplicate(title, p) for p in (parent_title, goal)):
            dropped.append(f"{title!r} {'echoes the answer format' if echo else 'only repeats the goal'}")
        elif any(near_duplicate(title, c.title) for c in children):
            dropped.append(f"{title!r} repeats another part")
        elif title:
            children.append(Child(title=title, detail=detail, leaf=leaves, facts=facts))
    if len(children) < min_children:
        why = f" ({'; '.join(dropped)})" if dropped else ""
        raise OutputError(f"only {len(children)} usable part(s), need {min_children} to {max_children}{why}")
    return children[:max_children]


def parse_execution(text: str, *, max_chars: int = MAX_OUTPUT, goal: str = "") -> str:
    """Clean an executor answer: unwrap a lone fence (inner code blocks keep theirs), drop an echoed
    breadcrumb ("- <goal> > Tokyo - Visit Senso-ji" keeps "- Visit Senso-ji"), write a doubled
    list marker ("- - Visit Nara") once, cut loops, bound it."""
    text = text.strip()
    text = unfence(text) if text.startswith("```") else text
    text = _DOUBLED_MARKER.sub(r"\1- ", text)
    if goal:
        crumb = re.compile(rf"^(\s*(?:[-*•]\s*)?){re.escape(goal)}\s*>[^\n]*?(?:\s+-\s+|:\s+|$)", re.M)
        kept = crumb.sub(r"\1", text).splitlines()  # a bare breadcrumb goes; a closing fence stays
        text = "\n".join(ln for ln in kept if re.search(r"\w", ln) or ln.strip().startswith(_FENCES))
    text, _ = cut_repeats(text)
    if not re.search(r"\w", text):
        raise OutputError("the answer was empty")
    if len(text) > max_chars:
        head = text[:max_chars]
        text = head[: head.rfind("\n")] if "\n" in head else head
    return text.strip()
