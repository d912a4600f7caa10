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
# the user's guides: inside the package in a wheel (testnav/docs, package data), beside it in a checkout
DOCS = next((d for d in (PACKAGE_ROOT / "docs", PACKAGE_ROOT.parent / "docs") if (d / "your-model.md").is_file()), None)


def conf_defaults(path: str):
    """Class decorator, under `@dataclass`: each annotated field gets the value conf/<path>.yaml
    holds as its default (a list as a tuple), so the YAML is the one place a default is written. A
    value the YAML sets by stage (`${testnav_live:${stage},A,B}`, certificate.epsilon) is B, its
    value on every stage but live (`conf_values(path, names, "live")` reads A)."""

    def apply(cls):
        for name, value in conf_values(path, list(cls.__annotations__)).items():
            setattr(cls, name, value)
        return cls

    return apply


def conf_values(path: str, names, stage: str | None = None) -> dict:
    """The values conf/<path>.yaml holds for `names` on `stage` (None: every stage but live), as a
    composed config resolves them; a list as a tuple. The stage's resolver is the app's
    (testnav/app/cli.py), lent for the read."""
    node = OmegaConf.create({"stage": stage, "conf": OmegaConf.load(CONF / f"{path}.yaml")})
    with _lent_resolver("testnav_live", lambda stage, live, other: live if stage == "live" else other):
        values = {name: node.conf[name] for name in names}
    return {name: tuple(v) if isinstance(v, ListConfig) else v for name, v in values.items()}


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
