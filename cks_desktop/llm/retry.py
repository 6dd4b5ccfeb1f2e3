"""The one retry policy for model requests: which failures are tried again, how long to wait, how often.

Exactly one layer applies it: ``providers/base.Adapter.stream``, for chat turns, extraction parts,
summaries and MCP sampling alike. That is the one place that both reads the wire error (its status
and ``Retry-After``) and knows whether anything has been yielded yet. Nothing else retries a failed
request: the SDK clients are built with ``max_retries=0`` (anthropic, openai) or without retry
options (google-genai), the Ollama adapter has no loop of its own, and neither the chat turn nor
the extraction runner loops. So one model call that keeps failing costs at most
``1 + max_retries`` requests (``max_retries``: Settings → Providers, per provider; default 2).

What is tried again (``retryable``): rate limits (429), overload (529, 503), other 5xx answers,
a connection that failed or dropped, a gateway's 408/504. Never: a 4xx the request itself caused
(400, 401, 404, a prompt too long…), a client-side timeout (the person already waited the whole
timeout), and never a request whose answer has started to reach the person (a retry would show
its text twice).

How long (``RetryPolicy.delay``): what the server asked for (``Retry-After`` in seconds or as an
HTTP date, ``retry-after-ms``, Gemini's ``RetryInfo``), unless that is more than ``max_wait_s``
(60 s): then the error is shown at once, its sentence saying when to try again, since waiting less
than asked would only be refused again. Without a server's word: exponential backoff from
``first_s`` (1 s), doubling, capped at ``max_backoff_s`` (20 s), with jitter (between half and all
of it) so parallel callers do not come back in step.

What the person sees: the adapter yields ``llm.events.RetryWait`` before waiting and again
(``resumed``) when the wait is over; the chat shows "waiting N s (rate limited)". Stop cancels the
task during the wait, which ends at once.

Options (``ProviderConfig.options``, for tests and benchmarks): ``retry_first_s``,
``retry_max_wait_s``.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from cks_desktop.llm.provider import ProviderConfig, ProviderError

RETRY_KINDS = frozenset({"rate_limited", "overloaded", "server_error", "connection", "stream_cut"})
GATEWAY_TIMEOUTS = frozenset({408, 504})  # a proxy gave up quickly: unlike our own timeout, worth a retry
FIRST_S = 1.0
MAX_BACKOFF_S = 20.0
MAX_WAIT_S = 60.0


def _detail(error: ProviderError) -> dict[str, Any]:
    return error.detail if isinstance(error.detail, dict) else {}


def retryable(error: ProviderError) -> bool:
    """Can trying the same request again later help? (See the module docstring for the list.)"""
    if error.kind in RETRY_KINDS:
        return True
    return error.kind == "timeout" and _detail(error).get("status") in GATEWAY_TIMEOUTS


def asked_wait(error: ProviderError) -> float | None:
    """The seconds the server asked for (already read from ``Retry-After``/``RetryInfo``), if any."""
    value = _detail(error).get("retry_after")
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
        return float(value)
    return None


def _option(options: dict[str, Any], key: str, default: float) -> float:
    value = options.get(key)
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0
    return float(value) if ok else default  # type: ignore[arg-type]


@dataclass(frozen=True)
class RetryPolicy:
    """``max_retries`` more requests after the first; waits as the module docstring says."""

    max_retries: int = 2
    first_s: float = FIRST_S
    max_backoff_s: float = MAX_BACKOFF_S
    max_wait_s: float = MAX_WAIT_S

    @classmethod
    def for_config(cls, config: ProviderConfig) -> "RetryPolicy":
        """The policy of one provider: its ``max_retries`` setting and the test options."""
        options = config.options or {}
        retries = config.max_retries if isinstance(config.max_retries, int) and config.max_retries >= 0 else 0
        return cls(retries, _option(options, "retry_first_s", FIRST_S), MAX_BACKOFF_S,
                   _option(options, "retry_max_wait_s", MAX_WAIT_S))

    def delay(self, error: ProviderError, attempt: int,
              jitter: Callable[[], float] = random.random) -> float | None:
        """Seconds to wait before retry ``attempt`` (1-based), or None: give up, raise ``error``."""
        if attempt > self.max_retries or not retryable(error):
            return None
        asked = asked_wait(error)
        if asked is not None:
            return asked if asked <= self.max_wait_s else None
        backoff = min(self.max_backoff_s, self.first_s * 2.0 ** (attempt - 1))
        return backoff * (0.5 + 0.5 * jitter())
