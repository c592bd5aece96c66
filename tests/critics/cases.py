"""Hand-written splits, labelled good or bad as a careful human would judge them, in ten domains
(trip, software, event, research, renovation, wedding, course, launch, fitness, moving); each bad
case names the check that should catch it and an item its note must name.

Two sets: ``DEV`` was written while the critics were designed (their thresholds were checked on
it); ``HELDOUT`` was written before its first run and never used to tune anything.
``tests/critics/test_critics.py`` asserts every verdict; this module also prints the accuracy of
the critics, and of the word-level critics they replaced (read from git):

    python -m tests.critics.cases              # the current critics, both sets
    python -m tests.critics.cases --old        # also the replaced critics (plan/critics.py)
    python -m tests.critics.cases --verbose    # every case, with the notes of failed checks
"""

from __future__ import annotations

import argparse
import subprocess
import types
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from specswarm import critics as cc
from specswarm.critics import Check, Part
from specswarm.spec import Constraint

REPO = Path(__file__).resolve().parent.parent.parent


@dataclass(frozen=True)
class Node:
    """A node of a hand-written tree (what ``relatives_in_tree`` reads)."""

    title: str
    parent: str | None = None
    detail: str = ""
    facts: Mapping[str, int | float | str] = field(default_factory=dict)


@dataclass(frozen=True)
class Case:
    name: str
    domain: str
    good: bool
    """The human label: True = a careful human would accept this split."""
    tree: Mapping[str, Node]
    node: str
    """The node being split (a key of ``tree``)."""
    children: tuple[Part, ...]
    why: str
    """Why a human would judge it so (what a bad split gets wrong)."""
    expect: tuple[str, str] | None = None
    """Bad cases: (the check that should catch it, a word its note must name)."""

    @property
    def parent(self) -> Node:
        return self.tree[self.node]

    @property
    def depth(self) -> int:
        d, cur = 0, self.parent.parent
        while cur is not None:
            d, cur = d + 1, self.tree[cur].parent
        return d


def P(title: str, detail: str = "", **facts: int | float | str) -> Part:  # noqa: N802
    return Part(title, detail, facts)


def root(title: str, detail: str = "", **facts: int | float | str) -> dict[str, Node]:
    return {"root": Node(title, None, detail, facts)}


def tree(*nodes: tuple[str, str | None, str, Mapping[str, int | float | str]]) -> dict[str, Node]:
    return {nid: Node(title, parent, "", dict(facts)) for nid, parent, title, facts in nodes}


def case(
    name: str,
    domain: str,
    good: bool,
    t: Mapping[str, Node],
    node: str,
    children: Sequence[Part],
    why: str,
    expect: tuple[str, str] | None = None,
) -> Case:
    return Case(name, domain, good, t, node, tuple(children), why, expect)


# -- development set ---------------------------------------------------------------------------

_PERU = tree(
    ("root", None, "Plan a week in Peru", {}),
    ("lima", "root", "Lima food scene (2 days)", {"days": 2}),
    ("cusco", "root", "Cusco and the Sacred Valley (3 days)", {"days": 3}),
    ("mp", "root", "Machu Picchu (2 days)", {"days": 2}),
)
_RECIPES = tree(
    ("root", None, "Write a software specification for a recipe manager", {}),
    ("model", "root", "Data model for recipes and ingredients", {}),
    ("import", "root", "Import from websites", {}),
    ("meals", "root", "Meal planning calendar", {}),
)
_PARTY = tree(
    ("root", None, "Organize a company summer party for 120 staff", {"guests": 120}),
    ("venue", "root", "Venue and catering", {}),
    ("fun", "root", "Entertainment", {}),
    ("inv", "root", "Invitations and RSVPs", {}),
)
_WEDDING = tree(
    ("root", None, "Plan a wedding for 80 guests", {"guests": 80}),
    ("venue", "root", "Venue and date", {}),
    ("food", "root", "Catering and cake", {}),
    ("photo", "root", "Photography", {}),
    ("music", "root", "Music and first dance", {}),
)
_PYTHON = tree(
    ("root", None, "Design a 12-week introductory Python course", {"weeks": 12}),
    ("basics", "root", "Basics: variables and control flow (3 weeks)", {"weeks": 3}),
    ("funcs", "root", "Functions and modules (3 weeks)", {"weeks": 3}),
    ("files", "root", "Files and testing (3 weeks)", {"weeks": 3}),
    ("proj", "root", "Capstone project (3 weeks)", {"weeks": 3}),
)
_MOVE = tree(
    ("root", None, "Move house from Leeds to Bristol", {}),
    ("flat", "root", "Find a flat in Bristol", {}),
    ("pack", "root", "Pack and hire movers", {}),
    ("admin", "root", "Change address and utilities", {}),
)
_SWISS = tree(
    ("root", None, "Plan a week in Switzerland", {}),
    ("zrh", "root", "Zurich (2 days)", {"days": 2}),
    ("luz", "root", "Lucerne and Mount Pilatus (2 days)", {"days": 2}),
    ("int", "root", "Interlaken and the Bernese Oberland (3 days)", {"days": 3}),
    ("zrh1", "zrh", "Old town and the lake shore (1 day)", {"days": 1}),
    ("zrh2", "zrh", "Kunsthaus and Rietberg museums (1 day)", {"days": 1}),
)

DEV: list[Case] = [
    # trips
    case(
        "italy-boilerplate",
        "trip",
        True,
        root("Plan a 9-day trip to Italy", days=9),
        "root",
        [
            P("Plan a 3-day trip to Rome", "Colosseum, Vatican, Trastevere", days=3),
            P("Plan a 3-day trip to Florence", "Uffizi, Duomo, Oltrarno", days=3),
            P("Plan a 3-day trip to Venice", "Grand Canal, Murano, Burano", days=3),
        ],
        "titles share boilerplate, content (cities) is distinct; days add up",
    ),
    case(
        "portugal-same-city",
        "trip",
        False,
        root("Plan a 10-day trip to Portugal", days=10),
        "root",
        [
            P("Visit Lisbon (3 days)", days=3),
            P("Lisbon food and fado night (2 days)", days=2),
            P("Porto and the Douro valley (3 days)", days=3),
            P("Day trip to Lisbon's Belém district (2 days)", days=2),
        ],
        "Lisbon planned in three of four stages",
        expect=("overlap", "Lisbon"),
    ),
    case(
        "rome-day-by-day",
        "trip",
        True,
        root("Rome (3 days)", days=3),
        "root",
        [
            P("Day 1: Rome - Colosseum and the Forum", days=1),
            P("Day 2: Rome - Vatican Museums and St Peter's", days=1),
            P("Day 3: Trastevere food walk", days=1),
        ],
        "a day-by-day split: Rome is the frame, each day has its own sights",
    ),
    case(
        "barcelona-days-dont-add",
        "trip",
        False,
        root("Explore Barcelona (3 days)", days=3),
        "root",
        [
            P("Gothic Quarter walk (2 days)"),
            P("Sagrada Familia and Park Guell (1 day)"),
            P("Montjuic and the beach (2 days)"),
        ],
        "no days facts and the titles say 2+1+2 = 5 days for a 3-day parent",
        expect=("facts", "days"),
    ),
    case(
        "barcelona-days-add",
        "trip",
        True,
        root("Explore Barcelona (3 days)", days=3),
        "root",
        [
            P("Gothic Quarter and El Born (1 day)", days=1),
            P("Sagrada Familia and Park Guell (1 day)", days=1),
            P("Montjuic and Barceloneta beach (1 day)", days=1),
        ],
        "days declared, agree with titles, add up",
    ),
    case(
        "scotland-units-contradict",
        "trip",
        False,
        root("Scotland road trip (7 days)", days=7),
        "root",
        [
            P("Edinburgh old town (3 days)", days=1),
            P("Isle of Skye (2 days)", days=3),
            P("Loch Ness and Inverness (3 days)", days=3),
        ],
        "titles say 3 and 2 days where the facts say 1 and 3",
        expect=("units", "Edinburgh"),
    ),
    case(
        "peru-repeats-root-stage",
        "trip",
        False,
        _PERU,
        "cusco",
        [
            P("Cusco old town walk (1 day)", days=1),
            P("Sacred Valley markets (1 day)", days=1),
            P("Hike to Machu Picchu (1 day)", days=1),
        ],
        "Machu Picchu is already a root stage",
        expect=("repeats", "Hike to Machu Picchu"),
    ),
    case(
        "vietnam-transfer-stage",
        "trip",
        True,
        root("Plan a 10-day trip to Vietnam", days=10),
        "root",
        [
            P("Hanoi street food and the Old Quarter (3 days)", days=3),
            P("Ha Long Bay overnight boat (2 days)", days=2),
            P("Travel from Hanoi to Hoi An by train (1 day)", days=1),
            P("Hoi An tailors and lantern nights (4 days)", days=4),
        ],
        "the transfer names two other stages' cities as its endpoints: not a repeat",
    ),
    case(
        "swiss-repeats-root-stage",
        "trip",
        False,
        _SWISS,
        "int",
        [
            P("Jungfraujoch by cogwheel train (1 day)", days=1),
            P("Ride up Mount Pilatus (1 day)", days=1),
            P("Lake Brienz boat and Giessbach falls (1 day)", days=1),
        ],
        "Mount Pilatus is the root stage 'Lucerne and Mount Pilatus'",
        expect=("repeats", "Ride up Mount Pilatus"),
    ),
    case(
        "swiss-endpoint-ok",
        "trip",
        True,
        _SWISS,
        "int",
        [
            P("Train from Lucerne to Interlaken, lakeside walk (1 day)", days=1),
            P("Jungfraujoch by cogwheel train (1 day)", days=1),
            P("Lake Brienz boat and Giessbach falls (1 day)", days=1),
        ],
        "Lucerne appears only as where the train leaves from",
    ),
    # software
    case(
        "notes-app-components",
        "software",
        True,
        root("Write a software specification for a command-line notes app with sync"),
        "root",
        [
            P("Note storage format on disk", "one Markdown file per note, front matter for tags"),
            P("CLI commands and flags", "new, edit, list, search, rm"),
            P("Folder sync and conflict merging", "three-way merge of edits made offline"),
            P("Search and tagging", "full-text index, tag filters"),
        ],
        "one component per child",
    ),
    case(
        "library-api-overlap",
        "software",
        False,
        root("Specify a REST API for a library catalogue"),
        "root",
        [
            P("Search endpoint for titles and authors"),
            P("Author and title lookup endpoints"),
            P("Loans and returns"),
            P("Admin: add and remove copies"),
        ],
        "two children both specify looking up titles and authors",
        expect=("overlap", "author"),
    ),
    case(
        "photo-backend-good",
        "software",
        True,
        root("Design the backend for a photo-sharing app"),
        "root",
        [
            P("PostgreSQL schema for users, albums and photos"),
            P("Image upload pipeline and thumbnails"),
            P("Feed ranking service"),
            P("Push notifications for likes and comments"),
        ],
        "distinct components",
    ),
    case(
        "recipes-repeats-parent",
        "software",
        False,
        _RECIPES,
        "import",
        [P("Import from websites"), P("HTML parsing of recipe pages"), P("Duplicate recipe detection")],
        "the first child is its parent again",
        expect=("repeats", "Import from websites"),
    ),
    # events
    case(
        "devconf-workstreams",
        "event",
        True,
        root("Organize a one-day developer conference for 300 people", people=300),
        "root",
        [
            P("Venue and AV"),
            P("Speakers and call for papers"),
            P("Sponsorship packages"),
            P("Catering and dietary needs"),
            P("Registration and ticketing"),
        ],
        "one workstream each; 'people' is not split among workstreams",
    ),
    case(
        "devconf-venue-twice",
        "event",
        False,
        root("Organize a one-day developer conference for 300 people", people=300),
        "root",
        [
            P("Venue booking and contract"),
            P("Sign the venue contract and pay the deposit"),
            P("Speaker travel and hotels"),
            P("Catering"),
        ],
        "the venue contract is planned twice",
        expect=("overlap", "venue"),
    ),
    case(
        "party-repeats-root-stage",
        "event",
        False,
        _PARTY,
        "fun",
        [P("Live band for the evening"), P("Photo booth with props"), P("Invitations and RSVP reminders")],
        "invitations are the root stage 'Invitations and RSVPs'",
        expect=("repeats", "Invitations and RSVP reminders"),
    ),
    # research
    case(
        "sleep-study-good",
        "research",
        True,
        root("Run a 6-month study on remote work and sleep quality", months=6),
        "root",
        [
            P("Literature review (1 month)", months=1),
            P("Ethics approval and recruiting 200 participants (1 month)", months=1),
            P("Data collection with sleep trackers (3 months)", months=3),
            P("Analysis and paper write-up (1 month)", months=1),
        ],
        "a timeline that adds up",
    ),
    case(
        "sleep-study-months-dont-add",
        "research",
        False,
        root("Run a 6-month study on remote work and sleep quality", months=6),
        "root",
        [
            P("Literature review", months=1),
            P("Ethics approval and recruiting", months=2),
            P("Data collection with sleep trackers", months=3),
            P("Analysis and paper write-up", months=2),
        ],
        "1+2+3+2 = 8 months for a 6-month study",
        expect=("facts", "months"),
    ),
    case(
        "microplastics-overlap",
        "research",
        False,
        root("Write a literature review on microplastics in rivers"),
        "root",
        [
            P("Search Scopus for papers"),
            P("Scopus search strategy and keywords"),
            P("Synthesis of findings by river type"),
            P("Write the discussion"),
        ],
        "two children both plan the Scopus search",
        expect=("overlap", "Scopus"),
    ),
    # home renovation
    case(
        "kitchen-budget-adds",
        "renovation",
        True,
        root("Renovate a small kitchen on a EUR 15,000 budget", budget_eur=15000),
        "root",
        [
            P("Cabinets and countertops", budget_eur=7000),
            P("Plumbing and a new sink", budget_eur=2500),
            P("Electrical work and lighting", budget_eur=2500),
            P("Flooring and wall tiles", budget_eur=3000),
        ],
        "trades split the budget exactly",
    ),
    case(
        "kitchen-budget-over",
        "renovation",
        False,
        root("Renovate a small kitchen on a EUR 15,000 budget", budget_eur=15000),
        "root",
        [
            P("Cabinets and countertops", budget_eur=7000),
            P("Plumbing and a new sink", budget_eur=2500),
            P("Electrical work and lighting", budget_eur=2500),
            P("Flooring and wall tiles", budget_eur=4000),
        ],
        "16,000 of a 15,000 budget",
        expect=("facts", "budget_eur"),
    ),
    case(
        "bathroom-amounts-contradict",
        "renovation",
        False,
        root("Renovate the bathroom", budget_eur=6000),
        "root",
        [
            P("New shower and tiling (EUR 3,000)", budget_eur=2000),
            P("Vanity and mirror (EUR 1,500)", budget_eur=1500),
            P("Ventilation fan and lighting (EUR 1,000)", budget_eur=2500),
        ],
        "two titles state amounts their facts contradict",
        expect=("units", "shower"),
    ),
    # wedding
    case(
        "wedding-good",
        "wedding",
        True,
        root("Plan a wedding for 80 guests", guests=80),
        "root",
        [
            P("Book the venue and date"),
            P("Hire a photographer"),
            P("Catering and cake tasting"),
            P("Invitations and RSVPs"),
            P("Music and the first dance"),
        ],
        "distinct suppliers and tasks; guests are not split",
    ),
    case(
        "wedding-vague",
        "wedding",
        False,
        root("Plan a wedding for 80 guests", guests=80),
        "root",
        [P("Venue"), P("Other stuff"), P("Misc tasks"), P("Various things to do")],
        "three of four children say nothing",
        expect=("vagueness", "Misc"),
    ),
    case(
        "wedding-repeats-root-stage",
        "wedding",
        False,
        _WEDDING,
        "venue",
        [P("Visit three venues"), P("Compare venue quotes"), P("Cake tasting and catering menu")],
        "catering and cake are the root stage 'Catering and cake'",
        expect=("repeats", "Cake tasting and catering menu"),
    ),
    # course syllabus
    case(
        "python-course-good",
        "course",
        True,
        root("Design a 12-week introductory Python course", weeks=12),
        "root",
        [
            P("Variables, types and control flow (3 weeks)", weeks=3),
            P("Functions and modules (3 weeks)", weeks=3),
            P("Files, errors and testing (3 weeks)", weeks=3),
            P("Capstone project (3 weeks)", weeks=3),
        ],
        "weeks add up, topics distinct",
    ),
    case(
        "python-course-repeats-stage",
        "course",
        False,
        _PYTHON,
        "files",
        [
            P("Reading and writing files (1 week)", weeks=1),
            P("Unit tests with pytest (1 week)", weeks=1),
            P("Writing functions and importing modules (1 week)", weeks=1),
        ],
        "functions and modules are the root stage 'Functions and modules'",
        expect=("repeats", "Writing functions and importing modules"),
    ),
    case(
        "python-course-dicts-twice",
        "course",
        False,
        root("Data structures unit (2 weeks)", weeks=2),
        "root",
        [P("Lists and dictionaries", weeks=1), P("Dictionaries and sets", weeks=1)],
        "dictionaries are taught twice",
        expect=("overlap", "dictionaries"),
    ),
    # product launch
    case(
        "app-launch-good",
        "launch",
        True,
        root("Launch a budgeting app on iOS and Android"),
        "root",
        [
            P("Beta test with 50 users (4 weeks)"),
            P("App Store and Google Play listings"),
            P("Press kit and launch blog post"),
            P("Paid social ads (EUR 5,000)"),
        ],
        "distinct launch workstreams",
    ),
    case(
        "app-launch-techcrunch-twice",
        "launch",
        False,
        root("Launch a budgeting app on iOS and Android"),
        "root",
        [
            P("Press release for TechCrunch"),
            P("TechCrunch and The Verge outreach"),
            P("App Store listing"),
            P("Launch day on Product Hunt"),
        ],
        "TechCrunch is planned in two children",
        expect=("overlap", "TechCrunch"),
    ),
    # fitness, moving
    case(
        "half-marathon-good",
        "fitness",
        True,
        root("Train for a half marathon in 12 weeks", weeks=12),
        "root",
        [
            P("Base building (4 weeks)", weeks=4),
            P("Speed work and intervals (4 weeks)", weeks=4),
            P("Long runs and taper (4 weeks)", weeks=4),
        ],
        "training blocks add up",
    ),
    case(
        "move-repeats-parent",
        "moving",
        False,
        _MOVE,
        "pack",
        [P("Pack and hire movers"), P("Buy boxes and tape"), P("Moving day logistics")],
        "the first child is its parent again",
        expect=("repeats", "Pack and hire movers"),
    ),
]


# -- held-out set (written after the design was frozen; not used to tune) ----------------------

_LAUNCH = tree(
    ("root", None, "Launch an open-source database client", {}),
    ("docs", "root", "Documentation site and tutorials", {}),
    ("release", "root", "Release v1.0 on GitHub and Homebrew", {}),
    ("community", "root", "Community: Discord server and contributor guide", {}),
)
_GREECE = tree(
    ("root", None, "Plan a 12-day island hopping trip in Greece", {}),
    ("ath", "root", "Athens (3 days)", {"days": 3}),
    ("san", "root", "Santorini (4 days)", {"days": 4}),
    ("nax", "root", "Naxos (5 days)", {"days": 5}),
    ("ath1", "ath", "Acropolis and the Plaka (1 day)", {"days": 1}),
    ("ath2", "ath", "National Archaeological Museum (1 day)", {"days": 1}),
    ("ath3", "ath", "Day trip to Cape Sounion (1 day)", {"days": 1}),
)
_THESIS = tree(
    ("root", None, "Write a master's thesis on urban heat islands", {"months": 9}),
    ("lit", "root", "Literature review (2 months)", {"months": 2}),
    ("data", "root", "Satellite data and field measurements (3 months)", {"months": 3}),
    ("model", "root", "Statistical model of land cover and temperature (2 months)", {"months": 2}),
    ("write", "root", "Writing and defence (2 months)", {"months": 2}),
)
_LOFT = tree(
    ("root", None, "Convert the attic into a bedroom", {"budget_eur": 30000}),
    ("struct", "root", "Structural work and dormer window", {"budget_eur": 14000}),
    ("insul", "root", "Insulation and drywall", {"budget_eur": 6000}),
    ("elec", "root", "Electrics, heating and lighting", {"budget_eur": 5000}),
    ("finish", "root", "Flooring, paint and built-in wardrobe", {"budget_eur": 5000}),
)

HELDOUT: list[Case] = [
    case(
        "ho-greece-good",
        "trip",
        True,
        root("Plan a 12-day island hopping trip in Greece", days=12),
        "root",
        [P("Athens (3 days)", days=3), P("Santorini (4 days)", days=4), P("Naxos (5 days)", days=5)],
        "one island or city per stage, days add up",
    ),
    case(
        "ho-greece-repeat-elsewhere",
        "trip",
        False,
        _GREECE,
        "nax",
        [
            P("Naxos old town and Portara (2 days)", days=2),
            P("Beaches of Plaka and Agios Prokopios (2 days)", days=2),
            P("Acropolis sunset visit (1 day)", days=1),
        ],
        "the Acropolis is already planned under Athens",
        expect=("repeats", "Acropolis sunset visit"),
    ),
    case(
        "ho-greece-ferry-ok",
        "trip",
        True,
        _GREECE,
        "san",
        [
            P("Ferry from Athens to Santorini, Fira at sunset (1 day)", days=1),
            P("Oia and the caldera hike (1 day)", days=1),
            P("Akrotiri ruins and Red Beach (1 day)", days=1),
            P("Wine tasting in Pyrgos (1 day)", days=1),
        ],
        "Athens is only the ferry's port of departure",
    ),
    case(
        "ho-cli-release-overlap",
        "software",
        False,
        root("Launch an open-source database client"),
        "root",
        [
            P("Homebrew formula and release notes"),
            P("Publish the Homebrew release"),
            P("Documentation site"),
            P("Discord community"),
        ],
        "the Homebrew release is planned twice",
        expect=("overlap", "Homebrew"),
    ),
    case(
        "ho-cli-repeats-stage",
        "software",
        False,
        _LAUNCH,
        "docs",
        [
            P("Getting-started tutorial"),
            P("API reference generated from docstrings"),
            P("Contributor guide and code of conduct"),
        ],
        "the contributor guide is the 'Community' root stage's",
        expect=("repeats", "Contributor guide and code of conduct"),
    ),
    case(
        "ho-thesis-good",
        "research",
        True,
        _THESIS,
        "data",
        [
            P("Download Landsat 8 thermal imagery (1 month)", months=1),
            P("Install 20 temperature loggers across the city (1 month)", months=1),
            P("Clean and align the measurements (1 month)", months=1),
        ],
        "data tasks, months add up",
    ),
    case(
        "ho-thesis-months-missing",
        "research",
        False,
        _THESIS,
        "model",
        [P("Land cover classification (1 month)"), P("Regression of temperature on land cover (2 months)")],
        "no months facts and the titles say 3 months for a 2-month stage",
        expect=("facts", "months"),
    ),
    case(
        "ho-loft-budget-good",
        "renovation",
        True,
        _LOFT,
        "struct",
        [
            P("Structural engineer and permits", budget_eur=2000),
            P("Steel beams and floor joists", budget_eur=7000),
            P("Dormer window", budget_eur=5000),
        ],
        "budget adds up, distinct items",
    ),
    case(
        "ho-loft-repeats-stage",
        "renovation",
        False,
        _LOFT,
        "struct",
        [
            P("Structural engineer and permits", budget_eur=2000),
            P("Steel beams and floor joists", budget_eur=7000),
            P("Dormer window with insulation and drywall", budget_eur=5000),
        ],
        "insulation and drywall are the root stage 'Insulation and drywall'",
        expect=("repeats", "Dormer window with insulation"),
    ),
    case(
        "ho-gala-good",
        "event",
        True,
        root("Organize a charity gala dinner for 250 guests (EUR 40,000)", guests=250, budget_eur=40000),
        "root",
        [
            P("Ballroom hire at the Grand Hotel", budget_eur=12000),
            P("Three-course dinner and wine", budget_eur=18000),
            P("Auction lots and auctioneer", budget_eur=4000),
            P("Band and sound system", budget_eur=6000),
        ],
        "budget adds up; guests are not split",
    ),
    case(
        "ho-gala-units",
        "event",
        False,
        root("Organize a charity gala dinner for 250 guests (EUR 40,000)", guests=250, budget_eur=40000),
        "root",
        [
            P("Ballroom hire (EUR 10,000)", budget_eur=12000),
            P("Three-course dinner and wine (EUR 18,000)", budget_eur=18000),
            P("Auction lots and auctioneer", budget_eur=4000),
            P("Band and sound system", budget_eur=6000),
        ],
        "the ballroom title says EUR 10,000, its fact 12,000",
        expect=("units", "Ballroom"),
    ),
    case(
        "ho-syllabus-workshop-minutes",
        "course",
        True,
        root("Run a 3-hour intro to Git workshop", minutes=180),
        "root",
        [
            P("Commits and history (45 minutes)", minutes=45),
            P("Branches and merging (1 hour)", minutes=60),
            P("Remotes and pull requests (45 minutes)", minutes=45),
            P("Exercises on a shared repo (30 minutes)", minutes=30),
        ],
        "minutes add up; '1 hour' agrees with 60 minutes",
    ),
    case(
        "ho-wedding-same-supplier",
        "wedding",
        False,
        root("Plan a garden wedding for 60 guests", guests=60),
        "root",
        [
            P("Hire Bloom & Petal for the flowers"),
            P("Bouquets and table flowers from Bloom & Petal"),
            P("Marquee hire"),
            P("Food trucks for dinner"),
        ],
        "the same florist and flowers planned twice",
        expect=("overlap", "Bloom"),
    ),
    case(
        "ho-launch-vague",
        "launch",
        False,
        root("Launch a reusable coffee cup brand"),
        "root",
        [P("Marketing"), P("Other launch stuff"), P("Next steps")],
        "two of three children say nothing",
        expect=("vagueness", "Next steps"),
    ),
]


# -- scoring --------------------------------------------------------------------------------------


ALL = DEV + HELDOUT


# -- verdicts --------------------------------------------------------------------------------------

Verdict = Callable[[Case], tuple[bool, list[Check]]]


def new_verdict(c: Case) -> tuple[bool, list[Check]]:
    """The critics as a scorer runs them (no spec constraints, limits 2..6, threshold 60)."""
    checks = cc.run_checks(
        c.parent, c.children, relatives=cc.relatives_in_tree(c.tree, c.node), depth=c.depth
    )
    return cc.combine(checks)[1], checks


def old_critics(rev: str | None = None) -> types.ModuleType:
    """The word-level critics this package replaced: ``specswarm/plan/critics.py`` as it was at
    ``rev`` (default: the last commit that had it), loaded from git into a module of its own."""
    path = "specswarm/plan/critics.py"
    if rev is None:
        gone = subprocess.run(
            ["git", "log", "-1", "--diff-filter=D", "--format=%H", "--", path],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        rev = f"{gone}^" if gone else "HEAD"
    source = subprocess.run(
        ["git", "show", f"{rev}:{path}"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout
    module = types.ModuleType("old_critics")
    exec(compile(source, f"{rev}:{path}", "exec"), module.__dict__)  # noqa: S102 - our own history
    return module


def old_verdict(old: types.ModuleType, c: Case, *, generous: bool = False) -> tuple[bool, list[Check]]:
    """The replaced critics as the scorer called them: goal = root title, elsewhere = the titles
    of the node's siblings, no spec constraints. ``generous``: also a ``sum`` constraint
    (applies_to all) for every numeric fact of the parent, as a spec could declare."""
    siblings = [
        n.title
        for nid, n in c.tree.items()
        if n.parent == c.parent.parent and nid != c.node and c.parent.parent is not None
    ]
    constraints = []
    if generous:
        for k, v in c.parent.facts.items():
            if isinstance(v, int | float) and not isinstance(v, bool):
                constraints.append(Constraint("sum", field=k, total=v, applies_to="all"))
    checks = old.run_checks(
        c.parent,
        list(c.children),
        goal=c.tree["root"].title,
        constraints=constraints,
        min_children=2,
        max_children=6,
        depth=c.depth,
        elsewhere=siblings,
    )
    return bool(old.combine(checks, None, 0.0, 60.0)[1]), list(checks)


OLD_EQUIVALENT = {
    "overlap": {"overlap", "duplicates"},
    "repeats": {"duplicates", "scope"},
    "facts": {"constraints"},
    "units": {"constraints"},
    "vagueness": {"vagueness"},
}
"""Which of the replaced critics' checks would be the right reason for each check."""


def right_reason(c: Case, approved: bool, checks: Sequence[Check], *, old: bool = False) -> bool:
    """Right verdict for the right reason. A good case: approved. A bad case: rejected, and the
    expected check failed with a problem that starts at the expected child or names the
    expected item (``#k "<title containing it>" ...`` or "... plan <it>"); for the replaced
    critics, a check of the equivalent kind failed (their notes are not compared)."""
    if c.good or c.expect is None:
        return approved == c.good
    if approved:
        return False
    name, word = c.expect
    w = word.lower()
    for ch in checks:
        if ch.passed:
            continue
        if old:
            if ch.name in OLD_EQUIVALENT.get(name, set()):
                return True
            continue
        if ch.name != name:
            continue
        for problem in ch.note.lower().split("; "):
            head, _, _ = problem.partition(" repeats ")
            if w in head or (name != "repeats" and w in problem):
                return True
    return False


def accuracy(cases: Sequence[Case], verdict: Verdict, *, old: bool = False) -> tuple[int, int, int, int, int]:
    """(correct verdicts, total, bad cases passed, good cases rejected, right for the right reason)."""
    right = fp = fn = why = 0
    for c in cases:
        ok, checks = verdict(c)
        right += ok == c.good
        fp += ok and not c.good
        fn += (not ok) and c.good
        why += right_reason(c, ok, checks, old=old)
    return right, len(cases), fp, fn, why


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="accuracy of the critics on the hand-labelled splits")
    ap.add_argument("--verbose", "-v", action="store_true", help="print every case")
    ap.add_argument("--old", action="store_true", help="also the replaced word-level critics (from git)")
    ap.add_argument("--old-rev", default=None, help="git revision to read them from")
    args = ap.parse_args(argv)
    rows: list[tuple[str, Verdict, bool]] = [("current (specswarm.critics)", new_verdict, False)]
    if args.old or args.old_rev:
        old = old_critics(args.old_rev)
        rows += [
            ("replaced (word-level plan/critics.py)", lambda c: old_verdict(old, c), True),
            (
                "replaced + sum constraints for parent facts",
                lambda c: old_verdict(old, c, generous=True),
                True,
            ),
        ]
    sets = [("dev", DEV), ("held-out", HELDOUT), ("all", ALL)]
    domains = sorted({c.domain for c in ALL})
    print(f"{len(DEV)} dev + {len(HELDOUT)} held-out cases, {len(domains)} domains: {', '.join(domains)}")
    print(f"{'critics':46} " + "  ".join(f"{name:>30}" for name, _ in sets))
    for label, fn, is_old in rows:
        cells = []
        for _, cs in sets:
            r, n, fp, fnn, why = accuracy(cs, fn, old=is_old)
            cells.append(f"{r:>2}/{n:<2} {100 * r / n:5.1f}% {fp:>2}FP {fnn}FN why {why:>2}")
        print(f"{label:46} " + "  ".join(f"{x:>30}" for x in cells))
    print("FP = bad split approved; FN = good split rejected; why = right verdict for the right reason")
    if args.verbose:
        for name, cs in sets[:2]:
            print(f"\n== {name} ==")
            for c in cs:
                ok, checks = new_verdict(c)
                mark = ("ok " if right_reason(c, ok, checks) else "ok?") if ok == c.good else "XX "
                human = "good" if c.good else "bad"
                print(f"{mark}{c.name} [{c.domain}] human={human} critics={'approve' if ok else 'reject'}")
                for ch in checks:
                    if not ch.passed:
                        print(f"      {ch.name}: {ch.note}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
