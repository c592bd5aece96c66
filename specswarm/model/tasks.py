"""What the roles ask of the model: decompose a node, rate a split, execute a leaf.

Each task renders the spec's own (inlined) prompt template, calls the model,
parses the untrusted answer and validates it. A bad answer is retried with
feedback that names what was wrong (at most :data:`MAX_RETRIES` times); after
that the task raises :class:`~specswarm.errors.ModelError` -- except
:func:`rate`, which returns None, because the model's rating is only a minor
input next to the mechanical critics.

Loop guards: every request carries the spec's token cap for its kind; the
gpt4all backend stops when a line repeats three times in a row, and the
parsers drop later copies of any line seen three or more times.

Sync and async: the sync functions block (and take the process-wide
generation lock); the ``a``-prefixed variants run the whole task in a worker
thread via :func:`trio.to_thread.run_sync`, so a trio peer keeps gossiping.
Parsing takes microseconds, so holding the lock across it costs nothing.

Counters of attempts, retries and failures are kept per process in
:data:`STATS` (see :meth:`TaskStats.snapshot`) for a peer to report.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import trio

from specswarm.errors import ModelError
from specswarm.model import base
from specswarm.model.base import GenerationRequest, Model
from specswarm.model.parse import (
    Child,
    OutputError,
    cut_repeats,
    parse_children,
    parse_execution,
    parse_score,
)
from specswarm.model.prompts import render_prompt
from specswarm.plan.critics import check_constraints, constraints_for

MAX_RETRIES = 2
"""Retries after the first attempt (so at most three generations per task)."""
_DEFAULT_MAX_TOKENS = {"decompose": 400, "refine": 400, "score": 120, "execute": 300}
T = TypeVar("T")


class GaveUpError(ModelError):
    """A task got no usable answer after every retry (the model itself worked)."""


@dataclass
class TaskStats:
    """Per-process counters (mutable; read them with :meth:`snapshot`)."""

    generations: int = 0
    tokens: int = 0
    seconds: float = 0.0
    retries: int = 0
    loops_cut: int = 0
    fitted: int = 0
    """Splits whose sum facts (e.g. days) were rescaled in code to meet a declared total."""
    failures: dict[str, int] = field(default_factory=dict)
    """Tasks that gave up (ModelError / None rating), by kind."""
    bad_outputs: dict[str, int] = field(default_factory=dict)
    """Answers that could not be used (each one triggers a retry or a failure), by kind."""
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def _bump(self, counter: dict[str, int], kind: str) -> None:
        with self._lock:
            counter[kind] = counter.get(kind, 0) + 1

    def bump_fitted(self) -> None:
        with self._lock:
            self.fitted += 1

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            return {
                "generations": self.generations,
                "tokens": self.tokens,
                "seconds": round(self.seconds, 3),
                "retries": self.retries,
                "loops_cut": self.loops_cut,
                "fitted": self.fitted,
                "failures": dict(self.failures),
                "bad_outputs": dict(self.bad_outputs),
            }

    def reset(self) -> None:
        with self._lock:
            self.generations = self.tokens = self.retries = self.loops_cut = self.fitted = 0
            self.seconds = 0.0
            self.failures.clear()
            self.bad_outputs.clear()


STATS = TaskStats()


def _node(d: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "id": d.get("id", ""),
        "title": str(d.get("title", "")),
        "detail": str(d.get("detail", "") or ""),
        "depth": int(d.get("depth", 0) or 0),
        "facts": dict(d.get("facts", {}) or {}),
    }


def _children(items: Sequence[Any]) -> list[dict[str, Any]]:
    return [c.to_json() if isinstance(c, Child) else dict(c) for c in items]


def _request(spec_json: Mapping[str, Any], kind: str, system: str, prompt: str) -> GenerationRequest:
    m = spec_json.get("model", {})
    caps = m.get("max_tokens", {}) or {}
    return GenerationRequest(
        prompt=prompt,
        system=system,
        max_tokens=int(caps.get(kind, _DEFAULT_MAX_TOKENS[kind])),
        temperature=float(m.get("temperature", 0.0)),
        top_k=int(m.get("top_k", 1)),
        seed=int(m.get("seed", 42)),
        repeat_penalty=float(m.get("repeat_penalty", 1.1)),
    )


def _limits(low: int, high: int) -> dict[str, int]:
    # The 1.5B model ignores "3 to 5 items" but mostly follows "4 parts (at least 3, ...)".
    return {"min_children": low, "max_children": high, "target": max(low, min(high, 4))}


def _base_context(
    spec_json: Mapping[str, Any], node: Mapping[str, Any], ancestors: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    tree = spec_json.get("tree", {})
    n = _node(node)
    applicable = constraints_for(spec_json.get("constraints", []), n["depth"])
    return {
        "goal": spec_json.get("goal", ""),
        "context": spec_json.get("context", "") or "",
        "node": n,
        "ancestors": [_node(a) for a in ancestors],
        "siblings": [],
        "strategy": "",
        "critiques": [],
        "constraints": [dict(c) for c in applicable],
        "limits": _limits(int(tree.get("min_children", 2)), int(tree.get("max_children", 6))),
        "is_last_level": n["depth"] + 1 >= int(tree.get("max_depth", 2)),
        "fact_fields": [c["field"] for c in applicable if c.get("kind") == "sum"],
        "proposal": [],
        "leaf": n,
    }


def _template(spec_json: Mapping[str, Any], kind: str) -> str:
    try:
        return str(spec_json["prompts"][kind])
    except (KeyError, TypeError):
        raise ModelError(f"the spec has no prompt template for {kind!r} (prompts.{kind})") from None


def _attempts(
    model: Model, spec_json: Mapping[str, Any], kind: str, ctx: dict[str, Any], parse: Callable[[str], T]
) -> T:
    """Generate, parse; on OutputError retry with feedback; ModelError after the last try."""
    system, prompt = render_prompt(_template(spec_json, kind), **ctx)
    problem = ""
    for attempt in range(MAX_RETRIES + 1):
        asked = (
            prompt
            if not problem
            else (
                f"{prompt}\n\nYour previous answer could not be used: {problem}. "
                "Answer again and follow the format exactly."
            )
        )
        gen = base.generate_locked(model, _request(spec_json, kind, system, asked))
        with STATS._lock:
            STATS.generations += 1
            STATS.tokens += gen.tokens
            STATS.seconds += gen.seconds
        if cut_repeats(gen.text)[1]:
            with STATS._lock:
                STATS.loops_cut += 1
        try:
            return parse(gen.text)
        except OutputError as exc:
            problem = str(exc)
            STATS._bump(STATS.bad_outputs, kind)
            if attempt < MAX_RETRIES:
                with STATS._lock:
                    STATS.retries += 1
    STATS._bump(STATS.failures, kind)
    raise GaveUpError(
        f"{kind}: the model gave no usable answer after {MAX_RETRIES + 1} "
        f"attempts ({problem}) for {ctx['node']['title']!r}"
    )


def fit_sum(children: Sequence[Child], field: str, total: int) -> list[Child]:
    """Make the children's ``field`` facts add up to ``total``, in code.

    The small model rarely gets arithmetic right (MODELS.md; a recorded Japan split gave
    7+6+2+1 = 16 days for a 14-day trip), and asking again made its answers worse. So the
    proportions it chose are kept and rescaled (largest remainder, at least 1 each when
    possible); a missing fact counts as 1. "N days" in a title or detail is rewritten to
    match, so text and facts agree.
    """
    raw = []
    for c in children:
        v = c.facts.get(field)
        raw.append(float(v) if isinstance(v, int | float) and not isinstance(v, bool) and v > 0 else 1.0)
    floor_each = 1 if total >= len(children) else 0
    spare = total - floor_each * len(children)
    weights = sum(raw) or 1.0
    shares = [spare * w / weights for w in raw]
    alloc = [floor_each + int(x) for x in shares]
    order = sorted(range(len(children)), key=lambda i: (-(shares[i] - int(shares[i])), i))
    for i in order[: total - sum(alloc)]:
        alloc[i] += 1
    out = []
    singular = field[:-1] if field.endswith("s") else field
    for c, old, new in zip(children, raw, alloc, strict=True):
        facts = {**c.facts, field: new}
        title, detail = c.title, c.detail
        if old != new and old == int(old):
            pattern = re.compile(rf"\b{int(old)}(\s*-?\s*)({re.escape(field)}|{re.escape(singular)})\b", re.I)
            unit = field if new != 1 else singular

            def swap(m: re.Match[str], new: int = new, unit: str = unit) -> str:
                return f"{new}{m.group(1)}{unit}"

            title, detail = pattern.sub(swap, title), pattern.sub(swap, detail)
        out.append(Child(title=title, detail=detail, leaf=c.leaf, facts=facts))
    return out


def decompose(
    model: Model,
    spec_json: Mapping[str, Any],
    node: Mapping[str, Any],
    ancestors: Sequence[Mapping[str, Any]],
    siblings: Sequence[Mapping[str, Any]],
    strategy: str,
    critiques: Sequence[str],
    *,
    previous: Sequence[Any] | None = None,
) -> list[Child]:
    """Propose children for ``node``. With ``critiques`` or ``previous`` (the rejected
    children) the ``refine`` template is used, else ``decompose``.

    A declared ``sum`` constraint (e.g. days add up to 14) is enforced in code by
    :func:`fit_sum` rather than by asking the model again: it keeps the model's
    proportions and fixes the arithmetic.
    """
    ctx = _base_context(spec_json, node, ancestors)
    ctx.update(
        siblings=[_node(s) for s in siblings],
        strategy=strategy,
        critiques=list(critiques),
        proposal=_children(previous or []),
    )
    kind = "refine" if (critiques or previous) else "decompose"
    limits = ctx["limits"]

    def parse(text: str) -> list[Child]:
        children = parse_children(
            text,
            min_children=limits["min_children"],
            max_children=limits["max_children"],
            parent_title=ctx["node"]["title"],
            goal=str(ctx["goal"]),
            fact_fields=ctx["fact_fields"],
            leaves=ctx["is_last_level"],
        )
        depth = ctx["node"]["depth"]
        for con in ctx["constraints"]:
            if con.get("kind") != "sum":
                continue
            field = str(con["field"])
            total = con.get("total") if depth == 0 else ctx["node"]["facts"].get(field)
            if isinstance(total, int | float) and not isinstance(total, bool) and total > 0:
                check = check_constraints(ctx["node"], [c.to_json() for c in children], [con], depth)
                if not check.passed:
                    STATS.bump_fitted()
                    children = fit_sum(children, field, int(total))
        return children

    return _attempts(model, spec_json, kind, ctx, parse)


def rate(
    model: Model,
    spec_json: Mapping[str, Any],
    node: Mapping[str, Any],
    children: Sequence[Any],
    *,
    ancestors: Sequence[Mapping[str, Any]] = (),
) -> int | None:
    """The model's 0..100 opinion of a split, or None when it gives no usable number."""
    ctx = _base_context(spec_json, node, ancestors)
    ctx["proposal"] = _children(children)
    try:
        return _attempts(model, spec_json, "score", ctx, parse_score)
    except GaveUpError:
        return None


def execute(
    model: Model,
    spec_json: Mapping[str, Any],
    leaf: Mapping[str, Any],
    ancestors: Sequence[Mapping[str, Any]],
) -> str:
    """Carry out ``leaf``; return the cleaned output text."""
    ctx = _base_context(spec_json, leaf, ancestors)
    return _attempts(model, spec_json, "execute", ctx, parse_execution)


async def _in_thread(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    async with base._TRIO_LOCK:
        return await trio.to_thread.run_sync(lambda: fn(*args, **kwargs))


async def adecompose(
    model: Model,
    spec_json: Mapping[str, Any],
    node: Mapping[str, Any],
    ancestors: Sequence[Mapping[str, Any]],
    siblings: Sequence[Mapping[str, Any]],
    strategy: str,
    critiques: Sequence[str],
    *,
    previous: Sequence[Any] | None = None,
) -> list[Child]:
    """:func:`decompose` in a worker thread (trio)."""
    return await _in_thread(
        decompose, model, spec_json, node, ancestors, siblings, strategy, critiques, previous=previous
    )


async def arate(
    model: Model,
    spec_json: Mapping[str, Any],
    node: Mapping[str, Any],
    children: Sequence[Any],
    *,
    ancestors: Sequence[Mapping[str, Any]] = (),
) -> int | None:
    """:func:`rate` in a worker thread (trio)."""
    return await _in_thread(rate, model, spec_json, node, children, ancestors=ancestors)


async def aexecute(
    model: Model,
    spec_json: Mapping[str, Any],
    leaf: Mapping[str, Any],
    ancestors: Sequence[Mapping[str, Any]],
) -> str:
    """:func:`execute` in a worker thread (trio)."""
    return await _in_thread(execute, model, spec_json, leaf, ancestors)
