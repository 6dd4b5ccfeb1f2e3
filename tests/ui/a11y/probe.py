"""Run by the system python3 (python3-pyatspi): the AT-SPI tree of the process ``argv[1]`` as
JSON lines on stdout: one {"role", "name", "showing", "path"} per accessible, as a screen reader
sees them over D-Bus. Not a test itself (tests/ui/test_accessibility_tree.py runs it)."""

import json
import sys
import time

import pyatspi

LIMIT = 5000


def main() -> int:
    pid = int(sys.argv[1])
    deadline = time.monotonic() + 20
    app = None
    while app is None and time.monotonic() < deadline:
        desktop = pyatspi.Registry.getDesktop(0)
        for candidate in desktop:
            try:
                if candidate is not None and candidate.get_process_id() == pid:
                    app = candidate
            except Exception:
                continue
        if app is None:
            time.sleep(0.2)  # waiting for the app to register on the bus (a poll of an outside process)
    if app is None:
        print(json.dumps({"error": "the app never appeared on the accessibility bus"}))
        return 1
    seen = 0
    stack = [(app, "app")]
    while stack and seen < LIMIT:
        node, path = stack.pop()
        seen += 1
        try:
            role = node.getRoleName()
            name = node.name or ""
            showing = node.getState().contains(pyatspi.STATE_SHOWING)
            count = node.childCount
        except Exception:
            continue
        print(json.dumps({"role": role, "name": name, "showing": showing, "path": path}))
        for index in range(min(count, 500)):
            try:
                child = node.getChildAtIndex(index)
            except Exception:
                continue
            if child is not None:
                stack.append((child, f"{path}/{role}[{index}]"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
