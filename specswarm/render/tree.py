"""Readable snapshots of a plan for a terminal (the observer's and the launcher's view)."""

from __future__ import annotations

from specswarm.plan.views import NodeView, Plan
from specswarm.protocol.identity import short_id

_MARK = {
    "done": "✔",
    "reviewing": "?",
    "claimed": "…",
    "unclaimed": "·",
    "split": "▸",
    "voting": "?",
    "balloting": "?",
    "open": "○",
}


def fallback(plan: Plan, n: NodeView) -> bool:
    """Whether ``n``'s accepted split has fewer approvals than the quorum: every proposal was
    rejected and the fold took the best of them, as its fallback rule says."""
    acc = n.accepted_proposal
    spec = plan.spec
    return acc is not None and spec is not None and acc.approvals < spec.quorum_size()


def _line(plan: Plan, n: NodeView) -> str:
    mark = _MARK.get(n.status, " ")
    extra = ""
    if n.leaf:
        if n.result:
            extra = f"  [done by {short_id(n.result.author)}]"
        elif n.claim:
            extra = f"  [claimed by {short_id(n.claim_holder or '?')}]"
    else:
        acc = n.accepted_proposal
        if acc:
            extra = f"  [{acc.strategy}, {acc.approvals}/{acc.approvals + acc.rejections} approve"
            extra += ", fallback: no split reached the quorum]" if fallback(plan, n) else "]"
        elif n.proposals:
            rejected = sum(1 for p in n.proposals if p.status == "rejected")
            extra = f"  [{len(n.proposals)} proposal(s), {rejected} rejected]"
    title = n.title if len(n.title) <= 70 else n.title[:67] + "..."
    return f"{'  ' * n.depth}{mark} {title}{extra}"


def tree_text(plan: Plan, width: int = 100) -> str:
    """The plan tree, one line per node, with a header line of progress."""
    if plan.root is None:
        return "(no run yet)"
    p = plan.progress()
    head = (
        f"run {plan.run_id[:12] if plan.run_id else '?'}  digest {plan.digest[:12]}  "
        f"nodes {p['nodes']}  split {p['split']}  leaves {p['done']}/{p['leaves']} done"
        + ("  COMPLETE" if plan.complete else "")
    )
    lines = [head] + [_line(plan, n)[:width] for n in plan.walk()]
    return "\n".join(lines)
