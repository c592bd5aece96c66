"""``specswarm model info | prepare | try``: look after the embedded model, try any backend.

Errors are raised as :class:`~specswarm.errors.SpecSwarmError` subclasses and
turned into red text and exit codes by :mod:`specswarm.cli`, like everywhere else.
"""

from __future__ import annotations

import dataclasses
import sys
import time
from collections.abc import Callable
from enum import Enum
from pathlib import Path
from typing import Annotated, Any

import typer

model_app = typer.Typer(
    help="The model: the embedded one's status and assembly, a quick try of any backend.",
    no_args_is_help=True,
)


def _progress_printer(label: str) -> Callable[[int, int], None]:
    """On a terminal, one line redrawn at every percent; in a log (CI), a line every quarter."""
    tty = sys.stderr.isatty()
    step = 1 if tty else 25
    last = [-1]

    def progress(done: int, total: int) -> None:
        pct = done * 100 // max(1, total)
        if pct // step != last[0]:
            last[0] = pct // step
            line = f"{label}: {pct:3d}% ({done / 2**20:,.0f} / {total / 2**20:,.0f} MiB)"
            sys.stderr.write(f"\r{line}" + ("\n" if done >= total else "") if tty else line + "\n")
            sys.stderr.flush()

    return progress


@model_app.command()
def info() -> None:
    """Where the default model is, its size, whether it is assembled and verified.

    \b
    Example:
      specswarm model info
    """
    from specswarm.model import assets

    st = assets.status()
    typer.echo(f"model:     {assets.MODEL_FILE} (Qwen2.5-Coder-1.5B-Instruct, Q4_K_M)")
    typer.echo(f"path:      {st.path}")
    typer.echo(f"assembled: {'yes' if st.exists else 'no'}")
    size = f"{st.size:,} bytes" if st.size is not None else "-"
    typer.echo(f"size:      {size} (expected {assets.MODEL_SIZE:,})")
    sha = "verified (stamp matches)" if st.verified else "not verified yet" if st.exists else "-"
    typer.echo(f"sha256:    {sha}; expected {assets.MODEL_SHA256}")
    typer.echo(f"chunks:    {'installed' if st.chunks_installed else st.chunks_error}")


@model_app.command()
def prepare() -> None:
    """Assemble and verify the default model now (otherwise the first peer does it).

    \b
    Example (in a container image, so that runs start at once):
      specswarm model prepare
    """
    from specswarm.model import assets

    started = time.perf_counter()
    path = assets.ensure_default_model(progress=_progress_printer("assembling"))
    typer.echo(f"ready: {path} ({time.perf_counter() - started:.1f} s)")


@model_app.command("try")
def try_(
    prompt: Annotated[str, typer.Argument(help="What to ask the model.")],
    system: Annotated[str, typer.Option(help="System prompt.")] = "You are a concise assistant.",
    max_tokens: Annotated[int, typer.Option("--max-tokens", min=1, help="Most tokens to generate.")] = 200,
    threads: Annotated[int | None, typer.Option(min=1, help="CPU threads (gpt4all, llama).")] = None,
    spec: Annotated[
        Path | None, typer.Option("--spec", help="Use this goal spec's model section (checked first).")
    ] = None,
    role: Annotated[
        str | None,
        typer.Option("--role", help="With --spec: the model of this role (its own section, if any)."),
    ] = None,
    backend: Annotated[
        str | None, typer.Option("--backend", help="gpt4all (default), llama, openai, replay, scripted.")
    ] = None,
    base_url: Annotated[
        str | None, typer.Option("--base-url", help="openai: the API root, e.g. http://localhost:11434/v1.")
    ] = None,
    name: Annotated[
        str | None,
        typer.Option("--name", help="openai: the model id the endpoint serves (gpt4all: a catalogue name)."),
    ] = None,
) -> None:
    """Generate one answer (greedy) from the embedded model, a spec's model or any backend; print timing.

    An openai endpoint is checked first (reachable, takes the key, serves the model): a problem is one
    line naming the field to fix, exit 2.

    \b
    Examples:
      specswarm model try "Name three temples in Kyoto"
      specswarm model try --spec goals/japan.yaml --role executor "Plan a day in Nara"
    """
    import dataclasses

    from specswarm.errors import EndpointError, SpecError
    from specswarm.model import GenerationRequest, load_model
    from specswarm.spec import GoalSpec, ModelSettings, load_spec

    goal: GoalSpec | None = load_spec(spec) if spec is not None else None
    if role is not None and goal is None:
        raise typer.BadParameter("--role needs --spec", param_hint="--role")
    settings = goal.model_for(role) if goal is not None and role else goal.model if goal else ModelSettings()
    given: dict[str, Any] = {"backend": backend, "base_url": base_url, "name": name, "threads": threads}
    settings = dataclasses.replace(settings, **{k: v for k, v in given.items() if v is not None})
    try:
        if settings.backend == "openai":
            from specswarm.model.openai_backend import preflight

            preflight(settings)
        model = load_model(settings)
        gen = model.generate(GenerationRequest(prompt=prompt, system=system, max_tokens=max_tokens))
    except EndpointError as exc:
        # a field the spec gave is named at its line there; one given as an option, as is
        if goal is not None and given.get(exc.field) is None:
            raise SpecError([goal.problem(goal.model_path(role, exc.field), exc.detail)]) from None
        raise
    typer.echo(gen.text)
    rate = gen.tokens / gen.seconds if gen.seconds else 0.0
    typer.echo(f"[{gen.model}: {gen.tokens} tokens in {gen.seconds:.1f} s, {rate:.1f} tok/s]", err=True)


def _interrupt(*_: object) -> None:
    raise KeyboardInterrupt


def _exit_with(parent: int) -> None:
    """SIGTERM this process once ``parent`` is no longer its parent (it was re-parented): a
    launcher killed outright leaves no model service behind."""
    import os
    import signal

    from specswarm.swarm.lifeline import watch_parent

    watch_parent(parent, lambda: os.kill(os.getpid(), signal.SIGTERM))


class Runtime(str, Enum):
    specswarm = "specswarm"
    llamacpp = "llama.cpp"


class Engine(str, Enum):
    auto = "auto"
    llamacpp = "llama.cpp"
    gpt4all = "gpt4all"


def _serve_llamacpp(
    file: Path | None, port: int, threads: int, ctx: int, parallel: int, exit_with_parent: bool
) -> None:
    """``serve --runtime llama.cpp``: llama.cpp's server on ``file`` (default: the embedded
    model) until Ctrl-C or SIGTERM; one JSON line with the URL once the model is loaded."""
    import json
    import os
    import signal

    from specswarm.model.assets import ensure_default_model
    from specswarm.model.llamacpp_server import (
        LlamaServerSettings,
        loopback_port,
        start_llama_server,
        wait_healthy,
    )
    from specswarm.model.service import TOKEN_ENV

    if port == 0:
        port = loopback_port()
    model = file if file is not None else ensure_default_model()
    threads = threads or max(1, (os.cpu_count() or 2))
    settings = LlamaServerSettings(model, port, ctx, threads, parallel, os.environ.get(TOKEN_ENV))
    signal.signal(signal.SIGTERM, _interrupt)
    if exit_with_parent:  # watched while the model loads too
        from specswarm.swarm.lifeline import expected_parent

        _exit_with(expected_parent() or os.getppid())
    server = start_llama_server(settings)
    try:
        wait_healthy(port)
        url = f"http://127.0.0.1:{port}/v1"
        typer.echo(json.dumps({"event": "ready", "url": url, "model": model.name, "pid": os.getpid()}))
        sys.stdout.flush()
        while True:
            signal.pause()
    except KeyboardInterrupt:
        pass
    finally:
        del server


@model_app.command()
def serve(
    port: Annotated[
        int, typer.Option("--port", min=0, max=65535, help="TCP port on 127.0.0.1 (0: any free one).")
    ] = 0,
    file: Annotated[
        Path | None, typer.Option("--file", help="A GGUF file (default: the embedded model).")
    ] = None,
    name: Annotated[
        str | None, typer.Option("--name", help="A gpt4all catalogue model (downloaded).")
    ] = None,
    threads: Annotated[
        int, typer.Option("--threads", min=0, help="CPU threads (0: cores - 1; llama.cpp: every core).")
    ] = 0,
    backend: Annotated[
        str, typer.Option("--backend", help="gpt4all (default), llama, scripted or replay.")
    ] = "gpt4all",
    cassette: Annotated[Path | None, typer.Option("--cassette", help="replay: the recorded answers.")] = None,
    workers: Annotated[
        int,
        typer.Option("--workers", min=0, help="Generations at once (0: this machine's cores // threads)."),
    ] = 0,
    exit_with_parent: Annotated[
        bool, typer.Option("--exit-with-parent", help="Stop when the process that started it is gone.")
    ] = False,
    runtime: Annotated[
        Runtime,
        typer.Option(
            "--runtime",
            help="specswarm: the model service (any --backend); llama.cpp: llama.cpp's own server "
            "(the xllamacpp wheel) on the GGUF file.",
        ),
    ] = Runtime.specswarm,
    ctx: Annotated[
        int, typer.Option("--ctx", min=512, help="llama.cpp: context tokens, shared by the slots.")
    ] = 4096,
    parallel: Annotated[
        int, typer.Option("--parallel", min=1, help="llama.cpp: requests served at once.")
    ] = 1,
    engine: Annotated[
        Engine,
        typer.Option(
            "--engine",
            help="gpt4all backend, the model service's workers: auto (llama.cpp when the xllamacpp "
            "wheel is installed, else gpt4all), llama.cpp or gpt4all.",
        ),
    ] = Engine.auto,
) -> None:
    """Serve a local model on 127.0.0.1 as an OpenAI-compatible endpoint.

    Requests need ``Authorization: Bearer $SPECSWARM_MODEL_TOKEN`` when that variable is set.
    ``specswarm plan`` starts one itself; start one by hand for peers you start with
    ``specswarm peer --model-url URL``, or as the endpoint of a spec's ``backend: openai``.
    Prints one JSON line with the URL once the model is loaded; stops on Ctrl-C or SIGTERM.

    \b
    Examples:
      specswarm model serve --runtime llama.cpp --port 8080   # then base_url: http://127.0.0.1:8080/v1
      specswarm model serve --port 8081                       # the model service, gpt4all
    """
    import json
    import os
    import signal

    if runtime is Runtime.llamacpp:
        _serve_llamacpp(file, port, threads, ctx, parallel, exit_with_parent)
        return

    from specswarm.model.base import Model
    from specswarm.model.gpt4all_backend import Gpt4AllModel
    from specswarm.model.load import load_model
    from specswarm.model.service import TOKEN_ENV, ModelService
    from specswarm.model.service import serve as bind
    from specswarm.spec import ModelSettings
    from specswarm.swarm.lifeline import expected_parent

    if backend not in ("gpt4all", "llama", "scripted", "replay"):
        raise typer.BadParameter("one of gpt4all, llama, scripted, replay", param_hint="--backend")
    signal.signal(signal.SIGTERM, _interrupt)  # from here on a SIGTERM ends it as Ctrl-C does
    if exit_with_parent:  # watched while the model loads too (that can take minutes)
        _exit_with(expected_parent() or os.getppid())
    settings = ModelSettings(
        backend=backend,  # type: ignore[arg-type]
        file=file,
        name=name,
        threads=threads,
        cassette=cassette if backend == "replay" else None,
    )
    model: Model
    more: list[Model] = []
    if backend == "gpt4all":
        from specswarm.model.llamacpp_worker import LlamaCppWorker
        from specswarm.model.runtime import LLAMACPP, service_runtime
        from specswarm.swarm.roles.slots import machine_slots

        first = Gpt4AllModel.from_settings(settings, keep_prefix=True)
        count = workers or machine_slots(first)
        copies: list[Gpt4AllModel] | list[LlamaCppWorker]
        if service_runtime(dataclasses.replace(settings, runtime=engine.value)) == LLAMACPP:
            copies = [LlamaCppWorker(first.path, threads=first.threads, copy=n) for n in range(count)]
        else:
            copies = [first] + [
                Gpt4AllModel(first.path, threads=first.threads, keep_prefix=True, copy=n)
                for n in range(1, count)
            ]
        for copy in copies:
            copy.load()  # loaded before it says it is ready
        model, more = copies[0], list(copies[1:])
    else:
        model = load_model(settings)
    service = ModelService(model, os.environ.get(TOKEN_ENV), more=more)
    server = bind(service, port)
    bound = server.server_address[1]
    url = f"http://127.0.0.1:{bound}/v1"
    typer.echo(json.dumps({"event": "ready", "url": url, "model": model.name, "pid": os.getpid()}))
    sys.stdout.flush()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        # what it did, for the log (bench/shared_model.py reads it)
        print(json.dumps({"event": "stopped", **service.health()}), file=sys.stderr, flush=True)
