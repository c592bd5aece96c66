"""A decomposer's own split, repaired and self-checked before it is proposed (model/splits.py,
the ``relatives``/``proposed`` path of decompose; the repairs themselves:
tests/critics/test_repair.py)."""

from __future__ import annotations

import pytest

from specswarm.model import GenerationRequest, ScriptedModel, TaskCounts, decompose
from tests.critics.kit import kid
from tests.test_model_tasks import ROOT, spec_of


class Recorder:
    """A scripted model that answers from a queue and keeps every request."""

    def __init__(self, *texts: str) -> None:
        self.queue = list(texts)
        self.requests: list[GenerationRequest] = []
        self.model = ScriptedModel(self._answer)

    def _answer(self, req: GenerationRequest) -> str:
        self.requests.append(req)
        return self.queue.pop(0)


GOOD = (
    "- Tokyo: Asakusa and Ueno (days: 6)\n- Kyoto: Gion and Arashiyama (days: 5)\n"
    "- Osaka: Dotonbori (days: 3)"
)
OTHER = (
    "- Hokkaido: Sapporo and Otaru (days: 5)\n- Hiroshima: Peace Park (days: 5)\n"
    "- Nagano: Jigokudani (days: 4)"
)


def test_a_split_that_passes_its_self_check_costs_one_generation() -> None:
    rec = Recorder(GOOD)
    counts = TaskCounts()
    kids = decompose(rec.model, spec_of(), ROOT, [], [], "geography", [], counts=counts, relatives=[])
    assert [c.title for c in kids] == ["Tokyo", "Kyoto", "Osaka"]
    assert len(rec.requests) == 1 and counts.varied == 0 and counts.repaired == 0


def test_a_split_already_on_the_table_is_asked_for_again_another_way() -> None:
    rec = Recorder(GOOD, OTHER)
    counts = TaskCounts()
    on_table = [[kid("Tokyo", "", 6), kid("Kyoto", "", 5), kid("Osaka", "", 3)]]
    kids = decompose(
        rec.model,
        spec_of(),
        ROOT,
        [],
        [],
        "geography",
        [],
        counts=counts,
        relatives=[],
        proposed=on_table,
        strategies=("geography", "activity", "days"),
    )
    assert [c.title for c in kids] == ["Hokkaido", "Hiroshima", "Nagano"]
    assert counts.varied == 1 and len(rec.requests) == 2
    again = rec.requests[1].prompt
    # the second request is the refine prompt: another strategy, the first answer, the reason
    assert "by geography" not in again and ("by activity" in again or "by days" in again)
    assert "A previous split of it was rejected" in again and "proposed before" in again


@pytest.mark.parametrize(
    ("table", "asked_again"),
    [
        # two of the three parts a rival already has: a near copy, asked for another way
        (["Tokyo", "Kyoto", "Hokkaido", "Nara"], True),
        # the rival's parts in other words are still the same parts
        (["Tokyo (Tokyo)", "The Kyoto", "Sapporo"], True),
        # one shared city of three is a rival, not a copy
        (["Tokyo", "Hiroshima", "Nagano"], False),
    ],
)
def test_a_near_copy_of_a_rival_split_is_asked_for_again(table: list[str], asked_again: bool) -> None:
    rec = Recorder(GOOD, OTHER)
    counts = TaskCounts()
    kids = decompose(
        rec.model,
        spec_of(),
        ROOT,
        [],
        [],
        "geography",
        [],
        counts=counts,
        relatives=[],
        proposed=[[kid(t, "", 3) for t in table]],
        rivals=[[kid(t, "", 3) for t in table]],
        strategies=("geography", "activity", "days"),
    )
    assert counts.varied == int(asked_again) and len(rec.requests) == 1 + int(asked_again)
    assert [c.title for c in kids] == (
        ["Hokkaido", "Hiroshima", "Nagano"] if asked_again else ["Tokyo", "Kyoto", "Osaka"]
    )
    if asked_again:
        assert "proposed before: split it another way" in rec.requests[1].prompt


def test_when_the_second_way_is_no_better_the_first_split_is_kept() -> None:
    rec = Recorder(GOOD, GOOD)
    on_table = [[kid("Tokyo", "", 6), kid("Kyoto", "", 5), kid("Osaka", "", 3)]]
    kids = decompose(
        rec.model,
        spec_of(),
        ROOT,
        [],
        [],
        "geography",
        [],
        relatives=[],
        proposed=on_table,
        strategies=("geography",),
    )
    assert [c.title for c in kids] == ["Tokyo", "Kyoto", "Osaka"] and len(rec.requests) == 2


OVERLAPPING = (
    "- Tokyo: temples and museums (days: 5)\n- Kyoto: Fushimi Inari (days: 5)\n"
    "- Design tours in Tokyo: a design museum (days: 4)"
)
TREE = {"max_depth": 2, "min_children": 2, "max_children": 5, "max_revisions": 2, "approve_threshold": 60}


def test_an_overlapping_answer_is_merged_in_code_without_asking_again() -> None:
    rec = Recorder(OVERLAPPING)
    counts = TaskCounts()
    kids = decompose(
        rec.model, spec_of(tree=TREE), ROOT, [], [], "geography", [], counts=counts, relatives=[]
    )
    assert [c.title for c in kids] == ["Tokyo", "Kyoto"] and kids[0].facts["days"] == 9
    assert counts.repaired == 1 and counts.varied == 0 and len(rec.requests) == 1


def test_an_overlap_that_cannot_be_merged_is_asked_for_again() -> None:
    rec = Recorder(OVERLAPPING, GOOD)
    counts = TaskCounts()
    # min_children is 3 here: merging the two Tokyo children would leave 2
    kids = decompose(rec.model, spec_of(), ROOT, [], [], "geography", [], counts=counts, relatives=[])
    assert [c.title for c in kids] == ["Tokyo", "Kyoto", "Osaka"]
    assert counts.repaired == 0 and counts.varied == 1 and "covered the same thing" in rec.requests[1].prompt


def test_an_executed_leaf_that_breaks_its_facts_is_written_once_more() -> None:
    from specswarm.model import execute
    from tests.test_model_tasks import Node

    rec = Recorder("- Day 1: Gion\n- Day 2: Arashiyama\n- Day 3: Nara", "- Day 1: Gion\n- Day 2: Arashiyama")
    counts = TaskCounts()
    leaf = Node("k1", "Kyoto temples", "Gion and Arashiyama", depth=2, facts={"days": 2})
    out = execute(rec.model, spec_of(), leaf, [ROOT], counts=counts)
    assert out == "- Day 1: Gion\n- Day 2: Arashiyama" and counts.redone == 1
    assert "broke this task's facts" in rec.requests[1].prompt and "'Day 3'" in rec.requests[1].prompt
    # a result that keeps to its facts is written once
    rec = Recorder("- Day 1: Gion\n- Day 2: Arashiyama")
    execute(rec.model, spec_of(), leaf, [ROOT], counts=TaskCounts())
    assert len(rec.requests) == 1


def test_a_rewrite_that_echoes_its_problem_does_not_replace_the_answer() -> None:
    from specswarm.model import execute
    from tests.test_model_tasks import Node

    # a real japan run (embedded model): a one-day leaf planned five museums over nine days; asked
    # again, told "it plans 'April 10th' to 'April 18th' (9 days) but the task has days: 1", it
    # wrote that problem back as its one line
    first = (
        "- Plan a visit to Tokyo's museums on April 10th.\n"
        "- Visit the Tokyo Metropolitan Museum of Modern Art (Tate Modern) on April 12th.\n"
        "- Visit the National Museum of Japanese History (NHK Museum) on April 14th.\n"
        "- Visit the Tokyo National Museum of Science and Technology (NIST Museum) on April 16th.\n"
        "- Visit the Tokyo National Museum of Fine Arts (TNMA Museum) on April 18th."
    )
    echo = "- Visit Tokyo's museums from April 10th to April 18th, keeping to the specified days."
    leaf = Node("t2", "Visit Tokyo's museums", "", depth=2, facts={"days": 1})
    rec = Recorder(first, echo)
    counts = TaskCounts()
    assert execute(rec.model, spec_of(), leaf, [ROOT], counts=counts) == first
    assert counts.redone == 1 and "'April 10th' to 'April 18th' (9 days)" in rec.requests[1].prompt
    # a rewrite that keeps to the facts replaces it, however short
    rec = Recorder(first, "- Tokyo National Museum, 9:30 to 17:00")
    assert execute(rec.model, spec_of(), leaf, [ROOT], counts=TaskCounts()).startswith("- Tokyo National")
    # nor one that only restates its task (its title and its fact), whatever it breaks: the one
    # line that was left of a real run's "Explore nearby mountains" once its sibling leaves'
    # items were left out, here as a rewrite of a dated first answer
    hike = Node("h2", "Explore nearby mountains", "", depth=2, facts={"days": 1})
    dated = "- Start at Mount Fuji on April 2nd.\n- Hike from April 3rd to April 4th.\n- Summit on April 5th."
    rec = Recorder(dated, "- Explore nearby mountains for 1 day.")
    assert execute(rec.model, spec_of(), hike, [ROOT], counts=TaskCounts()) == dated


def test_a_revision_names_each_problem_once_hard_checks_first() -> None:
    from types import SimpleNamespace

    from specswarm.swarm.roles.decomposer import review_lines

    overlap = 'overlap: #1 "Tokyo" and #4 "Design tours in Tokyo" both plan Tokyo'
    coverage = "coverage: 4/18 key terms of the parent's detail covered"
    votes = [
        SimpleNamespace(approve=False, critique=f"{coverage}\n{overlap}"),
        SimpleNamespace(approve=False, critique=f"{overlap}\n{coverage}"),
        SimpleNamespace(approve=False, critique="no problems found"),
        SimpleNamespace(approve=True, critique="units: #2 says 3 days"),
    ]
    assert review_lines(SimpleNamespace(votes=votes)) == [overlap, coverage]  # type: ignore[arg-type]
