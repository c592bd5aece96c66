"""Overlap and repeats (:mod:`specswarm.critics.overlap`): siblings that share content, not
phrasing, overlap (boilerplate titles, frames, transfers and process steps do not); a child that
repeats its parent, an ancestor or a node planned elsewhere in the tree fails ``repeats``; in
trips, software, events, research, renovation, weddings, courses and launches."""

from __future__ import annotations

import pytest

from specswarm import critics
from specswarm import critics as cc
from specswarm.critics import Check, Part, check_overlap, check_repeats, check_split, relatives_in_tree
from specswarm.protocol.bodies import Child
from specswarm.spec import spec_from_json
from specswarm.testing.synth import minimal_spec
from tests.critics.kit import GOOD, PERU, ROOT, Node, P, child, verdict


def test_repeats_catches_a_child_that_repeats_the_parent() -> None:
    c = check_repeats(ROOT, [child("Plan a two week trip to Japan!"), *GOOD[:2]])
    assert not c.passed
    assert c.note == (
        '#1 "Plan a two week trip to Japan!" repeats its parent "Plan a two-week trip to Japan": '
        "it adds nothing to it: plan each thing in one place only"
    )


def test_overlap_fails_alone() -> None:
    overlapping = [
        child("Book Kyoto hotel rooms", "Compare Kyoto hotel rooms near Gion and book"),
        child("Reserve Kyoto hotel rooms", "Compare Kyoto hotel rooms near Gion, then reserve"),
        child("Tokyo museum passes", "Buy Grutto pass for Ueno museums"),
    ]
    c = check_overlap(ROOT, overlapping)
    assert not c.passed
    assert c.note.startswith('#1 "Book Kyoto hotel rooms" and #2 "Reserve Kyoto hotel rooms" both plan Kyoto')
    assert check_overlap(ROOT, GOOD).passed


def test_a_child_repeating_another_branch_fails_repeats() -> None:
    spec = spec_from_json(minimal_spec())
    nodes = {
        "root": _Node("Plan a two-week trip to Japan", None),
        "t": _Node("Visit Tokyo (5 days)", "root"),
        "k": _Node("Visit Kyoto (4 days)", "root"),
        "f": _Node("Hike Mount Fuji (2 days)", "root"),
    }
    children = [
        Child("Fushimi Inari Shrine at dawn", leaf=True),
        Child("Hike Mount Fuji (2 days)", leaf=True),
        Child("Kiyomizu-dera and Gion walk", leaf=True),
    ]
    checks = {
        c.name: c for c in check_split(spec, nodes["k"], children, 1, relatives=relatives_in_tree(nodes, "k"))
    }
    assert not checks["repeats"].passed and checks["repeats"].score == 67
    assert checks["repeats"].note == (
        '#2 "Hike Mount Fuji (2 days)" repeats the root stage "Hike Mount Fuji (2 days)" '
        "(same Mount Fuji and Hike): plan each thing in one place only"
    )
    alone = {c.name: c for c in check_split(spec, nodes["k"], children, 1)}
    assert alone["repeats"].passed and alone["repeats"].score == 100


class _Node:
    def __init__(self, title: str, parent: str | None, detail: str = "") -> None:
        self.title, self.parent, self.detail = title, parent, detail
        self.facts: dict[str, int | str] = {}


def test_boilerplate_titles_are_not_overlap() -> None:
    checks, ok = verdict(
        P("Plan a 9-day trip to Italy", days=9),
        [
            P("Plan a 3-day trip to Rome", days=3),
            P("Plan a 3-day trip to Florence", days=3),
            P("Plan a 3-day trip to Venice", days=3),
        ],
    )
    assert checks["overlap"] == Check(
        "overlap", 100, True, "no two children plan the same place, activity or component"
    )
    assert ok


def test_boilerplate_with_two_children_is_not_overlap() -> None:
    checks, ok = verdict(
        P("Plan a 6-day trip to Italy", days=6),
        [P("Plan a 3-day trip to Rome", days=3), P("Plan a 3-day trip to Florence", days=3)],
    )
    assert checks["overlap"].passed
    assert ok


def test_same_city_in_three_of_four_stages_fails() -> None:
    checks, ok = verdict(
        P("Plan a 10-day trip to Portugal", days=10),
        [
            P("Visit Lisbon (3 days)", days=3),
            P("Lisbon food and fado night (2 days)", days=2),
            P("Porto and the Douro valley (3 days)", days=3),
            P("Day trip to Lisbon's Belém district (2 days)", days=2),
        ],
    )
    assert checks["overlap"] == Check(
        "overlap",
        25,
        False,
        '#1 "Visit Lisbon (3 days)", #2 "Lisbon food and fado night (2 days)" and '
        '#4 "Day trip to Lisbon\'s Belém district (2 days)" all plan Lisbon: '
        "give each place, activity or component to one child",
    )
    assert not ok


def test_a_term_every_child_shares_is_the_theme() -> None:
    # Rome is in all three children: the split's theme, not an overlap (the parent says Italy)
    checks, _ = verdict(
        P("A week in Italy"),
        [P("Rome: Colosseum and the Forum"), P("Rome: Vatican Museums"), P("Rome: Trastevere food walk")],
    )
    assert checks["overlap"].passed
    assert checks["overlap"].note.endswith("(shared by every child, not counted: Rome)")


def test_parent_words_are_context_not_overlap() -> None:
    # "sync" is in the parent's title: two children about sync do not overlap because of it
    checks, _ = verdict(
        P("Sync and conflict handling for the notes app"),
        [
            P("Sync file layout in the shared folder"),
            P("Conflict detection on sync"),
            P("Three-way merge of edited notes"),
        ],
    )
    assert checks["overlap"].passed


def test_shared_name_in_titles_overlaps_in_a_launch() -> None:
    checks, ok = verdict(
        P("Launch a budgeting app on iOS and Android"),
        [P("Press release for TechCrunch"), P("TechCrunch and The Verge outreach"), P("App Store listing")],
    )
    assert checks["overlap"].note == (
        '#1 "Press release for TechCrunch" and #2 "TechCrunch and The Verge outreach" both plan TechCrunch: '
        "give each place, activity or component to one child"
    )
    assert not ok


def test_two_shared_common_terms_overlap_in_a_software_spec() -> None:
    checks, ok = verdict(
        P("Specify a REST API for a library catalogue"),
        [
            P("Search endpoint for titles and authors"),
            P("Author and title lookup endpoints"),
            P("Loans and returns"),
        ],
    )
    assert not checks["overlap"].passed
    assert checks["overlap"].note.startswith(
        '#1 "Search endpoint for titles and authors" and #2 "Author and title lookup endpoints" both plan'
    )
    assert not ok


def test_one_shared_object_of_different_activities_is_not_overlap() -> None:
    checks, _ = verdict(
        P("Plan a wedding for 80 guests", guests=80),
        [P("Book the venue"), P("Decorate the venue"), P("Hire a photographer"), P("Send invitations")],
    )
    assert checks["overlap"].passed


def test_same_topic_listed_in_two_course_units_overlaps() -> None:
    checks, ok = verdict(
        P("Data structures unit (2 weeks)", weeks=2),
        [P("Lists and dictionaries", weeks=1), P("Dictionaries and sets", weeks=1)],
    )
    assert checks["overlap"].note == (
        '#1 "Lists and dictionaries" and #2 "Dictionaries and sets" both plan dictionaries: '
        "give each place, activity or component to one child"
    )
    assert not ok


def test_day_by_day_split_with_a_frame_city_passes() -> None:
    checks, ok = verdict(
        P("Rome (3 days)", days=3),
        [
            P("Day 1: Rome - Colosseum and the Forum", days=1),
            P("Day 2: Rome - Vatican Museums and St Peter's", days=1),
            P("Day 3: Trastevere food walk", days=1),
        ],
    )
    assert checks["overlap"].passed
    assert ok


def test_the_same_sight_on_two_days_fails() -> None:
    checks, _ = verdict(
        P("Rome (3 days)", days=3),
        [
            P("Day 1: Colosseum and the Forum", days=1),
            P("Day 2: Vatican Museums", days=1),
            P("Day 3: Colosseum by night", days=1),
        ],
    )
    assert not checks["overlap"].passed
    assert "both plan Colosseum" in checks["overlap"].note


def test_transfer_between_stages_is_not_overlap() -> None:
    checks, ok = verdict(
        P("Plan a 10-day trip to Vietnam", days=10),
        [
            P("Hanoi street food and the Old Quarter (3 days)", days=3),
            P("Ha Long Bay overnight boat (2 days)", days=2),
            P("Travel from Hanoi to Hoi An by train (1 day)", days=1),
            P("Hoi An tailors and lantern nights (4 days)", days=4),
        ],
    )
    assert checks["overlap"].passed
    assert ok


def test_process_steps_on_one_dataset_are_not_overlap() -> None:
    checks, _ = verdict(
        P("Write a paper on air pollution and asthma"),
        [
            P("Download EPA AirData for 2015-2020"),
            P("Clean the EPA AirData records"),
            P("Model asthma admissions"),
        ],
    )
    assert checks["overlap"].passed


def test_title_case_does_not_make_every_word_a_name() -> None:
    checks, _ = verdict(
        P("Write A Software Specification For A Todo App"),
        [
            P("Define The Data Model", "tasks, tags and due dates"),
            P("Design The Command Line Interface", "add, list, done"),
            P("Specify The Sync Protocol", "merge edits made on two laptops"),
        ],
    )
    assert checks["overlap"].passed


def test_shared_names_in_details_need_corroboration() -> None:
    # one detail mention of Tokyo in each of two other stages is not a repeat of Tokyo
    checks, _ = verdict(
        P("Plan a week in Japan"),
        [
            P("Tokyo (3 days)", "base in Shinjuku", days=3),
            P("Day trip to Nikko (1 day)", "train from Tokyo", days=1),
            P("Kyoto (3 days)", "arrive from Tokyo by Shinkansen", days=3),
        ],
    )
    assert checks["overlap"].passed


def test_repeat_of_a_root_stage_fails() -> None:
    checks, ok = verdict(
        Part(PERU["cusco"].title, "", PERU["cusco"].facts),
        [
            P("Cusco old town walk (1 day)", days=1),
            P("Sacred Valley markets (1 day)", days=1),
            P("Hike to Machu Picchu (1 day)", days=1),
        ],
        cc.relatives_in_tree(PERU, "cusco"),
    )
    assert checks["repeats"] == Check(
        "repeats",
        67,
        False,
        '#3 "Hike to Machu Picchu (1 day)" repeats the root stage "Machu Picchu (2 days)" '
        "(same Machu Picchu): "
        "plan each thing in one place only",
    )
    assert not ok


def test_child_that_is_its_parent_again_fails() -> None:
    tree = {
        "root": Node("Move house from Leeds to Bristol"),
        "flat": Node("Find a flat in Bristol", "root"),
        "pack": Node("Pack and hire movers", "root"),
    }
    checks, ok = verdict(
        Part("Pack and hire movers"),
        [P("Pack and hire movers"), P("Buy boxes and tape"), P("Moving day logistics")],
        cc.relatives_in_tree(tree, "pack"),
    )
    assert checks["repeats"].note == (
        '#1 "Pack and hire movers" repeats its parent "Pack and hire movers": it adds nothing to it: '
        "plan each thing in one place only"
    )
    assert not ok


def test_child_that_is_only_the_ancestors_frame_fails_but_a_narrower_one_passes() -> None:
    tree = {"root": Node("A week in Japan"), "k": Node("Kyoto temples and gardens", "root")}
    rel = cc.relatives_in_tree(tree, "k")
    checks, _ = verdict(Part("Kyoto temples and gardens"), [P("Kyoto"), P("Moss garden at Saiho-ji")], rel)
    assert checks["repeats"].note.startswith('#1 "Kyoto" repeats its parent "Kyoto temples and gardens"')
    tree = {"root": Node("Book travel"), "fh": Node("Flights and hotels", "root")}
    checks, _ = verdict(
        Part("Flights and hotels"), [P("Flights"), P("Hotels")], cc.relatives_in_tree(tree, "fh")
    )
    assert checks["repeats"].passed


def test_repeat_of_the_root_goal_fails() -> None:
    tree = {
        "root": Node("Plan a two-week trip to Japan"),
        "t": Node("Tokyo (5 days)", "root", facts={"days": 5}),
    }
    checks, _ = verdict(
        Part("Tokyo (5 days)", "", {"days": 5}),
        [P("Plan a two-week trip to Japan", days=2), P("Asakusa and Ueno (3 days)", days=3)],
        cc.relatives_in_tree(tree, "t"),
    )
    assert checks["repeats"].note.startswith(
        '#1 "Plan a two-week trip to Japan" repeats the root goal "Plan a two-week trip to Japan": '
        "it adds nothing"
    )


def test_repeat_of_a_node_planned_in_another_branch_fails() -> None:
    greece = {
        "root": Node("Plan a 12-day island hopping trip in Greece"),
        "ath": Node("Athens (3 days)", "root", facts={"days": 3}),
        "nax": Node("Naxos (5 days)", "root", facts={"days": 5}),
        "ath1": Node("Visit the Acropolis and the Parthenon (1 day)", "ath", facts={"days": 1}),
    }
    checks, ok = verdict(
        Part("Naxos (5 days)", "", {"days": 5}),
        [P("Naxos old town and the Portara (3 days)", days=3), P("Sunset at the Acropolis (2 days)", days=2)],
        cc.relatives_in_tree(greece, "nax"),
    )
    assert checks["repeats"].note == (
        '#2 "Sunset at the Acropolis (2 days)" repeats "Visit the Acropolis and the Parthenon (1 day)", '
        'planned under "Athens (3 days)" (same Acropolis): plan each thing in one place only'
    )
    assert not ok


def test_re_listing_a_root_stage_in_an_event() -> None:
    party = {
        "root": Node("Organize a company summer party for 120 staff", facts={"guests": 120}),
        "venue": Node("Venue and catering", "root"),
        "fun": Node("Entertainment", "root"),
        "inv": Node("Invitations and RSVPs", "root"),
    }
    checks, _ = verdict(
        Part("Entertainment"),
        [P("Live band for the evening"), P("Photo booth with props"), P("Invitations and RSVP reminders")],
        cc.relatives_in_tree(party, "fun"),
    )
    assert checks["repeats"].note.startswith(
        '#3 "Invitations and RSVP reminders" repeats the root stage "Invitations and RSVPs"'
    )


def test_ancestor_words_are_context_for_repeats() -> None:
    # "Kyoto" comes from the parent: a Kyoto child does not repeat the other Kyoto stage for it
    tree = {
        "root": Node("Plan a two-week trip to Japan"),
        "k1": Node("Visit Kyoto (4 days)", "root", facts={"days": 4}),
        "k2": Node("Explore Kyoto's gardens and temples (3 days)", "root", facts={"days": 3}),
    }
    checks, _ = verdict(
        Part("Explore Kyoto's gardens and temples (3 days)", "", {"days": 3}),
        [P("Kyoto's historic neighbourhoods (1 day)", days=1), P("Moss garden at Saiho-ji (2 days)", days=2)],
        cc.relatives_in_tree(tree, "k2"),
    )
    assert checks["repeats"].passed


def test_a_city_named_as_a_transfer_endpoint_is_not_a_repeat() -> None:
    tree = {
        "root": Node("Plan a week in Switzerland"),
        "luz": Node("Lucerne and Mount Pilatus (2 days)", "root", facts={"days": 2}),
        "int": Node("Interlaken (2 days)", "root", facts={"days": 2}),
    }
    checks, ok = verdict(
        Part("Interlaken (2 days)", "", {"days": 2}),
        [
            P("Train from Lucerne to Interlaken, lakeside walk (1 day)", days=1),
            P("Jungfraujoch (1 day)", days=1),
        ],
        cc.relatives_in_tree(tree, "int"),
    )
    assert checks["repeats"].passed
    assert ok


def test_common_words_in_different_places_are_not_repeats() -> None:
    # temples in Tokyo are not the temples of the Kyoto stage; Mount Fuji is Mount Fuji anywhere
    tree = {
        "root": Node("Plan a two-week trip to Japan"),
        "t": Node("Visit Tokyo (5 days)", "root", facts={"days": 5}),
        "k": Node("Explore Kyoto's traditional gardens and temples (3 days)", "root", facts={"days": 3}),
        "f": Node("Hike Mount Fuji (2 days)", "root", facts={"days": 2}),
    }
    checks, _ = verdict(
        Part("Visit Tokyo (5 days)", "", {"days": 5}),
        [
            P("Explore Tokyo's iconic landmarks, temples, and neighborhoods", days=4),
            P("Hike Mount Fuji", days=1),
        ],
        cc.relatives_in_tree(tree, "t"),
    )
    assert checks["repeats"].note == (
        '#2 "Hike Mount Fuji" repeats the root stage "Hike Mount Fuji (2 days)" (same Mount Fuji and Hike): '
        "plan each thing in one place only"
    )


@pytest.mark.parametrize(
    ("second", "repeats"),
    [
        ("Narrow down the list based on expertise and availability", False),
        ("Identify venues in the European city based on availability", True),
    ],
)
def test_titles_that_share_only_based_on_and_one_common_word_are_not_repeats(
    second: str, repeats: bool
) -> None:
    # seen in a real conference run: a speakers' shortlist rejected as a repeat of the venue
    # search because both titles said "based on ... availability"; "based on" is a preposition.
    # The same venue search planned again under the speakers is still a repeat.
    tree = {
        "root": Node("Organize a one-day technical conference for 200 people"),
        "v": Node("Venue planning", "root"),
        "s": Node("Speakers selection", "root"),
        "v1": Node("Select a venue for the conference", "v"),
        "v11": Node("Identify potential venues in the European city based on availability", "v1"),
        "s1": Node("Identify top experts in distributed systems", "s"),
    }
    checks, _ = verdict(
        Part("Identify top experts in distributed systems"),
        [
            P("Search conference programmes for distributed systems talks"),
            P(second),
            P("Invite the shortlisted experts by email"),
        ],
        cc.relatives_in_tree(tree, "s1"),
    )
    assert checks["repeats"].passed is not repeats, checks["repeats"].note


def test_string_facts_count_as_detail() -> None:
    # a string fact is read like the detail: corroborating evidence, not enough on its own
    parent = P("Plan a week in Japan")
    alone = [
        P("Temples", "the Golden Pavilion at Kinkakuji"),
        P("Gardens", "the pond garden of Kinkakuji"),
        P("Food markets"),
    ]
    assert cc.check_overlap(parent, alone).passed  # one name shared detail-to-detail: 0.5
    with_city = [
        P("Temples", "the Golden Pavilion at Kinkakuji", city="Kyoto"),
        P("Gardens", "the pond garden of Kinkakuji", city="Kyoto"),
        P("Food markets", city="Osaka"),
    ]
    check = cc.check_overlap(parent, with_city)
    assert check.note.startswith('#1 "Temples" and #2 "Gardens" both plan Kinkakuji and Kyoto')


def test_a_child_that_restates_its_parent_with_a_generic_head_repeats_it() -> None:
    root = cc.Relative(
        "Write a software specification for a command-line todo-list app with sync", "ancestor"
    )
    stages = [
        cc.Relative(t, "sibling", depth=1, parent_title=root.title)
        for t in ("User Workflow Overview", "Syncing Tasks", "Command Line Interface (CLI)")
    ]
    parent = P("Conflict Resolution")
    bad = cc.check_repeats(
        parent,
        [P("Conflict Resolution Mechanism"), P("Syncing Tasks"), P("Conflict Resolution Process")],
        [root, *stages],
        parent_depth=1,
    )
    assert not bad.passed and bad.score == 0
    assert "restates its parent" in bad.note and "'mechanism'" in bad.note
    # a root stage's very title, though every word of it is the root's context ("sync", "tasks")
    assert 'repeats the root stage "Syncing Tasks" (the same title)' in bad.note
    good = cc.check_repeats(
        parent,
        [
            P("Three-way merge of task files"),
            P("Conflict markers in tasks.json"),
            P("Conflict Resolution Tests"),
        ],
        [root, *stages],
        parent_depth=1,
    )
    assert good.passed, good.note  # "tests" is a part of it, not a generic head


def test_a_child_that_swaps_its_parents_generic_head_for_another_restates_it() -> None:
    # seen with the embedded model: "Conflict resolution strategy" accepted under "Conflict
    # resolution specification" (the same topic, one generic head for another)
    root = cc.Relative(
        "Write a software specification for a command-line todo-list app with sync", "ancestor"
    )
    parent = P("Conflict resolution specification")
    bad = cc.check_repeats(
        parent,
        [
            P("Conflict resolution strategy"),
            P("Offline editing workflow"),
            P("Conflict resolution in the editor"),
        ],
        [root],
        parent_depth=1,
    )
    assert not bad.passed, bad.note
    assert bad.note.startswith(
        '#1 "Conflict resolution strategy" restates its parent "Conflict resolution specification" '
        '(only "specification" changed to "strategy")'
    ), bad.note
    assert "#2" not in bad.note and "#3" not in bad.note  # a part of it, named
    # one topic of a parent with two is a part of it, whatever head each has
    good = cc.check_repeats(
        P("Due date and priority specification"),
        [P("Priority specification"), P("Due date format"), P("Task editing with due and priority")],
        [root],
        parent_depth=1,
    )
    assert good.passed, good.note


def test_a_noun_of_an_action_planned_elsewhere_repeats_it() -> None:
    # seen with the embedded model: "Delete tasks" under the CLI stage and "Task deletion" under
    # the task-management stage, the same requirement written twice
    root = cc.Relative("Write a software specification for a command-line todo-list app", "ancestor")
    cli = cc.Relative("Command-line interface", "sibling", depth=1, parent_title=root.title)
    elsewhere = [
        cc.Relative(t, "elsewhere", depth=2, parent_title=cli.title)
        for t in ("List all tasks", "Delete tasks", "Mark a task as complete")
    ]
    bad = cc.check_repeats(
        P("Task management"),
        [P("Task creation"), P("Task deletion"), P("Task completion"), P("Recurring tasks")],
        [root, cli, *elsewhere],
        parent_depth=1,
    )
    assert not bad.passed, bad.note
    assert bad.note.startswith('#2 "Task deletion" repeats "Delete tasks"'), bad.note
    assert "creation" not in bad.note and "Recurring" not in bad.note


def test_a_child_that_only_swaps_a_hedge_or_adds_measures_repeats_its_parent() -> None:
    # hedges choose without naming ("potential", "identified"); "measures" is a generic head
    root = cc.Relative("Organize a one-day technical conference for 200 people", "ancestor")
    step = cc.Relative("Sponsors", "ancestor", depth=1)
    bad = cc.check_repeats(
        P("Negotiate with potential sponsors for financial support"),
        [P("Negotiate with identified sponsors for financial support"), P("Sign the Gold tier contracts")],
        [root, step],
        parent_depth=2,
    )
    assert not bad.passed and "#1" in bad.note and "#2" not in bad.note, bad.note
    bad = cc.check_repeats(
        P("Venue security"),
        [P("Security measures for the venue"), P("Badge checks at the doors")],
        [root],
        parent_depth=1,
    )
    assert not bad.passed and "restates its parent" in bad.note, bad.note
    good = cc.check_repeats(
        P("Venue security"),
        [P("Security guards for the main hall"), P("Badge checks at the doors")],
        [root],
        parent_depth=1,
    )
    assert good.passed, good.note


def test_a_child_holding_a_whole_stage_title_repeats_that_stage() -> None:
    # seen in a real todo-cli run: the CLI stage planned again under another stage
    root = cc.Relative(
        "Write a software specification for a command-line todo-list app with sync", "ancestor"
    )
    stages = [
        cc.Relative(t, "sibling", depth=1, parent_title=root.title)
        for t in ("Command Line Interface (CLI)", "Syncing Mechanism", "Task Storage")
    ]
    parent = P("Error Handling and Logging")
    bad = cc.check_repeats(
        parent,
        [P("Error Message Catalogue"), P("Command Line Interface Documentation"), P("Log File Rotation")],
        [root, *stages],
        parent_depth=1,
    )
    assert not bad.passed
    assert 'repeats the root stage "Command Line Interface (CLI)"' in bad.note
    # one shared word is not a whole stage, and the words of a stage apart are not its title
    good = cc.check_repeats(
        parent,
        [P("Error Message Catalogue"), P("Exit Codes of Failed Commands"), P("Log File Rotation")],
        [root, *stages],
        parent_depth=1,
    )
    assert good.passed, good.note
    assert cc.contains_title("Hike Mount Fuji at dawn", "Hike Mount Fuji (2 days)")
    assert not cc.contains_title("Day trip from Tokyo", "Tokyo")
    assert not cc.contains_title("Mount Fuji hike", "Hike Mount Fuji")


def test_a_noun_phrase_title_inside_a_siblings_title_is_overlap() -> None:
    # seen in a real conference run: "Catering menu" and "Menu selection" under "Catering"
    # passed (one shared common word is weak evidence), so the menu was planned twice
    root = cc.Relative("Organize a one-day technical conference for 200 people", "ancestor")
    parent = P("Catering")
    bad = cc.check_overlap(
        parent, [P("Catering menu"), P("Food preparation"), P("Menu selection"), P("Staff training")], [root]
    )
    assert not bad.passed
    assert bad.note.startswith('#1 "Catering menu" and #3 "Menu selection" both plan menu')
    # each title has content of its own: not one inside the other
    good = cc.check_overlap(
        parent,
        [P("Catering menu design"), P("Food preparation"), P("Menu distribution"), P("Staff training")],
        [root],
    )
    assert good.passed, good.note


def test_a_child_that_restates_its_parent_with_its_abbreviation_repeats_it() -> None:
    # seen in a real todo-cli run: "Command Line Interface (CLI) Specification" passed as a
    # part of "Command Line Interface"; the abbreviation and "specification" add nothing
    root = cc.Relative(
        "Write a software specification for a command-line todo-list app with sync", "ancestor"
    )
    stages = [
        cc.Relative(t, "sibling", depth=1, parent_title=root.title)
        for t in ("Syncing Mechanism", "Conflict Resolution", "Error Handling and Logging")
    ]
    parent = P("Command Line Interface")
    kids = [P("CLI Input Validation"), P("CLI Output Formatting")]
    bad = cc.check_repeats(
        parent, [P("Command Line Interface (CLI) Specification"), *kids], [root, *stages], parent_depth=1
    )
    assert not bad.passed and "restates its parent" in bad.note
    good = cc.check_repeats(parent, [P("Subcommands and flags"), *kids], [root, *stages], parent_depth=1)
    assert good.passed, good.note


def test_a_passing_split_whose_parts_touch_scores_below_one_whose_parts_are_apart() -> None:
    parent = critics.Part("Plan a week in Italy")
    apart = [
        critics.Part("Rome: ancient ruins", "Colosseum at dawn"),
        critics.Part("Florence: galleries", "Uffizi, Accademia"),
    ]
    touching = [
        critics.Part("Rome: ancient ruins", "the Colosseum, then the Pantheon"),
        critics.Part("Florence: galleries", "the Uffizi; Pantheon replicas"),
    ]
    a, t = critics.check_overlap(parent, apart), critics.check_overlap(parent, touching)
    assert a.passed and t.passed  # one name shared detail-to-detail is not the same content
    assert a.score == 100 and 60 <= t.score < 100
    assert "Pantheon" in t.note


def test_two_chinese_titles_are_not_the_same_title() -> None:
    # old: no Latin word on either side made every Chinese title "the same title"
    stage = critics.Relative("装备采购：购买咖啡机和冰箱", "sibling", depth=1, parent_title="开一家咖啡馆")
    parent = Child("员工培训")
    split = [child("制定培训计划", "培训内容和时间表"), child("实施培训", "考核员工")]
    assert check_repeats(parent, split, [stage], parent_depth=1).passed
    again = [child("装备采购：购买咖啡机和冰箱"), child("实施培训")]
    note = check_repeats(parent, again, [stage]).note
    assert note.startswith('#1 "装备采购：购买咖啡机和冰箱" repeats the root stage')


def test_chinese_siblings_overlap_by_the_letters_they_share() -> None:
    # old: each Chinese title was one word, so no two siblings shared anything
    cafe = Child("开一家咖啡馆")
    c = check_overlap(cafe, [child("装修材料采购"), child("装修材料运输"), child("员工培训")])
    assert not c.passed and c.note.startswith('#1 "装修材料采购" and #2 "装修材料运输" both plan 装修材料:')
    # two letters shared: a word's worth, graded below a split whose parts are apart
    touching = check_overlap(cafe, [child("设计和装修"), child("装修材料采购"), child("员工培训")])
    assert touching.passed and touching.score == 85 and "share 装修 (0.50 of 1.00)" in touching.note
    # what the parent's title says is context, not overlap
    assert check_overlap(Child("装修材料"), [child("装修材料采购"), child("装修材料运输")]).score == 100
    buy = check_overlap(cafe, [child("购买咖啡机"), child("购买烤面包机"), child("购买冰箱")])
    assert buy.passed and buy.note.endswith("(shared by every child, not counted: 购买)")


def test_a_chinese_child_repeating_a_stage_by_its_letters_fails_repeats() -> None:
    stage = critics.Relative("设计和装修：墙面、地面和家具", "sibling", depth=1, parent_title="开一家咖啡馆")
    split = [child("装修和布置：墙面、地面、家具摆放"), child("实施培训")]
    note = check_repeats(Child("员工培训"), split, [stage], parent_depth=1).note
    assert note.startswith(
        '#1 "装修和布置：墙面、地面、家具摆放" repeats the root stage "设计和装修：墙面、地面和家具"'
    )
