"""Developer sessions: ``nox -s lint``, ``nox -s typecheck``, ``nox -s tests_fast``, ``nox -s tests``.

nox is not a dependency of specswarm: ``pip install nox`` (see CONTRIBUTING.md). No session
creates an environment or installs anything (``venv_backend="none"``): each runs its tools
from the active one, so activate ``.venv`` first (after ``pip install -e '.[test]'``). The
checks are the ones ``.ci/run`` runs; ``nox`` alone runs lint, typecheck and tests_fast.
"""

from __future__ import annotations

import nox

nox.options.sessions = ["lint", "typecheck", "tests_fast"]


@nox.session(venv_backend="none")
def lint(session: nox.Session) -> None:
    """ruff check and ruff format --check (config: pyproject.toml [tool.ruff])."""
    session.run("ruff", "check", ".", external=True)
    session.run("ruff", "format", "--check", ".", external=True)


@nox.session(venv_backend="none")
def typecheck(session: nox.Session) -> None:
    """mypy over the package (config: pyproject.toml [tool.mypy])."""
    session.run("mypy", *session.posargs, external=True)


@nox.session(venv_backend="none")
def tests_fast(session: nox.Session) -> None:
    """The fast suite: everything not marked slow (extra arguments go to pytest)."""
    session.run("python", "-m", "pytest", "-m", "not slow", *session.posargs, external=True)


@nox.session(venv_backend="none")
def tests(session: nox.Session) -> None:
    """The full suite, as CI runs it (slow tests included: real processes, libp2p, the model)."""
    session.run("python", "-m", "pytest", *session.posargs, external=True)
