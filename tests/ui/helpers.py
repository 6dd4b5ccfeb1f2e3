"""Helpers for the UI tests: futures resolved by Qt signals (never qtbot.wait* in async tests)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from cks_desktop.tools.approval import ApprovalRequest, reason_for
from cks_desktop.tools.types import Policy, Scope, ToolCall, ToolSpec


def signal_future(signal: Any, predicate: Callable[..., bool] = lambda *a: True) -> asyncio.Future[tuple]:
    """A future resolved with the arguments of the next emission that passes ``predicate``."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[tuple] = loop.create_future()

    def slot(*args: Any) -> None:
        if not future.done() and predicate(*args):
            future.set_result(args)

    signal.connect(slot)
    future.add_done_callback(lambda _f: signal.disconnect(slot))
    return future


def model_future(model: Any, predicate: Callable[[Any], bool]) -> asyncio.Future[None]:
    """A future resolved once ``predicate(model)`` holds after a change to a ``ChatModel``."""
    future: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    class _Listener:
        def check(self) -> None:
            if not future.done() and predicate(model):
                future.set_result(None)

        def items_reset(self) -> None:
            self.check()

        def item_inserted(self, _index: int) -> None:
            self.check()

        def item_changed(self, _index: int) -> None:
            self.check()

    listener = _Listener()
    model.subscribe(listener)
    future.add_done_callback(lambda _f: model.unsubscribe(listener))
    listener.check()
    return future


async def wait(awaitable: Any, timeout: float = 20.0) -> Any:
    return await asyncio.wait_for(awaitable, timeout)


async def _noop(args: dict, ctx: Any) -> dict:
    return {"ok": True}


def tool_spec(name: str = "add_object", *, source: str = "builtin", title: str = "",
              scopes: frozenset[Scope] = frozenset({Scope.GRAPH_MUTATE}),
              policy: Policy = Policy.ALWAYS) -> ToolSpec:
    return ToolSpec(name=name, description="test tool", input_schema={"type": "object"}, scopes=scopes,
                    default_policy=policy, llm_exposed=True, handler=_noop, title=title, source=source)


def approval_request(arguments: dict | None = None, *, spec: ToolSpec | None = None, call_id: str = "call_1",
                     preview: str | None = None, session_id: str = "s1") -> ApprovalRequest:
    spec = spec or tool_spec()
    call = ToolCall(call_id, spec.name, arguments if arguments is not None else {"name": "Alice"})
    policy = spec.default_policy
    return ApprovalRequest(call=call, tool=spec, scopes=spec.scopes, policy=policy,
                           reason=reason_for(policy, spec), preview=preview, session_id=session_id)
