"""The loopback redirect of a sign-in: a tiny HTTP listener on ``http://127.0.0.1:<port>/callback``.

RFC 8252 (OAuth for native apps) has the browser hand the authorization code
back to the app through a redirect to a loopback address. This listener takes
exactly one such redirect: it answers every other request (a favicon, a probe)
with 404 and keeps waiting, answers the redirect with a small page the person
can close, and hands the code, state and issuer to the SDK, which checks the
state against the one it sent (and the issuer, RFC 9207).

The wait is bounded (``timeout``) and can be cancelled; either ends in one
sentence (``SignInError``). Requests are read with a size limit and their own
short deadline, so a client that connects and sends nothing cannot hold it.
"""

from __future__ import annotations

import asyncio
import html
from urllib.parse import parse_qs, urlsplit

from mcp.shared.auth import AuthorizationCodeResult

CALLBACK_PATH = "/callback"
MAX_REQUEST = 16 * 1024
READ_TIMEOUT = 10.0

_PAGE = ("<!doctype html><html><head><meta charset='utf-8'><title>{title}</title></head>"
         "<body style='font-family:sans-serif;margin:3em'><h2>{title}</h2><p>{text}</p></body></html>")


class SignInError(Exception):
    """A sign-in that did not complete, in one sentence for the person."""


class LoopbackCallback:
    """Receives one authorization redirect. Use ``async with``; ``redirect_uri`` is known once entered."""

    def __init__(self, server: str, *, port: int = 0, timeout: float = 300.0) -> None:
        self.server = server
        self.port = port
        self.timeout = timeout
        self._server: asyncio.base_events.Server | None = None
        self._result: asyncio.Future[AuthorizationCodeResult] | None = None

    @property
    def redirect_uri(self) -> str:
        return f"http://127.0.0.1:{self.port}{CALLBACK_PATH}"

    async def __aenter__(self) -> "LoopbackCallback":
        self._result = asyncio.get_running_loop().create_future()
        try:
            self._server = await asyncio.start_server(self._serve, "127.0.0.1", self.port)
        except OSError as exc:
            raise SignInError(f"Signing in to '{self.server}' needs the local port {self.port} for the browser's "
                              f"answer, and it is in use ({exc.strerror or exc}); close what uses it and try "
                              "again.") from None
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.cancel()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None

    def rearm(self) -> None:
        """Take one more answer on the same port (a second sign-in of the same start: the authorization
        server moved). The first answer, already used, is never handed out again."""
        if self._result is not None and self._result.done():
            self._result = asyncio.get_running_loop().create_future()

    def cancel(self, reason: str | None = None) -> None:
        """End the wait (the person pressed Cancel, or the connection stopped)."""
        if self._result is not None and not self._result.done():
            self._result.set_exception(SignInError(reason or f"The sign-in to '{self.server}' was cancelled."))
            self._result.exception()  # retrieved: no "exception never retrieved" if nobody waits any more

    async def wait(self, within: float | None = None) -> AuthorizationCodeResult:
        """The redirect's parameters; ``SignInError`` on timeout, cancel, or a refusal by the server.
        ``within``: what is left of the sign-in's ``timeout`` (the steps before used the rest)."""
        assert self._result is not None, "enter the listener first"
        try:
            return await asyncio.wait_for(asyncio.shield(self._result),
                                          self.timeout if within is None else min(within, self.timeout))
        except TimeoutError:
            minutes = self.timeout / 60
            span = f"{minutes:g} minutes" if minutes >= 1 else f"{self.timeout:g} s"
            raise SignInError(f"The sign-in to '{self.server}' was not completed in the browser within {span}; "
                              "try again.") from None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            async with asyncio.timeout(READ_TIMEOUT):
                head = await reader.readuntil(b"\r\n\r\n")
        except (TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
            writer.close()
            return
        try:
            line = head[:MAX_REQUEST].split(b"\r\n", 1)[0].decode("latin-1")
            method, target, _ = line.split(" ", 2)
            parts = urlsplit(target)
        except ValueError:
            await self._answer(writer, 400, "Bad request", "This address only takes the sign-in's answer.")
            return
        if method != "GET" or parts.path != CALLBACK_PATH:
            await self._answer(writer, 404, "Not found", "This address only takes the sign-in's answer.")
            return
        query = {k: v[0] for k, v in parse_qs(parts.query).items() if v}
        outcome: AuthorizationCodeResult | SignInError
        if "error" in query:
            why = query.get("error_description") or query["error"]
            outcome = SignInError(f"The authorization server refused the sign-in to '{self.server}': {why[:200]}.")
        elif not query.get("code"):
            outcome = SignInError(f"The browser came back from signing in to '{self.server}' without an "
                                  "authorization code; try again.")
        else:
            outcome = AuthorizationCodeResult(code=query["code"], state=query.get("state"), iss=query.get("iss"))
        result = self._result
        if result is None or result.done():
            await self._answer(writer, 409, "Already answered", "This sign-in was already completed or cancelled.")
            return
        if isinstance(outcome, SignInError):
            result.set_exception(outcome)
            await self._answer(writer, 400, "Sign-in failed", str(outcome))
        else:
            result.set_result(outcome)
            await self._answer(writer, 200, "Signed in", f"You can close this window and return to CKS Desktop "
                                                         f"({self.server}).")

    @staticmethod
    async def _answer(writer: asyncio.StreamWriter, status: int, title: str, text: str) -> None:
        body = _PAGE.format(title=html.escape(title), text=html.escape(text)).encode()
        reason = {200: "OK", 400: "Bad Request", 404: "Not Found", 409: "Conflict"}[status]
        writer.write(f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/html; charset=utf-8\r\n"
                     f"Content-Length: {len(body)}\r\nConnection: close\r\nCache-Control: no-store\r\n\r\n".encode()
                     + body)
        try:
            await writer.drain()
        except ConnectionError:
            pass
        finally:
            writer.close()
