"""YAML loading that remembers the line of every key and value.

``load_located(text)`` parses one YAML document with :class:`LineLoader`, a
``yaml.SafeLoader`` subclass, and returns the plain data together with where
each piece came from, so a spec problem can name its line. Duplicate keys in a
mapping are recorded (YAML says they are an error; PyYAML silently keeps the
last one).

The work is bounded whatever the text (a spec may be hostile): the load stops with a
:class:`BoundError` at the first value past :data:`MAX_VALUES` or nested deeper than
:data:`MAX_DEPTH`, and once aliases (``*anchor``) and merge keys (``<<: *anchor``), which
copy what they name, have copied :data:`MAX_REPEATS` values or :data:`MAX_REPEATED_CHARS`
characters: a few lines of aliases can stand for billions of values (an "alias bomb").
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any

import yaml
from yaml.events import AliasEvent
from yaml.nodes import MappingNode, Node, SequenceNode

Key = str | int
"""One step of a path into the document: a mapping key or a list index."""
DocPath = tuple[Key, ...]

_MERGE_TAG = "tag:yaml.org,2002:merge"
_VALUE_TAG = "tag:yaml.org,2002:value"

MAX_VALUES = 20_000
"""The most values (scalars, lists, mappings) one document may write; a spec writes hundreds."""
MAX_DEPTH = 32
"""The deepest one document may nest its lists and mappings; a spec nests six levels."""
MAX_REPEATS = 10_000
"""The most values aliases and merge keys may copy in one document (each item of a copied
list or mapping counts): a spec repeats a few dozen; an alias bomb, billions."""
MAX_REPEATED_CHARS = 1_000_000
"""The most characters of text aliases may copy in one document (a long string repeated)."""


class BoundError(yaml.YAMLError):
    """The document passes one of the loader's bounds; ``path`` and ``line`` say where."""

    def __init__(self, path: DocPath, line: int, message: str) -> None:
        super().__init__(message)
        self.path, self.line, self.message = path, line, message


@dataclass(frozen=True)
class Duplicate:
    """A key that appears twice in one mapping."""

    path: DocPath
    """Path of the repeated key."""
    line: int
    """1-based line of the repetition."""
    first_line: int
    """1-based line where the key first appeared."""


@dataclass
class Located:
    """A parsed document and the line of each of its parts (all lines 1-based)."""

    data: Any
    """The document as plain Python values (dict, list, str, int, ...)."""
    value_lines: dict[DocPath, int] = field(default_factory=dict)
    """Path → line where the value starts."""
    key_lines: dict[DocPath, int] = field(default_factory=dict)
    """Path → line of the mapping key that holds the value."""
    duplicates: list[Duplicate] = field(default_factory=list)
    """Repeated keys, in document order."""


class LineLoader(yaml.SafeLoader):
    """A SafeLoader that records lines and duplicate keys while constructing, and counts
    what is written and what aliases and merge keys copy (see :class:`BoundError`)."""

    _values: int = 0
    _depth: int = 0
    _built: set[int]
    _merged: dict[int, list[tuple[Node, Node]]]
    _repeats: int
    _repeated_chars: int

    def load_located(self) -> Located | None:
        """Parse the single document of the stream; None when it holds no document."""
        try:
            node = self.get_single_node()
            if node is None:
                return None
            self._built, self._merged = set(), {}
            self._repeats, self._repeated_chars = 0, 0
            located = Located(data=None)
            located.data = self._construct(node, (), located, frozenset(), None)
            return located
        finally:
            self.dispose()

    def compose_node(self, parent: Node | None, index: Any) -> Node | None:
        """PyYAML's composer, counting the values written and how deep they nest."""
        if self.check_event(AliasEvent):
            return super().compose_node(parent, index)  # (copies are counted when built)
        self._values += 1
        if self._values > MAX_VALUES or self._depth >= MAX_DEPTH:
            line = self.peek_event().start_mark.line + 1  # type: ignore[no-untyped-call]
            if self._values > MAX_VALUES:
                message = (
                    f"the file holds more than {MAX_VALUES} values (a spec may hold at most {MAX_VALUES})"
                )
            else:
                message = (
                    f"values nest more than {MAX_DEPTH} levels deep here "
                    f"(a spec may nest at most {MAX_DEPTH})"
                )
            raise BoundError((), line, message)
        self._depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def _construct(
        self, node: Node, path: DocPath, out: Located, active: frozenset[int], copy_at: DocPath | None
    ) -> Any:
        """The value of ``node`` at ``path``; ``copy_at``: where the alias being copied is used."""
        if id(node) in self._built:  # a second time: an alias (or a merge) copies it
            copy_at = path if copy_at is None else copy_at
            text = node.value if isinstance(node.value, str) else ""
            self._count(1, len(text), copy_at, out)
        else:
            self._built.add(id(node))
        out.value_lines.setdefault(path, node.start_mark.line + 1)
        if isinstance(node, MappingNode | SequenceNode):
            if id(node) in active:
                raise yaml.constructor.ConstructorError(
                    None, None, "found a recursive alias", node.start_mark
                )
            active = active | {id(node)}
        if isinstance(node, SequenceNode):
            return [
                self._construct(item, (*path, index), out, active, copy_at)
                for index, item in enumerate(node.value)
            ]
        if isinstance(node, MappingNode):
            return self._construct_located_mapping(node, path, out, active, copy_at)
        return self.construct_object(node, deep=True)

    def _count(self, values: int, chars: int, at: DocPath, out: Located) -> None:
        """Count copied values and characters; raise BoundError past a bound."""
        self._repeats += values
        self._repeated_chars += chars
        if self._repeats <= MAX_REPEATS and self._repeated_chars <= MAX_REPEATED_CHARS:
            return
        while at and isinstance(at[-1], int):  # name the key that holds the copy
            at = at[:-1]
        line = out.key_lines.get(at) or out.value_lines.get(at, 1)
        if self._repeats > MAX_REPEATS:
            what, bound = "values", MAX_REPEATS
        else:
            what, bound = "characters of text", MAX_REPEATED_CHARS
        raise BoundError(
            at,
            line,
            f"aliases copy more than {bound} {what} here (a spec may copy at most {bound} {what} "
            "through aliases and merge keys)",
        )

    def _pairs(self, node: MappingNode, active: frozenset[int]) -> list[tuple[Node, Node]]:
        """The key/value pairs of a mapping with its merge keys resolved (YAML's merge key): the
        merged pairs first, so that its own keys win, and those of an earlier mapping in
        ``<<: [*a, *b]`` after a later one's, so that they win over them. A pair merged twice
        is listed once. Resolved once per mapping; ``node`` is not changed."""
        if id(node) in self._merged:
            return self._merged[id(node)]
        sources: list[Node] = []
        own: list[tuple[Node, Node]] = []
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE_TAG:
                sources += value_node.value if isinstance(value_node, SequenceNode) else [value_node]
                continue
            if key_node.tag == _VALUE_TAG:  # a "=" key is a plain string, as PyYAML reads it
                key_node.tag = "tag:yaml.org,2002:str"
            own.append((key_node, value_node))
        merged: dict[int, tuple[Node, Node]] = {}  # by key node: each pair once, where it wins
        for source in sources:
            if not isinstance(source, MappingNode):
                raise yaml.constructor.ConstructorError(
                    "while constructing a mapping",
                    node.start_mark,
                    "expected a mapping or list of mappings for merging, but found a "
                    + ("sequence" if isinstance(source, SequenceNode) else "scalar"),
                    source.start_mark,
                )
            if id(source) in active:
                raise yaml.constructor.ConstructorError(
                    None, None, "found a recursive merge", source.start_mark
                )
            for pair in self._pairs(source, active | {id(source)}):
                merged.setdefault(id(pair[0]), pair)  # an earlier source's pair stays
        pairs = [*reversed(merged.values()), *own]
        self._merged[id(node)] = pairs
        return pairs

    def _construct_located_mapping(
        self, node: MappingNode, path: DocPath, out: Located, active: frozenset[int], copy_at: DocPath | None
    ) -> dict[Any, Any]:
        # Duplicates are judged among the keys written here; keys merged in
        # with ``<<: *anchor`` may be overridden, as YAML intends.
        first_seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == _MERGE_TAG:
                continue
            key = self._key(key_node)
            line = key_node.start_mark.line + 1
            if key in first_seen:
                out.duplicates.append(Duplicate((*path, key), line, first_seen[key]))
            else:
                first_seen[key] = line
        result: dict[Any, Any] = {}
        for key_node, value_node in self._pairs(node, active):
            key = self._key(key_node)
            child = (*path, key)
            out.key_lines[child] = key_node.start_mark.line + 1
            out.value_lines.pop(child, None)  # a later value wins, so does its line
            result[key] = self._construct(value_node, child, out, active, copy_at)
        return result

    def _key(self, key_node: Node) -> Any:
        key = self.construct_object(key_node, deep=True)
        if not isinstance(key, Hashable):
            raise yaml.constructor.ConstructorError(
                None, None, "found a key that is a list or mapping", key_node.start_mark
            )
        return key


def load_located(text: str) -> Located | None:
    """Parse ``text`` (one YAML document); None when it is empty or only comments.

    Raises ``yaml.YAMLError``: usually a ``MarkedYAMLError`` that knows its line, or an
    :class:`BoundError` that knows its path.
    """
    return LineLoader(text).load_located()
