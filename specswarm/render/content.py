"""Content-only exports: plan files that change only when the plan's content does.

A normal export names its run: the run id, the full digest, every peer id, every event id and
how many events the run held. Two runs that wrote the same plan differ in all of these, so a
plan file committed to a repository would change on every run. :func:`content_only` rewrites
the export's data so that every value left depends on the content alone:

- a peer is named by its role (``decomposer``, ``executor``; a scorer with its lens:
  ``concrete scorer``), not by its id;
- a proposal is named by a hash of its strategy and children (``c3`` and 6 hex digits), a
  judged result by a hash of its text (``r`` and 6 hex digits), a summary by a hash of its text
  (``s`` and 6 hex digits), a node by its outline number
  (``root``, ``1``, ``1.2``);
- votes and alternatives are listed in content order;
- the run id, the digest, the participants and the event counts are left out (they belong in
  ``--report``); the content digest stays.

The Markdown and spec templates see ``content_only`` and leave out the lines that name the run.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from specswarm.protocol.canonical import canonical_bytes
from specswarm.render.filters import in_content_order

CONTENT_FORMAT = "specswarm-plan-content/1"
"""The ``format`` of a content-only JSON export (``specswarm diff`` reads it like a full one)."""

_RUN_FIELDS = ("run_id", "digest", "participants", "event_counts")


def content_only(data: dict[str, Any]) -> dict[str, Any]:
    """Rewrite the JSON export ``data`` in place so that nothing in it names the run (see the
    module docstring); return it. Fields the templates read keep their place and type."""
    labels = _peer_labels(data)
    root = data.get("root")
    if root is not None:
        _rewrite_node(root, "root", labels)
    data["format"] = CONTENT_FORMAT
    for key in _RUN_FIELDS:
        data.pop(key, None)
    return data


def content_context(context: dict[str, Any], data: Mapping[str, Any]) -> dict[str, Any]:
    """The template context of a content-only render: ``content_only`` set, the claim holders
    named by role, the participant counts kept (the swarm's shape is part of the spec)."""
    for entry in context["nodes"]:
        if entry.get("claimed_by"):
            entry["claimed_by"] = "executor"
    context["content_only"] = True
    context["plan"] = data
    return context


def _peer_labels(data: Mapping[str, Any]) -> dict[str, str]:
    """peer id -> a label naming its role and what it does, from what the export holds."""
    labels: dict[str, str] = {}
    for peer in data.get("participants") or ():
        labels[peer["peer"]] = peer["role"]

    def visit(node: Mapping[str, Any]) -> None:
        for p in [node.get("accepted"), *node.get("alternatives", ())]:
            if p is None:
                continue
            labels[p["author"]] = "decomposer"  # its strategy is shown beside it
            for v in p["votes"]:
                labels[v["author"]] = f"{v['lens']} scorer" if v.get("lens") else "scorer"
        for r in [node.get("result"), *node.get("drafts", ())]:
            if r is None:
                continue
            labels[r["author"]] = "executor"
            for v in r.get("votes", ()):
                labels[v["author"]] = f"{v['lens']} scorer" if v.get("lens") else "scorer"
        for child in node["children"]:
            visit(child)

    if data.get("root") is not None:
        visit(data["root"])
    return labels


def _proposal_name(p: Mapping[str, Any]) -> str:
    digest = hashlib.sha256(canonical_bytes([p.get("strategy"), p.get("children")])).hexdigest()
    return "c3" + digest[:6]


def _result_name(r: Mapping[str, Any]) -> str:
    return "r" + hashlib.sha256(str(r.get("output", "")).encode()).hexdigest()[:6]


def _rewrite_node(node: dict[str, Any], number: str, labels: Mapping[str, str]) -> None:
    node["id"] = number
    proposals = [p for p in [node.get("accepted"), *node.get("alternatives", ())] if p is not None]
    names = {p["id"]: _proposal_name(p) for p in proposals}
    for p in proposals:
        p["id"] = names[p["id"]]
        p["revises"] = names.get(p["revises"], "earlier") if p.get("revises") else None
        p["author"] = labels.get(p["author"], "decomposer")
        p["votes"] = in_content_order(p["votes"])
        for v in p["votes"]:
            v.pop("id", None)
            v["author"] = labels.get(v["author"], "scorer")
    node["alternatives"] = in_content_order(node.get("alternatives", ()))
    if node.get("proposed_by"):
        node["proposed_by"]["author"] = labels.get(node["proposed_by"]["author"], "decomposer")
    if "claim" in node:
        node["claim"] = "claimed" if node["claim"] else None
    counted = node.get("result")
    results: list[dict[str, Any]] = [r for r in [counted, *node.get("drafts", ())] if r is not None]
    written = {r["id"]: _result_name(r) for r in results}
    for r in results:
        if r is counted:
            r.pop("id", None)
        else:
            r["id"] = written[r["id"]]
        r["author"] = "executor"
        if r.get("revises"):
            r["revises"] = written.get(r["revises"], "earlier")
        if "votes" in r:
            r["votes"] = in_content_order(r["votes"])
            for v in r["votes"]:
                v.pop("id", None)
                v["author"] = labels.get(v["author"], "scorer")
    summary = node.get("summary")
    if summary:
        summary["id"] = "s" + hashlib.sha256(str(summary.get("text", "")).encode()).hexdigest()[:6]
        summary["author"] = "executor"
    for i, child in enumerate(node["children"], 1):
        _rewrite_node(child, f"{number}.{i}" if number != "root" else str(i), labels)
