"""An event-loop lag probe: a task that sleeps 10 ms at a time and records how
late each wake-up is. A fault or a big input that holds the loop for longer
than ``limit`` (250 ms, the point where a window visibly freezes) fails the test.

The probe starts from a frozen heap (``gc.freeze``): a full garbage
collection over everything a test process has loaded (every SDK, Qt, hypothesis)
takes ~0.2 s by itself, and which allocation triggers it is chance. That is the
heap an app has after calling ``gc.freeze()`` once it is up (docs/reliability.md).
"""

from __future__ import annotations

import asyncio
import gc
import time
from types import TracebackType

LIMIT = 0.25
TICK = 0.01


class LagProbe:
    def __init__(self, what: str = "", limit: float = LIMIT) -> None:
        self.what = what
        self.limit = limit
        self.worst = 0.0
        self.ticks = 0
        self._task: asyncio.Task[None] | None = None
        self._stop = False

    async def _run(self) -> None:
        while not self._stop:
            start = time.perf_counter()
            await asyncio.sleep(TICK)
            self.worst = max(self.worst, time.perf_counter() - start - TICK)
            self.ticks += 1

    async def __aenter__(self) -> "LagProbe":
        gc.freeze()
        self._task = asyncio.create_task(self._run())
        await asyncio.sleep(0)
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        self._stop = True
        assert self._task is not None
        await self._task
        gc.unfreeze()
        if exc_type is None:
            self.check()

    def check(self) -> None:
        assert self.worst <= self.limit, (
            f"{self.what}: the event loop was blocked for {self.worst * 1000:.0f} ms "
            f"(limit {self.limit * 1000:.0f} ms)")
