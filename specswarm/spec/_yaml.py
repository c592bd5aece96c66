"""YAML loading that remembers the line of every key and value.

``load_located(text)`` parses one YAML document with :class:`LineLoader`, a
``yaml.SafeLoader`` subclass, and returns the plain data together with where
each piece came from, so a spec problem can name its line. Duplicate keys in a
mapping are recorded (YAML says they are an error; PyYAML silently keeps the
last one).
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, SequenceNode

Key = str | int
"""One step of a path into the document: a mapping key or a list index."""
DocPath = tuple[Key, ...]

_MERGE_TAG = "tag:yaml.org,2002:merge"


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
    """A SafeLoader that records lines and duplicate keys while constructing."""

    def load_located(self) -> Located | None:
        """Parse the single document of the stream; None when it holds no document."""
        try:
            node = self.get_single_node()
            if node is None:
                return None
            located = Located(data=None)
            located.data = self._construct(node, (), located, set())
            return located
        finally:
            self.dispose()

    def _construct(self, node: Node, path: DocPath, out: Located, active: set[int]) -> Any:
        out.value_lines.setdefault(path, node.start_mark.line + 1)
        if isinstance(node, MappingNode | SequenceNode):
            if id(node) in active:
                raise yaml.constructor.ConstructorError(
                    None, None, "found a recursive alias", node.start_mark
                )
            active = active | {id(node)}
        if isinstance(node, SequenceNode):
            return [
                self._construct(item, (*path, index), out, active) for index, item in enumerate(node.value)
            ]
        if isinstance(node, MappingNode):
            return self._construct_located_mapping(node, path, out, active)
        return self.construct_object(node, deep=True)

    def _construct_located_mapping(
        self, node: MappingNode, path: DocPath, out: Located, active: set[int]
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
        self.flatten_mapping(node)
        result: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            key = self._key(key_node)
            child = (*path, key)
            out.key_lines[child] = key_node.start_mark.line + 1
            out.value_lines.pop(child, None)  # a later value wins, so does its line
            result[key] = self._construct(value_node, child, out, active)
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

    Raises ``yaml.YAMLError`` (usually a ``MarkedYAMLError`` that knows its line).
    """
    return LineLoader(text).load_located()
