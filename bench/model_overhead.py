"""How much does specswarm's model harness cost over calling gpt4all directly?

Runs the same rendered prompts (decompose, score, execute of a Japan trip)
through (a) ``agenerate(model, request)`` -- trio worker thread, process lock,
ChatML assembly, stop/loop guard callback -- and (b) the very same loaded
gpt4all object called by hand with the same template and sampling settings.
The runs alternate to spread machine noise; both share one copy of the
weights. Prints tokens/s for each, the ratio (target >= 0.95) and peak RSS.

    python bench/model_overhead.py [--rounds 2] [--threads 2]
"""

from __future__ import annotations

import argparse
import resource
import time
from pathlib import Path
from typing import Any

import trio

from specswarm.model import GenerationRequest, agenerate, load_model, render_prompt
from specswarm.model.gpt4all_backend import CHATML_SYSTEM, CHATML_USER, N_BATCH, Gpt4AllModel
from specswarm.spec import ModelSettings

REPO = Path(__file__).resolve().parent.parent
GOAL = "Plan a two-week trip to Japan"
NODE = {"id": "root", "title": GOAL, "detail": "", "depth": 0}
KIDS = [
    {"title": "Tokyo neighbourhoods", "detail": "Shinjuku, Asakusa"},
    {"title": "Kyoto temples", "detail": "Fushimi Inari"},
    {"title": "Osaka food", "detail": "Dotonbori"},
]


def requests() -> list[GenerationRequest]:
    ctx: dict[str, Any] = {
        "goal": GOAL,
        "context": "Two adults, first visit, spring",
        "node": NODE,
        "ancestors": [],
        "siblings": [],
        "strategy": "geography",
        "critiques": [],
        "constraints": [],
        "limits": {"min_children": 3, "max_children": 5, "target": 4},
        "is_last_level": False,
        "fact_fields": [],
        "proposal": KIDS,
        "leaf": {"title": "Book a ryokan in Kyoto", "detail": "4 nights, near Gion"},
    }
    out = []
    for kind, cap in (("decompose", 400), ("score", 120), ("execute", 300)):
        text = (REPO / "templates" / "prompts" / f"{kind}.j2").read_text(encoding="utf-8")
        system, prompt = render_prompt(text, **ctx)
        out.append(GenerationRequest(prompt=prompt, system=system, max_tokens=cap))
    return out


def direct(gpt: Any, req: GenerationRequest) -> tuple[str, int, float]:
    """gpt4all by hand: same template, same sampling, a counting callback."""
    count = 0

    def cb(_tid: int, _piece: str) -> bool:
        nonlocal count
        count += 1
        return True

    started = time.perf_counter()
    with gpt.chat_session(system_prompt=CHATML_SYSTEM.format(req.system), prompt_template=CHATML_USER):
        text = gpt.generate(
            req.prompt,
            max_tokens=req.max_tokens,
            temp=req.temperature,
            top_k=req.top_k,
            repeat_penalty=req.repeat_penalty,
            n_batch=N_BATCH,
            callback=cb,
        )
    return text, count, time.perf_counter() - started


async def harness(model: Gpt4AllModel, req: GenerationRequest) -> tuple[str, int, float]:
    started = time.perf_counter()
    gen = await agenerate(model, req)
    return gen.text, gen.tokens, time.perf_counter() - started


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()

    t0 = time.perf_counter()
    model = load_model(ModelSettings(backend="gpt4all", threads=args.threads))
    assert isinstance(model, Gpt4AllModel)
    gpt = model._gpt()
    load_s = time.perf_counter() - t0
    reqs = requests()
    # warm-up (pages the weights in) -- not measured
    direct(gpt, GenerationRequest(prompt="Say hi.", max_tokens=4))

    totals = {"harness": [0, 0.0], "direct": [0, 0.0]}
    same_text = True
    for r in range(args.rounds):
        for req in reqs:
            order = ("harness", "direct") if r % 2 == 0 else ("direct", "harness")
            texts = {}
            for who in order:
                if who == "harness":
                    text, toks, secs = trio.run(harness, model, req)
                else:
                    text, toks, secs = direct(gpt, req)
                totals[who][0] += toks
                totals[who][1] += secs
                texts[who] = text.strip()
            same_text &= texts["harness"] == texts["direct"]

    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    h_rate = totals["harness"][0] / totals["harness"][1]
    d_rate = totals["direct"][0] / totals["direct"][1]
    print(
        f"model load: {load_s:.1f} s; {len(reqs)} prompts x {args.rounds} rounds, "
        f"{args.threads} threads; identical text: {same_text}"
    )
    print(f"{'path':<10}{'tokens':>8}{'seconds':>10}{'tok/s':>8}  (end-to-end: prompt + generation)")
    for who in ("direct", "harness"):
        toks, secs = totals[who]
        print(f"{who:<10}{toks:>8}{secs:>10.1f}{toks / secs:>8.2f}")
    print(f"ratio harness/direct: {h_rate / d_rate:.3f} (target >= 0.95)")
    print(f"peak RSS: {rss_mb:,.0f} MB")


if __name__ == "__main__":
    main()
