"""The one qasync event loop class the app and the tests run on.

qasync's ``run_forever`` skips asyncio's async-generator hooks, so an async
generator abandoned mid-iteration (an SDK stream after an error or a Stop) is
finalized by the garbage collector without a loop, and its ``finally: await …``
fails with "async generator ignored GeneratorExit". With the hooks installed the
loop closes such generators in a task, and ``shutdown_asyncgens`` (which
``asyncio.Runner`` calls on exit) closes the rest.
"""

from __future__ import annotations

import sys

import qasync


class AppEventLoop(qasync.QEventLoop):
    def run_forever(self):  # noqa: ANN201 (qasync's own signature)
        previous = sys.get_asyncgen_hooks()
        sys.set_asyncgen_hooks(firstiter=self._asyncgen_firstiter_hook,
                               finalizer=self._asyncgen_finalizer_hook)
        try:
            return super().run_forever()
        finally:
            sys.set_asyncgen_hooks(*previous)
