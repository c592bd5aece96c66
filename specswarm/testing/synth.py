"""Synthetic, fully signed event sets: a tiny in-process "swarm" without transport or model.

Used by the fold's property tests, the renderer fixtures and the fold benchmark.
Every event is made and signed exactly as real peers make them.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from specswarm.plan.fold import FoldState
from specswarm.plan.summaries import summary_sources
from specswarm.plan.views import child_id
from specswarm.protocol.bodies import RunBody
from specswarm.protocol.events import Event, admit, make_event, make_run_event
from specswarm.protocol.identity import Identity
from specswarm.spec import TASKS, GoalSpec, spec_from_mapping

_STUB_PROMPT = "{% block system %}You plan.{% endblock %}{% block prompt %}{{ node.title }}{% endblock %}"


def minimal_spec(**overrides: Any) -> dict[str, Any]:
    """A complete normalized spec (as ``GoalSpec.to_json()`` gives) with stub prompts, the scripted
    model, an open swarm, results counted unjudged (``review.results`` off: a synthetic result
    counts without the scorers' votes; ``review={"results": True}`` for the board's rule) and no
    summaries unless ``review`` asks for them (``"summaries": True``);
    ``overrides`` replace top-level sections (defaults fill the rest)."""
    data: dict[str, Any] = {
        "name": "synthetic",
        "goal": "Plan a weekend in Lisbon",
        "context": "Two adults, spring.",
        "roles": {
            "decomposer": {"count": 2, "strategies": ["by place", "by day"]},
            "scorer": {"count": 3},
            "executor": {"count": 2},
            "observer": {"count": 1},
        },
        "prompts": dict.fromkeys(TASKS, _STUB_PROMPT),
        "model": {"backend": "scripted"},
        "access": {"mode": "open"},
        "review": {"results": False},
    }
    data.update(overrides)
    data["review"] = {"summaries": False, **data["review"]}
    return spec_from_mapping(data, name="synthetic").to_json()


def one_split_spec(scorers: int, executors: int) -> dict[str, Any]:
    """:func:`minimal_spec` for a run whose root is split once, into leaves: one decomposer,
    every scorer's approval needed, the first split past it accepted."""
    roles = {
        "decomposer": {"count": 1, "strategies": ["by place"]},
        "scorer": {"count": scorers},
        "executor": {"count": executors},
        "observer": {"count": 1},
    }
    tree = {"max_depth": 1, "min_children": 1, "max_children": 6, "select": "first"}
    return minimal_spec(quorum="all", roles=roles, tree=tree)


def _seeded_identity(rng: random.Random) -> Identity:
    return Identity(bytes(rng.getrandbits(8) for _ in range(32)))


@dataclass
class Swarm:
    """Signs events on behalf of a set of synthetic peers, tracking Lamport clocks."""

    spec: GoalSpec | dict[str, Any] = field(default_factory=minimal_spec)
    seed: int = 0
    admission: Identity | None = None
    events: list[Event] = field(default_factory=list)
    peers: dict[str, list[Identity]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)
        self.clock: dict[str, int] = {}
        self.launcher = _seeded_identity(self.rng)
        adm = self.admission.public_key.hex() if self.admission else None
        self.run_event = make_run_event(self.launcher, self.spec, admission=adm, nonce=str(self.seed))
        self.run = self.run_event.run
        self.events.append(self.run_event)
        assert isinstance(self.run_event.body, RunBody)
        for seat in self.run_event.body.spec.roster(order=("decomposer", "scorer", "executor", "observer")):
            self.add_peer(seat.role, strategy=seat.strategy if seat.role == "decomposer" else None)

    def add_peer(self, role: str, admitted: bool = True, strategy: str | None = None) -> Identity:
        ident = _seeded_identity(self.rng)
        self.peers.setdefault(role, []).append(ident)
        adm = admit(self.admission, self.run, ident.peer_id, role) if self.admission and admitted else None
        self.emit(ident, "join", {"role": role, "strategy": strategy, "admission": adm})
        return ident

    def emit(self, who: Identity, kind: str, body: Mapping[str, Any], lamport: int | None = None) -> Event:
        if lamport is None:
            lamport = max(self.clock.values(), default=0) + 1
        self.clock[who.peer_id] = lamport
        event = make_event(who, self.run, kind, lamport, body)
        self.events.append(event)
        return event

    # -- role helpers ---------------------------------------------------------------
    def propose(
        self,
        who: Identity,
        node: str,
        titles: list[str],
        *,
        leaf: bool = False,
        strategy: str = "by place",
        revises: str | None = None,
        lamport: int | None = None,
        facts: Sequence[Mapping[str, int | str]] = (),
    ) -> Event:
        """A proposal of ``titles``; ``facts``, when given, holds each child's facts in order."""
        children = [
            {"title": t, "detail": f"Details of {t.lower()}.", "leaf": leaf, "facts": dict(f)}
            for t, f in zip(titles, facts or [{}] * len(titles), strict=True)
        ]
        return self.emit(
            who,
            "proposal",
            {
                "node": node,
                "strategy": strategy,
                "children": children,
                "revises": revises,
                "rationale": f"split {strategy}",
            },
            lamport,
        )

    def vote(
        self,
        who: Identity,
        proposal: Event,
        approve: bool,
        score: int = 80,
        lamport: int | None = None,
        failed: tuple[str, ...] = (),
    ) -> Event:
        """A vote whose mechanical checks pass, apart from those named in ``failed``."""
        checks = [{"name": n, "score": 20, "passed": False, "note": f"{n} failed"} for n in failed]
        if "count" not in failed:
            checks.insert(0, {"name": "count", "score": 100, "passed": True, "note": "ok"})
        return self.emit(
            who,
            "vote",
            {
                "proposal": proposal.id,
                "approve": approve,
                "score": score,
                "critique": "fine" if approve else "too vague",
                "checks": checks,
                "model_score": None,
            },
            lamport,
        )

    def ballot(self, who: Identity, node: str, ranking: list[Event], lamport: int | None = None) -> Event:
        return self.emit(who, "ballot", {"node": node, "ranking": [p.id for p in ranking]}, lamport)

    def claim(
        self,
        who: Identity,
        leaf: str,
        supersedes: str | None = None,
        lamport: int | None = None,
        rival: str | None = None,
    ) -> Event:
        body: dict[str, str | None] = {"leaf": leaf, "supersedes": supersedes}
        if rival is not None:
            body["rival"] = rival
        return self.emit(who, "claim", body, lamport)

    def result(
        self,
        who: Identity,
        leaf: str,
        claim: Event,
        output: str | None = None,
        revises: str | None = None,
        lamport: int | None = None,
        rivals: Sequence[str] = (),
    ) -> Event:
        body: dict[str, Any] = {
            "leaf": leaf,
            "claim": claim.id,
            "output": output or f"Result for {leaf}",
            "model": "synthetic",
        }
        if revises is not None:
            body["revises"] = revises
        if rivals:
            body["rivals"] = list(rivals)
        return self.emit(who, "result", body, lamport)

    def summary(
        self,
        who: Identity,
        node: str,
        sources: Sequence[str],
        text: str | None = None,
        lamport: int | None = None,
    ) -> Event:
        """A summary of split ``node`` written from ``sources`` (the children's counted results
        and summaries, in child order)."""
        body = {"node": node, "text": text or f"Summary of {node}.", "sources": list(sources)}
        return self.emit(who, "summary", body | {"model": "synthetic"}, lamport)

    def summarize_all(self) -> None:
        """Summarize every split node whose children are done, bottom-up, by the first executor."""
        while True:
            plan = FoldState(self.events).plan()
            ready = [
                (n, summary_sources([plan.nodes[c] for c in n.children]))
                for n in plan.walk()
                if not n.leaf and n.accepted and n.summary is None
            ]
            ready = [(n, s) for n, s in ready if s is not None]
            if not ready:
                return
            for n, sources in ready:
                self.summary(self.peers["executor"][0], n.id, sources or ())

    def accept(
        self,
        node: str,
        titles: list[str],
        *,
        leaf: bool = False,
        by: int = 0,
        facts: Sequence[Mapping[str, int | str]] = (),
    ) -> Event:
        prop = self.propose(
            self.peers["decomposer"][by % len(self.peers["decomposer"])], node, titles, leaf=leaf, facts=facts
        )
        for scorer in self.peers["scorer"]:
            self.vote(scorer, prop, True, 70 + self.rng.randrange(30))
        for scorer in self.peers["scorer"]:
            self.ballot(scorer, node, [prop])
        return prop

    def finish_leaves(self) -> None:
        """Claim and execute every open leaf; where the board judges results, every scorer
        approves each one."""
        state = FoldState(self.events)
        plan = state.plan()
        judged = plan.spec is not None and plan.spec.review.results
        for i, node in enumerate(plan.leaves()):
            if node.result is None:
                ex = self.peers["executor"][i % len(self.peers["executor"])]
                c = self.claim(ex, node.id)
                res = self.result(ex, node.id, c)
                for scorer in self.peers["scorer"] if judged else ():
                    self.vote(scorer, res, True, 80 + self.rng.randrange(20))


def complete_swarm(
    seed: int = 0, fanout: int = 3, depth: int = 2, spec: dict[str, Any] | None = None, rival: bool = True
) -> Swarm:
    """A converged run: a tree of ``fanout`` children per split, ``depth`` levels, a rejected
    rival proposal at the root, and every leaf executed."""
    sw = Swarm(
        spec=spec
        or minimal_spec(
            tree={
                "max_depth": depth,
                "min_children": 2,
                "max_children": 8,
                "max_revisions": 2,
                "approve_threshold": 60,
            }
        ),
        seed=seed,
    )
    if rival:
        bad = sw.propose(
            sw.peers["decomposer"][-1], "root", ["Misc things", "Other stuff"], strategy="by day"
        )
        for scorer in sw.peers["scorer"]:
            sw.vote(scorer, bad, False, 30)
    frontier = [("root", 0)]
    while frontier:
        node, d = frontier.pop(0)
        titles = [f"Part {d + 1}.{i + 1} of {node}" for i in range(fanout)]
        prop = sw.accept(node, titles, leaf=d + 1 >= depth, by=d)
        if d + 1 < depth:
            frontier.extend((child_id(prop.id, i), d + 1) for i in range(fanout))
    sw.finish_leaves()
    return sw
