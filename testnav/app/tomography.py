"""`stage=tomography | query | study`: TestifAI's stages (read the config, print, write files); the
library they call is testnav/pipeline/tomography.py.

tomography: measure Θ≤2 (replayed from the ground truth's per-input outcomes, or live on
            the model), fit the surrogate, write tomography.csv (per test, named: measured /
            predicted / true r_σ and q_σ) and independence.csv to the run directory;
query:      the same, then ⟦Q⟧ and R(Q) for `query='…'`, measured, predicted and true side by side;
study:      the §5 studies, as tables under results/tables/testifai/.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from .. import benchmarks
from ..benchmarks.paper import PAPER_PSI
from ..core.cache import write_json_atomic
from ..core.naming import with_names
from ..errors import BelowThreshold, UserError
from ..groundtruth.compute import outcomes
from ..pipeline import build_groundtruth
from ..pipeline.tomography import QuerySpec, Settings, Undecided, answer, gate, make_tomography, query_of
from ..tomography.studies import run_studies
from . import reports


def run_tomography(cfg, out_dir: Path) -> dict:
    benchmark = benchmarks.make(cfg.benchmark)
    thetas = reports.named(cfg, benchmark)  # checked before any work
    tomo, _ = make_tomography(cfg, benchmark)
    name = benchmark.name
    reports.write_csv(with_names(tomo.table, benchmark.families), out_dir / "tomography.csv")
    reports.write_csv(tomo.pairs, out_dir / "independence.csv")
    t = tomo.table
    summary = {
        "benchmark": name,
        "source": cfg.tomography.source,
        "tests": int(len(t)),
        "measured": int(t.measured.sum()),
        "inferences": tomo.measured.inferences,
        "inferences_full": int(len(t) * cfg_inputs(tomo, t)),
        "transform_seconds": round(tomo.measured.transform_seconds, 3),
        "inference_seconds": round(tomo.measured.inference_seconds, 3),
        "independent_pairs": int(tomo.pairs.independent.sum()) if len(tomo.pairs) else 0,
    }
    if "r_true" in t:
        err = t.r_pred - t.r_true
        summary.update(
            mae=float(err.abs().mean()),
            within_005=float((err.abs() <= 0.05).mean()),
            within_01=float((err.abs() <= 0.1).mean()),
        )
    write_json_atomic(out_dir / "summary.json", summary)
    written = reports.for_tomography(cfg, out_dir, tomo, benchmark, thetas)
    print(
        f"tomography {name} ({summary['source']}): {summary['measured']} of {summary['tests']} tests measured with "
        f"{summary['inferences']:,} inferences"
        + (
            f"; |r̂ − r| ≤ 0.05 on {summary['within_005']:.1%} of tests, ≤ 0.1 on {summary['within_01']:.1%}"
            if "within_005" in summary
            else ""
        )
        + f"\n  files: {out_dir}/{', '.join(['tomography.csv', 'independence.csv', *written])}"
    )
    return summary


def cfg_inputs(tomo, t) -> int:
    n = t.loc[t.measured, "n"]
    return int(n.max()) if len(n) else 0


def run_query(cfg, out_dir: Path) -> dict:
    """R(Q) for `query.expr` with [R_low, R_high] at `query.confidence`, and the gate
    `query.min_accuracy`: the outputs are written, then a failed gate raises BelowThreshold (exit
    status 1) and an undecided one Undecided (exit status 3), each with its one line."""
    if not cfg.query.expr:
        raise UserError("stage=query needs query='…', e.g. query='brightness >= 3 & zoom <= 1'")
    spec = QuerySpec.from_node({**cfg.query, "expr": str(cfg.query.expr)})
    threshold = spec.min_accuracy
    benchmark = benchmarks.make(cfg.benchmark)
    query_of(benchmark, spec.expr)  # syntax first, before any work
    thetas = reports.named(cfg, benchmark)
    tomo, _ = make_tomography(cfg, benchmark)
    res = answer(tomo, spec) if threshold is None else gate(tomo, spec)
    write_json_atomic(out_dir / "query.json", res)
    written = reports.for_tomography(cfg, out_dir, tomo, benchmark, thetas, [res])
    fmt = lambda v: "—" if v is None else f"{v:.3f}"  # noqa: E731
    print(
        f"{benchmark.name}: ⟦{res['query']}⟧ = {res['tests']} tests ({res['measured']} measured, "
        f"{res['inferred']} inferred)\n"
        f"  R(Q): measured {fmt(res['R_measured'])}  estimated {fmt(res['R_estimate'])}  "
        f"predicted {fmt(res['R_predicted'])}  true {fmt(res['R_true'])}\n"
        f"  R(Q) in [{fmt(res['R_low'])}, {fmt(res['R_high'])}] at {res['confidence']:.0%} "
        f"({res['sampled']} unmeasured tests measured for it, seed {res['seed']})"
        + (f"\n  {res['line']}" if threshold is not None and res["decision"] == "pass" else "")
        + f"\n  files: {out_dir}/{', '.join(['query.json', *written])}"
    )
    if threshold is not None and res["decision"] == "fail":
        raise BelowThreshold(res["line"])
    if threshold is not None and res["decision"] == "undecided":
        raise Undecided(res["line"])
    return res


def table1_accuracy(name: str):
    """(accuracy, source) from the papers' Table 1 for a paper benchmark, else None (Fig. 6's drop is
    then taken against the measured clean accuracy)."""
    return PAPER_PSI.get(name)


def run_study(cfg, out_dir: Path) -> dict:
    path, benchmark = build_groundtruth(cfg)
    df = pd.read_parquet(path)
    quality_col = cfg.tomography.quality
    if quality_col is not None and quality_col not in df.columns:
        raise UserError(
            f"tomography.quality={quality_col}: the ground truth has no such column "
            f"(valid: {', '.join(benchmark.metrics)} or null)"
        )
    tables = run_studies(
        outcomes(df),
        benchmark.lattice,
        [f.name for f in benchmark.families],
        Settings.from_config(cfg),
        reps=int(cfg.tomography.reps),
        quality=df[quality_col].to_numpy(float) if quality_col else None,
        reference=table1_accuracy(benchmark.name),
    )
    out = Path(cfg.tomography.out) / benchmark.name
    for key, table in tables.items():
        reports.write_csv(table.assign(benchmark=benchmark.name), out / f"{key}.csv")
    pt, q = tables["per_test_errors"], tables["queries"]
    lines = [f"TestifAI studies on {benchmark.name} → {out}"]
    for label, g in pt.groupby("tomography"):
        lines.append(
            f"  {label}: |r̂ − r| ≤ 0.05 on {(g.abs_error <= 0.05).mean():.1%} of tests, "
            f"≤ 0.1 on {(g.abs_error <= 0.1).mean():.1%}"
        )
    lines.append("  Q1–Q12 errors (3D): " + ", ".join(f"{r.query} {r.error:+.3f}" for r in q.itertuples()))
    for r in tables["inferences"].itertuples():
        lines.append(
            f"  {r.tomography} {r.regime}: {r.inferences:,} inferences ({r.fraction_of_full:.1%} of full), MSE {r.mse:.5f}"
        )
    ovr = (
        tables["ordered_vs_random"]
        .groupby(["tomography", "strategy", "fraction"])
        .mse.agg(["mean", "std"])
        .reset_index()
    )
    for r in ovr[ovr.fraction.isin([0.2, 0.3])].itertuples():
        lines.append(f"  {r.tomography} {r.strategy} at {r.fraction:.0%}: MSE {r.mean:.5f} ± {r.std:.5f}")
    print("\n".join(lines))
    summary = {"benchmark": benchmark.name, "out": str(out)}
    write_json_atomic(out_dir / "summary.json", summary)
    return summary
