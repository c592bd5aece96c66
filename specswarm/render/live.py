"""The live view of a run on a terminal (rich renderables, built from plain data; no I/O).

:func:`live_view` is one frame: a header (elapsed, estimate of the time left, model speed,
cache), a bar over the leaves, the plan tree with each node's status, and what each peer is
doing now. :func:`summary_table` is what a finished run ends with. The launcher
(:mod:`specswarm.swarm.launcher.progress`) and ``specswarm observe`` draw them; what they
know differs (the launcher reads every peer's status lines, an observer only the events),
so the numbers come in as :class:`LiveStats` and :class:`PeerRow` values.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from rich.console import Group, RenderableType
from rich.progress_bar import ProgressBar
from rich.table import Table
from rich.text import Text
from rich.tree import Tree

from specswarm.plan.views import NodeView, Plan
from specswarm.protocol.identity import short_id
from specswarm.render.tree import fallback

STYLE = {
    "done": "green",
    "reviewing": "yellow",
    "claimed": "yellow",
    "unclaimed": "dim",
    "split": "cyan",
    "voting": "magenta",
    "balloting": "magenta",
    "open": "dim",
}
MARK = {
    "done": "✔",
    "reviewing": "?",
    "claimed": "…",
    "unclaimed": "·",
    "split": "▸",
    "voting": "?",
    "balloting": "⚖",
    "open": "○",
}


@dataclass(frozen=True)
class LiveStats:
    """The numbers of the header line."""

    elapsed: float
    """Seconds since the run (or the observer) started."""
    left: float | None = None
    """Estimated seconds left (None: no estimate yet)."""
    tokens_per_second: float | None = None
    """The model's measured speed (None: not known, or an instant model)."""
    model_calls: int | None = None
    cache_hits: int = 0
    cache_misses: int = 0
    peers_alive: int | None = None
    peers_total: int | None = None


@dataclass(frozen=True)
class PeerRow:
    """One peer's line in the view: its name, role and what it does now, in words."""

    name: str
    role: str
    doing: str


def clock(seconds: float) -> str:
    """``754`` -> ``12:34`` (hours as ``1:02:03``)."""
    s = max(0, int(seconds))
    h, rest = divmod(s, 3600)
    return f"{h}:{rest // 60:02d}:{rest % 60:02d}" if h else f"{rest // 60:02d}:{rest % 60:02d}"


def _who(peer: str | None, names: Mapping[str, str]) -> str:
    if peer is None:
        return "?"
    return names.get(peer) or short_id(peer)


def node_status(n: NodeView, names: Mapping[str, str], fallback: bool = False) -> str:
    """A node's status in words: voting (proposals, votes), balloting, accepted (with its
    tally; ``fallback``: below the quorum, the best of the rejected splits), open, unclaimed,
    claimed by whom, done (by whom)."""
    if n.leaf:
        if n.result is not None:
            return f"done by {_who(n.result.author, names)}"
        pending = next((r for r in n.results if r.status == "pending"), None)
        if pending is not None:
            return f"result by {_who(pending.author, names)} under review, {len(pending.votes)} vote(s)"
        if awaited := n.rivals_awaited:
            return f"written again by {_who(awaited[0].author, names)} as a rival, and by its holder"
        if n.claim:
            return f"claimed by {_who(n.claim_holder, names)}"
        return "unclaimed"
    acc = n.accepted_proposal
    if acc is not None:
        rivals = len(n.proposals) - 1
        how = "fallback, no split reached the quorum: " if fallback else ""
        return f"accepted {how}{acc.approvals}/{acc.approvals + acc.rejections} ({acc.strategy})" + (
            f", {rivals} rival(s)" if rivals else ""
        )
    rejected = sum(1 for p in n.proposals if p.status == "rejected")
    tail = f", {rejected} rejected" if rejected else ""
    if n.status == "voting":
        votes = sum(len(p.votes) for p in n.proposals if p.status == "pending")
        return f"voting: {len(n.proposals)} proposal(s), {votes} vote(s){tail}"
    if n.status == "balloting":
        return f"balloting{tail}"
    return f"open{tail}" if n.proposals else "open: no proposal yet"


def _label(plan: Plan, n: NodeView, names: Mapping[str, str], width: int) -> Text:
    status = n.status
    title = n.title if len(n.title) <= width else n.title[: max(1, width - 1)] + "…"
    text = Text(f"{MARK.get(status, ' ')} ", style=STYLE.get(status, ""))
    text.append(title, style="bold" if n.parent is None else "")
    text.append(f"  [{node_status(n, names, fallback(plan, n))}]", style=STYLE.get(status, "dim"))
    return text


def plan_tree(plan: Plan, names: Mapping[str, str] | None = None, title_width: int = 60) -> Tree | Text:
    """The plan tree, every node labelled with its status."""
    root = plan.root
    if root is None:
        return Text("(waiting for the run)", style="dim")
    names = names or {}
    tree = Tree(_label(plan, root, names, title_width), guide_style="dim")

    def grow(branch: Tree, n: NodeView) -> None:
        for c in n.children:
            child = plan.nodes[c]
            grow(branch.add(_label(plan, child, names, title_width)), child)

    grow(tree, root)
    return tree


def describe(plan: Plan, doing: Mapping[str, str] | None) -> str:
    """A peer's ``doing`` (from its status line) in words, naming the node by its title."""
    if not doing:
        return "idle"
    key = str(doing.get("on", ""))
    node = plan.nodes.get(key)
    if node is None:  # a proposal id: the node it splits
        node = next((n for n in plan.nodes.values() if any(p.id == key for p in n.proposals)), None)
    title = repr(node.title[:40]) if node is not None else key[:12]
    verb = {"propose": "proposing a split of", "rate": "rating a split of", "execute": "executing"}.get(
        str(doing.get("task")), str(doing.get("task"))
    )
    waiting = " (waiting for the model)" if doing.get("phase") == "waiting" else ""
    return f"{verb} {title}{waiting}"


def seen_doing(plan: Plan, names: Mapping[str, str] | None = None) -> list[PeerRow]:
    """What the events alone tell of each participant (an observer has no status lines): an
    executor that holds a leaf without a result is executing it; of the others, nothing."""
    names = names or {}
    rows = []
    holding = {n.claim_holder: n for n in plan.leaves() if n.claim and n.result is None}
    for peer, role in sorted(plan.roles.items(), key=lambda kv: (kv[1], kv[0])):
        if role == "executor":
            leaf = holding.get(peer)
            doing = f"executing {leaf.title[:40]!r}" if leaf else "idle"
        else:
            doing = "(not in the events)"
        rows.append(PeerRow(_who(peer, names), role, doing))
    return rows


def header(plan: Plan, stats: LiveStats) -> Text:
    p = plan.progress()
    left = (
        "estimating…" if stats.left is None else ("done" if plan.complete else f"~{clock(stats.left)} left")
    )
    parts = [
        f"elapsed {clock(stats.elapsed)}",
        left,
        f"nodes {p['nodes']}  split {p['split']}  open {p['open']}",
    ]
    if stats.model_calls is not None:
        parts.append(f"model calls {stats.model_calls}")
    if stats.tokens_per_second:
        parts.append(f"{stats.tokens_per_second:.1f} tok/s")
    if stats.cache_hits or stats.cache_misses:
        parts.append(f"cache {stats.cache_hits} hit / {stats.cache_misses} miss")
    if stats.peers_total is not None:
        parts.append(f"peers {stats.peers_alive}/{stats.peers_total}")
    return Text("  ·  ".join(parts), style="bold")


def leaf_bar(plan: Plan, width: int = 40) -> Table:
    """A bar over the leaves (done of known), with the counts beside it."""
    p = plan.progress()
    grid = Table.grid(padding=(0, 1))
    grid.add_row(
        Text("leaves"),
        ProgressBar(total=max(1, p["leaves"]), completed=p["done"], width=width),
        Text(f"{p['done']}/{p['leaves']} done, {p['claimed'] - p['done']} claimed"),
    )
    return grid


def peers_table(rows: Sequence[PeerRow]) -> Table:
    table = Table(show_header=True, header_style="bold", box=None, padding=(0, 1), pad_edge=False)
    table.add_column("peer")
    table.add_column("role")
    table.add_column("doing now")
    for row in rows:
        table.add_row(row.name, row.role, row.doing)
    return table


def live_view(
    plan: Plan, stats: LiveStats, peers: Sequence[PeerRow], names: Mapping[str, str] | None = None
) -> RenderableType:
    """One frame of the live view."""
    return Group(header(plan, stats), leaf_bar(plan), plan_tree(plan, names), Text(""), peers_table(peers))


@dataclass(frozen=True)
class RoleUse:
    """What one role's peers spent on the model, for the summary table."""

    role: str
    calls: int
    tokens: int
    model_seconds: float
    cache_hits: int = 0
    cache_misses: int = 0


def rejected_splits(plan: Plan) -> tuple[int, int]:
    """(rejected, outvoted) proposals over the tree."""
    props = [p for n in plan.walk() for p in n.proposals]
    return sum(1 for p in props if p.status == "rejected"), sum(1 for p in props if p.status == "outvoted")


def summary_table(plan: Plan, wall: float, uses: Sequence[RoleUse]) -> Group:
    """The end of a run: wall time and where it went (model, coordination), model calls and
    tokens per role, rejected splits, cache hits and misses."""
    model = min(wall, sum(u.model_seconds for u in uses))
    rejected, outvoted = rejected_splits(plan)
    hits, misses = sum(u.cache_hits for u in uses), sum(u.cache_misses for u in uses)
    table = Table(title="run summary", title_justify="left", header_style="bold")
    for name in ("", "model calls", "tokens", "model s", "cache hit/miss"):
        table.add_column(name, justify="right" if name else "left")
    for u in uses:
        table.add_row(
            u.role, str(u.calls), str(u.tokens), f"{u.model_seconds:.1f}", f"{u.cache_hits}/{u.cache_misses}"
        )
    table.add_section()
    table.add_row(
        "total",
        str(sum(u.calls for u in uses)),
        str(sum(u.tokens for u in uses)),
        f"{model:.1f}",
        f"{hits}/{misses}",
    )
    share = model / wall if wall > 0 else 0.0
    p = plan.progress()
    facts = Table.grid(padding=(0, 2))
    facts.add_row(
        "wall time", f"{clock(wall)}: model {model:.1f} s ({share:.0%}), coordination {wall - model:.1f} s"
    )
    facts.add_row("splits", f"{p['split']} accepted, {rejected} rejected, {outvoted} outvoted")
    facts.add_row("plan", f"{p['nodes']} nodes, {p['done']}/{p['leaves']} leaves done")
    if hits or misses:
        facts.add_row("answer cache", f"{hits} hits, {misses} misses")
    return Group(table, facts)
