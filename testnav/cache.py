"""Cache keys, atomic writes and a cross-process lock for expensive products.

A key hashes everything a product depends on, including the source of the code that
computes it, so a changed family, metric or recipe can never be served a stale table.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import tempfile
from pathlib import Path

PACKAGE_ROOT = Path(__file__).resolve().parent


def stable_hash(payload, length: int = 16) -> str:
    text = json.dumps(payload, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:length]


def source_hash(*relative_paths: str) -> str:
    """Hash of the package source files (or whole sub-packages) a product depends on."""
    h = hashlib.sha256()
    for rel in relative_paths:
        p = PACKAGE_ROOT / rel
        files = sorted(p.rglob("*.py")) if p.is_dir() else [p]
        for f in files:
            h.update(str(f.relative_to(PACKAGE_ROOT)).encode())
            h.update(f.read_bytes())
    return h.hexdigest()[:16]


@contextlib.contextmanager
def atomic_path(final: Path):
    """Yield a temporary path next to `final`; move it into place only if the block succeeds."""
    final = Path(final)
    final.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=final.parent, prefix=f".{final.name}.", suffix=".tmp")
    os.close(fd)
    try:
        yield Path(tmp)
        os.chmod(tmp, 0o644)  # mkstemp creates 0600; cached products are meant to be shared
        os.replace(tmp, final)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def write_json_atomic(path: Path, payload) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(payload, indent=2, sort_keys=False, default=str) + "\n")


@contextlib.contextmanager
def file_lock(path: Path):
    """Exclusive advisory lock: concurrent processes needing the same product wait here."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)
