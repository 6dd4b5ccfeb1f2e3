"""A bare SDK server with the same tool as ``mcp serve`` (``get_object``), for bench/mcp_serve.py.

The SDK's ``MCPServer`` and one function that reads the object and its relations straight
from the store, answering the same JSON the built-in returns: no registry, no scopes, no
session resolution, no logging. ``python bench/mcp_serve_bare.py DB SESSION [--http PORT]``.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mcp.server.mcpserver import MCPServer  # noqa: E402

from cks_desktop.graph.store import GraphStore  # noqa: E402


def main() -> None:
    db, session = sys.argv[1], sys.argv[2]
    store = GraphStore.open(Path(db))
    server = MCPServer("bare")

    @server.tool()
    def get_object(ref: str) -> dict:
        obj = store.resolve(session, ref)
        incoming, outgoing = store.relations_of(session, obj.id)
        return {"object": obj.to_json(), "outgoing": [r.to_json() for r in outgoing],
                "incoming": [r.to_json() for r in incoming]}

    if "--http" in sys.argv:
        port = int(sys.argv[sys.argv.index("--http") + 1])
        server.run("streamable-http", host="127.0.0.1", port=port)
    else:
        server.run()


if __name__ == "__main__":
    main()
