"""The plan tree a :class:`~specswarm.plan.fold.FoldState` keeps between plans.

Rebuilding the whole tree for every new event costs O(nodes); an event only ever changes
the decision of one node. So the tree is kept, a touched node is re-derived, and only when
its accepted split changed is its subtree dropped and grown again. The digest is joined
from per-node canonical bytes kept while a node's view is unchanged.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

from specswarm.plan.views import NodeView, SummaryView, node_content
from specswarm.protocol.bodies import Facts
from specswarm.protocol.canonical import canonical_bytes, sha256_hex


@dataclass
class NodeSeed:
    """What a node's parent decides about it: enough to derive its view."""

    id: str
    parent: str | None
    title: str
    detail: str
    depth: int
    leaf: bool
    facts: Facts


Derive = Callable[[NodeSeed], tuple[NodeView, list[NodeSeed]]]
"""The view of one node from its decision, and the seeds of its children."""
Summarize = Callable[[NodeView, list[NodeView]], SummaryView | None]
"""The counted summary of a split node, given its view and its children's views."""


class KeptTree:
    """The nodes of the last plan, with the counts ``plan()`` reads off them."""

    def __init__(self, summaries: bool = False) -> None:
        self.summaries = summaries
        """Split nodes get summaries (``review.summaries``): one without is not complete."""
        self.nodes: dict[str, NodeView] = {}
        self.incomplete = 0
        """Nodes that keep the plan from complete (an open split, a leaf without result, with
        ``summaries`` a split node without its summary)."""
        self.counted = 0
        """Proposals shown in the tree."""
        self.summarized = 0
        """Split nodes with a counted summary."""
        self._frags: dict[str, tuple[NodeView, bytes]] = {}  # node id -> (view, canonical content)
        self._changed: set[str] = set()  # nodes put since the last summarize()

    def grow(self, queue: list[NodeSeed], derive: Derive) -> None:
        """Add the subtrees of these seeds (depth first, as the full build always did)."""
        while queue:
            view, seeds = derive(queue.pop())
            self._put(view)
            queue.extend(seeds)

    def rebuild(self, node: str, derive: Derive) -> None:
        """Re-derive one node; if its accepted split changed, its whole subtree."""
        old = self.nodes[node]
        # a leaf with proposals was not declared one: no split served it (rules.AS_LEAF), and a
        # later vote may still pass one
        declared_leaf = old.leaf and not old.proposals
        seed = NodeSeed(old.id, old.parent, old.title, old.detail, old.depth, declared_leaf, old.facts)
        view, seeds = derive(seed)
        self._drop(old)
        if view.accepted != old.accepted:
            stack = list(old.children)
            while stack:
                child = self.nodes.get(stack.pop())
                if child is not None:
                    self._drop(child)
                    stack.extend(child.children)
            self._put(view)
            self.grow(seeds, derive)
        else:
            self._put(view)

    def summarize(self, decide: Summarize) -> None:
        """Re-decide the summary of every split node that a node put since the last call may
        change (itself, its parent), deepest first; a summary that changed re-decides its
        parent's in turn (a node's sources are its children's results and summaries)."""
        changed, self._changed = self._changed, set()
        if not self.summaries:
            return
        queue: list[tuple[int, str]] = []
        queued: set[str] = set()

        def push(nid: str | None) -> None:
            view = self.nodes.get(nid) if nid is not None else None
            if view is not None and view.id not in queued:
                queued.add(view.id)
                heapq.heappush(queue, (-view.depth, view.id))

        for nid in changed:
            if nid in self.nodes:
                push(nid)
                push(self.nodes[nid].parent)
        while queue:
            view = self.nodes[heapq.heappop(queue)[1]]
            if view.leaf or view.accepted is None:
                continue
            kids = [self.nodes[c] for c in view.children if c in self.nodes]
            summary = decide(view, kids)
            if summary != view.summary:
                self._drop(view)
                self._put(replace(view, summary=summary))
                push(view.parent)
        self._changed.clear()

    def _open(self, view: NodeView) -> bool:
        """Whether ``view`` keeps the plan from complete."""
        if view.leaf:
            return view.result is None
        return view.accepted is None or (self.summaries and view.summary is None)

    def _put(self, view: NodeView) -> None:
        self.nodes[view.id] = view
        self.incomplete += self._open(view)
        self.counted += len(view.proposals)
        self.summarized += view.summary is not None
        self._changed.add(view.id)

    def _drop(self, view: NodeView) -> None:
        del self.nodes[view.id]
        self.incomplete -= self._open(view)
        self.counted -= len(view.proposals)
        self.summarized -= view.summary is not None

    def digest(self, run_id: str, nodes: Mapping[str, NodeView]) -> str:
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
