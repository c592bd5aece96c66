"""The ``SPECSWARM_*`` environment overrides a peer reads, checked before any peer starts.

A peer reads them as it starts: under ``plan`` a bad value stopped every peer the same way
(each restarted three times), and the reason was only in a peer's log. :func:`check_overrides`
takes each one that is set as its reader will and raises a UsageError (exit 2) with one line
per bad value, ``NAME='value': expected ...``; the CLI runs it before it imports the launcher
(a fraction of a second). :func:`check_environment` adds what depends on the spec (the
cassette a replaying role needs) and warns of a set name one letter or two off a known one.

==========================  ========================================  ======================
variable                    read by                                   expected
==========================  ========================================  ======================
SPECSWARM_MODEL_BACKEND     swarm/peer.py ``model_settings``          a backend name
SPECSWARM_MODEL_CASSETTE    the same                                  a file (replay: existing)
SPECSWARM_MODEL_SHARED      the same (``model.shared``)               0 or 1
SPECSWARM_MODEL_RUNTIME     the same (``model.runtime``)              auto, llama.cpp, gpt4all
SPECSWARM_LOG               swarm/peer.py ``setup_logging``           a level name
SPECSWARM_NICE              model/worker.py ``prepare``               a whole number >= 0
SPECSWARM_MACHINE_LOCK      model/lock.py, swarm/roles/base.py        0 or 1
SPECSWARM_FORK              swarm/launcher/forked.py ``enabled``      0 or 1
SPECSWARM_LIBP2P_TUNING     transport/_tuning.py ``tune_libp2p``      0 or 1
SPECSWARM_CACHE             model/assets.py ``cache_dir``             a directory
SPECSWARM_TEST_GOSSIP_LOSS  swarm/testloss.py (tests only)            a fraction in [0, 1)
SPECSWARM_TEST_MODEL_DELAY  model/replay.py (tests only)              seconds >= 0
==========================  ========================================  ======================

``SPECSWARM_MODEL_TOKEN`` and ``SPECSWARM_TEST_GOSSIP_SEED`` take any text; the run's secret
(``access.secret_env``) is checked with the spec's access settings
(:mod:`specswarm.swarm.launcher.network`).
"""

from __future__ import annotations

import difflib
import logging
import math
import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from specswarm.errors import UsageError
from specswarm.spec.model_values import RUNTIMES

if TYPE_CHECKING:
    from specswarm.spec import GoalSpec

BINARY = "0 or 1"
LEVELS = tuple(logging.getLevelNamesMapping())
"""What ``logging`` takes as a level name (upper case; a number in text is refused)."""


def _backends() -> tuple[str, ...]:
    from specswarm.model.load import BACKENDS

    return BACKENDS


def _number(text: str, *, low: float, below: float = math.inf) -> bool:
    try:
        value = float(text)
    except ValueError:
        return False
    return math.isfinite(value) and low <= value < below


def _directory(text: str) -> bool:
    path = Path(text).expanduser()
    return not path.exists() or path.is_dir()


Check = tuple[Callable[[str], bool], Callable[[], str], bool]
CHECKS: dict[str, Check] = {
    "SPECSWARM_MODEL_BACKEND": (
        lambda v: v in _backends(),
        lambda: "one of " + ", ".join(_backends()),
        False,
    ),
    "SPECSWARM_MODEL_SHARED": (lambda v: v in ("0", "1"), lambda: BINARY, False),
    "SPECSWARM_MODEL_RUNTIME": (lambda v: v in RUNTIMES, lambda: "one of " + ", ".join(RUNTIMES), False),
    "SPECSWARM_LOG": (lambda v: v in LEVELS, lambda: "one of DEBUG, INFO, WARNING, ERROR, CRITICAL", True),
    "SPECSWARM_NICE": (
        lambda v: v.strip().isdigit(),
        lambda: "a whole number, 0 or more (niceness added to the peers' networking)",
        False,
    ),
    "SPECSWARM_MACHINE_LOCK": (lambda v: v in ("0", "1"), lambda: BINARY, False),
    "SPECSWARM_FORK": (lambda v: v.strip() in ("0", "1"), lambda: BINARY, False),
    "SPECSWARM_LIBP2P_TUNING": (lambda v: v.strip() in ("0", "1"), lambda: BINARY, False),
    "SPECSWARM_CACHE": (_directory, lambda: "a directory (it names a file)", False),
    "SPECSWARM_TEST_GOSSIP_LOSS": (
        lambda v: _number(v, low=0, below=1),
        lambda: "a fraction, 0 to below 1",
        False,
    ),
    "SPECSWARM_TEST_MODEL_DELAY": (lambda v: _number(v, low=0), lambda: "seconds, 0 or more", False),
}
"""Name -> (accepts the value, what is expected, whether an empty value is checked: only where
its reader does not take an empty value as unset)."""
KNOWN = frozenset(
    {*CHECKS, *(f"SPECSWARM_{n}" for n in ("MODEL_CASSETTE", "MODEL_TOKEN", "TEST_GOSSIP_SEED", "SECRET"))}
)
"""Every ``SPECSWARM_*`` variable specswarm reads."""


def override_problems(env: Mapping[str, str]) -> list[str]:
    """One ``NAME='value': expected ...`` line per override in ``env`` its reader cannot use."""
    problems: list[str] = []
    for name, (ok, expected, check_empty) in CHECKS.items():
        value = env.get(name)
        if value is None or (value == "" and not check_empty):
            continue
        if not ok(value):
            problems.append(f"{name}={value!r}: expected {expected()}")
    return problems


def check_overrides(env: Mapping[str, str] | None = None) -> None:
    """UsageError (exit 2) naming each override in ``env`` (default ``os.environ``) whose value
    its reader cannot use."""
    problems = override_problems(os.environ if env is None else env)
    if problems:
        raise UsageError("\n".join(problems))


def cassette_problems(spec: GoalSpec, env: Mapping[str, str]) -> list[str]:
    """The cassette the overrides name: a role that replays needs it to exist (or one at all:
    a spec that says replay names one, the loader checked it); a real model appends its
    answers to it, in a directory that must exist."""
    from specswarm.model.load import MODEL_ROLES

    override = env.get("SPECSWARM_MODEL_CASSETTE") or ""
    backend = env.get("SPECSWARM_MODEL_BACKEND") or ""
    path = Path(override).expanduser().resolve()
    for role in MODEL_ROLES:
        own = spec.model_for(role)
        uses = backend or own.backend
        if getattr(spec.roles, role).count < 1 or uses == "scripted":
            continue
        if uses == "replay" and not override and own.cassette is None:
            return [f"SPECSWARM_MODEL_BACKEND={backend!r}: expected SPECSWARM_MODEL_CASSETTE set too"]
        if uses == "replay" and override and not path.is_file():
            return [f"SPECSWARM_MODEL_CASSETTE={override!r}: expected a cassette file (looked for {path})"]
        if uses != "replay" and override and not path.parent.is_dir():
            return [
                f"SPECSWARM_MODEL_CASSETTE={override!r}: expected a file in an existing directory "
                f"(the {uses} model's answers are recorded into it; {path.parent} does not exist)"
            ]
    return []


def misspelt(env: Mapping[str, str], known: frozenset[str]) -> list[str]:
    """Warnings for set ``SPECSWARM_*`` names that nothing reads but are close to one that is."""
    warnings: list[str] = []
    for name in sorted(n for n in env if n.startswith("SPECSWARM_") and n not in known):
        close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.85)
        if close:
            warnings.append(f"warning: {name} is set but nothing reads it (did you mean {close[0]}?)")
    return warnings


def check_environment(spec: GoalSpec, env: Mapping[str, str] | None = None) -> None:
    """Check the overrides the peers of ``spec`` will read (``env``: default ``os.environ``):
    UsageError naming each bad one (exit 2); a warning on stderr for each likely misspelt name."""
    env = os.environ if env is None else env
    problems = override_problems(env) or cassette_problems(spec, env)
    if problems:
        raise UsageError("\n".join(problems))
    for line in misspelt(env, KNOWN | {spec.access.secret_env}):
        print(line, file=sys.stderr)
