"""Every SDK failure becomes one ``ProviderError``: a kind and one sentence for a person.

Each SDK reports failures its own way (anthropic/openai: ``APIStatusError`` with
a status, Anthropic's mid-stream ``error`` event as status 200 with the type in
the body; ollama: ``ResponseError`` with only the body text; google-genai:
``ClientError``/``ServerError`` with a Google RPC status), and the transports
under them raise ``httpx``/``httpx2`` exceptions during streaming that the SDKs
do not wrap. Each adapter's ``map_*`` function (beside its adapter, in ``providers/``) reads
what its SDK offers and hands a status, a vendor error type and the vendor's message to the one
sentence builder here, so every provider words the same failure the same way.

Kinds (``ProviderError.kind``): auth, model_not_found, not_found (wrong base
URL), rate_limited, overloaded, server_error, connection, timeout, stream_cut,
bad_request, no_tool_support, no_thinking_support, prompt_too_long (the request is larger than the model's
context window: the loop compacts and retries once, see agent/context.py), bad_response,
missing_key. ``retryable`` is True
where trying again later can help. SDKs are imported lazily here, and only
from the branch that handles their exceptions.
"""

from __future__ import annotations

import email.utils
import logging
import re
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from cks_desktop.llm.provider import ProviderError

log = logging.getLogger(__name__)
SETTINGS_PAGE = "Settings → Providers"
_RETRYABLE = {"rate_limited", "overloaded", "server_error", "connection", "timeout", "stream_cut"}
_LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1", "0.0.0.0"}


@dataclass(frozen=True)
class ErrorContext:
    """What a sentence needs to name: who failed, for which model, at which address."""

    display: str  # "Anthropic", "Ollama", "the OpenAI-compatible server", ...
    model: str
    base_url: str
    timeout: float

    @property
    def local(self) -> bool:
        host = urlsplit(self.base_url).hostname or ""
        return host in _LOCAL_HOSTS or host.endswith(".local")

    @property
    def subject(self) -> str:
        """The display name at the start of a sentence."""
        return self.display[:1].upper() + self.display[1:]


def _error(kind: str, message: str, *, detail: Any = None) -> ProviderError:
    return ProviderError(message, kind, retryable=kind in _RETRYABLE, detail=detail)


def _clean(text: Any, limit: int = 240) -> str:
    """One line of vendor text, short enough for a chat bubble, ending without a period."""
    line = " ".join(str(text or "").split())
    if len(line) > limit:
        line = line[: limit - 1].rstrip() + "…"
    return line.rstrip(".")


def _status_note(status: int | None) -> str:
    return f" ({status})" if status and status != 200 else ""


def _seconds(value: float) -> str:
    if value < 1:
        return "a second"
    n = int(round(value))
    return f"{n} second" if n == 1 else f"{n} seconds"


def requested(exc: BaseException) -> tuple[str, str] | None:
    """(method, URL) of the HTTP request that failed, from the SDK's exception or its cause chain.

    The query string and any user info are dropped: Gemini's may carry the API key.
    """
    for e in _cause_chain(exc):
        request = getattr(e, "request", None)
        response = getattr(e, "response", None)
        if request is None and response is not None:
            try:
                request = response.request
            except (AttributeError, RuntimeError):  # httpx raises RuntimeError when it has none
                request = None
        url = getattr(request, "url", None) or getattr(response, "url", None)
        if url is None:
            continue
        parts = urlsplit(str(url))
        host = parts.hostname or ""
        netloc = f"[{host}]" if ":" in host else host
        if parts.port:
            netloc += f":{parts.port}"
        method = str(getattr(request, "method", "") or "").upper()
        return method, f"{parts.scheme}://{netloc}{parts.path}"
    return None


def sentence_for(ctx: ErrorContext, kind: str, *, status: int | None = None, message: str | None = None,
                 retry_after: float | None = None, request: tuple[str, str] | None = None,
                 here: bool = False) -> str:
    """The one sentence shown in the chat for ``kind``.

    ``here``: the person is already on the provider's settings page (its Test and Fetch models
    buttons), so the sentence names the field to fix instead of sending them to that page.
    """
    s, note, vendor = ctx.subject, _status_note(status), _clean(message)
    if kind == "auth":
        fix = "Check the API key field." if here else f"Check it in {SETTINGS_PAGE}."
        if ctx.display.startswith("the "):
            return f"The API key for {ctx.display} was rejected{note}. {fix}"
        return f"The {ctx.display} API key was rejected{note}. {fix}"
    if kind == "model_not_found":
        where = "the Model field" if here else SETTINGS_PAGE
        if ctx.display == "Ollama":
            return (f"Ollama has no model named “{ctx.model}”{note}; pull it with `ollama pull {ctx.model}` "
                    f"or pick another model in {where}.")
        return f"{s} does not know the model “{ctx.model}”{note}. Pick another model in {where}."
    if kind == "not_found":
        # What was asked and what came back: a wrong path is obvious once the full address is shown.
        answer = f"{status} (not found)" if status else "“not found”"
        said = f" (“{vendor}”)" if vendor and vendor.casefold() not in ("not found", f"{status} not found") else ""
        if request is None:
            fix = "check the Base URL field" if here else f"check the base URL in {SETTINGS_PAGE}"
            return f"{s} at {ctx.base_url} answered {answer}{said}; {fix}."
        method, url = request
        added = url[len(ctx.base_url):] if ctx.base_url and url.startswith(ctx.base_url) else ""
        why = f" (the app adds {added} to it)" if added.startswith("/") else ""
        fix = "fix the Base URL field" if here else f"check it in {SETTINGS_PAGE}"
        return (f"{s} answered {answer} to {method + ' ' if method else ''}{url}{said}, so the base URL "
                f"{ctx.base_url} looks wrong{why}; {fix}.")
    if kind == "rate_limited":
        when = f"in {_seconds(retry_after)}" if retry_after is not None and retry_after > 0 else "in a moment"
        return f"{s} is rate limiting requests{note}; try again {when}."
    if kind == "overloaded":
        return f"{s} is overloaded right now{note}; try again in a moment."
    if kind == "server_error":
        extra = f": {vendor}" if vendor and status in (None, 200) else ""
        return f"{s} had a server error{note}{extra}; try again in a moment."
    if kind == "connection":
        if ctx.local:
            return f"Could not reach {ctx.display} at {ctx.base_url} — is it running?"
        return f"Could not reach {ctx.display} at {ctx.base_url}; check the network connection."
    if kind == "timeout":
        return f"{s} did not answer within {ctx.timeout:g} seconds; try again."
    if kind == "stream_cut":
        return f"The connection to {ctx.display} broke off in the middle of the answer; try again."
    if kind == "no_tool_support":
        return f"{ctx.model} does not support tools; pick a model that does."
    if kind == "no_thinking_support":
        return (f"{ctx.model} cannot think before answering; turn Think before answering off in this "
                "session's Chat settings (or Settings → Chat & agent), or pick a model that can.")
    if kind == "prompt_too_long":
        return (f"The conversation is too long for {ctx.model}'s context window{note}, even after "
                "shortening it; start a new chat or pick a model with a larger window.")
    if kind == "bad_response":
        return f"{s} sent an answer that could not be read{': ' + vendor if vendor else ''}."
    # bad_request and anything unforeseen
    return f"{s} rejected the request{note}{': ' + vendor if vendor else ''}."


def build(ctx: ErrorContext, kind: str, *, status: int | None = None, message: str | None = None,
          retry_after: float | None = None, detail: Any = None,
          request: tuple[str, str] | None = None) -> ProviderError:
    words = dict(status=status, message=message, retry_after=retry_after, request=request)
    text = sentence_for(ctx, kind, **words)  # type: ignore[arg-type]
    if detail is None:
        detail = {"status": status, "vendor": message, "retry_after": retry_after}
        if request is not None:
            detail.update(method=request[0], url=request[1])
    error = _error(kind, text, detail=detail)
    error.local_message = sentence_for(ctx, kind, here=True, **words)  # type: ignore[arg-type]
    return error


def kind_for_status(status: int | None) -> str:
    if status in (401, 403):
        return "auth"
    if status == 404:
        return "not_found"
    if status in (408, 504):
        return "timeout"
    if status == 429:
        return "rate_limited"
    if status in (503, 529):  # 503 Service Unavailable: Gemini's overload, llama.cpp loading a model,
        return "overloaded"  # Ollama's full queue, a gateway's busy upstream: temporary, so waited out
    if status is not None and status >= 500:
        return "server_error"
    if status is None or status == 200:
        return "server_error"
    return "bad_request"


def _mentions_model(ctx: ErrorContext, message: str | None) -> bool:
    text = (message or "").lower()
    return "model" in text or (bool(ctx.model) and ctx.model.lower() in text)


# How each vendor says the prompt is larger than the window: Anthropic "prompt is too long: N tokens >
# M maximum", OpenAI and vLLM "maximum context length is N tokens", OpenAI's code
# ``context_length_exceeded``, llama.cpp "exceeds the available context size", Gemini "The input token
# count (N) exceeds the maximum number of tokens allowed (M)", LM Studio "context length ... exceeded" and
# "... loaded with context length of only N tokens, which is not enough".
_TOO_LONG = re.compile(r"prompt is too long|maximum context length|context_length_exceeded|"
                       r"exceeds? the available context size|exceeds the maximum number of tokens|"
                       r"context length of only \d+ tokens|"
                       r"context (?:length|window|size)[^.]{0,40}exceed|too many tokens", re.IGNORECASE)


def says_too_long(message: str | None) -> bool:
    return bool(message) and bool(_TOO_LONG.search(message or ""))


_NO_THINKING = ("does not support thinking", "thinking is not supported", "'reasoning_effort' is not supported",
                "'reasoning.effort' is not supported",  # the Responses API's words
                "unrecognized request argument supplied: reasoning_effort", "thinking_config is not supported",
                "thinking is not enabled for this model")


def says_no_thinking(message: str | None) -> bool:
    """The vendor's words for "this model cannot think" (the session asked it to):
    Ollama's "does not support thinking", OpenAI's reasoning_effort refusal, Anthropic's and
    Gemini's thinking refusals."""
    lower = (message or "").lower()
    return any(words in lower for words in _NO_THINKING)


def from_status(ctx: ErrorContext, status: int | None, *, message: str | None = None, hint: str | None = None,
                retry_after: float | None = None, request: tuple[str, str] | None = None) -> ProviderError:
    """An HTTP status (or an in-stream error) with the vendor's type hint and message."""
    kind = hint or kind_for_status(status)
    if kind == "server_error" and status == 503:  # a vendor's generic error type on a 503: still temporary
        kind = "overloaded"
    if kind == "not_found" and _mentions_model(ctx, message):
        kind = "model_not_found"
    if kind == "bad_request" and "does not support tools" in (message or ""):
        kind = "no_tool_support"
    if kind == "bad_request" and says_no_thinking(message):
        kind = "no_thinking_support"
    if kind in ("bad_request", "server_error") and (status == 413 or (status in (400, None)
                                                                       and says_too_long(message))):
        kind = "prompt_too_long"
    return build(ctx, kind, status=status, message=message, retry_after=retry_after, request=request)


def retry_after_from_headers(headers: Any) -> float | None:
    """Seconds from ``retry-after-ms`` / ``retry-after`` (number or HTTP date), if any."""
    if headers is None:
        return None
    try:
        ms = headers.get("retry-after-ms")
        if ms is not None:
            return float(ms) / 1000
    except (TypeError, ValueError):
        pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        parsed = email.utils.parsedate_tz(value)
        return max(0.0, email.utils.mktime_tz(parsed) - time.time()) if parsed else None


# -- transports (httpx under ollama, httpx2 under anthropic/openai/google-genai) ---------------

def from_transport(ctx: ErrorContext, exc: BaseException, *, started: bool) -> ProviderError | None:
    """Timeouts, refused connections and cut streams, whichever httpx raised them."""
    name = type(exc).__name__
    module = type(exc).__module__.split(".")[0]
    if module not in ("httpx", "httpx2") and not isinstance(exc, (ConnectionError, TimeoutError)):
        return None
    if "Timeout" in name or isinstance(exc, TimeoutError):
        return build(ctx, "timeout", message=name)
    if name in ("ConnectError", "ConnectionRefusedError") or (isinstance(exc, ConnectionError) and not started):
        return build(ctx, "connection", message=name)
    if started or name in ("RemoteProtocolError", "ReadError", "StreamError"):
        return build(ctx, "stream_cut" if started else "connection", message=name)
    return build(ctx, "connection", message=name)


def _cause_chain(exc: BaseException) -> list[BaseException]:
    chain: list[BaseException] = []
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        chain.append(cur)
        seen.add(id(cur))
        cur = cur.__cause__ or cur.__context__
    return chain


def transport_in_chain(ctx: ErrorContext, exc: BaseException, started: bool) -> ProviderError | None:
    for e in _cause_chain(exc)[1:]:
        mapped = from_transport(ctx, e, started=started)
        if mapped is not None and mapped.kind != "connection":
            return mapped
    return None


def body_error(body: Any) -> tuple[str | None, str | None]:
    """(type, message) from ``{"error": {"type", "message"}}`` or a flat error object."""
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict):
            return inner.get("type"), inner.get("message")
        if isinstance(inner, str):
            return None, inner
    if isinstance(body, str):
        return None, body
    return None, None


def unexpected(ctx: ErrorContext, exc: BaseException) -> ProviderError:
    """A failure no mapper knows: still one sentence, and the whole traceback (frames and all) in the log."""
    log.error("%s failed unexpectedly", ctx.display, exc_info=exc)
    return _error("bad_response", f"{ctx.subject} failed unexpectedly: {_clean(exc) or type(exc).__name__}.",
                  detail={"exception": repr(exc)})
