"""A role's failures in a row on each node, leaf or proposal, and when one is used up.

A model task that fails is counted against its key (a node id for a decomposer, a leaf id for
an executor): :class:`Streak` keeps how many calls in a row failed there, and how many of the
latest ones failed *the same way* (:func:`failure_way`: the message with its quoted texts and
numbers left out, so "only 1 usable part(s) ('Venue ...' repeats another part)" and "only 0
usable part(s) ('Supplies ...' repeats another part)" are one way). Each new call on the key is
asked another way (:class:`~specswarm.swarm.roles.decomposer.Decomposer`), so a key that keeps
failing the same way is :func:`used_up`: asking again will not change the answer. Peers report
their streaks in their status lines (:meth:`Streak.to_json`); the launcher ends a run whose
open node every peer working on it has used up (:mod:`specswarm.swarm.launcher.stalls`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

SAME_WAY = 3
"""Calls in a row that failed the same way after which a key is used up."""
ANY_WAY = 6
"""Calls in a row that failed, in whatever ways, after which a key is used up."""
GAVE_UP_BACKOFF = 2.0
"""Seconds a role leaves a key alone after the model gave no usable answer there (doubled for
each further failure in a row, at most the role's ``FAILURE_BACKOFF``): the next call is asked
another way, so there is nothing to wait out."""
REPORTED = 8
"""Keys a status line reports at most (the longest streaks)."""

_QUOTED = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_MORE_PARTS = re.compile(r"(?:; '…'[^;()']*)+")


def failure_way(message: str) -> str:
    """The shape of a failure message: quoted texts and numbers left out, a list of reasons
    for quoted parts cut to its first ("'…' repeats another part; '…' repeats another part"
    is one reason however many parts it names), spaces collapsed."""
    way = _NUMBER.sub("N", _QUOTED.sub("'…'", message))
    return " ".join(_MORE_PARTS.sub("", way).split())


@dataclass
class Streak:
    """The failures in a row of one role's calls on one key."""

    times: int = 0
    """Calls in a row that failed on the key."""
    same: int = 0
    """Of them, the latest ones that failed the same way (:func:`failure_way`)."""
    way: str = ""
    """The latest failure's shape."""
    why: str = ""
    """The latest failure's message."""
    problem: str = ""
    """What was wrong with the latest unusable answer (a give-up's last problem), for the next
    prompt to name; empty when the model itself failed."""

    def failed(self, why: str, problem: str = "") -> None:
        """Count one more failed call."""
        way = failure_way(why)
        self.same = self.same + 1 if way == self.way else 1
        self.times += 1
        self.way, self.why, self.problem = way, why, problem

    def backoff(self, longest: float) -> float:
        """Seconds to leave the key alone now: short after an unusable answer (the next call
        asks another way), ``longest`` after the model itself failed."""
        if not self.problem:
            return longest
        return min(longest, GAVE_UP_BACKOFF * 2.0 ** (self.times - 1))

    @property
    def used_up(self) -> bool:
        """Asking again will not change the answer: :data:`SAME_WAY` failures in a row the same
        way, or :data:`ANY_WAY` in a row."""
        return used_up(self.times, self.same)

    def to_json(self) -> dict[str, Any]:
        return {"times": self.times, "same": self.same, "why": self.why[:300]}


def used_up(times: int, same: int) -> bool:
    """Whether a key whose calls failed ``times`` in a row, the latest ``same`` of them the same
    way, is used up (see :attr:`Streak.used_up`)."""
    return same >= SAME_WAY or times >= ANY_WAY


def report(streaks: dict[str, Streak]) -> dict[str, dict[str, Any]]:
    """The streaks a status line carries: key -> :meth:`Streak.to_json`, the longest first."""
    ranked = sorted(streaks.items(), key=lambda kv: (-kv[1].times, kv[0]))[:REPORTED]
    return {key: s.to_json() for key, s in ranked}
