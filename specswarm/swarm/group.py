"""Several peers in one process: ``specswarm peer-group GROUP.json`` (what ``specswarm plan
--peers-per-process N`` spawns).

Each peer keeps everything a peer process has: its own identity, its own libp2p host on its
own port, its own event log and status lines (which name the peer, so the launcher tells them
apart on the one stdout). They share the process, its trio loop, its model (one load per
process) and the verification of gossip (:func:`specswarm.swarm.wire.decode_gossip`: each
message once per process). A SIGINT/SIGTERM, or the launcher gone, stops them all; a peer that fails stops the
process (the launcher restarts the whole group, or not, as it would one peer).

The group file is a JSON list with one object per peer: the options of ``specswarm peer``
(``role``, ``run_file``, ``key``, ``listen``, ``events``, ``admission``, ``join``, ``mdns``,
``strategy``, ``preload``, ``json_status``, ``cache``, ``model_url``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import trio

from specswarm.errors import UsageError
from specswarm.swarm.lifeline import run_stoppable
from specswarm.swarm.peer import PeerConfig, peer_config, run_configs, serve, setup_logging

_PATHS = ("run_file", "key", "events", "cache")
_STRINGS = ("role", "listen", "admission", "strategy", "model_url")


def read_group(path: Path) -> list[PeerConfig]:
    """The peers of a group file; UsageError naming the file and entry if one is malformed."""
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UsageError(f"{path}: not a readable peer group file ({exc})") from None
    if not isinstance(entries, list) or not entries:
        raise UsageError(f"{path}: a peer group file is a non-empty JSON list")
    return [_config(path, i, e) for i, e in enumerate(entries)]


def _config(path: Path, index: int, entry: Any) -> PeerConfig:
    where = f"{path}: peer {index}"
    if not isinstance(entry, dict) or not isinstance(entry.get("role"), str):
        raise UsageError(f"{where}: expected an object with a role")
    unknown = set(entry) - {*_PATHS, *_STRINGS, "join", "preload", "json_status", "mdns"}
    if unknown:
        raise UsageError(f"{where}: unknown option(s) {', '.join(sorted(unknown))}")
    for name in (*_PATHS, *_STRINGS):
        if entry.get(name) is not None and not isinstance(entry[name], str):
            raise UsageError(f"{where}: {name} must be a string")
    lists = {name: entry.get(name) or [] for name in ("join", "preload")}
    if not all(isinstance(v, list) and all(isinstance(x, str) for x in v) for v in lists.values()):
        raise UsageError(f"{where}: join and preload must be lists of strings")

    def path_of(name: str) -> Path | None:
        value = entry.get(name)
        return Path(value) if value else None

    return peer_config(
        role=entry["role"],
        spec=None,
        join=lists["join"],
        mdns=entry.get("mdns") is True,
        listen=entry.get("listen") or "/ip4/127.0.0.1/tcp/0",
        key=path_of("key"),
        strategy=entry.get("strategy"),
        events=path_of("events"),
        run_file=path_of("run_file"),
        admission=entry.get("admission"),
        preload=[Path(p) for p in lists["preload"]],
        json_status=bool(entry.get("json_status", False)),
        cache=path_of("cache"),
        model_url=entry.get("model_url"),
    )


def run_group(path: Path) -> None:
    """Run every peer of the group file at ``path`` in this process until a signal."""
    setup_logging()
    configs = read_group(path)
    run_configs(_group_main, configs)


async def _group_main(configs: list[PeerConfig]) -> None:
    async def serve_all() -> None:
        async with trio.open_nursery() as peers:
            for config in configs:
                peers.start_soon(serve, config)

    await run_stoppable(serve_all, by_hand=not all(c.json_status for c in configs))
