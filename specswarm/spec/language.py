"""The language a plan is written in: the spec's ``language`` field, else the goal's script.

:func:`plan_language` answers with a :class:`Language`: a code (``hi``, ``ja``; None when it is
not known), a name for prompts ("Hindi", or the field as written), and the headings the rendered
plan uses. Without a ``language`` field the language is read off the letters of the goal and
its context: a script that one language mostly writes (Devanagari, kana, Hangul, Thai, ...)
names it; Latin letters cannot tell English from Spanish, so they name none. A goal in Latin
letters beyond ASCII (Spanish, French, German, Polish...) gets prompts asking for "the language
the goal is written in", unless ``specswarm plan`` finds its name by asking the model
(:mod:`specswarm.swarm.launcher.language`); one in plain ASCII letters gets prompts that say
nothing of the language (set ``language`` to name one). :func:`letter_script` and
:func:`main_script` name the script of a letter and of a text.
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from dataclasses import dataclass, field

_SCRIPTS = {
    "DEVANAGARI": "hi",
    "HIRAGANA": "ja",
    "KATAKANA": "ja",
    "CJK": "zh",
    "HANGUL": "ko",
    "THAI": "th",
    "ARABIC": "ar",
    "CYRILLIC": "ru",
    "GREEK": "el",
    "HEBREW": "he",
    "BENGALI": "bn",
    "TAMIL": "ta",
}
"""The first word of a letter's Unicode name -> the language that script most often writes."""

_HEADINGS: dict[str, tuple[str, ...]] = {
    # code: (name in English, overview, schedule, provenance, status, swarm, part)
    "en": ("English", "Overview", "Schedule", "Provenance", "Status", "Swarm", "Part"),
    "hi": ("Hindi", "सारांश", "समय-सारणी", "स्रोत", "स्थिति", "झुंड", "भाग"),
    "es": ("Spanish", "Resumen", "Calendario", "Procedencia", "Estado", "Enjambre", "Parte"),
    "fr": ("French", "Vue d'ensemble", "Calendrier", "Provenance", "Statut", "Essaim", "Partie"),
    "de": ("German", "Überblick", "Zeitplan", "Herkunft", "Status", "Schwarm", "Teil"),
    "pt": ("Portuguese", "Visão geral", "Cronograma", "Proveniência", "Estado", "Enxame", "Parte"),
    "it": ("Italian", "Panoramica", "Programma", "Provenienza", "Stato", "Sciame", "Parte"),
    "ja": ("Japanese", "概要", "日程", "来歴", "状態", "スウォーム", "項目"),
    "zh": ("Chinese", "概览", "日程", "来源", "状态", "群体", "部分"),
    "ko": ("Korean", "개요", "일정", "출처", "상태", "스웜", "항목"),
    "ru": ("Russian", "Обзор", "Расписание", "Происхождение", "Статус", "Рой", "Часть"),
    "ar": ("Arabic", "نظرة عامة", "الجدول الزمني", "المصدر", "الحالة", "السرب", "الجزء"),
}
"""The rendered plan's headings in the languages they are written for (others: English)."""

_UNITS: dict[str, tuple[str, str, str]] = {
    # code: (day n, week n, month n)
    "hi": ("दिन {n}", "सप्ताह {n}", "महीना {n}"),
    "es": ("Día {n}", "Semana {n}", "Mes {n}"),
    "fr": ("Jour {n}", "Semaine {n}", "Mois {n}"),
    "de": ("Tag {n}", "Woche {n}", "Monat {n}"),
    "pt": ("Dia {n}", "Semana {n}", "Mês {n}"),
    "it": ("Giorno {n}", "Settimana {n}", "Mese {n}"),
    "ja": ("{n}日目", "第{n}週", "{n}か月目"),
    "zh": ("第{n}天", "第{n}周", "第{n}个月"),
    "ko": ("{n}일차", "{n}주차", "{n}개월차"),
    "ru": ("День {n}", "Неделя {n}", "Месяц {n}"),
    "ar": ("اليوم {n}", "الأسبوع {n}", "الشهر {n}"),
}
"""How a line names day, week and month n of a schedule, in the languages headings are written
for (English and the others: from the field's name, "Day 6")."""
_UNIT_FIELDS = {"day": 0, "days": 0, "week": 1, "weeks": 1, "month": 2, "months": 2}

_NAMES = {"th": "Thai", "el": "Greek", "he": "Hebrew", "bn": "Bengali", "ta": "Tamil"}


@dataclass(frozen=True)
class Language:
    """A plan's language: ``code`` (None: not known), ``name`` (for prompts; None: "the
    language the goal is written in") and the rendered ``headings``. ``foreign``: not known,
    but the goal's Latin letters include ones English does not write (é, ñ, ß, ø, ł...)."""

    code: str | None
    name: str | None
    headings: dict[str, str] = field(default_factory=dict)
    foreign: bool = False

    @property
    def instruction(self) -> str:
        """What a prompt says of the language to write in: "" when it is not known and the goal
        is in plain ASCII letters (the prompts stay as they are); "Write in the language the
        goal is written in." when the goal's letters go beyond them (harmless for an English
        goal that names a café)."""
        if self.name is None:
            return "Write in the language the goal is written in." if self.foreign else ""
        return f"Write in {self.name}, the language of the goal."

    def unit_label(self, field_name: str) -> str | None:
        """How a line in this language names unit ``{n}`` of a schedule's ``field_name``
        ("第{n}天" for days in Chinese): for days, weeks and months in a language the headings
        are written for, English aside; None otherwise."""
        row = _UNITS.get(self.code or "")
        k = _UNIT_FIELDS.get(field_name.lower())
        return row[k] if row is not None and k is not None else None


def _headings(code: str | None) -> dict[str, str]:
    row = _HEADINGS.get(code or "en", _HEADINGS["en"])
    keys = ("overview", "schedule", "provenance", "status", "swarm", "part")
    return dict(zip(keys, row[1:], strict=True))


def language_named(text: str) -> Language:
    """The language a ``language`` field names: a code (``hi``) or a name (``Hindi``, any case);
    one not in the catalogue is kept as written for prompts, with English headings."""
    key = text.strip().casefold()
    for code, row in _HEADINGS.items():
        if key in (code, row[0].casefold()):
            return Language(code, row[0], _headings(code))
    for code, name in _NAMES.items():
        if key in (code, name.casefold()):
            return Language(code, name, _headings(code))
    return Language(None, text.strip(), _headings(None))


def script_language(text: str) -> str | None:
    """The language code the letters of ``text`` point to, or None (mostly Latin letters, none,
    or no script that names one). Kana among Han characters reads as Japanese."""
    counts: Counter[str] = Counter()
    for ch in text:
        if not ch.isalpha():
            continue
        word = unicodedata.name(ch, "").split(" ", 1)[0]
        counts[_SCRIPTS.get(word, "latin" if word == "LATIN" else "other")] += 1
    if not counts:
        return None
    if counts["ja"] and counts["zh"]:
        counts["ja"] += counts.pop("zh")
    top, n = counts.most_common(1)[0]
    return top if top not in ("latin", "other") and n * 2 > sum(counts.values()) else None


def beyond_ascii(text: str) -> bool:
    """Whether ``text`` has a Latin letter outside ASCII (é, ñ, ß, ø, ł...): English writes
    none, most other languages in Latin letters write some in any sentence or two."""
    return any(ch.isalpha() and not ch.isascii() and letter_script(ch) == "LATIN" for ch in text)


_HAN_AND_KANA = ("CJK", "HIRAGANA", "KATAKANA")


def letter_script(ch: str) -> str | None:
    """The script of one character, or None when it is no letter: the first word of its
    Unicode name after NFKC (``LATIN``, ``DEVANAGARI``, ``HANGUL``; a full-width ``Ａ`` is
    ``LATIN``), with Han characters and kana one script, ``CJK``, as Japanese writes both."""
    folded = unicodedata.normalize("NFKC", ch)[:1]
    if not folded.isalpha():
        return None
    word = unicodedata.name(folded, "").split(" ", 1)[0]
    return "CJK" if word.startswith(_HAN_AND_KANA) else word or None


def main_script(text: str) -> str | None:
    """The script (:func:`letter_script`) most letters of ``text`` are written in (a tie: the
    one met first), or None when it has no letter."""
    counts = Counter(s for s in map(letter_script, text) if s is not None)
    return counts.most_common(1)[0][0] if counts else None


def plan_language(goal: str, context: str = "", declared: str | None = None) -> Language:
    """The language of a plan: ``declared`` (the spec's ``language``) when given, else the one
    the goal's and context's letters point to (:func:`script_language`), else unknown."""
    if declared:
        return language_named(declared)
    code = script_language(f"{goal}\n{context}")
    if code is None:
        return Language(None, None, _headings(None), foreign=beyond_ascii(f"{goal}\n{context}"))
    name = _HEADINGS[code][0] if code in _HEADINGS else _NAMES.get(code)
    return Language(code, name, _headings(code))


def language_hint(goal: str, context: str = "", declared: str | None = None) -> str | None:
    """What to tell the user of a spec whose goal is written in Latin letters beyond English
    (é, ñ, ß...) and that names no ``language``: Latin letters cannot tell which language it
    is, so ``specswarm plan`` asks the model (:mod:`specswarm.swarm.launcher.language`). None
    when there is nothing to tell."""
    if declared or not plan_language(goal, context).foreign:
        return None
    return (
        "the goal is written in letters beyond English but the spec names no language: "
        "`specswarm plan` asks the model which one it is (failing that, the prompts ask for the "
        "goal's own language while headings and day labels stay English); set `language:` (a "
        "code such as es, or a name) to choose"
    )
