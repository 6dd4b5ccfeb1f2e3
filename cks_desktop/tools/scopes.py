"""Which scopes a chat grants, and the sentence a model reads when a call needs more.

Scopes are real: a chat run is granted

- the session's own choice (Settings key ``agent.session_scopes[<session id>]``, set from the
  session's context menu → *Scopes…*), or, when the session has none, the default choice
  (``agent.granted_scopes``), or, when that is unset, ``DEFAULT_GRANT``: both graph scopes
  and ``provider.call``, plus ``fs.read``;
- minus ``fs.read`` while no allowed folders are configured (nothing could be read anyway);
- per MCP server, the scopes the person granted that server's tools in every chat
  (``agent.server_scopes[<server>]``, set in the server's editor). They live in the app's own
  section, not in the ``mcpServers`` entry, so a pasted or imported server configuration can
  never bring grants with it; and they hold the fingerprint of the server they were given to
  (``server_identity``), so another server later given the same name does not inherit them.

``net.fetch`` and ``code.execute`` are never granted unless the person turns them on. Since a
stdio MCP server's tools need ``code.execute`` by default (``mcp/config.py``), a new server's
tools reach a chat only after the person grants that, for the session or for the server.

The registry enforces the grant (``ToolRegistry.invoke``, ``offered``); this module only
computes it and words the refusal.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cks_desktop.tools.types import Scope

if TYPE_CHECKING:
    from cks_desktop.settings import Settings
    from cks_desktop.tools.types import ToolSpec

DEFAULT_GRANT: frozenset[Scope] = frozenset({Scope.GRAPH_READ, Scope.GRAPH_MUTATE, Scope.PROVIDER_CALL, Scope.FS_READ})
OPT_IN: frozenset[Scope] = frozenset({Scope.NET_FETCH, Scope.CODE_EXECUTE})

SESSION_SETTING = "the session's Scopes (right-click the session in the Sessions list → Scopes…)"
CLI_SETTING = "'cks-desktop chat --grant SCOPE' for one run, or agent.session_scopes in settings.json"


def parse_scopes(values: Any) -> frozenset[Scope]:
    """The known scopes among ``values`` (strings or ``Scope``s); anything else is ignored."""
    if not isinstance(values, (list, tuple, set, frozenset)):
        return frozenset()
    known = {s.value: s for s in Scope}
    return frozenset(known[v] if isinstance(v, str) else v for v in values
                     if (isinstance(v, str) and v in known) or isinstance(v, Scope))


def effective_grant(chosen: Iterable[Scope] | None, allowed_folders: Sequence[Path | str] = ()) -> frozenset[Scope]:
    """``chosen`` (None: the defaults), without ``fs.read`` while no folder is allowed."""
    grant = DEFAULT_GRANT if chosen is None else frozenset(chosen)
    if not allowed_folders:
        grant -= {Scope.FS_READ}
    return grant


@dataclass(frozen=True)
class ChatGrant:
    """What one chat run may use: ``scopes`` for every tool, plus ``by_source`` extra scopes
    for the tools of one source (``"mcp:<server>"``), the folders ``read_text_file`` may read,
    and ``scope_setting``: where a refusal for a missing scope tells the person to grant it
    ("" = the window's session Scopes)."""

    scopes: frozenset[Scope]
    by_source: Mapping[str, frozenset[Scope]] = field(default_factory=dict)
    allowed_folders: tuple[Path, ...] = ()
    scope_setting: str = ""


def server_identity(entry: Any) -> str:
    """A fingerprint of what a server entry starts or reaches (command, args, URL).

    A per-server grant is stored with it, so the grant lapses when the server it was given to
    is replaced by another of the same name: removed and re-added, overwritten by ``mcp add``,
    or brought in by an import."""
    if not isinstance(entry, Mapping):
        return ""
    what = {k: entry.get(k) for k in ("command", "args", "url")}
    return hashlib.sha256(json.dumps(what, sort_keys=True, default=str).encode()).hexdigest()[:32]


def chosen_for_session(settings: "Settings", session_id: str) -> frozenset[Scope] | None:
    """The session's own choice, else the default choice, else None (the built-in defaults)."""
    own = settings.session_scopes(session_id)
    if own is not None:
        return parse_scopes(own)
    default = settings.default_scopes
    return parse_scopes(default) if default is not None else None


def chat_grant(settings: "Settings", session_id: str, extra: Iterable[Scope] = (), *,
               scope_setting: str = "") -> ChatGrant:
    """The grant of a chat in ``session_id`` from the person's settings; ``extra`` adds scopes for
    this run only (``chat --grant``); ``scope_setting`` is where a refusal points the person."""
    folders = settings.allowed_folders
    chosen = chosen_for_session(settings, session_id)
    scopes = effective_grant((DEFAULT_GRANT if chosen is None else chosen) | frozenset(extra), folders)
    by_source: dict[str, frozenset[Scope]] = {}
    for server, entry in settings.mcp_servers.items():
        scopes_, identity = settings.server_grant(server)
        if not scopes_ or identity != server_identity(entry):
            continue  # granted to another server of that name (removed, replaced, re-imported): lapsed
        granted = effective_grant(parse_scopes(scopes_), folders)
        if granted:
            by_source[f"mcp:{server}"] = granted
    return ChatGrant(scopes, by_source, tuple(folders), scope_setting)


def scope_refusal(spec: "ToolSpec", missing: Iterable[Scope], *, allowed_folders: Sequence[Path] = (),
                  where: str = SESSION_SETTING) -> str:
    """One sentence for the model (and the person reading the chat): what is missing, and
    which setting turns it on."""
    names = ", ".join(sorted(s.value for s in missing))
    text = f"{spec.display_name} needs {names}, which this chat does not grant, so it did not run."
    if Scope.FS_READ in set(missing) and not allowed_folders:
        return (f"{text} Reading files needs an allowed folder: the person can add one in Settings → Agent → "
                "Allowed folders.")
    server = spec.source[4:] if spec.source.startswith("mcp:") else ""
    also = (f", or for every chat in Settings → MCP servers → {server} → Grant in every chat" if server else "")
    return f"{text} The person can turn {names} on in {where}{also}."
