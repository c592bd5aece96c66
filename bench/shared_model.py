"""One model copy per machine: `specswarm plan` with the shared model service against one model per
peer, back to back on one machine.

For each mode it runs `specswarm plan SPEC --report` (``SPECSWARM_MODEL_SHARED=1`` or ``=0``)
and samples, every ``--every`` seconds, the launcher's process tree (the launcher, its peers and
its model service): the sum of ``Pss`` from ``/proc/PID/smaps_rollup`` (shared pages of the
mapped model file counted once over all processes, unlike RSS) and how many processes have the
model's ``.gguf`` mapped. It prints per mode: wall time, peak total PSS, peak number of
model-mapping processes, generated tokens and the model's own generation seconds (sum over
peers of counters.model_tokens / model_gen_seconds: with the service, the time the service
reports per answer, queueing left out), tokens per second, and with the service its own
counts: requests, generations, identical requests answered once, system turns found already
evaluated, and the seconds spent reading prompts against writing answers. Then the answers the
peers parsed: how many came under a JSON schema, and how many could not be used (the task asked
again, or gave up): the share of format failures with and without json_schema output.

    python bench/shared_model.py [--spec goals/tiny.yaml] [--modes per-peer,shared] [--repeat 1] \\
        [--peers-per-process N]
    python bench/shared_model.py --scripted      # the smoke test: scripted model, service forced on
    python bench/shared_model.py --spec goals/japan.yaml --modes per-peer,shared,llama-server

``shared-gpt4all`` and ``shared-llama.cpp`` run the service with that engine (``model.runtime``,
through ``SPECSWARM_MODEL_RUNTIME``); llama.cpp's workers also count the prompt tokens they read
and those they found evaluated already.

``llama-server`` runs the spec through llama.cpp's own server (the ``xllamacpp`` wheel of the
test extras) with ``model.backend: openai``: the optional faster runtime, measured back to back.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import REPO, machine, table  # noqa: E402

MODES = {"per-peer": "0", "shared": "1", "shared-gpt4all": "1", "shared-llama.cpp": "1", "llama-server": "0"}
"""Mode -> SPECSWARM_MODEL_SHARED. ``llama-server``: llama.cpp's own server (the ``xllamacpp``
wheel, `specswarm model serve --runtime llama.cpp`) on loopback serves the embedded GGUF file, and the spec is
run with ``model.backend: openai`` against it (its process counts in the PSS and mapping figures)."""


def _children() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        ppid = int(text.rsplit(")", 1)[1].split()[1])
        kids.setdefault(ppid, []).append(int(stat.parent.name))
    return kids


def tree(root: int) -> list[int]:
    """``root`` and every process below it."""
    kids, out, todo = _children(), [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(kids.get(pid, []))
    return out


def pss_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def maps_file(pid: int, name: str) -> bool:
    try:
        return name in Path(f"/proc/{pid}/maps").read_text(errors="replace")
    except OSError:
        return False


@dataclass
class Run:
    mode: str
    code: int = -1
    wall: float = 0.0
    peak_pss_kib: int = 0
    peak_mappers: int = 0
    tokens: int = 0
    gen_seconds: float = 0.0
    generations: int = 0
    service: dict[str, float] = field(default_factory=dict)
    answers: int = 0
    """Decompose/refine/score/execute answers the peers parsed (structured + free text)."""
    structured: int = 0
    """Of those, answers given under a JSON schema."""
    bad: int = 0
    """Answers that could not be used and were asked again (or gave up): format failures."""
    stderr_tail: str = ""


def run_once(
    spec: Path, mode: str, timeout: float, every: float, scripted: bool, gguf: str, per_process: int = 1
) -> Run:
    tmp = Path(tempfile.mkdtemp(prefix="specswarm-bench-shared-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("SPECSWARM_MODEL")}
    env["SPECSWARM_MODEL_SHARED"] = MODES[mode]
    if mode.startswith("shared-"):  # the service's engine (model.runtime); plain "shared": the spec's
        env["SPECSWARM_MODEL_RUNTIME"] = mode.removeprefix("shared-")
    if scripted:
        env["SPECSWARM_MODEL_BACKEND"] = "scripted"
    env["TMPDIR"] = str(tmp)
    report = tmp / "report.json"
    cmd = [sys.executable, "-m", "specswarm", "plan", str(spec), "--report", str(report)]
    cmd += ["--out", str(tmp / "plan.md"), "--timeout", str(timeout), "--quiet"]
    if per_process > 1:
        cmd += ["--peers-per-process", str(per_process)]
    r = Run(mode)
    server = None
    if mode == "llama-server":
        server, url, served = start_llama_server(gguf_path(gguf), tmp / "llama-server.log")
        cmd[4] = str(openai_spec(spec, url, served, tmp / spec.name))
    started = time.monotonic()
    with open(tmp / "stderr.txt", "wb") as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, env=env)
    while proc.poll() is None:
        pids = tree(proc.pid) + (tree(server.pid) if server else [])
        r.peak_pss_kib = max(r.peak_pss_kib, sum(pss_kib(p) for p in pids))
        r.peak_mappers = max(r.peak_mappers, sum(maps_file(p, gguf) for p in pids))
        time.sleep(every)
    r.wall = time.monotonic() - started
    r.code = proc.returncode
    if server is not None:
        server.terminate()
        server.wait(30)
    r.stderr_tail = (tmp / "stderr.txt").read_text(errors="replace")[-1500:]
    if report.exists():
        rep = json.loads(report.read_text())
        for p in rep["peers"]:
            c = p.get("counters", {})
            r.tokens += int(c.get("model_tokens", 0))
            r.gen_seconds += float(c.get("model_gen_seconds", 0.0))
            r.generations += int(c.get("model_generations", 0))
            tasks = c.get("tasks", {})
            structured = sum(tasks.get("structured", {}).values())
            r.structured += structured
            r.answers += structured + sum(tasks.get("free", {}).values())
            r.bad += sum(tasks.get("bad_outputs", {}).values())
    for log in tmp.glob("specswarm-run-*/model-service-*.log"):
        for line in log.read_text(errors="replace").splitlines():
            if line.startswith('{"event": "stopped"'):
                stopped = json.loads(line)
                for k in (
                    "requests",
                    "generated",
                    "shared",
                    "prefix_hits",
                    "prompt_seconds",
                    "gen_seconds",
                    "prompt_tokens",
                    "reused_tokens",
                ):
                    r.service[k] = r.service.get(k, 0) + stopped.get(k, 0)
    return r


def gguf_path(name: str) -> Path:
    from specswarm.model.assets import ensure_default_model

    path = ensure_default_model()
    assert path.name == name, (path, name)
    return path


def start_llama_server(gguf: Path, log: Path) -> tuple[subprocess.Popen[bytes], str, str]:
    """llama.cpp's server on a free loopback port, once /health answers: (process, API root, model id)."""
    from specswarm.swarm.launcher.procs import free_port

    port = free_port()
    threads = max(1, os.cpu_count() or 1)
    cmd = [sys.executable, "-m", "specswarm", "model", "serve", "--runtime", "llama.cpp"]
    cmd += ["--file", str(gguf), "--port", str(port), "--threads", str(threads)]
    with open(log, "ab") as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
    root = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 300
    while True:
        if proc.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"llama.cpp server did not come up: {log.read_text(errors='replace')[-2000:]}")
        try:
            with urllib.request.urlopen(root + "/health", timeout=2) as resp:
                if resp.status == 200:
                    break
        except OSError:
            pass
        time.sleep(0.5)
    with urllib.request.urlopen(root + "/v1/models", timeout=10) as resp:
        served = json.loads(resp.read())["data"][0]["id"]
    return proc, root + "/v1", str(served)


def openai_spec(spec: Path, url: str, served: str, out: Path) -> Path:
    """``spec`` with its model replaced by the openai backend at ``url`` (everything else kept)."""
    data = yaml.safe_load(spec.read_text(encoding="utf-8"))
    model = dict(data.get("model") or {})
    model.pop("file", None)
    model.update({"backend": "openai", "base_url": url, "name": served})
    data["model"] = model
    out.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return out


def _tokens(service: dict[str, float]) -> str:
    """Prompt tokens the service read / found evaluated already ("-": gpt4all does not count)."""
    if not service.get("prompt_tokens"):
        return "-"
    return f"{int(service['prompt_tokens'])}/{int(service.get('reused_tokens', 0))}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--spec", type=Path, default=REPO / "goals" / "tiny.yaml")
    ap.add_argument("--modes", default="per-peer,shared", help="comma-separated, run in this order")
    ap.add_argument("--repeat", type=int, default=1, help="rounds of every mode, alternating")
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--every", type=float, default=0.5, help="seconds between memory samples")
    ap.add_argument("--scripted", action="store_true", help="the scripted model (the smoke test)")
    ap.add_argument("--json", type=Path, default=None, help="also write the figures here")
    ap.add_argument(
        "--peers-per-process",
        type=int,
        default=1,
        help="passed to specswarm plan (each process's Python heap is ~75 MiB)",
    )
    args = ap.parse_args(argv)
    from specswarm.model.assets import MODEL_FILE

    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    unknown = [m for m in modes if m not in MODES]
    if unknown:
        ap.error(f"unknown mode(s) {unknown}; known: {', '.join(MODES)}")
    print(machine())
    model = "scripted" if args.scripted else MODEL_FILE
    print(
        f"spec: {args.spec}; modes {modes} x{args.repeat}; model {model}; "
        f"peers per process {args.peers_per_process}"
    )
    runs = [
        run_once(args.spec, mode, args.timeout, args.every, args.scripted, MODEL_FILE, args.peers_per_process)
        for _ in range(args.repeat)
        for mode in modes
    ]
    rows = []
    for r in runs:
        s = r.service
        share = r.bad / r.answers if r.answers else 0.0
        split = f"{s['prompt_seconds']:.1f}/{s['gen_seconds'] - s['prompt_seconds']:.1f}" if s else "-"
        rows.append(
            {
                "mode": r.mode,
                "exit": r.code,
                "wall s": f"{r.wall:.1f}",
                "peak PSS GiB": f"{r.peak_pss_kib / 2**20:.2f}",
                "model procs": r.peak_mappers,
                "generations": r.generations,
                "tokens": r.tokens,
                "gen s": f"{r.gen_seconds:.1f}",
                "tok/s": f"{r.tokens / r.gen_seconds:.1f}" if r.gen_seconds else "-",
                "svc req/gen/shared/prefix": "/".join(
                    str(int(s[k])) for k in ("requests", "generated", "shared", "prefix_hits")
                )
                if s
                else "-",
                "svc prompt/answer s": split,
                "prompt tokens read/reused": _tokens(s),
                "json answers": f"{r.structured}/{r.answers}",
                "unusable (asked again)": f"{r.bad}/{r.answers}" + (f" {share:.0%}" if r.answers else ""),
            }
        )
    print(table(rows))
    for r in runs:
        if r.code != 0:
            print(f"\n{r.mode} exited {r.code}:\n{r.stderr_tail}")
    if args.json:
        args.json.write_text(json.dumps([vars(r) for r in runs], indent=1) + "\n")
    return 0 if all(r.code == 0 for r in runs) else 1


if __name__ == "__main__":
    raise SystemExit(main())
