"""Which language a goal is written in, asked of the model: for a goal in Latin letters, which
cannot tell Spanish from Portuguese or English by themselves (:mod:`specswarm.spec.language`
reads every other script off its letters).

:func:`ask_language` asks once, greedy, for the language's English name in one word, and keeps
the answer when it names a language the rendered plan has headings for
(:func:`~specswarm.spec.language.language_named`) or one the platform's locale table knows
(prompts in it, English headings); anything else (English, a sentence, a name neither knows)
is no answer, and the plan keeps the prompts' "the language the goal is written in".
"""

from __future__ import annotations

import locale
import logging
import re

from specswarm.errors import ModelError
from specswarm.model.base import GenerationRequest, Model
from specswarm.spec.language import Language, language_named

log = logging.getLogger("specswarm.model")

SYSTEM = "You identify the language of a text."
PROMPT = (
    "Text:\n{text}\n\n"
    "Which language is the text above written in? Answer with the language's name in English, "
    "one word only."
)
MAX_CHARS = 600
"""Characters of the goal and context shown: a sentence or two tells the language."""

_WORD = re.compile(r"[A-Za-z]{3,20}")


def language_request(goal: str, context: str = "") -> GenerationRequest:
    """The one request :func:`ask_language` sends (greedy, a few tokens)."""
    text = f"{goal}\n{context}".strip()[:MAX_CHARS]
    return GenerationRequest(prompt=PROMPT.format(text=text), system=SYSTEM, max_tokens=8)


def parse_language(answer: str) -> Language | None:
    """The first language ``answer`` names ("Spanish", or "The text is in Spanish"), unless it
    is English; else None. A language the rendered plan has headings for comes with its code;
    another one the platform's locale table names ("Polish", "Dutch": :func:`locale_language`)
    comes with its name only, for the prompts, and English headings."""
    words = _WORD.findall(answer[:200])
    for word in words:
        named = language_named(word)
        if named.code is not None and named.name is not None and named.name.casefold() == word.casefold():
            return named if named.code != "en" else None
    # the locale table counts only as the whole answer, as asked ("Polish"): it also names a
    # country ("Japan"), which an answer may mention otherwise
    code = locale_language(words[0]) if len(words) == 1 and answer.strip(" .\n") == words[0] else None
    if code is None or code == "en":
        return None
    named = language_named(code)  # "Deutsch": German, with its headings
    return named if named.code is not None else language_named(words[0].capitalize())


def locale_language(name: str) -> str | None:
    """The language code the C library's locale table gives for a language's English name
    (``locale.locale_alias``: "polish" -> ``pl_PL...``, "dutch" -> ``nl_NL...``), or None when it
    names none."""
    alias = locale.locale_alias.get(name.casefold(), "")
    code = alias.split("_", 1)[0].split(".", 1)[0]
    return code if "_" in alias and code.isalpha() and code.islower() and 2 <= len(code) <= 3 else None


def ask_language(model: Model, goal: str, context: str = "") -> Language | None:
    """The language ``model`` says the goal is written in (:func:`parse_language`), or None
    when it names none the plan can use or fails (logged)."""
    try:
        answer = model.generate(language_request(goal, context)).text
    except ModelError as exc:
        log.info("asking the goal's language failed: %s", exc)
        return None
    found = parse_language(answer)
    code = found.code if found is not None else None
    log.info("the goal's language, as the model names it: %r -> %s", answer.strip()[:40], code)
    return found
