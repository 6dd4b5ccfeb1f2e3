"""The connection's resettable deadline behaves as ``asyncio.timeout`` does."""

from __future__ import annotations

import asyncio

import pytest

from cks_desktop.mcp.deadline import Deadline


async def _forever() -> None:
    await asyncio.Event().wait()


@pytest.mark.asyncio
async def test_a_deadline_that_fires_ends_the_block_with_timeout_error() -> None:
    loop = asyncio.get_running_loop()
    deadline = Deadline(loop, loop.time() + 0.05)
    with pytest.raises(TimeoutError):
        with deadline:
            await _forever()
    assert deadline.expired()
    assert asyncio.current_task().cancelling() == 0  # type: ignore[union-attr]


@pytest.mark.asyncio
async def test_reschedule_moves_the_deadline_and_a_past_time_fires_at_once() -> None:
    loop = asyncio.get_running_loop()
    start = loop.time()
    deadline = Deadline(loop, start + 0.02)
    with pytest.raises(TimeoutError):
        with deadline:
            deadline.reschedule(start + 0.2)
            await _forever()
    assert loop.time() - start >= 0.19 and deadline.when() == start + 0.2
    past = Deadline(loop, loop.time() + 60)
    with pytest.raises(TimeoutError):
        with past:
            past.reschedule(loop.time() - 1)
            await _forever()


@pytest.mark.asyncio
async def test_a_block_that_finishes_in_time_leaves_no_timer_and_ignores_late_reschedules() -> None:
    loop = asyncio.get_running_loop()
    deadline = Deadline(loop, loop.time() + 0.05)
    with deadline:
        await asyncio.sleep(0)
    deadline.reschedule(loop.time() - 1)  # after the block: nothing is armed, nothing is cancelled
    done = asyncio.Event()
    loop.call_later(0.1, done.set)
    await done.wait()
    assert not deadline.expired()


@pytest.mark.asyncio
async def test_a_cancellation_from_outside_stays_a_cancellation() -> None:
    loop = asyncio.get_running_loop()
    entered = asyncio.Event()
    deadline = Deadline(loop, loop.time() + 60)

    async def call() -> None:
        with deadline:
            entered.set()
            await _forever()

    task = asyncio.create_task(call())
    await entered.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not deadline.expired()


@pytest.mark.asyncio
async def test_outside_cancellation_after_the_deadline_fired_is_not_swallowed() -> None:
    loop = asyncio.get_running_loop()
    deadline = Deadline(loop, loop.time() + 0.01)
    fired = asyncio.Event()

    async def call() -> None:
        with deadline:
            try:
                await _forever()
            except asyncio.CancelledError:
                fired.set()
                await _forever()  # still running when the outside cancel comes

    task = asyncio.create_task(call())
    await fired.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert deadline.expired()


def test_entering_outside_a_task_is_refused() -> None:
    loop = asyncio.new_event_loop()
    try:
        with pytest.raises(RuntimeError):
            with Deadline(loop, 0.0):
                pass
    finally:
        loop.close()
