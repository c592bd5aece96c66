"""The fold's rules, as pure functions of events: who has which role, which split of a node
is accepted, which claim on a leaf wins, and which result counts.

No state and no caching here (that is :mod:`specswarm.plan.fold`'s job): each function
takes the events that bear on one decision and returns the views. The rules:

* roles come from ``join`` events: the least (lamport, id) join of an author counts; in a
  run with an admission key, only joins it signed; in ``allowlist`` mode only listed peers;
* a proposal is *approved* when approving votes of distinct authorised scorers reach the
  quorum. Which approved split is accepted (``tree.select``):
  ``best`` — the first q *decisive* ballots decide (a scorer's decisive ballot is its least
  ballot for the node that ranks an approved split; the q least of those, one per scorer):
  Borda points over the approved splits each ranks (k, k-1, .. 1), then the higher mean
  score, then what the split says (:func:`content_key`: the same proposals give the same
  winner whatever the timing), then the least (lamport, author, id); with fewer than q
  decisive ballots none is accepted yet. ``first`` (runs made before ballots) — the one
  whose quorum-completing vote is least in (lamport, author), then the higher mean score,
  then the lesser id;
* on a leaf, the least (lamport, author) live claim wins, a rival's claim (``rival``) never;
  a claim named in a later claim's ``supersedes`` is dead;
* one result counts per leaf: the one under the least claim, then least id; in a run whose
  results the board judges (``review.results``), the one :mod:`specswarm.plan.results` picks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

from specswarm.plan.views import ClaimView, ProposalView, ResultView, VoteView
from specswarm.protocol.bodies import (
    BallotBody,
    Child,
    ClaimBody,
    JoinBody,
    ProposalBody,
    ResultBody,
    RunBody,
    VoteBody,
)
from specswarm.protocol.canonical import canonical_bytes
from specswarm.protocol.events import Event, admission_valid

SplitDecision = tuple[tuple[ProposalView, ...], str | None]
"""Every counted proposal of a node (accepted first), and the accepted one's id."""
LeafDecision = tuple[tuple[ClaimView, ...], str | None, ResultView | None, tuple[ResultView, ...]]
"""Every counted claim on a leaf, the winning claim's id, the counted result, and (results the
board judges) every judged result."""
Judge = Callable[[Mapping[str, Event], Iterable[Event]], tuple[tuple[ResultView, ...], ResultView | None]]
"""The board's rule for a leaf's results (:func:`specswarm.plan.results.judge_results`, its
votes and quorum given): (the leaf's executor claims by id, its results) -> (every judged
result, the counted one)."""
AS_LEAF = "leaf"
"""The accepted id :func:`decide_split` gives a node that none of its splits can serve: the
fallback found every rejected split re-planning other parts of the tree (see
:func:`_best_rejected`). The node becomes a leaf, done as one task."""


def least(a: Event | None, b: Event) -> Event:
    """The lesser of two events in (lamport, id) order (``a`` may be None)."""
    return b if a is None or (b.lamport, b.id) < (a.lamport, a.id) else a


def assign_roles(run: Event, joins: Mapping[str, Iterable[Event]]) -> tuple[dict[str, str], dict[str, str]]:
    """peer id -> role, and decomposer peer id -> the strategy it declares, from every author's
    counted join (``joins``: author -> its join events)."""
    assert isinstance(run.body, RunBody)
    access = run.body.spec.access
    allow = set(access.peers)
    admission = run.body.admission
    roles: dict[str, str] = {}
    strategies: dict[str, str] = {}
    for author, events in joins.items():
        if access.mode == "allowlist" and author not in allow:
            continue
        best: Event | None = None
        for join in events:
            body = join.body
            if join.run != run.run or not isinstance(body, JoinBody):
                continue
            if admission and not admission_valid(admission, run.run, author, body.role, body.admission):
                continue
            best = least(best, join)
        if best is not None:
            assert isinstance(best.body, JoinBody)
            roles[author] = best.body.role
            if best.body.role == "decomposer" and best.body.strategy:
                strategies[author] = best.body.strategy
    return roles, strategies


def vote_view(v: Event) -> VoteView:
    """The view of a counted vote."""
    b = v.body
    assert isinstance(b, VoteBody)
    return VoteView(
        v.id, v.author, b.approve, b.score, b.critique, b.checks, b.model_score, v.lamport, b.lens, b.model
    )


def decide_split(
    run: str,
    node: str,
    proposals: Iterable[Event],
    votes: Mapping[str, Iterable[Event]],
    roles: Mapping[str, str],
    q: int,
    n_scorers: int,
    chain: int | None = None,
    ballots: Iterable[Event] | None = None,
) -> SplitDecision:
    """Which proposal for ``node`` is accepted. ``votes``: proposal id -> the least vote of each
    author (any run); only this run's votes by authorised scorers count. ``ballots``: the
    node's ballot events for the ``best`` rule; None for the ``first`` rule.

    ``chain`` (``tree.max_revisions + 1``): once every decomposer that proposed for the node has
    had that many proposals rejected (or its latest rejected one repeats an earlier one of its
    own word for word: :func:`split_key`; the greedy model is stuck, and a decomposer does not
    revise it again) and none is pending, the node takes the best rejected one
    (the most approving votes -- the lenses that found no fault -- then the highest mean score,
    then what it says (:func:`content_key`), then the least (lamport, author, id)); its votes
    keep the critiques. A split that later reaches quorum still wins. Without it a node that
    cannot be split to the scorers' liking would stall the whole run. A split a quorum found
    repeating other parts of the tree (the ``repeats`` check) is never the fallback; when every
    one does, the accepted id is :data:`AS_LEAF`."""
    candidates: list[tuple[tuple[int, str, int, str], str]] = []
    counted: list[tuple[Event, ProposalBody, list[Event], int, int, int | None]] = []
    for prop in proposals:
        body = prop.body
        if roles.get(prop.author) != "decomposer" or prop.run != run or not isinstance(body, ProposalBody):
            continue
        cast = sorted(
            (v for v in votes.get(prop.id, ()) if v.run == run and roles.get(v.author) == "scorer"),
            key=lambda v: v.order,
        )
        approvals = [v for v in cast if isinstance(v.body, VoteBody) and v.body.approve]
        rejections = len(cast) - len(approvals)
        scores = [v.body.score for v in cast if isinstance(v.body, VoteBody)]
        mean = (sum(scores) * 1000 // len(scores)) if scores else None
        if len(approvals) >= q:
            done = approvals[q - 1]
            candidates.append(((done.lamport, done.author, -(mean or 0), prop.id), prop.id))
        counted.append((prop, body, cast, len(approvals), rejections, mean))
    points: dict[str, int] = {}
    if ballots is None:
        accepted = min(candidates)[1] if candidates else None
    else:
        means = {prop.id: mean or 0 for prop, _, _, _, _, mean in counted}
        ties = {prop.id: (content_key(body.children), prop.order) for prop, body, *_ in counted}
        points = _borda({pid for _, pid in candidates}, ballots, run, roles, q)
        accepted = min(points, key=lambda pid: (-points[pid], -means[pid], ties[pid])) if points else None
    if accepted is None and chain is not None:
        accepted = _best_rejected(counted, q, n_scorers, chain)
    views = []
    for prop, body, cast, n_app, n_rej, mean in counted:
        if prop.id == accepted:
            status = "accepted"
        elif n_app >= q:
            status = "outvoted" if accepted or ballots is None else "approved"
        elif n_rej > n_scorers - q:
            status = "rejected"
        else:
            status = "outvoted" if accepted else "pending"
        views.append(
            ProposalView(
                prop.id,
                node,
                prop.author,
                body.strategy,
                body.children,
                body.revises,
                body.rationale,
                prop.lamport,
                tuple(vote_view(v) for v in cast),
                n_app,
                n_rej,
                None if mean is None else (mean + 500) // 1000,
                status,
                points.get(prop.id, 0),
            )
        )
    views.sort(key=lambda p: (p.id != accepted, p.lamport, p.author, p.id))
    return tuple(views), accepted


def _borda(
    approved: set[str], ballots: Iterable[Event], run: str, roles: Mapping[str, str], q: int
) -> dict[str, int]:
    """Borda points of the approved splits from the first ``q`` decisive ballots (see the
    module's rules); empty while fewer than ``q`` scorers have cast one."""
    if not approved:
        return {}
    decisive: dict[str, tuple[tuple[int, str, str], BallotBody]] = {}
    for ballot in sorted(ballots, key=lambda b: b.order):
        body = ballot.body
        if ballot.run != run or roles.get(ballot.author) != "scorer" or not isinstance(body, BallotBody):
            continue
        if ballot.author not in decisive and any(pid in approved for pid in body.ranking):
            decisive[ballot.author] = (ballot.order, body)
    deciding = sorted(decisive.values(), key=lambda ob: ob[0])[:q]
    if len(deciding) < q:
        return {}
    points: dict[str, int] = {}
    for _, body in deciding:
        ranked = [pid for pid in dict.fromkeys(body.ranking) if pid in approved]
        for i, pid in enumerate(ranked):
            points[pid] = points.get(pid, 0) + len(ranked) - i
    return points


def _best_rejected(
    counted: Iterable[tuple[Event, ProposalBody, list[Event], int, int, int | None]],
    q: int,
    n_scorers: int,
    chain: int,
) -> str | None:
    """The fallback of :func:`decide_split`: the best rejected proposal once every proposing
    decomposer's chain of revisions is used up (None while any proposal may still pass)."""
    rejected: dict[str, list[tuple[tuple[int, int], tuple[int, str, str], tuple[str, ...]]]] = {}
    contents: dict[tuple[int, str, str], str] = {}
    repeating: set[tuple[int, str, str]] = set()
    for prop, body, cast, n_app, n_rej, mean in counted:
        if n_rej <= n_scorers - q:
            return None  # still pending: quorum can be reached
        merit = (n_app, mean or 0)
        rejected.setdefault(prop.author, []).append((merit, prop.order, split_key(body.children)))
        contents[prop.order] = content_key(body.children)
        if sum(_failed(v, "repeats") for v in cast) >= q:
            repeating.add(prop.order)
    if not rejected or not all(len(c) >= chain or _stuck(c) for c in rejected.values()):
        return None
    usable = [
        (-app, -mean, contents[order], order)
        for c in rejected.values()
        for (app, mean), order, _ in c
        if order not in repeating
    ]
    # every split re-plans what other nodes already hold (a quorum's ``repeats`` check failed):
    # taking one would plan those things twice; the node is better done as one task
    return min(usable)[3][2] if usable else AS_LEAF


def _failed(vote: Event, check: str) -> bool:
    """Whether ``vote`` reports the mechanical check named ``check`` as failed."""
    body = vote.body
    return isinstance(body, VoteBody) and any(c.name == check and not c.passed for c in body.checks)


def _stuck(chain_of: list[tuple[tuple[int, int], tuple[int, str, str], tuple[str, ...]]]) -> bool:
    """The author's latest proposal repeats an earlier one of its own."""
    latest = max(chain_of, key=lambda entry: entry[1])
    return any(key == latest[2] for _, order, key in chain_of if order != latest[1])


def content_key(children: Iterable[Child]) -> str:
    """What a split says, as one comparable string (its children's titles, details, facts and
    leaf flags, in order): ties between splits are broken by it rather than by who proposed
    first, so the same proposals give the same winner whatever the timing and the peer ids."""
    return canonical_bytes([c.to_json() for c in children]).decode()


def chain_ended(mine: Sequence[ProposalView], max_revisions: int) -> bool:
    """Whether one decomposer's proposals for a node (``mine``, oldest first) are its last
    word: the latest is rejected and either its revisions are used up or it repeats one of
    its earlier splits (:func:`split_key`: the greedy model is stuck). The decomposer then
    proposes no more, and a scorer waiting for the node's rivals stops waiting for it."""
    if not mine or mine[-1].status != "rejected":
        return False
    latest = split_key(mine[-1].children)
    return len(mine) > max_revisions or any(split_key(p.children) == latest for p in mine[:-1])


def split_key(children: Iterable[Child]) -> tuple[str, ...]:
    """What makes two splits the same one: their children's titles, case and spacing aside,
    in any order."""
    return tuple(sorted(" ".join(c.title.casefold().split()) for c in children))


def superseded(claims: Mapping[str, Event]) -> set[str]:
    """The ids of the dead ``claims``: each named in the ``supersedes`` of a later claim."""
    dead: set[str] = set()
    for c in claims.values():
        gone = c.body.supersedes if isinstance(c.body, ClaimBody) else None
        if gone is not None and gone in claims and claims[gone].lamport < c.lamport:
            dead.add(gone)
    return dead


def decide_leaf(
    run: str,
    claims_held: Mapping[str, Event],
    results: Iterable[Event],
    roles: Mapping[str, str],
    judge: Judge | None = None,
) -> LeafDecision:
    """Which claim on a leaf wins and which result counts (``claims_held``: claim id -> claim):
    by the board's votes when ``judge`` is given, else the result under the least claim."""
    claims: dict[str, tuple[Event, ClaimBody]] = {
        cid: (c, c.body)
        for cid, c in claims_held.items()
        if roles.get(c.author) == "executor" and c.run == run and isinstance(c.body, ClaimBody)
    }
    dead = superseded({cid: c for cid, (c, _) in claims.items()})
    live = [c for cid, (c, b) in claims.items() if cid not in dead and b.rival is None]
    winner = min(live, key=lambda c: c.order).id if live else None
    views = tuple(
        ClaimView(c.id, c.author, c.lamport, b.supersedes, c.id not in dead, b.rival)
        for c, b in sorted(claims.values(), key=lambda cb: cb[0].order)
    )
    if judge is not None:
        judged, counted = judge({cid: c for cid, (c, _) in claims.items()}, results)
        return views, winner, counted, judged
    best: tuple[tuple[int, str, str], Event, ResultBody] | None = None
    for res in results:
        body = res.body
        if not isinstance(body, ResultBody):
            continue
        held = claims.get(body.claim)
        if held is None or held[0].author != res.author or res.run != run:
            continue
        key = (held[0].lamport, held[0].author, res.id)
        if best is None or key < best[0]:
            best = (key, res, body)
    result = None
    if best is not None:
        _, r, rb = best
        result = ResultView(r.id, r.author, rb.claim, rb.output, rb.model, rb.revises, r.lamport)
    return views, winner, result, ()
