"""`cks-desktop sessions watch [SESSION] [--json]`: the store's change feed, as it happens.

Prints every change committed to the data folder by any process (`tools call`,
`sessions import`, `mcp serve`, the window) until interrupted: Ctrl+C (or
SIGTERM) exits 0 without a word, and so does a closed stdout (`| head -n 3`),
also while nothing is being printed. With SESSION, only that session's changes
(and its own rename/delete; its deletion ends the watch, exit 0).

``--json`` prints one JSON object per line: first
``{"event": "ready", ...}`` once the feed is running (a change committed after
that line is never missed), then for each graph change
``{"event": "change", "change_id", "session_id", "origin", "external", "reverts",
"types_changed", "objects": {"added", "updated", "removed"}, "relations": {…}}``
(added/updated as ``{id, type, name}`` / ``{id, type, source_id, target_id}``,
removed as ids), and for sessions ``{"event": "session", "kind", "session_id",
"title", "external"}``. Without it, one readable line per event; the "watching"
note goes to stderr so stdout holds only events.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import select
import signal
import stat
import sys
import time
from types import FrameType
from typing import Any

from cks_desktop.commands.common import EXIT_OK, ctrl_c_stops
from cks_desktop.graph.events import GraphChanged, SessionEvent, StoreEvent
from cks_desktop.plural import counted

_TICK_S = 0.25  # how often an idle watch checks that stdout is still open
_NAMED = 3  # objects named in a readable line


def add_watch_parser(ssub: Any) -> None:
    """Register ``watch`` under ``sessions`` (called from ``sessions_cmd.add_parser``)."""
    text = "print the changes any process makes, as they happen, until interrupted"
    p = ssub.add_parser("watch", help=text, description=text)
    p.add_argument("session_id", metavar="SESSION", nargs="?", help="only this session")
    p.add_argument("--json", action="store_true", help="print one JSON object per line")
    p.set_defaults(handler=run_watch)


class _Stop(Exception):
    pass


def _on_term(signum: int, frame: FrameType | None) -> None:
    raise _Stop()


def run_watch(args: argparse.Namespace) -> int:
    from cks_desktop.commands.sessions_cmd import store_for

    previous = signal.signal(signal.SIGTERM, _on_term) if hasattr(signal, "SIGTERM") else None
    try:
        with ctrl_c_stops(), store_for(args) as store:
            only = args.session_id
            if only:
                store.get_session(only)  # NotFound → one line, exit 2
            events: queue.Queue[StoreEvent] = queue.Queue()
            store.subscribe(events.put)
            store.start_feed()
            _ready(args, store.path, only)
            _loop(events, args.json, only)
    except (KeyboardInterrupt, _Stop, BrokenPipeError):
        _silence_stdout()
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    return EXIT_OK


def _ready(args: argparse.Namespace, path: Any, only: str | None) -> None:
    if args.json:
        _write(json.dumps({"event": "ready", "database": str(path), "session_id": only}))
    else:
        print(f"Watching {path}{' (session ' + only + ')' if only else ''}; Ctrl+C stops.", file=sys.stderr,
              flush=True)


def _loop(events: "queue.Queue[StoreEvent]", as_json: bool, only: str | None) -> None:
    hangup = _hangup_probe()
    while True:
        try:
            event = events.get(timeout=_TICK_S)
        except queue.Empty:
            if hangup():
                raise BrokenPipeError()
            continue
        if only and _session_of(event) != only:
            continue
        _write(json.dumps(event_json(event), ensure_ascii=False) if as_json else event_line(event))
        if only and isinstance(event, SessionEvent) and event.kind == "deleted":
            return


def _session_of(event: StoreEvent) -> str:
    return event.session_id if isinstance(event, GraphChanged) else event.session.id


def _write(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def _hangup_probe() -> Any:
    """A check that stdout's reader went away (a pipe or socket only; poll reports POLLERR/
    POLLHUP on the write end then), so an idle watch ends too, not only at its next write."""
    try:
        fd = sys.__stdout__.fileno() if sys.__stdout__ is not None else -1
        mode = os.fstat(fd).st_mode if fd >= 0 else 0
    except (OSError, ValueError):
        return lambda: False
    if not hasattr(select, "poll") or not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)):
        return lambda: False
    poller = select.poll()
    poller.register(fd, 0)  # no events asked: only errors and hang-ups are reported

    def hung_up() -> bool:
        return any(ev & (select.POLLERR | select.POLLHUP | select.POLLNVAL) for _, ev in poller.poll(0))

    return hung_up


def _silence_stdout() -> None:
    """After a broken pipe, point stdout at /dev/null so the interpreter's final flush
    cannot print "Exception ignored … BrokenPipeError"."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        if sys.__stdout__ is not None:
            os.dup2(devnull, sys.__stdout__.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


# -- formats ----------------------------------------------------------------------------------

def event_json(event: StoreEvent) -> dict[str, Any]:
    if isinstance(event, SessionEvent):
        return {"event": "session", "kind": event.kind, "session_id": event.session.id,
                "title": event.session.title, "external": event.external}
    return {
        "event": "change", "change_id": event.change_id, "session_id": event.session_id,
        "origin": event.origin, "external": event.external, "reverts": event.reverts,
        "types_changed": event.types_changed,
        "objects": {"added": [_obj(o) for o in event.added_objects],
                    "updated": [_obj(o) for o in event.updated_objects],
                    "removed": list(event.removed_objects)},
        "relations": {"added": [_rel(r) for r in event.added_relations],
                      "updated": [_rel(r) for r in event.updated_relations],
                      "removed": list(event.removed_relations)},
    }


def _obj(o: Any) -> dict[str, Any]:
    return {"id": o.id, "type": o.type, "name": o.name}


def _rel(r: Any) -> dict[str, Any]:
    return {"id": r.id, "type": r.type, "source_id": r.source_id, "target_id": r.target_id}


def event_line(event: StoreEvent) -> str:
    clock = time.strftime("%H:%M:%S")
    if isinstance(event, SessionEvent):
        return f"{clock}  session {event.session.id} {event.kind}: {event.session.title}"
    parts = []
    for verb, objs, rels in (("added", event.added_objects, event.added_relations),
                             ("updated", event.updated_objects, event.updated_relations),
                             ("removed", event.removed_objects, event.removed_relations)):
        counted = [_count(len(objs), "object"), _count(len(rels), "relation")]
        text = ", ".join(c for c in counted if c)
        if not text:
            continue
        names = [f"{o.type} {o.name!r}" for o in objs[:_NAMED] if not isinstance(o, str)]
        if names:
            text += " (" + ", ".join(names) + (", …" if len(objs) > _NAMED else "") + ")"
        parts.append(f"{verb} {text}")
    if event.types_changed:
        parts.append("changed type definitions")
    what = "; ".join(parts) or "no visible change"
    undo = f" (reverts {event.reverts})" if event.reverts else ""
    return f"{clock}  change {event.change_id} in {event.session_id} by {event.origin}{undo}: {what}"


def _count(n: int, word: str) -> str:
    return counted(n, word) if n else ""
