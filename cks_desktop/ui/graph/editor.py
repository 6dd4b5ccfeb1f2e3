"""Hand edits in the graph view, through the tool registry like any other write.

Every edit is a ``ToolCall`` run with ``Caller.USER``, so the change history
records origin "user", the same validation applies as for a model, and
``revert_change`` can undo it. The person's own gesture (a click on Delete,
a rename) *is* the approval, so runs answer approval requests with "allow"
instead of asking "may I do what you just did?".

The undo stack holds the change ids of this view's own edits, newest last;
Ctrl+Z reverts the newest through ``revert_change`` (a new change, so it can
itself be seen in the history). The redo stack holds the ids of those revert
changes: Ctrl+Shift+Z reverts the newest revert (the edit comes back, as a new
change that goes back on the undo stack); any new edit empties it, as in every
editor. An undo that fails (a later change touched the
same objects in a way that cannot be reverted cleanly) leaves the stack as it
was and says why in one sentence. Qt-free.
"""

from __future__ import annotations

import asyncio

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from cks_desktop.ids import new_id
from cks_desktop.tools.approval import Decision, StaticApprover
from cks_desktop.tools.context import Run
from cks_desktop.tools.registry import ToolRegistry
from cks_desktop.tools.types import Caller, ToolCall, ToolResult

MAX_UNDO = 200


@dataclass(frozen=True)
class EditResult:
    ok: bool
    message: str  # one sentence for the status bar
    change_id: str | None = None
    structured: Any = None

    @property
    def created_id(self) -> str | None:
        """The id of the object or relation the edit created, if any."""
        data = self.structured if isinstance(self.structured, dict) else {}
        for key in ("object", "relation"):
            item = data.get(key)
            if isinstance(item, dict) and isinstance(item.get("id"), str):
                return item["id"]
        created = data.get("created")
        if isinstance(created, dict):
            for value in created.values():
                if isinstance(value, str):
                    return value
        return None


def _first_line(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else "The edit failed."
    return line if len(line) <= 300 else line[:297] + "..."


class GraphEditor:
    def __init__(self, registry: ToolRegistry, session_id: str | None = None) -> None:
        self.registry = registry
        self.session_id = session_id
        self._undo: list[str] = []
        self._redo: list[str] = []  # ids of the changes undo made, newest last
        # Every change this view made (edits, undos, redos): Undo asks first only when a change
        # made elsewhere built upon the one it reverts (ui/revert_ask.py).
        self.made: set[str] = set()
        self.on_stack_changed: Callable[[], None] | None = None  # the view's enabled states follow
        # Edits still running. The store announces a write (from its worker thread) before
        # the edit's change id reaches the undo stack, so undo first lets these land.
        self._inflight: set[asyncio.Future[None]] = set()

    def set_session(self, session_id: str | None) -> None:
        if session_id != self.session_id:
            self.session_id = session_id
            self._undo.clear()
            self.made.clear()
            self._redo.clear()
            self._stack_changed()

    def _stack_changed(self) -> None:
        if self.on_stack_changed is not None:
            self.on_stack_changed()

    @property
    def can_redo(self) -> bool:
        return bool(self._redo)

    def record(self, change_id: str) -> None:
        """A change the person made elsewhere in the window (File → Import graph…) joins the
        undo stack like an edit of this view."""
        self._undo.append(change_id)
        self.made.add(change_id)
        del self._undo[:-MAX_UNDO]
        self._redo.clear()
        self._stack_changed()

    @property
    def can_undo(self) -> bool:
        return bool(self._undo)

    @property
    def undo_stack(self) -> list[str]:
        return list(self._undo)

    async def invoke(self, name: str, arguments: dict[str, Any], *, record: bool = True) -> EditResult:
        if self.session_id is None:
            return EditResult(False, "Open a session first.")
        run = Run(self.session_id, Caller.USER, approver=StaticApprover(Decision.ALLOW))
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._inflight.add(done)
        try:
            result: ToolResult = await self.registry.invoke(ToolCall(new_id("call_"), name, dict(arguments)), run)
        finally:
            self._inflight.discard(done)
            done.set_result(None)
        data = result.structured if isinstance(result.structured, dict) else {}
        if result.is_error:
            return EditResult(False, _first_line(result.content), None, result.structured)
        change_id = result.change_id
        if change_id:
            self.made.add(change_id)
        if record and change_id:
            self.record(change_id)
        summary = data.get("summary") if isinstance(data.get("summary"), str) else ""
        return EditResult(True, summary or "Done.", change_id, result.structured)

    # -- objects ----------------------------------------------------------
    async def add_object(self, type_name: str, name: str, properties: dict[str, Any] | None = None) -> EditResult:
        args: dict[str, Any] = {"type": type_name, "name": name}
        if properties:
            args["properties"] = properties
        return await self.invoke("add_object", args)

    async def update_object(self, object_id: str, *, name: str | None = None, type_name: str | None = None,
                            set_properties: dict[str, Any] | None = None,
                            remove_properties: Iterable[str] | None = None,
                            if_unchanged_since: str | None = None) -> EditResult:
        """``if_unchanged_since``: the object's version the person saw (graph/edit_base.py): a
        field changed by someone else since makes the edit fail whole with that sentence."""
        args: dict[str, Any] = {"ref": object_id}
        if name is not None:
            args["name"] = name
        if type_name is not None:
            args["type"] = type_name
        if set_properties:
            args["set_properties"] = set_properties
        remove = list(remove_properties or [])
        if remove:
            args["remove_properties"] = remove
        if len(args) == 1:
            return EditResult(True, "Nothing changed.")
        if if_unchanged_since:
            args["if_unchanged_since"] = if_unchanged_since
        return await self.invoke("update_object", args)

    async def remove_objects(self, object_ids: Iterable[str]) -> EditResult:
        """Delete objects (and their relations) as ONE change, so one undo brings them all back."""
        ids = list(dict.fromkeys(object_ids))
        if not ids:
            return EditResult(True, "Nothing to delete.")
        if len(ids) == 1:
            return await self.invoke("remove_object", {"ref": ids[0]})
        ops = [{"op": "remove_object", "ref": oid} for oid in ids]
        return await self.invoke("evolve_knowledge", {"operations": ops})

    # -- relations --------------------------------------------------------
    async def add_relation(self, source_id: str, target_id: str, type_name: str) -> EditResult:
        return await self.invoke("add_relation", {"source": source_id, "target": target_id, "type": type_name})

    async def remove_relation(self, relation_id: str) -> EditResult:
        return await self.invoke("remove_relation", {"relation_id": relation_id})

    async def replace_relation(self, relation_id: str, source_id: str, target_id: str, type_name: str,
                               properties: dict[str, Any] | None = None) -> EditResult:
        """Change a relation's type or properties: remove and re-add in one change (one undo).

        There is no update tool for relations (models never need one: they add and
        remove); one batch keeps it a single, revertible change."""
        add: dict[str, Any] = {"op": "add_relation", "source": source_id, "target": target_id, "type": type_name}
        if properties:
            add["properties"] = properties
        ops = [{"op": "remove_relation", "relation_id": relation_id}, add]
        return await self.invoke("evolve_knowledge", {"operations": ops})

    # -- undo -------------------------------------------------------------
    async def settle(self) -> None:
        """Wait for the edits still running: their change ids join the undo stack and ``made``
        only when the registry call returns, after the store has already announced the write."""
        while self._inflight:
            await asyncio.gather(*self._inflight)

    async def undo(self) -> EditResult:
        await self.settle()
        if not self._undo:
            return EditResult(False, "Nothing to undo.")
        # Taken off the stack before the revert runs, so a second Ctrl+Z pressed while this
        # one is still in flight undoes the change before it, not the same one twice.
        change_id = self._undo.pop()
        self._stack_changed()
        result = await self.invoke("revert_change", {"change_id": change_id}, record=False)
        if result.ok:
            if result.change_id:
                self._redo.append(result.change_id)
                del self._redo[:-MAX_UNDO]
            self._stack_changed()
            return EditResult(True, f"Undone: {result.message}", result.change_id, result.structured)
        self._undo.append(change_id)
        self._stack_changed()
        return result

    async def redo(self) -> EditResult:
        """Revert the newest undo: the edit comes back and can be undone again."""
        await self.settle()
        if not self._redo:
            return EditResult(False, "Nothing to redo.")
        revert_id = self._redo.pop()
        self._stack_changed()
        result = await self.invoke("revert_change", {"change_id": revert_id}, record=False)
        if result.ok:
            if result.change_id:
                self._undo.append(result.change_id)
                del self._undo[:-MAX_UNDO]
            self._stack_changed()
            return EditResult(True, f"Redone: {result.message}", result.change_id, result.structured)
        self._redo.append(revert_id)
        self._stack_changed()
        return result
