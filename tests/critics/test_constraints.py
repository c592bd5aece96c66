"""The spec's constraints (:mod:`specswarm.critics.constraints`): sum, mention and forbid each
fail alone and stay one hard check; a root constraint does not apply deeper, an ``all`` one
does."""

from __future__ import annotations

import pytest

from specswarm.critics import check_constraints, combine, run_checks
from specswarm.protocol.bodies import Child
from specswarm.spec import Constraint
from tests.critics.kit import CONSTRAINTS, ROOT, child


@pytest.mark.parametrize(
    ("children", "note"),
    [
        ([child("Tokyo food", days=7), child("Kyoto temples", days=6)], "days add up to 13, expected 14"),
        ([child("Tokyo food", days=7), child("Kyoto temples")], 'days missing on #2 "Kyoto temples"'),
        ([child("Tokyo food", days=7), child("Nara deer", days=7)], "not mentioned: Kyoto"),
        ([child("Tokyo food", days=7), child("Kyoto river cruise", days=7)], "forbidden: cruise"),
    ],
)
def test_constraints_fail_alone(children: list[Child], note: str) -> None:
    c = check_constraints(ROOT, children, CONSTRAINTS, depth=0)
    assert not c.passed
    assert c.note == note
    # the spec's constraints are one hard check, whatever the content checks say
    assert combine(run_checks(ROOT, children, constraints=CONSTRAINTS, depth=0), 100, 0.2)[1] is False


def test_root_constraints_do_not_apply_deeper_but_all_does() -> None:
    kids = [child("Tokyo food"), child("Harbour cruise")]
    c = check_constraints(Child("Tokyo"), kids, CONSTRAINTS, depth=1)
    assert c.note == "forbidden: cruise"
    deeper_sum = [Constraint("sum", field="days", total=14, applies_to="all")]
    parent = Child("Tokyo", facts={"days": 5})
    ok = check_constraints(parent, [child("A b", days=2), child("C d", days=3)], deeper_sum, 1)
    assert ok.passed


def test_a_chinese_term_is_mentioned_inside_a_phrase() -> None:
    # old: "咖啡机" inside "购买咖啡机" had letters on both sides, so no word boundary matched
    mention = [Constraint("mention", terms=("咖啡机",), applies_to="all")]
    split = [child("购买咖啡机", "预算三万元"), child("员工培训")]
    assert check_constraints(Child("开咖啡馆"), split, mention, 1).passed
    forbid = [Constraint("forbid", terms=("贷款",), applies_to="all")]
    assert not check_constraints(Child("开咖啡馆"), [child("申请银行贷款"), child("装修")], forbid, 1).passed
