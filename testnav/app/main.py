"""The command line: `testnav` (the console script), `python -m testnav` and `python run.py` are this
one Hydra app, from a checkout or an installed wheel, in any folder.

    testnav [KEY=VALUE …] [-m] [--config-dir DIR]   a run (or a sweep) of the packaged config (conf/)
    testnav figures [--results DIR] …               the figures, tables and report of the runs under a folder
    testnav report RUN_DIR                          what breaks the model: the findings of a finished run
    testnav --help                                  stages, config groups, keys and examples

Outputs go under ./results of the folder it runs in (`results_dir=…` moves them). Before Hydra starts,
the overrides are normalised (old spellings, a benchmark's metric or family settings) and checked
(`cli.precheck`: a bad value, key or missing extra is one line and exit 2).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from omegaconf import OmegaConf

from ..paths import CONF, DOCS
from ..registry import normalise
from .cli import (
    BUILTIN_LAUNCHERS,
    GROUPS,
    config_dirs,
    group_options,
    guarded,
    precheck,
    quote_free_text,
    register_resolvers,
    survive_own_requeue,
)

# At import, not in main(): a SLURM job unpickles `run` by reference, importing this module, and its
# Hydra resolves the sweep's subdir (`${testnav_run:…}`) before the task starts.
register_resolvers()

# stage=… → one line for --help; tests hold its keys to stages.STAGES
STAGE_HELP = {
    "search": "replay a search against the benchmark's ground truth (computed first if absent): Recall@P*, AUC",
    "groundtruth": "compute (or resume) the ground-truth table of every configuration; groundtruth.shards/shard",
    "live": "no table: run the model on each configuration the search proposes; the ranked list R",
    "compare": "the model against a baseline run (compare.baseline=RUN_DIR): paired tests; exit 1 past compare.max_drop, 3 undecided",
    "grid": "the NSGA-II hyperparameter grid of TestNav §3.3 (experiment=testnav_grid)",
    "tomography": "TestifAI: measure the tests of order ≤ 2, predict the rest",
    "query": "TestifAI: R(Q) of a Boolean query, e.g. query='brightness >= 3 & zoom <= 1'",
    "study": "TestifAI's §5 studies → tables",
    "check": "pre-flight: load every artifact, clean ψ(D) against the paper's value",
    "scan": "what breaks the model: clean accuracy, families, interactions, failure modes → findings.html",
}

EXAMPLES = (  # the arguments after the program's name, and what they do
    ("", "the embedded default: mnist5k · SSIM · NSGA-II · seed 0; it ends with what breaks the model"),
    ("stage=scan", "what breaks the model, in full: findings.html in the run directory"),
    ("fidelity=kid search=random seed=3", "another fidelity metric, search and seed"),
    ("-m search=nsga2,random seed='range(10)'", "a sweep (Hydra multirun)"),
    ("stage=live search=nsga2 budget=200 certificate.stop_at=0.95", "a live search, stopped by the certificate"),
    ("stage=query query='brightness >= 3 & zoom <= 1'", "TestifAI: a query answered by tomography"),
    ("stage=compare compare.baseline=RUN_DIR compare.max_drop=0.02", "the regression gate against a kept run"),
    ("groundtruth.table=my.csv search=nsga2", "replay on any table (t1..tn, delta, rho)"),
    ("--config-dir my_conf benchmark=my_bench stage=live", "your own benchmark YAML beside the packaged ones"),
    ("stage=check benchmark=cifar10 benchmark.data.root=/data", "pre-flight of a paper benchmark"),
    ("-m experiment=testnav_methods hydra/launcher=slurm_cpu", "a sweep as SLURM jobs (testnav[slurm])"),
    ("figures --results results/runs", "figures, tables and report.md of the runs under a folder"),
)


def run(cfg):
    """The Hydra task: one run of the stage `cfg.stage` in Hydra's run directory."""
    from hydra.core.hydra_config import HydraConfig

    from . import stages

    out_dir = Path(HydraConfig.get().runtime.output_dir)
    survive_own_requeue()  # the job's own `scontrol requeue` must outlive the SIGTERM it brings
    return guarded(lambda: stages.main(cfg, out_dir), lambda: out_dir)


def main(argv: list[str] | None = None, prog: str | None = None):
    """The app on `argv` (default sys.argv[1:]): `figures …`, `--help`, or a Hydra run or sweep."""
    argv = [str(a) for a in (sys.argv[1:] if argv is None else argv)]
    prog = prog or program()
    if argv[:1] == ["figures"]:
        from .figures import main as figures

        return figures(argv[1:], prog=f"{prog} figures")
    if argv[:1] == ["report"]:
        from .scan_report import main as report

        return guarded(lambda: report(argv[1:], prog=f"{prog} report"), lambda: None)
    if {"-h", "--help"} & set(argv):
        print(usage(argv, prog))
        return 0
    # the command owns its process: nothing it runs reaches the Hugging Face Hub (its loads are local)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    argv = normalise(quote_free_text(argv))
    precheck(argv, CONF)
    import hydra

    sys.argv = [sys.argv[0] if sys.argv else prog, *argv]
    return hydra.main(config_path=str(CONF), config_name="config", version_base="1.3")(run)()


def console() -> None:
    """The `testnav` console script."""
    sys.exit(main(prog="testnav"))


def program() -> str:
    """How the user started it, for the help text."""
    name = Path(sys.argv[0]).name if sys.argv and sys.argv[0] else "testnav"
    return {"run.py": "python run.py", "__main__.py": "python -m testnav", "-c": "testnav"}.get(name, name)


GUIDES = (  # the installed docs --help names, and what each is for
    ("your-model.md", "your own model: Tester, scan, compare, query, the command line"),
    ("tomonav.md", "the search and its stopping certificate"),
    ("tomography.md", "TestifAI: tomography, queries, the robustness gate"),
    ("families.md", "the perturbation families and their severities"),
    ("reproducibility.md", "the papers' numbers: make reproduce"),
)


def docs_lines() -> list[str]:
    """Where the installed guides are (a wheel ships docs/ inside the package)."""
    if DOCS is None:
        return ["docs: README.md and docs/your-model.md of the project (not installed here)."]
    return [
        f"docs (installed, in {DOCS}):",
        *(f"  {name:<20} {text}" for name, text in GUIDES if (DOCS / name).is_file()),
    ]


def usage(argv: list[str], prog: str) -> str:
    """The help text: usage, stages, config groups (over --config-dir too), keys and examples."""
    dirs, _ = config_dirs(argv, CONF)
    root = OmegaConf.load(CONF / "config.yaml")
    defaults = {k: v for d in root.defaults if isinstance(d, dict) or OmegaConf.is_dict(d) for k, v in d.items()}
    lines = [
        f"usage: {prog} [KEY=VALUE …] [-m] [--config-dir DIR] [--cfg job] [--hydra-help]",
        f"       {prog} figures [--results DIR] [--help]",
        f"       {prog} report RUN_DIR [--help]   (what breaks the model: findings.html of a finished run)",
        "",
        "Compositional robustness testing: TestNav (Pareto-guided search over compositions of perturbations)",
        "and TestifAI (partial tomography). The same app as `testnav`, `python -m testnav` and `python run.py`;",
        "outputs go under ./results of this folder (results_dir=DIR moves them).",
        "",
        "stages (stage=…, default search):",
        *(f"  {name:<14} {text}" for name, text in STAGE_HELP.items()),
        "",
        "config groups (GROUP=OPTION; a,b,c sweeps with -m):",
    ]
    for group in GROUPS:
        options = group_options(dirs, group)
        default = defaults.get(group)
        shown = [f"{o} (default)" if o == default else o for o in options]
        lines.append(f"  {group:<14} {', '.join(shown) or '—'}")
    launchers = sorted(set(group_options(dirs, "hydra/launcher")) | set(BUILTIN_LAUNCHERS))
    lines.append(f"  {'hydra/launcher':<14} {', '.join(o + ' (default)' if o == 'basic' else o for o in launchers)}")
    blocks = [
        k.split("@", 1)[1] for d in root.defaults if not isinstance(d, str) for k in d if k.startswith("settings@")
    ]
    keys = [k for k in root if k not in ("defaults", "hydra")] + [f"{b}.…" for b in blocks]
    lines += [
        "",
        f"keys (KEY=VALUE, any nested key too, e.g. benchmark.levels=3): {', '.join(keys)}",
        "",
        "examples:",
        *(line for args, text in EXAMPLES for line in (f"  # {text}", f"  {prog} {args}".rstrip())),
        "",
        *docs_lines(),
        "`--cfg job` prints the composed config.",
    ]
    return "\n".join(lines)
