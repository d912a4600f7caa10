"""Reusable contract harnesses, as torchmetrics' MetricTester: what every plug-in of a kind must
do, checked on one plug-in at a time. tests/unit/registry/test_contracts.py runs them over everything the
registries list (`testnav.searches.names()`, `testnav.fidelity.names()`, `testnav.signals.names()`,
every table of `testnav.families.tables()`), so a new plug-in is tested with no list to edit."""

from __future__ import annotations

import dataclasses
import inspect

import numpy as np
import torch
from hydra.utils import get_class

from testnav.core.oracle import TableOracle
from testnav.core.table import Objectives
from testnav.groundtruth.synthetic import synthetic_table
from testnav.searches import Search, Style

# settings every plug-in has that are not defaults of its behaviour
NOT_SETTINGS = {"name", "label", "style", "self"}


def python_defaults(cls) -> dict:
    """The keyword defaults of `cls.__init__` (its own and, through **params, its bases'), and of
    the frozen dataclass its settings are read into, where it declares one (`settings`, as TomoNav)."""
    out = {}
    settings = getattr(cls, "settings", None)
    if dataclasses.is_dataclass(settings):
        out.update({f.name: f.default for f in dataclasses.fields(settings)})
    for klass in reversed(cls.__mro__):
        init = klass.__dict__.get("__init__")
        if init is None:
            continue
        for p in inspect.signature(init).parameters.values():
            if p.default is not inspect.Parameter.empty and p.name not in NOT_SETTINGS:
                out[p.name] = p.default
    return out


def same(a, b) -> bool:
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b or (isinstance(a, float) and isinstance(b, float) and np.isclose(a, b, rtol=0, atol=0))


def check_defaults_agree(node: dict, where: str) -> None:
    """The YAML is the single source of a plug-in's defaults: every setting its class defaults
    in Python must be in the YAML, with the same value (a variant YAML, one whose `name` is not the
    class's own, may differ: `delta_only` is NSGA-II with other objectives)."""
    cls = get_class(node["_target_"])
    own = inspect.signature(cls.__init__).parameters.get("name")
    if own is not None and own.default is not inspect.Parameter.empty and node.get("name") != own.default:
        return  # a named variant of another plug-in's class
    for key, value in python_defaults(cls).items():
        assert key in node, f"{where}: {cls.__name__}'s setting {key}={value!r} is not in its YAML"
        assert same(node[key], value), f"{where}: {key} is {node[key]!r} in the YAML but {value!r} in {cls.__name__}"


# ------------------------------------------------------------------------------------------ searches


def small_oracle(signals=()) -> TableOracle:
    df = synthetic_table("pairs", n=3, levels=4, seed=1)
    rng = np.random.default_rng(0)
    for s in signals:
        df[s] = rng.random(len(df))
    return TableOracle(Objectives.from_table(df, "rho", 1.0, signals=signals))


def check_search(make, info, name: str, budget: int = 60) -> None:
    """Built by name; labelled and styled as its YAML says; runs in replay on a small table within
    its budget, proposing valid indices, the same ones for the same seed."""
    search = make(name)
    assert isinstance(search, Search) and search.name == name
    shown = info(name)
    assert (search.label, search.style) == (shown.label, shown.style) and isinstance(shown.style, Style)
    assert set(search.requires) <= set(search.objectives) and "delta" not in search.requires
    assert search.replay_only is False, f"{name}: its default settings must run live too"
    runs = []
    for _ in range(2):
        s = make(name)
        oracle = small_oracle(s.requires)
        s.fit(oracle.lattice, budget)
        s.check(oracle.lattice, budget)
        runs.append(s.run(oracle, budget, seed=3))
    a = runs[0]
    assert len(a) <= budget and a.dtype.kind == "i" and ((0 <= a) & (a < oracle.lattice.size)).all()
    assert np.array_equal(a, runs[1]), f"{name} is not deterministic per seed"


# ------------------------------------------------------------------------------------------ families


def check_family(family, x: torch.Tensor, levels: int) -> None:
    """Level 0 is the identity; every level keeps shape, dtype and [0, 1] (images), changes the
    input, and is reproducible from the generator's seed; a random family changes with it."""

    def gen(seed):
        return torch.Generator().manual_seed(seed)

    assert family(x, 0, gen(0)) is x
    for level in range(1, levels + 1):
        out = family(x, level, gen(3))
        assert out.shape == x.shape and out.dtype == x.dtype, (family.name, level)
        assert out.min() >= 0 and out.max() <= 1, (family.name, level)
        assert torch.equal(out, family(x, level, gen(3))), f"{family.name} level {level} is not reproducible"
        assert not torch.equal(out, x), f"{family.name} level {level} leaves the input unchanged"
    if family.random:
        assert not torch.equal(family(x, levels, gen(1)), family(x, levels, gen(2)))
