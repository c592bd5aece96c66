"""How fast the embedded model answers with 1 thread and with 2, alternating, in one process.

    python bench/model_threads.py [--rounds 2]

Prints the seconds per generation of one fixed decompose prompt (greedy, 120-token cap). Run it
on a machine as busy as a swarm makes it (the peers' networking keeps running while one of them
generates): llama.cpp's threads wait for each other at a spinning barrier, so a second thread
the OS does not schedule in time slows the first one down. The first round includes loading.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from specswarm.model.assets import ensure_default_model  # noqa: E402
from specswarm.model.base import GenerationRequest  # noqa: E402
from specswarm.model.gpt4all_backend import Gpt4AllModel  # noqa: E402

REQUEST = GenerationRequest(
    prompt=(
        "Overall goal: Plan a two-week trip to Japan\n"
        "Context: Two adults, first time in Japan, early April, mid-range budget, food, temples, "
        "design and hiking.\nGoal to split: Plan a two-week trip to Japan\n"
        "Split it by geography into 4 parts. Each title has at most 8 words.\n"
        "End every line with (days: N); the numbers must add up to 14."
    ),
    system=(
        "You are a planner. Answer with the list only: one part per line, each line written as\n"
        "- Short title: one sentence of concrete detail"
    ),
    max_tokens=120,
    temperature=0.0,
    top_k=1,
    seed=42,
    repeat_penalty=1.1,
)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    print(f"machine: {os.cpu_count()} cores, load avg {os.getloadavg()[0]:.1f} at start")
    path = ensure_default_model()
    models = {n: Gpt4AllModel(path, threads=n) for n in (2, 1)}
    for rnd in range(args.rounds):
        for n, model in models.items():
            started = time.perf_counter()
            gen = model.generate(REQUEST)
            print(
                f"round {rnd} threads {n}: {time.perf_counter() - started:.1f} s, {gen.tokens} tokens",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
