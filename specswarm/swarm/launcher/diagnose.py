"""Why a run is stuck (one line per stuck node), and the JSON report of a run."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from specswarm.plan import NodeView, Plan
from specswarm.plan.summaries import summary_sources
from specswarm.protocol.identity import short_id
from specswarm.spec import TreeLimits
from specswarm.swarm.launcher.procs import PeerProc
from specswarm.swarm.launcher.progress import event_count


def diagnose(plan: Plan, peers: Sequence[PeerProc]) -> list[str]:
    """Why the plan is not complete: one line per stuck node, then the model failures and the
    peers that died."""
    if plan.root is None:
        return ["the run never started: no peer published the run"]
    roles_alive = {p.role for p in peers if p.alive}
    names = {p.identity.peer_id: p.name for p in peers}
    max_rev = (plan.spec.tree if plan.spec else TreeLimits()).max_revisions
    summaries = plan.spec is not None and plan.spec.review.summaries
    reasons = []
    for n in plan.walk():
        if n.leaf and n.result is None:
            reasons.append(f"leaf {n.id} {n.title[:50]!r}: {_leaf_stuck(n, roles_alive, names)}")
        elif not n.leaf and not n.accepted:
            reasons.append(f"node {n.id} {n.title[:50]!r}: {_split_stuck(n, roles_alive, max_rev)}")
        elif not n.leaf and summaries and n.summary is None and _children_done(plan, n):
            alive = "" if "executor" in roles_alive else "; no executor is alive"
            reasons.append(
                f"node {n.id} {n.title[:50]!r}: its parts are done, its summary is not written yet{alive}"
            )
    failures = sum(p.counter("model_failures") for p in peers)
    if failures:
        last = [
            f"{p.name}: {p.status['last_model_failure']}" for p in peers if p.status.get("last_model_failure")
        ]
        reasons.append(
            f"model failures across peers: {failures} (see the peer logs)"
            + (f"; last: {last[0]}" if last else "")
        )
    dead = [f"{p.name} (exit {p.exited})" for p in peers if p.exited not in (None, 0)]
    if dead:
        reasons.append("peers that died: " + ", ".join(dead))
    restarted = [
        f"{p.name} ({p.restarts}x; exits {', '.join(map(str, p.deaths))})" for p in peers if p.restarts
    ]
    if restarted:
        reasons.append("peers restarted: " + ", ".join(restarted))
    return reasons


def _children_done(plan: Plan, n: NodeView) -> bool:
    kids = [plan.nodes[c] for c in n.children if c in plan.nodes]
    return len(kids) == len(n.children) and summary_sources(kids) is not None


def _leaf_stuck(n: NodeView, roles_alive: set[str], names: dict[str, str]) -> str:
    pending = [r for r in n.results if r.status == "pending"]
    if pending:
        votes = max(len(r.votes) for r in pending)
        alive = "" if "scorer" in roles_alive else "; no scorer is alive"
        return f"its result awaits the board's votes ({votes} cast; leaves are judged in tree order){alive}"
    if "executor" not in roles_alive:
        return "no executor is alive"
    if awaited := n.rivals_awaited:
        rival = awaited[0].author
        who = names.get(rival) or short_id(rival)
        return f"a rival's revision by {who} is awaited (review.rivals; model slow or failing)"
    if n.claim:
        holder = n.claim_holder or "?"
        who = names.get(holder) or short_id(holder)  # its seat name, as the tree and table say
        return f"claimed by {who} but no result yet (model slow or failing)"
    return "nobody claimed it yet"


def _split_stuck(n: NodeView, roles_alive: set[str], max_rev: int) -> str:
    if not n.proposals:
        if "decomposer" not in roles_alive:
            return "no decomposer is alive"
        return "no proposal yet (decomposer model slow or failing)"
    if all(p.status == "rejected" for p in n.proposals):
        last = n.proposals[-1]
        critique = last.votes[-1].critique.splitlines()[0][:120] if last.votes else "-"
        return (
            f"all {len(n.proposals)} proposals rejected by the scorers "
            f"(revisions per decomposer are capped at {max_rev}); last critique: {critique}"
        )
    approved = [p for p in n.proposals if p.status == "approved"]
    if approved and not any(p.status == "pending" for p in n.proposals):
        return f"{len(approved)} approved split(s) awaiting the scorers' ballots" + (
            "; no scorer alive" if "scorer" not in roles_alive else ""
        )
    pending = [p for p in n.proposals if p.status == "pending"]
    votes = sum(len(p.votes) for p in pending)
    return (
        f"{len(pending)} proposal(s) pending without quorum ({votes} vote(s) so far"
        + ("; no scorer alive" if "scorer" not in roles_alive else "")
        + ")"
    )


def write_report(
    path: Path,
    plan: Plan,
    peers: Sequence[PeerProc],
    code: int,
    wall: float,
    reasons: list[str],
    notes: Sequence[tuple[float, str]] = (),
    cache: Path | None = None,
) -> None:
    """A machine-readable summary of the run (for CI jobs and tests); ``code`` is the exit code,
    ``notes`` the deaths and restarts as (seconds since the launch, text), ``cache`` the answer
    cache's directory (its hits and misses are summed over the peers)."""
    report = {
        "run_id": plan.run_id,
        "digest": plan.digest,
        "content_digest": plan.content_digest,
        "complete": plan.complete,
        "exit_code": code,
        "wall_seconds": round(wall, 3),
        "events": event_count(plan),
        "progress": plan.progress(),
        "stuck": reasons,
        "restarts": [{"at": round(t, 3), "what": text} for t, text in notes],
        "cache": {
            "dir": str(cache) if cache is not None else None,
            "hits": sum(p.counter("cache_hits") for p in peers),
            "misses": sum(p.counter("cache_misses") for p in peers),
        },
        "peers": [
            {
                "name": p.name,
                "role": p.role,
                "peer_id": p.identity.peer_id,
                "digest": p.status.get("digest"),
                "complete": p.status.get("complete"),
                "events": p.status.get("events"),
                "counters": p.status.get("counters", {}),
                "transport": p.status.get("transport", {}),
                "exit": p.exited,
                "restarts": p.restarts,
                "deaths": p.deaths,
                "pid": p.proc.pid if p.proc else None,
                "log": str(p.log),
            }
            for p in peers
        ],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
