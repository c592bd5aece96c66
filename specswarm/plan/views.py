"""What the fold produces: frozen views of the plan tree, its proposals, votes, claims and results.

Views are derived, never stored: :class:`~specswarm.plan.fold.FoldState` builds them from
the event set. :meth:`Plan.to_json` is the export that ``schemas/plan.schema.json``
validates; :meth:`Plan.content` is what the digest covers; :meth:`Plan.tree_content` what the content
digest covers (the plan's content alone, equal across runs that planned the same).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from specswarm.protocol.bodies import CheckResult, Child, Facts
from specswarm.protocol.canonical import digest as canonical_digest
from specswarm.spec import GoalSpec

ROOT = "root"
"""Id of the root node (its title is the spec's goal)."""


def child_id(proposal_id: str, index: int) -> str:
    """Id of child ``index`` of an accepted proposal."""
    return f"{proposal_id[:16]}.{index}"


@dataclass(frozen=True)
class VoteView:
    id: str
    author: str
    approve: bool
    score: int
    critique: str
    checks: tuple[CheckResult, ...]
    model_score: int | None
    lamport: int
    lens: str | None = None
    """The scorer's review lens."""
    model: str | None = None
    """The model that gave ``model_score`` (None when none did, and in older votes)."""


@dataclass(frozen=True)
class ProposalView:
    id: str
    node: str
    author: str
    strategy: str
    children: tuple[Child, ...]
    revises: str | None
    rationale: str
    lamport: int
    votes: tuple[VoteView, ...]
    """Counted votes (one per authorised scorer), in (lamport, author) order."""
    approvals: int
    rejections: int
    mean_score: int | None
    status: str
    """accepted | approved (quorum reached, ballots awaited) | rejected (quorum out of reach) |
    outvoted (another won) | pending."""
    points: int = 0
    """Borda points from the deciding ballots (``tree.select: best``)."""


@dataclass(frozen=True)
class ClaimView:
    id: str
    author: str
    lamport: int
    supersedes: str | None
    live: bool
    rival: str | None = None
    """A rival's claim: the rejected result its author writes again (it never wins the leaf)."""


@dataclass(frozen=True)
class ResultView:
    id: str
    author: str
    claim: str
    output: str
    model: str
    revises: str | None = None
    """The rejected result this one writes again."""
    lamport: int = 0
    votes: tuple[VoteView, ...] = ()
    """Counted votes (one per authorised scorer), in (lamport, author) order."""
    approvals: int = 0
    rejections: int = 0
    mean_score: int | None = None
    status: str | None = None
    """accepted (counted: a quorum approved it, or the fallback once the revisions are used
    up) | outvoted (approved, another counts) | approved (approved, its round's rival revisions
    awaited: :mod:`specswarm.plan.results`) | rejected (quorum out of reach) | pending; None
    in a run whose results are not judged (``review.results`` off)."""

    @property
    def judged(self) -> bool:
        """Whether the board judges this result (``review.results``)."""
        return self.status is not None


@dataclass(frozen=True)
class SummaryView:
    """The counted summary of a split node (``review.summaries``)."""

    id: str
    author: str
    text: str
    model: str
    sources: tuple[str, ...]
    """The children's counted results and summaries it was written from, in child order."""
    lamport: int = 0
    fallback: bool = False
    """No usable answer came from the model: the text joins the children's titles."""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "author": self.author, "text": self.text, "model": self.model}
        if self.fallback:
            out["fallback"] = True
        return out


@dataclass(frozen=True)
class NodeView:
    id: str
    parent: str | None
    title: str
    detail: str
    depth: int
    leaf: bool
    facts: Facts
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
    results: tuple[ResultView, ...] = ()
    """Leaves whose results the board judges: every counted result, the counted one first, then
    in (lamport, author, id) order; empty when results are not judged."""
    summary: SummaryView | None = None
    """Split nodes, in a run with ``review.summaries``: the counted summary, once the children
    are done and one was written from what they hold."""

    @property
    def status(self) -> str:
        if self.leaf:
            if self.result is not None:
                return "done"
            if any(r.status in ("pending", "approved") for r in self.results):
                return "reviewing"
            return "claimed" if self.claim else "unclaimed"
        if self.accepted:
            return "split"
        if any(p.status == "pending" for p in self.proposals):
            return "voting"
        if any(p.status == "approved" for p in self.proposals):
            return "balloting"
        return "open"

    @property
    def accepted_proposal(self) -> ProposalView | None:
        return next((p for p in self.proposals if p.id == self.accepted), None)

    @property
    def rivals_awaited(self) -> tuple[ClaimView, ...]:
        """Live rivals' claims on this leaf with no result written under them yet."""
        written = {r.claim for r in self.results}
        return tuple(c for c in self.claims if c.live and c.rival and c.id not in written)

    @property
    def claim_holder(self) -> str | None:
        """Peer id of the executor whose claim on this leaf wins (None when unclaimed)."""
        return next((c.author for c in self.claims if c.id == self.claim), None)


@dataclass(frozen=True)
class Plan:
    run_id: str | None
    spec: GoalSpec | None
    """The run's spec (None before the run event is known)."""
    nodes: Mapping[str, NodeView]
    """Every node of the accepted tree, by id (root is ``"root"``)."""
    roles: Mapping[str, str]
    """peer id -> role, for authorised participants."""
    counts: Mapping[str, int]
    """Events held, by kind, plus ``ignored`` (valid but not counted: wrong role, unknown node...)."""
    complete: bool
    _digest_fn: Callable[[], str] | None = field(default=None, repr=False, compare=False)
    strategies: Mapping[str, str] = field(default_factory=dict)
    """decomposer peer id -> the strategy its join declares."""

    @cached_property
    def digest(self) -> str:
        """sha256 of the canonical JSON of :meth:`content` (computed on first use, then kept)."""
        if self._digest_fn is not None:
            return self._digest_fn()
        return canonical_digest(self.content())

    @cached_property
    def content_digest(self) -> str:
        """sha256 of the canonical JSON of :meth:`tree_content`: the plan's content only, the
        same for two runs that planned the same thing (see :meth:`tree_content`)."""
        return canonical_digest(self.tree_content())

    def tree_content(self) -> dict[str, Any]:
        """What the plan says, and nothing about how it came to be: the goal and context, and
        from the root down each node's title, detail, facts, leaf flag and (leaves) result text,
        children in order. Node ids, the run id, peer ids, proposals, votes, claims, the
        result's model, timestamps and signatures are left out: they differ between runs."""

        def node(n: NodeView) -> dict[str, Any]:
            return {
                "title": n.title,
                "detail": n.detail,
                "facts": dict(n.facts),
                "leaf": n.leaf,
                "result": n.result.output if n.result else None,
                "children": [node(self.nodes[c]) for c in n.children],
            } | ({"summary": n.summary.text} if n.summary else {})

        spec = self.spec
        return {
            "goal": spec.goal if spec else None,
            "context": spec.context if spec else "",
            "root": node(self.nodes[ROOT]) if ROOT in self.nodes else None,
        }

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
            "nodes": [node_content(n) for n in sorted(self.nodes.values(), key=lambda n: n.id)],
        }

    def to_json(self) -> dict[str, Any]:
        """Full export (validated by schemas/plan.schema.json), nodes nested from the root."""

        def vote(v: VoteView) -> dict[str, Any]:
            out = {
                "id": v.id,
                "author": v.author,
                "approve": v.approve,
                "score": v.score,
                "critique": v.critique,
                "checks": [c.to_json() for c in v.checks],
                "model_score": v.model_score,
                "lens": v.lens,
            }
            if v.model is not None:
                out["model"] = v.model
            return out

        def proposal(p: ProposalView) -> dict[str, Any]:
            return {
                "id": p.id,
                "author": p.author,
                "strategy": p.strategy,
                "status": p.status,
                "revises": p.revises,
                "rationale": p.rationale,
                "children": [c.to_json() for c in p.children],
                "tally": {
                    "approve": p.approvals,
                    "reject": p.rejections,
                    "mean_score": p.mean_score,
                    "points": p.points,
                },
                "votes": [vote(v) for v in p.votes],
            }

        def result(r: ResultView) -> dict[str, Any]:
            out: dict[str, Any] = {"id": r.id, "author": r.author, "output": r.output, "model": r.model}
            if r.judged:
                out["status"] = r.status
                out["revises"] = r.revises
                out["tally"] = {"approve": r.approvals, "reject": r.rejections, "mean_score": r.mean_score}
                out["votes"] = [vote(v) for v in r.votes]
            return out

        summaries = self.spec is not None and self.spec.review.summaries

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
            if summaries and not n.leaf:
                out["summary"] = n.summary.to_json() if n.summary else None
            if n.leaf:
                out["claim"] = n.claim
                out["result"] = result(n.result) if n.result else None
                if n.results:
                    out["drafts"] = [result(r) for r in n.results if r is not n.result]
            return out

        spec = self.spec
        return {
            "format": "specswarm-plan/1",
            "run_id": self.run_id,
            "digest": self.digest,
            "content_digest": self.content_digest,
            "complete": self.complete,
            "name": spec.name if spec else None,
            "goal": spec.goal if spec else None,
            "context": spec.context if spec else "",
            "quorum": spec.quorum if spec else None,
            "progress": self.progress(),
            "participants": [{"peer": p, "role": r} for p, r in sorted(self.roles.items())],
            "event_counts": dict(sorted(self.counts.items())),
            "root": node(self.nodes[ROOT]) if ROOT in self.nodes else None,
        }


def node_content(n: NodeView) -> dict[str, Any]:
    return {
        "id": n.id,
        "parent": n.parent,
        "title": n.title,
        "detail": n.detail,
        "leaf": n.leaf,
        "accepted": n.accepted,
        "children": list(n.children),
        "result": n.result.id if n.result else None,
    } | ({"summary": n.summary.id} if n.summary else {})
