"""Names told by capitals (critics/names.py): what a line names, when two lines name the same
thing, and the board's lenses that use them (a name planned twice, a name planned elsewhere)."""

from __future__ import annotations

from specswarm.critics.names import (
    Lexicon,
    named_elsewhere,
    names,
    same_name,
    same_word,
    shared_names,
    unclaimed,
)
from specswarm.critics.results import ResultTask, Written, check_result

KNOWN = "Plan a two-week trip to Japan Tokyo Explore Tokyo's temples days 2"


def _keys(line: str, texts: list[str], known: str = KNOWN) -> list[set[str]]:
    lex = Lexicon.of([line, *texts], known)
    return [set(n.keys) for n in names(line, lex)]


def test_a_name_is_a_run_of_capitals_its_common_words_and_the_task_left_out() -> None:
    line = "Day 1: 08:00 visit the Sensoji Temple in Tokyo, then the Nakamise shopping street"
    # "Temple" is written in lower case elsewhere: a common word; "Tokyo" is the task's own
    assert _keys(line, ["Day 2: two more temples in Ueno"]) == [{"sensoji"}, {"nakamise"}]
    # without a lower-case "temples" the word identifies the name too
    assert _keys(line, [], "Plan a trip to Japan Tokyo") == [{"sensoji", "temple"}, {"nakamise"}]


def test_sentence_starts_abbreviations_and_short_words_name_nothing() -> None:
    line = "Day 3: Arrive at 10 AM. Lunch costs 2,000 JPY at a stall."
    assert _keys(line, []) == []
    # a word capitalised mid-sentence elsewhere is a name at a sentence's start too
    assert _keys("Kinkakuji opens at 09:00", ["Day 9: then the Kinkakuji pond"]) == [{"kinkakuji"}]


def test_caseless_scripts_name_nothing() -> None:
    assert _keys("第6天：参观伏见稻荷大社，门票免费", ["第7天：伏见稻荷大社"], "日本") == []


def test_forms_of_one_word_meet_without_a_stemmer() -> None:
    assert same_word("temple", "temples") and same_word("japan", "japanese")
    assert same_word("italy", "italian") and same_word("shrine", "shrines")
    assert not same_word("tokyo", "tower") and not same_word("higashiji", "higashiyama")
    assert not same_word("kanabe", "kanaro")
    assert not same_word("ueno", "uenohara")


def test_one_name_within_another_is_the_same_a_shared_head_is_not() -> None:
    assert same_name(frozenset({"fushimi"}), frozenset({"fushimi", "inari", "shrine"}))
    assert same_name(frozenset({"imperial", "palace"}), frozenset({"kiyoto", "imperial", "palace"}))
    assert not same_name(frozenset({"meiji", "shrine"}), frozenset({"fushimi", "inari", "shrine"}))


def test_shared_names_point_at_the_line_that_named_it_first() -> None:
    mine = ["Day 13: 09:00 Sensoji Temple at opening, 0 JPY", "Day 13: Ueno Park at noon"]
    theirs = ["Day 1: the Meiji Shrine at dawn", "Day 2: evening at Sensoji Temple, Asakusa"]
    hits = shared_names(mine, theirs, "Plan a trip to Japan")
    assert [(i, j, n.surface) for i, j, n in hits] == [(0, 1, "Sensoji Temple")]


def test_a_name_another_node_plans_is_found_unless_the_leaf_says_it_too() -> None:
    lines = ["Day 6: 14:00 the path towards Mount Fuji", "Day 6: 09:00 Fushimi Inari gates"]
    rest = {'"Plan a day hike at Mount Fuji" (3.1)': "Plan a day hike at Mount Fuji. Fifth station"}
    found = named_elsewhere(lines, rest, "Kyoto Visit Fushimi Inari Shrine")
    assert [(i, node) for i, node, _ in found] == [(0, '"Plan a day hike at Mount Fuji" (3.1)')]
    assert named_elsewhere(lines, rest, "Kyoto Mount Fuji day trip") == []


def test_a_name_an_ancestor_says_and_another_leaf_is_titled_after_is_that_leaf_s() -> None:
    above = "Kyoto Visit temples like Fushimi Inari Shrine and Kinkakuji days 4"
    titles = ["Visit Fushimi Inari Shrine", "Explore Tokyo's temples"]
    kept = unclaimed(above, titles, "Explore other temples in Kyoto")
    assert "Fushimi" not in kept and "Inari" not in kept
    assert "Kinkakuji" in kept and "Kyoto" in kept  # no leaf is titled after them
    assert unclaimed(above, titles, "Fushimi Inari Shrine at dawn") == above  # the leaf says it too
    lines = ["Day 8: 08:00 Fushimi Inari Shrine's thousand gates, free entry"]
    rest = {'"Visit Fushimi Inari Shrine" (2.1)': "Visit Fushimi Inari Shrine."}
    assert named_elsewhere(lines, rest, above) == []
    assert [node for _, node, _ in named_elsewhere(lines, rest, kept)] == [
        '"Visit Fushimi Inari Shrine" (2.1)'
    ]


LINES = [
    "Day 13: 09:00 Kinkakuji Temple's golden pavilion, 500 JPY entry",
    "Day 13: 11:30 moss garden of Saihoji, reservation by postcard",
    "Day 13: 13:00 lunch of yudofu near Nanzenji, 3,000 JPY",
    "Day 13: 15:00 the Philosopher's Path, 2 km on foot",
    "Day 13: 17:00 Ginkakuji at closing time, 500 JPY",
]
TASK = ResultTask(
    facts={"days": 1},
    task="Plan a two-week trip to Japan Design tour Kyoto gardens days 1",
    own="Design tour Kyoto gardens days 1",
    others={},
    ledger=(Written("Kyoto temples", ("Day 8: 08:00 Kinkakuji and its pond, 500 JPY",), "2.2"),),
    rest={'"Visit Fushimi Inari Shrine" (2.1)': "Visit Fushimi Inari Shrine. Torii gates at dawn"},
    frame="Tokyo Kyoto Design tour",
)


def test_the_board_holds_a_name_planned_before_or_elsewhere_against_a_result() -> None:
    checks = {c.name: c for c in check_result("\n".join(f"- {x}" for x in LINES), TASK)}
    assert checks["new"].passed is False and "line 1" in checks["new"].note
    assert checks["on_task"].passed
    fushimi = [*LINES[1:], "Day 13: 19:00 Fushimi Inari by lantern light"]
    checks = {c.name: c for c in check_result("\n".join(f"- {x}" for x in fushimi), TASK)}
    assert checks["new"].passed
    assert (
        not checks["on_task"].passed
        and '"Fushimi Inari", which "Visit Fushimi Inari Shrine"' in checks["on_task"].note
    )
