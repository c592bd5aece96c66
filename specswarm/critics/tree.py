"""The other nodes of the plan tree as the repeats check sees them, from the node being split:
its ancestors, the stages beside its branch, and everything else that is not below it."""

from __future__ import annotations

from collections.abc import Mapping

from specswarm.critics.items import Relation, Relative, TreeItem


def relatives_in_tree(nodes: Mapping[str, TreeItem], node_id: str) -> list[Relative]:
    """Every other node of the tree as seen from ``node_id`` (the node being split): its
    ancestors (root first), the siblings of it and of its ancestors, and every other node
    that is not its descendant. ``nodes``: id -> node (``parent`` is the parent's id)."""
    children: dict[str | None, list[str]] = {}
    for nid, n in nodes.items():
        children.setdefault(n.parent, []).append(nid)

    def titles_to(nid: str) -> tuple[str, ...]:
        """The titles from the root down to ``nid``."""
        out, cur, seen = [nodes[nid].title], nodes[nid].parent, {nid}
        while cur is not None and cur in nodes and cur not in seen:
            seen.add(cur)
            out.append(nodes[cur].title)
            cur = nodes[cur].parent
        return tuple(reversed(out))

    def depth_of(nid: str) -> int:
        return len(titles_to(nid)) - 1

    def in_order(ids: set[str]) -> list[str]:
        # by depth, then by content (not by node id, which differs in every run): the critics'
        # notes, and so the critiques a revision is asked to fix, are the same in every run
        return sorted(ids, key=lambda s: (depth_of(s), titles_to(s), s))

    chain: list[str] = []
    cur = nodes[node_id].parent if node_id in nodes else None
    while cur is not None and cur in nodes and cur not in chain:
        chain.append(cur)
        cur = nodes[cur].parent
    chain.reverse()  # root first
    below: set[str] = set()
    stack = [node_id]
    while stack:
        x = stack.pop()
        for c in children.get(x, ()):
            if c not in below:
                below.add(c)
                stack.append(c)
    beside = {s for a in [*chain, node_id] for s in children.get(nodes[a].parent, ()) if s not in chain}
    beside.discard(node_id)

    def rel(nid: str, relation: Relation) -> Relative:
        n = nodes[nid]
        p = nodes.get(n.parent) if n.parent is not None else None
        return Relative(n.title, relation, n.detail, dict(n.facts), depth_of(nid), p.title if p else None)

    out = [rel(a, "ancestor") for a in chain]
    out += [rel(s, "sibling") for s in in_order(beside)]
    rest = set(nodes) - set(chain) - beside - below - {node_id}
    out += [rel(e, "elsewhere") for e in in_order(rest)]
    return out
