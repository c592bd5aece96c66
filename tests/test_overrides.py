"""The ``SPECSWARM_*`` environment overrides are checked before any peer starts: one line per
bad value naming the variable, its value and what is expected; exit 2."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from specswarm.cli import main
from specswarm.errors import UsageError
from specswarm.spec import load_spec
from specswarm.swarm.launcher.run import check_launchable
from specswarm.swarm.overrides import KNOWN, cassette_problems, misspelt, override_problems

SPEC = """\
goal: Plan a relaxed Saturday afternoon in a city park
roles:
  decomposer: {count: 1}
  scorer: {count: 1}
  executor: {count: 1}
  observer: {count: 1}
model: {backend: scripted}
"""


def _spec(tmp_path: Path) -> Path:
    path = tmp_path / "spec.yaml"
    path.write_text(SPEC)
    return path


def test_a_bad_override_stops_plan_before_the_launcher_loads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """One line naming the variable, its value and what is expected; exit 2; no run started."""
    monkeypatch.setattr(sys, "argv", ["specswarm", "plan", str(_spec(tmp_path))])
    monkeypatch.setenv("SPECSWARM_MODEL_BACKEND", "scriptd")
    launched: list[object] = []
    monkeypatch.setattr("specswarm.swarm.launcher.run_plan", lambda *a, **k: launched.append(a))
    with pytest.raises(SystemExit) as info:
        main()
    assert info.value.code == 2 and launched == []
    expected = "one of gpt4all, replay, scripted, llama, openai"
    assert capsys.readouterr().err == f"SPECSWARM_MODEL_BACKEND='scriptd': expected {expected}\n"


def test_every_override_is_checked_as_its_reader_takes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = {
        "SPECSWARM_MODEL_SHARED": "true",
        "SPECSWARM_MODEL_RUNTIME": "llamacpp",
        "SPECSWARM_LOG": "",  # logging refuses an empty level
        "SPECSWARM_NICE": "-3",
        "SPECSWARM_FORK": " 0 ",  # read stripped: fine
        "SPECSWARM_CACHE": str(_spec(tmp_path)),
        "SPECSWARM_TEST_GOSSIP_LOSS": "1",
        "SPECSWARM_TEST_MODEL_DELAY": "",  # read as 0: fine
    }
    assert override_problems(env) == [
        "SPECSWARM_MODEL_SHARED='true': expected 0 or 1",
        "SPECSWARM_MODEL_RUNTIME='llamacpp': expected one of auto, llama.cpp, gpt4all",
        "SPECSWARM_LOG='': expected one of DEBUG, INFO, WARNING, ERROR, CRITICAL",
        "SPECSWARM_NICE='-3': expected a whole number, 0 or more (niceness added to the peers' networking)",
        f"SPECSWARM_CACHE='{tmp_path}/spec.yaml': expected a directory (it names a file)",
        "SPECSWARM_TEST_GOSSIP_LOSS='1': expected a fraction, 0 to below 1",
    ]
    spec = load_spec(_spec(tmp_path))
    replay = {"SPECSWARM_MODEL_BACKEND": "replay"}
    assert cassette_problems(spec, replay) == [
        "SPECSWARM_MODEL_BACKEND='replay': expected SPECSWARM_MODEL_CASSETTE set too"
    ]
    missing = {**replay, "SPECSWARM_MODEL_CASSETTE": str(tmp_path / "none.jsonl")}
    assert cassette_problems(spec, missing) == [
        f"SPECSWARM_MODEL_CASSETTE='{tmp_path}/none.jsonl': expected a cassette file "
        f"(looked for {tmp_path}/none.jsonl)"
    ]
    assert cassette_problems(spec, {"SPECSWARM_MODEL_CASSETTE": "x.jsonl"}) == []  # scripted: unread
    monkeypatch.setenv("SPECSWARM_MODEL_BACKEND", "replay")
    with pytest.raises(UsageError, match="expected SPECSWARM_MODEL_CASSETTE set too"):
        check_launchable(spec)  # the launcher's own check, with the spec
    assert misspelt({"SPECSWARM_MODEL_BACKNED": "scripted", "SPECSWARM_CHAOS_SEEDS": "3"}, KNOWN) == [
        "warning: SPECSWARM_MODEL_BACKNED is set but nothing reads it (did you mean SPECSWARM_MODEL_BACKEND?)"
    ]
