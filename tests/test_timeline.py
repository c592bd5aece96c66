"""bench/timeline.py: the model-task lines the roles log, read back into slot occupancy."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import pytest

from specswarm.swarm.peer import setup_logging
from specswarm.swarm.roles.base import MODEL_TASK_LOG

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
import timeline  # noqa: E402


def _line(at: str, task: str, key: str, waited: float, generated: float) -> str:
    # the peers' own format (setup_logging), with the record's time set to ``at``
    setup_logging()
    fmt = logging.getLogger().handlers[0].formatter
    assert fmt is not None
    record = logging.LogRecord("specswarm.swarm.roles", logging.INFO, "", 0, MODEL_TASK_LOG, None, None)
    record.args = (task, key, waited, generated)
    record.created = timeline.datetime.strptime(at, "%Y-%m-%d %H:%M:%S").timestamp()
    record.msecs = 0
    return fmt.format(record)


def test_tasks_and_occupancy_come_from_the_peer_logs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # decomposer: waits 0 s, generates 10:00:00-10:00:20; executor: waits 10:00:05-10:00:20,
    # generates 10:00:20-10:00:30; the scorer's log holds other lines only
    (tmp_path / "decomposer-0.log").write_text(
        _line("2026-12-02 10:00:20", "propose", "root", 0.0, 20.0) + "\nsome other line\n", encoding="utf-8"
    )
    (tmp_path / "executor-1.log").write_text(
        _line("2026-12-02 10:00:30", "execute", "n1", 15.0, 10.0) + "\n", encoding="utf-8"
    )
    (tmp_path / "scorer-0.log").write_text("2026-12-02 10:00:01,000 x WARNING nothing\n", encoding="utf-8")
    tasks = timeline.read_tasks(tmp_path)
    assert sorted((peer, task) for peer, task, *_ in tasks) == [
        ("decomposer-0", "propose"),
        ("executor-1", "execute"),
    ]
    busy = timeline.occupancy([(t.slot, t.end) for t in tasks])
    assert busy[1] == pytest.approx(30.0)  # one slot generating for all 30 s, never two
    assert busy.get(2, 0.0) == 0.0
    assert timeline.occupancy([(0.0, 10.0), (5.0, 12.0)]) == {0: 0.0, 1: 7.0, 2: 5.0}
    assert timeline.main([str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "executor" in out and "span 30 s" in out


def test_the_models_path_sums_each_phase_busiest_peer_in_the_swarms_order() -> None:
    t = timeline.Task
    tasks = [
        t("decomposer-0", "propose", "root", 0, 0, 3),
        t("decomposer-1", "propose", "root", 0, 0, 2),
        t("decomposer-0", "propose", "a.0", 3, 3, 5),
        t("decomposer-0", "propose", "a.1", 5, 5, 6),  # one peer's two proposals: 2 + 1 s
        t("decomposer-1", "propose", "a.0", 3, 4, 6),  # waited 1 s for a slot: not counted
        t("executor-0", "execute", "a.0.0", 6, 6, 10),
        t("executor-1", "execute", "a.0.1", 6, 6, 9),
        t("executor-1", "execute", "a.0.1", 9, 9, 11),  # a revision: 3 + 2 s
        t("executor-0", "execute", "summary/a.0", 11, 11, 12),
        t("executor-1", "execute", "summary/root", 12, 12, 13),
    ]
    depths = {"root": 0, "a.0": 1, "a.1": 1, "a.0.0": 2, "a.0.1": 2}
    assert timeline.model_path(tasks, depths) == [
        ("proposals at depth 0", 3),
        ("proposals at depth 1", 3),
        ("leaf results", 5),
        ("summaries at depth 1", 1),
        ("summaries at depth 0", 1),
    ]


def test_a_run_without_info_lines_says_how_to_get_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "decomposer-0.log").write_text("", encoding="utf-8")
    assert timeline.main([str(tmp_path)]) == 1
    assert "SPECSWARM_LOG=INFO" in capsys.readouterr().err
