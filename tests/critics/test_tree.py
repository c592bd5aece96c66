"""The tree as seen from the node being split (:mod:`specswarm.critics.tree`): ancestors,
stages beside the branch, and everything else not below the node."""

from __future__ import annotations

from specswarm import critics as cc
from tests.critics.kit import PERU


def test_relatives_in_tree_relations() -> None:
    rel = cc.relatives_in_tree(PERU, "cusco")
    assert [(r.title, r.relation, r.depth, r.parent_title) for r in rel] == [
        ("Plan a week in Peru", "ancestor", 0, None),
        ("Lima food scene (2 days)", "sibling", 1, "Plan a week in Peru"),
        ("Machu Picchu (2 days)", "sibling", 1, "Plan a week in Peru"),
        ("Ceviche in Barranco", "elsewhere", 2, "Lima food scene (2 days)"),
    ]
    # a node's own descendants are not relatives
    assert all(r.title != "Ceviche in Barranco" for r in cc.relatives_in_tree(PERU, "lima"))
