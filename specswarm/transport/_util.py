"""Small helpers shared by the transports."""

from __future__ import annotations

from collections.abc import AsyncIterator
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
