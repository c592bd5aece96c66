"""``specswarm peer``, ``peer-group`` and ``observe``: one peer of a swarm, several in one
process, and a watcher that publishes nothing. Registered on :data:`specswarm.cli.app.app`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from specswarm.cli.app import Format, Role, _check_output, app


@app.command()
def peer(
    role: Annotated[Role, typer.Option("--role", help="The role this peer takes.")],
    spec: Annotated[Path | None, typer.Option("--spec", help="Start a run from this spec.")] = None,
    join: Annotated[
        list[str] | None, typer.Option("--join", help="Multiaddr of a peer to join (repeatable).")
    ] = None,
    mdns: Annotated[bool, typer.Option("--mdns", help="Find peers on the LAN with mDNS.")] = False,
    listen: Annotated[str, typer.Option("--listen", help="Listen multiaddr.")] = "/ip4/127.0.0.1/tcp/0",
    key: Annotated[Path | None, typer.Option("--key", help="Identity key file (created if missing).")] = None,
    strategy: Annotated[
        str | None,
        typer.Option(
            "--strategy", "--lens", help="Decomposer strategy, or scorer lens (default: the spec's first)."
        ),
    ] = None,
    events: Annotated[Path | None, typer.Option("--events", help="Append every event seen here.")] = None,
    run_file: Annotated[Path | None, typer.Option("--run-file", hidden=True)] = None,
    admission: Annotated[str | None, typer.Option("--admission", hidden=True)] = None,
    preload: Annotated[
        list[Path] | None,
        typer.Option("--preload", help="Start from the events of this log (repeatable)."),
    ] = None,
    json_status: Annotated[bool, typer.Option("--json-status", hidden=True)] = False,
    cache: Annotated[
        Path | None,
        typer.Option(
            "--cache",
            help="Keep the model's answers in this directory and replay them (shared by local peers).",
        ),
    ] = None,
    model_url: Annotated[
        str | None,
        typer.Option(
            "--model-url",
            help="Ask this shared model service (specswarm model serve; token in $SPECSWARM_MODEL_TOKEN) "
            "instead of loading the model here.",
        ),
    ] = None,
) -> None:
    """Run one peer of a swarm (spread a swarm over several machines).

    \b
    Examples:
      specswarm peer --role executor --join /ip4/192.168.1.20/tcp/4101/p2p/12D3KooW...
      specswarm peer --role scorer --mdns          # a swarm on this LAN
    """
    from specswarm.swarm.overrides import check_overrides

    check_overrides()
    from specswarm.swarm.peer import peer_config, run_peer_cli

    _check_output(events, "--events", "the event log")
    if key is not None and not key.exists():  # an existing key is only read
        _check_output(key, "--key", "the peer's key")
    config = peer_config(
        role=role.value,
        spec=spec,
        join=join or [],
        mdns=mdns,
        listen=listen,
        key=key,
        strategy=strategy,
        events=events,
        run_file=run_file,
        admission=admission,
        preload=preload or [],
        json_status=json_status,
        cache=cache,
        model_url=model_url,
    )
    run_peer_cli(config)


@app.command("peer-group", hidden=True)
def peer_group(
    group: Annotated[Path, typer.Argument(help="JSON list of peers (what `plan` writes).")],
) -> None:
    """Run several peers in this process, each with its own host and key (`plan --peers-per-process`)."""
    from specswarm.swarm.group import run_group

    run_group(group)


@app.command()
def observe(
    join: Annotated[
        list[str] | None, typer.Option("--join", help="Multiaddr of a swarm peer (repeatable).")
    ] = None,
    mdns: Annotated[bool, typer.Option("--mdns", help="Find peers on the LAN with mDNS.")] = False,
    format: Annotated[
        Format, typer.Option("--format", "-f", help="What to write once the plan is complete.")
    ] = Format.markdown,
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Write the complete plan here (default stdout).")
    ] = None,
    events: Annotated[
        Path | None, typer.Option("--events", help="Append every event seen here (JSON lines).")
    ] = None,
) -> None:
    """Print live snapshots of a swarm's plan, publishing nothing; render it when it converges.

    \b
    Example (the address `specswarm plan` prints as "observe with:"):
      specswarm observe --join /ip4/127.0.0.1/tcp/4101/p2p/12D3KooW... --out plan.md
    """
    from specswarm.swarm.peer import peer_config, run_peer_cli

    _check_output(out, "--out", "the plan")
    _check_output(events, "--events", "the event log")
    config = peer_config(
        role="observer",
        spec=None,
        join=join or [],
        mdns=mdns,
        listen="/ip4/127.0.0.1/tcp/0",
        key=None,
        strategy=None,
        events=events,
        fmt=format.value,
        out=out,
    )
    run_peer_cli(config)
