"""The fold's rule for leaf results the board judges (``review.results``): a pure function of
the events, as :mod:`specswarm.plan.rules` is (which keeps the older rule for runs without it:
the result under the least claim counts, unjudged).

* a result is judged when its author holds a claim on the leaf (live or superseded) in this
  run; one vote per authorised scorer counts, its least (lamport, id) one;
* a result is *accepted* when approving votes of distinct scorers reach the quorum. Of several
  accepted ones, the one whose quorum-completing vote is least in (lamport, author) counts,
  then the higher mean score, then the lesser id (the ``tree.select: first`` rule of splits);
* a result is *rejected* when its rejections exceed n - q (the quorum is out of reach); a
  rejected result is written again (``ResultBody.revises``) by an executor;
* a *round*: the results that write the same rejected result again where rivals do
  (``review.rivals``: an executor other than the holder claims the leaf with ``rival`` naming
  that result). Nothing of the leaf counts while a round is open: the holder's revision (one
  under a claim that is not a rival's) or a live rival claim's revision is missing, or one of
  the round's results is pending, or a rival claim that a revision names (``ResultBody.rivals``:
  the holder names those it heard of before writing) is not held yet: gossip need not deliver
  the claim before the revision, and a peer must not count a round it has not seen whole. Of a
  closed round's accepted results, the one the board scores highest counts (every scorer runs
  the same checks on a result, so every vote on it has the same score whichever scorers voted:
  timing does not choose), then what it says, then the lesser id;
* every run delivers: with none accepted and none pending, once the leaf holds ``chain``
  (``review.revisions + 1``) rejected results of distinct texts, or a rejected revision says
  word for word what the result it revises said (the greedy model is stuck), the best rejected
  one counts: the most approving votes, then the highest mean score, then its text, then
  (lamport, author, id).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from specswarm.plan.rules import superseded, vote_view
from specswarm.plan.views import ResultView
from specswarm.protocol.bodies import ClaimBody, ResultBody, VoteBody
from specswarm.protocol.events import Event

Judged = tuple[tuple[ResultView, ...], ResultView | None]
"""Every judged result of a leaf (the counted one first), and the counted one."""


def judge_results(
    run: str,
    claims: Mapping[str, Event],
    results: Iterable[Event],
    votes: Mapping[str, Iterable[Event]],
    roles: Mapping[str, str],
    q: int,
    n_scorers: int,
    chain: int,
) -> Judged:
    """Which result of a leaf counts, by the board's votes. ``claims``: the leaf's claims by
    this run's executors (id -> claim); ``votes``: result id -> the least vote of each author
    (any run: only this run's votes by authorised scorers count)."""
    judged: list[tuple[Event, ResultBody, list[Event], int, int, int | None]] = []
    passed: list[tuple[ResultBody, Event, int | None, str]] = []  # with the q-th approving vote
    for res in results:
        body = res.body
        held = claims.get(body.claim) if isinstance(body, ResultBody) else None
        if held is None or held.author != res.author or res.run != run or not isinstance(body, ResultBody):
            continue
        cast = sorted(
            (v for v in votes.get(res.id, ()) if v.run == run and roles.get(v.author) == "scorer"),
            key=lambda v: v.order,
        )
        approvals = [v for v in cast if isinstance(v.body, VoteBody) and v.body.approve]
        scores = [v.body.score for v in cast if isinstance(v.body, VoteBody)]
        mean = (sum(scores) * 1000 // len(scores)) if scores else None
        judged.append((res, body, cast, len(approvals), len(cast) - len(approvals), mean))
        if len(approvals) >= q:
            passed.append((body, approvals[q - 1], mean, res.id))
    rivals = _rival_claims(claims)
    named = _named_rivals(judged)
    candidates: list[tuple[tuple[int, str, int, str], str]] = []
    rounds: dict[str, list[tuple[int, str, str]]] = {}  # rival round -> its accepted results
    for body, done, mean, rid in passed:
        if body.revises in rivals or body.revises in named:
            rounds.setdefault(str(body.revises), []).append((-(mean or 0), body.output, rid))
        else:
            candidates.append(((done.lamport, done.author, -(mean or 0), rid), rid))
    waiting = _open_rounds(claims, rivals, named, judged, q, n_scorers)
    counted = None
    if not waiting:
        closed = [r for accepted in rounds.values() for r in accepted]
        counted = min(closed)[2] if closed else min(candidates)[1] if candidates else None
    if counted is None and not waiting:
        counted = _best_rejected(judged, q, n_scorers, chain, bool(rivals))
    views = []
    for res, body, cast, n_app, n_rej, mean in judged:
        if res.id == counted:
            status = "accepted"
        elif n_app >= q and body.revises in waiting:
            status = "approved"
        elif n_app >= q:
            status = "outvoted"
        elif n_rej > n_scorers - q:
            status = "rejected"
        else:
            status = "pending"
        views.append(
            ResultView(
                res.id,
                res.author,
                body.claim,
                body.output,
                body.model,
                body.revises,
                res.lamport,
                tuple(vote_view(v) for v in cast),
                n_app,
                n_rej,
                None if mean is None else (mean + 500) // 1000,
                status,
            )
        )
    views.sort(key=lambda r: (r.id != counted, r.lamport, r.author, r.id))
    return tuple(views), (views[0] if counted is not None else None)


def _best_rejected(
    judged: Iterable[tuple[Event, ResultBody, list[Event], int, int, int | None]],
    q: int,
    n_scorers: int,
    chain: int,
    rounds: bool = False,
) -> str | None:
    """The fallback of :func:`judge_results`: the best rejected result once the leaf's chain of
    revisions is used up (None while any result may still pass). The chain counts distinct
    texts (two executors that raced on a leaf may have written the same one), or, on a leaf
    with ``rounds`` of rivals, rounds (a round holds a revision per writer); it is used up
    early when a revision says what the result it revises said (the greedy model is stuck)."""
    ranked: list[tuple[int, int, str, tuple[int, str, str]]] = []
    said: dict[str, str] = {}
    revising: list[tuple[str, str | None]] = []
    for res, body, _, n_app, n_rej, mean in judged:
        if n_rej <= n_scorers - q:
            return None  # pending: the quorum can still be reached
        ranked.append((-n_app, -(mean or 0), body.output, res.order))
        said[res.id] = " ".join(body.output.split())
        revising.append((res.id, body.revises))
    stuck = any(rev in said and said[rev] == said[rid] for rid, rev in revising)
    deepest = max(revision_depths(dict(revising)).values(), default=0)
    used = len(set(said.values())) if not rounds else 1 + deepest
    if not ranked or (used < chain and not stuck):
        return None
    return min(ranked)[3][2]


def _rival_claims(claims: Mapping[str, Event]) -> dict[str, list[Event]]:
    """Rejected result id -> the rivals' claims made to write it again (live or superseded)."""
    out: dict[str, list[Event]] = {}
    for c in claims.values():
        if isinstance(c.body, ClaimBody) and c.body.rival is not None:
            out.setdefault(c.body.rival, []).append(c)
    return out


def _named_rivals(
    judged: Iterable[tuple[Event, ResultBody, list[Event], int, int, int | None]],
) -> dict[str, set[str]]:
    """Rejected result id -> the rival claims that its judged revisions name
    (:attr:`~specswarm.protocol.bodies.ResultBody.rivals`: heard of by their writers)."""
    out: dict[str, set[str]] = {}
    for _, body, _, _, _, _ in judged:
        if body.revises is not None and body.rivals:
            out.setdefault(body.revises, set()).update(body.rivals)
    return out


def _open_rounds(
    claims: Mapping[str, Event],
    rivals: Mapping[str, list[Event]],
    named: Mapping[str, set[str]],
    judged: Iterable[tuple[Event, ResultBody, list[Event], int, int, int | None]],
    q: int,
    n_scorers: int,
) -> set[str]:
    """The rival rounds still open (see the module docstring): rejected result ids whose
    holder's revision, or a live rival claim's, is not written yet, or whose revisions are not
    all decided (accepted by a quorum, or rejected), or a rival claim a revision names is not
    held yet."""
    dead = superseded(claims)
    written: dict[str, set[str]] = {}  # round -> the claims its revisions were written under
    undecided: set[str] = set()
    for _, body, _, n_app, n_rej, _ in judged:
        target = body.revises
        if target is not None and (target in rivals or target in named):
            written.setdefault(target, set()).add(body.claim)
            if n_app < q and n_rej <= n_scorers - q:
                undecided.add(target)
    open_ = set(undecided)
    for target, made in rivals.items():
        under = written.get(target, set())
        holders = [cid for cid in under if cid in claims and _holder_claim(claims[cid])]
        owed = [c.id for c in made if c.id not in dead and c.id not in under]
        if not holders or owed:
            open_.add(target)
    for target, ids in named.items():
        if not ids <= {c.id for c in rivals.get(target, ())}:
            open_.add(target)  # a named rival claim not heard of yet: its revision may come
    return open_


def _holder_claim(claim: Event) -> bool:
    return isinstance(claim.body, ClaimBody) and claim.body.rival is None


def revision_depths(revising: Mapping[str, str | None]) -> dict[str, int]:
    """Result id -> how many revisions it is from a first result (``revising``: id -> the id
    it revises; a result revising one not in ``revising`` counts as a first result)."""
    out: dict[str, int] = {}
    for rid in revising:
        n, cur, seen = 0, revising[rid], {rid}
        while cur is not None and cur in revising and cur not in seen:
            seen.add(cur)
            cur, n = revising[cur], n + 1
        out[rid] = n
    return out
