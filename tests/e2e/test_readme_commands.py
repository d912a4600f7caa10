"""Every `python run.py …` command in the README's code blocks composes as written (Hydra's compose
API, nothing computed), for every benchmark it names (a `for B in …` loop is unrolled) and every
value it sweeps (its own `a,b` and `range(n)` overrides and an experiment preset's sweeper params):
the config groups and keys exist, the fidelity metric is a column of the benchmark, and a search's
objectives are δ, ρ or a signal the benchmark defines, as a run would need."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.utils import get_class
from omegaconf import OmegaConf

from testnav import fidelity
from testnav.app.cli import quote_free_text
from testnav.paths import CONF

README = Path(__file__).resolve().parents[2] / "README.md"
OBJECTIVES = {"delta", "rho"}


def readme_commands(text: str) -> list[str]:
    """`python run.py …` lines of the bash code blocks, comments and a trailing `&` dropped, with
    each `for B in X Y; do … done` loop unrolled into one command per value."""
    out = []
    for block in re.findall(r"```bash\n(.*?)```", text, re.S):
        loop: list[tuple[str, list[str]]] = []
        for line in block.replace("\\\n", " ").splitlines():  # continuation lines joined
            line = line.split(" #", 1)[0].strip()
            if line.startswith("#"):
                continue
            m = re.match(r"for (\w+) in (.+?); do$", line)
            if m:
                loop.append((m.group(1), m.group(2).split()))
                continue
            if line.startswith("done"):
                loop.pop()
                continue
            if not line.startswith("python run.py"):
                continue
            line = line.rstrip("&").strip()
            if loop:
                name, values = loop[-1]
                out += [line.replace(f"${name}", v) for v in values]
            else:
                out.append(line)
    return out


def sweep_values(override) -> list[str]:
    """The values one parsed override takes: one, or each of a sweep's (a,b / range(n))."""
    if not override.is_sweep_override():
        return [override.get_value_element_as_str()]
    return [str(v) for v in override.sweep_string_iterator()]


GROUPS = ("benchmark", "fidelity", "search", "experiment")  # what decides whether a run can start


def expand(overrides: list[str]) -> list[list[str]]:
    """Override lists covering every value of each swept config group, one group at a time (the
    others at their first value); a swept plain key (seed, a shard) takes its first value only."""
    parsed = OverridesParser.create().parse_overrides(overrides)
    keys = [o.get_key_element() for o in parsed]
    values = [sweep_values(o) for o in parsed]
    base = [v[0] for v in values]
    combos = [base]
    for i, (k, vs) in enumerate(zip(keys, values)):
        if k in GROUPS:
            combos += [base[:i] + [v] + base[i + 1 :] for v in vs[1:]]
    return [[f"{k}={v}" for k, v in zip(keys, combo)] for combo in combos]


def problems(cfg) -> list[str]:
    bench = cfg.benchmark
    found = []
    reads = OmegaConf.select(cfg, "stage") in ("search", "live")  # the stages that read a fidelity and a search
    table = OmegaConf.select(cfg, "groundtruth.table")
    computed = fidelity.columns_for(get_class(bench._target_).modality, bench.get("metrics"))
    if reads and table is None and cfg.fidelity.name not in computed:
        found.append(f"fidelity {cfg.fidelity.name}: no '{cfg.fidelity.name}' metric in benchmark {bench.name}")
    wanted = set(OmegaConf.select(cfg, "search.objectives", default=[]) or []) - OBJECTIVES
    missing = wanted - set(bench.get("signals") or {})
    if missing and reads:
        found.append(
            f"search {cfg.search.name} needs signal(s) {sorted(missing)}, not defined by benchmark {bench.name}"
        )
    return found


def composed(command: str) -> list[tuple[list[str], list[str]]]:
    """(overrides, problems) for every combination the command runs (one for a single run)."""
    args = quote_free_text(shlex.split(command)[2:])  # as run.py hands a query's expression to Hydra
    multirun = "-m" in args
    overrides = [a for a in args if a not in ("-m", "--multirun")]
    out = []
    for combo in expand(overrides) if multirun else [overrides]:
        cfg = compose(config_name="config", overrides=combo, return_hydra_config=True)
        params = OmegaConf.select(cfg, "hydra.sweeper.params", default=None) if multirun else None
        extra = [f"{k}={v}" for k, v in (params or {}).items() if not any(c.startswith(f"{k}=") for c in combo)]
        for more in expand(extra) if extra else [[]]:
            full = combo + more
            c = compose(config_name="config", overrides=full) if more else cfg
            out.append((full, problems(c)))
    return out


def test_the_readme_commands_are_found():
    cmds = readme_commands(README.read_text())
    assert "python run.py" in cmds and "python run.py -m experiment=testnav_methods benchmark=qqp" not in cmds
    for b in ("tiny_imagenet", "qqp", "humaneval", "mbpp"):
        assert any(f"experiment=groundtruth_shards benchmark={b} " in c for c in cmds), b
        assert any(f"experiment=testnav_methods benchmark={b}" in c for c in cmds), b
    assert not any("$" in c for c in cmds)


def test_a_signal_search_on_a_benchmark_without_signals_is_caught():
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        found = composed("python run.py -m benchmark=qqp fidelity=chrf search=nsga2,kmnc")
    assert [p for _, p in found] == [[], ["search kmnc needs signal(s) ['kmnc'], not defined by benchmark qqp"]]


@pytest.mark.parametrize("command", readme_commands(README.read_text()))
def test_every_readme_command_composes(command):
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        results = composed(command)
    assert results
    bad = [f"{' '.join(o)}: {'; '.join(p)}" for o, p in results if p]
    assert not bad, "\n".join(bad[:5])
