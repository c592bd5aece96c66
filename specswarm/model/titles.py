"""Titles as the model writes them, made into the headings of parts.

A small model writes a part's title as a note to itself ("Describe how to list all tasks"); the
parser (:mod:`specswarm.model.parse`) keeps what the part is about ("List all tasks"). It also
writes the answer format's own words as labels, one line per field of each part
("- Short title: Review speaker availability" / "- Sentence of concrete detail: ..." /
"- Weeks: 1"): :func:`labelled_records` reads those back as parts.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

# "Describe how to list tasks", "Provide instructions on how users can delete a task": a note to
# the writer in front of what the part is about
_WRITER_NOTE = re.compile(
    r"""^(?:(?:describe|explain|specify|document|outline|detail|clarify|show|illustrate)
          |(?:provide|give|write|add)\s+(?:clear\s+)?(?:instructions|guidance|details|steps|examples)
           \s+(?:on|for|of)
        )\s+how\s+(?:to|(?:a\s+)?users?\s+(?:can|should|will))\s+(?P<rest>\S.*)$""",
    re.X | re.I,
)


_PATH_STEP = re.compile(r"\s+>\s+")


def _last_step(title: str) -> str:
    """A title written as a path from the goal ("Train for a half marathon > Weekly long runs",
    the prompt's own "Path from the overall goal" format copied) is its last step."""
    steps = [s for s in _PATH_STEP.split(title.strip()) if s]
    return steps[-1] if len(steps) > 1 else title


def bare_title(title: str) -> str:
    """A title without a leading note to the writer: "Describe how to list all tasks" is the part
    "List all tasks". The note says how to write the part, not what it is; the heading of a plan
    or a spec names the part, and siblings that share only the note share nothing. A title
    written as a path ("Goal > Part") is its last step. Other titles are returned unchanged."""
    title = _last_step(title)
    m = _WRITER_NOTE.match(title.strip())
    if not m:
        return title
    rest = m.group("rest")
    return rest[0].upper() + rest[1:]


# The decompose format line "- Short title: one sentence of concrete detail": its words written
# back as a whole title (a part the parser drops), or used as the labels of fields.
FORMAT_ECHO = re.compile(r"^(?:short )?title$|^(?:one sentence of )?concrete(?: detail)?$", re.I)
"""A title that is only the format's words: no part."""
_TITLE_LABEL = re.compile(r"^(?:short\s+|part\s+)?title$", re.I)
_DETAIL_LABEL = re.compile(
    r"^(?:(?:one\s+)?sentence(?:\s+of)?\s+)?(?:concrete\s+)?(?:detail|description)s?$", re.I
)

Item = tuple[str, str, dict[str, int | str]]


def _label(text: str) -> str:
    return text.strip(" .:;,")


def _is_label(text: str) -> bool:
    label = _label(text)
    return bool(_TITLE_LABEL.match(label) or _DETAIL_LABEL.match(label))


def _opens_record(title: str, detail: str) -> bool:
    """A title label with a value of its own (not the format line echoed whole)."""
    return bool(_TITLE_LABEL.match(_label(title))) and bool(detail.strip()) and not _is_label(detail)


def labelled_records(items: Sequence[Item]) -> list[Item]:
    """Parts written as labelled fields, read back as parts; other answers unchanged.

    ``items`` are (title, detail, facts) as a list answer's lines give them. When the model
    wrote the format's words as labels ("Short title: Review speaker availability"), each title
    label with a value starts a part titled by it; a detail label's value is that part's
    detail; a line that states facts ("Weeks: 1", and any remark after them) gives the part
    those facts. Other lines stay parts of their own; a label that opens no part (the format
    line written back whole, a second detail) is left out. An answer without a labelled title
    is returned as it is."""
    if not any(_opens_record(t, d) for t, d, _ in items):
        return list(items)
    records: list[Item] = []
    current: int | None = None
    for title, detail, facts in items:
        if _opens_record(title, detail):
            records.append((detail.strip(), "", dict(facts)))
            current = len(records) - 1
        elif current is not None and _DETAIL_LABEL.match(_label(title)) and not records[current][1]:
            head, _, known = records[current]
            records[current] = (head, detail.strip(), {**known, **facts})
        elif current is not None and facts and not set(facts) & set(records[current][2]):
            head, old, known = records[current]
            records[current] = (head, old, {**known, **facts})
        elif not _is_label(title):
            records.append((title, detail, facts))
    return records
