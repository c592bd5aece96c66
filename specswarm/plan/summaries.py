"""The fold's rule for the summaries of split nodes (``review.summaries``): a pure function of
the events, as :mod:`specswarm.plan.rules` is.

* a split node's children are *done* when every leaf child has a counted result and every
  split child a counted summary; its *sources* are then those results' and summaries' ids, in
  child order (:func:`summary_sources`);
* a summary counts when its author is an executor of this run and the sources it names are
  exactly the node's sources now: one written before the children were done, or from a result
  that no longer counts, is not counted (``summaries_uncounted``), and the node waits for one
  written from what its children hold;
* of several that qualify, the least (lamport, author, id) counts.

So a summary bottom-up: a node's summary can count only once each split child's own does.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from specswarm.plan.views import NodeView, SummaryView
from specswarm.protocol.bodies import SummaryBody
from specswarm.protocol.events import Event


def summary_sources(children: Sequence[NodeView]) -> tuple[str, ...] | None:
    """The ids a summary of the node with these ``children`` is written from (a leaf's counted
    result, a split child's counted summary, in child order); None while any child is not done."""
    sources: list[str] = []
    for child in children:
        done = child.result if child.leaf else child.summary
        if done is None:
            return None
        sources.append(done.id)
    return tuple(sources) if sources else None


def decide_summary(
    run: str, summaries: Iterable[Event], roles: Mapping[str, str], sources: tuple[str, ...] | None
) -> SummaryView | None:
    """The counted summary of a split node whose children's :func:`summary_sources` are
    ``sources`` (None: a child is not done, and no summary counts), from the node's summary
    events (see the module's rules)."""
    if sources is None:
        return None
    best: Event | None = None
    for event in summaries:
        body = event.body
        if event.run != run or roles.get(event.author) != "executor" or not isinstance(body, SummaryBody):
            continue
        if body.sources != sources:
            continue
        if best is None or event.order < best.order:
            best = event
    if best is None:
        return None
    body = best.body
    assert isinstance(body, SummaryBody)
    return SummaryView(best.id, best.author, body.text, body.model, body.sources, best.lamport, body.fallback)
