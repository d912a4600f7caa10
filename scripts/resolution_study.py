"""The stopping certificate at the measurement's resolution (issue 63, item 4): where epsilon=auto
stops live TomoNav, and whether every stop of TomoNav and NSGA-II on a real lattice above 10⁴
configurations is ε-complete.

    python scripts/resolution_study.py live [--seeds 0 1 2]        # (a) live TomoNav, epsilon=auto
    python scripts/resolution_study.py large [--seeds 0 1 2 3 4]   # (b) cnn6 replayed, ε = 0.01 and auto
    python scripts/resolution_study.py report                      # the table from the recorded rows

(a) `live`: TomoNav on the models themselves (stop_at = 0.95, stop_on the live default `good`,
epsilon=auto): the MLP and the CNN of scripts/verdict_models.py (625 configurations, 400 and 500
test digits) through `testnav.Tester.search`, and the mnist5k LeNet-5 (1,296 configurations, 5,000
digits: D is 1,000 of them) through `pipeline.live`, as scripts/stopping_study.py's `live` runs it.
Each stop is read against the model's ground truth (the cached table; mnist5k: results/golden/
mnist5k.csv, whose SSIM is normalised over Θ and is mapped back to raw SSIM) in the units the run
measured (raw δ, raw SSIM) at the tolerances the summary states (`epsilon_delta`, `epsilon_rho`).
(b) `large`: the CNN of scripts/verdict_models.py under six families (15,625 configurations, 400
digits), replayed from its ground truth (`pipeline.replay`, the path of `Tester.search(replay=True)`),
TomoNav and NSGA-II, stop_at = 0.95, stop_on = good, with ε = 0.01 and with epsilon=auto; each stop
read against the table at the tolerance the certificate used (a number: that share of each
objective's measured range, in the table's normalised units; auto: the summary's).
The ground truths are read, never computed here: a missing table stops the script.

Writes results/tables/resolution_study.{csv,md}; each run is kept under
results/cache/resolution_study/ (delete a file to rerun it).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]

from testnav.core.pareto import nondominated_mask  # noqa: E402
from testnav.stopping.epsilon import eps_complete, scale  # noqa: E402

STOP_AT = 0.95
VERSION = "1"  # bump to invalidate the cached runs
CACHE = ROOT / "results" / "cache" / "resolution_study" / VERSION
OUT = ROOT / "results" / "tables" / "resolution_study"
LIVE_MODELS = ("mlp", "cnn", "mnist5k")
LARGE_SEARCHES = ("tomonav", "nsga2")
EPSILONS = (0.01, "auto")


def check(values: np.ndarray, measured: np.ndarray, eps) -> dict:
    """Against the truth `values` (|Θ|, 2) of every θ: whether the front of the `measured` indices is
    ε-complete (every unmeasured θ, θ = 0 aside, ε-dominated by it) and exactly complete."""
    seen = np.zeros(len(values), bool)
    seen[measured] = True
    m = np.flatnonzero(seen)
    m = m[m != 0]
    front = values[m][nondominated_mask(*values[m].T)]
    rest = ~seen
    rest[0] = False
    others = np.flatnonzero(~seen)
    others = others[others != 0]
    pstar = np.arange(1, len(values))[nondominated_mask(*values[1:].T)]
    return {
        "eps_complete": eps_complete(front, values[rest], eps),
        "complete": bool(seen[pstar].all()),
        "pstar": int(len(pstar)),
        "missing_members": int((~seen[pstar]).sum()),
        "worst_excess_delta": excess(front, values[others], eps),
    }


def excess(front: np.ndarray, rest: np.ndarray, eps) -> float:
    """The additive ε-indicator of `front` over `rest`, less ε_δ: how far beyond the tolerance in δ's
    units the worst unmeasured θ improves the front (≤ 0: ε-complete), with ρ's tolerance kept."""
    if not len(rest):
        return float("-inf")
    e = np.broadcast_to(np.asarray(eps, float), (2,))
    worst = -np.inf
    for x in rest:
        ok = front[:, 1] + e[1] >= x[1]  # members within ρ's tolerance of x
        need = x[0] - (front[ok, 0].max() if ok.any() else -np.inf)  # δ shortfall of the best of them
        worst = max(worst, need - e[0])
    return float(worst)


def measured_of(trace: pd.DataFrame, lattice) -> np.ndarray:
    levels = trace[[f"t{i + 1}" for i in range(lattice.n)]].to_numpy(np.int64)
    return np.unique(lattice.index(levels))


def stated(summary: dict, trace: pd.DataFrame) -> np.ndarray:
    """(ε_δ, ε_ρ) the certificate used at the run's end, in the trace's units."""
    if summary.get("epsilon_setting") == "auto":
        return np.array([summary["epsilon_delta"], summary["epsilon_rho"]])
    seen = trace.drop_duplicates([c for c in trace.columns if c.startswith("t") and c[1:].isdigit()])
    return float(summary["epsilon"]) * scale(seen[["delta", "rho"]].to_numpy(float))


def row(model: str, mode: str, run, values: np.ndarray, lattice, seconds: float, rho_affine=False) -> dict:
    """One run's stop against the truth `values`. `rho_affine`: the truth's ρ is min–max normalised
    over Θ (results/golden/mnist5k.csv) and is mapped back to the run's raw units by the affine map
    that the measured configurations give (least squares; exact up to the table's six decimals)."""
    s = run.summary
    measured = measured_of(run.trace, lattice)
    idx = lattice.index(run.trace[[f"t{i + 1}" for i in range(lattice.n)]].to_numpy(np.int64))
    if rho_affine:
        slope, intercept = np.polyfit(values[idx, 1], run.trace["rho"].to_numpy(float), 1)
        values = np.column_stack([values[:, 0], intercept + slope * values[:, 1]])
    eps = stated(s, run.trace)
    truth = check(values, measured, eps)
    # the run's own values against the truth's (the same measurement, read twice)
    drift = np.abs(run.trace[["delta", "rho"]].to_numpy(float) - values[idx]).max(axis=0)
    front = run.front
    return {
        "model": model,
        "mode": mode,
        "search": s["search"],
        "seed": int(s["seed"]),
        "size": int(lattice.size),
        "inputs": s.get("epsilon_inputs"),
        "epsilon_setting": s.get("epsilon_setting", "number"),
        "epsilon": float(s["epsilon"]),
        "eps_delta": float(eps[0]),
        "eps_rho": float(eps[1]),
        "stopped_at": s["stopped_at"],
        "unique": int(s["unique"]),
        "stop_share": int(s["unique"]) / lattice.size,
        "p_good": float(s["p_good"]),
        "front": int(len(front)),
        "distinguishable": int(front["distinguishable"].sum()) if "distinguishable" in front else None,
        "drift_delta": float(drift[0]),
        "drift_rho": float(drift[1]),
        "seconds": round(seconds, 1),
        **truth,
    }


def write(path: Path, out: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(out, default=float))
    tmp.replace(path)
    print(json.dumps(out, default=float), flush=True)


def table_values(df: pd.DataFrame, lattice, rho: str) -> np.ndarray:
    """(|Θ|, 2) raw (δ, ρ) of a ground-truth table, in lattice order (SSIM: higher is better)."""
    idx = lattice.index(df[[f"t{i + 1}" for i in range(lattice.n)]].to_numpy(np.int64))
    out = np.full((lattice.size, 2), np.nan)
    out[idx, 0] = df["delta"].to_numpy(float)
    out[idx, 1] = df[rho].to_numpy(float)
    return out


GIVEN: dict[str, Path] = {}  # benchmark name → a ground-truth table named by --groundtruth


def existing_groundtruth(t) -> Path:
    """The path of a Tester's cached ground truth (or the table --groundtruth named for its benchmark,
    checked against its inputs and lattice); the script stops if it is not complete (it never
    computes one)."""
    from testnav.groundtruth.compute import complete, open_session, read_meta, table_path

    session = open_session(t.benchmark, t.cache_dir, "cpu")
    path = GIVEN.get(t.benchmark.name) or table_path(t.cache_dir, t.benchmark, t.benchmark.key(session.loaded))
    if not complete(path):
        raise SystemExit(f"{path}: no complete ground truth (this script reads one, it does not compute it)")
    meta = read_meta(path)
    if meta.get("n_inputs") != len(session.loaded.labels) or meta.get("levels") != t.benchmark.levels:
        raise SystemExit(f"{path}: measured on {meta.get('n_inputs')} inputs at {meta.get('levels')} levels, not {t}'s")
    return path


def open_live(model: str, cache_dir: Path):
    """(lattice, truth values, seed → a live TomoNav run at epsilon=auto) for one of LIVE_MODELS."""
    from verdict_models import tester

    from testnav import pipeline
    from testnav.stopping.certificate import CertificateConfig

    if model == "mnist5k":
        b = pipeline.compose_benchmark(["benchmark=mnist5k"])
        session = pipeline.open(b, cache_dir, "cpu")
        values = table_values(pd.read_csv(ROOT / "results" / "golden" / "mnist5k.csv"), b.lattice, "rho_ssim")
        auto = CertificateConfig(stop_at=STOP_AT, epsilon="auto")
        return (
            b.lattice,
            values,
            lambda seed: pipeline.live(pipeline.RunSpec("tomonav", seed=seed, certificate=auto), session, "ssim"),
        )
    t = tester(model, cache_dir)
    values = table_values(pd.read_parquet(existing_groundtruth(t)), t.lattice, "ssim")
    return t.lattice, values, lambda seed: t.search("tomonav", seed=seed, stop_at=STOP_AT)  # Tester: auto by default


def live(seeds, cache_dir: Path) -> list[dict]:
    rows = []
    for model in LIVE_MODELS:
        opened = None
        for seed in seeds:
            path = CACHE / f"live__{model}__tomonav__{seed}.json"
            if not path.exists():
                opened = opened or open_live(model, cache_dir)
                lattice, values, search = opened
                t0 = time.perf_counter()
                run = search(seed)
                seconds = time.perf_counter() - t0
                write(path, row(model, "live", run, values, lattice, seconds, rho_affine=model == "mnist5k"))
            rows.append(json.loads(path.read_text()))
    return rows


def large(seeds, cache_dir: Path, searches=LARGE_SEARCHES, epsilons=EPSILONS, budget=None) -> list[dict]:
    from verdict_models import tester

    from testnav import pipeline
    from testnav.stopping.certificate import CertificateConfig

    opened, rows = None, []
    for eps in epsilons:
        for search in searches:
            for seed in seeds:
                path = CACHE / f"large__cnn6__{search}__{eps}__{seed}.json"
                if not path.exists():
                    if opened is None:
                        t = tester("cnn6", cache_dir)
                        opened = (t, *pipeline.groundtruth_objectives(existing_groundtruth(t), t.benchmark, "ssim"))
                    t, obj, identity = opened
                    cert = CertificateConfig(stop_at=STOP_AT, stop_on="good", epsilon=eps)
                    spec = pipeline.RunSpec(search, budget=budget, seed=seed, certificate=cert)
                    t0 = time.perf_counter()
                    run = pipeline.replay(spec, obj, identity, t.benchmark.families)
                    values = np.column_stack([obj.delta, obj.rho])
                    write(path, row("cnn6", "replay", run, values, obj.lattice, time.perf_counter() - t0))
                rows.append(json.loads(path.read_text()))
    return rows


def diagnosed_table(name: str, cache_dir: Path):
    """(Objectives, N) of `name`: cnn6, or gen/<profile>/<n>x<ℓ>/<seed>, a generated table read as if
    measured on 400 inputs."""
    from testnav import pipeline
    from testnav.core.table import Objectives
    from testnav.groundtruth.synthetic import PROFILES, synthetic_table

    if name == "cnn6":
        from verdict_models import tester

        t = tester("cnn6", cache_dir)
        table_path = existing_groundtruth(t)
        obj, _ = pipeline.groundtruth_objectives(table_path, t.benchmark, "ssim")
        return obj, pipeline.runs.table_inputs(table_path)
    _, profile, size, seed = name.split("/")
    n, levels = map(int, size.split("x"))
    return Objectives.from_table(
        synthetic_table(**{**PROFILES[profile], "n": n, "levels": levels}, seed=int(seed))
    ), 400


DIAGNOSE_BUDGET = {"tomonav": 12_000, "nsga2": 40_000}  # proposals of a never-stopping run


def diagnose(search: str, seed: int, eps, cache_dir: Path, name: str = "cnn6") -> dict:
    """One replay of table `name` that never stops (stop_on=good's schedule), every checkpoint's
    readings with the truth there: whether the front was ε-complete at the tolerance the certificate
    used, and how many unmeasured configurations improve it by more than that (`escapes`)."""
    from testnav import searches
    from testnav.core.oracle import TableOracle
    from testnav.stopping import certificate as cm
    from testnav.stopping.epsilon import Resolution, eps_dominated, tolerance

    path = CACHE / f"diagnose2__{name.replace('/', '-')}__{search}__{eps}__{seed}.json"
    if path.exists():
        return json.loads(path.read_text())
    obj, inputs = diagnosed_table(name, cache_dir)
    values = np.column_stack([obj.delta, obj.rho])
    res = Resolution.at(inputs, delta_span=obj.delta_span)
    budget = DIAGNOSE_BUDGET[search]
    s = searches.make(search)
    s.fit(obj.lattice, budget)
    oracle = TableOracle(obj)
    cert = cm.Certificate(obj.lattice, cm.CertificateConfig(stop_on="good", epsilon=eps), seed=seed, resolution=res)
    record, estimate = [], cert.estimate

    def estimate_and_record():  # the calibration's counts after each checkpoint, which Checkpoint does not keep
        out = estimate()
        record.append({"found_good": cert.good.found, "expected_good": cert.good.expected})
        return out

    cert.estimate = estimate_and_record
    t0 = time.perf_counter()
    proposals, _ = cm.run_certified(s, cm.CertifiedOracle(oracle, cert), budget, seed, oracle.evaluate)
    order = proposals[np.sort(np.unique(proposals, return_index=True)[1])]
    rows = []
    for r, counts in zip(cert.records, record):
        seen = order[: r.unique]
        e = tolerance(eps, values[seen], res)
        m = seen[seen != 0]
        front = values[m][nondominated_mask(*values[m].T)]
        rest = np.ones(obj.lattice.size, bool)
        rest[seen] = False
        rest[0] = False
        escapes = int((~eps_dominated(values[rest], front, e)).sum())
        rows.append({**r.row(), **counts, "escapes": escapes, "eps_delta": float(e[0]), "eps_rho": float(e[1])})
    out = {
        "search": search,
        "seed": seed,
        "epsilon": eps,
        "size": obj.lattice.size,
        "seconds": round(time.perf_counter() - t0, 1),
        "checkpoints": rows,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, default=float))
    return out


# p_good's rule re-read on the diagnosed checkpoints (`rules`): (label, cap on the relax r, cap on |front|);
# None: as the certificate reads it (testnav.stopping.estimators.GoodEstimator.probability)
RULES = [
    ("as it is", None, None),
    ("r ≤ 4", 4, None),
    ("r ≤ 2", 2, None),
    ("no relax (r = 1)", 1, None),
    ("|front| ≤ 40", None, 40),
    ("|front| ≤ 40, r ≤ 4", 4, 40),
    ("|front| ≤ 20", None, 20),
]


TRUTH = "earliest safe stop (the truth)"


def rule_p(c: dict, relax_cap, front_cap) -> float:
    """p_good at checkpoint `c` with the relax r capped at `relax_cap` and |front| at `front_cap`."""
    from testnav.stopping import certificate as cm

    if c["remaining"] == 0 or c["fresh_good"] or not np.isfinite(c["missing_good"]) or c["front"] == 0:
        return cm.GoodEstimator.probability(
            c["fresh_good"], c["missing_good"], c["front"], c["remaining"], c["unique"], c["improved"]
        )
    held = c["unique"] / max(c["improved"], 1)
    r = held**cm.TUNED.good_relax_power if held >= cm.TUNED.good_quiet else 1.0
    r = min(r, relax_cap) if relax_cap else r
    front = min(c["front"], front_cap) if front_cap else c["front"]
    return float(np.exp(-min(c["missing_good"], c["remaining"]) / (cm.TUNED.good_share * front * r)))


def stop_row(d: dict, rule: str, at: dict | None) -> dict:
    """Run `d`'s stop under `rule` at checkpoint `at` (None: no stop): its share of Θ, and whether ε-complete."""
    return {
        "search": d["search"],
        "epsilon": str(d["epsilon"]),
        "seed": d["seed"],
        "rule": rule,
        "stop": np.nan if at is None else at["unique"] / d["size"],
        "ok": np.nan if at is None else float(at["escapes"] == 0),
    }


def rules() -> str:
    """The diagnosed cnn6 runs re-read under RULES: per search and ε, the stops and how many were
    ε-complete; and each run's stop as the certificate reads it (what it estimated, its tolerance)."""
    from testnav.stopping import certificate as cm

    runs = [json.loads(p.read_text()) for p in sorted(CACHE.glob("diagnose2__cnn6__*.json"))]
    rows = []
    for d in runs:
        for label, rcap, fcap in RULES:
            at = next((c for c in d["checkpoints"] if rule_p(c, rcap, fcap) >= STOP_AT), None)
            rows.append(stop_row(d, label, at))
        # the truth: the first checkpoint whose front is ε-complete; no rule stops safely before it
        rows.append(stop_row(d, TRUTH, next((c for c in d["checkpoints"] if c["escapes"] == 0), None)))
    df = pd.DataFrame(rows)
    lines = [
        "# p_good's rule re-read on cnn6's checkpoints (scripts/resolution_study.py rules)",
        "",
        f"Replays that never stop (TomoNav {DIAGNOSE_BUDGET['tomonav']:,} proposals, NSGA-II "
        f"{DIAGNOSE_BUDGET['nsga2']:,}), seeds 0–4; at each checkpoint the certificate's readings and the truth "
        "(`escapes`: unmeasured configurations that improve the front by more than the tolerance used there). A "
        f"stop is the first checkpoint where p_good ≥ {STOP_AT} under the rule. p_good = exp(−missing_ε / "
        "(GOOD_SHARE · |front| · r)), r = (u / u_ε)^GOOD_RELAX_POWER once u ≥ GOOD_QUIET · u_ε. "
        f"“{TRUTH}”: the first checkpoint with no escape, read off the ground truth; a rule that stops earlier "
        "on that run stops on a front that is not ε-complete, so its median over the seeds bounds every "
        "safe rule's from below (a run with no such checkpoint never stops safely).",
        "",
        "| search | ε | rule | stopped | median stop / |Θ| | ε-complete at stop |",
        "|---|---|---|---|---|---|",
    ]
    for (search, eps, rule), g in df.groupby(["search", "epsilon", "rule"], sort=False):
        f = g[g.stop.notna()]
        lines.append(
            f"| {search} | {eps} | {rule} | {len(f)} of {len(g)} | {pct(f.stop.median() if len(f) else np.nan)} "
            f"| {int(f.ok.sum())} of {len(f)} |"
        )
    lines += [
        "",
        "Each run's stop as the certificate reads it:",
        "",
        "| search | ε | seed | stop (unique) | missing_ε (calibrated) | |front| | u_ε | r | tolerance | escapes |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for d in runs:
        at = next((c for c in d["checkpoints"] if c["p_good"] >= STOP_AT), None)
        if at is None:
            continue
        held = at["unique"] / max(at["improved"], 1)
        r = held**cm.TUNED.good_relax_power if held >= cm.TUNED.good_quiet else 1.0
        lines.append(
            f"| {d['search']} | {d['epsilon']} | {d['seed']} | {at['unique']:,} | {at['missing_good']:.2f} | {at['front']} "
            f"| {at['improved']:,} | {r:.1f} | {cm.TUNED.good_share * at['front'] * r:.0f} | {at['escapes']} |"
        )
    text = "\n".join(lines) + "\n"
    path = OUT.parent / "resolution_study_rules.md"
    path.write_text(text)
    print(f"wrote {path.relative_to(ROOT)}")
    return text


def pct(x) -> str:
    return "—" if x is None or x != x else f"{x:.0%}"


def markdown(df: pd.DataFrame) -> str:
    lines = [
        "# The certificate at the measurement's resolution (scripts/resolution_study.py)",
        "",
        f"stop_at = {STOP_AT}, stop_on = good. ε: `auto` is the 95 % Wilson half-width of an accuracy at the "
        "data set's N (at ψ = 1/2): δ's tolerance is that much accuracy, ρ's that share of ρ's measured range; a "
        "number is that share of each objective's measured range. ε_δ and ε_ρ are the tolerances the certificate "
        "used at the stop, in the units of the run's trace (live: raw δ and SSIM; replay: the table normalised "
        "over Θ). ε-complete: every unmeasured configuration ε-dominated by the front at the stop, checked on the "
        "ground truth at those tolerances; excess: how far beyond ε_δ the worst unmeasured configuration improves "
        "the front (≤ 0: ε-complete). Front: measured front at the stop (distinguishable members at the resolution).",
        "",
    ]
    for (model, mode, setting), g in df.groupby(["model", "mode", "epsilon_setting"], sort=False):
        first = g.iloc[0]
        eps = f"auto = {first.epsilon:.4f} (N = {int(first.inputs):,})" if setting == "auto" else f"{first.epsilon:g}"
        lines += [
            f"## {model}, {mode}, ε = {eps}, |Θ| = {int(first['size']):,}, |P*| = {int(first.pstar)}",
            "",
            "| search | seed | stopped | stop (unique) | stop / |Θ| | p_good | ε_δ | ε_ρ | ε-complete | excess "
            "| complete | front (distinguishable) |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for _, r in g.iterrows():
            dist = (
                ""
                if r.distinguishable is None or r.distinguishable != r.distinguishable
                else f" ({int(r.distinguishable)})"
            )
            lines.append(
                f"| {r.search} | {r.seed} | {'yes' if r.stopped_at == r.stopped_at and r.stopped_at is not None else 'no'} "
                f"| {r['unique']:,} | {pct(r.stop_share)} | {r.p_good:.3f} | {r.eps_delta:.4f} | {r.eps_rho:.4f} "
                f"| {'yes' if r.eps_complete else '**no**'} | {r.worst_excess_delta:+.4f} | {'yes' if r.complete else 'no'} "
                f"| {r['front']}{dist} |"
            )
        for search, h in g.groupby("search", sort=False):
            fired = h[h.stopped_at.notna()]
            lines.append(
                f"\n{search}: median stop {pct(h.stop_share.median())} of the lattice over {len(h)} seeds; "
                f"{len(fired)} stopped, {int(fired.eps_complete.sum())} of them ε-complete."
            )
        lines.append("")
    return "\n".join(lines) + "\n"


def report() -> pd.DataFrame:
    rows = [json.loads(p.read_text()) for p in sorted(CACHE.glob("*.json")) if p.name.startswith(("live__", "large__"))]
    if not rows:
        raise SystemExit(f"no runs under {CACHE}: run `live` or `large` first")
    df = pd.DataFrame(rows)
    order = {m: i for i, m in enumerate((*LIVE_MODELS, "cnn6"))}
    df = df.sort_values(
        ["model", "epsilon_setting", "search", "seed"], key=lambda c: c.map(order) if c.name == "model" else c
    )
    OUT.parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(OUT.with_suffix(".csv"), index=False)
    OUT.with_suffix(".md").write_text(markdown(df))
    print(f"wrote {OUT.with_suffix('.csv').relative_to(ROOT)} and {OUT.with_suffix('.md').relative_to(ROOT)}")
    return df


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=("live", "large", "diagnose", "rules", "report"))
    ap.add_argument("--seeds", type=int, nargs="+")
    ap.add_argument("--cache-dir", default=str(ROOT / "results" / "cache"))
    ap.add_argument("--searches", nargs="+", default=list(LARGE_SEARCHES))
    ap.add_argument("--epsilon", nargs="+", default=[str(e) for e in EPSILONS])
    ap.add_argument("--table", default="cnn6", help="diagnose: cnn6 or gen/<profile>/<n>x<ℓ>/<seed>")
    ap.add_argument(
        "--groundtruth",
        type=Path,
        nargs="*",
        default=[],
        help="tables to read instead of the ones the current code's keys name (a table computed by an earlier "
        "version whose key differs); each is used for the benchmark its .json names",
    )
    args = ap.parse_args(argv)
    from testnav.groundtruth.compute import read_meta

    GIVEN.update({read_meta(g)["benchmark"]: g for g in args.groundtruth})
    cache_dir = Path(args.cache_dir)
    if args.what == "rules":
        rules()
        return 0
    if args.what == "live":
        live(args.seeds or [0, 1, 2], cache_dir)
    elif args.what == "large":
        eps = [e if e == "auto" else float(e) for e in args.epsilon]
        large(args.seeds or [0, 1, 2, 3, 4], cache_dir, args.searches, eps)
    elif args.what == "diagnose":
        for e in args.epsilon:
            for search in args.searches:
                for seed in args.seeds or [0]:
                    d = diagnose(search, seed, e if e == "auto" else float(e), cache_dir, name=args.table)
                    for c in d["checkpoints"]:
                        print(
                            search,
                            seed,
                            e,
                            c["unique"],
                            f"p_good={c['p_good']:.3f}",
                            f"fresh={c['fresh_good']}",
                            f"missing={c['missing_good']:.3g}",
                            f"front={c['front']}",
                            f"improved={c['improved']}",
                            f"escapes={c['escapes']}",
                            flush=True,
                        )
        return 0
    report()
    return 0


if __name__ == "__main__":
    sys.exit(main())
