"""A hostile spec cannot hurt: alias bombs stop after bounded work."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from specswarm.errors import SpecError
from specswarm.spec import _yaml, load_spec

SPECS = Path(__file__).parent / "specs"
ROLES = "roles:\n  decomposer: {count: 1}\n  scorer: {count: 1}\n  executor: {count: 1}\n"


def problems_of(path: Path, **kw: Any) -> list[str]:
    with pytest.raises(SpecError) as info:
        load_spec(path, **kw)
    return [str(p) for p in info.value.problems]


@pytest.fixture
def constructions(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the values the YAML loader builds; fails the test (instead of exhausting the
    machine) past 100000."""
    count = [0]
    construct = _yaml.LineLoader._construct

    def counted(self: _yaml.LineLoader, *args: Any) -> Any:
        count[0] += 1
        assert count[0] <= 100_000, "the loader builds without bound"
        return construct(self, *args)

    monkeypatch.setattr(_yaml.LineLoader, "_construct", counted)
    return count


def test_bombs_stop_after_bounded_work(tmp_path: Path, constructions: list[int]) -> None:
    started = time.perf_counter()
    bomb = SPECS / "alias-bomb.yaml"
    assert problems_of(bomb) == [
        f"{bomb}:12: lol5: aliases copy more than 10000 values here "
        "(a spec may copy at most 10000 values through aliases and merge keys)"
    ]
    assert constructions[0] <= _yaml.MAX_REPEATS + 100
    text = tmp_path / "text.yaml"  # a 100 kB string copied 11 times: 1.1 MB of text
    copies = ", ".join(["*g"] * 11)
    text.write_text(f"goal: &g {'x' * 100_000}\n{ROLES}constraints: [{{kind: forbid, terms: [{copies}]}}]\n")
    assert problems_of(text) == [
        f"{text}:6: constraints[0].terms: aliases copy more than 1000000 characters of text here "
        "(a spec may copy at most 1000000 characters of text through aliases and merge keys)"
    ]
    deep = tmp_path / "deep.yaml"
    deep.write_text(f"goal: Plan a trip\n{ROLES}context: {'[' * 1000}{']' * 1000}\n")
    assert problems_of(deep) == [
        f"{deep}:6: (root): values nest more than 32 levels deep here (a spec may nest at most 32)"
    ]
    many = tmp_path / "many.yaml"
    many.write_text(f"goal: Plan a trip\n{ROLES}constraints: [{{kind: forbid, terms: [{'a,' * 30_000}]}}]\n")
    assert problems_of(many) == [
        f"{many}:6: (root): the file holds more than 20000 values (a spec may hold at most 20000)"
    ]
    assert time.perf_counter() - started < 2  # loosely: the work is what is counted


def test_merge_keys_resolve_once_and_the_earlier_mapping_wins(
    tmp_path: Path, constructions: list[int]
) -> None:
    levels = ["m1: &m1 {max_depth: 3, min_children: 2, max_children: 5}"]
    levels += [f"m{i}: &m{i} {{<<: [{', '.join([f'*m{i - 1}'] * 9)}]}}" for i in range(2, 10)]
    path = tmp_path / "spec.yaml"  # 9 levels of 9 merges: one mapping of three keys
    path.write_text(
        "goal: Plan a trip\nx: &x {count: 2}\ny: &y {count: 3, lenses: [coverage]}\n"
        "roles:\n  decomposer: {count: 1}\n  scorer: {<<: [*x, *y]}\n  executor: {<<: *y, count: 1}\n"
        + "\n".join(levels)
        + "\ntree: *m9\n"
    )
    doc = _yaml.load_located(path.read_text())
    assert doc is not None and constructions[0] < 100
    assert doc.data["tree"] == {"max_depth": 3, "min_children": 2, "max_children": 5}
    assert doc.data["roles"]["scorer"] == {"count": 2, "lenses": ["coverage"]}  # *x before *y
    assert doc.data["roles"]["executor"] == {"count": 1, "lenses": ["coverage"]}  # its own key wins
