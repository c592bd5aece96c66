"""Plan quality: the swarm against one-shot and a single agent, same model, same scoring code.

For each goal spec, three systems plan the same goal with the **same model** (the spec's
``model`` settings: the embedded default unless the spec names another; ``--scripted`` swaps
in the scripted test model for a fast smoke run, with a scripted outline for the one-shot
prompt) and ``bench/quality_metrics.py`` (the tree's structure) and ``bench/content_metrics.py``
(the leaves' text, in any language) score all three with the same code:

swarm
    ``specswarm plan SPEC --events DIR/swarm.jsonl --report DIR/report.json --quiet`` as a
    subprocess (its work directory, with every peer's log, in ``DIR/swarm-work``); the event
    log is folded (``read_event_log`` + ``fold``) and read with ``from_plan``. Calls, tokens and
    generation seconds are the peers' own counters from the report.
one-shot
    the model asked **once** for the whole plan: the same goal, context and declared
    constraints, the spec's tree limits stated in the prompt, a nested Markdown outline with
    the leaves' content, and a token budget of the swarm's total generated tokens, capped at
    what the context window leaves after the prompt. Read with ``from_outline``; the declared
    sum fields (``(days: 3)``) are then lifted out of its titles and details by the function
    the swarm's own parser uses (``specswarm.model.parse.extract_facts``), so a fact written
    the way both prompts ask for counts for both.
single-agent
    one agent decomposing the same tree top-down with **the swarm's own prompts**
    (``specswarm.model.tasks.decompose`` for every non-leaf node down to ``tree.max_depth``,
    with its ancestors and siblings, the spec's first decomposer strategy, no critiques),
    accepting its own splits (no rivals, no votes), then ``tasks.execute`` for every leaf as
    the swarm's executors call it: the sibling leaves named in the prompt, and a result that
    repeats one written before it under the same parent written once more.

Each goal gets a side-by-side table (every metric of ``evaluate`` and ``evaluate_content``,
plus the swarm's scorer disagreement, model calls, generations, tokens, generation and wall
seconds, exit code, delivered), then a summary table over all goals. Artefacts go to
``--out`` (default: a new temporary directory, printed)::

    OUT/quality.txt                 what was printed
    OUT/summary.json                machine, command, every figure of every goal and system
    OUT/<goal>/swarm.jsonl          the swarm's signed events; report.json, swarm-plan.txt,
                                    swarm-stderr.txt, swarm-work/ (the launcher's peer logs)
    OUT/<goal>/one-shot-prompt.txt  the one prompt; one-shot.md its answer
    OUT/<goal>/single-agent.jsonl   every generation of the single agent (prompt, answer)
    OUT/<goal>/metrics.json         every metric with its offending items, per system
    OUT/<goal>/trees.json           the three trees as scored

Real-model runs take minutes per goal and use both CPU cores; progress lines go to stderr.
Nothing runs concurrently: the swarm's peers take turns on the model, then the bench
process loads the same model once per goal for the other two systems (the first
generation maps the weights, about a second, inside the one-shot's wall time).

    python bench/quality.py [--goals goals/japan.yaml goals/todo-cli.yaml goals/conference.yaml]
                            [--scripted] [--out DIR] [--timeout S]
                            [--baselines-from DIR] [--reuse SYSTEM=DIR ...] [--cache DIR]

``--reuse swarm=DIR`` scores an earlier run's swarm again (its event log folded by today's
code) and runs only the baselines: for a change to the baselines or the metrics, not to the
swarm. ``--baselines-from DIR`` is ``--reuse one-shot=DIR --reuse single-agent=DIR``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import REPO, machine, table  # noqa: E402
from content_metrics import CONTENT_METRICS, evaluate_content, pooled_concrete_median  # noqa: E402
from quality_metrics import (  # noqa: E402
    METRICS,
    Offence,
    QNode,
    QTree,
    Score,
    evaluate,
    from_nested,
    from_outline,
    from_plan,
    score_table,
)

SYSTEMS = ("swarm", "one-shot", "single-agent")
LABELS: Mapping[str, str] = {**METRICS, **CONTENT_METRICS}
"""Every metric of a tree, structure then content: key -> row label, in table order."""
DEFAULT_GOALS = ("goals/japan.yaml", "goals/todo-cli.yaml", "goals/conference.yaml")

DISAGREE_SCORE_GAP = 5
"""Two scorers disagree on a proposal when one approves and one rejects, or when their
scores differ by at least this many points (of 100)."""

PROMPT_CHARS_PER_TOKEN = 3.0
"""For the one-shot token budget: a conservative estimate of the prompt's length in tokens
(English BPE averages about 4 characters a token; 3 over-counts, which only shortens the
budget a little)."""
CONTEXT_MARGIN = 128
"""Tokens kept free of the context window besides the prompt (chat-turn markers, rounding)."""

MAX_NOTES = 4
"""Notes printed under a goal's table per system (all of them are in metrics.json)."""
HEARTBEAT = 30.0
"""Seconds between progress lines while the swarm or a long generation runs."""
SWARM_GRACE = 180.0
"""A swarm still running this long after its budget is interrupted (SIGINT: the launcher
stops every peer and keeps the log), and killed a minute after that."""

# extra table rows, after the quality metrics (keys are also the row labels)
DISAGREE = "scorer disagreement (swarm)"
REVISED = "revisions passing where the original failed (swarm)"
CALLS = "model calls (tasks)"
GENS = "generations"
TOKENS = "tokens generated"
GEN_S = "generation s"
WALL = "wall s"
EXIT = "exit code"
DELIVERED = "delivered"
EXTRA_ROWS = (DISAGREE, REVISED, CALLS, GENS, TOKENS, GEN_S, WALL, EXIT, DELIVERED)


# --------------------------------------------------------------------------- progress


class Progress:
    """Lines on stderr, with the seconds since the benchmark started."""

    def __init__(self) -> None:
        self.started = time.monotonic()

    def say(self, message: str) -> None:
        print(f"[quality {time.monotonic() - self.started:6.0f}s] {message}", file=sys.stderr, flush=True)

    @contextmanager
    def beating(self, what: Callable[[], str], every: float = HEARTBEAT) -> Iterator[None]:
        """While the block runs, say ``what()`` every ``every`` seconds (from a thread)."""
        stop = threading.Event()

        def beat() -> None:
            while not stop.wait(every):
                self.say(what())

        thread = threading.Thread(target=beat, daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join()


# --------------------------------------------------------------------------- one system's cost


@dataclass
class Work:
    """What one system cost and whether it delivered a plan."""

    calls: int = 0
    """Model tasks (the swarm's ``model_calls``: a task retried after a bad answer is one call)."""
    generations: int = 0
    tokens: int = 0
    gen_seconds: float = 0.0
    wall: float = 0.0
    exit_code: int | None = None
    delivered: bool = False
    notes: list[str] = field(default_factory=list)

    def rows(self) -> dict[str, Any]:
        return {
            CALLS: self.calls,
            GENS: self.generations,
            TOKENS: self.tokens,
            GEN_S: round(self.gen_seconds, 2),
            WALL: round(self.wall, 2),
            EXIT: self.exit_code,
            DELIVERED: "yes" if self.delivered else "no",
        }


class CountingModel:
    """A model wrapper that counts generations, tokens and seconds, and keeps each exchange."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = inner.name
        self.generations = 0
        self.tokens = 0
        self.seconds = 0.0
        self.log: list[dict[str, Any]] = []

    @property
    def instant(self) -> bool:
        return bool(self.inner.instant)

    def generate(self, req: Any) -> Any:
        gen = self.inner.generate(req)
        self.generations += 1
        self.tokens += int(gen.tokens)
        self.seconds += float(gen.seconds)
        self.log.append(
            {
                "system": req.system,
                "prompt": req.prompt,
                "max_tokens": req.max_tokens,
                "text": gen.text,
                "tokens": gen.tokens,
                "seconds": round(gen.seconds, 3),
                "model": gen.model,
            }
        )
        return gen


# --------------------------------------------------------------------------- swarm


def _events_seen(workdir: Path) -> int:
    """Lines in the largest peer event log of the launcher's run directory (progress only)."""
    best = 0
    for path in workdir.glob("specswarm-run-*/*.jsonl"):
        try:
            with open(path, "rb") as fh:
                best = max(best, sum(1 for _ in fh))
        except OSError:
            continue
    return best


def swarm_command(spec_path: Path, gdir: Path, timeout: float | None, cache: Path | None = None) -> list[str]:
    cmd = [
        "specswarm",
        "plan",
        str(spec_path),
        "--events",
        str(gdir / "swarm.jsonl"),
        "--report",
        str(gdir / "report.json"),
        "--quiet",
    ]
    cmd += ["--cache", str(cache)] if cache else []
    return cmd + (["--timeout", f"{timeout:g}"] if timeout else [])


def revision_outcomes(plan: Any) -> Score:
    """Share of the revisions (a proposal that ``revises`` a rejected one) that most of their
    voters approved: how often the refine loop turned critiques into a fix. Items: the
    revisions that still failed."""
    revised, passed, items = 0, 0, []
    for node in plan.walk():
        by_id = {p.id: p for p in node.proposals}
        for p in node.proposals:
            original = by_id.get(p.revises) if p.revises else None
            if original is None or not p.votes:
                continue
            revised += 1
            if sum(v.approve for v in p.votes) * 2 > len(p.votes):
                passed += 1
            else:
                items.append(
                    Offence((node.id, p.id[:16]), f"revision of a {p.strategy!r} split of {node.title!r}")
                )
    return Score(passed / revised if revised else math.nan, tuple(items), passed, revised)


def scorer_disagreement(plan: Any) -> Score:
    """Share of the proposals with two or more counted votes on which the scorers' votes
    differ: one approves and another rejects, or their scores differ by at least
    :data:`DISAGREE_SCORE_GAP`. Items: those proposals with their votes."""
    judged, items = 0, []
    for node in plan.walk():
        for proposal in node.proposals:
            votes = list(proposal.votes)
            if len(votes) < 2:
                continue
            judged += 1
            scores = [v.score for v in votes]
            if len({v.approve for v in votes}) > 1 or max(scores) - min(scores) >= DISAGREE_SCORE_GAP:
                shown = ", ".join(f"{'approve' if v.approve else 'reject'} {v.score}" for v in votes)
                items.append(
                    Offence(
                        (node.id, proposal.id[:16]),
                        f"{proposal.strategy!r} split of {node.title!r} ({proposal.status}): {shown}",
                    )
                )
    return Score(len(items) / judged if judged else math.nan, tuple(items), len(items), judged)


def run_swarm(
    spec_path: Path,
    spec: Any,
    gdir: Path,
    *,
    scripted: bool,
    timeout: float | None,
    progress: Progress,
    cache: Path | None = None,
) -> tuple[QTree | None, Any, Work]:
    """Run the swarm as a subprocess; fold its event log. (tree, plan, work); tree and plan are
    None when no event log was written."""
    from specswarm.plan import fold
    from specswarm.protocol.events import read_event_log

    env = dict(os.environ)
    env.pop("SPECSWARM_MODEL_BACKEND", None)
    env.pop("SPECSWARM_MODEL_CASSETTE", None)
    if scripted:
        env["SPECSWARM_MODEL_BACKEND"] = "scripted"
    workdir = gdir / "swarm-work"
    workdir.mkdir(parents=True, exist_ok=True)
    env["TMPDIR"] = str(workdir)  # the launcher's run directory (peer logs) lands here
    cmd = [sys.executable, "-m", *swarm_command(spec_path, gdir, timeout, cache)]
    budget = timeout or float(spec.budget.seconds)
    work = Work()
    started = time.monotonic()
    with open(gdir / "swarm-plan.txt", "wb") as out, open(gdir / "swarm-stderr.txt", "wb") as err:
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=env, cwd=REPO)
        interrupt_at, kill_at = started + budget + SWARM_GRACE, math.inf
        next_beat = started + HEARTBEAT
        while True:
            try:
                proc.wait(timeout=1.0)
                break
            except subprocess.TimeoutExpired:
                pass
            except KeyboardInterrupt:  # the launcher got the same SIGINT: it stops its peers
                progress.say(f"{spec.name}: interrupted; waiting for the launcher to stop its peers")
                try:
                    proc.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    proc.kill()
                raise
            now = time.monotonic()
            if now >= next_beat:
                next_beat += HEARTBEAT
                progress.say(
                    f"{spec.name}: swarm running, {now - started:.0f} s, "
                    f"{_events_seen(workdir)} events in the largest peer log"
                )
            if now >= interrupt_at:
                progress.say(f"{spec.name}: swarm over its budget by {SWARM_GRACE:.0f} s: interrupting it")
                proc.send_signal(signal.SIGINT)
                interrupt_at, kill_at = math.inf, now + 60
            elif now >= kill_at:
                proc.kill()
                kill_at = math.inf
    work.wall = time.monotonic() - started
    work.exit_code = proc.returncode
    report_path = gdir / "report.json"
    report = json.loads(report_path.read_text(encoding="utf-8")) if report_path.exists() else {}
    counters = [p.get("counters", {}) for p in report.get("peers", [])]

    def total(key: str) -> float:
        return sum(float(c.get(key, 0) or 0) for c in counters)

    work.calls = int(total("model_calls"))
    work.generations = int(total("model_generations"))
    work.tokens = int(total("model_tokens"))
    work.gen_seconds = total("model_gen_seconds")
    reused = int(total("model_reused"))
    if reused:
        work.notes.append(f"{reused} model answers reused (a same-lens rating or a repeated request)")
    redone = sum(int(c.get("tasks", {}).get("redone", 0)) for c in counters)
    sharpened = sum(int(c.get("tasks", {}).get("sharpened", 0)) for c in counters)
    if redone:
        work.notes.append(f"{redone} results written again ({sharpened} for being general advice)")
    off_task = sum(int(c.get("tasks", {}).get("off_task", 0)) for c in counters)
    if off_task:
        work.notes.append(f"{off_task} result items left out for doing a sibling leaf's task")
    skipped = int(total("ratings_skipped"))
    if skipped:
        work.notes.append(f"{skipped} votes cast without a model rating (the checks decide them)")
    events = gdir / "swarm.jsonl"
    if not events.exists():
        work.notes.append("no event log written: see swarm-stderr.txt")
        return None, None, work
    log = read_event_log(events)
    if log.rejected:
        work.notes.append(f"{len(log.rejected)} invalid event(s) in the log dropped")
    plan = fold(log.events)
    work.delivered = proc.returncode == 0 and bool(plan.complete)
    if proc.returncode != 0:
        tail = (gdir / "swarm-stderr.txt").read_text(errors="replace").strip().splitlines()[-3:]
        work.notes.append(f"specswarm plan exited {proc.returncode}: " + " | ".join(tail))
    return (from_plan(plan) if plan.root is not None else None), plan, work


# --------------------------------------------------------------------------- one-shot


def _scope(constraint: Any) -> str:
    return "level 1" if constraint.applies_to == "root" else "every level"


def one_shot_prompt(spec: Any) -> tuple[str, str]:
    """(system, prompt) asking for the whole plan at once: goal, context, the tree limits and
    the declared constraints, in the words of the swarm's own templates where they apply."""
    tree = spec.tree
    low, high = tree.min_children, tree.max_children
    target = max(low, min(high, 4))  # what the swarm's decompose prompt asks for
    depth = tree.max_depth
    system = (
        "You are a planner. You write the complete plan for a goal at once, as one nested "
        "Markdown outline. Answer with the outline only: no introduction, no closing remarks."
    )
    lines = [f"Overall goal: {spec.goal}"]
    if spec.context:
        lines.append(f"Context: {spec.context}")
    lines += [
        "",
        f"Write the whole plan as a nested Markdown bullet list, {depth} level{'s' if depth > 1 else ''} "
        "deep below the goal. Start with the level-1 parts themselves: do not restate the goal as a "
        "line of its own.",
        f"- Level 1 splits the goal into {target} parts (at least {low}, at most {high}).",
    ]
    if depth > 1:
        upper = "level 1" if depth == 2 else f"levels 1 to {depth - 1}"
        lines.append(
            f"- Every part of {upper} is split the same way into {target} parts "
            f"(at least {low}, at most {high}), indented two more spaces than its parent."
        )
    lines += [
        '- Every part is one line, written as "- Short title: one sentence of concrete detail". '
        "Each title has at most 8 words, is concrete, and differs from the others.",
        f"- The parts of level {depth} are tasks someone can do directly. Under each of them write "
        'its result, indented two more spaces: 3 to 7 lines starting with "- ", concrete and '
        "specific (names, numbers, times).",
    ]
    rules = []
    for c in spec.constraints:
        if c.kind == "sum":
            total = f"{c.total:g}" if isinstance(c.total, float) else str(c.total)
            if c.applies_to == "root":
                rules.append(
                    f"- End every line of level 1 with ({c.field}: N); the numbers must add up to {total}."
                )
            else:
                rules.append(
                    f"- End every line of levels 1 to {depth} with ({c.field}: N); at level 1 the numbers "
                    f"must add up to {total}, below it the parts of one line add up to that line's number."
                )
        elif c.kind == "mention":
            where = "the parts of level 1" if c.applies_to == "root" else "the parts of every split"
            rules.append(f"- Together {where} must mention: {', '.join(c.terms)}.")
        elif c.kind == "forbid":
            rules.append(f"- Never mention: {', '.join(c.terms)}.")
    if rules:
        lines += ["", "Rules:", *rules]
    return system, "\n".join(lines)


def scripted_one_shot(req: Any) -> str:
    """The scripted model's answer to :func:`one_shot_prompt` (smoke runs only): a well-formed
    outline of the asked shape, so that the smoke run goes through the outline parser; any other
    prompt gets the scripted model's usual answer."""
    from specswarm.model import scripted_answer

    prompt = req.prompt
    if "Write the whole plan as a nested Markdown bullet list" not in prompt:
        return scripted_answer(req)
    depth = int(re.search(r"list, (\d+) levels? deep", prompt).group(1))  # type: ignore[union-attr]
    n = int(re.search(r"into (\d+) parts", prompt).group(1))  # type: ignore[union-attr]
    sums = re.findall(r"level 1 with \((\w+): N\); the numbers must add up to (\d+)", prompt)
    mention = re.search(r"the parts of level 1 must mention: (.*)\.$", prompt, re.M)
    names = [t.strip() for t in mention.group(1).split(",")] if mention else []
    lines: list[str] = []

    def part(level: int, path: list[int]) -> None:
        indent = "  " * (level - 1)
        i = path[-1]
        name = names[i - 1] if level == 1 and i <= len(names) else f"area {'.'.join(map(str, path))}"
        fact = "".join(f" ({f}: {int(t) // n + (1 if i <= int(t) % n else 0)})" for f, t in sums)
        fact = fact if level == 1 else ""
        lines.append(f"{indent}- Settle {name} part: Arrange everything for {name} in one go.{fact}")
        if level < depth:
            for j in range(1, n + 1):
                part(level + 1, [*path, j])
        else:
            for k in range(1, 4):
                lines.append(f"{indent}  - Book item {k} for {name} at {8 + k}:00 for 2 people.")

    for i in range(1, n + 1):
        part(1, [i])
    kept, words = [], 0  # the token cap, as a real model has one (the scripted model counts words)
    for line in lines:
        words += len(line.split())
        if words > req.max_tokens:
            break
        kept.append(line)
    return "\n".join(kept)


def lift_facts(tree: QTree, fields: Sequence[str]) -> QTree:
    """The tree with ``(field: N)`` facts of the declared sum ``fields`` moved out of titles and
    details into facts, by the swarm parser's own :func:`~specswarm.model.parse.extract_facts`
    (a title's facts win over its detail's, as in the swarm; facts already read stay unless
    restated)."""
    if not fields:
        return tree
    from specswarm.model.parse import extract_facts

    nodes: dict[str, QNode] = {}
    for node in tree.nodes.values():
        title, from_title = extract_facts(node.title, fields)
        detail, from_detail = extract_facts(node.detail, fields)
        nodes[node.id] = dataclasses.replace(
            node,
            title=title or node.title,
            detail=detail,
            facts={**node.facts, **from_detail, **from_title},
        )
    return QTree(nodes, tree.root)


def run_one_shot(
    spec: Any, model: Any, swarm_tokens: int, gdir: Path, progress: Progress
) -> tuple[QTree, Work, dict[str, Any]]:
    from specswarm.model import GenerationRequest
    from specswarm.model._common import N_CTX

    system, prompt = one_shot_prompt(spec)
    prompt_tokens = math.ceil((len(system) + len(prompt)) / PROMPT_CHARS_PER_TOKEN)
    cap = N_CTX - prompt_tokens - CONTEXT_MARGIN
    budget = max(1, min(swarm_tokens, cap) if swarm_tokens > 0 else cap)
    (gdir / "one-shot-prompt.txt").write_text(f"[system]\n{system}\n\n[user]\n{prompt}\n", encoding="utf-8")
    settings = spec.model
    req = GenerationRequest(
        prompt=prompt,
        system=system,
        max_tokens=int(budget),
        temperature=float(settings.temperature),
        top_k=int(settings.top_k),
        seed=int(settings.seed),
        repeat_penalty=float(settings.repeat_penalty),
    )
    counting = CountingModel(model)
    work = Work(calls=1)
    info = {
        "swarm_tokens": swarm_tokens,
        "context_cap": cap,
        "prompt_tokens_estimate": prompt_tokens,
        "max_tokens": budget,
    }
    progress.say(
        f"{spec.name}: one-shot: one generation of at most {budget} tokens "
        f"(swarm generated {swarm_tokens}; the context leaves {cap})"
    )
    started = time.monotonic()
    text = ""
    with progress.beating(lambda: f"{spec.name}: one-shot generating, {time.monotonic() - started:.0f} s"):
        try:
            text = counting.generate(req).text
            work.exit_code = 0
        except Exception as exc:  # a model failure is a result of this system, not a crash of the bench
            work.exit_code = 1
            work.notes.append(f"generation failed: {exc}")
    work.wall = time.monotonic() - started
    work.generations, work.tokens, work.gen_seconds = counting.generations, counting.tokens, counting.seconds
    (gdir / "one-shot.md").write_text(text + "\n", encoding="utf-8")
    fields = [c.field for c in spec.constraints if c.kind == "sum" and c.field]
    tree = lift_facts(from_outline(spec.goal, text), fields)
    leaves = tree.leaves()
    work.delivered = (
        work.exit_code == 0
        and len(leaves) > 0
        and leaves[0].id != tree.root
        and all(n.result and n.result.strip() for n in leaves)
    )
    cut = counting.tokens >= budget
    info["cut_at_cap"] = cut
    work.notes.append(
        f"{counting.tokens} tokens of a {budget}-token budget" + (" (cut at it)" if cut else "")
    )
    return tree, work, info


# --------------------------------------------------------------------------- single agent


@dataclass
class AgentNode:
    """One node of the single agent's tree (a :class:`specswarm.model.subject.Subject`)."""

    id: str
    title: str
    detail: str
    depth: int
    facts: dict[str, int | str]
    parent: str | None = None
    leaf: bool = False
    children: list[str] = field(default_factory=list)
    result: str | None = None
    failure: str | None = None


def run_single_agent(
    spec: Any, model: Any, gdir: Path, progress: Progress
) -> tuple[QTree, Work, list[AgentNode]]:
    """Top-down with the swarm's prompts, one split per node, accepted as proposed; then every
    leaf executed. A task that gives up leaves its node unsplit (or its leaf without a result)."""
    from specswarm.critics import relatives_in_tree, repeats_of
    from specswarm.errors import ModelError
    from specswarm.model import TaskCounts, decompose, execute
    from specswarm.model.tasks import redo

    counting = CountingModel(model)
    counts = TaskCounts()
    strategy = spec.strategy_for(0)
    max_depth = spec.tree.max_depth
    root = AgentNode("root", spec.goal, spec.context, 0, {}, leaf=max_depth <= 0)
    nodes = {root.id: root}
    work = Work(exit_code=0)
    started = time.monotonic()

    def chain(node: AgentNode) -> list[AgentNode]:
        out = []
        while node.parent is not None:
            node = nodes[node.parent]
            out.append(node)
        return list(reversed(out))

    def siblings_of(node: AgentNode) -> list[AgentNode]:
        return [nodes[c] for c in nodes[node.parent].children if c != node.id] if node.parent else []

    def step(what: str, node: AgentNode) -> None:
        progress.say(
            f"{spec.name}: single agent: {what} {node.title[:60]!r} (depth {node.depth}); "
            f"{work.calls} calls, {counting.tokens} tokens, {time.monotonic() - started:.0f} s"
        )

    queue = [root]  # breadth first: a whole level is split before the next one
    while queue:
        node = queue.pop(0)
        if node.leaf:
            continue
        step("decompose", node)
        work.calls += 1
        try:
            # the swarm's decomposer, self-check and repairs included: (b) differs from the
            # swarm only in having no rivals and no votes
            children = decompose(
                counting,
                spec,
                node,
                chain(node),
                siblings_of(node),
                strategy,
                (),
                counts=counts,
                relatives=relatives_in_tree(nodes, node.id),
                strategies=spec.roles.decomposer.strategies,
            )
        except ModelError as exc:
            node.failure = str(exc)
            work.notes.append(f"decompose gave up on {node.title!r}: {exc}")
            continue
        for i, child in enumerate(children, 1):
            kid = AgentNode(
                id=f"{node.id}.{i}" if node.parent else str(i),
                title=child.title,
                detail=child.detail,
                depth=node.depth + 1,
                facts=dict(child.facts),
                parent=node.id,
                leaf=bool(child.leaf) or node.depth + 1 >= max_depth,
            )
            nodes[kid.id] = kid
            node.children.append(kid.id)
            queue.append(kid)
    for node in list(nodes.values()):
        if not node.leaf:
            continue
        step("execute", node)
        work.calls += 1
        # as the swarm's executors write a leaf: its sibling leaves named in the prompt, and a
        # result that repeats one written before it under the same parent written once more
        # (leaves are written in order: the siblings with a result are the earlier ones)
        siblings, ancestors = siblings_of(node), chain(node)
        try:
            output = execute(counting, spec, node, ancestors, siblings=siblings, counts=counts)
            repeated = repeats_of(output, [s.result for s in siblings if s.result])
            if repeated:
                output = redo(counting, spec, node, ancestors, repeated, siblings=siblings, counts=counts)
            node.result = output
        except ModelError as exc:
            node.failure = str(exc)
            work.notes.append(f"execute gave up on {node.title!r}: {exc}")
    work.wall = time.monotonic() - started
    work.generations, work.tokens, work.gen_seconds = counting.generations, counting.tokens, counting.seconds
    failed = [n for n in nodes.values() if n.failure]
    work.delivered = not failed
    if counts.retries or counts.fitted or counts.redone:
        work.notes.append(
            f"{counts.retries} retries after bad answers, {counts.fitted} sums fitted in code, "
            f"{counts.redone} results written again ({counts.sharpened} for being general advice)"
        )
    with open(gdir / "single-agent.jsonl", "w", encoding="utf-8") as fh:
        for entry in counting.log:
            fh.write(json.dumps(entry, ensure_ascii=False) + "\n")

    def nested(node: AgentNode) -> dict[str, Any]:
        return {
            "title": node.title,
            "detail": node.detail,
            "facts": node.facts,
            "children": [nested(nodes[c]) for c in node.children],
            "result": node.result,
        }

    return from_nested(nested(root)), work, list(nodes.values())


# --------------------------------------------------------------------------- figures


def _plain(value: Any) -> Any:
    """JSON-safe: NaN and infinities become null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def score_json(score: Score) -> dict[str, Any]:
    return {
        "value": _plain(score.value),
        "count": score.count,
        "total": score.total,
        "shown": score.show(),
        "items": [str(o) for o in score.items],
    }


def tree_json(tree: QTree | None) -> list[dict[str, Any]]:
    if tree is None:
        return []
    return [
        {
            "id": n.id,
            "parent": n.parent,
            "depth": n.depth,
            "title": n.title,
            "detail": n.detail,
            "facts": dict(n.facts),
            "children": list(n.children),
            "result": n.result,
            "summary": n.summary,
        }
        for n in tree.walk()
    ]


def tree_from_json(rows: Sequence[Mapping[str, Any]]) -> QTree | None:
    """The inverse of :func:`tree_json` (None for an empty list: no tree)."""
    if not rows:
        return None
    nodes = {
        r["id"]: QNode(
            r["id"],
            r["parent"],
            r["title"],
            r.get("detail", ""),
            r.get("depth", 0),
            not r.get("children"),
            dict(r.get("facts", {})),
            tuple(r.get("children", ())),
            r.get("result"),
            r.get("summary") or "",
        )
        for r in rows
    }
    return QTree(nodes, rows[0]["id"])


RECORDED_INFO = (
    "strategy",
    "swarm_tokens",
    "context_cap",
    "prompt_tokens_estimate",
    "max_tokens",
    "cut_at_cap",
)
"""The per-system facts a recorded run carries over besides its work figures."""


def recorded_run(gdir: Path, name: str, progress: Progress) -> tuple[SystemRun, str] | None:
    """System ``name``'s run in an earlier ``bench/quality.py`` run of this goal (``gdir``: its
    metrics.json and trees.json; for the swarm, its event log, folded again), re-scored by
    today's metric code, and the model it named; None when that directory has none."""
    metrics, trees = gdir / "metrics.json", gdir / "trees.json"
    if not (metrics.exists() and trees.exists()):
        return None
    m = json.loads(metrics.read_text(encoding="utf-8"))
    sys_m = m["systems"].get(name)
    events = gdir / "swarm.jsonl"
    if sys_m is None or (name == "swarm" and not events.exists()):
        return None
    work = Work(
        sys_m["calls"],
        sys_m["generations"],
        sys_m["tokens"],
        sys_m["generation_seconds"],
        sys_m["wall_seconds"],
        sys_m["exit_code"],
        sys_m["delivered"],
        [*sys_m.get("notes", []), f"recorded in an earlier run ({gdir}), not run again"],
    )
    info = {k: v for k, v in sys_m.items() if k in RECORDED_INFO}
    if name == "swarm":
        from specswarm.plan import fold
        from specswarm.protocol.events import read_event_log

        plan = fold(read_event_log(events).events)
        run = SystemRun(name, from_plan(plan) if plan.root is not None else None, work, info=info)
        run.disagreement, run.revisions = scorer_disagreement(plan), revision_outcomes(plan)
    else:
        t = json.loads(trees.read_text(encoding="utf-8"))
        run = SystemRun(name, tree_from_json(t.get(name, [])), work, info=info)
    progress.say(f"{m.get('goal', '?')}: {name} recorded in {gdir}, not run again")
    return run, str(m.get("model", "?"))


@dataclass
class SystemRun:
    name: str
    tree: QTree | None
    work: Work
    scores: dict[str, Score] = field(default_factory=dict)
    disagreement: Score | None = None
    revisions: Score | None = None
    info: dict[str, Any] = field(default_factory=dict)

    def row(self) -> dict[str, Any]:
        out: dict[str, Any] = dict(self.scores) if self.tree is not None else dict.fromkeys(LABELS)
        out[DISAGREE] = self.disagreement
        out[REVISED] = self.revisions
        out.update(self.work.rows())
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "system": self.name,
            "metrics": {k: score_json(s) for k, s in self.scores.items()},
            "scorer_disagreement": score_json(self.disagreement) if self.disagreement else None,
            "revisions_passing": score_json(self.revisions) if self.revisions else None,
            "calls": self.work.calls,
            "generations": self.work.generations,
            "tokens": self.work.tokens,
            "generation_seconds": round(self.work.gen_seconds, 3),
            "wall_seconds": round(self.work.wall, 3),
            "exit_code": self.work.exit_code,
            "delivered": self.work.delivered,
            "notes": self.work.notes,
            **self.info,
        }


# --------------------------------------------------------------------------- one goal


def run_goal(
    spec_path: Path,
    out: Path,
    *,
    scripted: bool,
    timeout: float | None,
    progress: Progress,
    used: set[str],
    reuse: Mapping[str, Path] | None = None,
    cache: Path | None = None,
) -> tuple[Any, list[SystemRun], Path]:
    from specswarm.model import load_model
    from specswarm.spec import load_spec

    spec = load_spec(spec_path)
    name = spec.name
    while name in used:
        name += "+"
    used.add(name)
    gdir = out / name
    gdir.mkdir(parents=True, exist_ok=True)
    constraints = tuple(spec.constraints)

    reuse = reuse or {}
    recorded: dict[str, tuple[SystemRun, str]] = {}
    for system, where in reuse.items():
        found = recorded_run(where / gdir.name, system, progress)
        if found is None:
            progress.say(f"{spec.name}: no {system} run of this goal in {where}: running it")
        else:
            recorded[system] = found
    model_names = [m for _, m in recorded.values()]
    if "swarm" in recorded:
        swarm = recorded["swarm"][0]
        log = reuse["swarm"] / gdir.name / "swarm.jsonl"
        if log.resolve() != (gdir / "swarm.jsonl").resolve():
            shutil.copyfile(log, gdir / "swarm.jsonl")
    else:
        progress.say(f"{spec.name}: swarm: {shlex.join(swarm_command(spec_path, gdir, timeout, cache))}")
        tree, plan, work = run_swarm(
            spec_path, spec, gdir, scripted=scripted, timeout=timeout, progress=progress, cache=cache
        )
        progress.say(
            f"{spec.name}: swarm done: exit {work.exit_code}, {work.wall:.0f} s, "
            f"{work.calls} calls, {work.tokens} tokens"
        )
        swarm = SystemRun("swarm", tree, work)
        if plan is not None:
            swarm.disagreement = scorer_disagreement(plan)
            swarm.revisions = revision_outcomes(plan)

    model: Any = None
    if not {"one-shot", "single-agent"} <= set(recorded):
        if scripted:
            from specswarm.model import ScriptedModel

            model = ScriptedModel(scripted_one_shot)
        else:
            model = load_model(spec.model)
        model_names.append(getattr(model, "name", "?"))
    if "one-shot" in recorded:
        one = recorded["one-shot"][0]
    else:
        tree1, work1, info1 = run_one_shot(spec, model, swarm.work.tokens, gdir, progress)
        one = SystemRun("one-shot", tree1, work1, info=info1)
        progress.say(f"{spec.name}: one-shot done: {work1.wall:.0f} s, {work1.tokens} tokens")
    if "single-agent" in recorded:
        single = recorded["single-agent"][0]
    else:
        tree2, work2, _ = run_single_agent(spec, model, gdir, progress)
        single = SystemRun("single-agent", tree2, work2, info={"strategy": spec.strategy_for(0)})
        progress.say(f"{spec.name}: single agent done: {work2.wall:.0f} s, {work2.calls} calls")
    model_name = " / ".join(dict.fromkeys(model_names)) if model_names else "?"

    runs = [swarm, one, single]
    for run in runs:
        if run.tree is not None:
            run.scores = {
                **evaluate(run.tree, constraints),
                **evaluate_content(run.tree, constraints, spec.goal),
            }
    (gdir / "metrics.json").write_text(
        json.dumps(
            {
                "goal": spec.goal,
                "spec": str(spec_path),
                "model": model_name,
                "constraints": [c.to_json() for c in constraints],
                "systems": {r.name: r.to_json() for r in runs},
            },
            indent=1,
            ensure_ascii=False,
            allow_nan=False,
        )
        + "\n",
        encoding="utf-8",
    )
    (gdir / "trees.json").write_text(
        json.dumps({r.name: tree_json(r.tree) for r in runs}, indent=1, ensure_ascii=False) + "\n",
        encoding="utf-8",
    )
    return spec, runs, gdir


# --------------------------------------------------------------------------- summary

SUMMARY_COLS: Mapping[str, str] = {
    "nodes": "nodes",
    "leaves": "leaves",
    "depth": "depth",
    "near_duplicates": "near-dup",
    "sibling_overlap": "sib-overlap",
    "fact_consistency": "facts add up",
    "constraints": "constraints",
    "ancestor_repeats": "anc-repeat",
    "result_repeats": "res-repeat",
    "leaf_specificity": "specific",
    "leaf_chars_min": "min chars",
    "leaves_under_200": "<200 chars",
    "concrete_lines_median": "concrete/leaf",
    "repeated_across_leaves": "repeated",
    "language_share": "own script",
    "schedule": "schedule",
    "summarised": "summarised",
    DISAGREE: "disagree",
    REVISED: "rev-pass",
}


def _pooled(scores: Sequence[Score | None], key: str) -> Score | None:
    """One score over several goals: shares pooled (sum of counts / sum of totals), maxima
    for the overlap and the depth, the minimum for the shortest leaf, sums for the counts (the
    median of concrete lines is pooled from the trees: :func:`summary`)."""
    have = [s for s in scores if s is not None]
    if not have:
        return None
    if all(s.total is not None for s in have):
        count = sum(s.count or 0 for s in have)
        total = sum(s.total or 0 for s in have)
        return Score(count / total if total else math.nan, (), count, total)
    if key in ("sibling_overlap", "depth"):
        return Score(max(s.value for s in have))
    if key == "leaf_chars_min":
        return Score(min(s.value for s in have))
    return Score(sum(s.value for s in have))


def summary(goals: Sequence[tuple[Any, list[SystemRun]]]) -> str:
    rows = []

    def cell(value: Any) -> Any:
        return value.show() if isinstance(value, Score) else value

    for spec, runs in goals:
        for run in runs:
            r = run.row()
            row = {"goal": spec.name, "system": run.name}
            row.update({label: cell(r.get(key)) for key, label in SUMMARY_COLS.items()})
            row.update(
                {
                    "calls": run.work.calls,
                    "tokens": run.work.tokens,
                    "wall s": round(run.work.wall, 1),
                    "delivered": "yes" if run.work.delivered else "no",
                }
            )
            rows.append(row)
    if len(goals) > 1:
        for system in SYSTEMS:
            runs = [r for _, rs in goals for r in rs if r.name == system]
            row = {"goal": "ALL", "system": system}
            for key, label in SUMMARY_COLS.items():
                pooled = _pooled([r.row().get(key) for r in runs], key)
                if key == "concrete_lines_median" and pooled is not None:
                    pooled = pooled_concrete_median([r.tree for r in runs if r.tree is not None])
                row[label] = cell(pooled)
            row.update(
                {
                    "calls": sum(r.work.calls for r in runs),
                    "tokens": sum(r.work.tokens for r in runs),
                    "wall s": round(sum(r.work.wall for r in runs), 1),
                    "delivered": f"{sum(r.work.delivered for r in runs)}/{len(runs)}",
                }
            )
            rows.append(row)
    return "\n".join(line.rstrip() for line in table(rows).splitlines())


# --------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--goals", nargs="+", type=Path, default=[REPO / g for g in DEFAULT_GOALS])
    ap.add_argument("--scripted", action="store_true", help="the scripted test model (fast smoke run)")
    ap.add_argument("--out", type=Path, default=None, help="artefacts here (default: a new temp dir)")
    ap.add_argument("--timeout", type=float, default=None, help="swarm timeout s (default: the spec's)")
    ap.add_argument(
        "--baselines-from",
        type=Path,
        default=None,
        metavar="DIR",
        help="reuse the one-shot and single-agent runs an earlier run left in DIR (its --out), "
        "re-scored by today's metrics; only the swarm runs again (their wall times are from then); "
        "the same as --reuse one-shot=DIR --reuse single-agent=DIR",
    )
    ap.add_argument(
        "--reuse",
        action="append",
        default=[],
        metavar="SYSTEM=DIR",
        help="reuse SYSTEM's run (swarm, one-shot or single-agent) that an earlier run left in DIR "
        "(its --out), re-scored by today's metrics (the swarm's event log folded again); the others "
        "run; repeatable",
    )
    ap.add_argument(
        "--cache",
        type=Path,
        default=None,
        metavar="DIR",
        help="the swarm keeps its model answers here (specswarm plan --cache); run it again with "
        "the same DIR to measure a replay (the baselines never use it)",
    )
    args = ap.parse_args(argv)
    reuse: dict[str, Path] = {}
    if args.baselines_from:
        reuse.update({"one-shot": args.baselines_from, "single-agent": args.baselines_from})
    for item in args.reuse:
        name, sep, where = item.partition("=")
        if not sep or name not in SYSTEMS or not where:
            ap.error(f"--reuse {item!r}: give SYSTEM=DIR, SYSTEM one of {', '.join(SYSTEMS)}")
        reuse[name] = Path(where)
    for name, where in reuse.items():
        if not where.is_dir():
            ap.error(f"no such directory for {name}: {where}")
    out = args.out or Path(tempfile.mkdtemp(prefix="specswarm-quality-"))
    out.mkdir(parents=True, exist_ok=True)
    out = out.resolve()
    shown = sys.argv[1:] if argv is None else argv
    command = "python " + shlex.join([os.path.relpath(__file__, Path.cwd()), *shown])
    printed: list[str] = []

    def emit(text: str = "") -> None:
        print(text, flush=True)
        printed.append(text)

    machine_line = machine()
    emit(machine_line)
    emit(f"command: {command}")
    emit(
        "model: "
        + (
            "scripted test model (smoke run: the figures say nothing about plan quality)"
            if args.scripted
            else "each spec's model settings (the embedded default unless a spec names another)"
        )
    )
    emit(f"artefacts: {out}")
    progress = Progress()
    goals: list[tuple[Any, list[SystemRun]]] = []
    used: set[str] = set()
    for spec_path in args.goals:
        try:
            spec, runs, gdir = run_goal(
                spec_path,
                out,
                scripted=args.scripted,
                timeout=args.timeout,
                progress=progress,
                used=used,
                reuse=reuse,
                cache=args.cache.resolve() if args.cache else None,
            )
        except KeyboardInterrupt:
            progress.say(f"interrupted; artefacts so far in {out}")
            return 130
        goals.append((spec, runs))
        model_name = json.loads((gdir / "metrics.json").read_text())["model"]
        emit()
        emit(f"## {spec.name}: {spec.goal!r} ({spec_path}; model {model_name})")
        tree = spec.tree
        emit(
            f"tree limits: depth {tree.max_depth}, "
            f"{tree.min_children}-{tree.max_children} children per split; "
            f"single agent's strategy {spec.strategy_for(0)!r}; "
            f"{len(spec.constraints)} declared constraint(s)"
        )
        emit(f"swarm: {shlex.join(swarm_command(spec_path, gdir, args.timeout))}")
        emit(score_table([(r.name, r.row()) for r in runs], LABELS))
        for run in runs:
            notes = run.work.notes
            shown_notes = notes if len(notes) <= MAX_NOTES else [*notes[: MAX_NOTES - 1], notes[-1]]
            for note in shown_notes:
                emit(f"  {run.name}: {note if len(note) <= 300 else note[:297] + '...'}")
            if len(notes) > len(shown_notes):
                emit(f"  {run.name}: ... {len(notes) - len(shown_notes)} more note(s) in metrics.json")
        emit(f"  offending items: {gdir / 'metrics.json'}")
    emit()
    emit("## summary")
    emit(summary(goals))
    (out / "quality.txt").write_text("\n".join(printed) + "\n", encoding="utf-8")
    (out / "summary.json").write_text(
        json.dumps(
            {
                "machine": machine_line,
                "command": command,
                "scripted": args.scripted,
                "goals": [
                    {"name": spec.name, "goal": spec.goal, "systems": [r.to_json() for r in runs]}
                    for spec, runs in goals
                ],
            },
            indent=1,
            ensure_ascii=False,
            allow_nan=False,
        )
        + "\n",
        encoding="utf-8",
    )
    progress.say(f"done; artefacts in {out}")
    # the benchmark itself succeeded; a system that failed shows in its rows
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
