"""Anti-entropy by id ranges (swarm/ranges.py): a pull finds exactly the ids the other peer holds
and we lack, exchanging summaries of the ranges where the two sets differ instead of every id;
a peer that does not answer ``sum`` is pulled from by its whole inventory, and a lying one
cannot keep a pull going for ever."""

from __future__ import annotations

import json
import random

import trio
import trio.testing

from specswarm.protocol.bodies import JoinBody
from specswarm.protocol.events import Event, make_event, make_run_event
from specswarm.protocol.identity import Identity
from specswarm.spec import spec_from_json
from specswarm.swarm.antientropy import PUSH_AFTER
from specswarm.swarm.node import Node
from specswarm.swarm.ranges import (
    EMPTY,
    HEX,
    ID_PREFIX,
    SUM_BATCH,
    SUM_ROUNDS,
    Descent,
    IdRanges,
    Sum,
    decode_sum_reply,
    encode_sum_reply,
)
from specswarm.swarm.wire import (
    UNKNOWN_REQUEST,
    BadRequest,
    EventMsg,
    decode_request,
    encode_inv_reply,
    encode_request,
)
from specswarm.transport.memory import open_memory_network
from tests.swarmkit import swarm_spec


def _ids(rng: random.Random, n: int) -> list[str]:
    return [f"{rng.getrandbits(64):016x}" for _ in range(n)]


def _ranges(ids: list[str]) -> IdRanges:
    r = IdRanges()
    for i in ids:
        r.add(i)
    return r


def _pull(mine: IdRanges, theirs: IdRanges) -> tuple[set[str], int, int]:
    """Descend from ``mine`` against ``theirs``: (ids found missing, requests, bytes both ways)."""
    descent = Descent.start(mine)
    requests = size = 0
    while (request := descent.next_request()) is not None:
        data = encode_request(request)
        decoded = decode_request(data)
        assert decoded == request
        reply = encode_sum_reply(theirs.answer(request))
        answer = decode_sum_reply(reply)
        assert answer is not None
        descent.take(request, answer, mine)
        requests, size = requests + 1, size + len(data) + len(reply)
    return set(descent.missing), requests, size


def test_a_pull_finds_exactly_what_the_other_holds_and_we_lack_for_a_fraction_of_the_inventory() -> None:
    rng = random.Random(1)
    shared, ours, theirs = _ids(rng, 3000), _ids(rng, 5), _ids(rng, 7)
    missing, requests, size = _pull(_ranges(shared + ours), _ranges(shared + theirs))
    assert missing == set(theirs)
    inventory = len(encode_inv_reply(shared + theirs))
    assert size < inventory / 5, (size, inventory)  # the whole list would be ~57 KB
    assert requests <= 4


def test_a_pull_also_finds_what_we_hold_and_the_other_lacks_where_it_descended() -> None:
    rng = random.Random(4)
    shared, ours, theirs = _ids(rng, 3000), _ids(rng, 5), _ids(rng, 7)
    mine = _ranges(shared + ours)
    descent = Descent.start(mine)
    while (request := descent.next_request()) is not None:
        descent.take(request, _ranges(shared + theirs).answer(request), mine)
    assert set(descent.lacking) == set(ours) and set(descent.missing) == set(theirs)
    few = Descent.start(_ranges(ours))  # holding few: their ids outright
    while (request := few.next_request()) is not None:
        few.take(request, _ranges(theirs).answer(request), _ranges(ours))
    assert set(few.lacking) == set(ours)


def test_equal_sets_cost_one_request_and_an_empty_one_gets_every_id_at_once() -> None:
    rng = random.Random(2)
    ids = _ids(rng, 500)
    missing, requests, size = _pull(_ranges(ids), _ranges(ids))
    assert (missing, requests) == (set(), 1) and size < 600
    missing, requests, _ = _pull(IdRanges(), _ranges(ids))
    assert (missing, requests) == (set(ids), 1)


def test_a_peer_catching_up_asks_for_the_ids_outright() -> None:
    ids = _ids(random.Random(6), 400)
    assert Descent.start(_ranges(ids[:10])).next_request() == Sum((), ("",))  # holding few
    assert Descent.start(_ranges(ids[:200]), theirs=400).next_request() == Sum((), ("",))
    assert Descent.start(_ranges(ids[:201]), theirs=400).next_request() == Sum(("",), ())
    assert Descent.start(_ranges(ids[:200])).next_request() == Sum(("",), ())  # theirs unknown


def test_small_sets_are_listed_and_summaries_are_count_and_xor() -> None:
    r = _ranges(["a" + "0" * 15, "a" + "0" * 14 + "1", "b00000000000abcd", "c1000000000000ff"])
    summaries = [r.summary(p) for p in "abcd"]
    assert summaries == ["2:1", "1:abcd", "1:ff", EMPTY]
    assert r.answer(Sum(("",)))[""].ids == tuple(sorted(r.ids()))
    big = _ranges(_ids(random.Random(3), 100))
    entry = big.answer(Sum(("",)))[""]
    assert entry.ids is None and entry.kids is not None and len(entry.kids) == len(HEX)
    assert sum(int(k.split(":")[0]) for k in entry.kids) == 100


def test_a_sum_request_keeps_only_well_formed_prefixes_and_at_most_a_batch() -> None:
    req = decode_request(json.dumps({"t": "sum", "p": ["", "a1", "XY", 5, "0" * ID_PREFIX, "a1"]}).encode())
    assert req == Sum(("", "a1"), ())
    req = decode_request(json.dumps({"t": "sum", "p": ["a"] * 3 + [f"{i:03x}" for i in range(200)]}).encode())
    assert isinstance(req, Sum) and len(req.prefixes) <= SUM_BATCH
    assert isinstance(decode_request(b'{"t":"sum","p":"abc"}'), BadRequest)
    assert decode_sum_reply(b'{"run":null,"n":0}') is None  # not a sum answer: an older peer
    answer = decode_sum_reply(b'{"sum":{"a":{"ids":["a1","b2",3]},"b":{"kids":["1:1"]},"c":7}}')
    assert answer is not None and answer["a"].ids == ("a1",) and set(answer) == {"a"}


# -- between nodes --------------------------------------------------------------------------------


def _events(n: int, nonce: str = "ranges") -> tuple[Event, list[Event]]:
    launcher = Identity(b"\x09" * 32)
    run = make_run_event(launcher, spec_from_json(swarm_spec()), nonce=nonce)
    body = JoinBody(role="executor", strategy=None, admission=None)
    joins = [make_event(Identity(i.to_bytes(2, "big") * 16), run.run, "join", 1, body) for i in range(n)]
    return run, joins


def _node(net, run: Event, events: list[Event], seed: int) -> Node:  # type: ignore[no-untyped-def]
    ident = Identity(bytes([seed]) * 32)
    node = Node(net.add_peer(ident.peer_id), ident, None, role_name="observer", preload=[run, *events])
    node.store.adopt_run(run, events)
    node.transport.set_request_handler(node.handle_request)
    return node


def _virtual(fn):  # type: ignore[no-untyped-def]
    return trio.run(fn, clock=trio.testing.MockClock(autojump_threshold=0))


def test_what_a_node_pays_to_find_what_it_lacks_does_not_grow_with_the_set() -> None:
    """Five events missing of 200 and of 2000, over three runs (event ids, and so where the
    missing ones fall among the ranges, differ with the run): one level more, not ten times."""

    async def pull(run: Event, joins: list[Event], n: int) -> tuple[int, int, int, bool]:
        async with open_memory_network(seed=1) as net:
            server = _node(net, run, joins[:n], 1)
            puller = _node(net, run, joins[: n - 5], 2)
            new = await puller.sync_with(server.peer_id)
            same = puller.set_digest() == server.set_digest()
            return new, puller.counters.sync_inventory_bytes, puller.counters.sync_requests, same

    paid = {200: 0, 2000: 0}
    for nonce in ("ranges-1", "ranges-2", "ranges-3"):
        run, joins = _events(2000, nonce)
        for n in paid:
            new, inventory, requests, same = _virtual(lambda: pull(run, joins, n))  # noqa: B023
            assert new == 5 and same and requests <= 5  # sum at each level (log16 of the set), then get
            paid[n] += inventory
        assert inventory < len(encode_inv_reply(e.id[:ID_PREFIX] for e in [run, *joins])) / 8
    assert paid[2000] < 2 * paid[200], paid


def test_a_peer_that_does_not_answer_sum_is_pulled_from_by_its_inventory() -> None:
    run, joins = _events(40)

    async def main() -> tuple[int, list[str]]:
        async with open_memory_network(seed=2) as net:
            server = _node(net, run, joins, 1)
            puller = _node(net, run, joins[:30], 2)
            asked: list[str] = []

            async def older(sender: str, data: bytes) -> bytes:
                kind = json.loads(data)["t"]
                asked.append(kind)
                return UNKNOWN_REQUEST if kind == "sum" else await server.handle_request(sender, data)

            server.transport.set_request_handler(older)
            return await puller.sync_with(server.peer_id), asked

    new, asked = _virtual(main)
    assert new == 10 and asked[:2] == ["sum", "inv"] and "get" in asked


def test_a_peer_that_says_every_range_differs_cannot_keep_a_pull_going() -> None:
    run, joins = _events(5)

    async def main() -> tuple[int, int]:
        async with open_memory_network(seed=3) as net:
            server = _node(net, run, joins, 1)
            puller = _node(net, run, joins, 2)
            rng = random.Random(4)

            async def liar(sender: str, data: bytes) -> bytes:
                req = decode_request(data)
                assert isinstance(req, Sum)
                asked = (*req.prefixes, *req.everything)
                kids = {p: {"kids": [f"9:{rng.getrandbits(32):x}" for _ in HEX]} for p in asked}
                return json.dumps({"sum": kids}).encode()

            server.transport.set_request_handler(liar)
            with trio.fail_after(600):
                new = await puller.sync_with(server.peer_id)
            return new, puller.counters.sync_requests

    new, requests = _virtual(main)
    assert new == 0 and requests == SUM_ROUNDS


def test_an_event_only_a_peer_behind_holds_is_gossiped_again_once_a_pull_shows_it_lost() -> None:
    """The server holds more events, so nobody pulls from the puller; the one event only the
    puller holds reaches the server by the puller gossiping it again, once it is old enough to
    be lost rather than in flight, and once only."""
    run, joins = _events(41)
    extra = joins[40]

    async def main() -> tuple[list[int], bool]:
        async with open_memory_network(seed=3) as net:
            server = _node(net, run, joins[:40], 1)
            ident = Identity(bytes([2]) * 32)
            puller = Node(net.add_peer(ident.peer_id), ident, None, role_name="executor")
            puller.store.adopt_run(run, [*joins[:30], extra])
            puller.transport.set_request_handler(puller.handle_request)
            for node in (server, puller):
                await node.transport.subscribe("t")
            pushed = [0, 0, 0]
            await puller.sync_with(server.peer_id)
            pushed[0] = puller.counters.pushed  # in flight, maybe: not yet
            await trio.sleep(PUSH_AFTER)
            await puller.sync_with(server.peer_id)
            pushed[1] = puller.counters.pushed
            await puller.sync_with(server.peer_id)  # the server still lacks it: not again so soon
            pushed[2] = puller.counters.pushed
            with trio.fail_after(5):
                _, data = await server.transport.incoming().receive()
            got = server.intake.take(data) if server.intake.validate(data) else None
            return pushed, isinstance(got, EventMsg) and got.event.id == extra.id

    pushed, arrived = _virtual(main)
    assert pushed == [0, 1, 1] and arrived
