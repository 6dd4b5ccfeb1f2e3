"""Live updates: the graph changing (by this server, the window, a terminal — any process, through
the store's change feed) becomes ``notifications/resources/updated`` for the resources a host
subscribed to, and ``notifications/resources/list_changed`` when objects appear or go or a
session is shared, unshared, renamed or deleted.

Two eras, one source:

* 2025-era connections subscribe with ``resources/subscribe``; the notification goes on the
  connection's standalone channel (the GET stream on HTTP, stdout on stdio).
* 2026-07-28 connections open ``subscriptions/listen`` streams; the SDK's ``ListenHandler``
  serves them from an ``InMemorySubscriptionBus`` this module publishes to. The handler is
  wrapped (``listen``) to refuse streams with more than ``MAX_SUBSCRIPTIONS`` URIs or a
  URI the host may not see, and to know which URIs are listened to, so only those are
  published.

Store events arrive on the thread that wrote (the feed's worker thread for other processes'
writes) and hop to the server's loop through ``call_soon_threadsafe``; one pump task sends
them, so a burst of writes never runs notification code on the writer's thread. Subscriptions
are bounded: ``MAX_SUBSCRIPTIONS`` per connection and in total over listen streams, each
refusal a protocol error naming the limit.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import mcp_types as types
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import ResourcesListChanged, ResourceUpdated

from cks_desktop.graph.events import GraphChanged, SessionEvent
from cks_desktop.serve import resources

if TYPE_CHECKING:
    from cks_desktop.graph.events import StoreEvent
    from cks_desktop.serve.clients import ClientTracker
    from cks_desktop.serve.logbook import Logbook
    from cks_desktop.serve.scope import SessionScope

log = logging.getLogger(__name__)

MAX_SUBSCRIPTIONS = 1000  # per connection (2025 era) and per listen stream (2026-07-28)
MAX_LISTEN_STREAMS = 64
SETTINGS_POLL_S = 0.5


@dataclass
class _Subscriptions:
    session: Any  # the ServerSession whose standalone channel carries the updates
    uris: dict[str, resources.Key] = field(default_factory=dict)


class LiveUpdates:
    def __init__(self, scope: "SessionScope", clients: "ClientTracker", logbook: "Logbook | None" = None) -> None:
        self.scope = scope
        self.clients = clients
        self.logbook = logbook  # set: graph changes are also log messages (info) to 2025-era hosts
        self.bus = InMemorySubscriptionBus()
        self._listen = ListenHandler(self.bus, max_subscriptions=MAX_LISTEN_STREAMS)
        self._subs: dict[str, _Subscriptions] = {}
        self._listened: Counter[str] = Counter()  # URIs of open listen streams
        self._listened_keys: dict[str, resources.Key] = {}
        self._queue: asyncio.Queue[StoreEvent] | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._unsubscribe: Any = None
        self._shared: list[str] = []
        self.sent = 0  # notifications sent (tests and the bench read it)

    # -- lifecycle -------------------------------------------------------------------------------
    async def start(self) -> None:
        """Listen to the store (own writes and, through the feed, every other process's)."""
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[StoreEvent] = asyncio.Queue()
        self._queue = queue

        def on_event(event: "StoreEvent") -> None:
            try:
                loop.call_soon_threadsafe(queue.put_nowait, event)
            except RuntimeError:  # the loop closed: the server is gone
                pass

        self._unsubscribe = self.scope.store.subscribe(on_event)
        self._shared = [s.id for s in self.scope.sessions()]
        await asyncio.to_thread(self.scope.store.start_feed)  # takes its baseline before returning
        self._tasks = [asyncio.create_task(self._pump(queue), name="mcp-live-pump"),
                       asyncio.create_task(self._poll_settings(), name="mcp-live-settings")]

    async def stop(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            try:
                await task
            except asyncio.CancelledError:
                pass
        self._tasks = []
        self._listen.close()

    # -- 2025 era: resources/subscribe ---------------------------------------------------------------
    async def subscribe(self, key: str, session: Any, uri: str) -> types.EmptyResult:
        subs = self._subs.get(key)
        if subs is None:
            subs = self._subs[key] = _Subscriptions(session)
        subs.session = session
        if uri not in subs.uris and len(subs.uris) >= MAX_SUBSCRIPTIONS:
            raise MCPError(types.INVALID_REQUEST, f"Too many subscriptions: a connection may hold at most "
                                                  f"{MAX_SUBSCRIPTIONS}; unsubscribe from some first.")
        subs.uris[uri] = resources.keys_of(self.scope, uri)
        return types.EmptyResult()

    async def unsubscribe(self, key: str, uri: str) -> types.EmptyResult:
        subs = self._subs.get(key)
        if subs is not None:
            subs.uris.pop(uri, None)
        return types.EmptyResult()

    def forget(self, key: str) -> None:
        """A connection ended: its subscriptions go with it."""
        self._subs.pop(key, None)

    def subscription_count(self) -> int:
        return sum(len(s.uris) for s in self._subs.values()) + sum(self._listened.values())

    # -- 2026-07-28: subscriptions/listen ------------------------------------------------------------
    async def listen(self, ctx: Any, params: types.SubscriptionsListenRequestParams) -> types.SubscriptionsListenResult:
        uris = list(params.notifications.resource_subscriptions or [])
        if len(uris) > MAX_SUBSCRIPTIONS:
            raise MCPError(types.INVALID_PARAMS, f"Too many resource subscriptions in one listen request ({len(uris)}); "
                                                 f"at most {MAX_SUBSCRIPTIONS}.")
        keys = {uri: resources.keys_of(self.scope, uri) for uri in uris}  # refuses URIs it may not see
        for uri, k in keys.items():
            self._listened[uri] += 1
            self._listened_keys[uri] = k
        try:
            return await self._listen(ctx, params)
        finally:
            for uri in keys:
                self._listened[uri] -= 1
                if self._listened[uri] <= 0:
                    del self._listened[uri]
                    self._listened_keys.pop(uri, None)

    # -- fan-out ---------------------------------------------------------------------------------------
    async def _pump(self, queue: "asyncio.Queue[StoreEvent]") -> None:
        while True:
            event = await queue.get()
            try:
                await self._handle(event)
            except asyncio.CancelledError:
                raise
            except Exception:  # one bad event must not end live updates
                log.exception("live update failed")

    async def _handle(self, event: "StoreEvent") -> None:
        if isinstance(event, SessionEvent):
            if event.kind in ("renamed", "deleted", "created") or event.session.id in self._shared:
                await self._shares_changed(force=event.session.id in self._shared or event.kind == "created")
            return
        if not isinstance(event, GraphChanged) or event.session_id not in self._shared:
            return
        keys, unnamed = resources.event_keys(event)
        for uri in self._matching(keys, unnamed, event.session_id, self._listened_keys):
            await self.bus.publish(ResourceUpdated(uri=uri))
            self.sent += 1
        for subs in list(self._subs.values()):
            for uri in self._matching(keys, unnamed, event.session_id, subs.uris):
                await self._send(subs.session, "updated", uri)
        if event.added_objects or event.removed_objects:
            await self._list_changed()
        if self.logbook is not None:
            await self.logbook.broadcast(self.clients.records(), "info", describe_change(event),
                                         session=event.session_id, change=event.change_id,
                                         external=event.external)

    @staticmethod
    def _matching(keys: set[resources.Key], unnamed: bool, session_id: str,
                  uris: dict[str, resources.Key]) -> list[str]:
        return [uri for uri, k in list(uris.items())
                if k in keys or (unnamed and k[0] == session_id and k[1] in ("object", "object-name"))]

    async def _send(self, session: Any, what: str, uri: str = "") -> None:
        try:
            if what == "updated":
                await session.send_resource_updated(uri)
            else:
                await session.send_resource_list_changed()
            self.sent += 1
        except Exception:  # a connection that went away: its records expire on their own
            log.debug("notification not delivered", exc_info=True)

    async def _list_changed(self) -> None:
        await self.bus.publish(ResourcesListChanged())
        self.sent += 1
        for record in self.clients.records():
            if not record.modern and record.session is not None:
                await self._send(record.session, "list_changed")

    async def _shares_changed(self, *, force: bool = False) -> None:
        now = [s.id for s in self.scope.sessions()]
        if now != self._shared or force:
            self._shared = now
            await self._list_changed()

    async def _poll_settings(self) -> None:
        """Sharing is a settings change, possibly by another process: notice it within half a second."""
        while True:
            await asyncio.sleep(SETTINGS_POLL_S)
            try:
                if self.scope.refresh():
                    await self._shares_changed()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("reading the shared sessions failed")


def describe_change(event: GraphChanged) -> str:
    """One line about a committed batch, for a host's log view."""
    from cks_desktop.plural import counted

    parts = [f"{counted(n, noun)} {verb}" for n, noun, verb in (
        (len(event.added_objects), "object", "added"), (len(event.updated_objects), "object", "updated"),
        (len(event.removed_objects), "object", "removed"), (len(event.added_relations), "relation", "added"),
        (len(event.updated_relations), "relation", "updated"),
        (len(event.removed_relations), "relation", "removed")) if n]
    who = "another process" if event.external else (event.origin or "this server")
    return f"The shared graph changed ({', '.join(parts) or 'no objects or relations'}), by {who}."
