"""``specswarm model info | prepare | try``: look after the embedded model.

Errors are raised as :class:`~specswarm.errors.SpecSwarmError` subclasses and
turned into red text and exit codes by :mod:`specswarm.cli`, like everywhere else.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Annotated

import typer

model_app = typer.Typer(help="The embedded local model: status, assembly, a quick try.", no_args_is_help=True)


def _progress_printer(label: str) -> Callable[[int, int], None]:
    last = [-1]

    def progress(done: int, total: int) -> None:
        pct = done * 100 // max(1, total)
        if pct != last[0]:
            last[0] = pct
            end = "\n" if done >= total else ""
            sys.stderr.write(f"\r{label}: {pct:3d}% ({done / 2**20:,.0f} / {total / 2**20:,.0f} MiB)" + end)
            sys.stderr.flush()

    return progress


@model_app.command()
def info() -> None:
    """Where the default model is, its size, whether it is assembled and verified."""
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
    """Assemble and verify the default model now (otherwise the first peer does it)."""
    from specswarm.model import assets

    started = time.perf_counter()
    path = assets.ensure_default_model(progress=_progress_printer("assembling"))
    typer.echo(f"ready: {path} ({time.perf_counter() - started:.1f} s)")


@model_app.command("try")
def try_(
    prompt: Annotated[str, typer.Argument(help="What to ask the model.")],
    system: Annotated[str, typer.Option(help="System prompt.")] = "You are a concise assistant.",
    max_tokens: Annotated[int, typer.Option("--max-tokens", min=1)] = 200,
    threads: Annotated[int, typer.Option(min=1)] = 2,
) -> None:
    """Generate one answer from the default model (greedy) and print timing."""
    from specswarm.model import GenerationRequest, load_model
    from specswarm.spec import ModelSettings

    model = load_model(ModelSettings(backend="gpt4all", threads=threads))
    gen = model.generate(GenerationRequest(prompt=prompt, system=system, max_tokens=max_tokens))
    typer.echo(gen.text)
    rate = gen.tokens / gen.seconds if gen.seconds else 0.0
    typer.echo(f"[{gen.model}: {gen.tokens} tokens in {gen.seconds:.1f} s, {rate:.1f} tok/s]", err=True)
