"""The client's side of the protocol's server-to-client features, as the SDK's callbacks.

``mcp.Client`` declares a capability for each callback it is given (``elicitation`` form
and URL, ``sampling`` with tools, ``roots`` with list_changed), so giving them is what
declares them; this module never speaks the protocol itself. ``ClientHooks`` is shared
by every connection of one manager; ``client_kwargs(connection)`` gives one connection's
callbacks, bound to its server's name, settings and log:

- elicitation: the requested schema becomes a ``Form`` (``elicit_form.py``) and goes to the
  host; a schema outside MCP's subset is answered with an error (one sentence, also noted in
  the server's log), never with a half-built form;
- sampling: the request becomes a ``SamplingRequest``; one too big for a model's context is
  refused before anyone is asked; the server's ``"sampling"`` setting is ``ask`` (default),
  ``allow`` (run without asking) or ``off`` (not declared: the server sees no sampling);
- roots: the folders the person allowed (Settings → Chat & agent) plus the server's own
  ``"roots"``, as ``file://`` URIs; ``ClientHooks.roots_for`` is what ``list_changed`` compares;
- logging: the server's ``"logLevel"`` (default ``info``) is set with ``logging/setLevel`` on a
  handshake connection and sent as the per-request opt-in on a 2026-07-28 one (``Client.log_level``);
  each message goes into the server's log with its level, at most ``LOG_RATE`` a second (a
  flood costs a count of dropped lines, not the disk or the loop).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import mcp_types as types
from mcp.client.session import ClientRequestContext

from cks_desktop.mcp.elicit_form import Form, FormSchemaError, parse_form
from cks_desktop.mcp.host import (
    MAX_SAMPLING_TOKENS,
    DecliningHost,
    McpHost,
    SampleTurn,
    SamplingRequest,
    sampling_problem,
)

if TYPE_CHECKING:
    from cks_desktop.mcp.config import ServerConfig
    from cks_desktop.mcp.stderr_log import ServerLog

log = logging.getLogger(__name__)

LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
LOG_RATE = 50.0  # server log messages kept per second (a burst of LOG_BURST first)
LOG_BURST = 200
MAX_LOG_DATA = 2_000  # characters of one message's data


def level_rank(level: str) -> int:
    return LOG_LEVELS.index(level) if level in LOG_LEVELS else 1


class _LogGate:
    """A token bucket: a server that floods log messages loses lines, and one note says how many."""

    def __init__(self, log: "ServerLog", rate: float = LOG_RATE, burst: int = LOG_BURST) -> None:
        self.log = log
        self.rate, self.burst = rate, burst
        self.tokens = float(burst)
        self.at = time.monotonic()
        self.dropped = 0

    def admit(self) -> bool:
        now = time.monotonic()
        self.tokens = min(self.burst, self.tokens + (now - self.at) * self.rate)
        self.at = now
        if self.tokens >= 1:
            if self.dropped:
                self.log.note(f"{self.dropped} log messages from the server were dropped (more than "
                              f"{self.rate:g} a second)")
                self.dropped = 0
            self.tokens -= 1
            return True
        self.dropped += 1
        return False


def log_line(params: types.LoggingMessageNotificationParams) -> str:
    data = params.data if isinstance(params.data, str) else json.dumps(params.data, ensure_ascii=False, default=str)
    if len(data) > MAX_LOG_DATA:
        data = data[:MAX_LOG_DATA] + " […]"
    who = f" {params.logger[:80]}:" if params.logger else ""
    return f"[{params.level}]{who} {data}"


def _block_text(block: Any) -> tuple[str, bool]:
    """A sampling content block as text, and whether it is plain text."""
    kind = getattr(block, "type", "")
    if kind == "text":
        return str(block.text), True
    if kind in ("image", "audio"):
        return f"[{kind}: {block.mime_type}]", False
    if kind == "tool_use":
        return f"[tool use: {block.name} {json.dumps(block.input, ensure_ascii=False)[:500]}]", False
    if kind == "tool_result":
        inner = " ".join(str(getattr(b, "text", f"[{getattr(b, 'type', '?')}]")) for b in block.content)
        return f"[tool result for {block.tool_use_id}: {inner[:2000]}]", False
    return f"[{kind or 'unknown'} content]", False


def sampling_request(server: str, params: types.CreateMessageRequestParams, *, ask: bool) -> SamplingRequest:
    turns: list[SampleTurn] = []
    for message in params.messages:
        parts = [_block_text(b) for b in message.content_as_list]
        turns.append(SampleTurn(message.role, "\n".join(t for t, _ in parts), all(plain for _, plain in parts)))
    prefs = params.model_preferences
    words: list[str] = []
    if prefs is not None:
        hints = [h.name for h in (prefs.hints or []) if getattr(h, "name", None)]
        if hints:
            words.append("models like " + ", ".join(str(h)[:60] for h in hints[:5]))
        for label, value in (("cost", prefs.cost_priority), ("speed", prefs.speed_priority),
                             ("intelligence", prefs.intelligence_priority)):
            if value is not None:
                words.append(f"{label} {value:g}")
    return SamplingRequest(
        server=server, turns=tuple(turns), system_prompt=params.system_prompt or "",
        max_tokens=max(1, min(params.max_tokens, MAX_SAMPLING_TOKENS)), temperature=params.temperature,
        stop_sequences=tuple(params.stop_sequences or ()), model_preferences="; ".join(words),
        tools=tuple(t.name for t in (params.tools or [])), ask=ask, params=params)


class ClientHooks:
    """The host and the roots every connection of one manager answers with.

    ``host`` may be replaced at any time (the window sets its dialogs' host once it is up);
    a request reads it when it arrives.
    """

    def __init__(self, host: McpHost | None = None,
                 allowed_folders: Callable[[], Sequence[Path]] | None = None) -> None:
        self.host: McpHost = host or DecliningHost()
        self._allowed_folders = allowed_folders or (lambda: ())

    # -- roots -------------------------------------------------------------------
    def roots_for(self, config: "ServerConfig") -> list[types.Root]:
        seen: set[str] = set()
        roots: list[types.Root] = []
        for folder in [*self._allowed_folders(), *(Path(p) for p in config.roots)]:
            try:
                path = Path(folder).expanduser().resolve()
                uri = path.as_uri()
            except (OSError, ValueError, RuntimeError):
                continue
            if uri in seen:
                continue
            seen.add(uri)
            roots.append(types.Root(uri=uri, name=path.name or str(path)))  # type: ignore[arg-type]
        return roots

    # -- one connection's callbacks --------------------------------------------------
    def client_kwargs(self, config: "ServerConfig", log: "ServerLog") -> dict[str, Any]:
        """Keyword arguments for ``mcp.Client``: the callbacks (and so the capabilities) of one server."""
        gate = _LogGate(log)
        floor = level_rank(config.log_level)
        server = config.name

        async def on_elicit(ctx: ClientRequestContext,
                            params: types.ElicitRequestParams) -> types.ElicitResult | types.ErrorData:
            from cks_desktop.mcp.host import ElicitationRequest

            if isinstance(params, types.ElicitRequestURLParams):
                request = ElicitationRequest(server, params.message, "url", url=params.url,
                                             elicitation_id=params.elicitation_id)
            else:
                try:
                    form: Form = parse_form(params.requested_schema)
                except FormSchemaError as exc:
                    why = f"MCP server '{server}' asked for input with a form that cannot be shown: {exc}"
                    log.note(why)
                    return types.ErrorData(code=types.INVALID_PARAMS, message=why)
                request = ElicitationRequest(server, params.message, "form", form=form)
            try:
                answer = await self.host.elicit(request)
            except Exception as exc:  # a broken host must not leave the server waiting
                logging.getLogger(__name__).exception("the elicitation host failed")
                return types.ErrorData(code=types.INTERNAL_ERROR, message=f"The app could not ask: {exc}")
            log.note(f"elicitation: {answer.action}")
            if answer.action == "accept" and request.mode == "form":
                return types.ElicitResult(action="accept", content=dict(answer.content or {}))
            return types.ElicitResult(action=answer.action)

        async def on_sample(ctx: ClientRequestContext, params: types.CreateMessageRequestParams) -> (
                types.CreateMessageResult | types.CreateMessageResultWithTools | types.ErrorData):
            request = sampling_request(server, params, ask=config.sampling != "allow")
            problem = sampling_problem(request)
            if problem is not None:
                log.note(problem)
                return types.ErrorData(code=types.INVALID_REQUEST, message=problem)
            try:
                answer = await self.host.sample(request)
            except Exception as exc:
                logging.getLogger(__name__).exception("the sampling host failed")
                return types.ErrorData(code=types.INTERNAL_ERROR, message=f"The completion failed: {exc}")
            if answer.reply is None:
                log.note(f"sampling refused: {answer.refusal}")
                return types.ErrorData(code=types.INVALID_REQUEST, message=answer.refusal or "The person declined.")
            reply = answer.reply
            log.note(f"sampling: answered with {reply.model} ({len(reply.text):,} characters)")
            if params.tools:
                blocks: list[types.SamplingMessageContentBlock] = []
                if reply.text:
                    blocks.append(types.TextContent(text=reply.text))
                blocks += [types.ToolUseContent(id=u.id, name=u.name, input=u.input) for u in reply.tool_uses]
                return types.CreateMessageResultWithTools(
                    role="assistant", content=blocks or [types.TextContent(text="")], model=reply.model,
                    stop_reason="toolUse" if reply.tool_uses else reply.stop_reason)
            return types.CreateMessageResult(role="assistant", content=types.TextContent(text=reply.text),
                                             model=reply.model, stop_reason=reply.stop_reason)

        async def on_roots(ctx: ClientRequestContext) -> types.ListRootsResult | types.ErrorData:
            return types.ListRootsResult(roots=self.roots_for(config))

        async def on_log(params: types.LoggingMessageNotificationParams) -> None:
            if level_rank(params.level) < floor or not gate.admit():
                return
            log.append([log_line(params)])

        kwargs: dict[str, Any] = {
            "elicitation_callback": on_elicit,
            "list_roots_callback": on_roots,
            "logging_callback": on_log,
            "log_level": config.log_level,
        }
        if config.sampling != "off":
            kwargs["sampling_callback"] = on_sample
            kwargs["sampling_capabilities"] = types.SamplingCapability(tools=types.SamplingToolsCapability())
        return kwargs
