"""What a command writes: each output checked before the work starts, and kept somewhere should
writing it fail at the end.

:func:`check_output` (a file) and :func:`check_directory` (a directory the command fills) raise
a :class:`~specswarm.errors.UsageError` (exit 2) that names the option, the path and why, e.g.
``--out afile/x.md: cannot write the plan there: afile is not a directory``. They find out by
trying, as the command will, and change nothing: an existing file is opened to append and
closed again (neither truncated nor written), a missing one is created together with the
directories missing above it, then all of them are removed. The command itself creates those
directories when it writes. What only writing can tell (a full disk, a special file such as
``/proc/version`` that refuses every byte) is left to the end: :func:`keep` writes there, else
to the next place given (the run's directory), and says in one line what failed and where the
output is instead.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from specswarm.errors import SpecSwarmError, UsageError


class OutputError(SpecSwarmError):
    """An output could not be written where it was asked for, once the work was done (a
    directory removed meanwhile, a full disk); the message names that path and where the
    output is instead."""


def check_output(path: Path, option: str, what: str) -> None:
    """Raise a UsageError when no file can be written at ``path`` (``option`` and ``what`` name
    it: ``--out``, ``the plan``)."""
    why = unwritable(path)
    if why is not None:
        raise UsageError(f"{option} {path}: cannot write {what} there: {why}")


def check_directory(path: Path, option: str, what: str) -> None:
    """Create the directory ``path`` (and its parents) for ``option`` to fill, and check that a
    file can be written in it; else a UsageError naming ``option``."""
    try:
        path.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=path, prefix=".specswarm-probe-")
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise UsageError(f"{option} {path}: cannot use it as {what}: {reason(exc, path)}") from None


def unwritable(path: Path) -> str | None:
    """Why no file can be written at ``path``, in a few words; None when one can."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return _uncreatable(path)
    except OSError as exc:
        return reason(exc, path)
    if stat.S_ISDIR(mode):
        return "it is a directory"
    if not stat.S_ISREG(mode):  # a terminal, a pipe, /dev/null: opening one may wait or act
        return None if os.access(path, os.W_OK) else os.strerror(errno.EACCES)
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_APPEND))
    except OSError as exc:
        return reason(exc, path)
    return None


def _uncreatable(path: Path) -> str | None:
    """Why ``path`` (missing) cannot be created, tried with the directories missing above it;
    everything the try made is removed again."""
    missing: list[Path] = []
    for parent in path.parents:
        try:
            os.stat(parent)
            break
        except FileNotFoundError:
            missing.append(parent)
        except OSError as exc:
            return reason(exc, path)
    made: list[Path] = []
    try:
        for directory in reversed(missing):
            os.mkdir(directory)
            made.append(directory)
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        os.unlink(path)
    except FileExistsError:  # created meanwhile, by someone else: there is a file to write
        return None
    except OSError as exc:
        return reason(exc, path)
    finally:
        for directory in reversed(made):
            try:
                os.rmdir(directory)
            except OSError:
                pass
    return None


def reason(exc: OSError, path: Path) -> str:
    """What ``exc``, raised writing ``path``, means for the user: the part of the path that is
    a file where a directory must be, else the system's words."""
    if exc.errno in (errno.ENOTDIR, errno.EEXIST):
        for parent in reversed(path.parents):
            if parent.exists() and not parent.is_dir():
                return f"{parent} is not a directory"
    if exc.errno == errno.EISDIR or (exc.errno == errno.EEXIST and path.is_dir()):
        return "it is a directory"
    return exc.strerror or str(exc)


def keep(
    write: Callable[[Path | None], None], places: Sequence[Path | None], what: str
) -> tuple[Path | None, str | None]:
    """Write an output with ``write(place)`` to the first of ``places`` that takes it (None:
    stdout). Returns that place (None also when none did) and, when the first failed, one line
    saying why and where ``what`` is instead, or that no place took it (None when the first
    took it)."""
    failures: list[str] = []
    for place in places:
        try:
            write(place)
        except OSError as exc:
            why = reason(exc, place) if place is not None else exc.strerror or str(exc)
            failures.append(f"{_name(place)}: {why}")
            continue
        if not failures:
            return place, None
        return place, f"cannot write {what} to {failures[0]}; " + "".join(
            f"nor to {f}; " for f in failures[1:]
        ) + ("it is on stdout" if place is None else f"it is in {place}")
    return None, f"cannot write {what} to " + "; nor to ".join(failures)


def _name(place: Path | None) -> str:
    return "stdout" if place is None else str(place)
