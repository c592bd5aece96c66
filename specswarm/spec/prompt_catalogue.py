"""The prompt templates' catalogue: per task, the variables its template is given at run time
(:data:`TASK_VARIABLES`), and representative values of each (:func:`sample_contexts`): every
template is rendered on these when a spec is loaded (:mod:`specswarm.spec.prompting`), and
``tests/test_prompting.py`` proves that every task's real context has these names and shapes.
"""

from __future__ import annotations

import copy
from typing import Any

from specswarm.spec.values import Constraint

_SPLIT = ("limits", "constraints", "fact_fields", "is_last_level")
NO_SPAN: dict[str, Any] = {"field": "", "start": 0, "end": 0, "total": 0, "labels": [], "lines": 0}
"""(execute) ``span`` of a leaf the plan's schedule gives no range of its own."""
TASK_VARIABLES: dict[str, tuple[str, ...]] = {
    "decompose": ("goal", "context", "language", "node", "ancestors", "siblings", "strategy", *_SPLIT),
    "refine": (
        "goal",
        "context",
        "language",
        "node",
        "ancestors",
        "siblings",
        "strategy",
        "proposal",
        "critiques",
        *_SPLIT,
    ),
    "score": ("goal", "context", "language", "node", "ancestors", "proposal", "lens", *_SPLIT),
    "execute": (
        "goal",
        "context",
        "language",
        "node",
        "leaf",
        "ancestors",
        "siblings",
        "avoid",
        "vague",
        "judged",
        "planned",
        "critique",
        "failed",
        "previous",
        "span",
        "kept",
        "wanted",
        "form",
    ),
    "summarize": ("goal", "context", "language", "node", "ancestors", "children"),
}
"""Task -> the variables its prompt template is given (docs/how-to/prompt-templates.md and the
schema's ``prompts`` descriptions say what each one holds)."""


_ROOT = {"id": "root", "title": "Plan a two-week trip to Japan", "detail": "", "depth": 0, "facts": {}}
_STEP = {
    "id": "3f5a0c1b2d4e6f70.1",
    "title": "Kyoto (4 days)",
    "detail": "temples, gardens and a day trip to Nara",
    "depth": 1,
    "facts": {"days": 4},
}
_NODE = {
    "id": "8c2e4a6b0d1f3e57.0",
    "title": "Higashiyama temples (1 day)",
    "detail": "Kiyomizu-dera early, then Ninenzaka",
    "depth": 2,
    "facts": {"days": 1},
}
_SIBLING = {**_NODE, "id": "8c2e4a6b0d1f3e57.1", "title": "Arashiyama (1 day)", "detail": "bamboo grove"}
_BARE_LEAF = {"id": "3f5a0c1b2d4e6f70.0", "title": "Book the flights", "detail": "", "depth": 1, "facts": {}}

_RICH: dict[str, Any] = {
    "goal": _ROOT["title"],
    "language": "Write in Hindi, the language of the goal.",
    "context": "Two adults, first visit, mid-April, about EUR 4000",
    "node": _NODE,
    "leaf": _NODE,
    "ancestors": [_ROOT, _STEP],
    "siblings": [_SIBLING],
    "strategy": "by geography",
    "critiques": ["overlap: 'Temples' and 'Kyoto temples' are about the same place"],
    "constraints": [
        Constraint("sum", field="days", total=14, applies_to="root").to_json(),
        Constraint("mention", terms=("Tokyo", "Kyoto"), applies_to="root").to_json(),
        Constraint("forbid", terms=("cruise",), applies_to="all").to_json(),
    ],
    "limits": {"min_children": 2, "max_children": 6, "target": 4},
    "is_last_level": True,
    "fact_fields": ["days"],
    "proposal": [
        {"title": "Kiyomizu-dera", "detail": "at 8:00", "leaf": True, "facts": {"days": 1}},
        {"title": "Gion at dusk", "detail": "", "leaf": False, "facts": {}},
    ],
    "lens": {"name": "feasibility", "question": "Can each part be done as planned, in the time it has?"},
    "avoid": ["Kiyomizu-dera at 8:00, before the tour buses"],
    "vague": True,
    "judged": True,
    "planned": [
        {
            "title": "Fushimi Inari (1 day)",
            "lines": ["06:30 the torii gates before the crowds", "Inari sushi, 600 JPY"],
        }
    ],
    "critique": ["concrete: 3 item lines, 120 characters: write at least 5 lines and 200 characters"],
    "failed": ["concrete"],
    "previous": "- Visit the temples of Higashiyama",
    "kept": ["06:30 Kiyomizu-dera before the tour buses, 500 JPY"],
    "wanted": 4,
    "span": {"field": "days", "start": 6, "end": 7, "total": 14, "labels": ["Day 6", "Day 7"], "lines": 3},
    "form": ["Day 6", "Day 7", "Day 7"],
    "children": [
        {
            "title": _NODE["title"],
            "detail": _NODE["detail"],
            "facts": _NODE["facts"],
            "leaf": True,
            "text": "- 08:00 Kiyomizu-dera before the tour buses\n- 10:30 Ninenzaka",
        },
        {
            "title": _SIBLING["title"],
            "detail": _SIBLING["detail"],
            "facts": _SIBLING["facts"],
            "leaf": False,
            "text": "A morning in the bamboo grove, then the river by boat.",
        },
    ],
}
"""One value per variable, every optional one present (nested facts, siblings, critiques...)."""

_SPLIT_BARE = {
    "context": "",
    "language": "",
    "node": _ROOT,
    "ancestors": [],
    "constraints": [],
    "fact_fields": [],
}
_BARE: dict[str, dict[str, Any]] = {
    "decompose": {**_SPLIT_BARE, "language": "", "siblings": [], "is_last_level": False},
    "refine": {**_SPLIT_BARE, "language": "", "siblings": [], "is_last_level": False, "critiques": []},
    "score": {**_SPLIT_BARE, "language": "", "is_last_level": False},
    "execute": {
        "context": "",
        "language": "",
        "node": _BARE_LEAF,
        "leaf": _BARE_LEAF,
        "ancestors": [_ROOT],
        "siblings": [],
    }
    | {"avoid": [], "vague": False, "judged": False, "planned": []}
    | {"critique": [], "failed": [], "previous": "", "span": NO_SPAN, "kept": [], "wanted": 0}
    | {"form": []},
    "summarize": {
        "context": "",
        "language": "",
        "node": _ROOT,
        "ancestors": [],
        "children": [
            {"title": "Book the flights", "detail": "", "facts": {}, "leaf": True, "text": "- Book"}
        ],
    },
}
"""Per task, the values that can be empty at run time, empty (the root node, no siblings...)."""


def sample_contexts(task: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """Two representative contexts for ``task``'s template: every optional value present, and
    every value that may be empty at run time empty. Both have exactly :data:`TASK_VARIABLES`."""
    rich = {name: _RICH[name] for name in TASK_VARIABLES[task]}
    return copy.deepcopy(rich), copy.deepcopy(rich | _BARE[task])  # a template may mutate its data
