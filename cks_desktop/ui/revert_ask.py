"""Ask before a revert that would undo what later changes built upon.

Why: on a shared graph a change the person reverts (a chat row's Revert, Ctrl+Z in the graph)
may have been built upon since — another member, the model or a terminal changed the same
objects. Reverting applies the change's inverse, which silently undoes fields those later
changes relied on. The store says which changes those are (``GraphStore.revert_impact``);
this asks the person with that list, Cancel being the default. Nothing later → no question.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Collection

from PySide6.QtWidgets import QWidget

from cks_desktop.graph.model import Change
from cks_desktop.graph.store import GraphStore
from cks_desktop.plural import counted
from cks_desktop.ui.dialogs import confirm

log = logging.getLogger(__name__)
SHOWN = 8  # later changes listed by name; the rest are counted


def impact_text(later: list[Change]) -> str:
    """The later changes as lines a person reads: who, when, what (newest first)."""
    lines = [f"• {c.summary or c.id} — by {c.origin}, {c.at[:16].replace('T', ' ')}" for c in later[:SHOWN]]
    if len(later) > SHOWN:
        lines.append(f"• and {counted(len(later) - SHOWN, 'more change')}")
    return "\n".join(lines)


async def confirm_revert(parent: QWidget | None, store: GraphStore, session_id: str, change_id: str,
                         *, own: Collection[str] = ()) -> bool:
    """True when the revert may go ahead: nothing later touched the same objects (except the
    changes in ``own``, e.g. the person's own undo stack), or the person said so."""
    try:
        later = await asyncio.to_thread(store.revert_impact, session_id, change_id)
    except Exception:  # noqa: BLE001 - the revert itself then says what is wrong, in one sentence
        log.info("reading what a revert would undo failed", exc_info=True)
        return True
    later = [c for c in later if c.id not in own]
    if not later:
        return True
    return await confirm(parent, "Revert a change others built upon",
                         f"{counted(len(later), 'later change')} touched the same objects. Reverting also "
                         "undoes what they rely on:",
                         informative=impact_text(later), accept_text="Revert anyway", destructive=True)
