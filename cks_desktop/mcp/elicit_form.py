"""An elicitation's requested schema as form fields, and the checks an answer must pass.

MCP restricts ``elicitation/create``'s ``requestedSchema`` to one flat object whose
properties are primitives: strings (``minLength``/``maxLength``/``format`` email, uri,
date, date-time), numbers and integers (``minimum``/``maximum``), booleans, single-choice
enums (``enum`` with the legacy ``enumNames``, or ``oneOf`` of ``const``/``title``) and
multi-choice arrays of such enums (``items.enum`` or ``items.anyOf``, ``minItems``/``maxItems``).
Each may carry a ``default``. ``parse_form`` turns that into ``FormField``s that both the
GUI's dialog and the headless rules read; anything outside the subset (a nested object,
an unknown type, a schema that is not an object, more than ``MAX_FIELDS`` fields) is a
``FormSchemaError`` with one sentence, which the connection answers to the server as an
error instead of showing a form it cannot build.

``check_answer`` is the one validator: the dialog calls it before it accepts, the headless
host calls it on the defaults, so what is sent back always fits the schema.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any, Literal
from urllib.parse import urlsplit

MAX_FIELDS = 50
MAX_OPTIONS = 500
MAX_TEXT = 200  # characters of a title/description shown from a server's schema
FieldKind = Literal["string", "number", "integer", "boolean", "enum", "multi"]
Value = str | int | float | bool | list[str] | None
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+\Z")


class FormSchemaError(ValueError):
    """The server's requested schema is outside what MCP allows (one sentence)."""


@dataclass(frozen=True)
class FormField:
    name: str
    kind: FieldKind
    title: str = ""
    description: str = ""
    required: bool = False
    default: Value = None
    options: tuple[tuple[str, str], ...] = ()  # (value, label) of enum / multi
    minimum: float | None = None
    maximum: float | None = None
    min_length: int | None = None
    max_length: int | None = None
    fmt: str = ""  # string format: email, uri, date, date-time
    has_default: bool = False

    @property
    def label(self) -> str:
        return self.title or self.name


@dataclass(frozen=True)
class Form:
    fields: tuple[FormField, ...] = field(default_factory=tuple)

    def defaults(self) -> dict[str, Value]:
        return {f.name: f.default for f in self.fields if f.has_default}

    @property
    def required_without_default(self) -> list[str]:
        return [f.label for f in self.fields if f.required and not f.has_default]


def _text(value: Any) -> str:
    text = value if isinstance(value, str) else ""
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT - 1] + "…"


def _num(value: Any, where: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise FormSchemaError(f"{where} must be a number.")
    return float(value)


def _int(value: Any, where: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise FormSchemaError(f"{where} must be a whole number of 0 or more.")
    return value


def _options(prop: dict[str, Any], where: str) -> tuple[tuple[str, str], ...] | None:
    """The choices of an enum-shaped property, or None when it is not one."""
    if isinstance(prop.get("enum"), list):
        values = prop["enum"]
        names = prop.get("enumNames") if isinstance(prop.get("enumNames"), list) else None
        if not all(isinstance(v, str) for v in values):
            raise FormSchemaError(f"{where} lists choices that are not text.")
        labels = [(_text(names[i]) if names and i < len(names) else v) for i, v in enumerate(values)]
        opts = tuple(zip(values, labels))
    else:
        branch = prop.get("oneOf", prop.get("anyOf"))
        if not isinstance(branch, list):
            return None
        out: list[tuple[str, str]] = []
        for item in branch:
            if not isinstance(item, dict) or not isinstance(item.get("const"), str):
                raise FormSchemaError(f"{where} has a choice without a text \"const\".")
            out.append((item["const"], _text(item.get("title")) or item["const"]))
        opts = tuple(out)
    if not opts:
        raise FormSchemaError(f"{where} offers no choices.")
    if len(opts) > MAX_OPTIONS:
        raise FormSchemaError(f"{where} offers more than {MAX_OPTIONS} choices.")
    return opts


def _field(name: str, prop: Any, required: bool) -> FormField:
    where = f"The field '{name[:60]}'"
    if not isinstance(prop, dict):
        raise FormSchemaError(f"{where} is not described by a JSON object.")
    kind_raw = prop.get("type")
    common: dict[str, Any] = {"name": name, "title": _text(prop.get("title")),
                              "description": _text(prop.get("description")), "required": required}
    has_default = "default" in prop
    default = prop.get("default")
    if kind_raw == "string":
        opts = _options(prop, where)
        if opts is not None:
            made = FormField(kind="enum", options=opts, has_default=has_default, default=default, **common)
        else:
            made = FormField(kind="string", min_length=_int(prop.get("minLength"), f"{where}'s minLength"),
                             max_length=_int(prop.get("maxLength"), f"{where}'s maxLength"),
                             fmt=str(prop["format"]) if isinstance(prop.get("format"), str) else "",
                             has_default=has_default, default=default, **common)
    elif kind_raw in ("number", "integer"):
        made = FormField(kind=kind_raw, minimum=_num(prop.get("minimum"), f"{where}'s minimum"),
                         maximum=_num(prop.get("maximum"), f"{where}'s maximum"),
                         has_default=has_default, default=default, **common)
    elif kind_raw == "boolean":
        made = FormField(kind="boolean", has_default=has_default, default=default, **common)
    elif kind_raw == "array":
        items = prop.get("items")
        opts = _options(items, f"{where}'s items") if isinstance(items, dict) else None
        if opts is None:
            raise FormSchemaError(f"{where} is a list, and only lists of choices can be asked for.")
        made = FormField(kind="multi", options=opts, min_length=_int(prop.get("minItems"), f"{where}'s minItems"),
                         max_length=_int(prop.get("maxItems"), f"{where}'s maxItems"),
                         has_default=has_default, default=default, **common)
    elif kind_raw == "object":
        raise FormSchemaError(f"{where} is a nested object, which an elicitation form may not hold.")
    else:
        raise FormSchemaError(f"{where} has the type {str(kind_raw)[:40]!r}, which an elicitation form cannot ask for.")
    if has_default:
        problem = check_value(made, default)
        if problem is not None:
            raise FormSchemaError(f"The default of {where[4:]} is invalid: {problem}")
    return made


def parse_form(schema: Any) -> Form:
    """The fields of a requested schema; raises ``FormSchemaError`` (one sentence) outside MCP's subset."""
    if not isinstance(schema, dict):
        raise FormSchemaError("The requested schema is not a JSON object.")
    if schema.get("type", "object") != "object":
        raise FormSchemaError("The requested schema does not describe an object of fields.")
    props = schema.get("properties", {})
    if not isinstance(props, dict):
        raise FormSchemaError("The requested schema's \"properties\" is not an object.")
    if len(props) > MAX_FIELDS:
        raise FormSchemaError(f"The requested schema asks for {len(props)} fields; at most {MAX_FIELDS} are shown.")
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        raise FormSchemaError("The requested schema's \"required\" is not a list of field names.")
    missing = [r for r in required if r not in props]
    if missing:
        raise FormSchemaError(f"The requested schema requires '{missing[0][:60]}', which it does not describe.")
    return Form(tuple(_field(str(name), prop, name in required) for name, prop in props.items()))


def check_value(f: FormField, value: Any) -> str | None:
    """Why ``value`` does not fit ``f`` (a sentence without the field's name), or None."""
    if value is None or value == "" or value == []:
        return "a value is required." if f.required else None
    if f.kind == "boolean":
        return None if isinstance(value, bool) else "it must be yes or no."
    if f.kind in ("number", "integer"):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return "it must be a number."
        if f.kind == "integer" and not float(value).is_integer():
            return "it must be a whole number."
        if f.minimum is not None and value < f.minimum:
            return f"it must be at least {f.minimum:g}."
        if f.maximum is not None and value > f.maximum:
            return f"it must be at most {f.maximum:g}."
        return None
    if f.kind == "enum":
        return None if value in {v for v, _ in f.options} else "it must be one of the choices offered."
    if f.kind == "multi":
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            return "it must be a list of choices."
        allowed = {v for v, _ in f.options}
        if any(v not in allowed for v in value):
            return "it must hold only the choices offered."
        if f.min_length is not None and len(value) < f.min_length:
            return f"choose at least {f.min_length}."
        if f.max_length is not None and len(value) > f.max_length:
            return f"choose at most {f.max_length}."
        return None
    if not isinstance(value, str):
        return "it must be text."
    if f.min_length is not None and len(value) < f.min_length:
        return f"it must be at least {f.min_length} characters long."
    if f.max_length is not None and len(value) > f.max_length:
        return f"it must be at most {f.max_length} characters long."
    return _format_problem(f.fmt, value)


def _format_problem(fmt: str, value: str) -> str | None:
    if fmt == "email" and not _EMAIL.match(value):
        return "it must be an email address."
    if fmt == "uri":
        parts = urlsplit(value)
        if not parts.scheme or not (parts.netloc or parts.path):
            return "it must be an address such as https://example.com."
    if fmt == "date":
        try:
            date.fromisoformat(value)
        except ValueError:
            return "it must be a date such as 2025-01-31."
    if fmt == "date-time":
        try:
            datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return "it must be a date and time such as 2025-01-31T12:00:00Z."
    return None


def check_answer(form: Form, values: dict[str, Any]) -> dict[str, str]:
    """Field name → why its value is wrong; empty when the answer can be sent."""
    problems: dict[str, str] = {}
    for f in form.fields:
        problem = check_value(f, values.get(f.name))
        if problem is not None:
            problems[f.name] = problem
    return problems


def content_of(form: Form, values: dict[str, Any]) -> dict[str, Value]:
    """What ``accept`` sends: the fields the person filled in (empty optional ones left out)."""
    out: dict[str, Value] = {}
    for f in form.fields:
        value = values.get(f.name)
        if value is None or value == "" or value == []:
            continue
        if f.kind == "integer" and isinstance(value, float):
            value = int(value)
        out[f.name] = value
    return out
