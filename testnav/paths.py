"""Where the package's configuration lives, found in one place.

A checkout (and an editable install) keeps conf/ beside the package; a wheel ships the same files
inside it as testnav/conf (pyproject.toml's package data), so composing a config works either way.
"""

from __future__ import annotations

from pathlib import Path

PACKAGE_ROOT = Path(__file__).resolve().parent


def _conf_dir() -> Path:
    for cand in (PACKAGE_ROOT / "conf", PACKAGE_ROOT.parent / "conf"):
        if (cand / "config.yaml").is_file():
            return cand
    raise RuntimeError(f"testnav: no conf/ (config.yaml) in {PACKAGE_ROOT} or beside it: a broken install")


CONF = _conf_dir()
