"""Import the heavy SDKs (mcp, the provider SDKs, pydantic under them) one at a time.

Why: Python's import lock is per module. When two threads import modules that
import each other (pydantic's lazy ``__getattr__`` imports and the SDKs built
on it do), the import system breaks the would-be deadlock by handing one
thread a *partially initialised* module, and that thread fails with
``ImportError: cannot import name … from partially initialized module …``.
That happened at a first start: the MCP SDK was being imported on a worker
thread (it takes ~0.7 s, so it is kept off the event loop) while a provider
SDK was imported on another; every MCP server failed.

So every lazy import of an SDK goes through ``import_sdk``: one process-wide
re-entrant lock serialises them, and the first one also resolves every lazy
attribute of pydantic under that lock, so no later ``from pydantic import X``
on another thread starts a nested import that could cross one in progress.
A module already fully imported is returned without taking the lock (no
wait on the event loop for something that is already there).

Qt-free; used by the GUI (``ui.main_window``), the provider factory and the
runtime. ``tests/core/test_sdk_import.py`` reproduces the race in a
subprocess with two threads and shows the lock makes it impossible.
"""

from __future__ import annotations

import asyncio
import importlib
import sys
import threading
from types import ModuleType

_LOCK = threading.RLock()
_pydantic_ready = False


def _loaded(name: str) -> ModuleType | None:
    """``sys.modules[name]`` if it finished importing (not one still being initialised)."""
    module = sys.modules.get(name)
    if module is None or getattr(getattr(module, "__spec__", None), "_initializing", False):
        return None
    return module


def _warm_pydantic() -> None:
    """Resolve pydantic's lazy attributes now, under the lock (each one is an import)."""
    global _pydantic_ready
    if _pydantic_ready:
        return
    try:
        import pydantic
    except ImportError:  # not installed: nothing to warm
        _pydantic_ready = True
        return
    for attr in getattr(pydantic, "__all__", ()):
        getattr(pydantic, attr, None)
    _pydantic_ready = True


def import_sdk(name: str) -> ModuleType:
    """``importlib.import_module(name)``, serialised with every other SDK import of the process."""
    module = _loaded(name)
    if module is not None and _pydantic_ready:
        return module
    with _LOCK:
        _warm_pydantic()
        return importlib.import_module(name)


async def import_sdk_in_thread(name: str) -> ModuleType:
    """``import_sdk`` on a worker thread (the event loop never waits for an import or the lock)."""
    module = _loaded(name)
    if module is not None and _pydantic_ready:
        return module
    return await asyncio.to_thread(import_sdk, name)
