"""The model service's engines side by side: aggregate tokens per second at 1, 2 and 4
requests at once, and what a shared prompt beginning saves.

For each engine (``--engines gpt4all,llama.cpp``) it starts ``specswarm model serve --engine E``
(the embedded model, as many one-thread workers as the machine has cores, as ``plan`` does),
then sends rounds of N requests at once (``--concurrency 1,2,4``): each a different task after
the same long beginning (README text, ~300 tokens), greedy, ``--tokens`` tokens at most. It
prints per engine and N: the round's wall time, tokens written, aggregate tokens per second,
and (llama.cpp) prompt tokens read and found evaluated already. A first round per engine,
not counted, loads the weights into memory. Compare ratios within one run: the machine is
shared.

    python bench/engines.py [--engines gpt4all,llama.cpp] [--concurrency 1,2,4] [--tokens 64]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import REPO, machine, table  # noqa: E402

BEGINNING = (REPO / "README.md").read_text(encoding="utf-8")[:1500]
"""What every request begins with (after the system turn)."""
SYSTEM = "You are a practical assistant. Answer with lines starting with '- '."
TASKS = [
    "list three things to do in Kyoto",
    "list three museums in Tokyo",
    "name two gardens worth a morning",
    "plan a rainy afternoon",
    "suggest a budget for food per day",
    "name a day hike near Tokyo",
    "list two markets for breakfast",
    "plan an evening in Osaka",
]


def _start(engine: str, log: Path) -> tuple[subprocess.Popen[bytes], int]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.pop("SPECSWARM_MODEL_TOKEN", None)
    cmd = [sys.executable, "-m", "specswarm", "model", "serve", "--engine", engine]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=open(log, "wb"), env=env, cwd=REPO)
    assert proc.stdout is not None
    line = proc.stdout.readline().decode()
    if not line:
        raise SystemExit(f"{engine}: the service did not start (log: {log})")
    url = json.loads(line)["url"]
    return proc, int(url.rsplit(":", 1)[1].split("/")[0])


def _ask(port: int, task: str, tokens: int) -> dict:
    body = {
        "messages": [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": f"{BEGINNING}\nTask: {task}"},
        ],
        "max_tokens": tokens,
        "temperature": 0,
        "top_k": 1,
    }
    req = urllib.request.Request(
        f"http://127.0.0.1:{port}/v1/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=1800) as resp:
        return json.loads(resp.read())


def _health(port: int) -> dict:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=10) as resp:
        return json.loads(resp.read())


def _round(port: int, n: int, tokens: int, offset: int) -> tuple[float, int]:
    out: list[dict] = []

    def one(task: str) -> None:
        out.append(_ask(port, task, tokens))

    threads = [threading.Thread(target=one, args=(TASKS[(offset + i) % len(TASKS)],)) for i in range(n)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - started
    written = sum(int(o.get("usage", {}).get("completion_tokens") or 0) for o in out)
    return wall, written


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--engines", default="gpt4all,llama.cpp")
    ap.add_argument("--concurrency", default="1,2,4")
    ap.add_argument("--tokens", type=int, default=64)
    args = ap.parse_args(argv)
    print(machine())
    rows = []
    for engine in [e.strip() for e in args.engines.split(",") if e.strip()]:
        log = Path(tempfile.gettempdir()) / f"specswarm-bench-engine-{engine}.log"
        proc, port = _start(engine, log)
        try:
            _round(port, 1, 8, len(TASKS) - 1)  # warm-up, not counted
            for i, n in enumerate(int(c) for c in args.concurrency.split(",")):
                before = _health(port)
                wall, written = _round(port, n, args.tokens, i * 2)
                after = _health(port)
                read = after.get("prompt_tokens", 0) - before.get("prompt_tokens", 0)
                reused = after.get("reused_tokens", 0) - before.get("reused_tokens", 0)
                rows.append(
                    {
                        "engine": engine,
                        "at once": n,
                        "wall s": f"{wall:.1f}",
                        "tokens written": written,
                        "tokens/s": f"{written / wall:.1f}",
                        "prompt read/reused": f"{read}/{reused}" if read or reused else "-",
                        "prompt s (sum)": f"{after['prompt_seconds'] - before['prompt_seconds']:.1f}",
                    }
                )
                print(json.dumps(rows[-1]), flush=True)
        finally:
            proc.terminate()
            proc.wait(30)
    print(table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
