"""Internal ↔ wire tool names: charset, length, stability, reversibility, no collisions."""

from __future__ import annotations

import re

from hypothesis import example, given, settings
from hypothesis import strategies as st

from cks_desktop.tools.builtin import build_registry
from cks_desktop.tools.wire_names import MAX_LEN, WireNames, is_wire_safe, to_wire

WIRE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
part = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=0, max_size=40)
friendly = st.text(alphabet="abcXYZ019_-.:/ é", min_size=1, max_size=90)
internal_name = st.one_of(
    st.builds(lambda s, t: f"mcp:{s}:{t}", part, part),
    part.filter(bool),
    friendly,
)


def test_builtin_names_go_on_the_wire_unchanged() -> None:
    for spec in build_registry(None).specs():
        assert to_wire(spec.name) == spec.name and is_wire_safe(spec.name)


def test_plain_mapping_and_known_collisions() -> None:
    assert to_wire("mcp:github:create_issue") == "mcp__github__create_issue"
    # Parts touching "_" would be ambiguous when joined with "__": both get hashed, differently.
    assert to_wire("mcp:a_:b") != to_wire("mcp:a:_b")
    # A tool named like another's hashed name cannot take it over.
    hashed = to_wire("mcp:srv:odd.name")
    assert hashed != "mcp__srv__odd_name" and "___" in hashed
    assert to_wire("mcp:srv:" + hashed.split("__", 2)[2]) != hashed
    # A plain builtin name that looks like an MCP wire name is not confused with one.
    assert to_wire("mcp__srv__tool") != to_wire("mcp:srv:tool")
    long = "mcp:server:" + "t" * 100
    assert len(to_wire(long)) == MAX_LEN and to_wire(long) != to_wire(long + "u")


@settings(max_examples=150, deadline=None)
@given(internal_name)
@example("mcp:0\n:0")  # a part ending in a newline is not wire-safe ("$" would match before it)
def test_any_name_maps_to_a_valid_stable_name(name: str) -> None:
    wire = to_wire(name)
    assert WIRE.match(wire) and len(wire) <= MAX_LEN
    assert to_wire(name) == wire  # stable (pure function of the name)
    table = WireNames([name])
    assert table.internal(wire) == name


@settings(max_examples=100, deadline=None)
@given(st.sets(internal_name, min_size=2, max_size=30))
def test_distinct_names_never_collide(names: set[str]) -> None:
    wires = {to_wire(n) for n in names}
    assert len(wires) == len(names)
    table = WireNames(sorted(names))
    for name in names:
        assert table.internal(to_wire(name)) == name
    assert table.internal("not_offered") is None
