"""Re-score every proposal of an event log with the current critics; print old vs new verdicts.

    python bench/rescore.py LOG [LOG ...] [--tree at-vote|final] [--quiet]

Each log is read and verified with ``read_event_log`` and folded with the package's own fold.
For every counted proposal, the *old* verdict is what its scorers voted (approvals, rejections,
scores, and the fold's status: accepted, rejected, outvoted, pending). The *new* verdict is
what a scorer running today's critics would vote: ``check_split`` against the tree (see
``--tree``), blended by ``combine`` with the model rating recorded in the votes (the scorers
of one proposal all compute the same rating) at the spec's ``model_weight`` and
``approve_threshold``.

``--tree at-vote`` (default) judges a proposal against the tree a scorer could have seen at
its first vote: the fold of every event with a lower Lamport number (a superset of what that
scorer had seen, since its clock was past all of it). ``--tree final`` uses the final tree
(the proposal's own subtree is never a relative). The summary counts accepted proposals the
critics now reject, and the hard checks that reject them. Then the content of the final plan's
leaf results (``bench/content_metrics.py``: the shortest result, results under 200 characters,
concrete lines per leaf, lines repeated across leaves, letters in the goal's script, schedule,
summaries), one line each; without ``--quiet`` each with the items behind it (the repeated
lines quoted).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from content_metrics import CONTENT_METRICS, evaluate_content  # noqa: E402
from quality_metrics import from_plan  # noqa: E402

from specswarm import critics  # noqa: E402
from specswarm.model.splits import repaired, split_constraints  # noqa: E402
from specswarm.plan.fold import fold  # noqa: E402
from specswarm.plan.views import NodeView, Plan, ProposalView  # noqa: E402
from specswarm.protocol.bodies import CheckResult  # noqa: E402
from specswarm.protocol.events import Event, read_event_log  # noqa: E402
from specswarm.spec import DEFAULT_LENSES  # noqa: E402


@dataclass(frozen=True)
class Rescored:
    """One proposal, as its scorers voted and as the current critics judge it."""

    proposal: ProposalView
    node: NodeView
    old_status: str
    """The fold's status: accepted | rejected | outvoted | pending."""
    old_approvals: int
    old_rejections: int
    old_scores: tuple[int, ...]
    model_score: int | None
    """The model rating recorded in the votes (blended in the new score), if any."""
    new_score: int
    new_approve: bool
    checks: tuple[CheckResult, ...]
    lenses: tuple[tuple[str, int, bool], ...] = ()
    """(lens, score, approve) through each of the spec's scorer lenses (model rating as recorded)."""
    repaired: tuple[str, ...] | None = None
    """The children's titles after the decomposer's own repairs, when they changed anything."""
    repaired_approve: bool | None = None
    """Whether the current critics approve the repaired split (None: nothing to repair)."""

    @property
    def failed(self) -> list[CheckResult]:
        return [c for c in self.checks if not c.passed]

    @property
    def hard_failures(self) -> list[str]:
        return [c.name for c in self.failed if c.name in critics.HARD_CHECKS]

    def check(self, name: str) -> CheckResult:
        return next(c for c in self.checks if c.name == name)


def _tree_at(events: Sequence[Event], lamport: int, final: Plan, node_id: str) -> Plan:
    """The plan of the events below ``lamport``, if it holds the node; else the final plan."""
    seen = fold([e for e in events if e.lamport < lamport])
    return seen if node_id in seen.nodes else final


def rescore(events: Sequence[Event], tree: str = "at-vote") -> list[Rescored]:
    """Every counted proposal of ``events``, in (lamport, author, id) order, re-scored."""
    final = fold(events)
    spec = final.spec
    if spec is None:
        raise ValueError("the log holds no run event")
    proposals = [(p, n) for n in final.nodes.values() for p in n.proposals]
    proposals.sort(key=lambda pn: (pn[0].lamport, pn[0].author, pn[0].id))
    out: list[Rescored] = []
    for p, n in proposals:
        first_vote = min((v.lamport for v in p.votes), default=None)
        plan = final if tree == "final" or first_vote is None else _tree_at(events, first_vote, final, n.id)
        node = plan.nodes[n.id]
        checks = critics.check_split(
            spec, node, p.children, node.depth, relatives=critics.relatives_in_tree(plan.nodes, node.id)
        )
        model_score = next((v.model_score for v in p.votes if v.model_score is not None), None)
        weight = spec.model.model_weight if model_score is not None else 0.0
        score, approve = critics.combine(checks, model_score, weight, spec.tree.approve_threshold)
        relatives = critics.relatives_in_tree(plan.nodes, node.id)
        fixed, changed = repaired(spec, node, list(p.children), relatives, split_constraints(spec, node))
        fixed_ok: bool | None = None
        if changed:
            fixed_checks = critics.check_split(spec, node, fixed, node.depth, relatives=relatives)
            fixed_ok = critics.combine(fixed_checks, model_score, weight, spec.tree.approve_threshold)[1]
        through = tuple(
            (
                name,
                *critics.combine(
                    checks, model_score, weight, spec.tree.approve_threshold, lens=critics.LENSES[name]
                ),
            )
            for name in DEFAULT_LENSES
        )
        out.append(
            Rescored(
                proposal=p,
                node=node,
                old_status=p.status,
                old_approvals=p.approvals,
                old_rejections=p.rejections,
                old_scores=tuple(v.score for v in p.votes),
                model_score=model_score,
                new_score=score,
                new_approve=approve,
                checks=tuple(checks),
                lenses=through,
                repaired=tuple(c.title for c in fixed) if changed else None,
                repaired_approve=fixed_ok,
            )
        )
    return out


def _print_one(r: Rescored) -> None:
    p = r.proposal
    print(
        f"\n=== proposal {p.id[:16]} on {r.node.title!r} (depth {r.node.depth}, {p.strategy}; {r.old_status})"
    )
    for i, c in enumerate(p.children):
        facts = f" {dict(c.facts)}" if c.facts else ""
        print(f"    #{i + 1} {c.title}{facts}")
    scores = ", ".join(str(s) for s in r.old_scores) or "-"
    print(f"  old: {r.old_approvals} approve / {r.old_rejections} reject (scores {scores})")
    rating = f", model {r.model_score}" if r.model_score is not None else ""
    print(f"  new: {'APPROVE' if r.new_approve else 'REJECT'} (score {r.new_score}{rating})")
    for c in r.failed:
        print(f"    {c.name} ({c.score}): {c.note}")
    if r.repaired is not None:
        verdict = "approve" if r.repaired_approve else "reject"
        print(f"  after the decomposer's repairs ({verdict}): " + " / ".join(r.repaired))
    if r.lenses:
        print("  lenses: " + ", ".join(f"{n} {sc} {'approve' if ok else 'reject'}" for n, sc, ok in r.lenses))


def summary(results: Sequence[Rescored]) -> list[str]:
    """The lines of the summary: old vs new verdicts, and why accepted splits are now rejected."""
    accepted = [r for r in results if r.old_status == "accepted"]
    flipped = [r for r in accepted if not r.new_approve]
    reasons = Counter(name for r in flipped for name in r.hard_failures)
    lines = [
        f"proposals re-scored: {len(results)}; accepted by the old scorers: {len(accepted)}",
        f"accepted proposals the current critics reject: {len(flipped)} of {len(accepted)}",
    ]
    if reasons:
        lines.append(
            "failed hard checks among them: " + ", ".join(f"{k} x{v}" for k, v in sorted(reasons.items()))
        )
    others = [r for r in results if r.old_status != "accepted"]
    approved_now = [r for r in others if r.new_approve]
    lines.append(
        f"not accepted by the old scorers: {len(others)}; the current critics approve {len(approved_now)}"
    )

    def differ(verdicts: Sequence[tuple[int, bool]]) -> bool:
        scores = [sc for sc, _ in verdicts]
        return len({ok for _, ok in verdicts}) > 1 or max(scores) - min(scores) >= 5

    judged = [r for r in results if len(r.old_scores) >= 2]
    old_differ = sum(1 for r in judged if differ([(v.score, v.approve) for v in r.proposal.votes]))
    new_differ = sum(1 for r in results if r.lenses and differ([(sc, ok) for _, sc, ok in r.lenses]))
    lines.append(
        f"scorers differ (a verdict, or scores 5+ apart): old votes on {old_differ} of {len(judged)}; "
        f"the {len(DEFAULT_LENSES)} lenses on {new_differ} of {len(results)} (model rating as recorded)"
    )
    rejected = [r for r in results if not r.new_approve]
    fixed = [r for r in rejected if r.repaired_approve]
    lines.append(
        f"rejected by the current critics: {len(rejected)}; the decomposer's own repairs "
        f"(merge overlapping children, drop repeats) change {sum(r.repaired is not None for r in rejected)} "
        f"and make {len(fixed)} pass"
    )
    table = Counter((r.old_status, "approve" if r.new_approve else "reject") for r in results)
    lines.append(
        "old status -> new verdict: " + ", ".join(f"{a} -> {b}: {k}" for (a, b), k in sorted(table.items()))
    )
    return lines


def content(plan: Plan, details: bool = False) -> list[str]:
    """The content metrics of the final plan (``bench/content_metrics.py``), one line each
    (``label: figure``), with the items behind each when ``details``."""
    spec = plan.spec
    constraints = tuple(spec.constraints) if spec else ()
    scores = evaluate_content(from_plan(plan), constraints, spec.goal if spec else None)
    lines = []
    for key, score in scores.items():
        lines.append(f"{CONTENT_METRICS[key]}: {score.show()}")
        if details:
            lines.extend(f"    {item}" for item in score.items)
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "logs", nargs="+", type=Path, help="event logs (JSON lines, as `specswarm plan --events` writes)"
    )
    ap.add_argument("--tree", choices=("at-vote", "final"), default="at-vote")
    ap.add_argument("--quiet", "-q", action="store_true", help="the summary only")
    args = ap.parse_args(argv)
    for path in args.logs:
        log = read_event_log(path)
        results = rescore(log.events, args.tree)
        plan = fold(log.events)
        goal = plan.spec.goal if plan.spec else "?"
        bad = f", {len(log.rejected)} bad line(s)" if log.rejected else ""
        size = f"{len(log.events)} events{bad}, {len(plan.nodes)} nodes"
        print(f"{path}: goal {goal!r}, {size} (tree: {args.tree})")
        if not args.quiet:
            for r in results:
                _print_one(r)
            print()
        for line in summary(results):
            print(f"  {line}")
        if plan.root is not None:
            print("  content of the final plan's results:")
            for line in content(plan, details=not args.quiet):
                print(f"    {line}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
