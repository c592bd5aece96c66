"""Embedded model assembly, exercised on small fake chunk packages (the real one is slow)."""

from __future__ import annotations

import hashlib
import sys
import threading
from pathlib import Path

import pytest

from specswarm.errors import ModelError
from specswarm.model import assets


def make_chunks(root: Path, parts: list[bytes], prefix: str) -> None:
    for n, data in enumerate(parts, 1):
        pkg = root / f"{prefix}{n}"
        (pkg / "data").mkdir(parents=True)
        (pkg / "__init__.py").write_text("raise RuntimeError('must not be imported')\n")
        (pkg / "data" / f"part{n:02d}.bin").write_bytes(data)


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> bytes:
    parts = [b"GGUF" + bytes(range(256)) * 3, b"middle" * 100, b"tail"]
    prefix = f"fake_chunks_{tmp_path.name.replace('-', '_')}_part"
    make_chunks(tmp_path / "site", parts, prefix)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    whole = b"".join(parts)
    monkeypatch.setattr(assets, "PACKAGE_PATTERN", prefix + "{n}")
    monkeypatch.setattr(assets, "PARTS", len(parts))
    monkeypatch.setattr(assets, "MODEL_SIZE", len(whole))
    monkeypatch.setattr(assets, "MODEL_SHA256", hashlib.sha256(whole).hexdigest())
    monkeypatch.setenv("SPECSWARM_CACHE", str(tmp_path / "cache"))
    return whole


def test_cache_dir_precedence(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("SPECSWARM_CACHE", str(tmp_path / "a"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "x"))
    assert assets.cache_dir() == tmp_path / "a"
    monkeypatch.delenv("SPECSWARM_CACHE")
    assert assets.cache_dir() == tmp_path / "x" / "specswarm"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert assets.cache_dir() == tmp_path / "home" / ".cache" / "specswarm"


def test_assembles_once_verifies_and_stamps(fake: bytes) -> None:
    path = assets.ensure_default_model()
    assert path == assets.model_path()
    assert path.read_bytes() == fake
    assert path.stat().st_mode & 0o777 == 0o644
    assert assets.status().verified
    assert not any(p.name.endswith(".part") for p in path.parent.iterdir())
    # chunk packages were located, never imported
    assert not [m for m in sys.modules if m.startswith("fake_chunks_")]


def test_second_start_does_not_rehash(fake: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    assets.ensure_default_model()

    def boom(*a: object, **k: object) -> str:
        raise AssertionError("re-hashed on a verified start")

    monkeypatch.setattr(assets, "sha256_file", boom)
    monkeypatch.setattr(assets, "assemble", boom)
    assert assets.ensure_default_model().read_bytes() == fake


def test_a_changed_file_is_rebuilt(fake: bytes) -> None:
    path = assets.ensure_default_model()
    path.write_bytes(b"X" * len(fake))  # same size, new mtime: the stamp no longer matches
    assert not assets.status().verified
    assert assets.ensure_default_model().read_bytes() == fake


def test_concurrent_starts_assemble_once(fake: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    real = assets.assemble

    def counting(*a, **k):  # type: ignore[no-untyped-def]
        calls.append(1)
        return real(*a, **k)

    monkeypatch.setattr(assets, "assemble", counting)
    threads = [threading.Thread(target=assets.ensure_default_model) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1
    assert assets.model_path().read_bytes() == fake


def test_corrupt_chunk_leaves_nothing_behind(fake: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(assets, "MODEL_SHA256", "0" * 64)
    with pytest.raises(ModelError, match=r"assembled model has sha256 [0-9a-f]{64}, expected 0{64}"):
        assets.ensure_default_model()
    assert not assets.model_path().exists()
    assert not [p for p in assets.model_dir().iterdir() if p.name.endswith(".part")]


def test_wrong_total_size(fake: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(assets, "MODEL_SIZE", len(fake) + 1)
    with pytest.raises(ModelError, match=r"chunks add up to 1,376 bytes, expected 1,377"):
        assets.ensure_default_model()


def test_missing_chunk_package(fake: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(assets, "PARTS", 5)
    with pytest.raises(ModelError) as info:
        assets.chunk_paths()
    msg = str(info.value)
    assert msg.startswith("embedded model chunks missing (fake-chunks-")
    assert "-part4, fake-chunks-" in msg and msg.count("fake-chunks-") == 2
    assert msg.endswith("-part5): run pip install -e . to install the embedded model")


def test_real_chunks_are_installed_and_add_up() -> None:
    paths = assets.chunk_paths()
    assert [p.name for p in paths] == [f"part{n:02d}.bin" for n in range(1, 23)]
    assert sum(p.stat().st_size for p in paths) == 1_117_320_768


def test_assembly_progress_in_a_log_is_a_line_per_quarter(capsys: pytest.CaptureFixture[str]) -> None:
    """Not a terminal (a CI log): no carriage returns, five short lines, not one of a hundred."""
    from specswarm.cli.model import _progress_printer

    progress = _progress_printer("assembling")
    for done in range(0, 2**30 + 1, 2**20):
        progress(done, 2**30)
    err = capsys.readouterr().err
    assert "\r" not in err
    assert err.splitlines() == [
        f"assembling: {pct:3d}% ({pct * 1024 // 100:,} / 1,024 MiB)" for pct in (0, 25, 50, 75, 100)
    ]
