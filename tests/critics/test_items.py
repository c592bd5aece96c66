"""What the critics read and write (:mod:`specswarm.critics.items`): a check is the vote body's
CheckResult, and any object with a title, a detail and facts is an item."""

from __future__ import annotations

from dataclasses import dataclass, field

from specswarm import critics
from specswarm import critics as cc
from specswarm.critics import Check, run_checks
from tests.critics.kit import GOOD, ROOT, by_name


def test_check_is_the_vote_bodys_check_result() -> None:
    from specswarm.protocol.bodies import CheckResult

    assert Check is CheckResult
    assert all(isinstance(c, CheckResult) for c in run_checks(ROOT, GOOD))
    assert {"count", "overlap", "repeats", "facts", "units", "constraints"} == critics.HARD_CHECKS


def test_inputs_are_any_objects_with_title_detail_facts() -> None:
    @dataclass(frozen=True)
    class Child:
        title: str
        detail: str = ""
        leaf: bool = False
        facts: dict[str, int | str] = field(default_factory=dict)

    checks = cc.run_checks(
        Child("Plan a 2-day trip", facts={"days": 2}),
        [Child("Rome", facts={"days": 1}), Child("Rome again", facts={"days": 1})],
    )
    assert [c.name for c in checks] == [
        "count",
        "overlap",
        "repeats",
        "facts",
        "units",
        "vagueness",
        "coverage",
        "constraints",
        "concreteness",
        "sizing",
    ]
    assert [c.name for c in checks] == list(cc.CHECK_NAMES)
    assert not by_name(checks)["overlap"].passed
