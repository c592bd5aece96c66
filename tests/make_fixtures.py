"""Regenerate the renderer's fixture event logs in tests/fixtures/ (deterministically).

    python tests/make_fixtures.py

Every event is signed by seeded synthetic peers (:class:`specswarm.testing.synth.Swarm`), so the
same script always writes the same bytes; ``tests/test_render.py`` checks that the
committed logs are what this script produces. The texts are written by hand to read
like what real peers would say; the votes' checks are fixed here rather than computed
by ``specswarm.critics`` so that tuning the critics never changes these fixtures.

* ``japan-events.jsonl``: a converged two-week Japan trip, three decomposer strategies,
  a rejected and an outvoted rival split at the root, a rejected-then-revised split,
  a superseded claim, a leaf at depth 1.
* ``todo-events.jsonl``: a converged software spec (a todo CLI with sync), quorum 2 of 3.
* ``partial-events.jsonl``: a run caught mid-way: a node still voting, an open node with
  only a rejected proposal, a leaf in progress and unclaimed leaves.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from io import StringIO
from pathlib import Path
from typing import Any

from specswarm.plan.fold import child_id
from specswarm.protocol.events import Event, iter_sorted, write_event_log
from specswarm.protocol.identity import Identity
from specswarm.testing.synth import Swarm

FIXTURES = Path(__file__).resolve().parent / "fixtures"
MODEL = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"


def normalized_spec(
    name: str,
    goal: str,
    context: str,
    *,
    strategies: list[str],
    scorers: int = 3,
    executors: int = 2,
    observers: int = 1,
    quorum: Any = "majority",
    constraints: list[dict[str, Any]] | None = None,
    max_depth: int = 2,
    fmt: str = "markdown",
) -> dict[str, Any]:
    """A spec shaped like ``GoalSpec.to_json()`` (docs/ARCHITECTURE.md), every default filled in."""
    return {
        "version": 1,
        "name": name,
        "goal": goal,
        "context": context,
        "constraints": constraints or [],
        "quorum": quorum,
        "roles": {
            "decomposer": {"count": len(strategies), "strategies": strategies},
            "scorer": {"count": scorers},
            "executor": {"count": executors},
            "observer": {"count": observers},
        },
        "prompts": {
            "decompose": "Split {{ node.title }} into {{ min_children }}..{{ max_children }} parts.",
            "refine": "Revise the split of {{ node.title }} given: {{ critique }}",
            "score": "Rate this split of {{ node.title }} from 0 to 100.",
            "execute": "Do this step of {{ goal }}: {{ node.title }}. {{ node.detail }}",
        },
        "tree": {
            "max_depth": max_depth,
            "min_children": 2,
            "max_children": 6,
            "max_revisions": 2,
            "approve_threshold": 60,
        },
        "model": {
            "backend": "gpt4all",
            "file": None,
            "name": None,
            "temperature": 0.0,
            "top_k": 1,
            "seed": 42,
            "repeat_penalty": 1.1,
            "threads": 2,
            "cassette": None,
            "max_tokens": {"decompose": 400, "refine": 400, "score": 120, "execute": 300},
            "model_weight": 0.2,
        },
        "network": {"listen": "/ip4/127.0.0.1/tcp/0", "bootstrap": [], "mdns": False, "topic": None},
        "access": {"mode": "launcher", "peers": [], "secret_env": "SPECSWARM_SECRET"},
        "budget": {"seconds": 900, "settle_seconds": 1.0, "claim_timeout": 180},
        "output": {"format": fmt, "template": None},
    }


@dataclass
class Child:
    """One child of a proposed split."""

    title: str
    detail: str
    facts: Mapping[str, int | str] = field(default_factory=dict)
    leaf: bool = False


def checks(n_children: int, **failed: str) -> list[dict[str, Any]]:
    """The six mechanical checks, all passing unless named in ``failed`` (name -> note)."""
    notes = {
        "count": f"{n_children} children (allowed 2..6)",
        "duplicates": "no two titles alike",
        "overlap": "siblings are distinct",
        "vagueness": "every title is specific",
        "coverage": "children cover the parent's key terms",
        "constraints": "all constraints hold",
    }
    out = []
    for name, note in notes.items():
        bad = failed.get(name)
        out.append({"name": name, "score": 35 if bad else 100, "passed": bad is None, "note": bad or note})
    return out


class Script:
    """Drives a :class:`Swarm` with hand-written proposals, votes and results."""

    def __init__(self, spec: dict[str, Any], seed: int) -> None:
        self.swarm = Swarm(spec=spec, seed=seed)

    def peer(self, role: str, index: int) -> Identity:
        return self.swarm.peers[role][index]

    def split(
        self, decomposer: int, node: str, children: list[Child], rationale: str, revises: Event | None = None
    ) -> Event:
        who = self.peer("decomposer", decomposer)
        strategy = self.swarm.spec["roles"]["decomposer"]["strategies"][decomposer]
        body = {
            "node": node,
            "strategy": strategy,
            "revises": revises.id if revises else None,
            "rationale": rationale,
            "children": [
                {"title": c.title, "detail": c.detail, "leaf": c.leaf, "facts": dict(c.facts)}
                for c in children
            ],
        }
        return self.swarm.emit(who, "proposal", body)

    def review(
        self, proposal: Event, *verdicts: tuple[int, bool, int, str], failed: Mapping[str, str] | None = None
    ) -> None:
        """``verdicts``: (scorer index, approve, score, critique)."""
        n = len(proposal.body.children)
        for scorer, approve, score, critique in verdicts:
            found = {} if approve else dict(failed or {})
            self.swarm.emit(
                self.peer("scorer", scorer),
                "vote",
                {
                    "proposal": proposal.id,
                    "approve": approve,
                    "score": score,
                    "critique": critique,
                    "checks": checks(n, **found),
                    "model_score": min(100, score + 6),
                },
            )

    def approve_all(self, proposal: Event, scores: tuple[int, ...], critiques: tuple[str, ...]) -> None:
        pairs = zip(scores, critiques, strict=True)
        self.review(proposal, *((i, True, score, text) for i, (score, text) in enumerate(pairs)))

    def execute(self, executor: int, leaf: str, output: str, supersedes: Event | None = None) -> Event:
        who = self.peer("executor", executor)
        claim = self.swarm.claim(who, leaf, supersedes=supersedes.id if supersedes else None)
        return self.swarm.emit(
            who, "result", {"leaf": leaf, "claim": claim.id, "output": output.strip(), "model": MODEL}
        )

    def text(self) -> str:
        buf = StringIO()
        write_event_log(iter_sorted(self.swarm.events), buf)
        return buf.getvalue()


def kids(proposal: Event) -> list[str]:
    return [child_id(proposal.id, i) for i in range(len(proposal.body.children))]


# -- Japan ---------------------------------------------------------------------------------


def japan() -> str:
    s = Script(
        normalized_spec(
            "japan",
            "Plan a two-week trip to Japan",
            "Two adults in their thirties, first visit, late October. Budget about 6,000 EUR "
            "without flights. Like food, temples and walking; no car. Fly into Tokyo Haneda, "
            "out of Osaka Kansai.",
            strategies=["geography", "activity", "days"],
            constraints=[
                {"kind": "sum", "field": "days", "total": 14, "applies_to": "root"},
                {"kind": "mention", "terms": ["Tokyo", "Kyoto"], "applies_to": "root"},
                {"kind": "forbid", "terms": ["cruise"], "applies_to": "all"},
            ],
        ),
        seed=101,
    )

    by_days = s.split(
        2,
        "root",
        [
            Child(
                "Days 1-5: arrival and first impressions",
                "Settle in, get over jet lag, see the sights.",
                {"days": 5},
            ),
            Child("Days 6-10: culture and food", "Temples, museums and the best food.", {"days": 5}),
            Child("Days 11-14: relax and fly home", "Slow days before the flight.", {"days": 4}),
        ],
        "Three blocks of days keep the pace even.",
    )
    s.review(
        by_days,
        (0, False, 38, "Names no place at all: Tokyo and Kyoto are required and missing."),
        (1, False, 41, "'Culture and food' could be anywhere; a traveller cannot book from this."),
        (2, False, 35, "Vague blocks; no route, so travel time between days cannot be checked."),
        failed={
            "vagueness": "'culture and food' and 'relax' are vague",
            "constraints": "must mention Tokyo, Kyoto",
        },
    )

    route = s.split(
        0,
        "root",
        [
            Child(
                "Tokyo", "Arrive at Haneda; four days of neighbourhoods, food and one day trip.", {"days": 4}
            ),
            Child(
                "Mount Fuji and Hakone",
                "Two nights west of Tokyo: a lake with Fuji views, then "
                "Hakone's loop and a ryokan with an onsen.",
                {"days": 2},
            ),
            Child("Kyoto", "Four days of temples, gardens and old streets, based near Gion.", {"days": 4}),
            Child(
                "Nara and Osaka",
                "A day with Nara's temples and deer, then Osaka's food and nightlife.",
                {"days": 3},
            ),
            Child(
                "Departure from Kansai",
                "Last morning in Osaka, train to Kansai airport, fly home.",
                {"days": 1},
                leaf=True,
            ),
        ],
        "Follow the Tokaido line west: Tokyo, Fuji, Kyoto, Osaka. No backtracking; a 14-day "
        "Japan Rail Pass is not worth it, single Shinkansen tickets are cheaper.",
    )
    s.review(
        route,
        (0, True, 88, "Clear west-bound route, days add up to 14, both required cities."),
        (1, True, 84, "Good pacing. Four days in Kyoto is right for temple lovers."),
    )

    by_activity = s.split(
        1,
        "root",
        [
            Child("Temples and shrines", "Kyoto and Nara's great temples, Nikko's shrines.", {"days": 4}),
            Child(
                "Food and markets", "Tsukiji outer market, Nishiki, Dotonbori, a cooking class.", {"days": 3}
            ),
            Child("Nature and onsen", "Hakone, Fuji lakes, a ryokan night.", {"days": 3}),
            Child("Modern Tokyo", "Shibuya, Shinjuku, Akihabara, teamLab.", {"days": 3}),
            Child("Departure", "Fly home from Kansai.", {"days": 1}, leaf=True),
        ],
        "Group the trip by what the travellers love.",
    )
    s.review(route, (2, True, 81, "Fine. Mention luggage forwarding between Tokyo and Kyoto."))
    s.review(
        by_activity,
        (0, True, 72, "Covers all interests, but each theme spans several cities."),
        (1, False, 55, "Temples and food both need Kyoto days: the route would zig-zag."),
        (2, True, 68, "Acceptable, though the geography split is easier to book."),
        failed={"overlap": "'Temples and shrines' and 'Food and markets' share Kyoto"},
    )

    tokyo, fuji, kyoto, kansai, departure = kids(route)

    tokyo_days = s.split(
        2,
        tokyo,
        [
            Child("Arrival, Shinjuku by night", "Land at Haneda, check in, walk Shinjuku.", {"days": 1}),
            Child(
                "Asakusa, Ueno and Akihabara", "Old Tokyo in the morning, electric town after.", {"days": 1}
            ),
            Child(
                "Meiji Jingu, Harajuku and Shibuya", "Shrine forest, then the busiest crossing.", {"days": 1}
            ),
            Child(
                "Day trip to Nikko", "Toshogu shrine and Kegon falls, by Tobu limited express.", {"days": 1}
            ),
        ],
        "One neighbourhood cluster a day; the day trip last, when jet lag has passed.",
    )
    s.approve_all(
        tokyo_days,
        (86, 83, 90),
        (
            "Good clusters, short transfers.",
            "Sensible order.",
            "Nikko on day 4 is smart: early start possible.",
        ),
    )

    onsen = s.split(
        1,
        fuji,
        [
            Child("Onsen", "Hot springs.", {"days": 1}),
            Child("Hiking", "Walk in nature.", {"days": 1}),
        ],
        "Relax, then move.",
    )
    s.review(
        onsen,
        (0, False, 30, "One-word titles; which onsen, which trail?"),
        (1, False, 42, "No places: Fuji and Hakone are not mentioned."),
        failed={"vagueness": "'Onsen' and 'Hiking' are one-word titles"},
    )
    onsen2 = s.split(
        1,
        fuji,
        [
            Child(
                "Lake Kawaguchiko and Chureito Pagoda",
                "Highway bus from Shinjuku; the pagoda view of Fuji, the lake shore by bike.",
                {"days": 1},
            ),
            Child(
                "Hakone loop and a ryokan night",
                "Bus to Hakone; ropeway over Owakudani, boat on Lake Ashi, night in a ryokan.",
                {"days": 1},
            ),
        ],
        "Revised after critique: name the places; Kawaguchiko first so the Hakone night ends "
        "near Odawara for the Shinkansen to Kyoto.",
        revises=onsen,
    )
    s.approve_all(
        onsen2,
        (85, 80, 87),
        ("Concrete and bookable.", "The bus links are right.", "Much better than the first attempt."),
    )

    kyoto_split = s.split(
        0,
        kyoto,
        [
            Child(
                "Fushimi Inari, Higashiyama and Gion",
                "The torii gates at dawn, then Kiyomizu-dera, Sannenzaka and Gion at dusk.",
                {"days": 2},
            ),
            Child(
                "Arashiyama and Kinkaku-ji",
                "Bamboo grove early, Tenryu-ji garden, the Golden Pavilion.",
                {"days": 1},
            ),
            Child(
                "Nishiki Market and a tea ceremony",
                "Food market lunch, a tea ceremony in Uji or central Kyoto.",
                {"days": 1},
            ),
        ],
        "East, west, centre: one side of the city per day.",
    )
    s.approve_all(
        kyoto_split,
        (91, 88, 84),
        ("Excellent.", "Good split by district.", "Crowded spots are scheduled early, good."),
    )

    kansai_split = s.split(
        2,
        kansai,
        [
            Child(
                "Nara: Todai-ji and the deer park",
                "Kintetsu from Kyoto; Todai-ji, Kasuga Taisha, then on to Osaka in the evening.",
                {"days": 1},
            ),
            Child(
                "Osaka: castle, Dotonbori and Kuromon",
                "Two days of food and neon, based in Namba.",
                {"days": 2},
            ),
        ],
        "Nara on the way from Kyoto to Osaka saves a transfer.",
    )
    s.approve_all(kansai_split, (82, 79, 85), ("Efficient.", "Maybe add Shinsekai.", "Good."))

    arrival, asakusa, harajuku, nikko = kids(tokyo_days)
    kawaguchiko, hakone = kids(onsen2)
    higashiyama, arashiyama, nishiki = kids(kyoto_split)
    nara, osaka = kids(kansai_split)

    s.execute(
        0,
        arrival,
        """
Day 1 (Sat 18 Oct): land at Haneda 07:05.
- Buy a Suica card on the phone; Keikyu line + Yamanote to Shinjuku (45 min, 500 JPY).
- Hotel: Hotel Gracery Shinjuku, 3 nights; drop bags at 10:00.
- Afternoon: Shinjuku Gyoen garden (500 JPY), nap.
- Evening: Omoide Yokocho for yakitori, then Tokyo Metropolitan Government Building
  observatory (free, open until 22:00).
Budget: about 180 EUR for two including the hotel night.
""",
    )
    s.execute(
        1,
        asakusa,
        """
Day 2: Asakusa, Ueno and Akihabara.
- 08:00 Senso-ji before the crowds; Nakamise street snacks.
- 10:30 Sumida river walk, view of the Skytree.
- 12:00 Ueno: lunch in Ameyoko, Tokyo National Museum (1,000 JPY).
- 16:00 Akihabara: arcades, Yodobashi, retro games.
Dinner: tonkatsu at Marugo, Akihabara.
""",
    )
    s.execute(
        0,
        harajuku,
        """
Day 3: Meiji Jingu, Harajuku and Shibuya.
- 09:00 Meiji Jingu through the forest path from Harajuku station.
- 11:00 Takeshita street and Omotesando for architecture and coffee.
- 15:00 Shibuya Sky at sunset (book online, 2,500 JPY each).
- Evening: Shibuya crossing and dinner in Nonbei Yokocho.
""",
    )
    stalled = s.swarm.claim(s.peer("executor", 1), nikko)
    s.execute(
        0,
        nikko,
        """
Day 4: Nikko day trip.
- 07:30 Tobu limited express Revaty from Asakusa (2 h, about 3,000 JPY each way).
- Toshogu shrine (1,600 JPY), Futarasan and Rinno-ji.
- Bus up the Irohazaka road to Kegon falls; autumn leaves peak in late October.
- Back in Tokyo by 19:00. Send big luggage to the Kyoto hotel tonight (takkyubin, 2,500 JPY a bag).
""",
        supersedes=stalled,
    )
    s.execute(
        1,
        kawaguchiko,
        """
Day 5: Lake Kawaguchiko.
- 08:45 highway bus from Busta Shinjuku (1 h 50, 2,200 JPY; book ahead).
- Chureito Pagoda: 400 steps for the classic Fuji view; go before noon, clouds build later.
- Rent bikes along the north shore; Oishi park.
- Night: guesthouse in Kawaguchiko with a Fuji-view room.
""",
    )
    s.execute(
        0,
        hakone,
        """
Day 6: the Hakone loop.
- Bus from Kawaguchiko to Gotemba, then to Hakone (2 h).
- Hakone Free Pass (2 days, 6,100 JPY): Tozan train, cable car, ropeway over Owakudani,
  pirate boat across Lake Ashi.
- Night at a ryokan in Gora with a kaiseki dinner and private onsen (about 350 EUR for two).
Next morning: Odawara to Kyoto by Shinkansen (2 h).
""",
    )
    s.execute(
        1,
        higashiyama,
        """
Days 7-8: Fushimi Inari, Higashiyama and Gion.
- Day 7, 06:30: Fushimi Inari before the tour groups; walk to the top (2-3 h).
- Afternoon: check in near Gion (machiya rental, 3 nights); Kennin-ji.
- Day 8: Kiyomizu-dera at opening, Sannenzaka, Ninenzaka, Kodai-ji.
- Philosopher's Path to Ginkaku-ji; dusk in Gion's Hanamikoji.
Dinner: kaiseki in Pontocho (reserve; about 120 EUR for two).
""",
    )
    s.execute(
        0,
        arashiyama,
        """
Day 9: Arashiyama and Kinkaku-ji.
- 07:30 bamboo grove, then Tenryu-ji garden (500 JPY).
- Okochi Sanso villa and its tea.
- Bus 205 to Kinkaku-ji (500 JPY), then Ryoan-ji's rock garden.
Evening: back in Gion; izakaya near Shijo.
""",
    )
    s.execute(
        1,
        nishiki,
        """
Day 10: Nishiki Market and a tea ceremony.
Slow day: graze through Nishiki Market for lunch (tamagoyaki, yuba, pickles), then a
one-hour tea ceremony at Camellia in Higashiyama (booked, 4,000 JPY each). Late
afternoon at the Kyoto International Manga Museum or a nap before the last night in Kyoto.
""",
    )
    s.execute(
        0,
        nara,
        """
Day 11: Nara, then on to Osaka.
- Kintetsu limited express Kyoto to Nara (35 min). Store bags in lockers.
- Todai-ji's Great Buddha (600 JPY), deer park, Kasuga Taisha's lanterns.
- Mochi at Nakatanidou.
- Evening: Kintetsu to Osaka Namba; hotel in Namba for 3 nights.
""",
    )
    s.execute(
        1,
        osaka,
        """
Days 12-13: Osaka.
- Day 12: Osaka Castle park in the morning, Kuromon market lunch, Dotonbori at night
  (takoyaki, okonomiyaki at Mizuno).
- Day 13: Shinsekai and Tsutenkaku, Umeda Sky Building at sunset.
- Optional: Universal Studios instead of day 13 (tickets from 9,000 JPY).
""",
    )
    s.execute(
        0,
        departure,
        """
Day 14: departure.
- Check out by 10:00; Nankai rapi:t from Namba to Kansai airport (40 min, 1,450 JPY).
- Arrive 3 hours before an international flight; spend the last yen at the airport.
""",
    )
    return s.text()


# -- todo CLI --------------------------------------------------------------------------------


def todo() -> str:
    s = Script(
        normalized_spec(
            "todo-sync",
            "Build a command-line todo app that syncs between machines",
            "Python 3.12 and Typer; one `todo` command. Tasks live in a local SQLite file and the "
            "app works offline; when online it syncs through a small HTTPS service we host. "
            "Two developers, four weeks.",
            strategies=["components", "user stories"],
            observers=0,
            quorum=2,
            fmt="spec",
            constraints=[{"kind": "mention", "terms": ["sync"], "applies_to": "root"}],
        ),
        seed=202,
    )

    stories = s.split(
        1,
        "root",
        [
            Child("As a user I can add and finish tasks", "Add, list, complete tasks from the shell."),
            Child(
                "As a user I see my tasks on every machine", "Tasks added on the laptop show on the desktop."
            ),
            Child("As a user I can work offline", "Nothing fails without a network; sync catches up."),
        ],
        "Start from what users need.",
    )
    s.review(
        stories,
        (0, True, 64, "Readable, but sync appears in two stories."),
        (1, False, 48, "No child owns the storage format; the sync stories overlap."),
        (2, False, 45, "Stories are not components: hard to assign to two developers."),
        failed={"overlap": "stories 2 and 3 both describe sync"},
    )

    parts = s.split(
        0,
        "root",
        [
            Child(
                "Local task store",
                "SQLite schema, migrations and a small repository API every other part uses.",
            ),
            Child("Command-line interface", "The `todo` commands, their options and output formats."),
            Child(
                "Sync protocol and server",
                "Change log, push and pull over HTTPS, conflict rules, and the hosted service.",
            ),
            Child(
                "Packaging and release", "Publish to PyPI, install with pipx, CI on three OSes.", leaf=True
            ),
        ],
        "One component per developer-week; storage first because both CLI and sync depend on it.",
    )
    s.approve_all(
        parts,
        (87, 82, 85),
        ("Clear boundaries.", "Good dependency order.", "Packaging as its own item is wise."),
    )

    store, cli, sync, packaging = kids(parts)
    store_split = s.split(
        0,
        store,
        [
            Child(
                "SQLite schema and migrations", "Tables for tasks and the change log; versioned migrations."
            ),
            Child("Task repository API", "Typed functions the CLI and sync call; no SQL outside it."),
        ],
        "Schema, then the API over it.",
    )
    s.approve_all(store_split, (84, 80, 88), ("Good.", "Keep migrations forward-only.", "Fine."))
    cli_split = s.split(
        1,
        cli,
        [
            Child("Core commands: add, list, done, edit, rm", "The everyday verbs with short ids."),
            Child(
                "Filters and output formats", "Filter by tag, due date, status; table, plain and JSON output."
            ),
        ],
        "Daily use first, power features second.",
    )
    s.approve_all(cli_split, (81, 77, 83), ("Good.", "JSON output helps scripting.", "Fine."))
    sync_split = s.split(
        0,
        sync,
        [
            Child(
                "Change log with hybrid logical clocks",
                "Every local edit appends a change; HLC timestamps order them across machines.",
            ),
            Child(
                "Push and pull endpoints",
                "The FastAPI service: authenticate, accept changes, return changes since a cursor.",
            ),
            Child("Conflict resolution", "Per-field last-writer-wins by HLC; deletes win over edits."),
        ],
        "Data model, transport, semantics.",
    )
    s.review(
        sync_split,
        (1, True, 86, "The HLC choice is well argued."),
        (2, True, 90, "Conflict rules are explicit. Good."),
    )

    schema, repo = kids(store_split)
    core, filters = kids(cli_split)
    changelog, endpoints, conflicts = kids(sync_split)

    s.execute(
        0,
        schema,
        """
Create `todo/store/schema.py` with migration 1:
- `tasks(id TEXT PRIMARY KEY, title TEXT NOT NULL, done INTEGER NOT NULL DEFAULT 0,
  due TEXT, tags TEXT NOT NULL DEFAULT '[]', updated_hlc TEXT NOT NULL, deleted INTEGER NOT NULL DEFAULT 0)`
- `changes(seq INTEGER PRIMARY KEY, task_id TEXT, field TEXT, value TEXT, hlc TEXT, origin TEXT)`
- `meta(key TEXT PRIMARY KEY, value TEXT)` holding the schema version and the sync cursor.
- Migrations run in a transaction at startup and are forward-only.
- A test opens a version-0 file and upgrades it without data loss.
""",
    )
    s.execute(
        1,
        repo,
        """
Write `todo/store/repo.py`, the only module that speaks SQL:
- `add(title, due=None, tags=()) -> Task` with a ULID id.
- `list(filter) -> list[Task]`, `get(id_prefix) -> Task` (ambiguous prefixes raise).
- `update(id, **fields)` and `delete(id)` each append to `changes` in the same transaction.
- Unit tests run against an in-memory database.
""",
    )
    s.execute(
        0,
        core,
        """
Implement the Typer app in `todo/cli.py`:
1. `todo add "Buy milk" --due fri --tag home` prints the new short id.
2. `todo list` shows open tasks, newest first; `--all` includes done ones.
3. `todo done ID...` and `todo rm ID...` accept id prefixes.
4. `todo edit ID --title ... --due ...` changes only the given fields.
5. Exit code 2 with a one-line message for an unknown or ambiguous id.
""",
    )
    s.execute(
        1,
        filters,
        """
Filtering accepts --tag, --due-before and --status, combined with AND, and is applied in
SQL by the repository rather than in Python. Output defaults to an aligned table when
stdout is a terminal and to plain tab-separated lines otherwise; --json prints one JSON
array with the same fields as the database row, so scripts can rely on it.
""",
    )
    s.execute(
        0,
        changelog,
        """
Add `todo/sync/hlc.py` and wire it into the repository:
- HLC = (wall ms, counter, node id); `now()` and `observe(remote)` per the Kulkarni paper.
- Every repository write stamps the row and the change with `now()`.
- Property test: HLCs from two simulated machines stay totally ordered and monotonic.
""",
    )
    s.execute(
        1,
        endpoints,
        """
Service `server/app.py` (FastAPI, deployed on one small VM):
- `POST /v1/changes` with a bearer token: store the batch, return the new cursor.
- `GET /v1/changes?since=CURSOR`: changes from other devices, at most 500 per page.
- Tokens are per device, created with `todo sync login`.
- Client: `todo sync` pushes local changes, then pulls until the cursor is current.
""",
    )
    s.execute(
        0,
        conflicts,
        """
Apply remote changes field by field:
- The value with the greater HLC wins; equal HLCs fall back to the node id.
- A delete wins over any edit with a lower HLC; an edit after the delete does not resurrect.
- Applying the same batch twice changes nothing (idempotent), tested with duplicate pulls.
""",
    )
    s.execute(
        1,
        packaging,
        """
- `pyproject.toml` with hatchling; console script `todo`.
- GitHub Actions: ruff, mypy and pytest on Linux, macOS and Windows, Python 3.12.
- Tag `v*` publishes to PyPI through trusted publishing.
- README shows `pipx install todo-sync` and a 30-second tour.
""",
    )
    return s.text()


# -- partial ---------------------------------------------------------------------------------


def partial() -> str:
    s = Script(
        normalized_spec(
            "hackathon",
            "Organize a 48-hour community hackathon for 120 people",
            "A weekend in March in Leipzig. Budget 15,000 EUR, mostly from sponsors. Volunteers "
            "run it; the last one had too little food and poor Wi-Fi.",
            strategies=["workstreams", "timeline"],
        ),
        seed=303,
    )

    top = s.split(
        0,
        "root",
        [
            Child("Venue and logistics", "A hall for 120 with power and Wi-Fi, catering, a night plan."),
            Child("Sponsors and budget", "Raise 15,000 EUR and keep the books."),
            Child("Judging and prizes", "Jury, criteria, prizes, the final demo session."),
            Child(
                "Announce the event", "Website, mailing lists and local meetups, six weeks ahead.", leaf=True
            ),
        ],
        "Four workstreams, one volunteer lead each.",
    )
    s.approve_all(top, (83, 86, 79), ("Clear owners.", "Covers the failures of last time.", "Good."))
    venue, sponsors, judging, _announce = kids(top)

    venue_split = s.split(
        1,
        venue,
        [
            Child("Book the venue", "Shortlist three halls, visit, sign by January."),
            Child("Catering for 120 people", "Three meals a day plus night snacks; vegan and halal options."),
            Child("Wi-Fi and power", "Dedicated uplink, 40 power strips, a network volunteer on site."),
        ],
        "The three things that went wrong last time.",
    )
    s.approve_all(venue_split, (88, 84, 90), ("Good.", "Specific.", "Learns from last year."))

    sponsor_split = s.split(
        0,
        sponsors,
        [
            Child("Sponsor packages", "Three tiers with clear benefits."),
            Child("Budget and bookkeeping", "A shared sheet and a treasurer."),
        ],
        "Income, then spending.",
    )
    s.review(sponsor_split, (0, True, 74, "Reasonable; name the tiers' prices."))

    judging_split = s.split(
        1,
        judging,
        [
            Child("Prizes", "Some prizes."),
            Child("Other", "Everything else."),
        ],
        "Split in two.",
    )
    s.review(
        judging_split,
        (0, False, 22, "'Other' is not a task."),
        (1, False, 30, "Says nothing about the jury or the criteria."),
        failed={"vagueness": "'Other' is vague; 'Prizes' has no detail"},
    )

    book, catering, _wifi = kids(venue_split)
    s.execute(
        0,
        book,
        """
- Shortlist: Basislager Coworking, Westwerk, and the university's Felix-Klein building.
- Visits on 9 and 16 January; need 120 seats, 6 breakout rooms, open 48 h.
- Sign with the cheapest that allows overnight stays; deposit 1,500 EUR.
""",
    )
    s.swarm.claim(s.peer("executor", 1), catering)
    return s.text()


LOGS = {"japan-events.jsonl": japan, "todo-events.jsonl": todo, "partial-events.jsonl": partial}


def build_all() -> dict[str, str]:
    """File name -> the text of every fixture log."""
    return {name: make() for name, make in LOGS.items()}


def main() -> int:
    FIXTURES.mkdir(exist_ok=True)
    for name, text in build_all().items():
        (FIXTURES / name).write_text(text, encoding="utf-8")
        print(f"wrote {FIXTURES / name} ({text.count(chr(10))} events)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
