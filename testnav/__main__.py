"""`python -m testnav [overrides]`: the same Hydra app as the `testnav` command and run.py."""

import sys

from testnav.app.main import main

if __name__ == "__main__":
    sys.exit(main(prog="python -m testnav"))
