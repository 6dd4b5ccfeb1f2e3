"""``python -m cks_desktop`` is the same entry point as the ``cks-desktop`` command."""

import sys

from cks_desktop.cli import main

if __name__ == "__main__":
    sys.exit(main())
