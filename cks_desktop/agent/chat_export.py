"""A session's chat as a file: Markdown to read, JSON to process.

One module for every front end: File → Export chat… in the window and
``cks-desktop chat --session S --export FILE [--format markdown|json]`` write
the same bytes for the same transcript.

- **JSON** is the transcript as ``cks-desktop chat --history --json`` prints it, one object
  per saved row (``SavedMessage.to_json``: role, parts with tool calls and their arguments,
  tool results, per-call records with state and duration, notices, marks), wrapped with the
  session's id, title and instructions and a format name and version, so a script can tell
  what it reads.
- **Markdown** shows each exchange as the chat does: the person's messages, the answers
  (their own Markdown, verbatim), every tool call with its state and duration, its
  arguments as pretty JSON and its result in code blocks, notices as quotes, errors and
  stopped answers marked, an answer's citations that failed their check in one line after it
  (``agent/citations.py``), the model's thinking folded above its answer in a
  ``<details>`` block ("Thought for 12 s"). Code fences are longer than any run of backticks inside, so a
  result containing ``` cannot end its block early.

Images: the transcript keeps references; the Markdown shows each image inline as a
``data:`` URL of the stored bytes (one self-contained file; never a URL a model or server chose),
and the JSON adds an ``images`` object (id → type, size, base64 data) when the chat has any.

Writes are atomic (``settings.atomic_write_text``): a failed export leaves no partial file.
"""

from __future__ import annotations

import base64
import json
import re
from datetime import datetime, timezone
from pathlib import Path
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from cks_desktop.agent.transcript import Mark, SavedMessage, TranscriptStore

if TYPE_CHECKING:
    from cks_desktop.graph.store import GraphStore
    from cks_desktop.llm.messages import ImagePart

ImageLookup = Callable[[str], "ImagePart | None"]

ExportFormat = Literal["markdown", "json"]
FORMATS: tuple[ExportFormat, ...] = ("markdown", "json")
FORMAT_NAME = "cks-desktop-chat"
FORMAT_VERSION = 1
SUFFIXES: dict[ExportFormat, str] = {"markdown": ".md", "json": ".json"}
_MARK_TAGS = {Mark.STOPPED: " (stopped)", Mark.ASK: " (from Ask the documents)"}  # after "### Assistant"


def format_for(path: str | Path) -> ExportFormat:
    """The format a file name asks for: JSON for ``.json``, else Markdown."""
    return "json" if str(path).lower().endswith(".json") else "markdown"


def export_chat(store: "GraphStore", session_id: str, fmt: ExportFormat) -> str:
    """The session's whole chat as text in ``fmt`` (the store's error for an unknown session)."""
    session = store.get_session(session_id)
    history = TranscriptStore.for_store(store).history(session_id)
    from cks_desktop.agent.images import ImageStore

    images = ImageStore(store)

    def lookup(image_id: str) -> "ImagePart | None":
        return images.get(session_id, image_id)

    if fmt == "json":
        return to_json(session, history, lookup)
    if fmt == "markdown":
        return to_markdown(session, history, lookup)
    raise ValueError(f"Unknown chat export format {fmt!r}; choose one of {', '.join(FORMATS)}.")


def write_export(path: str | Path, text: str) -> Path:
    """Write atomically (temp file + rename); returns the path written."""
    from cks_desktop.settings import atomic_write_text

    target = Path(path).expanduser()
    atomic_write_text(target, text)
    return target


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


def _image_refs(history: list[SavedMessage]) -> list["ImagePart"]:
    refs: list[ImagePart] = []
    for row in history:
        refs += row.message.images
        for result in row.message.tool_results:
            refs += result.images
    return refs


def to_json(session: Any, history: list[SavedMessage], images: ImageLookup | None = None) -> str:
    data: dict[str, Any] = {
        "format": FORMAT_NAME, "version": FORMAT_VERSION, "exported_at": _now(),
        "session": {"id": session.id, "title": session.title, "instructions": session.instructions or ""},
        "messages": [row.to_json() for row in history]}
    stored: dict[str, Any] = {}
    for ref in _image_refs(history):
        found = images(ref.image_id) if images is not None and ref.image_id not in stored else None
        if found is not None:
            stored[ref.image_id] = {"media_type": found.media_type, "width": found.width, "height": found.height,
                                    "data": base64.b64encode(found.data).decode("ascii")}
    if stored:
        data["images"] = stored
    return json.dumps(data, ensure_ascii=False, indent=2, default=str) + "\n"


def fence(text: str, info: str = "") -> str:
    """``text`` in a code block whose fence is longer than any backtick run inside it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    marks = "`" * max(3, longest + 1)
    return f"{marks}{info}\n{text.rstrip(chr(10))}\n{marks}"


def _pretty(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2, default=str)


def _result_block(content: str) -> str:
    stripped = content.strip()
    if stripped[:1] in "{[":
        try:
            return fence(_pretty(json.loads(stripped)), "json")
        except ValueError:
            pass
    return fence(content)


def _duration(ms: float | None) -> str:
    if ms is None:
        return ""
    return f" · {ms:.0f} ms" if ms < 1000 else f" · {ms / 1000:.1f} s"


def _reasoning_block(message: Any) -> list[str]:
    """The model's thinking above its answer, folded as the chat shows it ("Thought for 12 s"),
    its words in a code block (they are the model's, never rendered as Markdown)."""
    from cks_desktop.agent.reasoning import headline, shown

    text, seconds = shown(message.reasoning)
    if not text:
        return []
    return [f"<details><summary>{headline(seconds)}</summary>", "", fence(text, "text"), "", "</details>", ""]


def _image_lines(refs: Any, images: ImageLookup | None) -> list[str]:
    """Each image inline as a ``data:`` URL of its stored bytes (or a line naming it when gone)."""
    lines: list[str] = []
    for ref in refs:
        found = images(ref.image_id) if images is not None else None
        label = f"{ref.media_type} {ref.width}×{ref.height}"
        if found is None or not found.data:
            lines += [f"*[image {label}: not stored any more]*", ""]
        else:
            lines += [f"![{label}](data:{found.media_type};base64,{base64.b64encode(found.data).decode('ascii')})", ""]
    return lines


def to_markdown(session: Any, history: list[SavedMessage], images: ImageLookup | None = None) -> str:
    lines: list[str] = [f"# {session.title or 'Chat'}", "",
                        f"Chat of session `{session.id}`, exported {_now()} from CKS Desktop.", ""]
    if (session.instructions or "").strip():
        lines += ["**Instructions for this session:**", "", fence(session.instructions), ""]
    results: dict[str, tuple[str, bool]] = {}
    result_images: dict[str, Any] = {}
    for row in history:
        for part in row.message.tool_results:
            results[part.call_id] = (part.content, part.is_error)
            result_images[part.call_id] = part.images
    for row in history:
        message = row.message
        if message.role == "user":
            note = " (no answer)" if row.unanswered else ""
            lines += [f"## You · exchange {row.turn}{note}", "", message.text, ""]
            lines += _image_lines(message.images, images)
        elif row.mark is Mark.ERROR:
            lines += [f"> **Error:** {message.text}", ""]
        elif message.role == "assistant":
            lines += _reasoning_block(message)
            if message.text:
                if row.notice is not None:
                    lines += [f"> **Note:** {message.text}", ""]
                else:
                    tag = _MARK_TAGS.get(row.mark, "") if row.mark is not None else ""
                    lines += [f"### Assistant{tag}", "", message.text, ""]
                    if row.citations is not None and row.citations.unsupported:  # as the chat marks them
                        lines += [row.citations.unsupported_line(), ""]
            elif row.mark is Mark.STOPPED:
                lines += ["*The answer was stopped.*", ""]
            records = {c.call_id: c for c in row.calls}
            for call in message.tool_calls:
                record = records.get(call.id)
                name = record.display_name if record else call.name
                source = f" ({record.source})" if record and record.source not in ("builtin", "unknown") else ""
                state = f" — {record.state}{_duration(record.duration_ms)}" if record else ""
                reverted = " (reverted)" if record and record.reverted else ""
                tool = f"`{name}`" if name == call.name else f"{name} (`{call.name}`)"
                lines += [f"**Tool call** {tool}{source}{state}{reverted}", "", "Arguments:", "",
                          fence(_pretty(call.arguments), "json"), ""]
                if call.id in results:
                    content, is_error = results[call.id]
                    lines += ["Error:" if is_error else "Result:", "", _result_block(content), ""]
                    lines += _image_lines(result_images.get(call.id, ()), images)
    if not history:
        lines += ["*No messages yet.*", ""]
    return "\n".join(lines).rstrip("\n") + "\n"
