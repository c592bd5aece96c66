"""What a peer group file carries (``plan --peers-per-process``): each peer's own options, and
the launcher's local settings (the answer cache, the shared model service) for every peer of a
group as for a peer of its own process. No processes: the file is written and read back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from specswarm.errors import UsageError
from specswarm.protocol.events import make_run_event
from specswarm.protocol.identity import Identity
from specswarm.spec import spec_from_json
from specswarm.swarm.group import read_group
from specswarm.swarm.launcher.groups import group_command, groups_of, peer_entry
from specswarm.swarm.launcher.procs import PeerProc, build_peers, peer_command
from tests.swarmkit import swarm_spec


def _group_file(tmp_path: Path, *, cache: Path | None, model_url: str | None) -> tuple[Path, list[PeerProc]]:
    spec = spec_from_json(swarm_spec())
    run_event = make_run_event(Identity(b"\x07" * 32), spec, nonce="group")
    run_file = tmp_path / "run.json"
    run_file.write_bytes(run_event.to_bytes())
    peers = build_peers(spec, {}, tmp_path, cache)
    for p in peers:
        if p.role != "observer":
            p.model_url = model_url
    [group] = groups_of(peers, len(peers))  # every seat, the observer too
    entries = [peer_entry(p, [], run_file, None, None) for p in group]
    cmd = group_command(group, entries)
    return Path(cmd[-1]), group


def test_a_group_carries_each_peers_cache_and_model_service_as_its_own_process_would(tmp_path: Path) -> None:
    cache = tmp_path / "answers"
    path, group = _group_file(tmp_path, cache=cache, model_url="http://127.0.0.1:5999")
    configs = read_group(path)
    assert [c.role for c in configs] == [p.role for p in group]
    for config, p in zip(configs, group, strict=True):
        alone = peer_command(p, [], tmp_path / "run.json", None, None)
        assert config.identity.peer_id == p.identity.peer_id
        assert config.cache == p.cache and ("--cache" in alone) == (p.cache is not None)
        assert config.model_url == p.model_url and ("--model-url" in alone) == (p.model_url is not None)
    assert any(c.cache == cache and c.model_url for c in configs)
    [observer] = [c for c in configs if c.role == "observer"]
    assert observer.cache is None and observer.model_url is None


def test_a_group_without_local_settings_has_none(tmp_path: Path) -> None:
    path, _ = _group_file(tmp_path, cache=None, model_url=None)
    assert all(c.cache is None and c.model_url is None for c in read_group(path))


def test_a_group_file_with_a_bad_model_url_is_a_usage_error(tmp_path: Path) -> None:
    path, _ = _group_file(tmp_path, cache=None, model_url=None)
    entries = json.loads(path.read_text())
    entries[0]["model_url"] = 5999
    path.write_text(json.dumps(entries))
    with pytest.raises(UsageError, match="peer 0: model_url must be a string"):
        read_group(path)


def test_a_peer_that_asks_the_model_service_keeps_its_answer_cache(tmp_path: Path) -> None:
    """--cache and --model-url together: the service's client behind the cache (no request is
    made until a generation: nothing listens on the port)."""
    import trio

    from specswarm.model.cache import CachingModel
    from specswarm.model.service import SharedModel
    from specswarm.swarm.peer import role_factory

    spec = spec_from_json(swarm_spec())

    async def models() -> tuple[object, object]:
        shared = role_factory("executor", None, tmp_path, "http://127.0.0.1:9")(spec)
        alone = role_factory("executor", None, None, "http://127.0.0.1:9")(spec)
        assert shared is not None and alone is not None
        return await shared.model(), await alone.model()

    cached, plain = trio.run(models)
    assert isinstance(cached, CachingModel) and isinstance(cached.inner, SharedModel)
    assert isinstance(plain, SharedModel)
