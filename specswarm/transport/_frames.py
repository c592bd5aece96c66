"""Length-prefixed frames on a byte stream: a 4-byte big-endian length, then the payload."""

from __future__ import annotations

import struct
from collections.abc import Awaitable, Callable

MAX_FRAME = 32 * 1024 * 1024
"""Largest payload we send or accept (32 MiB: a whole event log of a big run)."""

_HEADER = struct.Struct(">I")


class FrameError(Exception):
    """The peer sent something that is not a frame, or closed the stream mid-frame."""


def encode_frame(payload: bytes, max_frame: int = MAX_FRAME) -> bytes:
    """Header + payload; raises FrameError for an oversized payload."""
    if len(payload) > max_frame:
        raise FrameError(f"frame of {len(payload)} bytes exceeds the limit of {max_frame}")
    return _HEADER.pack(len(payload)) + payload


async def read_frame(read: Callable[[int], Awaitable[bytes]], max_frame: int = MAX_FRAME) -> bytes:
    """Read one frame with ``read(n)`` (which returns at most n bytes, b"" at the end)."""
    (length,) = _HEADER.unpack(await _read_exactly(read, _HEADER.size))
    if length > max_frame:
        raise FrameError(f"frame of {length} bytes exceeds the limit of {max_frame}")
    return await _read_exactly(read, length)


async def _read_exactly(read: Callable[[int], Awaitable[bytes]], n: int) -> bytes:
    chunks: list[bytes] = []
    missing = n
    while missing:
        chunk = await read(missing)
        if not chunk:
            raise FrameError(f"stream ended {missing} bytes short of a {n}-byte read")
        chunks.append(chunk)
        missing -= len(chunk)
    return b"".join(chunks)
