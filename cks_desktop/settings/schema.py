"""The section registry: each named section of the settings file is a frozen dataclass.

A section class is declared with ``@section`` and its ``KEY`` ("extraction"), fields made with
``setting(default, check)``; the registry maps the file's key to the class. One place
then does for every section what each reader used to do by hand:

- ``read(kind, raw)``: the typed value of a section as the file holds it, each missing
  key at its default and each bad value replaced by its default, with one note per bad
  value (``Settings.problem`` collects them). A table of entries (prices, per-session
  choices) keeps its good entries and drops the bad ones.
- ``validated(value)``: the same checks, strict: a bad value raises ``SettingsError``
  with one sentence naming the key (``agent.prices.gpt-4o``), before anything is written.
- ``write(value, raw)``: writes into the section's dict in place only the keys whose
  value differs from what it holds now, so keys this version does not know survive and
  the three-way merge of ``Settings.save`` sees only what really changed (writing a
  default another process never saw would otherwise undo that process's choice).
- ``migrate(data)``: brings the shapes older versions wrote to today's, before anything
  else reads the file; each migration is idempotent, so the file needs no version number.

A ``check`` takes the stored value and returns the typed one (lists become tuples) or
raises ``Invalid`` with the end of a sentence ("must be a whole number from 1 to 200,
not 'ten'"). Nothing here imports the rest of the app: the settings sit below every
other package.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import MISSING, Field, dataclass, field, fields, replace
from typing import Any, ClassVar, Protocol, TypeVar

Check = Callable[[Any], Any]


class SettingsError(Exception):
    """One sentence saying which setting is wrong (or why the file could not be saved)."""


class Invalid(ValueError):
    """What is wrong with one value; ``where`` is the sub-key below the field (".gpt-4o"),
    ``partial`` what a lenient read keeps (a table without its bad entries)."""

    def __init__(self, what: str, where: str = "", partial: Any = MISSING) -> None:
        super().__init__(what)
        self.what, self.where, self.partial = what, where, partial


class SectionValue(Protocol):
    """A registered section: a frozen dataclass with its key in the file."""

    KEY: ClassVar[str]
    __dataclass_fields__: ClassVar[dict[str, Field[Any]]]


S = TypeVar("S", bound=SectionValue)
T = TypeVar("T")
REGISTRY: dict[str, type[Any]] = {}


def section(kind: type[T]) -> type[T]:
    """Register a section class under its ``KEY`` (the top-level key of the settings file)."""
    key = getattr(kind, "KEY", None)
    if not isinstance(key, str) or not key:
        raise ValueError(f"the settings section {kind.__name__} declares no KEY")
    if key in REGISTRY:
        raise ValueError(f"the settings section {key!r} is registered twice")
    REGISTRY[key] = kind
    return kind


def setting(default: Any, check: Check, *, factory: Callable[[], Any] | None = None) -> Any:
    """A section field: its default (or ``factory`` for a table) and its check."""
    if factory is not None:
        return field(default_factory=factory, metadata={"check": check})
    return field(default=default, metadata={"check": check})


# -- checks --------------------------------------------------------------------------------------------
def _shown(value: Any) -> str:
    return repr(value)[:40]


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def whole(low: int, high: int) -> Check:
    def check(value: Any) -> int:
        if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
            raise Invalid(f"must be a whole number from {low:,} to {high:,}, not {_shown(value)}")
        return value

    return check


def number(low: float, high: float, *, above_low: bool = False) -> Check:
    def check(value: Any) -> float:
        if not _is_number(value) or not (low < value if above_low else low <= value) or value > high:
            bound = f"more than {low:g} and at most {high:,g}" if above_low else f"from {low:g} to {high:,g}"
            raise Invalid(f"must be a number {bound}, not {_shown(value)}")
        return float(value)

    return check


def flag(value: Any) -> bool:
    if not isinstance(value, bool):
        raise Invalid(f"must be true or false, not {_shown(value)}")
    return value


def text(value: Any) -> str:
    if not isinstance(value, str):
        raise Invalid(f"must be text, not {_shown(value)}")
    return value


def choice(*values: str) -> Check:
    def check(value: Any) -> str:
        if value not in values:
            raise Invalid(f"must be one of {', '.join(repr(v) for v in values)}, not {_shown(value)}")
        return str(value)

    return check


def optional(inner: Check) -> Check:
    """None (not set) or what ``inner`` accepts."""

    def check(value: Any) -> Any:
        return None if value is None else inner(value)

    return check


def texts(value: Any) -> tuple[str, ...]:
    """A list of text, duplicates dropped (the first kept)."""
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise Invalid(f"must be a list of text, not {_shown(value)}")
    return tuple(dict.fromkeys(value))


def table(value: Any) -> dict[str, Any]:
    """Any JSON object, kept as it is (its reader checks the inside)."""
    if not isinstance(value, Mapping):
        raise Invalid(f"must be a table of keys and values, not {_shown(value)}")
    return {str(k): v for k, v in value.items()}


def table_of(entry: Check) -> Check:
    """A table whose every value ``entry`` accepts; a lenient read keeps the good entries."""

    def check(value: Any) -> dict[str, Any]:
        items = table(value)
        good: dict[str, Any] = {}
        first: Invalid | None = None
        for key, item in items.items():
            try:
                good[key] = entry(item)
            except Invalid as exc:
                first = first or Invalid(exc.what, f".{key}{exc.where}")
        if first is not None:
            raise Invalid(first.what, first.where, partial=good)
        return good

    return check


def fields_of(**checks: Check) -> Check:
    """A small table with these keys, each optional unless its check refuses None; other keys are kept."""

    def check(value: Any) -> dict[str, Any]:
        items = table(value)
        out = dict(items)
        for key, inner in checks.items():
            try:
                out[key] = inner(items.get(key))
            except Invalid as exc:
                raise Invalid(exc.what, f".{key}{exc.where}") from None
            if out[key] is None:
                out.pop(key)
        return out

    return check


def required(inner: Check) -> Check:
    def check(value: Any) -> Any:
        if value is None:
            raise Invalid("must be given")
        return inner(value)

    return check


def nested(kind: type[Any]) -> Check:
    """A sub-table typed by another dataclass (a provider's entry); read key by key."""

    def check(value: Any) -> Any:
        if isinstance(value, kind):  # checked field by field, a bad one named by its whole key
            out: dict[str, Any] = {}
            for f in fields(kind):
                try:
                    out[f.name] = _check_of(f)(getattr(value, f.name))
                except Invalid as exc:
                    raise Invalid(exc.what, f".{f.name}{exc.where}") from None
            return replace(value, **out)
        raw = table(value)
        out, notes = _read(kind, raw, "", kind())
        if notes:  # a strict check names the first; a lenient read (_read) recurses instead
            where, what = notes[0]
            raise Invalid(what.rsplit("; ", 1)[0], where)
        return out

    check.nested = kind  # type: ignore[attr-defined]  # write() recurses into it key by key
    return check


# -- reading, checking, writing ----------------------------------------------------------------------
def _check_of(f: Field[Any]) -> Check:
    check: Check = f.metadata["check"]
    return check


def _read(kind: type[Any], raw: Mapping[str, Any], path: str, base: Any) -> tuple[Any, list[tuple[str, str]]]:
    """The typed value and the (key path, what is wrong) of each bad value, replaced by its default."""
    values: dict[str, Any] = {}
    notes: list[tuple[str, str]] = []
    for f in fields(kind):
        if f.name not in raw:
            continue
        check = _check_of(f)
        inner = getattr(check, "nested", None)
        if inner is not None and isinstance(raw[f.name], Mapping):
            values[f.name], sub = _read(inner, raw[f.name], f"{path}.{f.name}", getattr(base, f.name))
            notes.extend(sub)
            continue
        try:
            values[f.name] = check(raw[f.name])
        except Invalid as exc:
            if exc.partial is not MISSING:
                values[f.name] = exc.partial
                notes.append((f"{path}.{f.name}{exc.where}", f"{exc.what}; that entry is left out"))
            else:
                notes.append((f"{path}.{f.name}{exc.where}", f"{exc.what}; the default is used"))
    return replace(base, **values), notes


def read(kind: type[S], raw: Any) -> tuple[S, list[str]]:
    """The section's typed value from the file's raw section, and one sentence per bad value."""
    if raw is None:
        return kind(), []
    if not isinstance(raw, Mapping):
        return kind(), [f"The setting {kind.KEY} is not a table; its defaults are used."]
    value, notes = _read(kind, raw, kind.KEY, kind())
    return value, [f"The setting {where} {what}." for where, what in notes]


def validated(value: S) -> S:
    """``value`` with every field checked (lists as tuples); ``SettingsError`` names the first bad key."""
    key = getattr(value, "KEY", "")
    out: dict[str, Any] = {}
    for f in fields(value):
        try:
            out[f.name] = _check_of(f)(getattr(value, f.name))
        except Invalid as exc:
            where = f"{key}.{f.name}{exc.where}" if key else f"{f.name}{exc.where}"
            raise SettingsError(f"The setting {where} {exc.what}.") from None
    return replace(value, **out)


def to_json(value: Any) -> Any:
    """A field's value as the file stores it."""
    if hasattr(value, "__dataclass_fields__"):
        return {f.name: to_json(getattr(value, f.name)) for f in fields(value)
                if getattr(value, f.name) is not None}
    if isinstance(value, (list, tuple)):
        return [to_json(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): to_json(v) for k, v in value.items()}
    return value


def write(value: Any, raw: dict[str, Any]) -> None:
    """Write ``value`` (already validated) into ``raw`` in place: only the keys that change; None and an
    emptied table remove theirs."""
    current, _ = _read(type(value), raw, "", type(value)())
    for f in fields(value):
        new, old = getattr(value, f.name), getattr(current, f.name)
        inner = getattr(_check_of(f), "nested", None)
        if inner is not None and new is not None:
            if new != old:
                sub = raw.get(f.name)
                if not isinstance(sub, dict):
                    sub = raw[f.name] = {}
                write(new, sub)
            continue
        if new == old:  # a stored value this version cannot read stays (a newer version may know it)
            continue
        if new is None or (f.default_factory is not MISSING and new == f.default_factory()):
            raw.pop(f.name, None)  # not set, or an emptied table: the key goes, as if never written
        else:
            raw[f.name] = to_json(new)


# -- migrations ----------------------------------------------------------------------------------------
Migration = Callable[[dict[str, Any]], None]
MIGRATIONS: list[Migration] = []


def migration(fn: Migration) -> Migration:
    """Register a migration: it rewrites an older shape in place and does nothing to today's."""
    MIGRATIONS.append(fn)
    return fn


def migrate(data: dict[str, Any]) -> None:
    for fn in MIGRATIONS:
        fn(data)


@dataclass(frozen=True)
class Registered:
    """What the registry holds about one section (for the docs and the tests)."""

    key: str
    kind: type[Any]


def registered() -> list[Registered]:
    return [Registered(key, kind) for key, kind in REGISTRY.items()]
