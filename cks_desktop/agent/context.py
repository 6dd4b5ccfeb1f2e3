"""Keep every request inside the model's context window.

The transcript keeps every message whole; this module decides what one request *sends*.
Before each model turn the loop calls ``fit``; it works on the view ``request_messages``
builds (unanswered prompts left out, every part bounded) and, when the estimate is over
the budget (the window minus room for the answer and a safety margin), compacts it in
this order, stopping as soon as it fits:

1. **Stubs.** Old tool results (every tool message but the newest) are replaced, oldest
   first, by a stub that says which tool it was, how long the result was, that it was
   left out to save room, and that the tool can be called again.
2. **Summary.** When stubs are not enough and there are earlier exchanges, ``fit`` says
   ``summary_needed``; the loop asks the model for a summary of everything before the
   current exchange (``summary_request``) and saves it in the transcript as a visible
   notice row (``Notice.SUMMARY``: "Earlier messages were summarised (N messages)", the
   summary below, expandable in the chat). From then on a request sends the summary in
   place of the messages it covers (``_view``): the transcript still holds them all.
3. **Cut.** What still does not fit is cut, largest part first, with the visible notice of
   ``request.shorten`` (the start and the end kept). Only when even that cannot fit (a
   summary failed, hundreds of medium messages) are the oldest earlier exchanges left
   out, and the request then begins with a note saying how many messages were left out:
   the person's words are never dropped without the model being told.

The estimate counts characters and divides by a per-model ratio (``Estimator``) that
starts conservative (3 characters a token) and is corrected from the ``usage`` each
answer reports (input tokens against the characters sent). A ratio outside 1–10 is not a
real tokenizer (a fake, a server reporting nothing) and is ignored. Sizes are cached per
message object, so a turn at 1,000 messages costs well under a millisecond when nothing
needs compacting.

Where the provider has a token counting endpoint (``TokenCounter``: Anthropic's
``count_tokens``, Gemini's ``countTokens``) and the estimate is near the budget (above
``COUNT_NEAR`` of it, a band widened when the last answer's usage disagreed with the
estimate), ``check_count`` asks it once for the request about to go out: the exact number
decides whether to compact and sets the estimator's ratio. A short chat never asks; a count
that fails or takes longer than ``COUNT_TIMEOUT_S`` is logged and the estimate stands.

**Images** go with the exchange that brought them (the person's message that attached them and
the model turns answering it, where a tool's screenshot is looked at) and not again: before
anything else, ``budget_images`` replaces every image of an earlier exchange by a one-line
placeholder (``[image not sent again: image/png, 1024×768, 1.0 MB, attached by the person in turn
3 …]``), and within the current exchange keeps at most ``IMAGE_COUNT_BUDGET`` images and
``IMAGE_BYTES_BUDGET`` bytes of image data per request, the newest first (older ones get the same
placeholder). So a plain turn after forty 1 MB screenshots sends none of them, and no request
carries more than 16 images / 8 MB of image data (about 11 MB as base64), well inside the vendors'
request limits (Anthropic 32 MB and 100 images, OpenAI 50 MB, Gemini 20 MB inline). The transcript keeps every image;
only the request leaves them out.
"""

from __future__ import annotations

import asyncio
import heapq
import json
import logging
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TYPE_CHECKING

from cks_desktop.agent.request import MIN_PART, request_messages, shorten
from cks_desktop.llm.providers.base import TokenCounter
from cks_desktop.llm.messages import ImagePart, Message, Part, Reasoning, Text, ToolCallPart, ToolDef, ToolResultPart
from cks_desktop.llm.vision import image_chars
from cks_desktop.tools.wire_names import to_wire

if TYPE_CHECKING:
    from cks_desktop.llm.provider import GenerationParams, Provider

log = logging.getLogger(__name__)

START_CHARS_PER_TOKEN = 3.0  # conservative before the first usage report (English prose is ~4)
MESSAGE_OVERHEAD = 6  # tokens a message costs beyond its text (role, separators)
SAFETY = 0.05  # of the window, beside the answer's room, for the estimate's error
MIN_SAFETY = 256
STUB_MIN = 400  # results shorter than this are kept: a stub would save nothing
SUMMARY_HEAD = "Earlier messages were summarised"
SUMMARY_MAX_TOKENS = 1_024
SUMMARY_INSTRUCTION = (
    "Summarise the conversation above for your own later use, in at most 300 words. Keep every "
    "request, decision and preference the person stated (in their words where short), facts and "
    "names found, what the tools did (which objects were created or changed), and what is still "
    "open. Do not call tools; answer with the summary only.")
SUMMARY_SYSTEM = "You write compact, faithful summaries of a conversation between a person and an assistant."


def stub_text(name: str, size: int) -> str:
    wire = to_wire(name) if name else "the tool"
    return (f"[The result of {wire} ({size:,} characters) was left out of this request to save room in "
            f"the context window. It is kept in the chat; call {wire} again if you need it.]")


def summary_message(body: str, covered: int) -> Message:
    """The transcript row of a summary: the visible head, then the summary itself."""
    noun = "message" if covered == 1 else "messages"
    return Message("assistant", [Text(f"{SUMMARY_HEAD} ({covered:,} {noun}).\n\n{body.strip()}")])


def is_summary(message: Message) -> bool:
    return (message.role == "assistant" and len(message.parts) == 1 and isinstance(message.parts[0], Text)
            and message.parts[0].text.startswith(SUMMARY_HEAD))


def summary_body(message: Message) -> str:
    text = message.text
    return text.split("\n\n", 1)[1] if "\n\n" in text else text


# -- the estimate ------------------------------------------------------------------------------

@dataclass
class Estimator:
    """Characters per token for one model, corrected from what its answers report."""

    chars_per_token: float = START_CHARS_PER_TOKEN
    observed: int = 0
    disagreement: float = 1.0  # how far the last plausible usage was from the estimate (>= 1)

    def tokens(self, chars: int, messages: int = 0) -> int:
        return int(chars / self.chars_per_token) + messages * MESSAGE_OVERHEAD

    def observe(self, chars: int, messages: int, input_tokens: int) -> None:
        """One answer's ``usage``: ``input_tokens`` for a request of ``chars`` characters."""
        text_tokens = input_tokens - messages * MESSAGE_OVERHEAD
        if text_tokens <= 0 or chars <= 0:
            return
        ratio = chars / text_tokens
        if not 1.0 <= ratio <= 10.0:  # not a tokenizer: a fake's fixed count, a server reporting 0
            return
        guessed = max(1, self.tokens(chars, messages))
        self.disagreement = max(input_tokens / guessed, guessed / input_tokens)
        # Lean towards the safer (smaller) ratio: an underestimate costs a failed request.
        weight = 1.0 if self.observed == 0 else 0.5
        blended = self.chars_per_token * (1 - weight) + ratio * weight
        self.chars_per_token = min(blended, ratio * 1.0) if ratio < self.chars_per_token else blended
        self.observed += 1

    def calibrate(self, chars: int, messages: int, exact: int) -> None:
        """An exact count of this very request (the provider's counting endpoint): the ratio is
        set from it, not blended (usage mixes in cache and thinking; a count does not)."""
        text_tokens = exact - messages * MESSAGE_OVERHEAD
        if text_tokens <= 0 or chars <= 0:
            return
        self.chars_per_token = min(10.0, max(0.5, chars / text_tokens))
        self.disagreement = 1.0
        self.observed += 1

    def tighten(self) -> None:
        """The provider said the prompt was too long: trust the estimate less from now on."""
        self.chars_per_token = max(1.0, self.chars_per_token * 0.75)


_ESTIMATORS: dict[tuple[str, str, str], Estimator] = {}


def estimator_for(provider: "Provider") -> Estimator:
    """One estimator per provider family, server and model, for the life of the process."""
    config = provider.config
    key = (config.name, config.base_url, config.model)
    found = _ESTIMATORS.get(key)
    if found is None:
        found = _ESTIMATORS[key] = Estimator()
    return found


_SIZES: dict[int, tuple[Any, int]] = {}  # id(message) -> (weak reference, characters)
_SIZES_LIMIT = 100_000


def _part_chars(part: Part) -> int:
    if isinstance(part, Text):
        return len(part.text)
    if isinstance(part, ToolResultPart):
        return len(part.content) + len(part.name) + 16 + sum(image_chars(i) for i in part.images)
    if isinstance(part, ImagePart):  # an image's tokens, estimated from its size
        return image_chars(part)
    if isinstance(part, Reasoning):  # sent back with its signature where the provider wants it
        return len(part.text) + len(part.signature or "") + len(part.redacted or "")
    return len(json.dumps(part.arguments, ensure_ascii=False, default=str)) + len(part.name) + 16


def message_chars(message: Message) -> int:
    """Characters ``message`` puts into a request (cached per message object: messages in a chat
    are never changed in place, and a changed copy is a new object)."""
    key = id(message)
    hit = _SIZES.get(key)
    if hit is not None and hit[0]() is message:
        return hit[1]
    size = sum(_part_chars(p) for p in message.parts)
    if len(_SIZES) >= _SIZES_LIMIT:
        _SIZES.clear()
    _SIZES[key] = (weakref.ref(message), size)
    return size


_FIXED: dict[int, tuple[Any, Any, int]] = {}  # id(tools list) -> (tools list, system, chars)


def fixed_chars(system: str | None, tools: Sequence[ToolDef]) -> int:
    """The system prompt and the tool definitions: the same for every turn of a chat."""
    key = id(tools)
    hit = _FIXED.get(key)
    if hit is not None and hit[0] is tools and hit[1] == system:
        return hit[2]
    size = len(system or "") + sum(len(t.name) + len(t.description)
                                   + len(json.dumps(t.parameters, ensure_ascii=False, default=str)) + 16
                                   for t in tools)
    if len(_FIXED) > 64:
        _FIXED.clear()
    _FIXED[key] = (tools, system, size)
    return size


# -- images ------------------------------------------------------------------------------------

IMAGE_COUNT_BUDGET = 16  # images one request carries at most (the newest of the current exchange)
IMAGE_BYTES_BUDGET = 8 * 1024 * 1024  # bytes of image data one request carries at most (before base64)

_PLACED: dict[int, tuple[Any, int, Message, int]] = {}  # id(message) -> (weak reference, turn, placeholder copy)


def _size_text(size: int) -> str:
    return f"{size / 1024 / 1024:.1f} MB" if size >= 100 * 1024 else f"{max(1, size // 1024)} KB"


def image_placeholder(part: ImagePart, turn: int, source: str) -> str:
    """What the model reads in place of an image a request no longer sends."""
    return (f"[image not sent again: {part.media_type}, {part.width}×{part.height}, {_size_text(part.size)}, "
            f"{source} in turn {turn}. It is kept in the chat; ask the person to attach it again if you "
            "need to see it.]")


def _placeholdered(message: Message, turn: int, keep: set[int] | None) -> tuple[Message, int]:
    """``message`` with its images outside ``keep`` (ids of the image objects; None: none kept)
    replaced by placeholders; (message, images replaced). The same object when nothing changes."""
    parts: list[Part] = []
    replaced = 0
    for part in message.parts:
        if isinstance(part, ImagePart) and (keep is None or (part.data and id(part) not in keep)):
            parts.append(Text(image_placeholder(part, turn, "attached by the person")))
            replaced += 1
        elif isinstance(part, ToolResultPart) and part.images:
            gone = [i for i in part.images if keep is None or (i.data and id(i) not in keep)]
            kept = tuple(i for i in part.images if all(i is not g for g in gone))
            if not gone:
                parts.append(part)
                continue
            wire = to_wire(part.name) if part.name else "a tool"
            notes = "\n".join(image_placeholder(i, turn, f"returned by {wire}") for i in gone)
            parts.append(ToolResultPart(part.call_id, part.name, f"{part.content}\n{notes}".lstrip("\n"),
                                        part.is_error, images=kept))
            replaced += len(gone)
        else:
            parts.append(part)
    return (Message(message.role, parts), replaced) if replaced else (message, 0)


def budget_images(messages: Sequence[Message], *, max_images: int = IMAGE_COUNT_BUDGET,
                  max_bytes: int = IMAGE_BYTES_BUDGET) -> tuple[list[Message], int]:
    """``messages`` as a request sends their images (see the module docstring): earlier exchanges'
    images as placeholders, the current exchange's newest first within ``max_images`` and
    ``max_bytes``; (messages, images left out). Messages without images pass as the same objects,
    and an earlier message's placeholder copy is cached, so a long chat pays one scan."""
    current = _last_user(messages)
    start = current if current is not None else len(messages)
    keep: set[int] = set()
    count = used = 0
    for message in reversed(messages[start:]):  # the newest first
        for part in reversed(message.parts):
            images = [part] if isinstance(part, ImagePart) else (
                list(reversed(part.images)) if isinstance(part, ToolResultPart) else [])
            for image in images:
                if not image.data:
                    continue
                if count < max_images and used + len(image.data) <= max_bytes:
                    keep.add(id(image))
                    count += 1
                    used += len(image.data)
    out: list[Message] = []
    left_out = 0
    turn = 0
    for i, message in enumerate(messages):
        if message.role == "user":
            turn += 1
        if not (message.role in ("user", "tool") and _carries_images(message, i >= start)):
            out.append(message)
            continue
        if i < start:  # an earlier exchange: never again (cached per message object)
            hit = _PLACED.get(id(message))
            if hit is not None and hit[0]() is message and hit[1] == turn:
                out.append(hit[2])
                left_out += hit[3]
                continue
            placed, n = _placeholdered(message, turn, None)
            if len(_PLACED) >= _SIZES_LIMIT:
                _PLACED.clear()
            _PLACED[id(message)] = (weakref.ref(message), turn, placed, n)
        else:
            placed, n = _placeholdered(message, turn, keep)
        out.append(placed)
        left_out += n
    return out, left_out


def _carries_images(message: Message, loaded_only: bool) -> bool:
    """Whether ``message`` has an image (``loaded_only``: one with its bytes filled in)."""
    for part in message.parts:
        if isinstance(part, ImagePart) and (part.data or not loaded_only):
            return True
        if isinstance(part, ToolResultPart) and any(i.data or not loaded_only for i in part.images):
            return True
    return False


# -- fitting -----------------------------------------------------------------------------------

@dataclass
class Fitted:
    """What one request sends and what was done to make it fit (the composer's meter reads it)."""

    messages: list[Message]
    chars: int
    tokens: int  # the estimate for the whole request
    budget: int  # tokens the request may use (window - answer room - safety)
    window: int
    stubbed: int = 0
    cut: int = 0
    dropped: int = 0  # earlier messages left out entirely (only when nothing else fits)
    summarised: int = 0  # messages the summary in this request stands for
    summary_needed: bool = False
    images_left_out: int = 0  # images sent as placeholders (an earlier exchange's, or over the image budget)
    older: list[Message] = field(default_factory=list)  # what a summary would cover
    counted: int | None = None  # the provider's exact count of this request, when it was asked

    @property
    def fits(self) -> bool:
        return self.tokens <= self.budget


def budget_for(window: int, answer_tokens: int) -> int:
    """The tokens a request may use: the window minus the answer's room and a safety margin."""
    answer = min(max(answer_tokens, 256), window // 4)
    return max(256, window - answer - max(MIN_SAFETY, int(window * SAFETY)))


def _last_user(messages: Sequence[Message], before: int | None = None) -> int | None:
    end = len(messages) if before is None else before
    for i in range(end - 1, -1, -1):
        if messages[i].role == "user":
            return i
    return None


def _view(messages: Sequence[Message]) -> tuple[list[Message], int]:
    """The conversation with the newest summary in place of what it covers; (view, covered)."""
    s = next((i for i in range(len(messages) - 1, -1, -1) if is_summary(messages[i])), None)
    if s is None:
        return list(messages), 0
    start = _last_user(messages, s)
    if start is None:
        return [m for m in messages if not is_summary(m)], 0
    first = messages[start]
    lead = Text("[Summary of the earlier conversation, written to save room in the context window; the "
                "full messages are kept in the chat]\n" + summary_body(messages[s]) +
                "\n[End of summary. The person's message follows.]\n\n")
    view = [Message("user", [lead, *first.parts])]
    view += [m for m in messages[start + 1:] if not is_summary(m)]
    return view, start


def fit(messages: Sequence[Message], *, system: str | None, tools: Sequence[ToolDef], window: int,
        answer_tokens: int, estimator: Estimator, allow_summary: bool = True,
        budget: int | None = None) -> Fitted:
    """The request for ``messages`` within ``window`` (see the module docstring for the order)."""
    messages, images_left_out = budget_images(messages)
    view, covered = _view(messages)
    view = request_messages(view)
    fixed = fixed_chars(system, tools)
    sizes = [message_chars(m) for m in view]
    total = fixed + sum(sizes)
    limit = budget if budget is not None else budget_for(window, answer_tokens)
    est = estimator.tokens
    result = Fitted(view, total, est(total, len(view)), limit, window, summarised=covered,
                    images_left_out=images_left_out)
    if result.fits:
        return result

    whole = view
    view = list(view)
    last_tool = next((i for i in range(len(view) - 1, -1, -1) if view[i].role == "tool"), None)
    for i, message in enumerate(view):  # 1. stubs, oldest first
        if est(total, len(view)) <= limit:
            break
        if message.role != "tool" or i == last_tool:
            continue
        stubbed, count = _stubbed(message)
        if count:
            result.stubbed += count
            view[i] = stubbed
            new = message_chars(view[i])
            total += new - sizes[i]
            sizes[i] = new
    if est(total, len(view)) <= limit:
        return _done(result, view, total, est)

    current = _last_user(view)
    if allow_summary and current is not None and current > 0:  # 2. a summary of what came before
        result.summary_needed = True
        result.older = list(whole[:current])  # begins with the previous summary, if there is one
        result.summarised = _original_start(messages)
    # 3. cut the largest parts (the caller sends this when no summary is possible or it failed)
    view, total = _cut(view, sizes, total, fixed, limit, estimator, result)
    return _done(result, view, total, est)


_STUBS: dict[int, tuple[Any, Message, int]] = {}  # id(message) -> (weak reference, stubbed copy, stubs)


def _stubbed(message: Message) -> tuple[Message, int]:
    """The tool message with its long results as stubs, and how many (kept per message object, so
    each turn of a long chat reuses the copies, and their sizes, instead of making them again)."""
    key = id(message)
    hit = _STUBS.get(key)
    if hit is not None and hit[0]() is message:
        return hit[1], hit[2]
    parts: list[Part] = []
    count = 0
    for part in message.parts:
        if isinstance(part, ToolResultPart) and len(part.content) > STUB_MIN:
            parts.append(ToolResultPart(part.call_id, part.name, stub_text(part.name, len(part.content)),
                                        part.is_error))
            count += 1
        else:
            parts.append(part)
    stubbed = Message("tool", parts) if count else message
    if len(_STUBS) >= _SIZES_LIMIT:
        _STUBS.clear()
    _STUBS[key] = (weakref.ref(message), stubbed, count)
    return stubbed, count


def _original_start(messages: Sequence[Message]) -> int:
    """Index in the transcript list of the current exchange's user message."""
    index = _last_user(messages)
    return index if index is not None else len(messages)


def _done(result: Fitted, view: list[Message], total: int, est: Any) -> Fitted:
    result.messages, result.chars, result.tokens = view, total, est(total, len(view))
    return result


def _cuttable(part: Part) -> int:
    """How much of ``part`` a cut can shorten: a text's or a tool result's characters, else 0."""
    return len(part.text) if isinstance(part, Text) else (
        len(part.content) if isinstance(part, ToolResultPart) else 0)


def _cut(view: list[Message], sizes: list[int], total: int, fixed: int, limit: int, estimator: Estimator,
         result: Fitted) -> tuple[list[Message], int]:
    """Shorten the largest parts until the request fits; as a last resort leave out old exchanges."""
    # The largest parts first, from a heap built once (not a scan of every part per cut): linear
    # in the conversation's length, whatever the number of cuts. Ties go to the oldest part.
    heap = [(-size, i, j) for i, message in enumerate(view) for j, part in enumerate(message.parts)
            if (size := _cuttable(part)) > MIN_PART]
    heapq.heapify(heap)
    for _ in range(64):
        over = estimator.tokens(total, len(view)) - limit
        if over <= 0:
            return view, total
        excess = int(over * estimator.chars_per_token) + 64
        if not heap:
            break
        negative, i, j = heapq.heappop(heap)
        size = -negative
        part = view[i].parts[j]
        keep = max(MIN_PART, size - excess)
        if isinstance(part, Text):
            new_part: Part = Text(shorten(part.text, keep))
        else:
            assert isinstance(part, ToolResultPart)
            new_part = ToolResultPart(part.call_id, part.name, shorten(part.content, keep), part.is_error)
        parts = list(view[i].parts)
        parts[j] = new_part
        view[i] = Message(view[i].role, parts)
        new = message_chars(view[i])
        total += new - sizes[i]
        sizes[i] = new
        result.cut += 1
        if (left := _cuttable(new_part)) > MIN_PART:
            heapq.heappush(heap, (-left, i, j))
    current = _last_user(view)
    if current is None or current == 0 or estimator.tokens(total, len(view)) <= limit:
        return view, total
    # Whole earlier exchanges, oldest first, with a note the model reads in their place.
    drop = dropped_chars = 0  # a running sum of the sizes left out (not a sum per candidate cut)
    while drop < current and estimator.tokens(total - dropped_chars, len(view) - drop) > limit:
        dropped_chars += sizes[drop]
        drop += 1
        while drop < current and view[drop].role != "user":  # whole exchanges: calls keep their results
            dropped_chars += sizes[drop]
            drop += 1
    result.dropped = drop
    note = Text(f"[{drop:,} earlier messages of this conversation were left out of this request: there was "
                "no room for them in the context window. The full conversation is kept in the chat.]\n\n")
    first = view[drop]
    kept = [Message(first.role, [note, *first.parts]), *view[drop + 1:]]
    kept_sizes = [message_chars(kept[0]), *sizes[drop + 1:]]
    return kept, fixed + sum(kept_sizes)


# -- the exact count -------------------------------------------------------------------------

COUNT_NEAR = 0.7  # of the budget: an estimate above it is checked with the provider's count
COUNT_DISAGREES = 1.5  # the last usage this far from the estimate widens that band by as much
COUNT_TIMEOUT_S = 5.0  # a count that takes longer is given up: the estimate is used


def wants_count(provider: object, request: Fitted, estimator: Estimator) -> bool:
    """Whether to ask the provider's counting endpoint about ``request`` before sending it.

    Only for a ``TokenCounter`` (Anthropic, Gemini), and only near the budget: the estimate above
    ``COUNT_NEAR`` of it, the band widened by how far the last answer's usage was from the estimate
    when that was more than ``COUNT_DISAGREES``. A short chat is far from any budget and never pays
    the extra round trip, however wrong the estimate was.
    """
    if not isinstance(provider, TokenCounter):
        return False
    doubt = estimator.disagreement if estimator.disagreement > COUNT_DISAGREES else 1.0
    return request.tokens * doubt >= COUNT_NEAR * request.budget


async def check_count(provider: object, request: Fitted, *, tools: Sequence[ToolDef], system: str | None,
                      params: "GenerationParams | None", estimator: Estimator,
                      timeout: float | None = None) -> bool:
    """Ask the provider to count ``request`` when ``wants_count`` says so; correct ``estimator`` from
    the answer and keep it in ``request.counted``. True when the exact count is over the budget, so
    the caller fits again (with the corrected ratio). A failed or slow count (any error, more than
    ``timeout`` seconds) is logged and the estimate stands: it never fails the turn.
    """
    if not wants_count(provider, request, estimator):
        return False
    assert isinstance(provider, TokenCounter)
    timeout = COUNT_TIMEOUT_S if timeout is None else timeout
    try:
        exact = await asyncio.wait_for(provider.count_tokens(list(request.messages), list(tools), system=system,
                                                             params=params), timeout)
    except asyncio.TimeoutError:
        log.info("the token count took more than %g s; using the estimate (%d tokens)", timeout, request.tokens)
        return False
    except Exception as exc:  # noqa: BLE001 - a count is an optimisation: never the turn's failure
        log.info("the token count failed (%s); using the estimate (%d tokens)",
                 getattr(exc, "message", None) or type(exc).__name__, request.tokens)
        return False
    if exact <= 0:
        return False
    log.debug("token count %d against the estimate %d (budget %d)", exact, request.tokens, request.budget)
    estimator.calibrate(request.chars, len(request.messages), exact)
    request.counted = exact
    if exact <= request.budget:
        request.tokens = exact
        return False
    return True


def summary_request(older: Sequence[Message], *, window: int, estimator: Estimator) -> list[Message]:
    """The messages of the summarisation request: ``older`` made to fit, then the instruction."""
    base = list(older)
    while base and base[-1].role == "user":  # the instruction is the last user message
        base.pop()
    ask = Message.user(SUMMARY_INSTRUCTION)
    fitted = fit([*base, ask], system=SUMMARY_SYSTEM, tools=(), window=window, answer_tokens=SUMMARY_MAX_TOKENS,
                 estimator=estimator, allow_summary=False)
    return fitted.messages


async def summarise(provider: "Provider", older: Sequence[Message], *, window: int, estimator: Estimator) -> str:
    """The model's summary of ``older`` (no tools offered); ProviderError and Stop propagate."""
    import contextlib

    from cks_desktop.llm.events import TextDelta
    from cks_desktop.llm.provider import GenerationParams

    messages = summary_request(older, window=window, estimator=estimator)
    stream = provider.stream(messages, [], system=SUMMARY_SYSTEM,
                             params=GenerationParams(max_output_tokens=SUMMARY_MAX_TOKENS))
    pieces: list[str] = []
    async with contextlib.aclosing(stream):
        async for event in stream:
            if isinstance(event, TextDelta):
                pieces.append(event.text)
    return "".join(pieces).strip()
