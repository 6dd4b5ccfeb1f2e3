"""An MCP server's prompts: listing (paged), getting one with arguments, and completions.

A prompt is a template the server fills in (``prompts/get``); the chat offers each as a
slash command ``/server:prompt`` with a small form for its arguments, and
``completion/complete`` suggests values as the person types (``ui/chat/slash_commands.py``).
Requests go through ``requests.send``; listings are bounded like resource listings.

A filled-in prompt is the server's text: it goes into the person's message box as plain
text for them to read and send (``prompt_text``), never into a system prompt. Embedded
resources are cut like a resource read (``resources.MAX_READ_CHARS``); images and audio
become a note.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import mcp_types as types

from cks_desktop.mcp.convert import describe_block
from cks_desktop.mcp.requests import RequestFailed, send
from cks_desktop.mcp.resources import MAX_ITEMS, MAX_PAGES, MAX_READ_CHARS

if TYPE_CHECKING:
    from cks_desktop.mcp.connection import McpConnection

MAX_PROMPT_CHARS = 200_000  # characters of one filled-in prompt kept
MAX_COMPLETIONS = 100  # the spec's own cap on values per answer
MAX_ARGUMENT = 10_000  # characters of one argument value sent


@dataclass(frozen=True)
class PromptText:
    """A filled-in prompt as text, with what was cut."""

    server: str
    name: str
    description: str
    messages: list[tuple[str, str]]  # (role, text)
    notice: str = ""

    @property
    def text(self) -> str:
        """What goes into the message box: one user message as it is; several with their roles."""
        if len(self.messages) == 1 and self.messages[0][0] == "user":
            body = self.messages[0][1]
        else:
            body = "\n\n".join(f"[{role}]\n{text}" for role, text in self.messages)
        return f"{body}\n[{self.notice}]" if self.notice else body

    def to_json(self) -> dict[str, Any]:
        return {"server": self.server, "prompt": self.name, "description": self.description,
                "messages": [{"role": r, "text": t} for r, t in self.messages], "notice": self.notice}


def supports_prompts(conn: "McpConnection") -> bool:
    client = conn.client
    caps = client.server_capabilities if client is not None else None
    return caps is not None and caps.prompts is not None


def supports_completions(conn: "McpConnection") -> bool:
    client = conn.client
    caps = client.server_capabilities if client is not None else None
    return caps is not None and caps.completions is not None


async def list_prompts(conn: "McpConnection") -> tuple[list[types.Prompt], str]:
    """Every prompt (paged, bounded) and a notice naming what the bounds left out."""
    if conn.client is not None and not supports_prompts(conn):
        return [], ""
    items: list[types.Prompt] = []
    cursor: str | None = None
    seen: set[str] = set()
    for _ in range(MAX_PAGES):
        async def one(client: Any, cursor: str | None = cursor) -> types.ListPromptsResult:
            result: types.ListPromptsResult = await client.list_prompts(cursor=cursor, cache_mode="bypass")
            return result

        page = await send(conn, "the request to list its prompts", one)
        items += page.prompts
        cursor = page.next_cursor
        if not cursor or cursor in seen or len(items) >= MAX_ITEMS:
            break
        seen.add(cursor)
    else:
        return items, f"The server's prompt listing has more than {MAX_PAGES} pages; only the first were read."
    if len(items) > MAX_ITEMS:
        return items[:MAX_ITEMS], f"The server lists more than {MAX_ITEMS:,} prompts; only the first are shown."
    return items, ""


def missing_arguments(prompt: types.Prompt, values: dict[str, str]) -> list[str]:
    return [a.name for a in prompt.arguments or [] if a.required and not values.get(a.name)]


def check_arguments(prompt: types.Prompt | None, values: Any) -> dict[str, str]:
    """The arguments as the protocol wants them (strings), or ``ValueError`` with a sentence."""
    if not isinstance(values, dict):
        raise ValueError("The prompt's arguments must be a JSON object of strings, e.g. '{\"name\": \"Ada\"}'.")
    out: dict[str, str] = {}
    for key, value in values.items():
        if isinstance(value, (dict, list)) or value is None:
            raise ValueError(f"The argument '{key}' must be a string (prompt arguments are text).")
        text = value if isinstance(value, str) else str(value).lower() if isinstance(value, bool) else str(value)
        if len(text) > MAX_ARGUMENT:
            raise ValueError(f"The argument '{key}' is longer than {MAX_ARGUMENT:,} characters.")
        out[str(key)] = text
    if prompt is not None:
        known = {a.name for a in prompt.arguments or []}
        unknown = [k for k in out if k not in known]
        if unknown:
            names = ", ".join(sorted(known)) or "none"
            raise ValueError(f"The prompt '{prompt.name}' has no argument {', '.join(unknown)} (its arguments: {names}).")
        missing = missing_arguments(prompt, out)
        if missing:
            raise ValueError(f"The prompt '{prompt.name}' needs {', '.join(missing)}.")
    return out


def _message_text(content: Any) -> str:
    if isinstance(content, types.EmbeddedResource) and isinstance(content.resource, types.TextResourceContents):
        text = content.resource.text
        if len(text) > MAX_READ_CHARS:
            text = text[:MAX_READ_CHARS] + f"\n[the embedded resource had {len(content.resource.text):,} characters; " \
                                           f"only the first {MAX_READ_CHARS:,} are kept]"
        return f"[resource: {content.resource.uri}]\n{text}"
    return describe_block(content)


async def get_prompt(conn: "McpConnection", name: str, arguments: dict[str, str]) -> PromptText:
    """Fill in one prompt. Raises ``RequestFailed``."""
    result: types.GetPromptResult = await send(conn, f"the request to get the prompt '{name[:100]}'",
                                               lambda client: client.get_prompt(name, arguments or None))
    messages: list[tuple[str, str]] = []
    total = 0
    notice = ""
    for message in result.messages:
        text = _message_text(message.content)
        if total + len(text) > MAX_PROMPT_CHARS:
            text = text[:max(0, MAX_PROMPT_CHARS - total)]
            notice = f"The prompt was longer than {MAX_PROMPT_CHARS:,} characters; the rest was left out."
        total += len(text)
        messages.append((str(message.role), text))
        if notice:
            break
    return PromptText(conn.name, name, result.description or "", messages, notice)


async def complete(conn: "McpConnection", ref: types.PromptReference | types.ResourceTemplateReference,
                   argument: str, value: str, context: dict[str, str] | None = None) -> list[str]:
    """Suggested values for one argument (of a prompt or a resource template) as typed so far.

    A server without the completions capability suggests nothing; so does one that fails
    (a suggestion is a help, never an error the person has to read)."""
    if not supports_completions(conn):
        return []
    try:
        result: types.CompleteResult = await send(
            conn, "the request for completions",
            lambda client: client.complete(ref, {"name": argument, "value": value[:MAX_ARGUMENT]},
                                           context_arguments=context or None),
            timeout=min(conn.config.timeout, 10.0))
    except RequestFailed as exc:
        conn.log.note(f"completion failed: {exc}")
        return []
    values = [v for v in result.completion.values[:MAX_COMPLETIONS] if isinstance(v, str)]
    return [v[:500] for v in values]


def prompt_info(prompt: types.Prompt) -> dict[str, Any]:
    return {"name": prompt.name, "title": prompt.title or "", "description": prompt.description or "",
            "arguments": [{"name": a.name, "description": a.description or "", "required": bool(a.required)}
                          for a in prompt.arguments or []]}
