"""Everything under `results/` as tidy frames, and a plain list of what is missing.

Why one loader: every figure, table and the report read the same runs, so deduplication
(the same run repeated in `runs/` and `multirun/`), the choice of ground-truth table per
benchmark–fidelity and the handling of partial sweeps are decided once, here. A sweep that
was interrupted, a method never run, a trace deleted or a table gone stale is *reported*
(`Results.missing`) and the panels that need it are skipped; nothing raises.

Frames:
* `runs`    one row per kept search run: the summary.json fields, `run_dir`, `trace`;
* `curves`  Recall@P* mean ± sd over seeds per benchmark, fidelity, search, axis
            (`unique`: u = 1..|Θ|; `budget`: proposals b = 1..B), x, mean, sd, seeds;
* `truths`  per (benchmark, fidelity) a `GroundTruth` with `points`: every θ with its
            normalised δ, ρ, raw values, order and membership in P* (θ = 0 excluded, as in
            `testnav.core.table.Objectives.pstar`);
* `tables`  the other CSV/Parquet tables under `results/tables/` (grid, TestifAI studies).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from .. import fidelity as fidelity_registry
from .. import searches
from ..core.table import Objectives, level_columns
from ..core.trace import budget_curve, found_curve
from ..fidelity import sign as rho_sign

# The searches of each figure, in their declared order, as their conf/search YAMLs declare
# (`groups`, `order`; testnav.searches.group): BASELINES (§4.2, Table 2 and Fig. 2, plus TomoNav),
# ABLATIONS (§4.3, Fig. 3), INPUT_LEVEL (§4.4, Fig. 4), and METHODS, all of them. Read on first use.
GROUP_NAMES = {"BASELINES": "baseline", "ABLATIONS": "ablation", "INPUT_LEVEL": "input_level"}


def __getattr__(name: str):
    if name in GROUP_NAMES:
        return searches.group(GROUP_NAMES[name])
    if name == "METHODS":
        return searches.paper_searches()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def method_label(search: str) -> str:
    """The search's own label (its conf/search YAML)."""
    return searches.info(search).label


def fidelity_label(fidelity: str) -> str:
    """The metric's own label (its conf/fidelity YAML)."""
    return fidelity_registry.info(fidelity).label


def fidelity_rank(fidelity: str) -> float:
    """The metric's place in the tables (its YAML's `order`); the first of a benchmark is its
    "primary" one (Figs. 5, 7)."""
    return fidelity_registry.info(fidelity).order


def fidelity_specs() -> dict[str, tuple[str, float]]:
    """name → (raw column, sign) of every fidelity metric whose extra is installed here (ρ = sign ×
    column, the sign the metric declares; chrF and BERT-F1 need the text extra)."""
    from ..extras import available

    return {n: (n, rho_sign(n)) for n in fidelity_registry.names() if available(fidelity_registry.REGISTRY.info(n))}


@dataclass
class GroundTruth:
    benchmark: str
    fidelity: str
    path: Path
    points: pd.DataFrame  # t1..tn, order, delta, rho (normalised), delta_raw, rho_raw, in_pstar; lattice order
    meta: dict = field(default_factory=dict)

    @property
    def n(self) -> int:
        return len(level_columns(self.points))

    @property
    def pstar(self) -> pd.DataFrame:
        return self.points[self.points["in_pstar"]]

    def order_counts(self) -> list[int]:
        """|P* ∩ Θ_k| for k = 1..n."""
        c = self.pstar["order"].value_counts()
        return [int(c.get(k, 0)) for k in range(1, self.n + 1)]


@dataclass
class Results:
    root: Path
    runs: pd.DataFrame
    curves: pd.DataFrame
    truths: dict = field(default_factory=dict)  # (benchmark, fidelity) → GroundTruth
    tables: dict = field(default_factory=dict)  # relative path → DataFrame
    missing: list = field(default_factory=list)  # one plain sentence each

    def pairs(self) -> list[tuple[str, str]]:
        """Every benchmark–fidelity with a ground truth or runs, benchmarks A–Z, fidelities in paper order."""
        keys = set(self.truths)
        if not self.runs.empty:
            keys |= set(map(tuple, self.runs[["benchmark", "fidelity"]].drop_duplicates().to_numpy()))
        return sorted(keys, key=lambda k: (k[0], fidelity_rank(k[1]), k[1]))

    def benchmarks(self) -> list[str]:
        return list(dict.fromkeys(b for b, _ in self.pairs()))

    def fidelities(self, benchmark: str) -> list[str]:
        return [f for b, f in self.pairs() if b == benchmark]


def truth_from_table(
    benchmark: str, fidelity: str, df: pd.DataFrame, column: str, sign: float, path: Path, meta: dict | None = None
) -> GroundTruth:
    """Normalise one table exactly as a replay does (`Objectives.from_table`) and mark P*."""
    obj = Objectives.from_table(df, column, sign, source=str(path))
    lat = obj.lattice
    points = pd.DataFrame(lat.tuples, columns=[f"t{i + 1}" for i in range(lat.n)])
    points["order"] = lat.orders
    points["delta"], points["rho"] = obj.delta, obj.rho
    order = np.argsort(lat.index(df[level_columns(df)].to_numpy(np.int64)))
    points["delta_raw"] = df["delta"].to_numpy(float)[order]
    points["rho_raw"] = df[column].to_numpy(float)[order]
    if "psi" in df.columns:
        points["psi"] = df["psi"].to_numpy(float)[order]
    in_pstar = np.zeros(lat.size, dtype=bool)
    in_pstar[obj.pstar] = True
    points["in_pstar"] = in_pstar
    return GroundTruth(benchmark, fidelity, Path(path), points, dict(meta or {}))


def _read_json(path: Path):
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def _table_columns(path: Path) -> list[str]:
    try:
        if path.suffix.lower() == ".csv":
            return list(pd.read_csv(path, nrows=0).columns)
        import pyarrow.parquet as pq

        return list(pq.read_schema(path).names)
    except Exception:
        return []


def _skip(path: Path, root: Path) -> bool:
    parts = path.relative_to(root).parts
    return bool(parts) and parts[0] in ("cache", "figures", "tables", "default_run", "reproduce")


def scan_runs(root: Path, missing: list) -> pd.DataFrame:
    """Every search run's summary (deduplicated, newest kept), plus where its trace is."""
    rows, live = [], 0
    for path in sorted(root.rglob("summary.json")):
        if _skip(path, root):
            continue
        s = _read_json(path)
        if s is None:
            missing.append(f"unreadable summary {path.relative_to(root)} (skipped)")
            continue
        if not isinstance(s, dict) or "search" not in s or "seed" not in s:
            continue  # grid, tomography and other stages write summaries of another shape
        if s.get("auc_recall") is None:
            live += 1
            continue
        row = {k: v for k, v in s.items() if not isinstance(v, (list, dict))}
        row["pstar_orders"] = s.get("pstar_orders")
        trace = next((t for t in (path.parent / "trace.csv", path.parent / "trace.parquet") if t.exists()), None)
        row.update(run_dir=str(path.parent), trace=str(trace) if trace else None)
        row.setdefault("table", None)
        row.setdefault("budget", s.get("proposals"))
        rows.append(row)
    if live:
        missing.append(f"{live} live run(s) without a ground truth (no P*, so no recall) ignored")
    # Run directories Hydra created but that never wrote a summary: interrupted or failed jobs.
    for cfg in sorted(root.glob("*run*/**/.hydra/config.yaml")):
        d = cfg.parent.parent
        if _skip(d, root) or (d / "summary.json").exists():
            continue
        text = cfg.read_text()
        stage = re.search(r"^stage:\s*(\S+)", text, re.M)
        if stage is None or stage.group(1) == "search":
            missing.append(f"run {d.relative_to(root)} has no summary.json (interrupted or failed; skipped)")
    df = pd.DataFrame(rows)
    if df.empty:
        return df
    df = df.sort_values("run_dir", kind="stable").reset_index(drop=True)  # date/time in the path: newest last
    df["table"] = df["table"].fillna("")
    key = ["benchmark", "fidelity", "search", "seed", "table", "budget"]
    dup = df.duplicated(key, keep="last")
    if dup.any():
        missing.append(
            f"{int(dup.sum())} repeated run(s) (same benchmark, fidelity, search, seed, table, budget): "
            f"the newest of each is used"
        )
        df = df[~dup]
    # One ground-truth table and one budget per benchmark–fidelity, so that seeds are comparable.
    keep = []
    for (b, f), g in df.groupby(["benchmark", "fidelity"], sort=True):
        table = Counter(g["table"]).most_common(1)[0][0]
        other = g[g["table"] != table]
        if len(other):
            missing.append(
                f"{b}/{f}: {len(other)} run(s) on another ground-truth table than the majority's "
                f"({Path(table).name or 'unnamed'}) ignored"
            )
        g = g[g["table"] == table]
        budget = Counter(g["budget"]).most_common(1)[0][0]
        other = g[g["budget"] != budget]
        if len(other):
            missing.append(f"{b}/{f}: {len(other)} run(s) with a budget other than {budget} ignored")
        keep.append(g[g["budget"] == budget])
    df = pd.concat(keep, ignore_index=True)
    df["seed"] = df["seed"].astype(int)
    return df.sort_values(["benchmark", "fidelity", "search", "seed"], kind="stable").reset_index(drop=True)


def report_coverage(runs: pd.DataFrame, missing: list) -> None:
    """Name, per benchmark–fidelity, the paper's methods and seeds that have no run."""
    if runs.empty:
        return
    for (b, f), g in runs.groupby(["benchmark", "fidelity"], sort=True):
        seeds = sorted(g["seed"].unique())
        absent = [m for m in searches.paper_searches() if m not in set(g["search"])]
        if absent:
            missing.append(f"{b}/{f}: no runs of {', '.join(absent)} (their curves and Table 2 cells are left out)")
        for s, gs in g.groupby("search", sort=True):
            lack = sorted(set(seeds) - set(gs["seed"]))
            if lack:
                missing.append(
                    f"{b}/{f}/{s}: seed(s) {', '.join(map(str, lack))} missing "
                    f"({gs['seed'].nunique()} of {len(seeds)} seeds used)"
                )
        if len(seeds) < 2:
            missing.append(f"{b}/{f}: one seed only, so no ± 1 sd bands")


def read_trace(path: str) -> pd.DataFrame:
    cols = ["proposal", "new", "unique", "in_pstar", "inferences"]  # inferences: newer traces only
    if path.endswith(".parquet"):
        df = pd.read_parquet(path)
        return df[[c for c in cols if c in df.columns]]
    return pd.read_csv(path, usecols=lambda c: c in cols)


INFERENCE_POINTS = 500  # the inference axis is sampled on a fixed grid: runs spend inferences in different steps


def run_curves(
    trace: pd.DataFrame, pstar_size: int, space_size: int, budget: int, inferences_space: float | None = None
) -> dict[str, np.ndarray]:
    """Recall@P* of one run on both axes, padded with the last value (testnav.core.recall's reading);
    with an `inferences` column and the cost of all of Θ, also against inferences spent, on
    INFERENCE_POINTS equal steps of [0, inferences_space] (the cost-aware view)."""
    found = found_curve(trace, int(pstar_size))
    out = {}
    for axis, r, length in (("unique", found, space_size), ("budget", budget_curve(trace, int(pstar_size)), budget)):
        curve = np.full(max(length, len(r)), r[-1] if len(r) else 0.0)
        curve[: len(r)] = r
        out[axis] = curve[:length] if length else curve
    if "inferences" in trace and inferences_space:
        spent = trace["inferences"].to_numpy(dtype=float)[trace["new"].astype(bool).to_numpy()]
        steps = np.searchsorted(spent, inference_grid(inferences_space), side="right")  # proposals paid for by then
        out["inferences"] = np.r_[0.0, found][steps]
    return out


def inference_grid(inferences_space: float) -> np.ndarray:
    return np.linspace(0, float(inferences_space), INFERENCE_POINTS + 1)[1:]


def build_curves(runs: pd.DataFrame, missing: list) -> pd.DataFrame:
    frames = []
    if runs.empty:
        return pd.DataFrame(columns=["benchmark", "fidelity", "search", "axis", "x", "mean", "sd", "seeds"])
    for (b, f, s), g in runs.groupby(["benchmark", "fidelity", "search"], sort=True):
        stacks = {"unique": [], "budget": [], "inferences": []}
        for _, r in g.iterrows():
            if not isinstance(r["trace"], str) or not r["trace"]:
                missing.append(f"{b}/{f}/{s} seed {r['seed']}: no trace in {r['run_dir']} (curve skipped)")
                continue
            try:
                trace = read_trace(r["trace"])
            except Exception as e:
                missing.append(f"{b}/{f}/{s} seed {r['seed']}: trace unreadable ({type(e).__name__}; skipped)")
                continue
            space = int(r["space_size"]) if pd.notna(r.get("space_size")) else int(trace["unique"].max())
            cost = r.get("inferences_space")
            cost = float(cost) if cost is not None and pd.notna(cost) else None
            for axis, c in run_curves(trace, int(r["pstar_size"]), space, int(r["budget"]), cost).items():
                stacks[axis].append(c)
        for axis, cs in stacks.items():
            if not cs:
                continue
            length = min(len(c) for c in cs)
            m = np.stack([c[:length] for c in cs])
            x = inference_grid(cost) if axis == "inferences" else np.arange(1, length + 1)
            frames.append(
                pd.DataFrame(
                    {
                        "benchmark": b,
                        "fidelity": f,
                        "search": s,
                        "axis": axis,
                        "x": x[:length],
                        "mean": m.mean(0),
                        "sd": m.std(0, ddof=1) if len(m) > 1 else np.zeros(length),
                        "seeds": len(m),
                    }
                )
            )
    if not frames:
        return pd.DataFrame(columns=["benchmark", "fidelity", "search", "axis", "x", "mean", "sd", "seeds"])
    return pd.concat(frames, ignore_index=True)


def _resolve(path: str, root: Path) -> Path | None:
    """A table path from a summary, or the same file name in this results folder's cache."""
    if not path:
        return None
    p = Path(path)
    for cand in (p, root / "cache" / "groundtruth" / p.name, root.parent / p):
        if cand.is_file():
            return cand
    return None


def load_truths(root: Path, runs: pd.DataFrame, missing: list) -> dict:
    """Per benchmark–fidelity, the table its runs used, else the newest cached table holding that metric."""
    specs = fidelity_specs()
    candidates: dict[tuple[str, str], list[Path]] = {}
    if not runs.empty:
        for (b, f), g in runs.groupby(["benchmark", "fidelity"], sort=True):
            table = g["table"].iloc[0]
            p = _resolve(table, root)
            if p is None:
                if table:
                    missing.append(f"{b}/{f}: its runs' ground-truth table {table} is not on disk")
                continue
            candidates.setdefault((b, f), []).append(p)
    from_runs = set(candidates)
    cached = sorted((root / "cache" / "groundtruth").glob("*.parquet"), key=lambda p: (-p.stat().st_mtime, p.name))
    for p in cached:
        meta = _read_json(p.with_suffix(".json")) or {}
        bench = meta.get("benchmark") or p.stem.rsplit("-", 1)[0]
        cols = set(_table_columns(p))
        for f, (col, _) in specs.items():
            if col in cols and col != "rho":
                candidates.setdefault((bench, f), []).append(p)
    truths = {}
    for (b, f), paths in sorted(candidates.items()):
        paths = list(dict.fromkeys(p.resolve() for p in paths))  # one table reached by two names counts once
        col, sign = ("rho", 1.0) if f == "rho" else specs.get(f, (f, 1.0))
        for p in paths:
            try:
                cols = [c for c in _table_columns(p) if re.fullmatch(r"t\d+", c)] + ["delta", col]
                if "psi" in _table_columns(p):
                    cols.append("psi")
                df = pd.read_csv(p, usecols=cols) if p.suffix == ".csv" else pd.read_parquet(p, columns=cols)
                truths[(b, f)] = truth_from_table(b, f, df, col, sign, p, _read_json(p.with_suffix(".json")))
                break
            except Exception as e:
                missing.append(f"{b}/{f}: ground truth {p.name} unusable ({type(e).__name__}: {str(e)[:80]})")
        if len(paths) > 1 and (b, f) in truths:  # named without its cache key, which moves with every code edit
            used = "the table its runs read" if (b, f) in from_runs else "the newest cached table with that metric"
            missing.append(
                f"{b}/{f}: using {used}; {len(paths) - 1} other cached table(s) (older code or settings) ignored"
            )
    return truths


def load_tables(root: Path) -> dict:
    """Study tables written by other stages (grid, TestifAI), keyed by their path under results/tables/."""
    out = {}
    base = root / "tables"
    for p in sorted(base.rglob("*")) if base.is_dir() else []:
        if p.suffix.lower() not in (".csv", ".parquet") or p.name.startswith(("table2", "table3")):
            continue
        try:
            out[str(p.relative_to(base))] = pd.read_csv(p) if p.suffix.lower() == ".csv" else pd.read_parquet(p)
        except Exception:
            continue
    return out


def load_results(root="results") -> Results:
    """Collect every run, curve, ground truth and study table under `root`; never raises on gaps."""
    root = Path(root)
    missing: list[str] = []
    if not root.is_dir():
        return Results(
            root, pd.DataFrame(), build_curves(pd.DataFrame(), missing), {}, {}, [f"no results folder {root}"]
        )
    runs = scan_runs(root, missing)
    report_coverage(runs, missing)
    curves = build_curves(runs, missing)
    truths = load_truths(root, runs, missing)
    res = Results(root, runs, curves, truths, load_tables(root), missing)
    for b, f in res.pairs():
        if (b, f) not in truths:
            missing.append(f"{b}/{f}: no ground-truth table found (Figs. 1, 5–8 and Table 3 skip it)")
        if runs.empty or not ((runs["benchmark"] == b) & (runs["fidelity"] == f)).any():
            missing.append(f"{b}/{f}: no search runs (Figs. 2–4 and Table 2 skip it)")
    return res
