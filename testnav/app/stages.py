"""Stage dispatch behind run.py: a newcomer can follow a run from here to summary.json.

stage=groundtruth → compute_groundtruth(benchmark)          → results/cache/groundtruth/*.parquet
                    (groundtruth.shards=k, groundtruth.shard=i: one of k jobs; the last one merges)
stage=search      → Objectives (table) → Search.run(Oracle) → trace, ranked list, summary.json
stage=live        → LiveOracle (the model, memoised) → Search.run(Oracle) → same outputs, no P*, and
                    record.parquet + record.json (what a later stage=compare needs)
stage=compare     → a baseline's record (compare.baseline=RUN_DIR) → its configurations on this model →
                    paired tests → comparison.csv, comparison.json, comparison.html, record.*; exit 1
                    when a drop beyond compare.max_drop is shown, 3 when the data cannot tell
stage=grid        → NSGA-II hyperparameter grid (§3.3)     → results/tables/grid*.csv, grid_selection.json
stage=tomography | query | study → TestifAI (testnav/app/tomography.py)
stage=check       → load every artifact, clean ψ(D) against the paper, throughput (testnav/app/check.py)
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from omegaconf import DictConfig

from .. import benchmarks, fidelity, pipeline, searches
from ..core.cache import write_json_atomic
from ..core.early_stopping import Stopping
from ..core.progress import resolve as resolve_progress
from ..core.table import Objectives, read_table
from ..errors import BelowThreshold, UserError
from ..groundtruth.compute import compute_groundtruth, read_meta
from ..pipeline.record import RunRecord, record_of
from ..pipeline.tomography import Undecided
from ..stopping.certificate import CertificateConfig, verdict
from . import reports
from .answer import print_answer, run_scan
from .memo import memo_dir, remember, restore, run_key

log = logging.getLogger(__name__)


def user_set_population() -> bool:
    """Did the command line set search.pop_size? Then it is kept (and checked), not fitted."""
    from hydra.core.hydra_config import HydraConfig

    try:
        tasks = HydraConfig.get().overrides.task if HydraConfig.initialized() else []
    except ValueError:
        tasks = []
    return any(o.lstrip("+~").startswith("search.pop_size=") for o in tasks)


def run_spec(cfg: DictConfig) -> pipeline.RunSpec:
    """The run the command line asks for (search, budget, seed, certificate, pricing)."""
    return pipeline.RunSpec(
        search=cfg.search,
        budget=cfg.budget,
        seed=cfg.seed,
        certificate=CertificateConfig.from_node(cfg.certificate),
        fit=not user_set_population(),
        pricing=Stopping.from_node(cfg.tomography),
        pricing_seed=int(cfg.tomography.seed),
    )


def load_objectives(cfg: DictConfig, fidelity: str, signals=()) -> tuple[Objectives, dict, object]:
    """Normalised (δ, ρ) over Θ (plus any extra signals), from an external table or the benchmark's
    ground truth; what identifies them; and the benchmark (None for an external table)."""
    if cfg.groundtruth.table:
        df = read_table(cfg.groundtruth.table)
        obj = Objectives.from_table(
            df, "rho", 1.0, source=f"groundtruth.table={cfg.groundtruth.table}", signals=signals
        )
        identity = {
            "benchmark": Path(cfg.groundtruth.table).stem,
            "fidelity": "rho",
            "table": str(Path(cfg.groundtruth.table).resolve()),
        }
        return obj, identity, None
    path, benchmark = pipeline.build_groundtruth(cfg, signals=bool(signals))  # the signals part only if read
    return *pipeline.groundtruth_objectives(path, benchmark, fidelity, signals), benchmark


def run_search(cfg: DictConfig, out_dir: Path) -> dict:
    spec = run_spec(cfg)
    search = searches.make(spec.search, **spec.overrides)
    if cfg.report.examples and cfg.groundtruth.table:
        raise UserError("examples=… shows a benchmark's inputs; a replay on groundtruth.table=… has none")
    if cfg.report.examples:  # checked before any work
        reports.named(cfg, benchmarks.make(cfg.benchmark))
    obj, identity, benchmark = load_objectives(cfg, cfg.fidelity.name, signals=search.requires)
    thetas = reports.named(cfg, benchmark) if benchmark is not None else []
    budget = pipeline.check_budget(cfg.budget, obj.lattice.size)
    memo = memo_dir(cfg, search.name, run_key(cfg, identity["table"], budget, search))
    if restore(cfg, memo, out_dir):  # this exact run finished before (an interrupted or repeated sweep)
        summary = json.loads((out_dir / "summary.json").read_text())
        run = pipeline.Run.load(out_dir, cfg.trace_format)
        written = reports.for_run(cfg, out_dir, run, benchmark, thetas=thetas)
        print(
            human_summary(summary, out_dir, f"trace.{cfg.trace_format}", written)
            + f"\n  (reused the finished run {memo})"
        )
        print_answer(cfg, benchmark)
        return summary
    # epsilon=auto reads ρ's resolution on the benchmark's data: opened for it (a table alone knows δ's only)
    auto = spec.certificate.epsilon == "auto" and benchmark is not None
    probe = (
        pipeline.RhoProbe(pipeline.open(benchmark, cfg.cache_dir, cfg.device), identity["fidelity"]) if auto else None
    )
    run = pipeline.replay(spec, obj, identity, benchmark.families if benchmark else None, probe=probe)
    run.save(out_dir, cfg.trace_format)
    remember(cfg, out_dir, memo)
    written = reports.for_run(cfg, out_dir, run, benchmark, thetas=thetas)
    print(human_summary(run.summary, out_dir, f"trace.{cfg.trace_format}", written))
    print_answer(cfg, benchmark)  # what breaks the model: the last lines a person reads
    return run.summary


def run_live(cfg: DictConfig, out_dir: Path) -> dict:
    spec = run_spec(cfg)
    benchmark = benchmarks.make(cfg.benchmark)
    search, budget = pipeline.search_for(spec, benchmark.lattice, live=True)  # refused before the model loads
    thetas = reports.named(cfg, benchmark)
    try:
        session = pipeline.open(benchmark, cfg.cache_dir, cfg.device)
    except UserError:
        raise
    except Exception as e:
        first = str(e).splitlines()[0] if str(e) else ""
        raise UserError(
            f"live search: benchmark {benchmark.name} cannot be loaded ({type(e).__name__}: {first})"
        ) from e
    run = pipeline.live(spec, session, cfg.fidelity.name, progress=cfg.progress)
    run.save(out_dir, cfg.trace_format)
    record_of(session, cfg.fidelity.name, name=benchmark.name).save(out_dir)  # a later stage=compare's baseline
    written = reports.for_run(cfg, out_dir, run, benchmark, session, thetas)
    summary, top = run.summary, run.ranked.head(5)
    lines = [
        f"live {search.name} on {benchmark.name} · {cfg.fidelity.name} · seed {cfg.seed}: "
        f"{summary['evaluations']} configurations evaluated for {budget} proposals in {summary['wall_seconds']} s",
        "  first of the ranked list R (Pareto rank, then crowding distance):",
    ]
    lines += [
        f"    {r.configuration}  δ={r.delta:.3f}  ρ={r.rho:.3f}  rank {int(r['rank'])}" for _, r in top.iterrows()
    ]
    lines.append(f"  {verdict(summary)}")
    lines += order_line(summary)
    front = run.front
    if "distinguishable" in front:  # epsilon=auto: the members the measurement tells apart
        lines.append(
            f"  front: {len(front)} members, {int(front['distinguishable'].sum())} told apart at the resolution "
            f"(± {summary['epsilon']:.3f} of accuracy on {summary['epsilon_inputs']:,} inputs)"
        )
    files = ", ".join(["summary.json", f"trace.{cfg.trace_format}", f"ranked.{cfg.trace_format}", "record.*", *written])
    lines.append(f"  run directory: {out_dir}  ({files})")
    print("\n".join(lines))
    return summary


def run_compare(cfg: DictConfig, out_dir: Path) -> dict:
    """The model against a kept run on the same inputs; the gate on compare.max_drop: exit 1 when a drop
    beyond it is shown (BelowThreshold), 3 when the data cannot tell (Undecided)."""
    c = cfg.compare
    if not c.baseline:
        raise UserError("stage=compare needs compare.baseline=RUN_DIR (a run directory of stage=live or stage=compare)")
    spec = pipeline.CompareSpec.from_node(c)  # checked before any work
    base = RunRecord.load(c.baseline, key="compare.baseline")  # before the model loads
    benchmark = benchmarks.make(cfg.benchmark)
    fidelity = base.fidelity if base.fidelity in benchmark.metrics else cfg.fidelity.name
    session = pipeline.open(benchmark, cfg.cache_dir, cfg.device, cfg.progress)
    comparison = pipeline.compare(session, base, spec, fidelity, key="compare.baseline")
    verdict = comparison.verdict
    comparison.save(out_dir)
    record_of(session, fidelity, name=benchmark.name).save(out_dir)  # this model's run: the next baseline
    report = comparison.report(out_dir / "comparison.html")
    summary = {**comparison.summary, "max_drop": spec.max_drop, "gate": verdict.decision}
    write_json_atomic(out_dir / "comparison.json", summary)
    lines = [
        f"compare {benchmark.name} against {c.baseline}: {comparison.sentence()}",
        f"  {comparison.evaluations} configurations evaluated on this model in {comparison.seconds:.1f} s",
    ]
    if comparison.warm is not None:
        lines.append(f"  {comparison.warm.sentence()}")
    for _, r in comparison.regressions.head(5).iterrows():
        lines.append(
            f"    {r.configuration}  {r.before:.3f} → {r.after:.3f}  ({100 * r.change:+.1f} points, "
            f"p {r.p_value:.2g}, adjusted {r.p_adjusted:.2g})"
        )
    lines.append(f"  run directory: {out_dir}  (comparison.csv, comparison.json, {report.name}, record.*)")
    print("\n".join(lines))
    if verdict.decision == "fail":
        raise BelowThreshold(verdict.line)
    if verdict.decision == "undecided":
        raise Undecided(verdict.line)
    print(verdict.line)
    return summary


def run_grid_stage(cfg: DictConfig, out_dir: Path) -> dict:
    from .grid import check_grid, run_grid

    check_grid(cfg.grid)
    tables = []
    for spec in cfg.grid.tables:
        spec = str(spec)
        if Path(spec).suffix.lower() in (".csv", ".parquet", ".pq"):
            obj = Objectives.from_table(read_table(spec), "rho", 1.0, source=spec)
            tables.append((Path(spec).stem, obj))
            continue
        if spec not in fidelity.names():
            raise UserError(
                f"grid.tables entry '{spec}' is neither a table file nor a fidelity (valid: {', '.join(fidelity.names())})"
            )
        obj, identity, _ = load_objectives(cfg, spec)
        tables.append((f"{identity['benchmark']}_{spec}", obj))
    summary = run_grid(cfg, tables, out_dir, lambda obj: pipeline.check_budget(cfg.budget, obj.lattice.size))
    best = summary["selected"]
    print(
        f"grid ({summary['engine']}): {summary['runs']} runs over {', '.join(summary['tables'])}\n"
        f"  selected η_c={best['eta_c']:g}, η_m={best['eta_m']:g}, μ={best['pop_size']}: reaches Recall ≥ "
        f"{summary['threshold']} on {best['reached']}/{best['tables']} tables, worst-case recall "
        f"{best['worst_recall']:.3f}, mean AUC {best['mean_auc']:.3f}\n"
        f"  wall time per table (s): {summary['wall_seconds']}\n  tables in {cfg.grid.out}"
    )
    write_json_atomic(out_dir / "summary.json", summary)
    return summary


def run_groundtruth(cfg: DictConfig, out_dir: Path) -> None:
    """The whole table, or one shard of it (a job of a sharded sweep); the last shard merges."""
    if cfg.groundtruth.table:
        raise UserError("stage=groundtruth computes a benchmark's table; drop groundtruth.table=… to use it")
    shards, shard = cfg.groundtruth.shards, cfg.groundtruth.shard
    benchmark = benchmarks.make(cfg.benchmark)
    path = compute_groundtruth(
        benchmark, cfg.cache_dir, pipeline.resolve_device(cfg.device), progress=cfg.progress, shards=shards, shard=shard
    )
    if path is None:
        print(
            f"ground truth {benchmark.name}: shard {shard} of {shards} written; the last shard to finish "
            f"merges the table (or a run of stage=groundtruth without shards merges and fills any gap)"
        )
        return None
    meta = read_meta(path)
    print(
        f"ground truth {meta.get('benchmark')}: {path}\n  clean ψ = {meta.get('psi_clean')}, "
        f"family applications {meta.get('family_applications')} (naive {meta.get('naive_applications')})"
    )
    return None


def human_summary(s: dict, out_dir: Path, trace_name: str, written=()) -> str:
    orders = ", ".join(f"Θ{k}: {c}" for k, c in enumerate(s["pstar_orders"]) if k > 0)
    full = (
        f"full recall after {s['unique_to_full_recall']:,} unique configurations ({s['budget_to_full_recall']:,} proposals)"
        if s["unique_to_full_recall"]
        else "full recall never reached"
    )
    return "\n".join(
        [
            f"TestNav · {s['benchmark']} · {s['fidelity']} · {s['search']} · seed {s['seed']} · budget {s['budget']:,}",
            f"  |P*| = {s['pstar_size']}  ({orders})",
            f"  AUC-Recall@P* = {s['auc_recall']:.3f}   final recall = {s['final_recall']:.3f}   {full}",
            f"  unique configurations seen: {s['unique']:,} of {s['space_size']:,}",
            *order_line(s),
            *front_lines(s.get("front") or []),
            f"  run directory: {out_dir}  ({', '.join(['summary.json', trace_name, 'ranked list', *written])})",
        ]
    )


def order_line(s: dict) -> list[str]:
    """The order the run's families are applied in (summary.json's `families`), where it names them."""
    names = s.get("families") or []
    return [f"  families applied in list order: {' → '.join(names)}"] if len(names) > 1 else []


def front_lines(front: list[dict], most: int = 5) -> list[str]:
    """The first members of the measured front, named, as the summaries print them."""
    if not front:
        return []
    head = f"  measured front ({len(front)} configurations{', the first ' + str(most) if len(front) > most else ''}):"
    return [head] + [f"    {m['configuration']}  δ={m['delta']:.3f}  ρ={m['rho']:.3f}" for m in front[:most]]


def _tomography_stage(name: str):
    def run(cfg: DictConfig, out_dir: Path):
        from . import tomography

        return getattr(tomography, f"run_{name}")(cfg, out_dir)

    return run


def run_check_stage(cfg: DictConfig, out_dir: Path) -> dict:
    from .check import run_check

    return run_check(cfg, out_dir)


# stage=… → its runner(cfg, out_dir); TestifAI's and the pre-flight check import their code on use
STAGES = {
    "search": run_search,
    "groundtruth": run_groundtruth,
    "live": run_live,
    "compare": run_compare,
    "grid": run_grid_stage,
    "tomography": _tomography_stage("tomography"),
    "query": _tomography_stage("query"),
    "study": _tomography_stage("study"),
    "check": run_check_stage,
    "scan": run_scan,
}


def main(cfg: DictConfig, out_dir: Path) -> dict | None:
    if cfg.stage not in STAGES:
        raise UserError(f"stage={cfg.stage} (valid: {', '.join(STAGES)})")
    pipeline.check_budget(cfg.budget)
    pipeline.check_seed(cfg.seed)
    if cfg.trace_format not in pipeline.runs.FORMATS:
        raise UserError(f"trace_format={cfg.trace_format} (valid: {', '.join(pipeline.runs.FORMATS)})")
    CertificateConfig.from_node(cfg.certificate)
    reports.check_k(cfg)
    cfg.progress = resolve_progress(cfg.progress)  # auto: bars in a terminal, none in CI logs
    return STAGES[cfg.stage](cfg, out_dir)
