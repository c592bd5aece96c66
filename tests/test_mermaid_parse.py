"""The Markdown's diagram parses with Mermaid's own parser and keeps every character of every title.

Mermaid's parser is JavaScript: ``.ci/mermaid/`` pins it (``npm ci --prefix .ci/mermaid``, which
``.ci/run`` does). Without node or that install the parser test is skipped, unless
``SPECSWARM_REQUIRE_MERMAID=1`` (set by ``.ci/run``) makes it a failure.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from specswarm.plan.fold import Plan, fold
from specswarm.render import render_plan
from specswarm.testing.synth import Swarm, minimal_spec

CHECKER = Path(__file__).resolve().parent.parent / ".ci" / "mermaid"

TITLES = [
    "दिल्ली में पुराने किले और जामा मस्जिद की सैर",  # Devanagari: vowel signs are combining marks
    "เที่ยวชมวัดพระแก้วและพระบรมมหาราชวัง",  # Thai: no spaces between words
    'The "Golden" Pavilion [Kinkaku-ji] {morning} (2 h)',
    "Budget < 200 € & tickets | #1 choice; `book` early > late",
    "Transport arrangements for the venue, catering and the speakers' hotel",
]

_ENTITY = {"quot": '"', "lt": "<", "gt": ">", "amp": "&", "35": "#", "96": "`"}


def titled_plan(titles: list[str]) -> Plan:
    """A converged run whose root is split into one leaf per title."""
    sw = Swarm(spec=minimal_spec(goal="Titles in any script"), seed=3)
    sw.accept("root", titles, leaf=True)
    sw.finish_leaves()
    return fold(sw.events)


def diagram(plan: Plan) -> str:
    text = render_plan(plan, "markdown")
    return text.split("```mermaid\n", 1)[1].split("\n```", 1)[0]


def test_every_title_keeps_every_character_in_the_diagram() -> None:
    labels = re.findall(r'\(\["(.*?)"\]\)', diagram(titled_plan(TITLES)))
    shown = [re.sub(r"#(\w+);", lambda m: _ENTITY[m.group(1)], x.replace("<br/>", " ")) for x in labels]
    assert shown == [f"{i} {t}" for i, t in enumerate(TITLES, 1)]


def _checker() -> Path | None:
    if shutil.which("node") and (CHECKER / "node_modules" / "mermaid").is_dir():
        return CHECKER / "parse.mjs"
    if os.environ.get("SPECSWARM_REQUIRE_MERMAID") == "1":
        pytest.fail("Mermaid's parser is not installed: npm ci --prefix .ci/mermaid")
    pytest.skip("Mermaid's parser is not installed (npm ci --prefix .ci/mermaid)")


def test_mermaid_parses_the_diagram() -> None:
    from tests.test_render import hostile_plan

    script = _checker()
    diagrams = [diagram(titled_plan(TITLES)), diagram(hostile_plan()), 'graph TD\n  n0["a "b" ]"]']
    done = subprocess.run(
        ["node", str(script)], input=json.dumps(diagrams), capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    errors = json.loads(done.stdout)
    assert errors[:2] == [None, None], errors
    assert errors[2] is not None  # the parser does refuse a broken label
