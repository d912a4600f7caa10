"""report.html in a real browser: Debian's Chromium, headless (`make browser` installs it as root).

The flags are those a headless Chromium needs on a machine without a display, a sandbox (as root)
or a network: background networking, component updates and sync off, or Chromium keeps trying to
reach Google's hosts. `screenshot` renders a page to a PNG (the picture in docs/your-model.md:
scripts/report_example.py); tests/helpers/browser.py loads one with a probe to check it renders cleanly.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)


def chromium() -> str | None:
    """The Chromium on PATH, or None."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


def screenshot(page: Path, png: Path, width: int = 1280, height: int = 2400) -> Path:
    """The top `height` pixels of `page` rendered at `width`, as a PNG at `png`."""
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run(
            [chromium() or "chromium", *FLAGS, f"--user-data-dir={profile}", "--hide-scrollbars"]
            + [f"--window-size={width},{height}", f"--screenshot={png}", Path(page).resolve().as_uri()],
            check=True,
            capture_output=True,
            timeout=120,
        )
    return png
