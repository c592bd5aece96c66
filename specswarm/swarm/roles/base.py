"""What every model-using role shares: the model loaded once, one task at a time in a worker
thread under the machine-wide generation slot (or an endpoint's slot: :mod:`.slots`), failures
counted and backed off, and the role's own bookkeeping (when it first saw a node or claim, its
latest model failure)."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

import trio

from specswarm.errors import ModelError
from specswarm.model import worker
from specswarm.model.asking import Retry
from specswarm.model.base import Generation, GenerationRequest, Model, accepts_schema
from specswarm.model.replay import request_key
from specswarm.plan.views import ROOT, NodeView, Plan
from specswarm.swarm.roles.slots import endpoint_slot, endpoint_slots, machine_slot, machine_slots
from specswarm.swarm.streaks import Streak

if TYPE_CHECKING:
    from specswarm.swarm.node import Node, NodeCounters

log = logging.getLogger("specswarm.swarm.roles")
T = TypeVar("T")

FAILURE_BACKOFF = 20.0
"""Seconds a role leaves a node alone after the model failed on it (less after an unusable
answer: :meth:`~specswarm.swarm.streaks.Streak.backoff`)."""


def spread(*parts: str) -> int:
    """A stable hash of ``parts``: how peers spread nodes and leaves among themselves."""
    return int.from_bytes(hashlib.sha256("\n".join(parts).encode()).digest()[:8], "big")


RIVALS = 2
"""Decomposers that compete on a node below the root."""
ROOT_RIVALS = 4
"""Decomposers that compete at the root: every one in a swarm of up to this many, and in a
larger one this many seats, every strategy's first seat before any second (more when the spec
declares more strategies: each gets a seat). Every decomposer of a 21-decomposer swarm proposed
at the root, and with 21 scorers the root's 441 votes had to reach every peer before a ballot."""


def content_path(plan: Plan, node_id: str) -> str:
    """What ``node_id`` is about, independent of the run: the titles from the root down to it
    (node ids derive from proposal ids, which differ in every run)."""
    titles = []
    cur: str | None = node_id
    while cur is not None and cur in plan.nodes:
        titles.append(plan.nodes[cur].title)
        cur = plan.nodes[cur].parent
    return "\n".join(reversed(titles))


UNHEARD = "(a seat no peer was heard in)"
"""A peer id no peer has: ``node.peer_gone(UNHEARD, since)`` says whether the grace period for a
peer never heard from (longer in a large swarm) has passed since ``since``."""


def declared_strategies(plan: Plan) -> list[str]:
    """The strategy of every decomposer seat the spec declares (one entry per seat); without
    the run event, what the joins say."""
    spec = plan.spec
    if spec is None:
        return [plan.strategies.get(p, "") for p, r in plan.roles.items() if r == "decomposer"]
    return [spec.strategy_for(i) for i in range(spec.roles.decomposer.count)]


def owner_slots(plan: Plan, node_id: str) -> list[tuple[str, int]]:
    """The decomposer seats that split ``node_id`` (:data:`RIVALS`; at the root
    :data:`ROOT_RIVALS`, or one per declared strategy if more), as
    (strategy, rank among that strategy's peers). They come from the spec's declared seats, not
    from the joins this peer has heard: a peer that has not yet heard every join (gossip drops
    some; anti-entropy brings them later) still picks the same rivals as the rest. Strategies
    are ranked by a hash of (the node's content path, strategy); a strategy's second seat comes
    after every strategy's first."""
    declared = declared_strategies(plan)
    key = content_path(plan, node_id)
    seats = {s: declared.count(s) for s in declared}
    ranked = sorted(((k, spread(key, s), s) for s, m in seats.items() for k in range(m)))
    rivals = RIVALS if node_id != ROOT else max(ROOT_RIVALS, len(seats))
    return [(s, k) for k, _, s in ranked[:rivals]]


def owners_of(plan: Plan, node_id: str, slots: list[tuple[str, int]] | None = None) -> list[str]:
    """The decomposers responsible for splitting ``node_id``: the peers in its
    :func:`owner_slots`: the work spreads, the rivals differ, and the same plan
    gets the same strategies on every run (what a node is asked depends on its content, not on
    the run's peer ids or on which joins arrived first). A strategy's peers are ranked by a
    hash of (content path, peer); a seat whose peer this peer has not heard of is left out.
    ``slots``: the node's :func:`owner_slots`, when the caller has them already."""
    decs = sorted(p for p, r in plan.roles.items() if r == "decomposer")
    key = content_path(plan, node_id)
    owners = []
    for strategy, rank in owner_slots(plan, node_id) if slots is None else slots:
        peers = sorted(
            (p for p in decs if plan.strategies.get(p, "") == strategy), key=lambda p: spread(key, p)
        )
        if rank < len(peers):
            owners.append(peers[rank])
    return owners


def tree_orders(plan: Plan) -> dict[str, tuple[int, tuple[int, ...]]]:
    """node id -> its place in breadth-first order: (depth, its index among its siblings at
    every level from the root down). The same for the same plan content in every run."""
    orders: dict[str, tuple[int, tuple[int, ...]]] = {}
    todo: list[tuple[str, tuple[int, ...]]] = [(ROOT, ())] if ROOT in plan.nodes else []
    while todo:
        nid, path = todo.pop()
        orders[nid] = (len(path), path)
        todo.extend((c, (*path, i)) for i, c in enumerate(plan.nodes[nid].children) if c in plan.nodes)
    return orders


def node_in_turn(plan: Plan) -> NodeView | None:
    """The one node whose splits are judged now: the first in breadth-first order
    (:func:`tree_orders`) that is neither split nor a leaf. The critics judge a split against
    the whole tree; judged in this order, the tree they see is the same in every run, whatever
    the timing (splits are still written in parallel; only their judging takes turns)."""
    orders = tree_orders(plan)
    open_ = [n for n in plan.nodes.values() if not (n.leaf or n.accepted) and n.id in orders]
    return min(open_, key=lambda n: orders[n.id], default=None)


def in_turn(plan: Plan, n: NodeView) -> bool:
    """Whether ``n`` is the node whose splits are judged now (:func:`node_in_turn`)."""
    now = node_in_turn(plan)
    return now is not None and now.id == n.id


def ancestors_of(plan: Plan, n: NodeView) -> list[NodeView]:
    """The nodes above ``n``, root first."""
    out = []
    cur = n
    while cur.parent is not None:
        cur = plan.nodes[cur.parent]
        out.append(cur)
    return list(reversed(out))


def siblings_of(plan: Plan, n: NodeView) -> list[NodeView]:
    """The other children of ``n``'s parent, in order."""
    if n.parent is None:
        return []
    return [plan.nodes[c] for c in plan.nodes[n.parent].children if c != n.id]


ACTIVITY = {"decomposer": "propose", "scorer": "rate", "executor": "execute"}
"""What a role's model task does, as its status line's ``doing.task`` says."""


class ModelRole:
    """Shared plumbing: call the model off the trio thread, count calls and failures."""

    name = "?"
    doing: dict[str, str] | None = None
    """What this role is doing now (in its status lines): ``{"task": "propose" | "rate" |
    "execute", "on": node, proposal or leaf id, "phase": "waiting" (for the machine's model
    slot) | "generating"}``; None when idle."""

    def __init__(self, model_factory: Callable[[], Model] | None) -> None:
        self._model_factory = model_factory
        self._model: Model | None = None
        self._backoff: dict[str, float] = {}
        self.first_seen: dict[str, float] = {}
        """Local monotonic time at which a node or claim id was first seen (for takeovers)."""
        self.last_failure: str | None = None
        """The latest model failure (shown in status lines and when a run stalls)."""
        self.failing: dict[str, Streak] = {}
        """key -> the calls on it that failed in a row (until one succeeds; in status lines)."""
        self.memo: dict[str, Generation] = {}
        """Greedy answers by request (:class:`CountingModel`)."""
        self.task_seconds: float | None = None
        """Seconds the latest model task that answered took, its turn on the machine's model
        come (None before the first)."""

    def seen(self, key: str) -> float:
        """When this role first saw ``key`` (now, if never before)."""
        return self.first_seen.setdefault(key, trio.current_time())

    async def model(self) -> Model:
        if self._model is None:
            assert self._model_factory is not None
            self._model = await trio.to_thread.run_sync(self._model_factory)
        return self._model

    async def act(self, node: Node, plan: Plan) -> None:
        """Look at the plan, publish what this role should, return (called again on change)."""
        raise NotImplementedError

    def retry(self, key: str) -> Retry:
        """How the next call on ``key`` is asked after the calls that failed on it in a row."""
        failed = self.failing.get(key)
        return Retry(attempt=failed.times, failure=failed.problem) if failed else Retry(attempt=0, failure="")

    def backing_off(self, key: str) -> bool:
        return self._backoff.get(key, 0.0) > trio.current_time()

    async def think(
        self,
        node: Node,
        key: str,
        task: Callable[[Model], T],
        *,
        reuse: Callable[[], T | None] | None = None,
    ) -> T | None:
        """Run one (blocking) model task in a worker thread; None (counted) on failure.

        ``reuse``: checked once this peer's turn on the machine's model has come; if it gives
        an answer (e.g. another scorer already published the same deterministic rating), the
        model is not called."""
        raw = await self.model()
        endpoint = endpoint_slots(raw)
        model = CountingModel(raw, node.counters, None if raw.instant else self.memo)
        model.concurrent = endpoint is not None
        started = trio.current_time()
        task_name = ACTIVITY.get(self.name, self.name)
        self.doing = {"task": task_name, "on": key, "phase": "waiting"}
        # an endpoint that serves several requests at once: one of its slots (model.concurrency,
        # machine-wide), and the call in a thread of its own, not the process's one model thread
        slot = endpoint_slot(*endpoint) if endpoint else machine_slot(not raw.instant, machine_slots(raw))
        try:
            async with slot:
                self.doing = {"task": task_name, "on": key, "phase": "generating"}
                slot_at = trio.current_time()
                shared = reuse() if reuse is not None else None
                if shared is not None:
                    node.counters.model_reused += 1
                    return shared
                node.counters.model_calls += 1

                # in the model thread, ahead of the networking (specswarm.model.worker)
                def in_model_thread() -> T:
                    return worker.run(task, model)

                pause = getattr(raw, "virtual_seconds", None)
                if pause is not None:  # a simulation's model: instant, but it takes virtual time
                    await trio.sleep(pause)
                    result = task(model)
                elif endpoint is not None:
                    result = await trio.to_thread.run_sync(task, model)
                else:
                    result = await trio.to_thread.run_sync(in_model_thread)
        except ModelError as exc:
            node.counters.model_failures += 1
            self.last_failure = f"{self.name} on {key}: {exc}"[:500]
            streak = self.failing.setdefault(key, Streak())
            streak.failed(str(exc), getattr(exc, "problem", ""))
            self._backoff[key] = trio.current_time() + streak.backoff(FAILURE_BACKOFF)
            log.warning("%s: model failed on %s (%d in a row): %s", self.name, key, streak.times, exc)
            return None
        finally:
            now = trio.current_time()
            node.counters.model_seconds += now - started
            self.doing = None
        self.failing.pop(key, None)
        self.task_seconds = now - slot_at
        log.info(MODEL_TASK_LOG, task_name, key, slot_at - started, now - slot_at)
        return result


MODEL_TASK_LOG = "model %s on %s: waited %.1f s, generated %.1f s"
"""The INFO line each model task ends with (``SPECSWARM_LOG=INFO``): where a run's time goes,
as ``bench/timeline.py`` reads it."""

MEMO_SIZE = 256
"""Greedy answers a peer remembers (oldest forgotten first)."""


class CountingModel:
    """Passes generations through to the real model, adding each one's tokens and time
    to the node's counters (model_tokens, model_generations, model_gen_seconds); an answer
    from the answer cache counts as a hit (cache_hits, cached_tokens) and nothing else."""

    def __init__(
        self, inner: Model, counters: NodeCounters, memo: dict[str, Generation] | None = None
    ) -> None:
        self._inner = inner
        self._counters = counters
        self._memo = memo
        self.name = inner.name
        self.instant = inner.instant
        self.concurrent = False
        """Its calls need no process-wide lock (:func:`~specswarm.model.lock.generate_locked`):
        an endpoint that serves several at once, bounded by its slots (:mod:`.slots`)."""

    @property
    def accepts_schema(self) -> bool:
        """As the model it counts for (which may find out, mid-run, that it does not)."""
        return accepts_schema(self._inner)

    def generate(self, req: GenerationRequest) -> Generation:
        # greedy decoding gives the same prompt the same answer: a rival's identical split, or
        # a question asked again, is answered from what this peer's model said before
        memo = self._memo if req.top_k == 1 else None
        key = request_key(req) if memo is not None else ""
        if memo is not None and key in memo:
            self._counters.model_reused += 1
            return memo[key]
        gen = self._inner.generate(req)
        if memo is not None:
            if len(memo) >= MEMO_SIZE:
                memo.pop(next(iter(memo)))
            memo[key] = gen
        self.name = self._inner.name  # an endpoint names its model once it has asked
        if gen.cached is not None:
            self._counters.cache_hits += 1 if gen.cached else 0
            self._counters.cache_misses += 0 if gen.cached else 1
        if gen.cached:  # replayed from the answer cache: no generation happened
            self._counters.cached_tokens += gen.tokens
            return gen
        self._counters.model_generations += 1
        self._counters.model_tokens += gen.tokens
        self._counters.model_gen_seconds += gen.seconds
        log.info("generation: %d tokens in %.1f s (answer %d chars)", gen.tokens, gen.seconds, len(gen.text))
        return gen
