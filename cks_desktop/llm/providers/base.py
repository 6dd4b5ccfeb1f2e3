"""What the four adapters share: the stream wrapper that turns every failure into
one ``ProviderError``, and small helpers for ids, finish reasons and history.

``Adapter.stream`` runs the adapter's ``_events`` generator and guarantees the
contract the agent relies on: either the events end with exactly one ``Finish``,
or a ``ProviderError`` is raised (a stream that simply stops, with no terminal
event, is a cut stream, never a silent empty answer). ``CancelledError`` and
``GeneratorExit`` pass through untouched, so Stop is immediate.

This is the one layer that retries a failed model request (``llm/retry.py``): a
failure before this attempt yielded anything is tried again, ``max_retries`` times,
after the policy's wait, announced by a ``RetryWait`` event before and after it. The
SDK clients are built with their own retries off, so a request that keeps failing
costs ``1 + max_retries`` requests; once anything was yielded a failure is raised
as it is (a retry could show text twice).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import re
import ssl
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from cks_desktop.ids import new_id
from cks_desktop.llm.errors import ErrorContext, build
from cks_desktop.llm.events import Finish, RetryWait, StreamEvent
from cks_desktop.llm.messages import Message, ToolDef, ToolResultPart
from cks_desktop.llm.provider import GenerationParams, ProviderConfig, ProviderError, ProviderProfile
from cks_desktop.llm.retry import RetryPolicy
from cks_desktop.sdk_import import import_sdk

log = logging.getLogger(__name__)
_SYNTHETIC = re.compile(r"^call_[0-9A-HJKMNP-TV-Z]{26}\Z")


@functools.cache
def shared_tls(library: str) -> ssl.SSLContext:
    """One TLS context per HTTP library (``"httpx"`` or ``"httpx2"``) for the whole process.

    Each SDK client otherwise loads the CA bundle again (0.1–0.4 s a client); the
    context is the library's own default, so trust settings are unchanged.
    """
    return import_sdk(library).create_ssl_context()  # type: ignore[no-any-return]


def synth_id() -> str:
    """An id for a call whose wire protocol has none (Ollama, most Gemini models)."""
    return "call_" + new_id()


def is_synthetic_id(call_id: str) -> bool:
    """True for ids we made up, which must not be sent back to a vendor as if it issued them."""
    return bool(_SYNTHETIC.match(call_id))


def normalize_finish(reason: str | None, has_calls: bool, table: dict[str, str]) -> str:
    """One vocabulary: stop, tool_calls, length, content_filter, error, or the vendor's word.

    A turn that produced tool calls finishes with ``tool_calls`` whatever the vendor
    said (Gemini and Ollama say "stop"; some OpenAI-compatible servers too).
    """
    value = table.get((reason or "").lower(), (reason or "stop").lower())
    if has_calls and value == "stop":
        return "tool_calls"
    return value


def system_text(messages: list[Message], system: str | None) -> str:
    """The ``system`` argument plus any system-role messages, in that order."""
    pieces = [system] if system else []
    pieces += [m.text for m in messages if m.role == "system" and m.text]
    return "\n\n".join(pieces)


def current_exchange(messages: list[Message]) -> int:
    """The index of the last user message (tool results are ``tool`` messages): where the exchange
    in progress starts (reasoning rules differ for it and for earlier ones; 0 when there is none)."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.role == "user":
            return index
    return 0


def result_text(part: ToolResultPart) -> str:
    """A tool result for protocols without an error flag: the failure is said in words."""
    content = part.content if part.content else "(no output)"
    return f"Error: {content}" if part.is_error else content


@runtime_checkable
class TokenCounter(Protocol):
    """The optional capability of an adapter whose provider has a token counting endpoint
    (Anthropic's ``/v1/messages/count_tokens``, Gemini's ``countTokens``).

    ``count_tokens`` takes what ``stream`` would send and returns the request's input tokens as
    the provider counts them; a failure raises ``ProviderError``. Adapters without an endpoint
    (Ollama, OpenAI-compatible servers, OpenAI's Responses API) do not define it, and the agent
    keeps to its calibrated estimate (``agent/context.py``).
    """

    async def count_tokens(self, messages: list[Message], tools: list[ToolDef], *, system: str | None = None,
                           params: GenerationParams | None = None) -> int: ...


@dataclass
class StreamState:
    """Filled in by ``_events``: ``started`` once the server has accepted the request.

    ``params``: the request's sampling settings (``GenerationParams``), read by ``_events``
    when it builds the request (carried here so ``_events`` keeps one signature).
    """

    started: bool = False
    params: GenerationParams | None = None


class Adapter:
    """Base class of the four adapters (see the module docstring for the guarantees)."""

    profile: ProviderProfile
    config: ProviderConfig

    def __init__(self, config: ProviderConfig, profile: ProviderProfile) -> None:
        self.config = config
        self.profile = profile
        self._closed = False

    # -- to implement ----------------------------------------------------------------------
    def _events(self, messages: list[Message], tools: list[ToolDef], system: str | None,
                response_schema: dict[str, Any] | None, state: StreamState) -> AsyncGenerator[StreamEvent, None]:
        raise NotImplementedError

    def map_error(self, exc: BaseException, *, started: bool) -> ProviderError:
        raise NotImplementedError

    @property
    def base_url(self) -> str:
        return self.config.base_url

    @property
    def display(self) -> str:
        return self.profile.display_name

    # -- shared ----------------------------------------------------------------------------
    def error_context(self) -> ErrorContext:
        return ErrorContext(self.display, self.config.model, self.base_url.rstrip("/"), self.config.timeout)

    async def stream(self, messages: list[Message], tools: list[ToolDef], *, system: str | None = None,
                     response_schema: dict[str, Any] | None = None,
                     params: GenerationParams | None = None) -> AsyncGenerator[StreamEvent, None]:
        """The answer's events; a failure before any of them is retried here (module docstring)."""
        policy = RetryPolicy.for_config(self.config)
        attempt = 0
        while True:
            shown = False
            try:
                async with contextlib.aclosing(self._attempt(messages, tools, system, response_schema,
                                                             params)) as events:
                    async for event in events:
                        shown = True
                        yield event
                return
            except ProviderError as error:
                attempt += 1
                seconds = None if shown else policy.delay(error, attempt)
                if seconds is None:
                    raise
                kind = error.kind
                log.info("%s: %s, retry %d of %d in %.2f s", self.display, kind, attempt, policy.max_retries,
                         seconds)
            yield RetryWait(seconds, kind, attempt)
            await asyncio.sleep(seconds)  # Stop cancels the task here: CancelledError ends the wait at once
            yield RetryWait(0.0, kind, attempt, resumed=True)

    async def _attempt(self, messages: list[Message], tools: list[ToolDef], system: str | None,
                       response_schema: dict[str, Any] | None,
                       params: GenerationParams | None) -> AsyncGenerator[StreamEvent, None]:
        """One request: its events ending in one ``Finish``, or one ``ProviderError``."""
        state = StreamState(params=params)
        finished = False
        events = self._events(messages, tools, system, response_schema, state)
        try:
            async for event in events:
                if finished:
                    raise AssertionError(f"{type(self).__name__} yielded {event!r} after Finish")
                finished = isinstance(event, Finish)
                yield event
        except ProviderError:
            raise
        except Exception as exc:  # noqa: BLE001 - every SDK failure becomes one sentence
            raise self.map_error(exc, started=state.started) from exc
        finally:
            await events.aclose()
        if not finished:
            raise build(self.error_context(), "stream_cut")

    async def _counted(self, count: Callable[[], Awaitable[int]]) -> int:
        """Run a token count (``count``: builds the request and calls the SDK), every failure as one
        ``ProviderError``, like ``stream`` (for adapters that are a ``TokenCounter``)."""
        try:
            return int(await count())
        except ProviderError:
            raise
        except Exception as exc:  # noqa: BLE001 - every SDK failure becomes one sentence
            raise self.map_error(exc, started=False) from exc

    async def list_models(self) -> list[str]:
        try:
            return await self._list_models()
        except ProviderError:
            raise
        except Exception as exc:  # noqa: BLE001
            raise self.map_error(exc, started=False) from exc

    async def _list_models(self) -> list[str]:
        raise NotImplementedError

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        await self._aclose()

    async def _aclose(self) -> None:
        raise NotImplementedError
