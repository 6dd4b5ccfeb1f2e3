"""A sign-in's ``--timeout`` bounds the whole sign-in: a server whose OAuth metadata URLs accept
the connection and never answer (a raw asyncio server) ends `mcp login` within the timeout plus
a small margin, in one sentence, however many metadata locations the discovery tries."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest

from cks_desktop import cli

TIMEOUT = 3.0
MARGIN = 3.0  # the CLI's own start and the first (answered) request


@asynccontextmanager
async def hanging_metadata_server() -> AsyncIterator[tuple[str, list[str]]]:
    """``POST /mcp`` gets 401 pointing at protected-resource metadata on the same server; every
    other request (each metadata location) is read and then never answered."""
    seen: list[str] = []
    held: list[asyncio.StreamWriter] = []

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                method, path = head.split(b" ", 2)[:2]
                seen.append(f"{method.decode()} {path.decode()}")
                length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                               if line.lower().startswith(b"content-length:")), 0)
                if length:
                    await reader.readexactly(length)
                if path != b"/mcp":
                    held.append(writer)  # accepted, read, never answered
                    await asyncio.Event().wait()
                port = writer.get_extra_info("sockname")[1]
                body = b'{"error": "unauthorized"}'
                writer.write(b"HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\n"
                             b'www-authenticate: Bearer resource_metadata="http://127.0.0.1:%d'
                             b'/.well-known/oauth-protected-resource/mcp"\r\n'
                             b"content-length: %d\r\n\r\n%s" % (port, len(body), body))
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}/mcp", seen
    finally:
        for writer in held:
            writer.close()
        server.close()


@pytest.mark.asyncio
async def test_a_hanging_metadata_url_ends_the_login_within_its_timeout(memory_keyring, tmp_path, monkeypatch,
                                                                         capsys) -> None:
    monkeypatch.setenv("CKS_DESKTOP_TEST_KEYRING", "tests.conftest")
    home = tmp_path / "home"

    def mcp(*argv: str) -> int:
        return cli.main(["--data-dir", str(home), "mcp", *argv])

    async with hanging_metadata_server() as (url, seen):
        assert await asyncio.to_thread(mcp, "add", "hang", "--url", url, "--approval", "auto") == 0
        capsys.readouterr()
        started = time.monotonic()
        code = await asyncio.to_thread(mcp, "login", "hang", "--no-browser", "--timeout", str(TIMEOUT))
        took = time.monotonic() - started
    err = capsys.readouterr().err.strip()
    assert code == 1, err
    assert took < TIMEOUT + MARGIN, (took, seen)
    assert any("/.well-known/" in s for s in seen), seen  # it did reach the metadata step
    lines = err.splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    assert "hang" in err and f"did not finish within {TIMEOUT:g} s" in err and "/.well-known/" in err, err
    print(err, f"({took:.1f} s)")
