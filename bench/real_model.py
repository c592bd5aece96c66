"""End to end with the real embedded model: where the wall time of `specswarm plan` goes.

Runs `specswarm plan SPEC --report` (default goals/japan.yaml; `--spec goals/tiny.yaml` for a
few minutes' run) with the spec's own model (the embedded Qwen2.5-Coder-1.5B by default),
and prints: wall time, start-up, model generation time (sum over peers of
counters.model_gen_seconds; peers take turns on the machine-wide generation lock, so
generations do not overlap and the sum is also the model's share of the critical path),
model task time (counters.model_seconds: includes waiting for the lock and loading the
model), tokens, model calls per accepted node, peak RSS per peer and in total.

Coordination = everything that is not model generation. Target: < 10 % of wall.

    python bench/real_model.py [--spec goals/tiny.yaml] [--timeout 3600] [--scripted]

``--scripted`` swaps in the zero-latency scripted model (for the smoke test only).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import REPO, machine, run_plan, table  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--spec", type=Path, default=REPO / "goals" / "japan.yaml")
    ap.add_argument("--timeout", type=float, default=None, help="default: the spec's budget")
    ap.add_argument("--scripted", action="store_true", help="scripted model (smoke test)")
    ap.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = ap.parse_args(argv)
    from specswarm.plan.fold import fold
    from specswarm.protocol.events import read_event_log
    from specswarm.spec import load_spec

    spec = load_spec(args.spec).to_json()
    timeout = args.timeout or float(spec["budget"]["seconds"])
    print(machine())
    print(
        f"spec: {args.spec} ({spec['name']}: {spec['goal']!r}); model backend "
        f"{'scripted (smoke)' if args.scripted else spec['model']['backend']}; "
        f"peers: " + ", ".join(f"{r} x{v['count']}" for r, v in spec["roles"].items())
    )
    r = run_plan(spec, spec_path=args.spec, timeout=timeout, scripted=args.scripted)
    if r.code != 0:
        print(f"specswarm plan exited {r.code}:\n{r.stderr}", file=sys.stderr)
    plan = fold(read_event_log(r.workdir / "events.jsonl").events) if r.workdir else None
    nodes = len(plan.nodes) if plan else 0
    accepted = sum(1 for n in plan.nodes.values() if n.accepted or n.result) if plan else 0
    gen = r.counter_sum("model_gen_seconds")
    task = r.counter_sum("model_seconds")
    calls = r.counter_sum("model_calls")
    gens = r.counter_sum("model_generations")
    tokens = r.counter_sum("model_tokens")
    converge = r.converge or float("nan")
    startup = r.startup or float("nan")
    coord = r.wall - gen
    coord_run = converge - gen
    rows = [
        {"metric": "exit code", "value": r.code},
        {"metric": "plan nodes (accepted splits + done leaves)", "value": f"{nodes} ({accepted})"},
        {"metric": "events", "value": r.events},
        {"metric": "wall s (launch -> launcher exit)", "value": r.wall},
        {"metric": "start-up s (launch -> every peer joined)", "value": startup},
        {"metric": "converge s (every peer joined -> all hold the final set)", "value": converge},
        {"metric": "model generation s (sum of counters.model_gen_seconds)", "value": gen},
        {"metric": "model task s (sum of model_seconds: incl. lock wait + load)", "value": task},
        {"metric": "critical path estimate s (= generation sum: the machine lock serializes)", "value": gen},
        {"metric": "tokens generated", "value": int(tokens)},
        {"metric": "tokens/s of generation", "value": tokens / gen if gen else None},
        {"metric": "model calls (tasks) / generations", "value": f"{calls:.0f} / {gens:.0f}"},
        {"metric": "model calls per accepted node", "value": calls / accepted if accepted else None},
        {"metric": "coordination s = wall - generation", "value": coord},
        {"metric": "coordination % of wall", "value": 100 * coord / r.wall if r.wall else None},
        {
            "metric": "coordination % of converge (start-up excluded)",
            "value": 100 * coord_run / converge if converge == converge and converge else None,
        },
        {"metric": "peak RSS total MiB", "value": sum(r.rss_kib.values()) / 1024},
    ]
    print(table(rows))
    print(table([{"peer": k, "peak RSS MiB": v / 1024} for k, v in sorted(r.rss_kib.items())]))
    per_peer = [
        {
            "peer": p["name"],
            "calls": p["counters"].get("model_calls"),
            "gens": p["counters"].get("model_generations"),
            "tokens": p["counters"].get("model_tokens"),
            "gen s": p["counters"].get("model_gen_seconds"),
            "task s": p["counters"].get("model_seconds"),
            "published": p["counters"].get("published"),
            "events": p.get("events"),
        }
        for p in r.peers
    ]
    print(table(per_peer))
    met = r.code == 0 and r.wall > 0 and coord / r.wall < 0.10
    print(
        f"target coordination < 10% of wall: {'met' if met else 'MISSED'} "
        f"({100 * coord / r.wall:.1f}% of wall; {100 * coord_run / converge:.1f}% after start-up)"
    )
    if args.json:
        args.json.write_text(
            json.dumps(
                {"rows": rows, "rss_kib": r.rss_kib, "peers": per_peer, "timeline": r.timeline},
                indent=1,
                default=str,
            )
        )
    return 0 if r.code == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
