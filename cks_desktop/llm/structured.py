"""``respond_json``: one JSON answer that conforms to a JSON Schema, from any provider.

The provider's profile decides the path. With native structured output
(``native_structured_output``) or tool calling, the request goes through the
provider's own ``stream(..., response_schema=)``, so each adapter uses its
native mechanism (OpenAI ``response_format`` json_schema, Gemini
``response_json_schema``, Ollama ``format``) or, without one, a single forced
tool (Anthropic), and always hands back the answer as text. A provider with
neither gets no ``response_schema`` (it could only ignore or reject it): the
schema is asked for in words, in the system prompt. Native modes do
not make validation redundant: non-strict schemas, compatible servers that
ignore the schema, and models that stop at the token limit all produce
answers that do not conform. So the text is parsed and validated here; on
failure the model sees its answer and the validation errors once, and a
second failure raises ``StructuredOutputError`` carrying those errors.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from cks_desktop.llm.assembler import collect
from cks_desktop.llm.events import RetryWait, Usage
from cks_desktop.llm.messages import Message, Text
from cks_desktop.llm.provider import GenerationParams, Provider

MAX_ERRORS_SHOWN = 8

# Properties asked of a model as a list of key/value strings, not a free-form object: strict
# structured-output modes (OpenAI ``strict``, Gemini) refuse objects with open keys.
KEY_VALUE_LIST: dict[str, Any] = {
    "type": "array",
    "items": {"type": "object", "properties": {"key": {"type": "string"}, "value": {"type": "string"}},
              "required": ["key", "value"], "additionalProperties": False},
}


def key_values(items: Any, *, skip: frozenset[str] = frozenset()) -> dict[str, Any]:
    """A ``KEY_VALUE_LIST`` answer as a dict: blank keys and the keys in ``skip`` left out."""
    out: dict[str, Any] = {}
    for item in items or []:
        if isinstance(item, dict):
            key = str(item.get("key", "")).strip()
            if key and key not in skip:
                out[key] = item.get("value", "")
    return out
_FENCE = re.compile(r"^\s*```(?:json)?\s*\n?(.*?)\n?\s*```\s*$", re.DOTALL)


class StructuredOutputError(Exception):
    """The model's answer did not conform to the schema, even after one repair turn."""

    def __init__(self, message: str, errors: list[str], raw: str, *, cut_off: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.errors = errors
        self.raw = raw
        # The model stopped at its answer limit (finish reason "length": Anthropic's max_tokens,
        # OpenAI's length): no repair turn was tried, since the corrected answer is as long. A caller
        # can ask for less at a time (document extraction splits the part).
        self.cut_off = cut_off


def _text_of(answer: str) -> str:
    match = _FENCE.match(answer)
    return match.group(1) if match else answer.strip()


def check(answer: str, schema: dict[str, Any]) -> tuple[Any, list[str]]:
    """(parsed value, errors); errors are short sentences with a JSON path each."""
    import jsonschema

    text = _text_of(answer)
    if not text:
        return None, ["the answer was empty"]
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        return None, [f"the answer is not valid JSON ({exc.msg} at character {exc.pos})"]
    validator_cls = jsonschema.validators.validator_for(schema)
    validator = validator_cls(schema)
    errors = []
    for error in sorted(validator.iter_errors(value), key=lambda e: list(e.absolute_path)):
        path = error.json_path if error.absolute_path else "$"
        errors.append(f"{path}: {error.message}")
    return value, errors


def _repair_prompt(errors: list[str], schema: dict[str, Any]) -> str:
    shown = errors[:MAX_ERRORS_SHOWN]
    more = f"\n(and {len(errors) - len(shown)} more)" if len(errors) > len(shown) else ""
    return ("Your answer does not conform to the required JSON Schema:\n"
            + "\n".join(f"- {e}" for e in shown) + more
            + "\n\nReply again with only the corrected JSON value, nothing else. The schema:\n"
            + json.dumps(schema, ensure_ascii=False))


def enforced(provider: Provider) -> bool:
    """Can the provider be made to answer in the schema (natively, or with one forced tool)?"""
    return provider.profile.native_structured_output or provider.profile.tool_calling


def _in_words(schema: dict[str, Any], system: str | None) -> str:
    ask = ("Reply with only one JSON value, nothing else, that conforms to this JSON Schema:\n"
           + json.dumps(schema, ensure_ascii=False))
    return f"{system}\n\n{ask}" if system else ask


async def _ask(provider: Provider, messages: list[Message], schema: dict[str, Any], system: str | None,
               usage: list[Usage] | None = None, max_output_tokens: int | None = None,
               on_wait: Callable[[RetryWait], None] | None = None) -> tuple[str, bool]:
    """(the answer's text, whether the model stopped at its answer limit)."""
    params = GenerationParams(max_output_tokens=max_output_tokens) if max_output_tokens else None
    if enforced(provider):
        stream = provider.stream(messages, [], system=system, response_schema=schema, params=params)
    else:
        stream = provider.stream(messages, [], system=_in_words(schema, system), params=params)
    assembled = await collect(stream, on_wait=on_wait)
    if usage is not None and assembled.usage is not None:
        usage.append(assembled.usage)
    return assembled.text, assembled.finish_reason == "length"


async def respond_json(provider: Provider, messages: list[Message], schema: dict[str, Any], *,
                       system: str | None = None, usage: list[Usage] | None = None,
                       max_output_tokens: int | None = None,
                       on_wait: Callable[[RetryWait], None] | None = None) -> Any:
    """The parsed, schema-valid answer; ``ProviderError`` and ``StructuredOutputError`` propagate.

    ``usage``: when given, each model turn's reported token usage is appended to it (one entry,
    or two after a repair turn), so a caller can count cost (document extraction does).
    ``max_output_tokens``: the answer budget to ask for (None: the provider's setting). An answer
    cut at the limit that does not conform raises at once with ``cut_off`` set (no repair turn).
    ``on_wait``: told each ``RetryWait`` of the provider's stream (a wait before a retry begins or ends)."""
    answer, cut = await _ask(provider, messages, schema, system, usage, max_output_tokens, on_wait)
    value, errors = check(answer, schema)
    if not errors:
        return value
    if cut:
        raise StructuredOutputError(
            f"{provider.profile.display_name} stopped at its answer limit before the answer was complete "
            f"({errors[0]}).", errors, answer, cut_off=True)
    repair = [*messages, Message("assistant", [Text(answer or "(empty answer)")]),
              Message.user(_repair_prompt(errors, schema))]
    answer, _cut = await _ask(provider, repair, schema, system, usage, max_output_tokens, on_wait)
    value, errors = check(answer, schema)
    if not errors:
        return value
    raise StructuredOutputError(
        f"{provider.profile.display_name} did not produce an answer in the required format "
        f"({errors[0]}{'; …' if len(errors) > 1 else ''}).", errors, answer)
