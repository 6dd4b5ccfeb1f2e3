"""Helpers every built-in handler shares: store errors → ToolError, running
big work off the event loop, dry-run previews, and compact JSON shapes.

Results are compact but complete: each object shows id, type and name (so a
model can refer to it by either), relations name their other end, and every
write reports the change id that ``revert_change`` accepts.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

from cks_desktop.graph.errors import AmbiguousRef, NotFound, StoreError, ValidationFailed
from cks_desktop.tools.builtin.effects import note_own_additions
from cks_desktop.tools.registry import is_big
from cks_desktop.tools.types import ToolError

if TYPE_CHECKING:
    from cks_desktop.graph.model import Change, Object, Relation
    from cks_desktop.graph.store import ApplyResult, GraphStore
    from cks_desktop.tools.context import ToolContext

T = TypeVar("T")

BIG_BATCH = 50  # operations; above this a batch is validated and written on a worker thread



@contextmanager
def store_errors(*, single_op: bool = False) -> Iterator[None]:
    """Turn the store's sentences into tool errors the model can read.

    ``single_op``: the batch had one operation the caller did not write as a
    list, so "operation 0:" would only confuse; the store's own sentence is used.
    """
    try:
        yield
    except ValidationFailed as exc:
        errors = list(exc.errors)
        if single_op and len(errors) == 1:
            message = f"{_sentence(errors[0].get('message', ''))} Nothing was written."
        else:
            message = str(exc)
        raise ToolError(message, structured={"status": "validation_failed", "errors": errors}) from None
    except AmbiguousRef as exc:
        raise ToolError(str(exc), structured={"candidates": list(exc.candidates)}) from None
    except NotFound as exc:
        raise ToolError(str(exc), structured={"not_found": True}) from None
    except StoreError as exc:
        raise ToolError(str(exc)) from None


def _sentence(text: str) -> str:
    text = text.strip() or "The operation is invalid."
    return text if text[-1] in ".!?" else text + "."


async def blocking(fn: Callable[..., T], *args: Any, offload: bool = True, **kwargs: Any) -> T:
    """Call a store function, on a worker thread when it may take a while.

    The store is thread-safe by contract; small reads stay on the loop because
    a thread hop costs more than they do.
    """
    with store_errors():
        if offload:
            return await asyncio.to_thread(fn, *args, **kwargs)
        return fn(*args, **kwargs)


def resolve(ctx: "ToolContext", ref: str) -> "Object":
    with store_errors():
        return ctx.store.resolve(ctx.session_id, ref)


async def apply_ops(ctx: "ToolContext", ops: list[dict[str, Any]], *, dry_run: bool = False,
                    single_op: bool = False) -> "ApplyResult":
    """The one write path of every built-in: ``store.apply`` with the run's origin."""
    # On a worker thread when the work is not bounded by what the caller sent: many ops, a few
    # carrying megabytes, or a removal (which takes every relation of the object with it: 0.9 s
    # for an object with 10,000). Small edits stay on the loop, where they finish in a millisecond.
    offload = len(ops) > BIG_BATCH or is_big(ops) or any(op.get("op") == "remove_object" for op in ops)
    with store_errors(single_op=single_op):
        if offload:
            result = await asyncio.to_thread(ctx.store.apply, ctx.session_id, ops, ctx.run.origin, dry_run)
        else:
            result = ctx.store.apply(ctx.session_id, ops, ctx.run.origin, dry_run=dry_run)
    if dry_run:
        return result
    note_own_additions(ctx, result)  # the model may edit what it added itself without asking
    return recorded(ctx, result)


def recorded(ctx: "ToolContext", result: "ApplyResult") -> "ApplyResult":
    """Tell the call's context which change a write made (it becomes ``ToolResult.change_id``).
    Every built-in write goes through here: ``apply_ops``, revert, import."""
    ctx.record_change(result.change.id if result.change else None)
    return result


async def preview_ops(ctx: "ToolContext", ops: list[dict[str, Any]]) -> str:
    """What the approval dialog shows: the dry run's summary, or why it would fail."""
    try:
        result = await apply_ops(ctx, ops, dry_run=True)
    except ToolError as exc:
        return f"This call would fail: {exc.message}"
    return result.summary or "changes nothing"


def write_result(result: "ApplyResult") -> dict[str, Any]:
    return {"change_id": result.change.id if result.change else None, "summary": result.summary}


# -- shapes -----------------------------------------------------------------
def brief(obj: "Object") -> dict[str, Any]:
    return {"id": obj.id, "type": obj.type, "name": obj.name}


def full(obj: "Object", *, times: bool = False) -> dict[str, Any]:
    data = {"id": obj.id, "type": obj.type, "name": obj.name, "properties": obj.properties}
    if times:
        data["created_at"] = obj.created_at
        data["updated_at"] = obj.updated_at
    return data


def edge(rel: "Relation") -> dict[str, Any]:
    """A relation in a result that lists its objects separately (ids suffice)."""
    data: dict[str, Any] = {"id": rel.id, "type": rel.type, "source_id": rel.source_id,
                            "target_id": rel.target_id}
    if rel.properties:
        data["properties"] = rel.properties
    return data


def change_json(change: "Change") -> dict[str, Any]:
    return change.to_json()


class Ends:
    """Looks up the objects at the ends of relations, once each."""

    def __init__(self, store: "GraphStore", session_id: str) -> None:
        self._store = store
        self._session_id = session_id
        self._cache: dict[str, dict[str, Any]] = {}

    def remember(self, obj: "Object") -> None:
        self._cache[obj.id] = brief(obj)

    def __call__(self, object_id: str) -> dict[str, Any]:
        hit = self._cache.get(object_id)
        if hit is None:
            try:
                hit = brief(self._store.get_object(self._session_id, object_id))
            except NotFound:  # a dangling end would be a store bug; show the id rather than fail
                hit = {"id": object_id, "type": None, "name": None}
            self._cache[object_id] = hit
        return hit

    def relation(self, rel: "Relation") -> dict[str, Any]:
        data: dict[str, Any] = {"id": rel.id, "type": rel.type, "source": self(rel.source_id),
                                "target": self(rel.target_id)}
        if rel.properties:
            data["properties"] = rel.properties
        return data
