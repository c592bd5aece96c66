"""Typed event bodies: parsed once, at the edge, from the JSON an event was signed over.

``schemas/event.schema.json`` says what a body may hold; :func:`parse_body` turns a
body that passed it into one of the frozen classes below, and every module past
the edge reads attributes, never string keys. ``to_json()`` gives back the JSON
form (what :func:`~specswarm.protocol.events.make_event` signs).

A run body carries the whole goal spec; it is validated and built into a
:class:`~specswarm.spec.GoalSpec` once per distinct spec in a process (peers hear
the same run event many times: in gossip, sync answers and ``hello`` replies).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, ClassVar, TypeAlias

from specswarm.errors import EventError, SpecError
from specswarm.protocol.canonical import canonical_bytes
from specswarm.spec import GoalSpec, spec_from_json

Facts: TypeAlias = Mapping[str, int | str]
"""Facts a child states about itself, e.g. ``{"days": 3}``."""


@dataclass(frozen=True)
class Child:
    """One proposed child of a node (the ``children`` items of a proposal body)."""

    title: str
    """The child's title (at most 200 characters on the wire)."""
    detail: str = ""
    """What the child covers; may be empty."""
    leaf: bool = False
    """True when the child is to be executed rather than split further."""
    facts: Facts = field(default_factory=dict)
    """Facts the child states, e.g. ``{"days": 3}`` (for sum constraints)."""

    def to_json(self) -> dict[str, Any]:
        return {"title": self.title, "detail": self.detail, "leaf": self.leaf, "facts": dict(self.facts)}

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> Child:
        return cls(str(raw["title"]), str(raw["detail"]), bool(raw["leaf"]), dict(raw["facts"]))


@dataclass(frozen=True)
class CheckResult:
    """One mechanical check a scorer ran (the ``checks`` items of a vote body)."""

    name: str
    """The check's name (count, duplicates, overlap, ...)."""
    score: int
    """0..100, higher is better."""
    passed: bool
    """False when the check found a problem."""
    note: str
    """What was found, for the decomposer that revises."""

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "score": self.score, "passed": self.passed, "note": self.note}

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> CheckResult:
        return cls(str(raw["name"]), int(raw["score"]), bool(raw["passed"]), str(raw["note"]))


@dataclass(frozen=True)
class RunBody:
    """``run``: the spec of the run; the run id is the hash of this body."""

    KIND: ClassVar[str] = "run"
    spec: GoalSpec
    """The validated goal spec every peer of the run follows."""
    admission: str | None
    """Hex Ed25519 public key that must sign every join; None for an open swarm."""
    nonce: str
    """Makes two runs of one spec distinct."""

    def to_json(self) -> dict[str, Any]:
        return {"spec": self.spec.to_json(), "admission": self.admission, "nonce": self.nonce}


@dataclass(frozen=True)
class JoinBody:
    """``join``: the author takes a role."""

    KIND: ClassVar[str] = "join"
    role: str
    """decomposer | scorer | executor | observer."""
    strategy: str | None
    """A decomposer's strategy; None otherwise."""
    admission: str | None
    """Base64 admission signature (runs with an admission key)."""

    def to_json(self) -> dict[str, Any]:
        return {"role": self.role, "strategy": self.strategy, "admission": self.admission}


@dataclass(frozen=True)
class ProposalBody:
    """``proposal``: a split of a node into ordered children."""

    KIND: ClassVar[str] = "proposal"
    node: str
    """Id of the node split."""
    strategy: str
    """The decomposer's strategy."""
    children: tuple[Child, ...]
    """The proposed children, in order."""
    revises: str | None
    """Id of the rejected proposal this one revises, if any."""
    rationale: str
    """Why this split (and what it fixed)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "node": self.node,
            "strategy": self.strategy,
            "children": [c.to_json() for c in self.children],
            "revises": self.revises,
            "rationale": self.rationale,
        }


@dataclass(frozen=True)
class VoteBody:
    """``vote``: a scorer's verdict on one proposal."""

    KIND: ClassVar[str] = "vote"
    proposal: str
    """Id of the event judged: a proposal, or (in a run with ``review.results``) a leaf's
    result; the fold tells them apart by what the id names."""
    approve: bool
    """The verdict."""
    score: int
    """Combined score 0..100."""
    critique: str
    """What to fix (one line per failed check)."""
    checks: tuple[CheckResult, ...]
    """The mechanical checks run."""
    model_score: int | None
    """The model's 0..100 rating, if one was used."""
    lens: str | None = None
    """The lens the scorer reviewed through (absent in votes of scorers without one)."""
    model: str | None = None
    """The model that gave ``model_score`` (absent when none did, and in older votes)."""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "proposal": self.proposal,
            "approve": self.approve,
            "score": self.score,
            "critique": self.critique,
            "checks": [c.to_json() for c in self.checks],
            "model_score": self.model_score,
        }
        if self.lens is not None:
            out["lens"] = self.lens
        if self.model is not None:
            out["model"] = self.model
        return out


@dataclass(frozen=True)
class BallotBody:
    """``ballot``: a scorer ranks the splits of one node it has judged, best first."""

    KIND: ClassVar[str] = "ballot"
    node: str
    """Id of the node whose splits are ranked."""
    ranking: tuple[str, ...]
    """Proposal ids, best first."""

    def to_json(self) -> dict[str, Any]:
        return {"node": self.node, "ranking": list(self.ranking)}


@dataclass(frozen=True)
class ClaimBody:
    """``claim``: an executor claims a leaf."""

    KIND: ClassVar[str] = "claim"
    leaf: str
    """Id of the leaf claimed."""
    supersedes: str | None
    """Id of a dead holder's claim this one replaces."""
    rival: str | None = None
    """A rival's claim (``review.rivals``): id of the leaf's rejected result its author writes
    again beside the holder's revision (absent in every other claim). It never wins the leaf."""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"leaf": self.leaf, "supersedes": self.supersedes}
        if self.rival is not None:
            out["rival"] = self.rival
        return out


@dataclass(frozen=True)
class ResultBody:
    """``result``: an executor's output for a leaf, under its claim."""

    KIND: ClassVar[str] = "result"
    leaf: str
    """Id of the leaf."""
    claim: str
    """Id of the claim it was made under."""
    output: str
    """The leaf's content."""
    model: str
    """Name of the model that wrote it."""
    revises: str | None = None
    """Id of the rejected result this one writes again (absent in first results, and in every
    result of a run whose results are not judged)."""
    rivals: tuple[str, ...] = ()
    """The ids of the rival claims (:attr:`ClaimBody.rival`) to write ``revises`` again that its
    writer had heard of, in a holder's revision: the fold keeps the round open until it holds
    them, so a peer that hears the revision first never counts it alone (empty: absent)."""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"leaf": self.leaf, "claim": self.claim, "output": self.output}
        out["model"] = self.model
        if self.revises is not None:
            out["revises"] = self.revises
        if self.rivals:
            out["rivals"] = list(self.rivals)
        return out


@dataclass(frozen=True)
class SummaryBody:
    """``summary``: an executor's short summary of a split node, written once its children are
    done (``review.summaries``), from their counted results and summaries."""

    KIND: ClassVar[str] = "summary"
    node: str
    """Id of the split node summarized."""
    text: str
    """The summary: a few sentences of prose."""
    sources: tuple[str, ...]
    """The ids of the children's counted results (leaves) and summaries (split children), in
    child order: what it was written from. The fold counts it only while they are still what
    the children hold."""
    model: str
    """Name of the model that wrote it (``fallback`` marks text made without one)."""
    fallback: bool = False
    """True when no usable answer came from the model and the text joins the children's titles."""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "node": self.node,
            "text": self.text,
            "sources": list(self.sources),
            "model": self.model,
        }
        if self.fallback:
            out["fallback"] = True
        return out


Body: TypeAlias = (
    RunBody | JoinBody | ProposalBody | VoteBody | BallotBody | ClaimBody | ResultBody | SummaryBody
)
"""Any event body."""


def _children(items: Sequence[Mapping[str, Any]]) -> tuple[Child, ...]:
    return tuple(Child.from_json(c) for c in items)


def parse_body(kind: str, raw: Mapping[str, Any]) -> Body:
    """The typed body of an event of ``kind``; raise EventError if it does not have the shape
    the event schema asks for (callers check the schema first; this is the last guard)."""
    try:
        if kind == "run":
            return RunBody(_run_spec(canonical_bytes(raw["spec"])), raw["admission"], str(raw["nonce"]))
        if kind == "join":
            return JoinBody(str(raw["role"]), raw["strategy"], raw["admission"])
        if kind == "proposal":
            return ProposalBody(
                str(raw["node"]),
                str(raw["strategy"]),
                _children(raw["children"]),
                raw["revises"],
                str(raw["rationale"]),
            )
        if kind == "vote":
            return VoteBody(
                str(raw["proposal"]),
                bool(raw["approve"]),
                int(raw["score"]),
                str(raw["critique"]),
                tuple(CheckResult.from_json(c) for c in raw["checks"]),
                None if raw["model_score"] is None else int(raw["model_score"]),
                None if raw.get("lens") is None else str(raw["lens"]),
                None if raw.get("model") is None else str(raw["model"]),
            )
        if kind == "ballot":
            return BallotBody(str(raw["node"]), tuple(str(p) for p in raw["ranking"]))
        if kind == "claim":
            rival = raw.get("rival")
            return ClaimBody(str(raw["leaf"]), raw["supersedes"], None if rival is None else str(rival))
        if kind == "result":
            revises = raw.get("revises")
            return ResultBody(
                str(raw["leaf"]),
                str(raw["claim"]),
                str(raw["output"]),
                str(raw["model"]),
                None if revises is None else str(revises),
                tuple(str(c) for c in raw.get("rivals", ())),
            )
        if kind == "summary":
            return SummaryBody(
                str(raw["node"]),
                str(raw["text"]),
                tuple(str(s) for s in raw["sources"]),
                str(raw["model"]),
                bool(raw.get("fallback", False)),
            )
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise EventError(f"malformed {kind} body: {type(exc).__name__}: {exc}") from None
    raise EventError(f"unknown event kind {kind!r}")


@lru_cache(maxsize=32)
def _run_spec(spec_bytes: bytes) -> GoalSpec:
    """The GoalSpec of a run event's spec (built once per distinct spec in a process)."""
    import json

    try:
        raw = json.loads(spec_bytes)
        tree = raw.get("tree") if isinstance(raw, dict) else None
        if isinstance(tree, dict) and "select" not in tree:
            # a run made before ballots (its normalized spec has no tree.select) keeps the rule
            # it ran with: its logs must fold to the plan its peers agreed on
            raw = {**raw, "tree": {**tree, "select": "first"}}
        if isinstance(raw, dict) and "review" not in raw:
            # a run made before results were judged (no review section) keeps its rule too:
            # the first result under the winning claim counts
            raw = {**raw, "review": {"results": False, "summaries": False}}
        review = raw.get("review") if isinstance(raw, dict) else None
        if isinstance(review, dict) and "summaries" not in review:
            # a run made before split nodes were summarized completes without summaries
            raw = {**raw, "review": {**review, "summaries": False}}
        review = raw.get("review") if isinstance(raw, dict) else None
        if isinstance(review, dict) and "rivals" not in review:
            # a run made before rival revisions: its holders revise alone
            raw = {**raw, "review": {**review, "rivals": 0}}
        review = raw.get("review") if isinstance(raw, dict) else None
        if isinstance(review, dict) and review.get("results") and "revisions" not in review:
            # a run whose results were judged before review.revisions: tree.max_revisions
            tree = raw.get("tree") if isinstance(raw.get("tree"), dict) else {}
            raw = {**raw, "review": {**review, "revisions": tree.get("max_revisions", 2)}}
        return spec_from_json(raw)
    except SpecError as exc:
        first = exc.problems[0] if exc.problems else None
        raise EventError(
            f"run event: invalid spec: {first.path}: {first.message}" if first else "run event: invalid spec"
        ) from None


__all__ = [
    "BallotBody",
    "Body",
    "CheckResult",
    "Child",
    "ClaimBody",
    "Facts",
    "JoinBody",
    "ProposalBody",
    "ResultBody",
    "RunBody",
    "SummaryBody",
    "VoteBody",
    "parse_body",
]
