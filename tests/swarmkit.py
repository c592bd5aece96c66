"""Helpers for swarm tests: a normalized spec for the scripted model, sized as asked."""

from __future__ import annotations

import copy
import random
from collections.abc import Awaitable, Callable
from functools import cache
from pathlib import Path
from typing import Any

import trio

from specswarm.model.replay import ScriptedModel
from specswarm.protocol.events import make_run_event
from specswarm.protocol.identity import Identity
from specswarm.spec import load_spec
from specswarm.testing.local import LocalSwarm, start_peer, wait_converged
from specswarm.transport.memory import open_memory_network

Hook = Callable[[LocalSwarm, trio.Nursery, Callable[[], Identity]], Awaitable[Any]]

ROOT = Path(__file__).resolve().parent.parent


@cache
def _base() -> dict[str, Any]:
    return load_spec(ROOT / "goals" / "tiny.yaml").to_json()


def swarm_spec(
    decomposers: int = 3,
    scorers: int = 3,
    executors: int = 2,
    observers: int = 1,
    max_depth: int = 2,
    quorum: Any = "majority",
    **budget: float,
) -> dict[str, Any]:
    spec = copy.deepcopy(_base())
    spec["name"] = "swarm-test"
    spec["roles"] = {
        "decomposer": {"count": decomposers, "strategies": ["by place", "by day", "by theme"]},
        "scorer": {"count": scorers},
        "executor": {"count": executors},
        "observer": {"count": observers},
    }
    spec["quorum"] = quorum
    spec["tree"].update(max_depth=max_depth, min_children=2, max_children=3)
    spec["model"].update(backend="scripted")
    spec["budget"].update({"settle_seconds": 0.3, "claim_timeout": 30.0, "seconds": 60.0, **budget})
    return spec


async def hooked_swarm(
    spec: dict[str, Any],
    seed: int,
    hook: Hook,
    model: Any = ScriptedModel,
    converge: bool = True,
    timeout: float = 60.0,
    delay: float = 0.005,
) -> tuple[str | None, LocalSwarm, Any]:
    """Start the spec's declared swarm in memory, run ``hook(swarm, nursery, new_identity)``
    while it works, then (``converge``) wait until every live peer holds one complete plan."""
    rng = random.Random(seed)

    def ident() -> Identity:
        return Identity(bytes(rng.getrandbits(8) for _ in range(32)))

    launcher, admission = ident(), ident()
    run_event = make_run_event(launcher, spec, admission=admission.public_key.hex(), nonce=str(seed))
    async with open_memory_network(seed=seed, delay=delay) as net, trio.open_nursery() as nursery:
        swarm = LocalSwarm(net, run_event, admission)
        strategies = spec["roles"]["decomposer"]["strategies"]
        for role in ("observer", "scorer", "executor", "decomposer"):
            for i in range(spec["roles"][role]["count"]):
                node = await start_peer(
                    swarm,
                    nursery,
                    role,
                    spec,
                    model,
                    identity=ident(),
                    strategy=strategies[i % len(strategies)] if role == "decomposer" else None,
                )
                node.announce_interval = 0.2
        result = await hook(swarm, nursery, ident)
        digest = await wait_converged(swarm, timeout) if converge else None
        nursery.cancel_scope.cancel()
    return digest, swarm, result


def park_spec(seconds: float, settle: float, claim_timeout: float) -> str:
    """A four-process scripted spec (one peer of each role, one level deep): the smallest real
    swarm a CLI test can run; so shallow that the executor's prompts do not depend on which
    sibling leaf it finished first."""
    return f"""\
name: park
goal: Plan a relaxed Saturday afternoon in a city park
context: One person, a sunny day, about four hours.
roles:
  decomposer: {{count: 1, strategies: [by sequence]}}
  scorer: {{count: 1}}
  executor: {{count: 1}}
  observer: {{count: 1}}
tree: {{max_depth: 1, min_children: 2, max_children: 3}}
model: {{backend: scripted}}
budget: {{seconds: {seconds:g}, settle_seconds: {settle:g}, claim_timeout: {claim_timeout:g}}}
"""
