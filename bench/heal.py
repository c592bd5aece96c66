"""Fail fast and heal: seconds from a fault to what follows, through `specswarm plan`.

    python bench/heal.py                      # every healing scenario, seeds 0 and 1
    python bench/heal.py --seeds 5 --scenario no_restart_scorers

Real processes, real libp2p, the scripted model (tests/chaos.py runs the same scenarios and
checks them). The scenarios and what is timed from the fault (the SIGKILL; the second one when
two peers are killed):

* ``no_restart_scorers`` (quorum 2 of 3 scorers, two killed, ``--no-restart``): until `plan`
  exits 1, naming the scorers and the quorum;
* ``no_restart_executor`` (the only executor killed while it holds a claim, ``--no-restart``):
  until `plan` exits 1;
* ``restart_scorers`` (same two scorers killed, restarts on): until both are running again
  (``back``), until the first vote or ballot they publish after it (``acted``) and until `plan`
  exits 0 with the plan complete (``converged``);
* ``restart_executor``: until it runs again, until it has finished the leaf it held, until
  `plan` exits 0;
* ``failing_template`` (a prompt template that fails on real data): from `plan`'s start
  until it exits 2 (there is no kill).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._common import machine  # noqa: E402
from tests.chaos import SCENARIOS  # noqa: E402

HEALING = [
    "no_restart_scorers",
    "no_restart_executor",
    "restart_scorers",
    "restart_executor",
    "failing_template",
]
TIMES = (
    "fault_to_exit_s",
    "back_s",
    "first_new_vote_s",
    "held_leaf_done_s",
    "converged_s",
    "start_to_exit_s",
)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=2, help="seeds 0..N-1 (default 2)")
    ap.add_argument("--scenario", action="append", choices=[s for s in HEALING if s in SCENARIOS])
    ap.add_argument("--keep", type=Path, help="keep every run's directory under here")
    args = ap.parse_args()
    print(machine(), flush=True)
    names = args.scenario or [s for s in HEALING if s in SCENARIOS]
    rows: dict[str, dict[str, list[float]]] = {}
    failed = 0
    for name in names:
        for seed in range(args.seeds):
            base = args.keep or Path(tempfile.mkdtemp(prefix="heal-"))
            started = time.monotonic()
            try:
                info = SCENARIOS[name](base / f"{name}-{seed}", seed)
            except Exception as exc:  # noqa: BLE001 - a report, not a test
                failed += 1
                first = (str(exc).splitlines() or ["(no message)"])[0][:300]
                print(f"{name:20s} seed {seed}: FAIL {type(exc).__name__}: {first}", flush=True)
                traceback.print_exc(limit=-2)
                continue
            finally:
                if args.keep is None:
                    shutil.rmtree(base, ignore_errors=True)
            print(f"{name:20s} seed {seed}: pass in {time.monotonic() - started:5.1f} s  {info}", flush=True)
            for key in TIMES:
                if isinstance(info.get(key), int | float):
                    rows.setdefault(name, {}).setdefault(key, []).append(float(info[key]))
    print()
    print("| scenario | measure | runs | median s | max s |")
    print("|---|---|---|---|---|")
    for name, measures in rows.items():
        for key, values in measures.items():
            print(f"| {name} | {key} | {len(values)} | {statistics.median(values):.1f} | {max(values):.1f} |")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
