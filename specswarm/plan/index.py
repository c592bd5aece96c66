"""Every event a peer holds, indexed the way the fold's rules read them."""

from __future__ import annotations

from typing import Final

from specswarm.plan.rules import least
from specswarm.protocol.bodies import (
    BallotBody,
    ClaimBody,
    JoinBody,
    ProposalBody,
    ResultBody,
    RunBody,
    SummaryBody,
    VoteBody,
)
from specswarm.protocol.events import Event

EVERYTHING: Final = "*"
"""What :meth:`EventIndex.add` returns when an event can change any decision (another run
taking over)."""
JOIN: Final = "+join"
"""What :meth:`EventIndex.add` returns for a new join of the run: it changes only its author's
role, so only the decisions over that author's events (:meth:`EventIndex.touched_by`)."""


class EventIndex:
    """The event set, by id and by what each rule needs: joins by author, proposals by node,
    the least vote per (author, run) by proposal, ballots by node, claims and results by leaf,
    summaries by node."""

    def __init__(self, run: str | None = None) -> None:
        self.pinned_run = run
        """When set, events of any other run are ignored."""
        self.run_event: Event | None = None
        """The run event the fold follows (see :meth:`_choose_run`)."""
        self.events: dict[str, Event] = {}
        self.joins: dict[str, list[Event]] = {}
        self.proposals: dict[str, Event] = {}
        self.proposals_by_node: dict[str, set[str]] = {}
        self.votes: dict[str, dict[tuple[str, str], Event]] = {}  # judged id -> (author, run) -> least
        self.ballots: dict[str, dict[str, Event]] = {}  # node -> ballot id -> ballot
        self.claims: dict[str, dict[str, Event]] = {}  # leaf -> claim id -> claim
        self.results: dict[str, dict[str, Event]] = {}  # leaf -> result id -> result
        self.result_leaf: dict[str, str] = {}  # result id -> its leaf (a vote may judge a result)
        self.summaries: dict[str, dict[str, Event]] = {}  # split node -> summary id -> summary
        self.counts: dict[str, int] = {}
        self.by_author: dict[str, list[Event]] = {}
        """author -> its events that bear on a node (proposals, votes, ballots, claims, results,
        summaries)."""
        self._run_events: dict[str, Event] = {}
        self._run_sizes: dict[str, int] = {}

    def add(self, event: Event) -> str | None:
        """Index one event. Returns None if nothing is decided differently now (the event was
        held already, or bears on no node), the id of the one node whose decision it may
        change, or :data:`EVERYTHING`."""
        if event.id in self.events or (self.pinned_run is not None and event.run != self.pinned_run):
            return None
        self.events[event.id] = event
        self._run_sizes[event.run] = self._run_sizes.get(event.run, 0) + 1
        self.counts[event.kind] = self.counts.get(event.kind, 0) + 1
        body = event.body
        touched: str | None = None
        if isinstance(body, RunBody):
            self._run_events[event.id] = event
        if isinstance(body, RunBody) or len(self._run_events) > 1:
            chosen = self._choose_run()
            if chosen is not self.run_event:
                self.run_event = chosen
                touched = EVERYTHING
        if isinstance(body, JoinBody):
            self.joins.setdefault(event.author, []).append(event)
            return touched or JOIN
        if isinstance(body, ProposalBody | VoteBody | BallotBody | ClaimBody | ResultBody | SummaryBody):
            self.by_author.setdefault(event.author, []).append(event)
        if isinstance(body, ProposalBody):
            self.proposals[event.id] = event
            self.proposals_by_node.setdefault(body.node, set()).add(event.id)
            return touched or body.node
        if isinstance(body, VoteBody):
            per_author = self.votes.setdefault(body.proposal, {})
            key = (event.author, event.run)  # a foreign run's vote must not hide this run's one
            per_author[key] = least(per_author.get(key), event)
            return touched or self._judged_node(body.proposal)
        elif isinstance(body, BallotBody):
            self.ballots.setdefault(body.node, {})[event.id] = event
            return touched or body.node
        elif isinstance(body, ClaimBody):
            self.claims.setdefault(body.leaf, {})[event.id] = event
            return touched or body.leaf
        elif isinstance(body, ResultBody):
            self.results.setdefault(body.leaf, {})[event.id] = event
            self.result_leaf[event.id] = body.leaf
            return touched or body.leaf
        elif isinstance(body, SummaryBody):
            self.summaries.setdefault(body.node, {})[event.id] = event
            return touched or body.node
        return touched

    def touched_by(self, author: str) -> set[str]:
        """The nodes whose decisions read ``author``'s role: those its events bear on."""
        nodes: set[str] = set()
        for event in self.by_author.get(author, ()):
            body = event.body
            if isinstance(body, VoteBody):
                judged = self._judged_node(body.proposal)
                if judged is not None:
                    nodes.add(judged)
            elif isinstance(body, ProposalBody | BallotBody | SummaryBody):
                nodes.add(body.node)
            elif isinstance(body, ClaimBody | ResultBody):
                nodes.add(body.leaf)
        return nodes

    def _judged_node(self, judged: str) -> str | None:
        """The node whose decision a vote on ``judged`` bears on: a proposal's node, a result's
        leaf; None while the judged event is not held (its arrival touches the node then)."""
        prop = self.proposals.get(judged)
        if prop is not None and isinstance(prop.body, ProposalBody):
            return prop.body.node
        return self.result_leaf.get(judged)

    def _choose_run(self) -> Event | None:
        """The run event of the run holding the most events (ties: least run event id), so a
        stray run event in a log cannot take over the plan."""
        if not self._run_events:
            return None
        return min(self._run_events.values(), key=lambda e: (-self._run_sizes.get(e.run, 0), e.id))
