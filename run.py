"""Hydra entry point of a checkout: `python run.py [overrides]`, the same app as the `testnav` command
and `python -m testnav` (testnav/app/main.py)."""

import sys

from testnav.app.main import main

if __name__ == "__main__":
    sys.exit(main())
