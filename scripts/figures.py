"""`make figures`: every figure and table from what is under results/ (`testnav figures` in a checkout;
the logic is testnav/app/figures.py, so that an installed testnav draws them too)."""

import sys

from testnav.app.figures import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(prog="scripts/figures.py"))
