"""The assistant (``Assistant``: one object, one call per turn), the chat loop underneath it
(``ai_chat``), its events, the provider holder and the transcript store.

``from cks_desktop.agent import Assistant`` works without importing the loop for every user of
``agent.events`` (PEP 562 lazy attribute).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cks_desktop.agent.assistant import Assistant, TurnResult

__all__ = ["Assistant", "TurnResult"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from cks_desktop.agent import assistant

        return getattr(assistant, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
