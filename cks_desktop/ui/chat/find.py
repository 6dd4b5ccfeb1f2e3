"""Find in the chat (Ctrl+F): which items contain the text (Qt-free)."""

from __future__ import annotations

import json
import re

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


_OBJECT_ID = re.compile(r"\bo_[0-9A-HJKMNP-TV-Z]{26}\b")


def mentioned_ids(item: ChatItem) -> list[str]:
    """Object ids a tool call's arguments or result name, in order, without repeats."""
    return list(dict.fromkeys(_OBJECT_ID.findall(item_text(item))))
