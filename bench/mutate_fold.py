"""Mutation check of the fold's acceptance rules: do the tests catch a broken rule?

    python bench/mutate_fold.py [--tests tests/test_fold_properties.py ...] [--only NAME]

Each mutant is one small edit of ``specswarm/plan/rules.py`` (the ranked-ballot rule, the
first-past-the-quorum rule, the fallback to the best rejected split, which claim wins a leaf)
or of ``specswarm/plan/results.py`` (the board's rule for leaf results and rival rounds). For each, the repo's
``specswarm/`` and ``tests/`` are copied into a temporary directory, the edit is applied there
(never in the checkout) and the given tests run against the copy. A mutant is *killed* when a
test fails, *survived* when all pass. The checkout's own rules must pass first (else the
figures mean nothing). Prints one line per mutant and the kill count; exit 1 if any survived.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
RULES = Path("specswarm/plan/rules.py")
RESULTS = Path("specswarm/plan/results.py")
DEFAULT_TESTS = (
    "tests/test_fold.py",
    "tests/test_fold_properties.py",
    "tests/test_result_board.py",
    "tests/test_result_rivals.py",
)
"""The fast example tests of the split rules first: pytest stops at the first failure (``-x``),
so a mutant they kill costs seconds, not a hypothesis search. The board's rule for results is
caught by the property tests, and its rarer cases (texts two executors copied, rival rounds)
by tests/test_result_board.py's and tests/test_result_rivals.py's examples."""


@dataclass(frozen=True)
class Mutant:
    name: str
    what: str
    old: str
    new: str
    path: Path = RULES
    """The module the edit applies to."""


MUTANTS = (
    Mutant(
        "borda-flat",
        "a ballot gives every split it ranks one point (the ranking's order ignored)",
        "points[pid] = points.get(pid, 0) + len(ranked) - i",
        "points[pid] = points.get(pid, 0) + 1",
    ),
    Mutant(
        "first-past-quorum",
        "the best rule falls back to the first split past the quorum (ballots ignored)",
        "accepted = min(points, key=lambda pid: (-points[pid], -means[pid], ties[pid])) if points else None",
        "accepted = min(candidates)[1] if candidates else None",
    ),
    Mutant(
        "ballots-in-arrival-order",
        "the decisive ballots are the first q to arrive, not the first q by (lamport, author, id)",
        "for ballot in sorted(ballots, key=lambda b: b.order):",
        "for ballot in ballots:",
    ),
    Mutant(
        "every-ballot-counts",
        "every scorer's ballot counts, not only the first q decisive ones",
        "deciding = sorted(decisive.values(), key=lambda ob: ob[0])[:q]",
        "deciding = sorted(decisive.values(), key=lambda ob: ob[0])",
    ),
    Mutant(
        "worse-mean-wins-ties",
        "on equal Borda points the lower mean score wins",
        "-points[pid], -means[pid], ties[pid]",
        "-points[pid], means[pid], ties[pid]",
    ),
    Mutant(
        "latest-first-past-quorum",
        "the first rule takes the latest split to reach the quorum",
        "accepted = min(candidates)[1] if candidates else None\n    else:",
        "accepted = max(candidates)[1] if candidates else None\n    else:",
    ),
    Mutant(
        "fallback-worst-rejected",
        "the fallback takes the worst rejected split, not the best",
        "return min(usable)[3][2] if usable else AS_LEAF",
        "return max(usable)[3][2] if usable else AS_LEAF",
    ),
    Mutant(
        "fallback-mean-only",
        "the fallback ranks rejected splits by mean score alone (approving votes ignored)",
        "(-app, -mean, contents[order], order)",
        "(0, -mean, contents[order], order)",
    ),
    Mutant(
        "fallback-early",
        "the fallback does not wait for every chain of revisions to be used up",
        "if not rejected or not all(len(c) >= chain or _stuck(c) for c in rejected.values()):",
        "if not rejected:",
    ),
    Mutant(
        "fallback-ignores-stuck",
        "a chain whose latest revision repeats its author word for word stays open",
        "if not rejected or not all(len(c) >= chain or _stuck(c) for c in rejected.values()):",
        "if not rejected or not all(len(c) >= chain for c in rejected.values()):",
    ),
    Mutant(
        "fallback-takes-repeats",
        "the fallback may take a split a quorum found repeating other parts of the tree",
        "        if order not in repeating\n",
        "",
    ),
    Mutant(
        "repeats-never-a-leaf",
        "a node whose every split repeats other parts takes the best of them, not a leaf",
        "return min(usable)[3][2] if usable else AS_LEAF",
        "return min(usable or [(0, 0, '', o) for c in rejected.values() for _, o, _ in c])[3][2]",
    ),
    Mutant(
        "stuck-on-any-repeat",
        "a chain counts as stuck as soon as any two of its proposals share a title",
        "return any(key == latest[2] for _, order, key in chain_of if order != latest[1])",
        "return any(set(key) & set(latest[2]) for _, order, key in chain_of if order != latest[1])",
    ),
    Mutant(
        "result-latest-quorum",
        "of several accepted results of a leaf, the latest to reach the quorum counts",
        "else min(candidates)[1] if candidates else None",
        "else max(candidates)[1] if candidates else None",
        RESULTS,
    ),
    Mutant(
        "result-quorum-short",
        "a result is accepted one approving vote short of the quorum",
        "if len(approvals) >= q:\n            passed.append((body, approvals[q - 1], mean, res.id))",
        "if len(approvals) >= max(1, q - 1):\n"
        "            passed.append((body, approvals[max(1, q - 1) - 1], mean, res.id))",
        RESULTS,
    ),
    Mutant(
        "result-any-claim",
        "a result counts under a claim of another executor",
        "if held is None or held.author != res.author or res.run != run",
        "if held is None or res.run != run",
        RESULTS,
    ),
    Mutant(
        "result-fallback-early",
        "the best rejected result counts before the leaf's revisions are used up",
        "if not ranked or (used < chain and not stuck):",
        "if not ranked:",
        RESULTS,
    ),
    Mutant(
        "result-fallback-pending",
        "the best rejected result counts while another result is still pending",
        "            return None  # pending: the quorum can still be reached",
        "            continue",
        RESULTS,
    ),
    Mutant(
        "result-fallback-worst",
        "the fallback takes the worst rejected result, not the best",
        "return min(ranked)[3][2]",
        "return max(ranked)[3][2]",
        RESULTS,
    ),
    Mutant(
        "result-chain-counts-copies",
        "two rejected results with the same text count twice in the chain of revisions",
        "used = len(set(said.values())) if not rounds",
        "used = len(said) if not rounds",
        RESULTS,
    ),
    Mutant(
        "result-stuck-on-any-copy",
        "the chain ends as soon as two rejected results share a text, revision or not",
        "stuck = any(rev in said and said[rev] == said[rid] for rid, rev in revising)",
        "stuck = len(set(said.values())) < len(said)",
        RESULTS,
    ),
    Mutant(
        "round-not-awaited",
        "a rival round's result counts before every writer of the round has written and been judged",
        "waiting = _open_rounds(claims, rivals, named, judged, q, n_scorers)",
        "waiting: set[str] = set()",
        RESULTS,
    ),
    Mutant(
        "round-first-past-quorum",
        "of a rival round's accepted results, the first to reach the quorum counts, not the best",
        "if body.revises in rivals or body.revises in named:",
        "if (body.revises in rivals or body.revises in named) and False:",
        RESULTS,
    ),
    Mutant(
        "round-rival-owes-nothing",
        "a round closes once the holder's revision is judged, a rival's claim unwritten",
        "if not holders or owed:",
        "if not holders:",
        RESULTS,
    ),
    Mutant(
        "round-named-unheard",
        "a round closes though a rival claim the holder's revision names is not held yet",
        "if not ids <= {c.id for c in rivals.get(target, ())}:",
        "if False:",
        RESULTS,
    ),
    Mutant(
        "round-worst",
        "of a rival round's accepted results, the one the board scored lowest counts",
        "counted = min(closed)[2] if closed",
        "counted = max(closed)[2] if closed",
        RESULTS,
    ),
    Mutant(
        "round-chain-counts-texts",
        "with rivals, the chain counts texts, not rounds: one round uses up two revisions",
        "used = len(set(said.values())) if not rounds else 1 + deepest",
        "used = len(set(said.values()))",
        RESULTS,
    ),
    Mutant(
        "rival-wins-claim",
        "a rival's claim may win the leaf",
        "if cid not in dead and b.rival is None]",
        "if cid not in dead]",
    ),
)


def run_tests(root: Path, tests: list[str]) -> tuple[bool, float, str]:
    started = time.monotonic()
    proc = subprocess.run(
        # whether a test fails is all that counts: failing examples are not shrunk
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-x",
            "-p",
            "no:cacheprovider",
            "--hypothesis-profile=no-shrink",
            *tests,
        ],
        cwd=root,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(root)},
    )
    tail = (proc.stdout.strip().splitlines() or [""])[-1]
    return proc.returncode == 0, time.monotonic() - started, tail


def copy_tree(dest: Path) -> None:
    for part in ("specswarm", "tests", "schemas", "templates", "goals", "docs", "bench"):
        if (REPO / part).exists():
            shutil.copytree(REPO / part, dest / part, ignore=shutil.ignore_patterns("__pycache__"))
    for f in ("pyproject.toml", "README.md", "CHANGELOG.md"):
        if (REPO / f).exists():
            shutil.copy2(REPO / f, dest / f)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tests", nargs="+", default=list(DEFAULT_TESTS))
    ap.add_argument("--only", nargs="*", default=None, help="mutant names (default: all)")
    args = ap.parse_args(argv)
    chosen = [m for m in MUTANTS if args.only is None or m.name in args.only]
    sources = {m.path: (REPO / m.path).read_text(encoding="utf-8") for m in chosen}
    for m in chosen:
        if sources[m.path].count(m.old) != 1:
            print(f"{m.name}: its edit no longer applies to {m.path} (update the mutant)", file=sys.stderr)
            return 2
    with tempfile.TemporaryDirectory(prefix="specswarm-mutate-") as tmp:
        root = Path(tmp)
        copy_tree(root)
        ok, secs, tail = run_tests(root, args.tests)
        print(f"unmutated: {'pass' if ok else 'FAIL'} in {secs:.0f} s ({tail})", flush=True)
        if not ok:
            return 2
        killed = 0
        for m in chosen:
            (root / m.path).write_text(sources[m.path].replace(m.old, m.new), encoding="utf-8")
            ok, secs, tail = run_tests(root, args.tests)
            (root / m.path).write_text(sources[m.path], encoding="utf-8")
            killed += not ok
            verdict = "survived" if ok else "killed"
            print(f"{m.name:26} {verdict:8} {secs:5.0f} s  {m.what} ({tail})", flush=True)
    print(f"killed {killed} of {len(chosen)} mutants ({', '.join(args.tests)})")
    return 0 if killed == len(chosen) else 1


if __name__ == "__main__":
    sys.exit(main())
