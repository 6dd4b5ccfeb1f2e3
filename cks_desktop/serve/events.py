"""A bounded in-memory ``EventStore``: what lets a host resume an SSE stream after a drop.

Every message the server sends on an SSE stream gets an event id; a host that lost its
connection reconnects with ``Last-Event-ID`` and gets the rest of that stream replayed. The
store keeps the last ``MAX_EVENTS`` messages over all streams (a few MB at most) and forgets
older ones; a host asking to resume from a forgotten id gets nothing replayed (the SDK then
answers as for an unknown id), never another stream's messages.
"""

from __future__ import annotations

import itertools
from collections import OrderedDict

from mcp.server.streamable_http import EventCallback, EventId, EventMessage, EventStore, StreamId
from mcp_types import JSONRPCMessage

MAX_EVENTS = 2000


class MemoryEventStore(EventStore):
    def __init__(self, max_events: int = MAX_EVENTS) -> None:
        self.max_events = max_events
        self._events: OrderedDict[EventId, tuple[StreamId, JSONRPCMessage | None]] = OrderedDict()
        self._ids = itertools.count(1)

    async def store_event(self, stream_id: StreamId, message: JSONRPCMessage | None) -> EventId:
        event_id = f"{next(self._ids)}"
        self._events[event_id] = (stream_id, message)
        while len(self._events) > self.max_events:
            self._events.popitem(last=False)
        return event_id

    async def replay_events_after(self, last_event_id: EventId, send_callback: EventCallback) -> StreamId | None:
        if last_event_id not in self._events:
            return None
        stream_id = self._events[last_event_id][0]
        after = False
        for event_id, (sid, message) in list(self._events.items()):
            if after and sid == stream_id and message is not None:
                await send_callback(EventMessage(message, event_id))
            if event_id == last_event_id:
                after = True
        return stream_id
