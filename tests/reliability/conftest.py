"""Fixtures shared by the reliability suite."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator

import pytest_asyncio


@pytest_asyncio.fixture
async def asyncgen_hooks() -> AsyncIterator[None]:
    """Install the running loop's async-generator hooks for the test.

    qasync does not install them, so an async generator an SDK leaves suspended
    after an error would be finalised by the garbage collector outside the loop
    (and warn). With the hooks the loop closes it itself, as plain asyncio does.
    """
    loop = asyncio.get_running_loop()
    previous = sys.get_asyncgen_hooks()
    sys.set_asyncgen_hooks(firstiter=loop._asyncgen_firstiter_hook,  # type: ignore[attr-defined]
                           finalizer=loop._asyncgen_finalizer_hook)  # type: ignore[attr-defined]
    try:
        yield
        await asyncio.sleep(0)
        await loop.shutdown_asyncgens()
    finally:
        sys.set_asyncgen_hooks(*previous)
