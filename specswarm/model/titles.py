"""Titles as the model writes them, made into the headings of parts.

A small model writes a part's title as a note to itself ("Describe how to list all tasks"); the
parser (:mod:`specswarm.model.parse`) keeps what the part is about ("List all tasks").
"""

from __future__ import annotations

import re

# "Describe how to list tasks", "Provide instructions on how users can delete a task": a note to
# the writer in front of what the part is about
_WRITER_NOTE = re.compile(
    r"""^(?:(?:describe|explain|specify|document|outline|detail|clarify|show|illustrate)
          |(?:provide|give|write|add)\s+(?:clear\s+)?(?:instructions|guidance|details|steps|examples)
           \s+(?:on|for|of)
        )\s+how\s+(?:to|(?:a\s+)?users?\s+(?:can|should|will))\s+(?P<rest>\S.*)$""",
    re.X | re.I,
)


def bare_title(title: str) -> str:
    """A title without a leading note to the writer: "Describe how to list all tasks" is the part
    "List all tasks". The note says how to write the part, not what it is; the heading of a plan
    or a spec names the part, and siblings that share only the note share nothing. Other titles
    are returned unchanged."""
    m = _WRITER_NOTE.match(title.strip())
    if not m:
        return title
    rest = m.group("rest")
    return rest[0].upper() + rest[1:]
