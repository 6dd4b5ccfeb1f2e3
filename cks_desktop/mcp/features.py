"""What a connected server offers besides tools — its resources and prompts — kept current.

Each ``McpConnection`` has one ``ServerFeatures``. When the connection is ready, its owner
task runs ``run(client)`` beside the tool refresher: it lists the resources, templates and
prompts once, then waits for change notifications. Those (``resources/list_changed``,
``prompts/list_changed``, ``resources/updated`` on a handshake connection; the same events
on a 2026-07-28 ``subscriptions/listen`` stream) only mark what is stale; the one task
relists at most once per ``MIN_INTERVAL`` seconds however many arrive, so an endless storm
of notifications costs a bounded amount of work (and the counts are in the server's log).

Listeners (plain callbacks, no Qt: the GUI's picker and slash commands, tests) get one
``FeatureEvent`` per refresh: ``"resources"``, ``"prompts"``, or ``"updated"`` with the URIs
that changed. Subscriptions are remembered here so they survive a change of listen stream,
and are dropped when the connection ends (a new session starts with none).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import mcp_types as types
from mcp import Client, MCPError
from mcp.client.subscriptions import ListenNotSupportedError, SubscriptionLost
from mcp.shared.subscriptions import PromptsListChanged, ResourcesListChanged, ResourceUpdated
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from cks_desktop.callbacks import Callbacks
from cks_desktop.mcp.requests import RequestFailed, send

if TYPE_CHECKING:
    from cks_desktop.mcp.connection import McpConnection

log = logging.getLogger(__name__)

MIN_INTERVAL = 0.5  # seconds between two relistings, however many notifications arrive
MAX_SUBSCRIPTIONS = 256
MAX_PENDING_URIS = 1_000  # updated URIs remembered between two flushes; beyond that, "many"


@dataclass(frozen=True)
class FeatureEvent:
    server: str
    kind: str  # "resources", "prompts" or "updated"
    uris: tuple[str, ...] = ()


FeatureListener = Callable[[FeatureEvent], None]


class ServerFeatures:
    def __init__(self, conn: "McpConnection") -> None:
        self._conn = conn
        self.resources: list[types.Resource] = []
        self.templates: list[types.ResourceTemplate] = []
        self.prompts: list[types.Prompt] = []
        self.notices: dict[str, str] = {}  # kind -> what a bound left out, or why a listing failed
        self.subscriptions: set[str] = set()
        self.notifications = 0  # change notifications received on this connection
        self.refreshes = 0  # relistings they caused
        self._stale: set[str] = set()
        self._updated: set[str] = set()
        self._updated_overflow = False
        self._wake = asyncio.Event()
        self._resubscribe = asyncio.Event()
        self._listeners: Callbacks[[FeatureEvent]] = Callbacks("MCP features")
        self._listed = asyncio.Event()

    # -- events ----------------------------------------------------------------------
    def subscribe_events(self, listener: FeatureListener) -> Callable[[], None]:
        return self._listeners.subscribe(listener)

    def _emit(self, kind: str, uris: tuple[str, ...] = ()) -> None:
        self._listeners.emit(FeatureEvent(self._conn.name, kind, uris))

    async def wait_listed(self, timeout: float) -> bool:
        """Wait (bounded) for the first listing after the connection became ready."""
        try:
            await asyncio.wait_for(self._listed.wait(), timeout)
        except TimeoutError:
            return False
        return True

    # -- notifications (called from the connection's message handler) ---------------------
    def on_message(self, message: Any) -> bool:
        """Take a resources/prompts notification; False for anything else."""
        if isinstance(message, types.ResourceListChangedNotification):
            self._mark("resources")
        elif isinstance(message, types.PromptListChangedNotification):
            self._mark("prompts")
        elif isinstance(message, types.ResourceUpdatedNotification):
            self._mark_updated(str(message.params.uri))
        else:
            return False
        return True

    def _mark(self, kind: str) -> None:
        self.notifications += 1
        self._stale.add(kind)
        self._wake.set()

    def _mark_updated(self, uri: str) -> None:
        self.notifications += 1
        if len(self._updated) < MAX_PENDING_URIS:
            self._updated.add(uri[:2000])
        else:
            self._updated_overflow = True
        self._wake.set()

    # -- the refresher (runs in a helper task of the owner task) ----------------------------
    async def run(self, client: Client) -> None:
        """List once, then relist what notifications marked stale, coalesced."""
        helpers: list[asyncio.Task[None]] = []
        if self._conn.protocol_version in MODERN_PROTOCOL_VERSIONS:
            helpers.append(asyncio.create_task(self._listen(client)))
        try:
            await self._refresh({"resources", "prompts"})
            self._listed.set()
            while True:
                await self._wake.wait()
                self._wake.clear()
                stale, self._stale = self._stale, set()
                updated, self._updated = self._updated, set()
                overflow, self._updated_overflow = self._updated_overflow, False
                if stale:
                    await self._refresh(stale)
                if updated or overflow:
                    self._emit("updated", tuple(sorted(updated)))
                await asyncio.sleep(MIN_INTERVAL)  # a rate limit: a storm waits here, marking only
        finally:
            for task in helpers:
                task.cancel()
            if helpers:
                await asyncio.wait(helpers)

    async def _refresh(self, kinds: set[str]) -> None:
        from cks_desktop.mcp.prompts import list_prompts
        from cks_desktop.mcp.resources import list_resources

        for kind in sorted(kinds):
            self.refreshes += 1
            try:
                if kind == "resources":
                    listing = await list_resources(self._conn)
                    self.resources, self.templates = listing.resources, listing.templates
                    notice = listing.notice
                else:
                    self.prompts, notice = await list_prompts(self._conn)
            except asyncio.CancelledError:
                raise
            except RequestFailed as exc:
                notice = str(exc)
                self._conn.log.note(f"could not list its {kind}: {exc}")
            if notice:
                self.notices[kind] = notice
            else:
                self.notices.pop(kind, None)
            self._emit(kind)
        if self.notifications:
            self._conn.log.note(f"{self.notifications} change notifications so far, {self.refreshes} listings")

    def reset(self) -> None:
        """The connection ended: nothing is offered, nothing is subscribed."""
        had = bool(self.resources or self.templates or self.prompts)
        self.resources, self.templates, self.prompts = [], [], []
        self.subscriptions.clear()
        self._stale.clear()
        self._updated.clear()
        self._wake.clear()
        self._listed = asyncio.Event()
        if had:
            self._emit("resources")
            self._emit("prompts")

    # -- subscriptions ---------------------------------------------------------------
    async def subscribe(self, uri: str) -> None:
        """Updates of ``uri`` arrive as ``"updated"`` events. Raises ``RequestFailed``."""
        from cks_desktop.mcp.resources import supports_subscribe

        if uri in self.subscriptions:
            return
        if not supports_subscribe(self._conn):
            raise RequestFailed(f"MCP server '{self._conn.name}' does not offer updates of its resources.")
        if len(self.subscriptions) >= MAX_SUBSCRIPTIONS:
            raise RequestFailed(f"At most {MAX_SUBSCRIPTIONS} resources of one server can be followed at once.")
        if self._conn.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            # The non-deprecated request primitive (the SDK's helper warns: removed in 2026-07-28).
            await send(self._conn, f"the request to follow '{uri[:200]}'", lambda client: client.session.send_request(
                types.SubscribeRequest(params=types.SubscribeRequestParams(uri=uri)), types.EmptyResult))
        self.subscriptions.add(uri)
        self._resubscribe.set()

    async def unsubscribe(self, uri: str) -> None:
        if uri not in self.subscriptions:
            return
        self.subscriptions.discard(uri)
        self._resubscribe.set()
        if self._conn.protocol_version not in MODERN_PROTOCOL_VERSIONS and self._conn.client is not None:
            await send(self._conn, f"the request to stop following '{uri[:200]}'",
                       lambda client: client.session.send_request(
                           types.UnsubscribeRequest(params=types.UnsubscribeRequestParams(uri=uri)),
                           types.EmptyResult))

    async def _pump(self, sub: Any) -> None:
        async for event in sub:
            if isinstance(event, ResourcesListChanged):
                self._mark("resources")
            elif isinstance(event, PromptsListChanged):
                self._mark("prompts")
            elif isinstance(event, ResourceUpdated):
                self._mark_updated(str(event.uri))

    async def _listen(self, client: Client) -> None:
        """2026-07-28: list changes and resource updates come on a listen stream we open (and
        reopen when the set of followed resources changes)."""
        caps = client.server_capabilities
        wants_resources = caps is not None and caps.resources is not None and bool(caps.resources.list_changed)
        wants_prompts = caps is not None and caps.prompts is not None and bool(caps.prompts.list_changed)
        failures = 0
        while failures < 3:
            self._resubscribe.clear()
            uris = sorted(self.subscriptions)
            if not (wants_resources or wants_prompts or uris):
                await self._resubscribe.wait()
                continue
            try:
                async with client.listen(resources_list_changed=wants_resources, prompts_list_changed=wants_prompts,
                                         resource_subscriptions=uris) as sub:
                    pump = asyncio.create_task(self._pump(sub))
                    reopen = asyncio.create_task(self._resubscribe.wait())
                    try:
                        await asyncio.wait({pump, reopen}, return_when=asyncio.FIRST_COMPLETED)
                    finally:
                        for task in (pump, reopen):
                            task.cancel()
                        await asyncio.wait({pump, reopen})
                    if not pump.cancelled() and pump.exception() is not None:
                        raise pump.exception()  # type: ignore[misc]
                if not self._resubscribe.is_set():
                    return  # the server closed the stream
            except SubscriptionLost:
                failures += 1
                self._mark("resources")  # changes may have been missed while it was down
                self._mark("prompts")
            except (MCPError, ListenNotSupportedError) as exc:
                self._conn.log.note(f"the server refused to report resource and prompt changes: {exc}")
                return
