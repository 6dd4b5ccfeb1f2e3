"""The tool registry: the only place where tools run.

``invoke`` never raises for an expected failure; it returns an error
``ToolResult`` the model can read. Only cancellation propagates. The order of
checks is fixed (DESIGN.md): exists → exposed to this caller → scope granted →
arguments valid → session pinned → approval → handler.
"""

from __future__ import annotations

import asyncio
import copy
import functools
import json
import logging
import time
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from cks_desktop.callbacks import Callbacks
from cks_desktop.tools.approval import (
    ApprovalRequest,
    RULE_POLICIES,
    RULE_TITLES,
    CallPolicy,
    Decision,
    effect_reason,
    fingerprint,
    reason_for,
)
from cks_desktop.tools.context import Run, ToolContext
from cks_desktop.tools.images import ImageBlob
from cks_desktop.tools.quick_schema import Quick, compile_quick
from cks_desktop.tools.scopes import SESSION_SETTING, scope_refusal
from cks_desktop.tools.types import (
    Outcome,
    Policy,
    strictest,
    ToolCall,
    ToolError,
    ToolOutput,
    ToolResult,
    ToolSpec,
)
from cks_desktop.tools.wire_names import WireNames, to_wire

if TYPE_CHECKING:
    import jsonschema
    import jsonschema.protocols

    from cks_desktop.graph.store import GraphStore

log = logging.getLogger(__name__)

DEFAULT_RESULT_CAP = 100_000  # characters of text a model reads from one result
SESSION_ARG = "session_id"
BIG_ARGUMENTS = 2000  # JSON nodes: past this, argument work (validation, copies) runs on a worker thread

RegistryListener = Callable[[], None]


def is_big(value: Any, budget: int = BIG_ARGUMENTS) -> bool:
    """True if ``value`` holds more than ``budget`` JSON nodes (a string counts one per 64
    characters). Counting stops at the budget, so the check itself is cheap on the loop."""
    stack = [value]
    left = budget
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            left -= 1 + len(item) // 64
        elif isinstance(item, dict):
            left -= 1 + len(item)
            if left >= 0:
                stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            left -= 1 + len(item)
            if left >= 0:
                stack.extend(item)
        else:
            left -= 1
        if left < 0:
            return True
    return False


_ATOMS = frozenset({str, int, float, bool, type(None)})


def json_copy(value: Any) -> Any:
    """A deep copy of a JSON value (what a model's arguments are), in one call per object or array
    rather than ``copy.deepcopy``'s several per value; anything else inside is ``deepcopy``'d, and
    so is a value that refers to itself (not JSON, but an in-process caller could pass one)."""
    try:
        return _json_copy(value)
    except RecursionError:
        return copy.deepcopy(value)


def _json_copy(value: Any) -> Any:
    kind = type(value)
    if kind is dict:
        return {key: item if type(item) in _ATOMS else _json_copy(item) for key, item in value.items()}
    if kind is list:
        return [item if type(item) in _ATOMS else _json_copy(item) for item in value]
    if kind in _ATOMS:
        return value
    return copy.deepcopy(value)


def truncate(text: str, cap: int) -> str:
    if len(text) <= cap:
        return text
    notice = f"\n\n[truncated: the result was {len(text):,} characters; only the first {cap:,} are shown]"
    return text[:cap] + notice


def to_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, indent=2, default=str)


def _pin_sessions(schema: Mapping[str, Any], args: Any, session_id: str) -> Any:
    """Overwrite every ``session_id`` the schema declares with the run's session.

    Walks nested objects and arrays so a session id hidden in a sub-object
    (e.g. an operation list) is pinned too. A required top-level session_id that
    the caller left out is filled in.
    """
    if not isinstance(schema, Mapping):
        return args
    if isinstance(args, dict):
        props = schema.get("properties") or {}
        for key, sub in props.items():
            if key == SESSION_ARG:
                args[key] = session_id
            elif key in args:
                args[key] = _pin_sessions(sub, args[key], session_id)
        extra = schema.get("additionalProperties")
        if isinstance(extra, Mapping):
            for key in args:
                if key not in props:
                    args[key] = _pin_sessions(extra, args[key], session_id)
        for branch in ("anyOf", "oneOf", "allOf"):
            for sub in schema.get(branch) or []:
                args = _pin_sessions(sub, args, session_id)
    elif isinstance(args, list) and isinstance(schema.get("items"), Mapping):
        return [_pin_sessions(schema["items"], item, session_id) for item in args]
    return args


def _relax_session(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The schema used to validate a caller's arguments for a pinned tool.

    A top-level ``session_id`` is neither required nor type-checked: whatever
    the caller sent (a stale id, ``null``, nothing) is overwritten by pinning,
    so refusing the call over it would only confuse a model.
    """
    relaxed = copy.deepcopy(dict(schema))
    req = relaxed.get("required")
    if isinstance(req, list) and SESSION_ARG in req:
        relaxed["required"] = [r for r in req if r != SESSION_ARG]
    props = relaxed.get("properties")
    if isinstance(props, dict) and SESSION_ARG in props:
        props[SESSION_ARG] = {}
    return relaxed


def _without_regex(node: Any) -> Any:
    """A copy of a JSON Schema without ``pattern`` and ``patternProperties``.

    Where ``patternProperties`` went, ``additionalProperties: false`` goes too, so a name
    the patterns would have allowed is not refused instead.
    """
    if isinstance(node, list):
        return [_without_regex(v) for v in node]
    if not isinstance(node, Mapping):
        return node
    out = {k: _without_regex(v) for k, v in node.items()
           if not (k == "pattern" and isinstance(v, str)) and not (k == "patternProperties" and isinstance(v, Mapping))}
    if isinstance(node.get("patternProperties"), Mapping) and out.get("additionalProperties") is False:
        del out["additionalProperties"]
    return out


def model_schema(spec: ToolSpec) -> dict[str, Any]:
    """The input schema a model is shown: pinned ``session_id`` is not its business."""
    schema = copy.deepcopy(dict(spec.input_schema))
    if spec.pin_session:
        props = schema.get("properties")
        if isinstance(props, dict):
            props.pop(SESSION_ARG, None)
        req = schema.get("required")
        if isinstance(req, list):
            schema["required"] = [r for r in req if r != SESSION_ARG]
    schema.setdefault("type", "object")
    schema.setdefault("properties", {})
    return schema


def _format_validation_error(err: "jsonschema.ValidationError") -> str:
    where = "/".join(str(p) for p in err.absolute_path) or "(top level)"
    return f"at {where}: {err.message}"


Checker = tuple["jsonschema.protocols.Validator", Quick | None]


def _compile(name: str, schema: dict[str, Any]) -> Checker:
    """Check ``schema`` and build its validator, with the quick check of a plain schema
    (``quick_schema.py``: it skips the validator for arguments that are certainly valid);
    ValueError (one sentence) if it is not a schema."""
    import jsonschema

    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        cls.check_schema(schema)
    except jsonschema.SchemaError as exc:
        raise ValueError(f"tool {name!r} has an invalid input schema: {exc.message}") from None
    return cls(schema), compile_quick(schema, cls.__name__)


@functools.cache
def builtin_policies() -> dict[str, Policy]:
    """The built-ins' default policies (each spec's ``default_policy``), for a registry that does not
    hold them (a test's, a tool-only one): an effect is then still asked about as the built-in would be."""
    from cks_desktop.tools.builtin import builtin_specs  # the built-ins build on this module

    return {spec.name: spec.default_policy for spec in builtin_specs()}


class ToolRegistry:
    def __init__(self, store: "GraphStore", *, result_cap: int = DEFAULT_RESULT_CAP) -> None:
        self.store = store
        self.result_cap = result_cap
        self._tools: dict[str, ToolSpec] = {}
        # A tool's schema, and its validator once compiled: the built-in tools' own schemas (checked
        # by a test) are compiled on their first call, not at start-up, where checking all of them
        # took about 0.2 s; any other schema is checked and compiled when it registers.
        self._schemas: dict[str, dict[str, Any]] = {}
        self._validators: dict[str, Checker] = {}
        self._by_wire: dict[str, str] | None = None  # wire name -> internal name, for this tool list
        self._policy_overrides: dict[str, Policy] = {}
        self._listeners: Callbacks[[]] = Callbacks("tool registry")

    # -- contents ---------------------------------------------------------
    def register(self, spec: ToolSpec, *, replace: bool = False, checked_schema: bool = False) -> None:
        """Add a tool. Its input schema is checked now, unless ``checked_schema`` (the app's own
        built-in tools, whose schemas a test checks): then it is compiled on the tool's first call."""
        if not replace and spec.name in self._tools:
            raise ValueError(f"tool {spec.name!r} is already registered")
        schema = _relax_session(spec.input_schema) if spec.pin_session else dict(spec.input_schema)
        if spec.source != "builtin":
            # An MCP server's schema is the server's, and the server checks its own input. Our early
            # check leaves out its regular expressions: Python's engine can backtrack on one for
            # minutes, holding the event loop (the model still sees the patterns as hints).
            try:
                schema = _without_regex(schema)
            except RecursionError:
                raise ValueError(f"tool {spec.name!r} has an input schema nested too deeply") from None
        if checked_schema and spec.source == "builtin":
            self._validators.pop(spec.name, None)
        else:
            self._validators[spec.name] = _compile(spec.name, schema)
        self._schemas[spec.name] = schema
        self._tools[spec.name] = spec
        self._by_wire = None
        self._notify()

    def _validator(self, name: str) -> Checker:
        """The compiled validator (and quick check) of a registered tool (compiled once, on first use;
        dropped when the tool is replaced or removed)."""
        checker = self._validators.get(name)
        if checker is None:
            checker = self._validators[name] = _compile(name, self._schemas[name])
        return checker

    def _forget(self, name: str) -> None:
        self._by_wire = None
        self._tools.pop(name, None)
        self._schemas.pop(name, None)
        self._validators.pop(name, None)

    def unregister(self, name: str) -> None:
        if name in self._tools:
            self._forget(name)
            self._notify()

    def unregister_source(self, source: str) -> None:
        names = [n for n, s in self._tools.items() if s.source == source]
        for n in names:
            self._forget(n)
        if names:
            self._notify()

    def replace_source(self, source: str, specs: Iterable[ToolSpec]) -> None:
        """Swap every tool of one source (an MCP server's refreshed list) in one step."""
        for n in [n for n, s in self._tools.items() if s.source == source]:
            self._forget(n)
        for spec in specs:
            try:
                self.register(spec, replace=True)
            except ValueError as exc:
                log.warning("skipping tool %s: %s", spec.name, exc)
        self._notify()

    def get(self, name: str) -> ToolSpec | None:
        return self._tools.get(name)

    def resolve(self, name: str) -> ToolSpec | None:
        """Find a tool by its internal name or its wire name (exact match only)."""
        spec = self._tools.get(name)
        if spec is not None:
            return spec
        if self._by_wire is None:  # built once per tool list, not a scan of every tool per call
            self._by_wire = {}
            for internal in self._tools:
                self._by_wire.setdefault(to_wire(internal), internal)
        found = self._by_wire.get(name)
        return self._tools.get(found) if found is not None else None

    def specs(self) -> list[ToolSpec]:
        return sorted(self._tools.values(), key=lambda s: s.name)

    def offered(self, run: Run) -> list[ToolSpec]:
        """The tools a model in this run may see: exposed and within the granted scopes."""
        return [s for s in self.specs() if s.llm_exposed and s.scopes <= run.grants_for(s.source)]

    def wire_names(self, specs: Iterable[ToolSpec]) -> WireNames:
        return WireNames([s.name for s in specs])

    def subscribe(self, listener: RegistryListener) -> Callable[[], None]:
        return self._listeners.subscribe(listener)

    def _notify(self) -> None:
        self._listeners.emit()

    # -- policies ---------------------------------------------------------
    def set_policy_overrides(self, overrides: Mapping[str, Policy | str]) -> None:
        self._policy_overrides = {k: Policy(v) for k, v in overrides.items()}

    def policy_overrides(self) -> dict[str, Policy]:
        return dict(self._policy_overrides)

    def effective_policy(self, spec: ToolSpec) -> Policy:
        return self._policy_overrides.get(spec.name, spec.default_policy)

    def policy_of(self, name: str) -> tuple[Policy, str]:
        """The effective policy and title of the tool named ``name``; a built-in this registry
        lacks keeps its default, any other unknown name asks ``always`` (an effect nobody
        declared a policy for is never run silently)."""
        spec = self._tools.get(name)
        if spec is None:
            default = builtin_policies().get(name, RULE_POLICIES.get(name, Policy.ALWAYS))
            return self._policy_overrides.get(name, default), RULE_TITLES.get(name, name)
        return self.effective_policy(spec), spec.display_name

    async def call_policy(self, spec: ToolSpec, args: dict[str, Any], ctx: ToolContext) -> CallPolicy:
        """The strictest policy among the tool's own and those of the tools whose effects this
        call has (approval follows the effect, not the tool's name)."""
        own = self.effective_policy(spec)
        if spec.effects is None:
            return CallPolicy(own, spec.name)
        try:
            effects = await spec.effects(args, ctx)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # cannot tell what it does: ask before every call
            log.exception("effects of %s failed", spec.name)
            return CallPolicy(Policy.ALWAYS, f"{spec.name}+?", {},
                              f"{spec.display_name} asks because the app could not tell what this call "
                              f"changes ({type(exc).__name__}).")
        asking: dict[str, tuple[int, str, Policy]] = {}
        for name, count in effects.items():
            if count <= 0 or name == spec.name:
                continue
            policy, title = self.policy_of(name)
            if policy is not Policy.AUTO:
                asking[name] = (count, title, policy)
        policy = strictest(own, *(p for _, _, p in asking.values()))
        if not asking:
            return CallPolicy(own, spec.name)
        key = f"{spec.name}+{'+'.join(sorted(asking))}"
        return CallPolicy(policy, key, {n: c for n, (c, _, _) in asking.items()},
                          effect_reason(spec, own, asking))

    # -- invocation -------------------------------------------------------
    async def invoke(self, call: ToolCall, run: Run) -> ToolResult:
        started = time.perf_counter()
        spec = self.resolve(call.name)

        def done(content: Any, outcome: Outcome, *, structured: Any = None, change_id: str | None = None,
                 images: tuple[ImageBlob, ...] = ()) -> ToolResult:
            return ToolResult(
                call_id=call.id,
                name=spec.name if spec else call.name,
                content=truncate(to_text(content), self.result_cap),
                outcome=outcome,
                structured=structured,
                duration_ms=(time.perf_counter() - started) * 1000,
                change_id=change_id,
                images=images,
            )

        if spec is None:
            return done(f"Unknown tool {call.name!r}. Call only the tools you were given.", Outcome.ERROR)
        if run.caller.is_model and not spec.llm_exposed:
            # Same words as an unknown tool: a model learns nothing about hidden tools.
            return done(f"Unknown tool {call.name!r}. Call only the tools you were given.", Outcome.ERROR)
        grants = run.grants_for(spec.source)
        if not spec.scopes <= grants:
            missing = spec.scopes - grants
            text = scope_refusal(spec, missing, allowed_folders=run.allowed_folders,
                                 where=run.scope_setting or SESSION_SETTING)
            return done(text, Outcome.ERROR, structured={"missing_scopes": sorted(s.value for s in missing)})
        if not isinstance(call.arguments, dict):
            return done(f"Arguments for {spec.name} must be a JSON object.", Outcome.ERROR)
        def checked() -> tuple[dict[str, Any], list[str]]:
            args = json_copy(call.arguments)
            validator, quick = self._validator(spec.name)
            if quick is None or not quick(args):  # not certainly valid: the validator decides, and words why
                errors = sorted(validator.iter_errors(args), key=lambda e: [str(p) for p in e.absolute_path])
                if errors:
                    return args, [_format_validation_error(e) for e in errors[:10]]
            if spec.pin_session:
                args = _pin_sessions(spec.input_schema, args, run.session_id)
            return args, []

        # Validating a 5,000-operation batch takes most of a second: off the loop, or the window freezes.
        args, lines = await asyncio.to_thread(checked) if is_big(call.arguments) else checked()
        if lines:
            return done(
                f"Invalid arguments for {spec.name}:\n- " + "\n- ".join(lines),
                Outcome.ERROR,
                structured={"validation_errors": lines},
            )
        ctx = ToolContext(session_id=run.session_id, store=self.store, run=run, registry=self, call_id=call.id)
        if spec.effects is not None or self.effective_policy(spec) is not Policy.AUTO:  # else nothing to ask
            refusal = await self._approve(spec, ToolCall(call.id, spec.name, args), ctx)
            if refusal is not None:
                return done(refusal, Outcome.DENIED)
        # No deadline of ours for a tool without a timeout (an MCP tool: its connection keeps its own clock).
        deadline = asyncio.timeout(spec.timeout) if spec.timeout is not None else None
        try:
            if deadline is None:
                value = await spec.handler(args, ctx)
            else:
                async with deadline:
                    value = await spec.handler(args, ctx)
        except asyncio.CancelledError:
            raise
        except ToolError as exc:
            return done(exc.message, Outcome.ERROR, structured=exc.structured, change_id=ctx.change_id)
        except TimeoutError as exc:
            # Only our own deadline means "too slow"; a TimeoutError the handler
            # raised itself (a socket, a lock) is an ordinary failure.
            if deadline is not None and deadline.expired() and spec.timeout is not None:
                return done(f"{spec.display_name} timed out after {spec.timeout:g} s.", Outcome.TIMEOUT,
                            change_id=ctx.change_id)
            log.exception("tool %s failed", spec.name)
            return done(f"{spec.display_name} failed: {type(exc).__name__}: {exc}", Outcome.ERROR,
                        change_id=ctx.change_id)
        except Exception as exc:
            log.exception("tool %s failed", spec.name)
            return done(f"{spec.display_name} failed: {type(exc).__name__}: {exc}", Outcome.ERROR,
                        change_id=ctx.change_id)
        if isinstance(value, ToolOutput):
            return done(value.content, Outcome.ERROR if value.is_error else Outcome.OK,
                        structured=value.structured, change_id=ctx.change_id, images=value.images)
        return done(value, Outcome.OK, structured=value if not isinstance(value, str) else None,
                    change_id=ctx.change_id)

    async def _approve(self, spec: ToolSpec, call: ToolCall, ctx: ToolContext) -> str | None:
        """Ask when the call's policy says so; return a refusal text or None to go ahead."""
        run = ctx.run
        decided = await self.call_policy(spec, call.arguments, ctx)
        policy, key = decided.policy, decided.key
        if policy is Policy.AUTO or key in run.allowed_for_run:
            return None
        fp = fingerprint(spec.name, call.arguments)
        if policy is Policy.ONCE and key in run.once_answers:
            allowed = run.once_answers[key]
        elif policy is Policy.ALWAYS and fp in run.fingerprint_answers:
            allowed = run.fingerprint_answers[fp]
        else:
            preview = None
            if spec.preview is not None:
                try:
                    preview = await spec.preview(call.arguments, ctx)
                except asyncio.CancelledError:
                    raise
                except Exception as exc:  # a preview is advice; its failure is shown, not fatal
                    preview = f"(no preview: {exc})"
            request = ApprovalRequest(
                call=call,
                tool=spec,
                scopes=spec.scopes,
                policy=policy,
                reason=decided.reason or reason_for(policy, spec),
                preview=preview,
                session_id=run.session_id,
                operations=dict(decided.operations),
            )
            try:
                decision = await run.approver.request_approval(request)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # a broken approver must not run the call, nor crash the loop
                log.exception("approver failed for %s", spec.name)
                return f"Could not ask the person to approve {spec.display_name} ({exc}); it did not run."
            allowed = decision is not Decision.DENY
            if decision is Decision.ALLOW_FOR_RUN:
                run.allowed_for_run.add(key)
            if policy is Policy.ONCE:
                run.once_answers[key] = allowed
            run.fingerprint_answers[fp] = allowed
        if allowed:
            return None
        hint = run.approver.denial_hint
        text = f"The person declined this call to {spec.display_name}; it did not run."
        return f"{text} {hint}".strip()
