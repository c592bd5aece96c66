"""The plan as a pure function of the event set, kept up to date one event at a time.

``fold(events)`` and ``FoldState.apply(event)`` give the same :class:`~specswarm.plan.views.Plan`
for any order and any number of deliveries of the same set of valid events. No I/O, no
clocks. The rules themselves are in :mod:`specswarm.plan.rules`; this module indexes the
events and caches each node's decision until an event touches that node.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from specswarm.plan.rules import LeafDecision, SplitDecision, assign_roles, decide_leaf, decide_split, least
from specswarm.plan.views import ROOT, NodeView, Plan, child_id, node_content
from specswarm.protocol.bodies import ClaimBody, Facts, JoinBody, ProposalBody, ResultBody, RunBody, VoteBody
from specswarm.protocol.canonical import canonical_bytes, sha256_hex
from specswarm.protocol.canonical import digest as canonical_digest
from specswarm.protocol.events import Event
from specswarm.spec import GoalSpec


@dataclass
class _NodeSeed:
    id: str
    parent: str | None
    title: str
    detail: str
    depth: int
    leaf: bool
    facts: Facts


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
        self._decisions: dict[str, SplitDecision | LeafDecision] = {}
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
        if isinstance(body, RunBody):
            self._run_events[event.id] = event
        if isinstance(body, RunBody) or len(self._run_events) > 1:
            chosen = self._choose_run()
            if chosen is not self.run_event:
                self.run_event = chosen
                self._invalidate_all()
        if isinstance(body, JoinBody):
            self._all_joins.setdefault(event.author, []).append(event)
            self._invalidate_all()
        elif isinstance(body, ProposalBody):
            self._proposals[event.id] = event
            self._proposals_by_node.setdefault(body.node, set()).add(event.id)
            self._touch(body.node)
        elif isinstance(body, VoteBody):
            per_author = self._votes.setdefault(body.proposal, {})
            key = (event.author, event.run)  # a foreign run's vote must not hide this run's one
            per_author[key] = least(per_author.get(key), event)
            prop = self._proposals.get(body.proposal)
            if prop is not None and isinstance(prop.body, ProposalBody):
                self._touch(prop.body.node)
        elif isinstance(body, ClaimBody):
            self._claims.setdefault(body.leaf, {})[event.id] = event
            self._touch(body.leaf)
        elif isinstance(body, ResultBody):
            self._results.setdefault(body.leaf, {})[event.id] = event
            self._touch(body.leaf)
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
    def spec(self) -> GoalSpec | None:
        run = self.run_event
        return run.body.spec if run is not None and isinstance(run.body, RunBody) else None

    def roles(self) -> dict[str, str]:
        if self._roles is None:
            self._roles = assign_roles(self.run_event, self._all_joins) if self.run_event else {}
        return self._roles

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
        spec = self.spec
        assert spec is not None
        roles = self.roles()
        if self._tree is None:
            self._tree = {}
            self._incomplete = self._counted = 0
            self._dirty.clear()
            self._grow([_NodeSeed(ROOT, None, spec.goal, spec.context, 0, spec.tree.max_depth <= 0, {})])
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
        spec = self.spec
        assert self.run_event is not None and spec is not None
        n_scorers = spec.roles.scorer.count
        return self.run_event.run, self.roles(), spec.quorum_size(), n_scorers, spec.tree.max_depth

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
            acc = self._proposals[accepted].body
            assert isinstance(acc, ProposalBody)
            depth = seed.depth + 1
            for i, ch in enumerate(acc.children):
                cid = child_id(accepted, i)
                children.append(cid)
                seeds.append(
                    _NodeSeed(
                        cid, seed.id, ch.title, ch.detail, depth, ch.leaf or depth >= max_depth, ch.facts
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
                cached = (view, canonical_bytes(node_content(view)))
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
    ) -> SplitDecision:
        cached = self._decisions.get(node)
        if cached is None:
            proposals = [self._proposals[pid] for pid in self._proposals_by_node.get(node, ())]
            votes = {p.id: self._votes.get(p.id, {}).values() for p in proposals}
            cached = decide_split(run, node, proposals, votes, roles, q, n_scorers)
            self._decisions[node] = cached
        return cached  # type: ignore[return-value]

    def _decide_leaf(self, run: str, leaf: str, roles: Mapping[str, str]) -> LeafDecision:
        cached = self._decisions.get(leaf)
        if cached is None:
            results = self._results.get(leaf, {}).values()
            cached = decide_leaf(run, self._claims.get(leaf, {}), results, roles)
            self._decisions[leaf] = cached
        return cached  # type: ignore[return-value]


def fold(events: Iterable[Event]) -> Plan:
    """The plan of a set of valid events (order and duplicates do not matter)."""
    return FoldState(events).plan()
