"""The one error tree of specswarm.

::

    SpecSwarmError                  base; ``str(e)`` is what the CLI prints
    ├── SpecError                   a goal spec is wrong (``.problems`` lists each one)
    ├── EventError                  an event is invalid; never escapes a peer
    ├── ModelError                  the local model failed (missing file, garbage after retries)
    │   ├── ReplayMissError         a replay cassette holds no recording for a prompt
    │   └── GaveUpError             no usable answer after every retry (``specswarm.model.tasks``)
    ├── EndpointError               a model endpoint cannot serve the spec (exit 2): names the field
    ├── TemplateError               a user template cannot be loaded or rendered (``specswarm.render``)
    │   └── PromptTemplateError     a prompt template fails on a task's data (exit 2)
    ├── UsageError                  a command's input that is not a spec is wrong (exit 2): a group
    │                               file, a SPECSWARM_* value, an unreadable event log, an output
    │                               it cannot write
    ├── TransportError              libp2p / network problems (bad multiaddr, dial failure, no answer)
    └── RunError                    a run did not converge (names stuck nodes and why)
        └── InterruptedRunError     a run or a peer was stopped by a signal (exit 130)

Each class states the exit code ``specswarm`` ends with when such an error stops a command
(``exit_code``: 2 for a SpecError, an EndpointError, a PromptTemplateError or a UsageError, 130 for an
InterruptedRunError, 1 for every other one); the CLI (``specswarm.cli``) is the only place
that turns errors into that exit and red text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar


class SpecSwarmError(Exception):
    """Base of every error specswarm raises on purpose."""

    exit_code: ClassVar[int] = 1
    """What ``specswarm`` exits with when this error ends a command."""


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

    exit_code: ClassVar[int] = 2

    def __init__(self, problems: list[SpecProblem]) -> None:
        self.problems = sorted(problems, key=lambda p: (p.file, p.line, p.path, p.message))
        super().__init__("\n".join(str(p) for p in self.problems))


class EventError(SpecSwarmError):
    """An event failed validation; the message is the reason."""


class ModelError(SpecSwarmError):
    """The model could not give a usable answer."""


class ReplayMissError(ModelError):
    """A replay cassette holds no recording for the prompt asked."""


class UsageError(SpecSwarmError):
    """A command's input that is not a goal spec is wrong (e.g. a peer group file, a
    ``SPECSWARM_*`` environment value); the message names it and what is expected."""

    exit_code: ClassVar[int] = 2


class EndpointError(SpecSwarmError):
    """An OpenAI-compatible endpoint cannot serve what the spec's model section asks, and asking
    again will not help: it cannot be reached (at the preflight), refuses the API key, does not
    serve the model named, or its context is too small for a prompt. ``field`` is the model
    section's field to fix (``base_url``, ``api_key_env``, ``name``, ``max_tokens``); ``str(e)``
    reads ``model.FIELD: what is wrong``. Deliberately *not* a :class:`ModelError` (which a role
    counts and retries): the spec must change, so the peer stops (exit 2), like a spec error."""

    exit_code: ClassVar[int] = 2

    def __init__(self, field: str, detail: str) -> None:
        super().__init__(f"model.{field}: {detail}")
        self.field = field
        """The field of a model section the problem names (``base_url``, ``name``, ...)."""
        self.detail = detail
        """What is wrong, without the field."""


class TemplateError(SpecSwarmError):
    """A user template could not be loaded or rendered (names the file and line)."""


class PromptTemplateError(TemplateError):
    """A prompt template could not be rendered with the data of its task.

    Raised by :func:`specswarm.spec.prompting.render` (the model layer's ``render_prompt`` and
    the tasks of :mod:`specswarm.model.tasks` call it) when a template names a variable its task
    does not have, an attribute its data lacks, a filter that does not exist or fails, or is
    not valid Jinja2. ``load_spec`` renders every template on sample data first, so at run time
    this means the real data differs from the samples: the spec is wrong, not the model. It is
    deliberately *not* a :class:`ModelError` (which a role counts and retries)."""

    exit_code: ClassVar[int] = 2

    def __init__(self, message: str, *, label: str, line: int | None = None) -> None:
        super().__init__(message)
        self.label = label
        """What names the template: ``prompts.decompose``, or a template file as the spec gives it."""
        self.line = line
        """The template's line the failure points at (1-based), when known."""


class TransportError(SpecSwarmError):
    """A network problem the user can act on (bad address, unreachable peer)."""


class RunError(SpecSwarmError):
    """A run stopped without converging."""


class InterruptedRunError(RunError):
    """A run (or one peer of it) was stopped by SIGINT/SIGTERM before it finished.

    The message says what was kept and how to continue; it may be empty (a peer stopped
    by Ctrl-C has nothing to add), and then the CLI prints nothing.
    """

    exit_code: ClassVar[int] = 130
