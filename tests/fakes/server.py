"""The HTTP machinery every fake LLM server shares.

A ``FakeServer`` is a stdlib ``ThreadingHTTPServer`` on ``127.0.0.1:0`` running in
a daemon thread, so the SDK under test talks to it over a real socket from the
test's own event loop without anything blocking that loop. Responses are
HTTP/1.1 with chunked transfer encoding and ``Connection: close`` (as the real
APIs stream), which makes a cut stream look like one: the body ends without
its final chunk and the client's HTTP library raises.

Subclasses implement ``handle(request, out)``; ``out`` (a ``Responder``) writes
JSON answers, starts a stream, sends chunks, ends, cuts or stalls. Scripted
``Turn``s are consumed one per generation request, in order; running out of
turns answers 500 and is recorded in ``problems`` so a test notices. ``always``
answers every generation request with one turn (a persistent 429), and every
request is recorded with its arrival time (``RecordedRequest.at``), so a test
counts the requests a client sent and measures its waits between them.

Use it as a context manager (``with FakeAnthropic() as fake:``): ``close()``
stops the server, wakes any stalled response, and joins the handler threads.
"""

from __future__ import annotations

import json
import select
import socket
import threading
import time
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from tests.fakes.script import Turn


@dataclass
class RecordedRequest:
    """One request as the fake received it."""

    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]  # names in lower case
    body: Any  # the parsed JSON body, or None
    raw: bytes = b""
    at: float = 0.0  # ``time.monotonic()`` when it arrived (to measure a client's waits between requests)

    def header(self, name: str) -> str | None:
        return self.headers.get(name.lower())


def split_text(text: str, pieces: int) -> list[str]:
    """Cut ``text`` into ``pieces`` non-empty fragments at even positions (mid-token on purpose)."""
    pieces = max(1, min(pieces, len(text)))
    if pieces == 1:
        return [text] if text else []
    cuts = [round(i * len(text) / pieces) for i in range(pieces + 1)]
    return [text[a:b] for a, b in zip(cuts, cuts[1:], strict=False) if b > a]


class Responder:
    """Writes one response on the handler's socket."""

    def __init__(self, handler: BaseHTTPRequestHandler, server: FakeServer) -> None:
        self._handler = handler
        self._server = server
        self._streaming = False

    def json(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(body).encode()
        h = self._handler
        h.send_response(status)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(data)))
        h.send_header("Connection", "close")
        for key, value in (headers or {}).items():
            h.send_header(key, value)
        h.end_headers()
        h.wfile.write(data)

    def begin(self, content_type: str, headers: dict[str, str] | None = None) -> None:
        h = self._handler
        h.send_response(200)
        h.send_header("Content-Type", content_type)
        h.send_header("Transfer-Encoding", "chunked")
        h.send_header("Cache-Control", "no-cache")
        h.send_header("Connection", "close")
        for key, value in (headers or {}).items():
            h.send_header(key, value)
        h.end_headers()
        self._streaming = True

    def send(self, data: str | bytes) -> None:
        """One HTTP chunk (flushed at once, so the client sees events as they come)."""
        payload = data.encode() if isinstance(data, str) else data
        if not payload:
            return
        if self._server.chunk_delay:
            time.sleep(self._server.chunk_delay)
        self._handler.wfile.write(b"%x\r\n%s\r\n" % (len(payload), payload))

    def end(self) -> None:
        self._handler.wfile.write(b"0\r\n\r\n")

    def cut(self) -> None:
        """Close the connection abruptly, with the body unfinished."""
        conn: socket.socket = self._handler.connection
        try:
            conn.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def stall(self) -> None:
        """Send nothing more; return when the client goes away or the server closes."""
        self._server.stalled.set()
        conn: socket.socket = self._handler.connection
        while not self._server.closing.is_set():
            try:
                readable, _, _ = select.select([conn], [], [], 0.02)
                if readable and not conn.recv(1, socket.MSG_PEEK):
                    return
            except OSError:
                return


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass

    def _dispatch(self) -> None:
        fake = self.server.fake
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        parts = urlsplit(self.path)
        request = RecordedRequest(self.command, parts.path, dict(parse_qsl(parts.query)),
                                  {k.lower(): v for k, v in self.headers.items()}, body, raw, time.monotonic())
        with fake.lock:
            fake.requests.append(request)
        self.close_connection = True
        try:
            fake.handle(request, Responder(self, fake))
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client went away (Stop, a timeout): nothing to answer

    do_GET = do_POST = do_DELETE = _dispatch


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    fake: FakeServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that hangs up mid-response is expected here, not a failure


class FakeServer:
    """Base class: queue ``Turn``s, read ``requests``, use as a context manager."""

    name = "fake"
    default_model = "fake-model"
    # A model with a small context window: set ``context_window`` (tokens) and a
    # generation request larger than it gets the provider's real "prompt too long" error; its
    # size is counted as the JSON of its messages, system prompt and tools at
    # ``chars_per_token``, kept in ``prompt_sizes``, and reported as the answer's input tokens.
    context_window: int | None = None
    chars_per_token: float = 4.0
    # The token counting endpoint (Anthropic's count_tokens, Gemini's countTokens): it
    # answers ``count_rule(body)`` (by default ``prompt_tokens``, the rule the window uses), or
    # ``count_status`` with the provider's error body, or never (``count_stall``).
    count_status: int | None = None
    count_stall: bool = False
    count_rule: Callable[[Any], int] | None = None

    def __init__(self, *, chunk_delay: float = 0.0) -> None:
        self.chunk_delay = chunk_delay
        self.turns: deque[Turn] = deque()
        self.requests: list[RecordedRequest] = []
        self.problems: list[str] = []
        self.prompt_sizes: list[int] = []
        self.side_turn: Callable[[Any], Turn | None] | None = None
        # Answer every generation request with this turn (a persistent 429, say), the queue untouched.
        self.always: Turn | None = None
        self.lock = threading.Lock()
        self.closing = threading.Event()
        self.stalled = threading.Event()  # set when a response reaches its stall point
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -----------------------------------------------------------------------
    def start(self) -> "FakeServer":
        server = _Server(("127.0.0.1", 0), _Handler)
        server.fake = self
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02},
                                        name=f"fake-{self.name}", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        if self._server is None:
            return
        self.closing.set()
        self._server.shutdown()
        self._server.server_close()  # joins the handler threads
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = None

    def __enter__(self) -> "FakeServer":
        return self.start() if self._server is None else self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- script --------------------------------------------------------------------------
    @property
    def port(self) -> int:
        assert self._server is not None, "start the fake first"
        return int(self._server.server_address[1])

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        """What to give the SDK as its base URL."""
        return self.origin

    def queue(self, *turns: Turn) -> "FakeServer":
        with self.lock:
            self.turns.extend(turns)
        return self

    def prompt_tokens(self, body: Any) -> int:
        body = body if isinstance(body, dict) else {}
        keys = ("messages", "system", "tools", "contents", "systemInstruction", "system_instruction")
        text = json.dumps([body.get(k) for k in keys], ensure_ascii=False)
        return int(len(text) / self.chars_per_token)

    def over_window(self, request: RecordedRequest) -> int | None:
        """The prompt's tokens when this fake has a window and the prompt is larger; else None.
        Records every generation request's size in ``prompt_sizes``."""
        if self.context_window is None:
            return None
        tokens = self.prompt_tokens(request.body)
        with self.lock:
            self.prompt_sizes.append(tokens)
        return tokens if tokens > self.context_window else None

    def counted_tokens(self, body: Any) -> int:
        """What the counting endpoint answers for a request ``body``."""
        return self.count_rule(body) if self.count_rule is not None else self.prompt_tokens(body)

    def usage_tokens(self, body: Any, scripted: int) -> int:
        return self.prompt_tokens(body) if self.context_window is not None else scripted

    def next_turn(self, body: Any = None) -> Turn | None:
        """The next queued turn; or, for a request ``side_turn`` answers (a summary request,
        say), that answer, without consuming the queue."""
        if self.always is not None:
            return self.always
        side = self.side_turn(body) if self.side_turn is not None and body is not None else None
        if side is not None:
            return side
        with self.lock:
            return self.turns.popleft() if self.turns else None

    @property
    def generation_requests(self) -> list[RecordedRequest]:
        """Requests for a model answer (not model listings and the like)."""
        return [r for r in self.requests if self.is_generation(r)]

    def is_generation(self, request: RecordedRequest) -> bool:
        raise NotImplementedError

    def handle(self, request: RecordedRequest, out: Responder) -> None:
        raise NotImplementedError

    def out_of_turns(self, out: Responder) -> None:
        self.problems.append("a generation request arrived with no Turn queued")
        out.json(500, {"error": {"message": "fake server: no scripted turn left", "type": "api_error"}})
