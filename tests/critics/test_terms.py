"""Content terms (:mod:`specswarm.critics.terms`): stemming is consistent."""

from __future__ import annotations

from specswarm import critics as cc


def test_stem_is_consistent() -> None:
    for a, b in [
        ("booking", "book"),
        ("temples", "temple"),
        ("hiking", "hike"),
        ("organization", "organize"),
        ("cities", "city"),
        ("planning", "plan"),
        ("weddings", "wedding"),
        ("deletion", "delete"),
        ("completion", "completed"),
        ("revisions", "revise"),
        ("selection", "select"),
    ]:
        assert cc.stem(a) == cc.stem(b), (a, b)
    for a, b in [("action", "act"), ("nation", "nate")]:
        assert cc.stem(a) != cc.stem(b), (a, b)  # too short to be a verb with -ion
