"""Fuzz: hostile bytes at check_event, and whatever it accepts at the fold.

Over 10,000 generated messages (random bytes, random JSON, mutated valid events: changed
fields, wrong types, huge strings, deep nesting, missing keys, flipped bits...) must give
0 exceptions and 0 accepted forgeries: a mutated message may only be accepted if it is
the same signed event (same id, same content) as the valid one it came from.
"""

from __future__ import annotations

import copy
import json
import random
from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from specswarm.plan.fold import FoldState, child_id
from specswarm.protocol.events import MAX_EVENT_BYTES, Event, check_event, make_event
from specswarm.protocol.identity import Identity
from specswarm.testing.synth import Swarm, complete_swarm

pytestmark = pytest.mark.slow

FUZZ = settings(
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)


def _pool() -> tuple[Swarm, list[Event]]:
    sw = complete_swarm(seed=11, fanout=2)
    leaf = FoldState(sw.events).plan().leaves()[0].id
    ex = sw.peers["executor"][1]
    claim = sw.claim(ex, leaf, lamport=500)
    sw.claim(sw.peers["executor"][0], leaf, supersedes=claim.id, lamport=501)
    sw.result(ex, leaf, claim)
    return sw, list(sw.events)


SWARM, POOL = _pool()
POOL_BY_ID = {e.id: e for e in POOL}
BASE_DIGEST = FoldState(POOL).plan().digest
OTHER = Identity(b"\x5a" * 32)
B64_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

ENVELOPE_CHOICES: dict[str, list[Any]] = {
    "v": [1, 0, 2, "1", None, 1.0, True],
    "run": [SWARM.run, "0" * 32, "x", SWARM.run.upper(), None],
    "kind": ["run", "join", "proposal", "vote", "claim", "result", "x", None],
    "author": [OTHER.peer_id, POOL[1].author, "12D3KooW" + "z" * 44, "", "Qm" + "a" * 44],
    "sig": [POOL[1].sig, "A" * 86 + "==", "", POOL[1].sig[:-2]],
}


def rand_text(rnd: random.Random) -> str:
    pool = rnd.choice(["abc xyz", "\u00e9\u4e2d\U0001f600", "\ud800\udfff", '\x00\n"\\', B64_ALPHABET])
    return "".join(rnd.choice(pool) for _ in range(rnd.choice([0, 1, 5, 20, 200])))


def rand_json(rnd: random.Random, depth: int = 0) -> Any:
    pick = rnd.randrange(9 if depth < 4 else 6)
    if pick == 0:
        return None
    if pick == 1:
        return rnd.choice([True, False])
    if pick == 2:
        return rnd.choice([0, -1, 1, 100, 101, 10**9, 10**9 + 1, 2**63, -(2**70), rnd.randrange(-999, 999)])
    if pick == 3:
        return rnd.choice([0.0, -0.5, 1e308, 1.5, 80.0])
    if pick in (4, 5):
        return rand_text(rnd)
    if pick == 6:
        return [rand_json(rnd, depth + 1) for _ in range(rnd.randrange(4))]
    return {rand_text(rnd)[:8]: rand_json(rnd, depth + 1) for _ in range(rnd.randrange(4))}


def _paths(obj: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out += _paths(v, (*prefix, i))
    return out


def _get(obj: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        obj = obj[key]
    return obj


def _set(obj: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    _get(obj, path[:-1])[path[-1]] = value
    return obj


def _nest(value: Any, depth: int) -> Any:
    for _ in range(depth):
        value = [value] if depth % 2 else {"k": value}
    return value


MUTATIONS = [
    "set",
    "set",
    "delete",
    "add",
    "huge",
    "deep",
    "bitflip",
    "sig",
    "valid",
    "swap_body",
    "truncate",
    "reorder",
]


def mutated(rnd: random.Random) -> tuple[Any, Event, str]:
    """A valid pool event, mutated: (data, the original event, the mutation)."""
    original = rnd.choice(POOL)
    obj = copy.deepcopy(original.to_json())
    op = rnd.choice(MUTATIONS)
    path = rnd.choice(_paths(obj)[1:])
    if op == "set":
        obj = _set(obj, path, rand_json(rnd))
    elif op == "delete":
        del _get(obj, path[:-1])[path[-1]]
    elif op == "add":
        target = rnd.choice([p for p in _paths(obj) if isinstance(_get(obj, p), dict)])
        _get(obj, target)[rand_text(rnd)[:6]] = rand_json(rnd)
    elif op == "huge":
        obj = _set(obj, path, "x" * rnd.choice([4001, 20001, 100_000, MAX_EVENT_BYTES + 1]))
    elif op == "deep":
        obj = _set(obj, path, _nest(rand_json(rnd), rnd.choice([10, 100, 990, 5000])))
    elif op == "sig":
        i = rnd.randrange(len(obj["sig"]) - 2)
        obj["sig"] = obj["sig"][:i] + rnd.choice(B64_ALPHABET) + obj["sig"][i + 1 :]
    elif op == "valid":  # another valid value for one envelope field
        field = rnd.choice(["run", "author", "lamport", "kind", "sig"])
        obj[field] = rnd.randrange(10**9) if field == "lamport" else rnd.choice(POOL).to_json()[field]
    elif op == "swap_body":
        obj["body"] = copy.deepcopy(rnd.choice(POOL).wire)
    elif op in ("bitflip", "truncate"):
        raw = bytearray(json.dumps(obj).encode())
        if op == "bitflip":
            for _ in range(rnd.randint(1, 3)):
                raw[rnd.randrange(len(raw))] ^= 1 << rnd.randrange(8)
        else:
            raw = raw[: rnd.randrange(len(raw))]
        return bytes(raw), original, op
    elif op == "reorder":  # a no-op for the content: other key order and whitespace
        return json.dumps(dict(reversed(list(obj.items()))), indent=rnd.choice([None, 1])), original, op
    if rnd.random() < 0.5:
        return obj, original, op
    try:
        return json.dumps(obj), original, op
    except (ValueError, RecursionError):
        return obj, original, op


def message(rnd: random.Random) -> tuple[Any, Event | None, str]:
    kind = rnd.randrange(8)
    if kind == 0:
        return rnd.randbytes(rnd.choice([0, 1, 10, 300])), None, "bytes"
    if kind == 1:
        return json.dumps(rand_json(rnd)), None, "json"
    if kind == 2:
        env = {k: rnd.choice(v) for k, v in ENVELOPE_CHOICES.items()}
        env |= {"lamport": rand_json(rnd), "body": rand_json(rnd)}
        if rnd.random() < 0.2:
            env[rnd.choice(list(env))] = rand_json(rnd)
        return (json.dumps(env) if rnd.random() < 0.5 else env), None, "envelope"
    return mutated(rnd)


def test_fuzz_check_event_then_fold() -> None:
    stats: Counter[str] = Counter()
    state = FoldState(POOL)

    @settings(FUZZ, max_examples=110)
    @given(st.randoms(use_true_random=False))
    def run(rnd: random.Random) -> None:
        for _ in range(100):
            data, original, how = message(rnd)
            stats["messages"] += 1
            for run_filter in (None, SWARM.run):
                result = check_event(data, run_filter)  # must not raise
                assert isinstance(result, tuple) and len(result) == 2
                event, reason = result
                assert (event is None) == bool(reason), (how, reason)
                if event is None:
                    assert isinstance(reason, str) and reason
                    stats["refused"] += 1
                    continue
                stats["accepted"] += 1
                known = POOL_BY_ID.get(event.id)
                if known is None or known.unsigned() != event.unsigned():
                    stats["forgeries"] += 1
                    stats[f"forged by {how}: {str(data)[:300]}"] += 1
                    continue
                if original is not None and event.sig != original.sig:
                    stats["non_canonical_sig"] += 1  # same signature bytes, other base64 text
                state.apply(event)
            if rnd.random() < 0.05:
                assert state.plan().digest == BASE_DIGEST

    run()
    assert stats["messages"] >= 10_000, stats
    assert stats["forgeries"] == 0, stats
    assert stats["refused"] > stats["messages"], stats  # most messages are refused under both filters
    assert stats["accepted"] > 0, stats  # the no-op mutations (reorder...) are accepted
    plan = state.plan()
    assert plan.digest == BASE_DIGEST
    assert plan.complete is True


# -- validly signed, schema-valid garbage from authorised peers: the fold must not crash -----------

_ids = st.sampled_from([e.id for e in POOL] + ["0" * 64, "f" * 64])
_nodes = st.sampled_from(
    [
        "root",
        "0123456789abcdef.0",
        *(child_id(e.id, i) for e in POOL if e.kind == "proposal" for i in range(3)),
    ]
)
_text = st.text(max_size=30)
_score = st.integers(0, 100)
bodies = {
    "join": st.fixed_dictionaries(
        {
            "role": st.sampled_from(["decomposer", "scorer", "executor", "observer"]),
            "strategy": st.none() | _text,
            "admission": st.none(),
        }
    ),
    "proposal": st.fixed_dictionaries(
        {
            "node": _nodes,
            "strategy": _text,
            "revises": st.none() | _ids,
            "rationale": _text,
            "children": st.lists(
                st.fixed_dictionaries(
                    {
                        "title": st.text(min_size=1, max_size=20),
                        "detail": _text,
                        "leaf": st.booleans(),
                        "facts": st.dictionaries(
                            st.text(max_size=5), st.integers() | st.text(max_size=5), max_size=3
                        ),
                    }
                ),
                min_size=1,
                max_size=20,
            ),
        }
    ),
    "vote": st.fixed_dictionaries(
        {
            "proposal": _ids,
            "approve": st.booleans(),
            "score": _score,
            "critique": _text,
            "checks": st.lists(
                st.fixed_dictionaries(
                    {"name": _text, "score": _score, "passed": st.booleans(), "note": _text}
                ),
                max_size=3,
            ),
            "model_score": st.none() | _score,
        }
    ),
    "claim": st.fixed_dictionaries({"leaf": _nodes, "supersedes": st.none() | _ids}),
    "result": st.fixed_dictionaries({"leaf": _nodes, "claim": _ids, "output": _text, "model": _text}),
}
_authors = [*(i for ids in SWARM.peers.values() for i in ids), OTHER]


@st.composite
def signed_garbage(draw: st.DrawFn) -> Event:
    kind = draw(st.sampled_from(sorted(bodies)))
    who = draw(st.sampled_from(_authors))
    return make_event(
        who,
        draw(st.sampled_from([SWARM.run, "0" * 32])),
        kind,
        draw(st.integers(0, 10**9)),
        draw(bodies[kind]),
    )


@settings(FUZZ, max_examples=150)
@given(st.lists(signed_garbage(), min_size=1, max_size=15))
def test_fuzz_signed_schema_valid_events_never_crash_the_fold(batch: list[Event]) -> None:
    state = FoldState(POOL)
    for event in batch:
        got, reason = check_event(event.to_bytes())
        assert reason == "" and got == event
        state.apply(got)
    plan = state.plan()
    plan.to_json()
    for node in plan.nodes.values():
        assert sum(1 for p in node.proposals if p.status == "accepted") <= 1
    # applying the same events to a fresh state in another order gives the same plan
    again = FoldState(list(reversed(batch)) + POOL).plan()
    assert (again.digest, again.to_json()) == (plan.digest, plan.to_json())
