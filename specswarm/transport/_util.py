"""Small helpers shared by the transports (no libp2p here)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable
from contextlib import asynccontextmanager


@asynccontextmanager
async def unwrap_single_group() -> AsyncIterator[None]:
    """Re-raise a lone exception out of (nested) trio nursery ExceptionGroups.

    Our context managers yield inside a nursery; without this, an error raised
    by the caller's own ``async with`` body would come back wrapped in a group.
    """
    try:
        yield
    except BaseExceptionGroup as group:
        inner: BaseException = group
        while isinstance(inner, BaseExceptionGroup) and len(inner.exceptions) == 1:
            inner = inner.exceptions[0]
        if inner is group:
            raise
        raise inner from None


async def quietly(awaitable: Awaitable[object]) -> None:
    """Await ``awaitable`` and ignore any Exception it raises (stream resets and closes)."""
    try:
        await awaitable
    except Exception:
        pass


def describe(exc: BaseException) -> str:
    """A one-line account of ``exc``: its text (or type name), plus its cause if that adds anything."""
    text = str(exc) or type(exc).__name__
    cause = exc.__cause__
    if cause is not None and str(cause) and str(cause) not in text:
        text = f"{text} ({cause})"
    return text
