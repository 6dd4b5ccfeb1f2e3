"""Signing in to a streamable-HTTP server that asks for OAuth 2.1, on the SDK's ``OAuthClientProvider``.

The SDK does the protocol: protected-resource metadata discovery (from the
``WWW-Authenticate`` header, then the path-aware and root well-known URLs) and
authorization-server metadata discovery (RFC 8414 and OpenID locations, and the
2025-03-26 origin fallback), PKCE, dynamic client registration or a client ID
metadata document, the token exchange, silent refresh, and step-up on
``insufficient_scope``. This module decides *when* it may involve the person:

- ``OAuthSession`` holds one connection's provider, its keychain storage
  (``oauth_storage.py``) and, during a sign-in, the loopback listener
  (``oauth_callback.py``) and the function that opens the browser.
- ``GatedAuth`` is the ``httpx2.Auth`` the transport uses. It drives the
  provider's flow, but when the server answers the MCP request itself with 401,
  or 403 ``insufficient_scope``, and the person has not asked to sign in (a
  background start, a call), it stops the flow there and records a
  ``Challenge``: the connection then says "Sign in to <server>" (status
  ``NEEDS_AUTH``) instead of opening a browser nobody asked for, and instead of
  "the server refused the connection". A step-up during a call runs the flow at
  once only when the host can show the browser (``allow_step_up``).
- One deadline for a whole sign-in: its ``timeout`` starts when the flow starts, and every
  request of the flow (protected-resource and authorization-server metadata at each location
  the SDK tries, registration, token) gets what is left of it as its timeout, as does the
  browser step. The SDK builds those requests without one, so a metadata URL that accepts the
  connection and never answers held a sign-in until the connection's start-up ceiling (63 s
  for a 3 s timeout). A request still waiting at the deadline ends the sign-in with a sentence
  naming it.
- Whatever goes wrong inside a flow (metadata that is not metadata, a redirect
  elsewhere, a refused token exchange, a wrong state, a timeout) becomes one
  ``SignInError`` sentence naming the step that failed. Tokens never appear in it.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import httpx2
from mcp.client.auth import OAuthClientProvider, OAuthFlowError
from mcp.client.auth.utils import (
    build_protected_resource_metadata_discovery_urls,
    create_oauth_metadata_request,
    extract_field_from_www_auth,
    extract_resource_metadata_from_www_auth,
    handle_protected_resource_response,
)
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata
from pydantic import ValidationError

from cks_desktop import APP_ID
from cks_desktop.mcp.config import ServerConfig
from cks_desktop.mcp.oauth_callback import CALLBACK_PATH, LoopbackCallback, SignInError
from cks_desktop.mcp.oauth_grants import machine_failure, machine_provider, oauth_error
from cks_desktop.mcp.oauth_storage import KeychainTokenStorage, pre_registered_auth_method

if TYPE_CHECKING:
    from cks_desktop.secrets import SecretStore

log = logging.getLogger(__name__)
SIGN_IN_TIMEOUT = 300.0  # how long the browser step may take

OpenUrl = Callable[[str], Awaitable[None] | None]


class _FlowErrorFilter(logging.Filter):
    """The SDK logs a traceback for every failed flow; the connection reports one sentence instead."""

    def filter(self, record: logging.LogRecord) -> bool:
        return str(record.msg) != "OAuth flow error"


logging.getLogger("mcp.client.auth.oauth2").addFilter(_FlowErrorFilter())


@dataclass(frozen=True)
class Challenge:
    """What the server said when it refused a request for want of (enough) authorization."""

    status: int
    error: str | None = None
    scope: str | None = None
    header: str = ""  # the server's WWW-Authenticate, kept for a step-up a later sign-in answers

    @property
    def step_up(self) -> bool:
        return self.status == 403 and self.error == "insufficient_scope"


def challenge_of(response: httpx2.Response) -> Challenge | None:
    """The OAuth challenge in a response to an MCP request, if it is one.

    401 counts unless the server asks for another scheme (``Basic``: a password, not OAuth);
    403 counts only with ``error="insufficient_scope"`` (a plain 403 is a refusal, not a sign-in).
    """
    header = response.headers.get("WWW-Authenticate", "")
    if response.status_code == 401:
        if header and not header.lstrip().lower().startswith("bearer"):
            return None
        return Challenge(401, extract_field_from_www_auth(response, "error"),
                         extract_field_from_www_auth(response, "scope"))
    if response.status_code == 403 and extract_field_from_www_auth(response, "error") == "insufficient_scope":
        return Challenge(403, "insufficient_scope", extract_field_from_www_auth(response, "scope"), header)
    return None


def sign_in_sentence(server: str, challenge: Challenge | None = None) -> str:
    """The status reason of a server that needs the person to sign in."""
    if challenge is not None and challenge.step_up:
        scope = f" ({challenge.scope})" if challenge.scope else ""
        return f"Sign in to '{server}' again: it asks for more permissions{scope}."
    return f"Sign in to '{server}': it asks for authorization (OAuth) before it can be used."


def _redirect_port(uri: str | None) -> int | None:
    if not uri:
        return None
    try:
        parts = urlsplit(uri)
        if parts.hostname in ("127.0.0.1", "localhost", "::1") and parts.port:
            return parts.port
    except ValueError:
        pass
    return None


class OAuthSession:
    """The OAuth side of one connection attempt. Enter it before the transport; leave it after.

    ``open_url`` set means the person asked to sign in: a 401 runs the SDK's flow, the
    browser opens on the authorization URL, and the loopback listener waits (at most
    ``timeout``) for the redirect. Without it, a challenge is only recorded.
    """

    def __init__(self, config: ServerConfig, secrets: "SecretStore | None", *, open_url: OpenUrl | None = None,
                 allow_step_up: OpenUrl | None = None, timeout: float = SIGN_IN_TIMEOUT) -> None:
        assert config.oauth is not None
        self.config = config
        self.secrets = secrets
        self.open_url = open_url
        self.step_up_opener = allow_step_up
        self.timeout = timeout
        self.challenge: Challenge | None = None
        self.signed_in = False  # a flow completed during this session
        self.error: str | None = None  # the sentence of the last failed flow
        self.flow_started = False  # a sign-in runs the browser step once; a failed one is not retried
        self.deadline: float | None = None  # loop time when the running flow's timeout is up
        self.moved_to: str | None = None  # the new authorization server this sign-in followed (once)
        self.storage = KeychainTokenStorage(config.name, secrets, config.oauth)
        self._callback: LoopbackCallback | None = None
        self._opener: OpenUrl | None = None
        self.provider: httpx2.Auth | None = None  # the SDK's OAuthClientProvider, or a grant of oauth_grants.py
        self.auth = GatedAuth(self)

    @property
    def interactive(self) -> bool:
        return self.open_url is not None

    def note(self, challenge: Challenge) -> None:
        """A challenge nobody answers now: the connection reports it, and a step-up's scope is kept
        with the server's tokens so the next sign-in (``mcp login``, the window's "Sign in") asks for it."""
        self.challenge = challenge
        if challenge.step_up and challenge.header:
            self.storage.remember_step_up(challenge.header)

    def replayed_step_up(self, request: httpx2.Request) -> httpx2.Response | None:
        """For a sign-in the person asked for: the kept 403 of an earlier refusal, given to the SDK's flow
        as the answer to the first request, so the flow asks for the union of the granted scope and the
        one the server wanted, instead of finding the old token good enough for ``tools/list``."""
        if not self.interactive or self.flow_started or self.machine:
            return None
        header = self.storage.pending_step_up()
        if not header:
            return None
        return httpx2.Response(403, headers={"WWW-Authenticate": header}, request=request)

    def end_interactive(self) -> None:
        """After the start: a later 401 asks the person again instead of opening the browser by itself."""
        self.open_url = None

    def _port(self) -> int:
        settings = self.config.oauth
        assert settings is not None
        registered = _redirect_port(self.storage.registered_redirect())
        if registered is not None and not settings.client_id:
            return registered  # a dynamic registration holds this exact redirect URI
        return settings.callback_port or 0

    async def __aenter__(self) -> "OAuthSession":
        settings = self.config.oauth
        assert settings is not None
        if settings.machine:  # client credentials: no browser, no loopback listener
            self.provider = machine_provider(self.config, self.secrets, self.storage)
            return self
        port = self._port()
        if self.interactive:
            self._callback = LoopbackCallback(self.config.name, port=port, timeout=self.timeout)
            await self._callback.__aenter__()
            port = self._callback.port
        redirect = f"http://127.0.0.1:{port or 1}{CALLBACK_PATH}"  # port 1: never used without a sign-in
        self.storage.redirect_uri = redirect
        metadata = OAuthClientMetadata(
            client_name=f"CKS Desktop ({APP_ID})", redirect_uris=[redirect],  # type: ignore[list-item]
            grant_types=["authorization_code", "refresh_token"], response_types=["code"],
            token_endpoint_auth_method="none", scope=settings.scope)
        self.provider = OAuthClientProvider(
            self.config.url, metadata, self.storage, redirect_handler=self._redirect,
            callback_handler=self._wait_for_code, client_metadata_url=settings.client_metadata_url)
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close_listener()

    async def close_listener(self) -> None:
        if self._callback is not None:
            await self._callback.__aexit__(None, None, None)
            self._callback = None

    def cancel(self) -> None:
        if self._callback is not None:
            self._callback.cancel()

    @property
    def machine(self) -> bool:
        """A client-credentials grant: the flow needs nobody, so it may run whenever the server asks."""
        return self.config.oauth is not None and self.config.oauth.machine

    def start_deadline(self) -> None:
        """A flow starts now: it has ``timeout`` seconds in all."""
        self.deadline = asyncio.get_running_loop().time() + self.timeout

    def remaining(self) -> float:
        """Seconds left before the running flow's deadline (the whole ``timeout`` outside a flow)."""
        if self.deadline is None:
            return self.timeout
        return max(0.0, self.deadline - asyncio.get_running_loop().time())

    def timeout_sentence(self, request: httpx2.Request) -> str:
        return (f"Signing in to '{self.config.name}' did not finish within {self.timeout:g} s: the authorization "
                f"server did not answer in time (last request: {request.method} {request.url.copy_with(query=None)}).")

    def may_run_flow(self, challenge: Challenge) -> bool:
        if challenge.step_up:
            return self.step_up_opener is not None or (self.interactive and not self.flow_started)
        return self.interactive and not self.flow_started and not self.signed_in

    async def _redirect(self, url: str) -> None:
        """The SDK's redirect handler: show the person the authorization page."""
        opener = self.open_url or self.step_up_opener
        if opener is None:  # GatedAuth lets no flow start without one
            raise SignInError(sign_in_sentence(self.config.name, self.challenge))
        if self._callback is None:  # a step-up during a call: the registered port again
            self._callback = LoopbackCallback(self.config.name, port=self._port(), timeout=self.timeout)
            await self._callback.__aenter__()
        if isinstance(self.provider, OAuthClientProvider):  # the metadata is known now, before the token request
            info, meta = self.provider.context.client_info, self.provider.context.oauth_metadata
            if info is not None and info.client_secret and self.config.oauth and self.config.oauth.client_id:
                supported = meta.token_endpoint_auth_methods_supported if meta is not None else None
                info.token_endpoint_auth_method = pre_registered_auth_method(supported)
        result = opener(url)
        if inspect.isawaitable(result):
            await result

    async def _wait_for_code(self) -> AuthorizationCodeResult:
        assert self._callback is not None
        try:
            return await self._callback.wait(self.remaining())
        finally:
            if not self.interactive:  # a step-up's listener lives for that one answer
                await self.close_listener()


class GatedAuth(httpx2.Auth):
    """The transport's ``httpx2.Auth``: the SDK's provider, stopped at a challenge nobody may answer now."""

    requires_response_body = True

    def __init__(self, session: OAuthSession) -> None:
        self.session = session

    async def async_auth_flow(self, request: httpx2.Request) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        session = self.session
        provider = session.provider
        assert provider is not None, "enter the OAuthSession first"
        context = provider.context if isinstance(provider, OAuthClientProvider) else None
        if context is not None and context.current_tokens is not None and context.token_expiry_time is None:
            # Tokens loaded from the keychain carry no expiry the SDK knows of; give it the stored one
            # so it refreshes before the token dies rather than after a refusal.
            context.token_expiry_time = session.storage.expiry_of(context.current_tokens)
        flow = provider.async_auth_flow(request)
        outgoing: httpx2.Request = request
        response: httpx2.Response | None = None
        challenged = False
        ran_here = False  # a client-credentials flow ran for this request
        pending: str | None = None  # the sentence if the flow request now on its way times out
        try:
            try:
                outgoing = await flow.__anext__()
                if outgoing is not request:  # a refresh before the request itself
                    pending = self._bound(outgoing)
                replay: httpx2.Response | None = None
                may_replay = True
                while True:
                    if outgoing is request and may_replay:  # once, when the request itself first goes
                        may_replay = False
                        replay = session.replayed_step_up(request)
                    if replay is not None:
                        response, replay = replay, None
                    else:
                        response = yield outgoing
                    if outgoing is request:
                        challenge = challenge_of(response)
                        challenged = challenged or challenge is not None
                        following_move = False
                        if challenge is not None and session.machine:
                            if ran_here:  # refused again with the new token: no loop
                                session.challenge = challenge
                                return
                            ran_here = True
                            session.start_deadline()
                        elif challenge is not None:
                            if session.signed_in and not challenge.step_up:
                                moved_to = None
                                if session.interactive and session.moved_to is None and context is not None \
                                        and context.auth_server_url:
                                    # SEP-2352: refused after signing in; if the resource now names another
                                    # authorization server, the sign-in the person asked for follows it, once.
                                    for url in build_protected_resource_metadata_discovery_urls(
                                            extract_resource_metadata_from_www_auth(response), session.config.url):
                                        prm_request = create_oauth_metadata_request(url)
                                        prm_request.extensions["timeout"] = dict.fromkeys(
                                            ("connect", "read", "write", "pool"), min(30.0, session.timeout))
                                        prm = await handle_protected_resource_response((yield prm_request))
                                        if prm is not None:
                                            named = [str(a) for a in prm.authorization_servers]
                                            old = context.auth_server_url.rstrip("/")
                                            if named and old not in (a.rstrip("/") for a in named):
                                                moved_to = named[0]
                                            break
                                if moved_to is None:
                                    session.note(challenge)  # refused even after signing in
                                    return
                                session.moved_to = moved_to  # followed once; the SDK registers there
                                if session._callback is not None:
                                    session._callback.rearm()
                                log.info("'%s': its authorization server moved to %s; signing in there",
                                         session.config.name, moved_to)
                                following_move = True
                            if not following_move and not session.may_run_flow(challenge):
                                session.note(challenge)
                                return
                            session.flow_started = True
                            session.start_deadline()
                        else:
                            session.challenge = None
                    elif session.error == pending:
                        session.error = None  # that flow request was answered in time
                    stored = session.storage.stored
                    outgoing = await flow.asend(response)
                    if session.storage.stored != stored and outgoing is request:
                        session.signed_in = True  # new tokens: the request goes again with them
                    if outgoing is not request:
                        pending = self._bound(outgoing)
            except StopAsyncIteration:
                return
        except (SignInError, OAuthFlowError, ValidationError, ValueError, httpx2.HTTPError) as exc:
            # Raising here would tear down the whole transport from inside one POST; instead the
            # sentence is kept and the last response goes back, which the SDK turns into an error
            # answer to this one request. The connection (or the call) then reports the sentence.
            session.error = str(exc) if isinstance(exc, SignInError) else self._sentence(exc, outgoing, response)
            if not challenged:
                raise SignInError(session.error) from None
        finally:
            await flow.aclose()
        if challenged:
            # The request once more, as it was refused: its refusal (not the authorization server's last
            # answer) becomes the request's error answer; the server refuses it again before acting on it.
            yield request

    def _bound(self, outgoing: httpx2.Request) -> str | None:
        """Give a flow request what is left of the sign-in's time, and note the sentence it ends in
        if it runs out: a timeout is raised by the HTTP client, outside this generator, and the
        connection reads the sentence from ``session.error``."""
        session = self.session
        left = session.remaining()
        if left <= 0:
            raise SignInError(session.timeout_sentence(outgoing))
        outgoing.extensions["timeout"] = {"connect": left, "read": left, "write": left, "pool": left}
        if session.error is None:
            session.error = session.timeout_sentence(outgoing)
            return session.error
        return None

    def _sentence(self, exc: Exception, request: httpx2.Request, response: httpx2.Response | None) -> str:
        name = self.session.config.name
        if isinstance(exc, httpx2.HTTPError):
            what = f"the authorization server could not be reached ({type(exc).__name__}: {exc})"
        elif isinstance(exc, ValidationError):
            what = "the authorization server's answer is not valid OAuth metadata or a valid token response"
        else:
            what = _plain(str(exc))
        where = f"{request.method} {request.url.copy_with(query=None)}"
        status = f", HTTP {response.status_code}" if response is not None and response.request is request \
            else ""
        location = response.headers.get("location") if response is not None else None
        redirected = response is not None and location is not None and 300 <= response.status_code < 400
        elsewhere = f", redirecting to {location[:120]}" if redirected and location else ""
        if self.session.machine:  # no browser: the authorization server's own reason, and what to fix
            description, code = oauth_error(response) if response is not None and status else ("", "")
            return machine_failure(self.session.config, f"{description or what} "
                                                        f"({code + ', ' if code else ''}{where}{status}{elsewhere})")
        return f"Signing in to '{name}' failed: {what} (last request: {where}{status}{elsewhere})."


_KNOWN = (
    ("State parameter mismatch", "the browser's answer does not belong to this sign-in (its state differs)"),
    ("Authorization response iss mismatch",
     "the browser's answer names another authorization server than the one asked (issuer mismatch)"),
    ("No authorization code received", "the browser's answer carries no authorization code"),
    ("Invalid token response", "the authorization server's token answer could not be read"),
    ("Token exchange failed", "the authorization server refused the token request (check the client's ID and its "
     "secret or key)"),
)


def _plain(message: str) -> str:
    """The SDK's message in words a person can act on; never a response body (it may hold a token)."""
    message = (message.strip().splitlines() or [""])[0]
    for start, sentence in _KNOWN:
        if message.startswith(start):
            return sentence
    return message.split(": {", 1)[0].split(": <", 1)[0][:300]


def uses_oauth(config: ServerConfig) -> bool:
    """Whether the transport should carry an OAuth session: a URL server not set to ``"oauth": false``
    and not already given an ``Authorization`` header by the person (a fixed token wins)."""
    return (config.transport.remote and config.oauth is not None
            and not any(k.lower() == "authorization" for k in config.headers))


async def sign_out(config: ServerConfig, secrets: "SecretStore | None") -> bool:
    """Forget the server's tokens and registration. Returns whether there was anything to forget."""
    storage = KeychainTokenStorage(config.name, secrets, config.oauth)
    had = storage.has_tokens() or storage.registered_redirect() is not None
    storage.clear()
    return had


def refused_token_sentence(config: ServerConfig, challenge: Challenge) -> str:
    """A sign-in without a browser that got a token the MCP server then refused (no loop: it stops there)."""
    why = f" ({challenge.error})" if challenge.error else ""
    return machine_failure(config, f"the server refused the access token its authorization server issued "
                                   f"(HTTP {challenge.status}{why})", "check its client ID and scope in "
                                                                      "Settings → MCP servers")


def describe_exception(exc: BaseException) -> str | None:
    """The sentence of a sign-in failure found anywhere in an exception (groups included)."""
    if isinstance(exc, SignInError):
        return str(exc)
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            found = describe_exception(inner)
            if found:
                return found
    return None


__all__ = ["Challenge", "GatedAuth", "OAuthSession", "SIGN_IN_TIMEOUT", "SignInError", "challenge_of",
           "describe_exception", "refused_token_sentence", "sign_in_sentence", "sign_out", "uses_oauth"]
