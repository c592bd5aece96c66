"""Backends without a real model: record/replay cassettes and a scripted responder.

Cassette format: a JSON Lines file, one recording per line::

    {"key": "<sha256>", "prompt": "...", "system": "...", "params": {...},
     "text": "...", "tokens": 57, "model": "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"}

``key`` is :func:`request_key`: the sha256 of the canonical JSON of
(system, prompt, max_tokens, temperature, top_k, seed, repeat_penalty, stop), with the
schema's name and text appended for a schema-constrained request (which then also records
``"schema"`` and ``"structured"``; a request without a schema keys as it always did).
A :class:`ReplayModel` never makes anything up: a request it has no recording
for raises :class:`~specswarm.errors.ReplayMissError` naming the prompt.

:class:`ScriptedModel` answers instantly from a Python function. The default
function, :func:`scripted_answer`, recognises the five default prompt
templates and writes well-formed, deterministic answers derived from the
prompt (a score; a summary of two sentences naming the parts; an execution list -- six
specific lines for a result the board judges, other ones when it writes a rejected result
again; and splits that the scorers' critics accept), so a
whole swarm runs in tests and benchmarks with no model. Its
splits: at the root, one distinct aspect per child (the names the spec says
to mention first, the facts a sum constraint asks for); below the root, children
that refine their node ("Transport for venue essentials": a component and the node's first two
words) with a distinct component each, never a re-listing of the root's stages.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from specswarm.critics.titles import title_terms
from specswarm.errors import ModelError, ReplayMissError
from specswarm.model.base import Generation, GenerationRequest, Model, accepts_schema
from specswarm.protocol.canonical import canonical_bytes


def request_key(req: GenerationRequest) -> str:
    """The cassette key of a request (what makes two requests the same)."""
    parts: list[Any] = [
        req.system,
        req.prompt,
        req.max_tokens,
        req.temperature,
        req.top_k,
        req.seed,
        req.repeat_penalty,
        list(req.stop),
    ]
    if req.schema is not None:  # only then: the keys of every older cassette stay as they were
        parts += [req.schema.name, req.schema.text]
    return hashlib.sha256(canonical_bytes(parts)).hexdigest()


def _first_line(req: GenerationRequest) -> str:
    line = next((ln.strip() for ln in req.prompt.splitlines() if ln.strip()), "")
    return line if len(line) <= 100 else line[:97] + "..."


def load_cassette(path: str | Path) -> dict[str, dict[str, Any]]:
    """Read a cassette into {key: recording}; a later line with the same key wins."""
    records: dict[str, dict[str, Any]] = {}
    p = Path(path)
    try:
        lines = p.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise ModelError(f"replay cassette {str(p)!r} does not exist") from None
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
            records[str(rec["key"])] = rec
        except (ValueError, KeyError, TypeError) as exc:
            raise ModelError(f"{p}:{number}: not a cassette record ({exc})") from exc
    return records


class ReplayModel:
    """Answers only with recorded outputs; a miss is an error, never an invention."""

    instant = True
    """Recorded answers need no machine-wide generation slot."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._records = load_cassette(self.path)
        models = {str(r.get("model", "")) for r in self._records.values()}
        self.name = "replay:" + (models.pop() if len(models) == 1 else self.path.name)
        self.accepts_schema = any("schema" in r for r in self._records.values())
        """A cassette recorded from schema-constrained requests replays them."""

    def generate(self, req: GenerationRequest) -> Generation:
        rec = self._records.get(request_key(req))
        if rec is None:
            raise ReplayMissError(
                f"replay cassette {self.path} has no recording for the prompt starting "
                f"{_first_line(req)!r}; record it with a real backend and model.cassette set"
            )
        return Generation(
            text=str(rec["text"]),
            tokens=int(rec.get("tokens", 0)),
            seconds=0.0,
            model=str(rec.get("model", self.name)),
            structured=bool(rec.get("structured", False)),
        )


class RecordingModel:
    """Wraps a real model and appends every answer to a cassette (one JSON line each)."""

    def __init__(self, inner: Model, path: str | Path) -> None:
        self.inner = inner
        self.path = Path(path)
        self.name = inner.name
        self._lock = threading.Lock()

    @property
    def instant(self) -> bool:
        """As instant as the model it records."""
        return self.inner.instant

    @property
    def accepts_schema(self) -> bool:
        """As the model it records."""
        return accepts_schema(self.inner)

    def generate(self, req: GenerationRequest) -> Generation:
        gen = self.inner.generate(req)
        record = {
            "key": request_key(req),
            "prompt": req.prompt,
            "system": req.system,
            "params": req.params(),
            "text": gen.text,
            "tokens": gen.tokens,
            "model": gen.model,
        }
        if req.schema is not None:
            record.update(schema={"name": req.schema.name, "schema": req.schema.value()})
            record.update(structured=gen.structured)
        line = json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n"
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.path, "a", encoding="utf-8") as fh:
                fh.write(line)
        return gen


Responder = Callable[[GenerationRequest], str]


class ScriptedModel:
    """Zero-latency model whose answers come from ``fn(request) -> text``."""

    instant = True
    """No real model: no machine-wide generation slot needed."""

    def __init__(self, fn: Responder | None = None, name: str = "scripted") -> None:
        self.fn = fn or scripted_answer
        self.name = name
        self.calls: list[GenerationRequest] = []

    def generate(self, req: GenerationRequest) -> Generation:
        self.calls.append(req)
        text = self.fn(req)
        delay = _test_delay()
        if delay > 0:
            time.sleep(delay)  # in the model thread, as a real generation would block it
        return Generation(text=text, tokens=len(text.split()), seconds=delay, model=self.name)


TEST_DELAY_ENV = "SPECSWARM_TEST_MODEL_DELAY"
"""TEST ONLY: seconds the scripted model sleeps per generation, so benchmarks can measure what a
swarm costs while its peers wait for a slow model (its idle networking). Unset in normal use."""


def _test_delay() -> float:
    try:
        return max(0.0, float(os.environ.get(TEST_DELAY_ENV, "0") or 0))
    except ValueError:
        return 0.0


# ---------------------------------------------------------------------------
# The built-in scripted responder (understands the default templates)

_ASPECTS = {
    "geography": [
        "northern region",
        "capital area",
        "western region",
        "southern coast",
        "mountain district",
        "island stop",
    ],
    "activity": [
        "food tasting",
        "museum visits",
        "outdoor hiking",
        "local workshops",
        "evening shows",
        "market shopping",
    ],
    "days": [
        "opening stretch",
        "early middle stretch",
        "central stretch",
        "late middle stretch",
        "closing stretch",
        "buffer stretch",
    ],
}
_SUFFIXES = ["essentials", "logistics", "highlights", "bookings", "schedule", "budget"]
_DEFAULT_ASPECTS = [
    "requirements review",
    "design draft",
    "budget sheet",
    "schedule setup",
    "supplier booking",
    "final checklist",
]


def _find(pattern: str, text: str, default: str = "") -> str:
    m = re.search(pattern, text, re.M)
    return m.group(1).strip() if m else default


def _split_total(total: int, n: int) -> list[int]:
    base, extra = divmod(total, n)
    return [base + (1 if i < extra else 0) for i in range(n)]


_REFINEMENTS = [
    ["venue", "transport", "supplies", "contacts", "payments", "weather", "staffing"],
    ["permits", "equipment", "receipts", "signage", "backups", "tickets", "lighting"],
    ["insurance", "badges", "maps", "snacks", "chargers", "keys", "radios"],
]
"""One component per child below the root, a list per level: distinct nouns, so no two siblings
(and no two nodes of different branches) are about the same thing."""
_ANCHOR_WORDS = 2
"""Words of its node's title a child below the root names ("Transport for venue essentials"):
few, so that siblings differ in half their words and no child repeats its node."""
_FILLER = frozenset("a an and at for in of on the to with".split())  # noqa: SIM905


def _topic(title: str) -> str:
    """A title's first six words after a leading planning verb: "relaxed Saturday afternoon in a city"."""
    verb = r"^(plan|organi[sz]e|write|build|make|create|prepare)\s+(an?\s+|the\s+)?"
    topic = re.sub(verb, "", title, flags=re.I).strip() or title
    return " ".join(topic.split()[:6])


def _root_lines(prompt: str, title: str, n: int) -> list[str]:
    strategy = _find(r"^(?:Write an improved split|Split it) by (\S+?)[ .,]", prompt, "")
    aspects = _ASPECTS.get(strategy, _DEFAULT_ASPECTS)
    short = _topic(title)
    mention = _find(r"^Together the parts must mention: (.*)\.$", prompt, "")
    names = [t.strip() for t in mention.split(",") if t.strip()]
    lines = []
    for i in range(n):
        aspect = names[i] if i < len(names) else aspects[i % len(aspects)]
        suffix = _SUFFIXES[i % len(_SUFFIXES)]
        scope = f" within {short}" if i == 0 else ""
        lines.append(f"- {aspect[:1].upper()}{aspect[1:]} {suffix}: Settle the {suffix} for {aspect}{scope}.")
    return lines


def _refining_lines(goal: str, title: str, depth: int, n: int) -> list[str]:
    """Children of a node ``depth`` levels below the root: one component each (of the level's
    list, leaving out any the title names already), titled "<Component> for <anchor>", the
    anchor being the title's first two content words."""
    named = title_terms(title)
    level = _REFINEMENTS[min(max(depth - 1, 0), len(_REFINEMENTS) - 1)]
    parts = [p for p in level if not title_terms(p) & named]
    anchor = " ".join([w for w in re.findall(r"[\w'-]+", title) if w.lower() not in _FILLER][:_ANCHOR_WORDS])
    short = _topic(goal)
    lines = []
    for i in range(n):
        part = parts[i % len(parts)]
        scope = f" within {short}" if i == 0 and short else ""
        lines.append(f"- {part.capitalize()} for {anchor.lower()}: Settle the {part} for {title}{scope}.")
    return lines


def _decompose_answer(prompt: str) -> str:
    title = _find(r"^Goal to split: (.*?)(?: \(.*\))?$", prompt, "the goal")
    goal = _find(r"^Overall goal: (.*)$", prompt, title)
    n = int(_find(r"\b(\d+) parts \(at least", prompt, "3"))
    depth = _find(r"^Path from the overall goal: (.*)$", prompt, "").count(" > ")
    lines = _root_lines(prompt, title, n) if title == goal else _refining_lines(goal, title, depth, n)
    sum_field = _find(r"^End every line with \((\w+): N\)", prompt, "")
    sum_total = int(_find(r"must add up to (\d+)", prompt, "0") or 0)
    if sum_field and sum_total:
        lines = [
            f"{line} ({sum_field}: {share})"
            for line, share in zip(lines, _split_total(sum_total, n), strict=True)
        ]
    return "\n".join(lines)


def _score_answer(prompt: str) -> str:
    parts = re.findall(r"^- (.+)$", prompt.split("Proposed parts:", 1)[-1], re.M)
    distinct = len({p.split(":")[0].strip().lower() for p in parts})
    score = 80 if parts and distinct == len(parts) else 40
    return f"Score: {score}\nReason: {distinct} distinct parts out of {len(parts)}."


def _execute_answer(prompt: str) -> str:
    task = _find(r"^Task: (.*?)(?: \(.*\))?$", prompt, "the task")
    return "\n".join(
        [
            f"- Decide the scope of {task} in one page.",
            f"- List three concrete options for {task} with prices.",
            f"- Pick one option for {task} and book or schedule it.",
            f"- Write down confirmations for {task} in the shared plan.",
        ]
    )


_PLACES = ["gate", "hall", "desk", "pier", "yard", "cafe", "shop", "room", "deck", "park", "stall", "lobby"]
_SYLLABLES = ["ka", "ro", "mi", "te", "su", "na", "lo", "ve", "di", "pa", "go", "ri", "ma", "to", "be", "ki"]
"""What the lines of a judged result name: a made-up name and a kind of place per line, picked by
a hash of the task (names no other leaf's result holds, as a model's names would be)."""


def _judged_answer(prompt: str) -> str:
    """A result the board can judge: six lines, each naming its task, a time, a place (a made-up
    name) and a reference number picked by a hash of the task (and, writing a rejected result
    again, of the board's critique: a revision says something else); a name the prompt says is planned
    in other parts of the plan is not used again, as a model told so would not."""
    task = _find(r"^Task: (.*?)(?: \(.*\))?$", prompt, "the task")
    _, _, salt = prompt.partition("An earlier answer to this task was rejected by the reviewers.")
    _, _, planned = prompt.partition("Already planned in other parts of the plan")
    taken = (planned + salt).lower()

    def pick(i: int) -> int:
        return int.from_bytes(hashlib.sha256(f"{task}\n{salt}\n{i}".encode()).digest()[:8], "big")

    lines: list[str] = []
    for i in range(60):
        h = pick(i)
        name = "".join(_SYLLABLES[(h >> (4 * k)) % len(_SYLLABLES)] for k in range(3)).capitalize()
        if name.lower() in taken:
            continue
        place, ref = _PLACES[(h >> 16) % len(_PLACES)], (h >> 20) % 9000 + 1000
        n = len(lines)
        lines.append(
            f"- {8 + n * 2:02d}:{h % 60:02d} {task}: the {name} {place}, reference {ref}, {n + 2} seats"
        )
        if len(lines) == 6:
            break
    return "\n".join(lines)


def _summary_answer(prompt: str) -> str:
    """A summary of two sentences that names the parts the prompt lists, and nothing else."""
    title = _find(r"^Summarize: (.*?)(?: \(.*\))?$", prompt, "this part")
    parts = re.findall(r"^Part \d+: (.*)$", prompt, re.M)
    named = ", ".join(parts[:-1]) + (f" and {parts[-1]}" if len(parts) > 1 else "".join(parts))
    return f"{title} is planned in {named or 'its parts'}. Each of them is settled in its own step below."


def scripted_answer(req: GenerationRequest) -> str:
    """A deterministic, well-formed answer to a default-template prompt (no model)."""
    if re.search(r"^Summarize: ", req.prompt, re.M):
        return _summary_answer(req.prompt)
    if "Proposed parts:" in req.prompt:
        return _score_answer(req.prompt)
    if re.search(r"^Task: ", req.prompt, re.M) and "5 to 8 lines" in req.system:
        return _judged_answer(req.prompt)
    if re.search(r"^Task: ", req.prompt, re.M):
        return _execute_answer(req.prompt)
    if re.search(r"^Goal to split: ", req.prompt, re.M):
        return _decompose_answer(req.prompt)
    return f"- {_first_line(req)}"
