"""What a spec may hold and name: the size of its file, of its normalized form and of a
template it names, and the folders the files it reads may be in.

A spec may come from someone else (a pull request checked in CI): the bounds keep such a
spec from exhausting the machine or from carrying the machine's files into the run. The
``run`` event carries the normalized spec (``GoalSpec.to_json()``, prompt templates
inlined) to every peer, and a peer refuses an event larger than
``specswarm.protocol.events.MAX_EVENT_BYTES`` (256 KiB): :data:`MAX_SPEC_BYTES` leaves room
for the event's envelope, so a spec that loads also travels.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from specswarm import resources

MAX_SPEC_FILE_BYTES = 500_000
"""The largest spec file read (YAML with comments: twice what a run event carries; the YAML
parser reads about a megabyte a second)."""
MAX_SPEC_BYTES = 250_000
"""The largest normalized spec (canonical JSON, UTF-8) a run event carries."""
MAX_TEMPLATE_CHARS = 1_000_000
"""The largest output template read (it stays on this machine; prompt templates have the
smaller bound of the schema's ``prompts`` fields, as they travel in the run event)."""
OUTSIDE_FLAG = "--allow-outside-files"
"""The command-line flag that lets a spec name files outside its folder."""


def amount(size: int) -> str:
    """A byte count in words: ``5.2 MB``, ``312.4 kB``, ``900 bytes``."""
    if size >= 1_000_000:
        return f"{size / 1_000_000:.1f} MB"
    if size >= 1_000:
        return f"{size / 1_000:.1f} kB"
    return f"{size} bytes"


def read_at_most(path: Path, limit: int) -> tuple[bytes, int | None]:
    """(the bytes of ``path``, None), or (its first ``limit`` bytes, its size) when it holds
    more: a huge file is never read whole. Raises OSError."""
    with path.open("rb") as fh:
        data = fh.read(limit + 1)
        if len(data) <= limit:
            return data, None
        return data[:limit], max(os.fstat(fh.fileno()).st_size, len(data))


def file_too_large(size: int) -> str:
    return (
        f"the file is {amount(size)} (expected at most {MAX_SPEC_FILE_BYTES} bytes; its normalized "
        f"spec travels in a run event that holds at most {MAX_SPEC_BYTES} bytes of it)"
    )


def normalized_size(spec_json: Mapping[str, Any]) -> int:
    """Bytes of the canonical JSON of a normalized spec, as the run event carries it (the same
    encoding as ``specswarm.protocol.canonical.canonical_bytes``)."""
    return len(_canonical(spec_json))


def oversize(spec_json: Mapping[str, Any]) -> str | None:
    """What is wrong when the normalized spec is larger than a run event carries, else None."""
    size = normalized_size(spec_json)
    if size <= MAX_SPEC_BYTES:
        return None
    parts = {key: len(_canonical(value)) for key, value in spec_json.items()}
    largest = max(parts, key=lambda key: parts[key])
    return (
        f"the spec is {amount(size)} once normalized (defaults filled in, prompt templates inlined); "
        f"a run event holds at most {MAX_SPEC_BYTES} bytes of it (the largest part: {largest}, "
        f"{amount(parts[largest])})"
    )


def _canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


# --------------------------------------------------------------------------- files a spec names


def allowed_folders(base: Path) -> list[Path]:
    """Where the files a spec reads may be: its own folder (``base``, resolved) and below, and
    specswarm's packaged templates."""
    folders = [base.resolve()]
    try:
        folders.append(resources.template_dir().resolve())
    except FileNotFoundError:
        pass
    return folders


def outside(value: str, base: Path, folders: Sequence[Path]) -> str | None:
    """What is wrong when the file ``value`` (relative to the spec's folder ``base``; ``~``
    expanded, symlinks resolved) lies outside every allowed folder, else None."""
    target = (base / Path(value).expanduser()).resolve()
    if any(target.is_relative_to(folder) for folder in folders):
        return None
    named = repr(value) if value == str(target) else f"{value!r} (that is {target})"
    return (
        f"{named} is outside the spec's folder {base.resolve()} (expected a file in it or in "
        f"specswarm's templates; {OUTSIDE_FLAG} allows any)"
    )
