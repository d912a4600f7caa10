"""Cache keys, atomic writes and a cross-process lock for expensive products.

A key hashes everything a product depends on, including the source of the code that
computes it, so a changed family, metric or recipe can never be served a stale table.
"""

from __future__ import annotations

import ast
import contextlib
import fcntl
import hashlib
import json
import logging
import os
import tempfile
from pathlib import Path

PACKAGE_ROOT = Path(__file__).resolve().parents[1]
log = logging.getLogger(__name__)


CACHE_ENV = "TESTNAV_CACHE"


def user_cache_dir(given=None) -> Path:
    """Where `Tester` keeps what it measured: `given` (its `cache_dir=`), else $TESTNAV_CACHE, else the
    platform's user cache folder (~/.cache/testnav on Linux, after $XDG_CACHE_HOME), never the folder the
    user happens to be in. The command line keeps its own `cache_dir` under `results_dir`."""
    if given is not None:
        return Path(given)
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    import platformdirs

    return Path(platformdirs.user_cache_dir("testnav", appauthor=False))


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


def code_digest(source: str) -> str:
    """A module's code as the interpreter sees it: the AST without docstrings (comments and
    layout are not in it), so editing prose never moves a cache key and editing code always does."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            node.body = body[1:] or [ast.Pass()]
    return hashlib.sha256(ast.dump(tree, include_attributes=False).encode()).hexdigest()


def package_imports(module: str) -> set[str]:
    """The testnav modules `module` imports, directly (relative or absolute imports)."""
    path = module_path(module)
    assert path is not None, module  # callers pass the package's own modules
    tree = ast.parse(path.read_text())
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            # `from pkg import mod` needs mod, not pkg's own code; `from mod import name` needs mod
            names = [f"{base}.{a.name}" if module_path(f"{base}.{a.name}") else base for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        out |= {n for n in names if n.split(".")[0] == "testnav" and module_path(n) is not None}
    return out


def module_path(module: str) -> Path | None:
    rel = Path(*module.split(".")[1:])
    for cand in (PACKAGE_ROOT / rel / "__init__.py", (PACKAGE_ROOT / rel).with_suffix(".py")):
        if cand.is_file():
            return cand
    return None


def source(module: str) -> str:
    """The code of one of the package's own modules."""
    path = module_path(module)
    assert path is not None, module
    return path.read_text()


def modules_digest(roots) -> tuple[str, list[str]]:
    """Digest of the code of the given testnav modules and every testnav module they import,
    transitively, each read as `code_digest`; with the sorted module list, for inspection."""
    seen, todo = set(), [m for m in roots if module_path(m) is not None]
    while todo:
        m = todo.pop()
        if m not in seen:
            seen.add(m)
            todo.extend(package_imports(m) - seen)
    h = hashlib.sha256()
    for m in sorted(seen):
        h.update(m.encode())
        h.update(code_digest(source(m)).encode())
    return h.hexdigest()[:16], sorted(seen)


def object_modules(*objects) -> set[str]:
    """The testnav modules defining the classes of these objects (and their testnav bases)."""
    return {c.__module__ for o in objects for c in type(o).__mro__ if c.__module__.split(".")[0] == "testnav"}


@contextlib.contextmanager
def atomic_path(final: Path, checksum: bool = False):
    """Yield a temporary path next to `final`; move it into place only if the block succeeds.

    With `checksum`, a `<name>.sha256` sidecar is written *before* the file is moved into place,
    so a cached product that exists always has the digest it must match (see `verified`).
    """
    final = Path(final)
    final.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=final.parent, prefix=f".{final.name}.", suffix=".tmp")
    os.close(fd)
    try:
        yield Path(tmp)
        os.chmod(tmp, 0o644)  # mkstemp creates 0600; cached products are meant to be shared
        if checksum:
            write_text_atomic(checksum_path(final), file_digest(Path(tmp)) + "\n")
        os.replace(tmp, final)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def checksum_path(path: Path) -> Path:
    return Path(path).with_name(Path(path).name + ".sha256")


def file_digest(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def verified(path: Path) -> bool:
    """Is a cached product present and intact? A file whose bytes no longer match the digest
    written with it (a bad disk, a truncated copy, a hand edit) is reported, removed and
    recomputed by the caller, instead of feeding wrong numbers downstream."""
    path = Path(path)
    if not path.exists():
        return False
    side = checksum_path(path)
    recorded = side.read_text().strip() if side.exists() else None
    if recorded == file_digest(path):
        return True
    why = "checksum mismatch" if recorded else "no checksum recorded"
    msg = f"cached file {path} is corrupted ({why}); removing it and recomputing"
    log.warning(msg)
    path.unlink(missing_ok=True)
    side.unlink(missing_ok=True)
    return False


def write_text_atomic(path: Path, text: str) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text)


def write_json_atomic(path: Path, payload, checksum: bool = False) -> None:
    with atomic_path(path, checksum) as tmp:
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
