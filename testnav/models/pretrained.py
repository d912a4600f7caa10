"""Hugging Face models on disk: a local save_pretrained() directory or a Hub id already in the cache
(never downloaded at run time), loaded with one-line errors and fingerprinted without reading every
byte. The text benchmarks, the code benchmarks and BERTScore load their models through here."""

from __future__ import annotations

import hashlib
from pathlib import Path

from ..errors import UserError


def resolve_pretrained(spec: str, what: str) -> str:
    """A local directory, or a Hub id already in the Hugging Face cache; a UserError otherwise."""
    if not spec:
        raise UserError(f"{what}: no model given (set a local directory or a Hugging Face id in the cache)")
    p = Path(str(spec)).expanduser()
    if p.is_dir():
        if not (p / "config.json").is_file():
            raise UserError(f"{what}: {p} has no config.json (expected a save_pretrained() directory)")
        return str(p)
    try:
        from huggingface_hub import snapshot_download

        return snapshot_download(str(spec), local_files_only=True)
    except Exception:
        raise UserError(
            f"{what}: '{spec}' is neither a local directory nor in the Hugging Face cache; on a machine "
            f"with network run `huggingface-cli download {spec}` and copy the cache (HF_HOME), or set "
            f"the path of a local copy"
        ) from None


def model_fingerprint(path: str) -> str:
    """Identifies weights without reading gigabytes: config, tokenizer files, and each weight file's
    size with a hash of its first and last MiB."""
    h = hashlib.sha256()
    root = Path(path)
    for f in sorted(root.rglob("*")):
        if not f.is_file() or f.name.startswith("."):
            continue
        h.update(str(f.relative_to(root)).encode())
        size = f.stat().st_size
        h.update(str(size).encode())
        with open(f, "rb") as fh:
            if size <= 2 << 20:
                h.update(fh.read())
            else:
                h.update(fh.read(1 << 20))
                fh.seek(size - (1 << 20))
                h.update(fh.read(1 << 20))
    return h.hexdigest()[:16]


def load_pretrained(loader, spec: str, what: str, **kwargs):
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # local files load in a second; the bar only buries a one-line error
    path = resolve_pretrained(spec, what)
    try:
        return loader.from_pretrained(path, local_files_only=True, **kwargs), path
    except UserError:
        raise
    except Exception as e:
        first = str(e).splitlines()[0] if str(e) else ""
        raise UserError(f"{what}: cannot load '{spec}' ({type(e).__name__}: {first})") from e
