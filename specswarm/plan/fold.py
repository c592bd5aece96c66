"""The plan as a pure function of the event set.

``fold(events)`` and ``FoldState.apply(event)`` give the same :class:`Plan` for
any order and any number of deliveries of the same set of valid events. No I/O,
no clocks: every rule below is decided by the events alone.

Rules (docs/ARCHITECTURE.md, "The fold rules"):

* roles come from ``join`` events (the least (lamport, id) join of an author
  counts; in a run with an admission key, only joins it signed);
* a proposal is accepted when approving votes of distinct scorers reach the
  quorum; among several, the one whose quorum-completing vote is least in
  (lamport, author) wins, then the higher mean score, then the lesser id;
* on a leaf, the least (lamport, author) live claim wins; a claim named in a
  later claim's ``supersedes`` is dead;
* one result counts per leaf: the one under the least claim, then least id.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from specswarm.protocol.canonical import canonical_bytes, sha256_hex
from specswarm.protocol.canonical import digest as canonical_digest
from specswarm.protocol.events import Event, admission_valid

ROOT = "root"
ROLES = ("decomposer", "scorer", "executor", "observer")


def child_id(proposal_id: str, index: int) -> str:
    return f"{proposal_id[:16]}.{index}"


def quorum_size(quorum: Any, scorers: int) -> int:
    """Approvals needed: majority = n//2+1, all = n, an int k, a fraction f = ceil(f*n)."""
    if quorum == "majority":
        return scorers // 2 + 1
    if quorum == "all":
        return scorers
    if isinstance(quorum, bool):
        raise ValueError(f"bad quorum {quorum!r}")
    if isinstance(quorum, int):
        return quorum
    if isinstance(quorum, float) and 0 < quorum <= 1:
        return max(1, math.ceil(quorum * scorers - 1e-9))
    raise ValueError(f"bad quorum {quorum!r}")


# -- views: what the fold produces ------------------------------------------------------


@dataclass(frozen=True)
class VoteView:
    id: str
    author: str
    approve: bool
    score: int
    critique: str
    checks: tuple[Mapping[str, Any], ...]
    model_score: int | None
    lamport: int


@dataclass(frozen=True)
class ProposalView:
    id: str
    node: str
    author: str
    strategy: str
    children: tuple[Mapping[str, Any], ...]
    revises: str | None
    rationale: str
    lamport: int
    votes: tuple[VoteView, ...]
    """Counted votes (one per authorised scorer), in (lamport, author) order."""
    approvals: int
    rejections: int
    mean_score: int | None
    status: str
    """accepted | rejected (quorum out of reach) | outvoted (another won) | pending."""


@dataclass(frozen=True)
class ClaimView:
    id: str
    author: str
    lamport: int
    supersedes: str | None
    live: bool


@dataclass(frozen=True)
class ResultView:
    id: str
    author: str
    claim: str
    output: str
    model: str


@dataclass(frozen=True)
class NodeView:
    id: str
    parent: str | None
    title: str
    detail: str
    depth: int
    leaf: bool
    facts: Mapping[str, Any]
    children: tuple[str, ...]
    proposals: tuple[ProposalView, ...]
    """Every counted proposal for this node, accepted one first."""
    accepted: str | None
    """Id of the accepted proposal (non-leaf nodes)."""
    claims: tuple[ClaimView, ...]
    claim: str | None
    """Id of the winning live claim (leaves)."""
    result: ResultView | None
    """The one counted result (leaves)."""

    @property
    def status(self) -> str:
        if self.leaf:
            if self.result is not None:
                return "done"
            return "claimed" if self.claim else "unclaimed"
        if self.accepted:
            return "split"
        if any(p.status == "pending" for p in self.proposals):
            return "voting"
        return "open"

    @property
    def accepted_proposal(self) -> ProposalView | None:
        return next((p for p in self.proposals if p.id == self.accepted), None)


@dataclass(frozen=True)
class Plan:
    run_id: str | None
    spec: Mapping[str, Any] | None
    nodes: Mapping[str, NodeView]
    """Every node of the accepted tree, by id (root is ``"root"``)."""
    roles: Mapping[str, str]
    """peer id -> role, for authorised participants."""
    counts: Mapping[str, int]
    """Events held, by kind, plus ``ignored`` (valid but not counted: wrong role, unknown node...)."""
    complete: bool
    _digest_fn: Callable[[], str] | None = field(default=None, repr=False, compare=False)

    @cached_property
    def digest(self) -> str:
        """sha256 of the canonical JSON of :meth:`content` (computed on first use, then kept)."""
        if self._digest_fn is not None:
            return self._digest_fn()
        return canonical_digest(self.content())

    @property
    def root(self) -> NodeView | None:
        return self.nodes.get(ROOT)

    def walk(self) -> list[NodeView]:
        """Nodes depth-first, children in proposal order."""
        out: list[NodeView] = []
        stack = [ROOT] if ROOT in self.nodes else []
        while stack:
            node = self.nodes[stack.pop()]
            out.append(node)
            stack.extend(reversed(node.children))
        return out

    def leaves(self) -> list[NodeView]:
        return [n for n in self.walk() if n.leaf]

    def progress(self) -> dict[str, int]:
        nodes = self.walk()
        leaves = [n for n in nodes if n.leaf]
        return {
            "nodes": len(nodes),
            "split": sum(1 for n in nodes if n.accepted),
            "open": sum(1 for n in nodes if not n.leaf and not n.accepted),
            "leaves": len(leaves),
            "claimed": sum(1 for n in leaves if n.claim),
            "done": sum(1 for n in leaves if n.result),
        }

    def content(self) -> dict[str, Any]:
        """The digest's input: the tree's content only (no tallies, no transient claims)."""
        return {
            "run": self.run_id,
            "nodes": [_node_content(n) for n in sorted(self.nodes.values(), key=lambda n: n.id)],
        }

    def to_json(self) -> dict[str, Any]:
        """Full export (validated by schemas/plan.schema.json), nodes nested from the root."""

        def vote(v: VoteView) -> dict[str, Any]:
            return {
                "id": v.id,
                "author": v.author,
                "approve": v.approve,
                "score": v.score,
                "critique": v.critique,
                "checks": [dict(c) for c in v.checks],
                "model_score": v.model_score,
            }

        def proposal(p: ProposalView) -> dict[str, Any]:
            return {
                "id": p.id,
                "author": p.author,
                "strategy": p.strategy,
                "status": p.status,
                "revises": p.revises,
                "rationale": p.rationale,
                "children": [dict(c) for c in p.children],
                "tally": {"approve": p.approvals, "reject": p.rejections, "mean_score": p.mean_score},
                "votes": [vote(v) for v in p.votes],
            }

        def node(n: NodeView) -> dict[str, Any]:
            acc = n.accepted_proposal
            out: dict[str, Any] = {
                "id": n.id,
                "title": n.title,
                "detail": n.detail,
                "depth": n.depth,
                "leaf": n.leaf,
                "status": n.status,
                "facts": dict(n.facts),
                "proposed_by": ({"author": acc.author, "strategy": acc.strategy} if acc else None),
                "accepted": proposal(acc) if acc else None,
                "alternatives": [proposal(p) for p in n.proposals if p.id != n.accepted],
                "children": [node(self.nodes[c]) for c in n.children],
            }
            if n.leaf:
                out["claim"] = n.claim
                out["result"] = (
                    {
                        "id": n.result.id,
                        "author": n.result.author,
                        "output": n.result.output,
                        "model": n.result.model,
                    }
                    if n.result
                    else None
                )
            return out

        spec = self.spec or {}
        return {
            "format": "specswarm-plan/1",
            "run_id": self.run_id,
            "digest": self.digest,
            "complete": self.complete,
            "name": spec.get("name"),
            "goal": spec.get("goal"),
            "context": spec.get("context", ""),
            "quorum": spec.get("quorum"),
            "progress": self.progress(),
            "participants": [{"peer": p, "role": r} for p, r in sorted(self.roles.items())],
            "event_counts": dict(sorted(self.counts.items())),
            "root": node(self.nodes[ROOT]) if ROOT in self.nodes else None,
        }


def _node_content(n: NodeView) -> dict[str, Any]:
    return {
        "id": n.id,
        "parent": n.parent,
        "title": n.title,
        "detail": n.detail,
        "leaf": n.leaf,
        "accepted": n.accepted,
        "children": list(n.children),
        "result": n.result.id if n.result else None,
    }


# -- the incremental fold ------------------------------------------------------------------


def _least(a: Event | None, b: Event) -> Event:
    return b if a is None or (b.lamport, b.id) < (a.lamport, a.id) else a


@dataclass
class _NodeSeed:
    id: str
    parent: str | None
    title: str
    detail: str
    depth: int
    leaf: bool
    facts: Mapping[str, Any]


class FoldState:
    """Indexes over the event set; ``plan()`` derives the tree, caching per-node decisions.

    ``apply`` is O(1) apart from cache invalidation of the one node the event touches
    (a join or run event invalidates everything, which is rare). ``plan()`` keeps the
    tree it built last and rebuilds only the nodes whose decision an event touched (and
    the subtree under a node whose accepted split changed); the plan's digest is
    computed on first use, from per-node canonical bytes kept between plans.
    """

    def __init__(self, events: Iterable[Event] = (), run: str | None = None) -> None:
        """``run``: pin the run id; events of any other run are then ignored. Unpinned, the
        fold follows the run that holds the most events (ties: the least run event id), so a
        stray run event in a log cannot take over the plan."""
        self._events: dict[str, Event] = {}
        self.pinned_run = run
        self.run_event: Event | None = None
        self._run_events: dict[str, Event] = {}
        self._run_sizes: dict[str, int] = {}
        self._all_joins: dict[str, list[Event]] = {}
        self._proposals: dict[str, Event] = {}
        self._proposals_by_node: dict[str, set[str]] = {}
        self._votes: dict[str, dict[tuple[str, str], Event]] = {}  # proposal -> (author, run) -> least
        self._claims: dict[str, dict[str, Event]] = {}  # leaf -> claim id -> claim
        self._results: dict[str, dict[str, Event]] = {}  # leaf -> result id -> result
        self._counts: dict[str, int] = {}
        self._decisions: dict[str, Any] = {}
        self._roles: dict[str, str] | None = None
        self._plan: Plan | None = None
        # the tree of the last plan(): None = rebuild from the root
        self._tree: dict[str, NodeView] | None = None
        self._dirty: set[str] = set()  # nodes whose decision was dropped since the last plan()
        self._incomplete = 0  # nodes of the tree that keep it from complete
        self._counted = 0  # proposals shown in the tree
        self._frags: dict[str, tuple[NodeView, bytes]] = {}  # node id -> (view, canonical content)
        for event in events:
            self.apply(event)

    def __contains__(self, event_id: object) -> bool:
        return event_id in self._events

    def __len__(self) -> int:
        return len(self._events)

    @property
    def ids(self) -> set[str]:
        return set(self._events)

    def get(self, event_id: str) -> Event | None:
        return self._events.get(event_id)

    # -- applying ---------------------------------------------------------------------
    def apply(self, event: Event) -> bool:
        """Add one verified event. Returns False if it was already held (idempotent)."""
        if event.id in self._events or (self.pinned_run is not None and event.run != self.pinned_run):
            return False
        self._events[event.id] = event
        self._run_sizes[event.run] = self._run_sizes.get(event.run, 0) + 1
        self._counts[event.kind] = self._counts.get(event.kind, 0) + 1
        self._plan = None
        body = event.body
        kind = event.kind
        if kind == "run":
            self._run_events[event.id] = event
        if kind == "run" or len(self._run_events) > 1:
            chosen = self._choose_run()
            if chosen is not self.run_event:
                self.run_event = chosen
                self._invalidate_all()
        if kind == "join":
            self._all_joins.setdefault(event.author, []).append(event)
            self._invalidate_all()
        elif kind == "proposal":
            self._proposals[event.id] = event
            self._proposals_by_node.setdefault(body["node"], set()).add(event.id)
            self._touch(body["node"])
        elif kind == "vote":
            pid = body["proposal"]
            per_author = self._votes.setdefault(pid, {})
            key = (event.author, event.run)  # a foreign run's vote must not hide this run's one
            per_author[key] = _least(per_author.get(key), event)
            prop = self._proposals.get(pid)
            if prop is not None:
                self._touch(prop.body["node"])
        elif kind == "claim":
            self._claims.setdefault(body["leaf"], {})[event.id] = event
            self._touch(body["leaf"])
        elif kind == "result":
            self._results.setdefault(body["leaf"], {})[event.id] = event
            self._touch(body["leaf"])
        return True

    def _touch(self, node: str) -> None:
        self._decisions.pop(node, None)
        self._dirty.add(node)

    def _choose_run(self) -> Event | None:
        """The run event of the run holding the most events (ties: least run event id)."""
        if not self._run_events:
            return None
        return min(self._run_events.values(), key=lambda e: (-self._run_sizes.get(e.run, 0), e.id))

    def _invalidate_all(self) -> None:
        self._decisions.clear()
        self._roles = None
        self._tree = None
        self._dirty.clear()

    def events(self) -> list[Event]:
        """Every event held (in no particular order)."""
        return list(self._events.values())

    # -- deriving -----------------------------------------------------------------------
    @property
    def spec(self) -> Mapping[str, Any] | None:
        return self.run_event.body["spec"] if self.run_event else None

    def roles(self) -> dict[str, str]:
        if self._roles is None:
            self._roles = self._compute_roles()
        return self._roles

    def _compute_roles(self) -> dict[str, str]:
        run = self.run_event
        if run is None:
            return {}
        access = run.body["spec"].get("access", {})
        mode = access.get("mode", "open")
        allow = set(access.get("peers", []))
        admission = run.body.get("admission")
        roles: dict[str, str] = {}
        for author, joins in self._all_joins.items():
            if mode == "allowlist" and author not in allow:
                continue
            best: Event | None = None
            for join in joins:
                if join.run != run.run:
                    continue
                if admission and not admission_valid(
                    admission, run.run, author, join.body["role"], join.body.get("admission")
                ):
                    continue
                best = _least(best, join)
            if best is not None:
                roles[author] = best.body["role"]
        return roles

    def plan(self) -> Plan:
        if self._plan is None:
            self._plan = self._build()
        return self._plan

    def _build(self) -> Plan:
        run = self.run_event
        counts = dict(self._counts)
        if run is None:
            none_digest = canonical_digest({"run": None})
            return Plan(None, None, {}, {}, counts, False, lambda: none_digest)
        spec = run.body["spec"]
        roles = self.roles()
        if self._tree is None:
            self._tree = {}
            self._incomplete = self._counted = 0
            self._dirty.clear()
            tree = spec.get("tree", {})
            max_depth = int(tree.get("max_depth", 2))
            self._grow(
                [_NodeSeed(ROOT, None, spec.get("goal", ""), spec.get("context", ""), 0, max_depth <= 0, {})]
            )
        else:
            dirty, self._dirty = self._dirty, set()
            for node in dirty:
                if node in self._tree:
                    self._rebuild(node)
        counts["proposals_outside_tree"] = counts.get("proposal", 0) - self._counted
        nodes = dict(self._tree)
        run_id = run.run
        return Plan(
            run_id, spec, nodes, roles, counts, self._incomplete == 0, lambda: self._digest(run_id, nodes)
        )

    # -- the tree, kept between plans ------------------------------------------------------
    def _params(self) -> tuple[str, Mapping[str, str], int, int, int]:
        assert self.run_event is not None
        spec = self.run_event.body["spec"]
        max_depth = int(spec.get("tree", {}).get("max_depth", 2))
        n_scorers = int(spec.get("roles", {}).get("scorer", {}).get("count", 1))
        q = quorum_size(spec.get("quorum", "majority"), n_scorers)
        return self.run_event.run, self.roles(), q, n_scorers, max_depth

    def _view(
        self, seed: _NodeSeed, params: tuple[str, Mapping[str, str], int, int, int]
    ) -> tuple[NodeView, list[_NodeSeed]]:
        """The view of one node from its (cached) decision, and the seeds of its children."""
        run, roles, q, n_scorers, max_depth = params
        if seed.leaf:
            claims, claim, result = self._decide_leaf(run, seed.id, roles)
            return NodeView(
                seed.id,
                seed.parent,
                seed.title,
                seed.detail,
                seed.depth,
                True,
                seed.facts,
                (),
                (),
                None,
                claims,
                claim,
                result,
            ), []
        proposals, accepted = self._decide_split(run, seed.id, roles, q, n_scorers)
        children: list[str] = []
        seeds: list[_NodeSeed] = []
        if accepted is not None:
            acc = self._proposals[accepted]
            depth = seed.depth + 1
            for i, ch in enumerate(acc.body["children"]):
                cid = child_id(accepted, i)
                children.append(cid)
                seeds.append(
                    _NodeSeed(
                        cid,
                        seed.id,
                        ch["title"],
                        ch.get("detail", ""),
                        depth,
                        bool(ch.get("leaf")) or depth >= max_depth,
                        ch.get("facts", {}),
                    )
                )
        return NodeView(
            seed.id,
            seed.parent,
            seed.title,
            seed.detail,
            seed.depth,
            False,
            seed.facts,
            tuple(children),
            proposals,
            accepted,
            (),
            None,
            None,
        ), seeds

    def _put(self, view: NodeView) -> None:
        assert self._tree is not None
        self._tree[view.id] = view
        self._incomplete += (view.result is None) if view.leaf else (view.accepted is None)
        self._counted += len(view.proposals)

    def _drop(self, view: NodeView) -> None:
        assert self._tree is not None
        del self._tree[view.id]
        self._incomplete -= (view.result is None) if view.leaf else (view.accepted is None)
        self._counted -= len(view.proposals)

    def _grow(self, queue: list[_NodeSeed]) -> None:
        """Add the subtrees of these seeds (depth first, as the full build always did)."""
        params = self._params()
        while queue:
            view, seeds = self._view(queue.pop(), params)
            self._put(view)
            queue.extend(seeds)

    def _rebuild(self, node: str) -> None:
        """Re-derive one node of the tree; if its accepted split changed, its whole subtree."""
        assert self._tree is not None
        old = self._tree[node]
        seed = _NodeSeed(old.id, old.parent, old.title, old.detail, old.depth, old.leaf, old.facts)
        view, seeds = self._view(seed, self._params())
        self._drop(old)
        if view.accepted != old.accepted:
            stack = list(old.children)
            while stack:
                child = self._tree.get(stack.pop())
                if child is not None:
                    self._drop(child)
                    stack.extend(child.children)
            self._put(view)
            self._grow(seeds)
        else:
            self._put(view)

    def _digest(self, run_id: str, nodes: Mapping[str, NodeView]) -> str:
        """``canonical_digest(plan.content())``, joined from per-node canonical bytes that are
        kept while a node's view is unchanged (the same bytes, so the same digest)."""
        frags = self._frags
        parts = []
        for nid in sorted(nodes):
            view = nodes[nid]
            cached = frags.get(nid)
            if cached is None or cached[0] is not view:
                cached = (view, canonical_bytes(_node_content(view)))
                frags[nid] = cached
            parts.append(cached[1])
        if len(frags) > 2 * len(nodes) + 64:  # forget nodes that left the tree
            for nid in [k for k in frags if k not in nodes]:
                del frags[nid]
        # canonical JSON of {"nodes": [...], "run": run_id}: keys sorted, no spaces
        data = b'{"nodes":[' + b",".join(parts) + b'],"run":' + canonical_bytes(run_id) + b"}"
        return sha256_hex(data)

    def _decide_split(
        self, run: str, node: str, roles: Mapping[str, str], q: int, n_scorers: int
    ) -> tuple[tuple[ProposalView, ...], str | None]:
        key = node
        cached = self._decisions.get(key)
        if cached is not None:
            return cached  # type: ignore[no-any-return]
        candidates: list[tuple[tuple[int, str, int, str], str]] = []
        raw: list[tuple[Event, list[Event], int, int, int | None]] = []
        for pid in self._proposals_by_node.get(node, ()):
            prop = self._proposals[pid]
            if roles.get(prop.author) != "decomposer" or prop.run != run:
                continue
            votes = sorted(
                (
                    v
                    for (a, r), v in self._votes.get(pid, {}).items()
                    if r == run and roles.get(a) == "scorer"
                ),
                key=lambda v: v.order,
            )
            approvals = [v for v in votes if v.body["approve"]]
            rejections = len(votes) - len(approvals)
            mean = (sum(v.body["score"] for v in votes) * 1000 // len(votes)) if votes else None
            if len(approvals) >= q:
                done = approvals[q - 1]
                candidates.append(((done.lamport, done.author, -(mean or 0), pid), pid))
            raw.append((prop, votes, len(approvals), rejections, mean))
        accepted = min(candidates)[1] if candidates else None
        views = []
        for prop, votes, n_app, n_rej, mean in raw:
            if prop.id == accepted:
                status = "accepted"
            elif n_app >= q:
                status = "outvoted"
            elif n_rej > n_scorers - q:
                status = "rejected"
            else:
                status = "outvoted" if accepted else "pending"
            views.append(
                ProposalView(
                    prop.id,
                    node,
                    prop.author,
                    prop.body["strategy"],
                    tuple(prop.body["children"]),
                    prop.body.get("revises"),
                    prop.body.get("rationale", ""),
                    prop.lamport,
                    tuple(
                        VoteView(
                            v.id,
                            v.author,
                            v.body["approve"],
                            v.body["score"],
                            v.body.get("critique", ""),
                            tuple(v.body.get("checks", ())),
                            v.body.get("model_score"),
                            v.lamport,
                        )
                        for v in votes
                    ),
                    n_app,
                    n_rej,
                    None if mean is None else (mean + 500) // 1000,
                    status,
                )
            )
        views.sort(key=lambda p: (p.id != accepted, p.lamport, p.author, p.id))
        decision = (tuple(views), accepted)
        self._decisions[key] = decision
        return decision

    def _decide_leaf(
        self, run: str, leaf: str, roles: Mapping[str, str]
    ) -> tuple[tuple[ClaimView, ...], str | None, ResultView | None]:
        cached = self._decisions.get(leaf)
        if cached is not None:
            return cached  # type: ignore[no-any-return]
        claims = {
            cid: c
            for cid, c in self._claims.get(leaf, {}).items()
            if roles.get(c.author) == "executor" and c.run == run
        }
        dead = {
            c.body["supersedes"]
            for c in claims.values()
            if c.body.get("supersedes") in claims and claims[c.body["supersedes"]].lamport < c.lamport
        }
        live = [c for cid, c in claims.items() if cid not in dead]
        winner = min(live, key=lambda c: c.order).id if live else None
        best: tuple[tuple[int, str, str], Event] | None = None
        for res in self._results.get(leaf, {}).values():
            claim = claims.get(res.body["claim"])
            if claim is None or claim.author != res.author or res.run != run:
                continue
            key = (claim.lamport, claim.author, res.id)
            if best is None or key < best[0]:
                best = (key, res)
        result = None
        if best is not None:
            r = best[1]
            result = ResultView(r.id, r.author, r.body["claim"], r.body["output"], r.body.get("model", ""))
        views = tuple(
            ClaimView(c.id, c.author, c.lamport, c.body.get("supersedes"), c.id not in dead)
            for c in sorted(claims.values(), key=lambda c: c.order)
        )
        decision = (views, winner, result)
        self._decisions[leaf] = decision
        return decision


def fold(events: Iterable[Event]) -> Plan:
    """The plan of a set of valid events (order and duplicates do not matter)."""
    return FoldState(events).plan()


__all__ = ["ROOT", "FoldState", "NodeView", "Plan", "ProposalView", "child_id", "fold", "quorum_size"]
