"""The plan as a pure function of the event set, kept up to date one event at a time.

``fold(events)`` and ``FoldState.apply(event)`` give the same :class:`~specswarm.plan.views.Plan`
for any order and any number of deliveries of the same set of valid events. No I/O, no
clocks. The rules themselves are in :mod:`specswarm.plan.rules`; this module indexes the
events and caches each node's decision until an event touches that node.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import partial

from specswarm.plan.index import EVERYTHING, JOIN, EventIndex
from specswarm.plan.results import judge_results
from specswarm.plan.rules import (
    AS_LEAF,
    Judge,
    LeafDecision,
    SplitDecision,
    assign_roles,
    decide_leaf,
    decide_split,
)
from specswarm.plan.summaries import decide_summary, summary_sources
from specswarm.plan.tree import KeptTree, NodeSeed
from specswarm.plan.views import ROOT, NodeView, Plan, ProposalView, SummaryView, child_id
from specswarm.protocol.bodies import ProposalBody, RunBody
from specswarm.protocol.canonical import digest as canonical_digest
from specswarm.protocol.events import Event
from specswarm.spec import GoalSpec


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
        self._index = EventIndex(run)
        self._decisions: dict[str, SplitDecision] = {}
        self._leaf_decisions: dict[str, LeafDecision] = {}  # apart: a split may end as a leaf
        self._who: tuple[dict[str, str], dict[str, str]] | None = None  # roles, strategies
        self._plan: Plan | None = None
        self._tree: KeptTree | None = None  # the tree of the last plan(): None = grow from the root
        self._dirty: set[str] = set()  # nodes whose decision was dropped since the last plan()
        for event in events:
            self.apply(event)

    def __contains__(self, event_id: object) -> bool:
        return event_id in self._index.events

    def __len__(self) -> int:
        return len(self._index.events)

    @property
    def ids(self) -> set[str]:
        return set(self._index.events)

    @property
    def run_event(self) -> Event | None:
        """The run event the fold follows."""
        return self._index.run_event

    @property
    def pinned_run(self) -> str | None:
        return self._index.pinned_run

    def get(self, event_id: str) -> Event | None:
        return self._index.events.get(event_id)

    def events(self) -> list[Event]:
        """Every event held (in no particular order)."""
        return list(self._index.events.values())

    def apply(self, event: Event) -> bool:
        """Add one verified event. Returns False if it was already held (idempotent)."""
        held = len(self._index.events)
        touched = self._index.add(event)
        if len(self._index.events) == held:
            return False
        self._plan = None
        if touched == EVERYTHING:
            self._decisions.clear()
            self._leaf_decisions.clear()
            self._who = None
            self._tree = None
            self._dirty.clear()
        elif touched == JOIN:
            self._join(event.author)
        elif touched is not None:
            self._decisions.pop(touched, None)
            self._leaf_decisions.pop(touched, None)
            self._dirty.add(touched)
        return True

    # -- deriving -----------------------------------------------------------------------
    @property
    def spec(self) -> GoalSpec | None:
        run = self.run_event
        return run.body.spec if run is not None and isinstance(run.body, RunBody) else None

    def roles(self) -> dict[str, str]:
        return self._roles_and_strategies()[0]

    def _join(self, author: str) -> None:
        """A new join of ``author``: its role alone is assigned again, and if it changed, the
        decisions over its events are dropped (every rule reads roles per author)."""
        if self._who is None or self.run_event is None:
            return
        roles, strategies = self._who
        mine = assign_roles(self.run_event, {author: self._index.joins.get(author, [])})
        role, strategy = mine[0].get(author), mine[1].get(author)
        if roles.get(author) == role and strategies.get(author) == strategy:
            return
        roles, strategies = dict(roles), dict(strategies)  # earlier plans keep their own
        for table, value in ((roles, role), (strategies, strategy)):
            if value is None:
                table.pop(author, None)
            else:
                table[author] = value
        self._who = roles, strategies
        for node in self._index.touched_by(author):
            self._decisions.pop(node, None)
            self._leaf_decisions.pop(node, None)
            self._dirty.add(node)

    def _roles_and_strategies(self) -> tuple[dict[str, str], dict[str, str]]:
        if self._who is None:
            self._who = assign_roles(self.run_event, self._index.joins) if self.run_event else ({}, {})
        return self._who

    def plan(self) -> Plan:
        if self._plan is None:
            self._plan = self._build()
        return self._plan

    def _build(self) -> Plan:
        run = self.run_event
        counts = dict(self._index.counts)
        if run is None:
            none_digest = canonical_digest({"run": None})
            return Plan(None, None, {}, {}, counts, False, lambda: none_digest)
        spec = self.spec
        assert spec is not None
        roles = self.roles()
        params = self._params()

        def derive(seed: NodeSeed) -> tuple[NodeView, list[NodeSeed]]:
            return self._view(seed, params)

        tree = self._tree
        if tree is None:
            tree = self._tree = KeptTree(summaries=spec.review.summaries)
            self._dirty.clear()
            tree.grow(
                [NodeSeed(ROOT, None, spec.goal, spec.context, 0, spec.tree.max_depth <= 0, {})], derive
            )
        else:
            dirty, self._dirty = self._dirty, set()
            for node in dirty:
                if node in tree.nodes:
                    tree.rebuild(node, derive)
        run_id = run.run
        tree.summarize(partial(summary_of, self._index, run_id, roles))
        counts["proposals_outside_tree"] = counts.get("proposal", 0) - tree.counted
        if counts.get("summary"):
            counts["summaries_uncounted"] = counts["summary"] - tree.summarized
        nodes = dict(tree.nodes)
        complete, digest = tree.incomplete == 0, partial(tree.digest, run_id, nodes)
        return Plan(run_id, spec, nodes, roles, counts, complete, digest, self._roles_and_strategies()[1])

    # -- one node's view, from its cached decision -------------------------------------------
    def _params(self) -> tuple[str, Mapping[str, str], int, int, int]:
        spec = self.spec
        assert self.run_event is not None and spec is not None
        n_scorers = spec.roles.scorer.count
        return self.run_event.run, self.roles(), spec.quorum_size(), n_scorers, spec.tree.max_depth

    def _view(
        self, seed: NodeSeed, params: tuple[str, Mapping[str, str], int, int, int]
    ) -> tuple[NodeView, list[NodeSeed]]:
        """The view of one node from its (cached) decision, and the seeds of its children."""
        run, roles, q, n_scorers, max_depth = params
        if seed.leaf:
            return _view_of(seed, (), None, self._decide_leaf(run, seed.id, roles)), []
        proposals, accepted = self._decide_split(run, seed.id, roles, q, n_scorers)
        if accepted == AS_LEAF:  # no split serves: the node is done as one task
            return _view_of(seed, proposals, None, self._decide_leaf(run, seed.id, roles)), []
        children: list[str] = []
        seeds: list[NodeSeed] = []
        if accepted is not None:
            acc = self._index.proposals[accepted].body
            assert isinstance(acc, ProposalBody)
            depth = seed.depth + 1
            for i, ch in enumerate(acc.children):
                cid = child_id(accepted, i)
                children.append(cid)
                seeds.append(
                    NodeSeed(
                        cid, seed.id, ch.title, ch.detail, depth, ch.leaf or depth >= max_depth, ch.facts
                    )
                )
        return _view_of(seed, proposals, accepted, None, tuple(children)), seeds

    def _decide_split(
        self, run: str, node: str, roles: Mapping[str, str], q: int, n_scorers: int
    ) -> SplitDecision:
        cached = self._decisions.get(node)
        if cached is None:
            cached = self._decisions[node] = split_decision(
                self._index, self.spec, run, node, roles, q, n_scorers
            )
        return cached

    def _decide_leaf(self, run: str, leaf: str, roles: Mapping[str, str]) -> LeafDecision:
        cached = self._leaf_decisions.get(leaf)
        if cached is None:
            index = self._index
            results = index.results.get(leaf, {}).values()
            judge = board_judge(index, self.spec, run, leaf, roles)
            cached = decide_leaf(run, index.claims.get(leaf, {}), results, roles, judge)
            self._leaf_decisions[leaf] = cached
        return cached


def split_decision(
    index: EventIndex, spec: GoalSpec | None, run: str, node: str, roles: Mapping[str, str], q: int, n: int
) -> SplitDecision:
    """:func:`decide_split` of ``node`` on the events ``index`` holds, by the spec's rules."""
    proposals = [index.proposals[pid] for pid in index.proposals_by_node.get(node, ())]
    votes = {p.id: index.votes.get(p.id, {}).values() for p in proposals}
    chain = spec.tree.max_revisions + 1 if spec is not None else None
    best = spec is not None and spec.tree.select == "best"
    ballots = index.ballots.get(node, {}).values() if best else None
    return decide_split(run, node, proposals, votes, roles, q, n, chain, ballots)


def summary_of(
    index: EventIndex, run: str, roles: Mapping[str, str], view: NodeView, kids: list[NodeView]
) -> SummaryView | None:
    """:func:`decide_summary` of split node ``view`` (its children ``kids``) on the events
    ``index`` holds."""
    held = index.summaries.get(view.id, {}).values()
    return decide_summary(run, held, roles, summary_sources(kids))


def board_judge(
    index: EventIndex, spec: GoalSpec | None, run: str, leaf: str, roles: Mapping[str, str]
) -> Judge | None:
    """The board's rule for ``leaf``'s results with their votes and the run's quorum, in a run
    whose results the board judges (``review.results``); None in any other run."""
    if spec is None or not spec.review.results:
        return None
    votes = {r: index.votes.get(r, {}).values() for r in index.results.get(leaf, {})}
    q, n, chain = spec.quorum_size(), spec.roles.scorer.count, spec.review.revisions + 1
    return partial(judge_results, run, votes=votes, roles=roles, q=q, n_scorers=n, chain=chain)


def _view_of(
    seed: NodeSeed,
    proposals: tuple[ProposalView, ...],
    accepted: str | None,
    leaf: LeafDecision | None,
    children: tuple[str, ...] = (),
) -> NodeView:
    """A node's view: a leaf when ``leaf`` (its claims, winning claim and results) is given -- a
    declared leaf (no proposals) or a node no split served -- else a split node."""
    claims, claim, result, results = leaf or ((), None, None, ())
    return NodeView(
        seed.id, seed.parent, seed.title, seed.detail, seed.depth, leaf is not None, seed.facts,
        children, proposals, accepted, claims, claim, result, results,
    )  # fmt: skip


def fold(events: Iterable[Event]) -> Plan:
    """The plan of a set of valid events (order and duplicates do not matter)."""
    return FoldState(events).plan()
