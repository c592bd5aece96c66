"""Run every chaos scenario (tests/chaos.py) over many seeds and print a pass-count table.

    python bench/chaos_report.py                 # 10 seeds (0..9), every scenario
    python bench/chaos_report.py --seeds 20 --scenario kill_executor --keep DIR

Real processes, real libp2p, the scripted model. Each run ends with the chaos invariants
(convergence, one digest at every live peer and the observer, nothing accepted lost).
A failure prints its first line; ``--keep DIR`` keeps the peers' logs and event files.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.chaos import SCENARIOS  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=10, help="seeds 0..N-1 (default 10)")
    ap.add_argument("--first-seed", type=int, default=0)
    ap.add_argument(
        "--scenario", action="append", choices=sorted(SCENARIOS), help="only this scenario (repeatable)"
    )
    ap.add_argument("--keep", type=Path, help="keep every run's directory under here")
    args = ap.parse_args()
    names = args.scenario or list(SCENARIOS)
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    rows = []
    for name in names:
        passed, times, failures = 0, [], []
        for seed in seeds:
            base = args.keep or Path(tempfile.mkdtemp(prefix="chaos-"))
            workdir = base / f"{name}-{seed}"
            started = time.monotonic()
            try:
                info = SCENARIOS[name](workdir, seed)
            except Exception as exc:  # noqa: BLE001 - a report, not a test
                ok, info = False, {"error": f"{type(exc).__name__}: {str(exc).splitlines()[0][:300]}"}
                failures.append((seed, info["error"]))
                if args.keep is None:
                    traceback.print_exc(limit=3)
            else:
                ok = True
                passed += 1
            took = time.monotonic() - started
            times.append(took)
            print(
                f"{name:16s} seed {seed:3d}: {'pass' if ok else 'FAIL'} in {took:5.1f} s  {info}", flush=True
            )
            if args.keep is None:
                shutil.rmtree(base, ignore_errors=True)
        rows.append((name, passed, len(seeds), sum(times) / len(times), max(times), failures))
    print()
    print("| scenario | passed | mean s | max s |")
    print("|---|---|---|---|")
    for name, passed, total, mean, worst, _ in rows:
        print(f"| {name} | {passed}/{total} | {mean:.1f} | {worst:.1f} |")
    for name, *_, failures in rows:
        for seed, err in failures:
            print(f"FAIL {name} seed {seed}: {err}")
    return 0 if all(r[1] == r[2] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
