"""The ledger across the tree: what the counted results already plan, and where a leaf stands,
as pure views of the folded plan (no coordinator keeps it: every peer reads it off its plan).

Leaves are judged and written in tree order (depth first, children in order: :meth:`Plan.walk`),
so that what a leaf is compared with is the same in every run whatever the timing:

* :func:`result_in_turn` -- the leaf whose results the scorers judge now: the first node in tree
  order that is not settled, when it is a leaf (a node not split yet holds back the leaves after
  it: its own leaves come before them);
* :func:`ready_to_write` -- whether executors may write first results: once the tree's shape
  is final (every node a leaf or split), every leaf at once, each naming the leaves of the other
  branches (:func:`elsewhere`); the board compares a result with the counted ones before it
  when its turn comes;
* :func:`elsewhere` -- the leaves of other branches nearest a leaf, as its first result's prompt
  names them;
* :func:`ledger` -- the counted results of the leaves before a leaf (its siblings' included or
  not), each as its item lines;
* :func:`result_task` -- what the board judges a leaf's result against
  (:class:`~specswarm.critics.results.ResultTask`);
"""

from __future__ import annotations

from collections.abc import Iterable

from specswarm.critics.names import unclaimed
from specswarm.critics.results import ResultTask, Written
from specswarm.critics.shingles import Weights, cosine, item_lines, shingles
from specswarm.plan.schedule import span_of
from specswarm.plan.views import ROOT, NodeView, Plan


def kin_of(plan: Plan, n: NodeView) -> set[str]:
    """The ids of ``n``'s parent's children (``n`` among them); empty for the root."""
    parent = plan.nodes.get(n.parent) if n.parent is not None else None
    return set(parent.children) if parent is not None else set()


def settled(n: NodeView) -> bool:
    """A split node whose split is accepted, a leaf with a counted result."""
    return n.result is not None if n.leaf else n.accepted is not None


def result_in_turn(plan: Plan) -> NodeView | None:
    """The leaf whose results are judged now (see the module docstring), or None."""
    for n in plan.walk():
        if not settled(n):
            return n if n.leaf else None
    return None


def ready_to_write(plan: Plan, leaf: NodeView) -> bool:
    """Whether ``leaf``'s first result may be written: the tree's shape is final (every node a
    leaf or split), so what its prompt names of the rest of the tree (:func:`elsewhere`) is the
    same whenever and wherever it is written."""
    return leaf.id in plan.nodes and all(n.leaf or n.accepted is not None for n in plan.walk())


def numbers(plan: Plan) -> dict[str, str]:
    """node id -> its outline number ("", "1", "2.1"), as the Markdown export numbers it."""
    out = {ROOT: ""}
    for n in plan.walk():
        for i, child in enumerate(n.children, 1):
            out[child] = f"{out[n.id]}.{i}" if out[n.id] else str(i)
    return out


def ledger(plan: Plan, leaf: NodeView, *, siblings: bool = True) -> list[Written]:
    """The counted results of the leaves before ``leaf`` in tree order (without its own sibling
    leaves' when ``siblings`` is False), each as its item lines."""
    kin = kin_of(plan, leaf) if not siblings else set()
    nums = numbers(plan)
    out = []
    for n in plan.walk():
        if n.id == leaf.id:
            break
        if n.leaf and n.result is not None and n.id not in kin:
            out.append(Written(n.title, tuple(item_lines(n.result.output)), nums.get(n.id, "")))
    return out


def _said(n: NodeView) -> str:
    return " ".join([n.title, n.detail, *(f"{k} {v}" for k, v in n.facts.items())])


def path_of(plan: Plan, n: NodeView) -> list[NodeView]:
    """The nodes from the root down to ``n``'s parent."""
    out = []
    cur = n
    while cur.parent is not None and cur.parent in plan.nodes:
        cur = plan.nodes[cur.parent]
        out.append(cur)
    return list(reversed(out))


def own_text(plan: Plan, n: NodeView) -> str:
    """What ``n`` is about: its and its ancestors' (below the root) titles, details and facts."""
    return " ".join(_said(a) for a in [*path_of(plan, n)[1:], n])


def result_task(plan: Plan, leaf: NodeView) -> ResultTask:
    """What the board judges a result of ``leaf`` against: its facts, what its task says, its
    own text and the other nodes' (its siblings, the stages beside its branch, every node
    before it in tree order, its ancestors aside), the ledger of the results before it, every
    node off its path (their names are theirs to plan) and the titles of the split nodes."""
    path = path_of(plan, leaf)
    above = {a.id for a in path}
    nums = numbers(plan)
    others: dict[str, str] = {}

    def add(nodes: Iterable[NodeView]) -> None:
        # another node's text: its own and its ancestors' that are not the leaf's (a sibling is
        # its own words alone: the parent's words are the leaf's too)
        for o in nodes:
            if o.id != leaf.id and o.id not in above and o.id != ROOT:
                mine = [a for a in path_of(plan, o) if a.id not in above]
                others[f'"{o.title}" ({nums.get(o.id, "?")})'] = " ".join(_said(a) for a in [*mine, o])

    for a in [*path, leaf]:
        add(plan.nodes[c] for c in sorted(kin_of(plan, a)) if c in plan.nodes)
    walked = plan.walk()
    add(walked[: next((i for i, n in enumerate(walked) if n.id == leaf.id), len(walked))])
    spec = plan.spec
    task = " ".join([spec.goal, spec.context] if spec else [])
    # what its ancestors say, less the names other leaves are titled after (theirs to plan)
    titles = [o.title for o in walked if o.leaf and o.id != leaf.id and o.id not in above]
    mine = _said(leaf)
    task += " " + unclaimed(" ".join(_said(a) for a in path), titles, mine) + " " + mine
    placed = span_of(plan, leaf.id)
    span = (placed.field, placed.start, placed.end) if placed is not None else None
    rest = {
        f'"{o.title}" ({nums.get(o.id, "?")})': f"{o.title}. {o.detail}"
        for o in walked
        if o.id not in above and o.id != leaf.id
    }
    frame = " ".join(n.title for n in walked if not n.leaf and n.id != ROOT)
    return ResultTask(
        leaf.facts, task, own_text(plan, leaf), others, tuple(ledger(plan, leaf)), span, rest, frame
    )


PLANNED_LEAVES = 6
"""Leaves of other branches an executor's prompt names, at most (the ones most like its leaf)."""


def elsewhere(plan: Plan, leaf: NodeView) -> list[Written]:
    """The leaves of other branches (its siblings aside) as a first result's prompt names them:
    the :data:`PLANNED_LEAVES` most like ``leaf`` (weighted shingle cosine of their and their
    ancestors' titles with its own text), each titled by its parent and itself, with no lines;
    in tree order. What lies nearest is what a small model would otherwise write here too."""
    kin = kin_of(plan, leaf)
    nums = numbers(plan)
    others = [n for n in plan.walk() if n.leaf and n.id != leaf.id and n.id not in kin]
    if not others:
        return []

    def titled(n: NodeView) -> str:
        parent = plan.nodes.get(n.parent or "")
        return f"{parent.title} > {n.title}" if parent is not None and parent.id != ROOT else n.title

    own = shingles(own_text(plan, leaf))
    theirs = [shingles(own_text(plan, n)) for n in others]
    w = Weights([own, *theirs])
    ranked = sorted(range(len(others)), key=lambda i: (-cosine(theirs[i], own, w), i))
    kept = sorted(ranked[:PLANNED_LEAVES])
    return [Written(titled(others[i]), (), nums.get(others[i].id, "")) for i in kept]
