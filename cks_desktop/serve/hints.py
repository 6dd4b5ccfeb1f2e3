"""What a host is told about each tool: annotations, output schema, the schema it fills in.

Annotations are derived from the tool's own declaration, so a new tool gets honest hints
without an entry here:

* ``readOnlyHint``: every scope it needs only reads (``graph.read``, ``fs.read``).
* ``destructiveHint`` (writes only): the app itself would ask before it (its effective
  policy is not ``auto``), it declares itself destructive, or it is a batch tool (it takes an
  ``operations`` list, so it can do whatever a single operation can, removals included).
* ``idempotentHint``: what the tool declares, else true for read-only tools only.
* ``openWorldHint``: false: built-in tools touch this app's graph, nothing outside.

Output schemas: every exposed built-in's successful result is a JSON object (the registry
passes it as ``structuredContent``); the schema names the keys its spec declares
(``ToolSpec.result_keys``) and requires none, so a host can rely on "an object" and read the
documented keys. Tools whose success may not be an object (``read_text_file`` answers in text)
declare none and get none.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from cks_desktop.tools.registry import model_schema
from cks_desktop.tools.types import Policy, Scope

if TYPE_CHECKING:
    from cks_desktop.tools.registry import ToolRegistry
    from cks_desktop.tools.types import ToolSpec

READ_ONLY_SCOPES = frozenset({Scope.GRAPH_READ, Scope.FS_READ})

def is_read_only(spec: "ToolSpec") -> bool:
    return spec.scopes <= READ_ONLY_SCOPES


def tool_hints(spec: "ToolSpec", registry: "ToolRegistry | None" = None) -> dict[str, bool]:
    """readOnlyHint / destructiveHint / idempotentHint / openWorldHint for one tool."""
    declared = {k: v for k, v in spec.annotations.items() if k.endswith("Hint") and isinstance(v, bool)}
    read_only = is_read_only(spec)
    policy = registry.effective_policy(spec) if registry is not None else spec.default_policy
    batch = "operations" in (spec.input_schema.get("properties") or {})
    hints = {"readOnlyHint": read_only,
             "destructiveHint": (not read_only) and (policy is not Policy.AUTO or declared.get("destructiveHint") is True
                                                     or batch),
             "idempotentHint": declared.get("idempotentHint", read_only) if not batch else False,
             "openWorldHint": declared.get("openWorldHint", not spec.source == "builtin")}
    return hints


def output_schema(spec: "ToolSpec") -> dict[str, Any] | None:
    keys = spec.result_keys if spec.source == "builtin" else None
    if keys is None:
        return None
    return {"type": "object", "properties": {k: {} for k in keys}}


def host_input_schema(spec: "ToolSpec", *, session_argument: bool) -> dict[str, Any]:
    """The schema a host fills in: the model schema (no ``session_id``), plus, when several
    sessions may be shared, the ``session`` to work in (a title or id; optional when only one is).
    The schema does not list the shared sessions, so sharing one does not change the tool list;
    ``list_shared_sessions`` and the resources name them."""
    schema = model_schema(spec)
    if not session_argument:
        return schema
    schema = copy.deepcopy(schema)
    schema.setdefault("properties", {})["session"] = {
        "type": "string",
        "description": "The shared session to work in, by title or id (list_shared_sessions names them). "
                       "May be left out when only one session is shared.",
    }
    return schema
