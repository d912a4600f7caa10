"""Where the package's configuration lives, found in one place.

A checkout (and an editable install) keeps conf/ beside the package; a wheel ships the same files
inside it as testnav/conf (pyproject.toml's package data), so composing a config works either way.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from omegaconf import ListConfig, OmegaConf

PACKAGE_ROOT = Path(__file__).resolve().parent


def _conf_dir() -> Path:
    for cand in (PACKAGE_ROOT / "conf", PACKAGE_ROOT.parent / "conf"):
        if (cand / "config.yaml").is_file():
            return cand
    raise RuntimeError(f"testnav: no conf/ (config.yaml) in {PACKAGE_ROOT} or beside it: a broken install")


CONF = _conf_dir()


def conf_defaults(path: str):
    """Class decorator, under `@dataclass`: each annotated field gets the value conf/<path>.yaml
    holds as its default (a list as a tuple), so the YAML is the one place a default is written. A
    value the YAML sets by stage (`${testnav_live:${stage},A,B}`, certificate.epsilon) is B, its
    value on every stage but live; the resolver is the app's (testnav/app/cli.py), lent for the read."""

    def apply(cls):
        node = OmegaConf.create({"stage": None, "conf": OmegaConf.load(CONF / f"{path}.yaml")})
        with _lent_resolver("testnav_live", lambda stage, live, other: live if stage == "live" else other):
            for name in cls.__annotations__:
                value = node.conf[name]
                setattr(cls, name, tuple(value) if isinstance(value, ListConfig) else value)
        return cls

    return apply


@contextlib.contextmanager
def _lent_resolver(name: str, fn):
    """OmegaConf resolver `name` for the block, unless one is registered already (importing testnav
    leaves the process's resolvers as they were)."""
    lent = not OmegaConf.has_resolver(name)
    if lent:
        OmegaConf.register_new_resolver(name, fn)
    try:
        yield
    finally:
        if lent:
            OmegaConf.clear_resolver(name)
