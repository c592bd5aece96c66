"""Scripts written without spaces (:mod:`specswarm.critics.scripts`): runs of their letters,
read as character bigrams, and how much of a detail a text mentions."""

from __future__ import annotations

from specswarm.critics.scripts import cover, spaced_part, stretches, unspaced_runs, unspaced_units, word_count


def test_runs_end_at_digits_punctuation_and_spaced_scripts() -> None:
    assert unspaced_runs("购买咖啡机：预算为10万元 Python 入门") == ["购买咖啡机", "预算为", "万元", "入门"]
    assert unspaced_runs("ไปเที่ยว Tokyo") == ["ไปเที่ยว"]  # Thai vowel signs stay in their run
    assert unspaced_runs("Plan a trip to Kyoto; 서울 여행") == []  # Hangul is written with spaces
    assert unspaced_units("员工培训") == {"员工", "工培", "培训"}


def test_words_of_a_phrase_count_by_its_letters() -> None:
    assert word_count("开始设计咖啡馆的外观") == 5  # one sentence, no space, five words' worth
    assert word_count("Book the venue early") == 4
    assert spaced_part("Tokyo 東京") == "Tokyo   "


def test_cover_counts_letters_of_the_detail_the_children_mention() -> None:
    said = unspaced_units("预算三十万元；装修和设备")
    covered, wanted, missing = cover("预算三十万元人民币，包括装修、设备和员工培训", "开咖啡馆", said)
    assert (covered, wanted) == (10, 20)
    assert missing == ["人民币", "包括", "和员工培训"]


def test_stretches_are_the_letters_some_unit_holds() -> None:
    assert stretches("购买咖啡机和冰箱", {"咖啡", "啡机", "冰箱"}) == ["咖啡机", "冰箱"]
    assert stretches("员工培训", {"员工"}) == ["员工"]
