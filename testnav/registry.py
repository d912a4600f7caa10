"""Plug-ins by name: one constructor per kind, as timm's `create_model` / `list_models`.

A kind (searches, fidelity metrics) is a conf/ group: one YAML per plug-in, whose `_target_`
names its class and whose keys are its settings, the only place their defaults are written
(the classes declare none: tests/helpers/contracts.py `check_defaults_written_once`). `make(name, **overrides)`
composes that YAML with Hydra (its `defaults:` list included), applies the overrides and
instantiates it; `names()` lists the group. Keys a plug-in declares about itself rather than
for its constructor (a label, the figures it belongs to) are `meta`: read by `info`, never
passed to the class. The app hands `make` the node Hydra already composed from the command
line (and any --config-dir), so a plug-in is built the same way from every entry point.
"""

from __future__ import annotations

import contextlib
from functools import cache

from omegaconf import DictConfig, OmegaConf

from .errors import UserError
from .paths import CONF


@contextlib.contextmanager
def isolated_hydra():
    """Compose outside whatever Hydra app is running (run.py's own, a test's): Hydra's global
    state is set aside for the block and put back after it."""
    from hydra.core.global_hydra import GlobalHydra
    from hydra.core.singleton import Singleton

    saved = Singleton._instances.pop(GlobalHydra, None)
    try:
        yield
    finally:
        Singleton._instances.pop(GlobalHydra, None)
        if saved is not None:
            Singleton._instances[GlobalHydra] = saved


# old spellings still in scripts and docs, and short ones, → their key
ALIASES = {"search.stop_at": "certificate.stop_at", "query": "query.expr", "examples": "report.examples"}
# a benchmark's metrics and families by name hold only the settings it changes from conf/fidelity and
# conf/families (testnav.fidelity.metrics_for, testnav.families.make), so setting another one adds it
# (Hydra's ++); the metric or family itself checks the name
ADDED = ("benchmark.metrics.", "benchmark.signals.", "benchmark.families.")


def normalise(overrides) -> list[str]:
    """Command-line overrides as Hydra should read them: an old spelling under its key
    (`search.stop_at=0.95` is `certificate.stop_at=0.95`), and a setting of a benchmark's metric
    or family (`benchmark.metrics.kid.subsets=10`, `benchmark.families.0.params=[…]`) added where
    the benchmark's YAML does not set it."""
    out = []
    for a in overrides:
        key, sep, value = str(a).partition("=")
        bare = key.lstrip("+~")
        prefix = key[: len(key) - len(bare)]
        if sep and bare in ALIASES:
            a = f"{prefix}{ALIASES[bare]}{sep}{value}"
        elif sep and not prefix and bare.startswith(ADDED):
            a = f"++{bare}{sep}{value}"
        out.append(a)
    return out


def compose(config_dir, name: str, overrides=()) -> DictConfig:
    """conf file `name` of `config_dir` composed by Hydra (defaults list and overrides applied)."""
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir

    with isolated_hydra(), initialize_config_dir(config_dir=str(config_dir), version_base="1.3"):
        return hydra_compose(config_name=name, overrides=normalise(overrides))


def instantiate(node, **kwargs):
    """Hydra's instantiate, surfacing a UserError raised inside a constructor as itself (one
    line) instead of Hydra's wrapped, multi-line error; a plug-in whose extra is not installed is
    refused first, naming the `pip install 'testnav[…]'` (testnav/extras.py)."""
    from hydra.utils import instantiate as hydra_instantiate

    from .extras import check

    check(OmegaConf.to_container(node, resolve=False) if isinstance(node, DictConfig) else node)
    try:
        return hydra_instantiate(node, _convert_="all", **kwargs)
    except Exception as e:
        cause = e
        while cause is not None and not isinstance(cause, UserError):
            cause = cause.__cause__ or cause.__context__
        if cause is not None:
            raise cause from None
        raise


class Registry:
    """The plug-ins of one conf/ group, built by name."""

    def __init__(self, group: str, base: type, kind: str, meta: tuple[str, ...] = ()):
        self.group, self.base, self.kind, self.meta = group, base, kind, tuple(meta)

    def names(self) -> list[str]:
        """Every plug-in of the group (files starting with _ are templates)."""
        return sorted(p.stem for p in (CONF / self.group).glob("*.yaml") if not p.stem.startswith("_"))

    def info(self, name: str) -> dict:
        """The plug-in's composed YAML, metadata included (a fresh copy)."""
        if name not in self.names():
            raise UserError(f"unknown {self.kind} '{name}' (valid: {', '.join(self.names())})")
        return OmegaConf.to_container(_composed(self.group, name), resolve=True)

    def node(self, name, **overrides) -> dict:
        """The constructor's node: the composed YAML (or a node composed already, by the app's
        Hydra) without metadata, the overrides applied; an unknown setting is refused."""
        if isinstance(name, str):
            node = self.info(name)
        else:
            node = OmegaConf.to_container(name, resolve=True) if isinstance(name, DictConfig) else dict(name)
        for key in self.meta:
            node.pop(key, None)
        label = node.get("name", name if isinstance(name, str) else "?")
        for key, value in overrides.items():
            if key not in node:
                valid = ", ".join(k for k in node if not k.startswith("_"))
                raise UserError(f"{self.kind} {label} has no setting '{key}' (valid: {valid})")
            node[key] = value
        return node

    def make(self, name, **overrides):
        """Build the plug-in `name` (or an already composed node) with `overrides`."""
        obj = instantiate(self.node(name, **overrides))
        if not isinstance(obj, self.base):
            raise UserError(
                f"{self.kind} {name}: its _target_ builds a {type(obj).__name__}, not a {self.base.__name__}"
            )
        return obj


@cache
def _composed(group: str, name: str) -> DictConfig:
    return compose(CONF / group, name)
