"""The one error tree of specswarm.

::

    SpecSwarmError                  base; ``str(e)`` is what the CLI prints
    ├── SpecError                   a goal spec is wrong (``.problems`` lists each one)
    ├── EventError                  an event is invalid; never escapes a peer
    ├── ModelError                  the local model failed (missing file, garbage after retries)
    │   └── ReplayMissError         a replay cassette holds no recording for a prompt
    ├── TransportError              libp2p / network problems (bad multiaddr, dial failure)
    └── RunError                    a run did not converge (names stuck nodes and why)

The CLI (``specswarm.cli``) is the only place that turns these into exit codes.
"""

from __future__ import annotations

from dataclasses import dataclass


class SpecSwarmError(Exception):
    """Base of every error specswarm raises on purpose."""


@dataclass(frozen=True, order=True)
class SpecProblem:
    """One thing wrong with a goal spec, printable as ``FILE:LINE: path: message``."""

    file: str
    """The spec file (as the user named it)."""
    line: int
    """1-based line of the offending value (or of its parent when it is missing)."""
    path: str
    """Dotted field path, e.g. ``roles.scorer.count``; ``(root)`` for the document."""
    message: str
    """What is wrong and what is expected."""

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.path}: {self.message}"


class SpecError(SpecSwarmError):
    """A goal spec could not be loaded; ``problems`` holds every problem found."""

    def __init__(self, problems: list[SpecProblem]) -> None:
        self.problems = sorted(problems, key=lambda p: (p.file, p.line, p.path, p.message))
        super().__init__("\n".join(str(p) for p in self.problems))


class EventError(SpecSwarmError):
    """An event failed validation; the message is the reason."""


class ModelError(SpecSwarmError):
    """The model could not give a usable answer."""


class ReplayMissError(ModelError):
    """A replay cassette holds no recording for the prompt asked."""


class TransportError(SpecSwarmError):
    """A network problem the user can act on (bad address, unreachable peer)."""


class RunError(SpecSwarmError):
    """A run stopped without converging."""
