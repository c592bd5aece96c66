"""A hostile spec cannot hurt: alias bombs stop after bounded work, a spec too large for the
run event is refused (a huge file unparsed), and the files whose text reaches the run stay in
the spec's folder unless `--allow-outside-files` says otherwise."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from specswarm.cli import app
from specswarm.errors import SpecError
from specswarm.protocol.canonical import canonical_bytes
from specswarm.protocol.events import check_event, make_run_event
from specswarm.protocol.identity import Identity
from specswarm.resources import template_dir
from specswarm.spec import _yaml, load_spec, spec_from_mapping
from specswarm.spec.bounds import MAX_SPEC_BYTES, normalized_size

SPECS = Path(__file__).parent / "specs"
ROLES = "roles:\n  decomposer: {count: 1}\n  scorer: {count: 1}\n  executor: {count: 1}\n"


def outside(named: str, target: Path, folder: Path) -> str:
    return (
        f"{named!r} (that is {target}) is outside the spec's folder {folder} "
        "(expected a file in it or in specswarm's templates; --allow-outside-files allows any)"
    )


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
    assert time.perf_counter() - started < 20  # loosely, for a loaded machine: the work is what is counted


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


def test_a_5_mb_goal_is_refused_without_being_parsed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "big.yaml"
    path.write_text(f"goal: {'x' * 5_000_000}\n{ROLES}")

    def no_parse(text: str) -> None:
        raise AssertionError("a 5 MB spec was parsed")

    monkeypatch.setattr("specswarm.spec.load.load_located", no_parse)
    result = CliRunner().invoke(app, ["validate", str(path)])
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == (
        f"{path}:1: (root): the file is 5.0 MB (expected at most 500000 bytes; its normalized spec "
        "travels in a run event that holds at most 250000 bytes of it)\n"
    )


def term(index: int, length: int = 200) -> str:
    """A forbidden term of ``length`` characters (200: the longest the schema allows)."""
    return f"{index:04}".ljust(length, "x")


def test_a_spec_larger_than_a_run_event_is_refused(tmp_path: Path) -> None:
    terms = ", ".join(term(i) for i in range(1_300))  # each string within its bound
    path = tmp_path / "spec.yaml"
    path.write_text(f"goal: Plan a trip\n{ROLES}constraints:\n  - {{kind: forbid, terms: [{terms}]}}\n")
    assert problems_of(path) == [
        f"{path}:1: (root): the spec is 275.2 kB once normalized (defaults filled in, prompt templates "
        "inlined); a run event holds at most 250000 bytes of it (the largest part: constraints, 263.9 kB)"
    ]


def test_a_spec_at_the_bound_travels_in_a_run_event() -> None:
    def spec_of(terms: list[str]) -> Any:
        return spec_from_mapping({"goal": "Plan a trip", "roles": {"decomposer": {"count": 1},
            "scorer": {"count": 1}, "executor": {"count": 1}},
            "constraints": [{"kind": "forbid", "terms": terms}]})  # fmt: skip

    terms = [term(0)]
    room = MAX_SPEC_BYTES - normalized_size(spec_of(terms).to_json())
    terms += [term(i) for i in range(1, room // 203 + 1)]  # each adds 203 bytes: ,"0001xxx..."
    terms.append(term(len(terms), room % 203 - 3))
    spec = spec_of(terms)
    assert normalized_size(spec.to_json()) == len(canonical_bytes(spec.to_json())) == MAX_SPEC_BYTES
    event = make_run_event(Identity.generate(), spec, admission="ab" * 32, nonce="f" * 100)
    assert check_event(event.to_bytes()) == (event, "")  # a peer takes it


def test_files_outside_the_spec_folder_are_refused(tmp_path: Path) -> None:
    folder = tmp_path / "specs"
    (folder / "p").mkdir(parents=True)
    default = (template_dir() / "prompts" / "decompose.j2").read_text()
    (tmp_path / "outside.j2").write_text("{{ goal }}: " + default)
    (folder / "inside.j2").write_text((template_dir() / "prompts" / "execute.j2").read_text())
    (folder / "p" / "link.j2").symlink_to(tmp_path / "outside.j2")  # resolved before judging
    (folder / "p" / "near.j2").symlink_to(folder / "inside.j2")
    packaged = os.path.relpath(template_dir() / "prompts" / "score.j2", folder)
    path = folder / "spec.yaml"
    path.write_text(
        f"goal: Plan a trip\n{ROLES}"
        f"prompts: {{decompose: p/link.j2, refine: ../outside.j2, score: {packaged}, execute: p/near.j2}}\n"
        "model: {backend: replay, cassette: ~/recorded.jsonl}\n"
    )
    home = Path("~/recorded.jsonl").expanduser().resolve()
    assert problems_of(path) == [
        f"{path}:6: prompts.decompose: {outside('p/link.j2', tmp_path / 'outside.j2', folder)}",
        f"{path}:6: prompts.refine: {outside('../outside.j2', tmp_path / 'outside.j2', folder)}",
        f"{path}:7: model.cassette: {outside('~/recorded.jsonl', home, folder)}",
    ]
    path.write_text(path.read_text().replace("~/recorded.jsonl", "../recorded.jsonl"))
    (tmp_path / "recorded.jsonl").write_text("")
    spec = load_spec(path, allow_outside=True)
    assert spec.prompts.decompose.startswith("{{ goal }}: ")
    assert spec.model.cassette == tmp_path / "recorded.jsonl"


def test_a_prompt_template_is_bounded(tmp_path: Path) -> None:
    (tmp_path / "big.j2").write_text("{{ goal }}" + "x" * 15_991)
    path = tmp_path / "spec.yaml"
    path.write_text(f"goal: Plan a trip\n{ROLES}prompts: {{execute: big.j2}}\n")
    assert problems_of(path) == [
        f"{path}:6: prompts.execute: template file 'big.j2' holds 16001 characters "
        "(expected at most 16000 characters: a prompt template travels in the run event)"
    ]


def test_the_flag_lets_validate_and_plan_read_outside_files(tmp_path: Path) -> None:
    (tmp_path / "mine.j2").write_text((template_dir() / "prompts" / "score.j2").read_text())
    (tmp_path / "sub").mkdir()
    path = tmp_path / "sub" / "spec.yaml"
    path.write_text(f"goal: Plan a trip\n{ROLES}  observer: {{count: 0}}\nprompts: {{score: ../mine.j2}}\n")
    refused = f"{path}:7: prompts.score: {outside('../mine.j2', tmp_path / 'mine.j2', path.parent)}"
    runner = CliRunner()
    result = runner.invoke(app, ["validate", str(path)])
    assert (result.exit_code, result.stderr) == (2, refused + "\n")
    result = runner.invoke(app, ["validate", "--allow-outside-files", str(path)])
    assert (result.exit_code, result.stdout) == (0, f"{path}: ok (spec: 'Plan a trip')\n")
    result = runner.invoke(app, ["plan", str(path)])  # the CLI's main() turns the error into exit 2
    assert isinstance(result.exception, SpecError) and str(result.exception) == refused
    result = runner.invoke(app, ["plan", "--allow-outside-files", str(path)])  # loads; cannot run
    assert isinstance(result.exception, SpecError)
    assert "roles.observer.count: 0 observers" in str(result.exception)
