"""Find in the chat (Ctrl+F): which items contain the text (Qt-free)."""

from __future__ import annotations

import json

from cks_desktop.ui.chat.model import ChatItem, MessageItem


def item_text(item: ChatItem) -> str:
    if isinstance(item, MessageItem):
        return item.text
    args = json.dumps(item.arguments, ensure_ascii=False) if item.arguments is not None else ""
    return "\n".join((item.display_name, item.name, args, item.result or ""))


def find_matches(items: list[ChatItem], needle: str) -> list[int]:
    needle = needle.casefold().strip()
    if not needle:
        return []
    return [i for i, item in enumerate(items) if needle in item_text(item).casefold()]
