"""The four roles. Each looks at the folded plan and publishes what it should.

No role talks to another directly: they only read the plan (which every peer
derives from the same events) and add events. ``act`` does at most one piece
of model work per call and returns, so the node re-folds between steps.

* **Decomposer**: proposes a split for every accepted, unsplit node it is
  responsible for (all decomposers compete at the root; below it one preferred
  decomposer per node, chosen by hashing the node id, with takeover when it is
  gone or slow), and revises its rejected splits from the scorers' critiques.
* **Scorer**: votes once on every pending proposal: mechanical critics plus the
  model's rating as a minor input.
* **Executor**: claims an unclaimed leaf, waits the settle window, executes it
  only if its claim is still the oldest, publishes the result; supersedes the
  claim of an executor that is gone.
* **Observer**: publishes nothing; prints snapshots (see :mod:`specswarm.render.tree`).
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import trio

from specswarm.errors import ModelError
from specswarm.model.base import Model
from specswarm.plan import critics
from specswarm.plan.fold import ROOT, NodeView, Plan, ProposalView
from specswarm.swarm.node import Node

log = logging.getLogger("specswarm.swarm.roles")
T = TypeVar("T")

FAILURE_BACKOFF = 20.0
"""Seconds a role leaves a node alone after the model failed on it."""


def _h(*parts: str) -> int:
    return int.from_bytes(hashlib.sha256("\n".join(parts).encode()).digest()[:8], "big")


def node_dict(n: NodeView) -> dict[str, Any]:
    return {"id": n.id, "title": n.title, "detail": n.detail, "depth": n.depth, "facts": dict(n.facts)}


def ancestors_of(plan: Plan, n: NodeView) -> list[dict[str, Any]]:
    out = []
    cur = n
    while cur.parent is not None:
        cur = plan.nodes[cur.parent]
        out.append(node_dict(cur))
    return list(reversed(out))


def siblings_of(plan: Plan, n: NodeView) -> list[dict[str, Any]]:
    if n.parent is None:
        return []
    return [node_dict(plan.nodes[c]) for c in plan.nodes[n.parent].children if c != n.id]


class _ModelRole:
    """Shared plumbing: call the model off the trio thread, count calls and failures."""

    name = "?"

    def __init__(self, model_factory: Callable[[], Model] | None) -> None:
        self._model_factory = model_factory
        self._model: Model | None = None
        self._backoff: dict[str, float] = {}
        self.failures: dict[str, str] = {}
        """node id -> last model failure (shown when a run stalls)."""

    async def model(self) -> Model:
        if self._model is None:
            assert self._model_factory is not None
            self._model = await trio.to_thread.run_sync(self._model_factory)
        return self._model

    def backing_off(self, key: str) -> bool:
        return self._backoff.get(key, 0.0) > time.monotonic()

    async def think(
        self,
        node: Node,
        key: str,
        fn: Callable[..., T],
        *args: Any,
        reuse: Callable[[], T | None] | None = None,
        **kwargs: Any,
    ) -> T | None:
        """Run one (blocking) model task in a worker thread; None (counted) on failure.

        ``reuse``: checked once this peer's turn on the machine's model has come; if it gives
        an answer (e.g. another scorer already published the same deterministic rating), the
        model is not called."""
        raw = await self.model()
        model = _CountingModel(raw, node)
        started = time.monotonic()
        try:
            instant = getattr(raw, "name", "") == "scripted" or type(raw).__name__ == "ReplayModel"
            async with machine_slot(enabled=not instant):
                shared = reuse() if reuse is not None else None
                if shared is not None:
                    node.counters.model_reused += 1
                    return shared
                node.counters.model_calls += 1
                result = await trio.to_thread.run_sync(lambda: fn(model, *args, **kwargs))
        except ModelError as exc:
            node.counters.model_failures += 1
            self.failures[key] = str(exc)
            node.last_model_failure = f"{self.name} on {key}: {exc}"[:500]
            self._backoff[key] = time.monotonic() + FAILURE_BACKOFF
            log.warning("%s: model failed on %s: %s", self.name, key, exc)
            return None
        finally:
            node.counters.model_seconds += time.monotonic() - started
        self.failures.pop(key, None)
        return result  # type: ignore[return-value]


class _CountingModel:
    """Passes generations through to the real model, adding each one's tokens and time
    to the node's counters (model_tokens, model_generations, model_gen_seconds)."""

    def __init__(self, inner: Model, node: Node) -> None:
        self._inner = inner
        self._counters = node.counters
        self.name = inner.name

    def generate(self, req: Any) -> Any:
        gen = self._inner.generate(req)
        self._counters.model_generations += 1
        self._counters.model_tokens += int(gen.tokens)
        self._counters.model_gen_seconds += float(gen.seconds)
        return gen

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._inner, attr)


def _machine_slot_path() -> Any:
    from specswarm.model.assets import cache_dir

    path = cache_dir() / "generation.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


@asynccontextmanager
async def machine_slot(enabled: bool = True) -> AsyncIterator[None]:
    """Hold the machine-wide generation lock: a file lock shared by every peer process of this
    user. On a small machine one generation at a time, using every core, finishes sooner than
    several fighting over them. Off with SPECSWARM_MACHINE_LOCK=0 (or for instant models)."""
    import fcntl
    import os

    if not enabled or os.environ.get("SPECSWARM_MACHINE_LOCK", "1") == "0":
        yield
        return
    fh = open(_machine_slot_path(), "a")
    try:
        # waiting happens in a thread; if we are cancelled meanwhile, closing the file
        # below releases the lock the abandoned thread may still obtain
        await trio.to_thread.run_sync(fcntl.flock, fh, fcntl.LOCK_EX, abandon_on_cancel=True)
        yield
    finally:
        fh.close()


class Decomposer(_ModelRole):
    name = "decomposer"

    def __init__(
        self, model_factory: Callable[[], Model] | None, strategy: str, takeover_seconds: float = 45.0
    ) -> None:
        super().__init__(model_factory)
        self.strategy = strategy
        self.takeover_seconds = takeover_seconds

    def responsible(self, node: Node, plan: Plan, n: NodeView) -> bool:
        """Root: everyone competes. Elsewhere: the preferred decomposer, or anyone once it is gone
        or has not proposed within the takeover window, or once every proposal is dead."""
        if n.id == ROOT:
            return True
        decs = sorted(p for p, r in plan.roles.items() if r == "decomposer")
        if not decs:
            return False
        owner = decs[_h(n.id) % len(decs)]
        if owner == node.peer_id:
            return True
        live = [p for p in n.proposals if p.status in ("pending", "accepted")]
        if live:
            return False
        first = node.first_seen.setdefault(n.id, time.monotonic())
        if node.peer_gone(owner, since=first):
            return True
        return time.monotonic() - first > self.takeover_seconds

    async def act(self, node: Node, plan: Plan) -> None:
        spec = plan.spec
        if spec is None:
            return
        limits = spec.get("tree", {})
        max_rev = int(limits.get("max_revisions", 2))
        todo = sorted(
            (n for n in plan.nodes.values() if not n.leaf and not n.accepted),
            key=lambda n: (n.depth, _h(node.peer_id, n.id)),
        )
        for n in todo:
            node.first_seen.setdefault(n.id, time.monotonic())
            if self.backing_off(n.id):
                continue
            mine = sorted((p for p in n.proposals if p.author == node.peer_id), key=lambda p: p.lamport)
            if not mine:
                if self.responsible(node, plan, n):
                    await self._propose(node, plan, n, None)
                    return
                continue
            latest = mine[-1]
            if latest.status == "rejected" and len(mine) <= max_rev:
                await self._propose(node, plan, n, latest)
                return

    async def _propose(self, node: Node, plan: Plan, n: NodeView, revising: ProposalView | None) -> None:
        from specswarm.model import tasks

        spec = plan.spec or {}
        critiques = [v.critique for v in revising.votes if not v.approve and v.critique] if revising else []
        children = await self.think(
            node,
            n.id,
            tasks.decompose,
            spec,
            node_dict(n),
            ancestors_of(plan, n),
            siblings_of(plan, n),
            self.strategy,
            critiques,
            previous=[dict(c) for c in revising.children] if revising else None,
        )
        if not children:
            return
        max_depth = int(spec.get("tree", {}).get("max_depth", 2))
        body_children = []
        for c in children:
            item = c.to_json() if hasattr(c, "to_json") else dict(c)
            item["leaf"] = bool(item.get("leaf")) or n.depth + 1 >= max_depth
            body_children.append(item)
        how = self.strategy if self.strategy.startswith("by ") else f"by {self.strategy}"
        rationale = f"Split {how}" + (f", revised after: {'; '.join(critiques)[:600]}" if critiques else "")
        await node.publish(
            "proposal",
            {
                "node": n.id,
                "strategy": self.strategy,
                "children": body_children,
                "revises": revising.id if revising else None,
                "rationale": rationale[:3900],
            },
        )


class Scorer(_ModelRole):
    name = "scorer"

    async def act(self, node: Node, plan: Plan) -> None:
        spec = plan.spec
        if spec is None:
            return
        for n in sorted(plan.nodes.values(), key=lambda n: n.depth):
            if n.leaf or n.accepted:
                continue
            for p in n.proposals:
                if p.status != "pending" or any(v.author == node.peer_id for v in p.votes):
                    continue
                if self.backing_off(p.id):
                    continue
                await self._vote(node, plan, n, p, spec)
                return

    async def _vote(
        self, node: Node, plan: Plan, n: NodeView, p: ProposalView, spec: Mapping[str, Any]
    ) -> None:
        from specswarm.model import tasks

        parent = node_dict(n)
        children = [dict(c) for c in p.children]
        elsewhere = [s["title"] for s in siblings_of(plan, n)]
        checks = critics.check_split(spec, parent, children, elsewhere)
        model_cfg = spec.get("model", {})
        weight = float(model_cfg.get("model_weight", 0.2))
        model_score: int | None = None
        if weight > 0:
            model_score = await self.think(
                node,
                p.id,
                tasks.rate,
                spec,
                parent,
                children,
                reuse=lambda: shared_rating(node, p.node, p.id),
            )
        threshold = int(spec.get("tree", {}).get("approve_threshold", 60))
        score, approve = critics.combine(
            checks, model_score, weight if model_score is not None else 0.0, threshold
        )
        await node.publish(
            "vote",
            {
                "proposal": p.id,
                "approve": approve,
                "score": score,
                "critique": critics.critique(checks)[:3900] or "no problems found",
                "checks": [
                    {"name": c.name, "score": c.score, "passed": c.passed, "note": c.note[:490]}
                    for c in checks
                ],
                "model_score": model_score,
            },
        )


def shared_rating(node: Node, node_id: str, proposal_id: str) -> int | None:
    """A model rating another scorer already published for this proposal. Ratings are greedy
    (top_k 1, fixed seed) on the same prompt, so every scorer would compute the same number."""
    n = node.plan().nodes.get(node_id)
    prop = next((q for q in n.proposals if q.id == proposal_id), None) if n else None
    return next((v.model_score for v in prop.votes if v.model_score is not None), None) if prop else None


class Executor(_ModelRole):
    name = "executor"

    def __init__(
        self,
        model_factory: Callable[[], Model] | None,
        settle_seconds: float = 1.0,
        claim_timeout: float = 180.0,
        gone_seconds: float = 15.0,
    ) -> None:
        super().__init__(model_factory)
        self.settle = settle_seconds
        self.claim_timeout = claim_timeout
        self.gone_seconds = gone_seconds
        self.lost_races = 0
        self.executed = 0

    def holder_gone(self, node: Node, holder: str, claim_id: str) -> bool:
        if holder == node.peer_id:
            return False
        now = time.monotonic()
        first = node.first_seen.setdefault(claim_id, now)
        if now - first > self.claim_timeout:
            return True
        return node.peer_gone(holder, since=first, grace=self.gone_seconds)

    async def act(self, node: Node, plan: Plan) -> None:
        if plan.spec is None:
            return
        open_leaves = [n for n in plan.leaves() if n.result is None]
        # 1. finish what I hold (e.g. after a restart or a resume)
        for leaf in open_leaves:
            mine = leaf.claim and self._author_of(leaf, leaf.claim) == node.peer_id
            if mine and leaf.claim and not self.backing_off(leaf.id):
                await self._execute(node, plan, leaf, leaf.claim)
                return
        # 2. claim something unclaimed, or take over a dead holder's claim
        for leaf in sorted(open_leaves, key=lambda n: _h(node.peer_id, n.id)):
            if self.backing_off(leaf.id):
                continue
            if leaf.claim is None:
                await self._claim_and_run(node, leaf.id, None)
                return
            holder = self._author_of(leaf, leaf.claim)
            if holder and self.holder_gone(node, holder, leaf.claim):
                log.info("executor: %s holds %s but is gone; superseding", holder[-8:], leaf.id)
                await self._claim_and_run(node, leaf.id, leaf.claim)
                return

    @staticmethod
    def _author_of(leaf: NodeView, claim_id: str) -> str | None:
        return next((c.author for c in leaf.claims if c.id == claim_id), None)

    async def _claim_and_run(self, node: Node, leaf_id: str, supersedes: str | None) -> None:
        claim = await node.publish("claim", {"leaf": leaf_id, "supersedes": supersedes})
        # The settle window: an older claim we have not heard of yet may still arrive.
        await trio.sleep(self.settle)
        plan = node.plan()
        leaf = plan.nodes.get(leaf_id)
        if leaf is None or leaf.result is not None:
            return
        if leaf.claim != claim.id:
            self.lost_races += 1
            log.info("executor: lost the race for %s; moving on", leaf_id)
            return
        await self._execute(node, plan, leaf, claim.id)

    async def _execute(self, node: Node, plan: Plan, leaf: NodeView, claim_id: str) -> None:
        from specswarm.model import tasks

        output = await self.think(
            node, leaf.id, tasks.execute, plan.spec or {}, node_dict(leaf), ancestors_of(plan, leaf)
        )
        if output is None:
            return
        model_name = self._model.name if self._model is not None else "?"
        await node.publish(
            "result",
            {"leaf": leaf.id, "claim": claim_id, "output": output[:19000], "model": model_name[:190]},
        )
        self.executed += 1


def make_role(
    role: str, spec: Mapping[str, Any], model_factory: Callable[[], Model] | None, strategy: str | None = None
) -> Any:
    budget = spec.get("budget", {})
    if role == "decomposer":
        # a live owner that is merely slow (queued behind other generations) keeps its node for
        # as long as an executor keeps a claim; a disconnected owner loses it at once
        return Decomposer(
            model_factory, strategy or "by parts", takeover_seconds=float(budget.get("claim_timeout", 180.0))
        )
    if role == "scorer":
        return Scorer(model_factory)
    if role == "executor":
        return Executor(
            model_factory,
            settle_seconds=float(budget.get("settle_seconds", 1.0)),
            claim_timeout=float(budget.get("claim_timeout", 180.0)),
        )
    if role == "observer":
        return None
    raise ValueError(f"unknown role {role!r}")
