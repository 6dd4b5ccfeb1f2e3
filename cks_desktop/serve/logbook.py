"""``logging/setLevel`` and the log messages the server sends about what it does.

Messages ride the stream of the request they are about (a tool call, a subscription), which
both protocol eras allow: on 2025-era connections at or above the level the client set with
``logging/setLevel`` (``warning`` until it sets one), on 2026-07-28 connections only when the
request opted in through its ``_meta`` log level (the SDK's rule, ``allowed_log_levels``).

Messages about what happens between requests (the shared graph changed, by this server, the
window or another process) go to 2025-era connections on their standalone channel (the GET
stream, stdout), through ``ServerSession.send_notification`` without a related request: the
SDK sends a notification outside a request on that channel (``broadcast``). 2026-07-28
connections get none: that revision allows ``notifications/message`` only on the stream of
the response it is about.

The handler is registered with ``add_request_handler`` rather than the constructor's
``on_set_logging_level``: the capability is deprecated in the 2026-07-28 revision, and the
constructor warns about that at every start, but 2025-era hosts still use it.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, get_args

import mcp_types as types
from mcp.server.connection import allowed_log_levels
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

if TYPE_CHECKING:
    from cks_desktop.serve.clients import ClientRecord

log = logging.getLogger(__name__)

LEVELS: tuple[str, ...] = get_args(types.LoggingLevel)
DEFAULT_LEVEL = "warning"
LOGGER = "cks-desktop"


class Logbook:
    def __init__(self) -> None:
        self._levels: dict[str, str] = {}  # connection key → the level its client set

    async def set_level(self, key: str, level: types.LoggingLevel) -> types.EmptyResult:
        self._levels[key] = level
        return types.EmptyResult()

    def wants(self, ctx: Any, key: str, level: str) -> bool:
        allowed = allowed_log_levels(ctx.protocol_version, ctx.meta)
        if level not in allowed:
            return False
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return True
        floor = self._levels.get(key, DEFAULT_LEVEL)
        return LEVELS.index(level) >= LEVELS.index(floor)

    async def send(self, ctx: Any, key: str, level: types.LoggingLevel, message: str, **data: Any) -> None:
        """Send one log message about the request ``ctx`` (never raises: logging is advice)."""
        if ctx is None or ctx.request_id is None or not self.wants(ctx, key, level):
            return
        payload: dict[str, Any] = {"message": message, **data}
        try:
            await ctx.session.send_notification(
                types.LoggingMessageNotification(params=types.LoggingMessageNotificationParams(
                    level=level, logger=LOGGER, data=payload)),
                related_request_id=ctx.request_id)
        except Exception:  # a closed stream: the host is gone, nothing to tell
            log.debug("log message not delivered", exc_info=True)

    def level_allows(self, key: str, level: str) -> bool:
        """A 2025-era connection's own floor (``warning`` until its client sets one)."""
        floor = self._levels.get(key, DEFAULT_LEVEL)
        return LEVELS.index(level) >= LEVELS.index(floor)

    async def broadcast(self, records: "list[ClientRecord]", level: types.LoggingLevel, message: str,
                        **data: Any) -> int:
        """Send one log message to every 2025-era connection whose level allows it, outside any
        request (see the module docstring); returns how many were sent. Never raises."""
        payload: dict[str, Any] = {"message": message, **data}
        sent = 0
        for record in records:
            if record.modern or record.session is None or not self.level_allows(record.key, level):
                continue
            try:
                await record.session.send_notification(
                    types.LoggingMessageNotification(params=types.LoggingMessageNotificationParams(
                        level=level, logger=LOGGER, data=payload)))
                sent += 1
            except Exception:  # a closed stream: the host is gone
                log.debug("log message not delivered", exc_info=True)
        return sent

    def forget(self, key: str) -> None:
        self._levels.pop(key, None)


def allowed_modern() -> tuple[str, ...]:
    return MODERN_PROTOCOL_VERSIONS
