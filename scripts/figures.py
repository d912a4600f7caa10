"""`make figures`: every figure and table from what is under results/ (`testnav figures` in a checkout;
the logic is testnav/app/figures.py, so that an installed testnav draws them too)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from testnav.app.figures import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(prog="scripts/figures.py"))
