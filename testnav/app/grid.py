"""The NSGA-II hyperparameter grid of §3.3 and its selection rule.

η_c × η_m × μ (64 settings by default) × tables × seeds. With `engine: fast`, all runs that
share a table and μ are stepped in lock-step; with `engine: pymoo`, runs are serial (the
reference; slow). Each table's rows are written to `<out>/grid/<table>.parquet` as soon as
it is done, so an interrupted grid resumes table by table, and the selection is
recomputed over every table file present, so grids of several benchmarks (one run each,
e.g. `-m benchmark=a,b`) are selected on together.

Selection (the paper's rule, our reading of its two open points): a setting *reaches* a
table when its mean final Recall@P* over seeds is ≥ 0.999; the setting reaching the most
tables wins; ties go to the higher worst-case recall (minimum final recall over all tables
and seeds), then to the higher mean AUC-Recall.
"""

from __future__ import annotations

import hashlib
import itertools
import logging
import time
from pathlib import Path

import numpy as np
import pandas as pd

from ..core.cache import atomic_path, stable_hash, write_json_atomic
from ..core.oracle import TableOracle
from ..core.progress import bar as progress_bar
from ..core.recall import auc_recall, first_sightings, recall_curve, unique_to_full_recall
from ..errors import UserError
from ..searches import make
from ..searches.fast import FastEvolution

log = logging.getLogger(__name__)


def settings_of(grid) -> list[tuple[float, float, int]]:
    settings = list(itertools.product(map(float, grid.eta_c), map(float, grid.eta_m), map(int, grid.pop_size)))
    for eta_c, eta_m, mu in settings:
        if eta_c <= 0 or eta_m <= 0:
            raise UserError(f"grid: distribution indices must be > 0 (got eta_c={eta_c}, eta_m={eta_m})")
        if mu < 2:
            raise UserError(f"grid.pop_size={mu}: the population needs at least 2 members")
    return settings


def check_grid(grid) -> None:
    """Everything about the grid that can be wrong, checked before any table is built."""
    if grid.engine not in ("fast", "pymoo"):
        raise UserError(f"grid.engine={grid.engine} (valid: fast, pymoo)")
    if int(grid.seeds) < 1:
        raise UserError(f"grid.seeds={grid.seeds}: need at least one seed")
    settings_of(grid)


def score_runs(proposals: list[np.ndarray], obj) -> list[dict]:
    out = []
    for p in proposals:
        curve = recall_curve(p[first_sightings(p)], obj.pstar, obj.lattice.size)
        out.append(
            {
                "auc_recall": auc_recall(curve),
                "final_recall": float(curve[-1]),
                "unique": int(len(np.unique(p))),
                "unique_to_full_recall": unique_to_full_recall(curve),
            }
        )
    return out


def grid_table(obj, name: str, grid, budget: int, progress: bool) -> pd.DataFrame:
    """All settings × seeds on one table."""
    settings = settings_of(grid)
    seeds = list(range(int(grid.seeds)))
    rows = []
    values = np.column_stack([obj.delta, obj.rho])
    common = dict(
        p_crossover=grid.p_crossover,
        p_crossover_var=grid.p_crossover_var,
        p_mutation=grid.p_mutation,
        p_mutation_var=grid.p_mutation_var,
        eliminate_duplicates=grid.eliminate_duplicates,
    )
    by_mu = {mu: [(c, m) for c, m, u in settings if u == mu] for mu in sorted({u for _, _, u in settings})}
    with progress_bar(
        progress, total=len(settings) * len(seeds), desc=f"grid {name} ({grid.engine})", unit="run"
    ) as bar:
        for mu, etas in by_mu.items():
            if mu > obj.lattice.size or mu > budget:
                raise UserError(f"grid.pop_size={mu} exceeds |Θ|={obj.lattice.size} or budget={budget} of table {name}")
            jobs = [(c, m, s) for (c, m) in etas for s in seeds]
            t0 = time.perf_counter()
            if grid.engine == "fast":
                engine = FastEvolution(obj.lattice, mu, "nsga2", **common)
                proposals = engine.run_many(
                    np.broadcast_to(values, (len(jobs),) + values.shape),
                    budget,
                    [s for _, _, s in jobs],
                    [c for c, _, _ in jobs],
                    [m for _, m, _ in jobs],
                )
            else:
                oracle = TableOracle(obj)
                proposals = []
                for c, m, s in jobs:
                    proposals.append(make("nsga2", pop_size=mu, eta_c=c, eta_m=m, **common).run(oracle, budget, s))
                    bar.update(1)
            per_run = (time.perf_counter() - t0) / len(jobs)
            for (c, m, s), sc in zip(jobs, score_runs(proposals, obj)):
                rows.append(
                    {
                        "table": name,
                        "eta_c": c,
                        "eta_m": m,
                        "pop_size": mu,
                        "seed": s,
                        "engine": grid.engine,
                        "budget": budget,
                        **sc,
                        "seconds_per_run": per_run,
                    }
                )
            if grid.engine == "fast":
                bar.update(len(jobs))
    return pd.DataFrame(rows)


def select(df: pd.DataFrame, threshold: float) -> tuple[pd.DataFrame, dict]:
    """Rank settings by the paper's rule; return the per-setting table and the winner."""
    per = df.groupby(["eta_c", "eta_m", "pop_size", "table"]).agg(
        mean_final=("final_recall", "mean"), min_final=("final_recall", "min"), mean_auc=("auc_recall", "mean")
    )
    per["reached"] = per["mean_final"] >= threshold
    n_tables = df["table"].nunique()
    s = (
        per.groupby(["eta_c", "eta_m", "pop_size"])
        .agg(
            tables=("reached", "size"),
            reached=("reached", "sum"),
            worst_recall=("min_final", "min"),
            mean_auc=("mean_auc", "mean"),
        )
        .reset_index()
    )
    s = s[s["tables"] == n_tables]  # only settings run on every table compete
    s = s.sort_values(["reached", "worst_recall", "mean_auc"], ascending=False).reset_index(drop=True)
    best = s.iloc[0].to_dict()
    return s, {k: (int(v) if k in ("pop_size", "reached", "tables") else float(v)) for k, v in best.items()}


def run_grid(cfg, tables: list[tuple[str, object]], out_dir: Path, budget_of) -> dict:
    """`tables`: (name, Objectives) pairs; writes one file per table, then the selection."""
    grid = cfg.grid
    check_grid(grid)
    out = Path(grid.out)
    (out / "grid").mkdir(parents=True, exist_ok=True)
    settings_key = stable_hash(
        {
            k: list(v) if hasattr(v, "__iter__") and not isinstance(v, str) else v
            for k, v in grid.items()
            if k not in ("out", "tables")
        }
    )
    wall = {}
    for name, obj in tables:
        path = out / "grid" / f"{name}.parquet"
        # reuse a table's rows only for the same settings *and* the same objectives
        data_key = hashlib.sha256(np.column_stack([obj.delta, obj.rho]).tobytes()).hexdigest()[:16]
        old = pd.read_parquet(path) if path.exists() else pd.DataFrame()
        if (
            {"settings_key", "data_key"} <= set(old.columns)
            and (old.settings_key == settings_key).all()
            and (old.data_key == data_key).all()
        ):
            log.info("grid %s: reusing %s", name, path)
            continue
        t0 = time.perf_counter()
        df = grid_table(obj, name, grid, budget_of(obj), cfg.progress).assign(
            settings_key=settings_key, data_key=data_key
        )
        wall[name] = round(time.perf_counter() - t0, 2)
        with atomic_path(path) as tmp:
            df.to_parquet(tmp, index=False)
    frames = [pd.read_parquet(p) for p in sorted((out / "grid").glob("*.parquet"))]
    frames = [f for f in frames if (f["settings_key"] == settings_key).all()]
    df = pd.concat(frames, ignore_index=True)
    ranking, best = select(df, float(grid.threshold))
    with atomic_path(out / "grid.csv") as tmp:
        df.drop(columns=["settings_key", "data_key"], errors="ignore").to_csv(tmp, index=False)
    with atomic_path(out / "grid_ranking.csv") as tmp:
        ranking.to_csv(tmp, index=False)
    summary = {
        "selected": best,
        "tables": sorted(df["table"].unique()),
        "runs": int(len(df)),
        "engine": grid.engine,
        "wall_seconds": wall,
        "threshold": float(grid.threshold),
    }
    write_json_atomic(out / "grid_selection.json", summary)
    return summary
