"""Command-line guard rails: turn every user mistake into one line and a non-zero exit.

Hydra reports a bad group option or a misspelt key over several lines with a pointer to
HYDRA_FULL_ERROR; we check the overrides first against the composed search path (conf/ and
the user's own config directories) and name the bad value and the valid ones; keys are
checked against the config as composed with the selected options (e.g. the chosen benchmark). Errors raised inside a run remove that run's directory, so nothing
half-written is left under results/.
"""

from __future__ import annotations

import itertools
import os
import re
import shutil
import signal
import sys
from pathlib import Path

from omegaconf import OmegaConf

from ..errors import BelowThreshold, UserError
from ..extras import check as check_extras
from ..extras import require
from ..tomography.gate import Undecided

GROUPS = ("benchmark", "fidelity", "search", "experiment")
BUILTIN_LAUNCHERS = ("basic", "submitit_local", "submitit_slurm")  # Hydra's own, beside conf/hydra/launcher/


def fail(message: str, code: int = 2):
    print(f"error: {message}", file=sys.stderr)
    sys.exit(code)


# keys whose values are expressions or configurations, not Hydra override syntax
FREE_TEXT = ("query", "query.expr", "examples", "report.examples", "compare.baseline")


def quote_free_text(argv: list[str]) -> list[str]:
    """`query='brightness >= 3 & zoom <= 1'` reaches us without the shell's quotes; Hydra's
    override grammar would choke on >, = and &, so such values are passed as quoted strings."""
    out = []
    for a in argv:
        key, sep, value = a.partition("=")
        if sep and key in FREE_TEXT and not (value[:1] in "'\"" and value[-1:] == value[:1] and len(value) > 1):
            value = "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
        out.append(f"{key}{sep}{value}" if sep else a)
    return out


def sweep_values(value: str) -> list[str]:
    """Values of a simple sweep `a,b,c`; function-style sweeps (range(), choice()) are left to Hydra."""
    if "(" in value or "[" in value:
        return []
    return [v.strip() for v in value.split(",") if v.strip()]


def config_dirs(argv: list[str], conf_dir: Path) -> tuple[list[Path], list[str]]:
    """The config directories Hydra will compose from: the user's (`--config-dir DIR`, `-cd DIR`,
    `hydra.searchpath=[file://DIR,…]`) and the packaged conf/ last; and the search path entries
    to hand to compose (Hydra's own providers, e.g. pkg://, are passed through unexamined)."""
    dirs, entries = [], []
    for i, a in enumerate(argv):
        value = None
        if a in ("--config-dir", "-cd") and i + 1 < len(argv):
            value = argv[i + 1]
        elif a.startswith("--config-dir="):
            value = a.split("=", 1)[1]
        if value is not None:
            p = Path(value).expanduser().resolve()
            if not p.is_dir():
                fail(f"--config-dir {value}: no such directory")
            dirs.append(p)
            entries.append(f"file://{p}")
        key, sep, rest = a.partition("=")
        if sep and key.lstrip("+") == "hydra.searchpath":
            for item in (x.strip().strip("'\"") for x in rest.strip("[]").split(",")):
                if not item:
                    continue
                if item.startswith("file://") or "://" not in item:
                    p = Path(item.removeprefix("file://")).expanduser().resolve()
                    if not p.is_dir():
                        fail(f"hydra.searchpath entry {item}: no such directory")
                    dirs.append(p)
                    entries.append(f"file://{p}")
                else:
                    entries.append(item)
    return dirs + [conf_dir], entries


def group_options(dirs: list[Path], group: str) -> list[str]:
    """Every option of a config group over the search path (files starting with _ are templates)."""
    return sorted({p.stem for d in dirs for p in (d / group).glob("*.yaml") if not p.stem.startswith("_")})


def precheck(argv: list[str], conf_dir: Path) -> None:
    from hydra import compose, initialize_config_dir

    dirs, searchpath = config_dirs(argv, conf_dir)
    overrides = [
        a for a in argv if "=" in a and not a.startswith("-") and not a.lstrip("+").startswith("hydra.searchpath=")
    ]
    choices = {}
    for o in overrides:
        key, value = o.split("=", 1)
        key = key.lstrip("+~")
        if key in GROUPS:
            valid = group_options(dirs, key)
            for v in sweep_values(value):
                if v not in valid:
                    fail(f"unknown {key} '{v}' (valid: {', '.join(valid)})")
            vals = sweep_values(value)
            if vals:
                choices[key] = vals
        if key == "hydra/launcher":
            valid = sorted(set(group_options(dirs, key)) | set(BUILTIN_LAUNCHERS))
            if value not in valid:
                fail(f"unknown hydra/launcher '{value}' (valid: {', '.join(valid)})")
            if submitit_launcher(dirs, value):
                one_line(require, "slurm", f"hydra/launcher={value}")
    extra = [f"hydra.searchpath=[{','.join(searchpath)}]"] if searchpath else []
    for combo in itertools.product(*choices.values()):
        picked = dict(zip(choices, combo))
        try:
            with initialize_config_dir(config_dir=str(conf_dir), version_base="1.3"):
                cfg = compose(
                    config_name="config",
                    overrides=extra + [f"{k}={v}" for k, v in picked.items()],
                    return_hydra_config=True,
                )
        except Exception as e:  # a broken user config: Hydra's message, on one line
            where = ", ".join(f"{k}={v}" for k, v in picked.items()) or "the defaults"
            if "submitit" in str(e):  # a preset's launcher whose plug-in is not installed
                one_line(require, "slurm", where)
            fail(f"cannot compose {where}: {' '.join(str(e).split())}")
        tree = OmegaConf.to_container(cfg, resolve=False)
        hydra_node = tree.pop("hydra")
        chosen = hydra_node["runtime"]["choices"]
        for group in ("benchmark", "fidelity"):  # before any work: a plug-in whose extra is missing
            one_line(check_extras, tree.get(group), f"{group}={chosen.get(group)}")
        one_line(check_extras, hydra_node.get("launcher"), f"hydra/launcher={chosen.get('hydra/launcher')}")
        check_keys(overrides, tree, picked)
        check_shards(overrides, cfg, multirun=bool({"-m", "--multirun"} & set(argv)))


def submitit_launcher(dirs: list[Path], name: str) -> bool:
    """Whether hydra/launcher=`name` runs through submitit (Hydra's submitit_* or a preset built on one)."""
    if name.startswith("submitit_"):
        return True
    return any(
        "submitit" in (d / "hydra" / "launcher" / f"{name}.yaml").read_text()
        for d in dirs
        if (d / "hydra" / "launcher" / f"{name}.yaml").is_file()
    )


def one_line(check, *args) -> None:
    """Run `check(*args)`; a UserError it raises becomes the one-line error and exit 2."""
    try:
        check(*args)
    except UserError as e:
        fail(str(e))


def check_shards(overrides: list[str], cfg, multirun: bool) -> None:
    """groundtruth.shard values against groundtruth.shards before any job is submitted: on a
    cluster a bad index would otherwise fail inside the job, as a long remote traceback."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    keys = ("groundtruth.shards", "groundtruth.shard")
    swept = [f"{k}={v}" for k, v in (cfg.hydra.sweeper.get("params") or {}).items() if k in keys] if multirun else []
    values = {k: [OmegaConf.select(cfg, k)] for k in keys}
    try:
        for o in OverridesParser.create().parse_overrides(swept + [o for o in overrides if o.split("=", 1)[0] in keys]):
            values[o.key_or_group] = list(o.sweep_iterator()) if o.is_sweep_override() else [o.value()]
    except Exception:
        return  # Hydra reports its own syntax errors
    for shards in values["groundtruth.shards"]:
        if isinstance(shards, bool) or not isinstance(shards, int) or shards < 1:
            fail(f"groundtruth.shards={shards}: must be a whole number ≥ 1")
        for shard in values["groundtruth.shard"]:
            if isinstance(shard, bool) or not isinstance(shard, int) or not 0 <= shard < shards:
                fail(f"groundtruth.shard={shard} with groundtruth.shards={shards} (valid: 0..{shards - 1})")
        left = sorted(set(range(shards)) - set(values["groundtruth.shard"]))
        if multirun and shards > 1 and left:
            print(
                f"note: shards {left} of groundtruth.shards={shards} are not in this sweep; the table is merged "
                f"once they have run too (sweep groundtruth.shard='range({shards})')",
                file=sys.stderr,
            )


def check_keys(overrides: list[str], tree: dict, picked: dict) -> None:
    for o in overrides:
        key = o.split("=", 1)[0]
        if key.startswith(("+", "~", "hydra.", "hydra/")) or key in GROUPS or not re.fullmatch(r"[\w.]+", key):
            continue
        node, parent = tree, []
        for part in key.split("."):
            if isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            elif isinstance(node, dict) and part in node:
                node = node[part]
            else:
                keys = sorted(k for k in map(str, node) if not k.startswith("_")) if isinstance(node, dict) else []
                where = ".".join(parent) or "top level"
                group = parent[0] if parent and parent[0] in picked else None
                context = f" with {group}={picked[group]}" if group else ""
                fail(
                    f"unknown config key '{key}'{context} (valid at {where}: {', '.join(keys) or 'none'}; "
                    f"use +{key}=… to add a new key)"
                )
            parent.append(part)


def survive_own_requeue() -> None:
    """In a submitit SLURM job, ignore SIGTERM outright, so that every child inherits the ignore.

    At a time limit submitit requeues the job by running `scontrol requeue` from within it, and
    SLURM then sends SIGTERM to every process of the job: when that reaches scontrol before it
    exits, submitit records the requeue as failed (`scontrol … died with SIGTERM`) and the sweep
    ends with an error instead of resuming (`make test-slurm` caught it). The job itself
    ignored SIGTERM already (submitit's handler only logs it); SLURM's SIGKILL after KillWait
    still ends whatever is left."""
    if os.environ.get("SUBMITIT_EXECUTOR") == "slurm":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)


def guarded(task, out_dir_of):
    """Run `task()`. On a failed gate (BelowThreshold) exit 1 with its one line, on an undecided one
    (Undecided) exit 3, the outputs kept;
    on a UserError remove the run directory it created and exit 2 with one line;
    on any other failure (a bug, Ctrl-C) keep the directory for the post-mortem but mark it with a
    FAILED file holding the traceback, so no folder looks like a finished run."""
    try:
        return task()
    except BelowThreshold as e:  # a gate that failed: the run's outputs stay (the report is what CI shows)
        fail(str(e), code=1)
    except Undecided as e:  # a gate that could not decide on its interval
        fail(str(e), code=3)
    except UserError as e:
        out_dir = out_dir_of()
        if out_dir is not None and Path(out_dir).exists():
            shutil.rmtree(out_dir, ignore_errors=True)
        fail(str(e))
    except (Exception, KeyboardInterrupt):
        out_dir = out_dir_of()
        if out_dir is not None and Path(out_dir).is_dir():
            import traceback

            from ..core.cache import write_text_atomic

            write_text_atomic(Path(out_dir) / FAILED, traceback.format_exc())
        raise


FAILED = "FAILED"  # beside a run directory's files when the run raised


def register_resolvers() -> None:
    """The resolvers conf/ uses, registered by the app before Hydra resolves them (run.py;
    importing testnav registers nothing): `${testnav_run:…}` names run folders (conf/config.yaml's
    hydra.run.dir and sweep subdir); `${testnav_searches:g1,g2}` and `${testnav_fidelities:modality}`
    are the registries' lists, comma-joined for a sweep (the paper presets in conf/experiment);
    `${testnav_live:${stage},A,B}` is A on stage=live and B otherwise (conf/settings/certificate.yaml)."""
    from .. import fidelity, searches

    resolvers = {
        "testnav_run": run_name,
        "testnav_searches": lambda *groups: ",".join(
            dict.fromkeys(n for g in groups or searches.GROUPS for n in searches.group(g))
        ),
        "testnav_fidelities": lambda modality: ",".join(fidelity.names(modality)),
        # ${testnav_live:${stage},A,B}: A on stage=live, B on every other stage (certificate.epsilon's default)
        "testnav_live": lambda stage, live, other: live if stage == "live" else other,
    }
    for name, fn in resolvers.items():
        if not OmegaConf.has_resolver(name):
            OmegaConf.register_new_resolver(name, fn)


def run_name(stage, benchmark, fidelity, search, seed) -> str:
    """A run folder's name (the `testnav_run` resolver in conf/config.yaml): search runs (replay and
    live) by benchmark, fidelity, search and seed, as the figure scanners read them; every other
    stage by benchmark and stage, since fidelity and search play no part in it."""
    if stage in ("search", "live"):
        return f"{benchmark}_{fidelity}_{search}_s{seed}"
    return f"{benchmark}_{stage}"
