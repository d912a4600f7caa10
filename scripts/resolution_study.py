"""The stopping certificate at the measurement's resolution (issues 63 and 74, item 4): where
epsilon=auto stops TomoNav and NSGA-II, whether any stop leaves the front not ε-complete, and that p_good
does not stop a run at an ε below what the measurement resolves.

    python scripts/resolution_study.py live [--seeds 0 1 2]        # (a) the verdict models and mnist5k, live
    python scripts/resolution_study.py large [--seeds 0 1 2 3 4]   # (b) cnn6 replayed, ε = 0.01 and auto
    python scripts/resolution_study.py diagnose --epsilon auto     # (c) cnn6 replays that never stop
    python scripts/resolution_study.py rules                       # the truth and the rules on (b), (c)
    python scripts/resolution_study.py report                      # the tables from the recorded rows
    python scripts/resolution_study.py conformance                 # results/tables/conformance_stops.md

(a) `live`: TomoNav and NSGA-II on the models themselves (stop_at = 0.95, stop_on = good, ε = auto and
0.01): the MLP and the CNN of scripts/verdict_models.py (625 configurations, 400 and 500 test digits)
through `testnav.Tester.search`, and the mnist5k LeNet-5 (1,296 configurations, 5,000 digits: D is
1,000 of them) through `pipeline.live`. Each stop is read against the model's ground truth (the cached
table; mnist5k: results/golden/mnist5k.csv, whose SSIM is normalised over Θ and is mapped back to raw
SSIM) in the units the run measured (raw δ, raw SSIM) at the tolerances the certificate used there.
(b) `large`: the CNN of scripts/verdict_models.py under six families (15,625 configurations, 400
digits), replayed from its ground truth through `pipeline.replay` with ρ's probe on the Tester's data
(the path of `Tester.search(replay=True)`), TomoNav and NSGA-II, stop_at = 0.95, stop_on = good, ε = 0.01
and auto; a run that does not stop goes on to DIAGNOSE_BUDGET proposals. Every checkpoint is recorded
with the truth there (`escapes`: unmeasured configurations beyond the front by more than the tolerance
the certificate used), so a run that never stopped is also a record of where a rule could have.
(c) `diagnose`: the same replays with no stop_at (cnn6, or a generated table), for the truth at `auto`.
The ground truths are read, never computed here: a missing table stops the script.

Writes results/tables/resolution_study.{csv,md}, resolution_study_rules.md and conformance_stops.md; each
run is kept under results/cache/resolution_study/ (delete a file to rerun it).
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
from testnav.stopping.epsilon import eps_complete, eps_dominated  # noqa: E402

STOP_AT = 0.95
VERSION = "3"  # bump to invalidate the cached runs (3: the paired resolution and the front's neighbourhood, issue 74)
CACHE = ROOT / "results" / "cache" / "resolution_study" / VERSION
OUT = ROOT / "results" / "tables" / "resolution_study"
LIVE_MODELS = ("mlp", "cnn", "mnist5k")
SEARCHES = ("tomonav", "nsga2")
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


def first_order(trace: pd.DataFrame, lattice) -> np.ndarray:
    """The configurations of a run in the order they were first measured."""
    idx = lattice.index(trace[[f"t{i + 1}" for i in range(lattice.n)]].to_numpy(np.int64))
    return idx[np.sort(np.unique(idx, return_index=True)[1])]


def checkpoints(run, values: np.ndarray, lattice) -> list[dict]:
    """Each checkpoint's readings (Checkpoint.row) with the truth there: `escapes`, the unmeasured
    configurations (θ = 0 aside) that the measured front does not ε-dominate at the tolerance the
    certificate used there, and `missing_members`, the members of P* not measured."""
    order = first_order(run.trace, lattice)
    rest_all = np.ones(lattice.size, bool)
    rest_all[0] = False
    pstar = np.arange(1, lattice.size)[nondominated_mask(*values[1:].T)]
    out = []
    for c in run.checkpoints:
        seen = order[: c.unique]
        m = seen[seen != 0]
        front = values[m][nondominated_mask(*values[m].T)]
        rest = rest_all.copy()
        rest[seen] = False
        escapes = int((~eps_dominated(values[rest], front, np.asarray(c.eps))).sum()) if len(front) else int(rest.sum())
        row = {k: (None if isinstance(v, float) and not np.isfinite(v) else v) for k, v in c.row().items()}
        out.append({**row, "escapes": escapes, "missing_members": int(np.isin(pstar, seen, invert=True).sum())})
    return out


def row(
    model: str, mode: str, run, values: np.ndarray, lattice, seconds: float, rho_affine=False, spans=(1.0, 1.0)
) -> dict:
    """One run's end (its stop, or its budget) against the truth `values` at the tolerance the certificate
    used at its last checkpoint, with every checkpoint (`checkpoints`). `rho_affine`: the truth's ρ is
    min–max normalised over Θ (results/golden/mnist5k.csv) and is mapped back to the run's raw units by the
    affine map that the measured configurations give (least squares; exact up to the table's six decimals).
    `spans`: the raw (δ, ρ) ranges the run's values were divided by (a replay's table; 1 live)."""
    s = run.summary
    measured = measured_of(run.trace, lattice)
    idx = lattice.index(run.trace[[f"t{i + 1}" for i in range(lattice.n)]].to_numpy(np.int64))
    if rho_affine:
        slope, intercept = np.polyfit(values[idx, 1], run.trace["rho"].to_numpy(float), 1)
        values = np.column_stack([values[:, 0], intercept + slope * values[:, 1]])
    last = run.checkpoints[-1]
    eps = np.asarray(last.eps, float)
    truth = check(values, measured, eps)
    # the run's own values against the truth's (the same measurement, read twice)
    drift = np.abs(run.trace[["delta", "rho"]].to_numpy(float) - values[idx]).max(axis=0)
    front = run.front
    reached = [c for c in run.checkpoints if c.good.p >= STOP_AT and c.certifiable is False]
    return {
        "model": model,
        "mode": mode,
        "search": s["search"],
        "seed": int(s["seed"]),
        "size": int(lattice.size),
        "budget": int(s["budget"]),
        "stop_rule": s["stop_on"],
        "inputs": s.get("resolution_inputs"),
        "epsilon_setting": s.get("epsilon_setting", "number"),
        "epsilon": float(s["epsilon"]),
        "eps_delta": float(eps[0]),
        "eps_rho": float(eps[1]),
        "delta_span": float(spans[0]),
        "rho_span": float(spans[1]),
        "resolution_delta": s.get("resolution_delta"),
        "resolution_rho": s.get("resolution_rho"),
        "rho_method": s.get("resolution_rho_method"),
        "certifiable": s.get("certifiable"),
        "refused_at": reached[0].unique if reached else None,  # p_good ≥ stop_at below the resolution
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
        "checkpoints": checkpoints(run, values, lattice),
    }


def write(path: Path, out: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(out, default=float))
    tmp.replace(path)
    print(json.dumps({k: v for k, v in out.items() if k != "checkpoints"}, default=float), flush=True)


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
    """(lattice, truth values, (search, seed, ε) → a live run, stop_at 0.95 on p_good) for one of LIVE_MODELS."""
    from verdict_models import tester

    from testnav import pipeline
    from testnav.stopping.certificate import CertificateConfig

    if model == "mnist5k":
        b = pipeline.compose_benchmark(["benchmark=mnist5k"])
        session = pipeline.open(b, cache_dir, "cpu")
        values = table_values(pd.read_csv(ROOT / "results" / "golden" / "mnist5k.csv"), b.lattice, "rho_ssim")

        def search(name, seed, eps):
            cert = CertificateConfig(stop_at=STOP_AT, stop_on="good", epsilon=eps)
            return pipeline.live(pipeline.RunSpec(name, seed=seed, certificate=cert), session, "ssim")

        return b.lattice, values, search
    t = tester(model, cache_dir)
    values = table_values(pd.read_parquet(existing_groundtruth(t)), t.lattice, "ssim")
    return (
        t.lattice,
        values,
        lambda name, seed, eps: t.search(name, seed=seed, stop_at=STOP_AT, stop_on="good", epsilon=eps),
    )


def live(seeds, cache_dir: Path, searches=SEARCHES, epsilons=EPSILONS) -> list[dict]:
    rows = []
    for model in LIVE_MODELS:
        opened = None
        for eps in epsilons:
            for search in searches:
                for seed in seeds:
                    path = CACHE / f"live__{model}__{search}__{eps}__{seed}.json"
                    if not path.exists():
                        opened = opened or open_live(model, cache_dir)
                        lattice, values, run_search = opened
                        t0 = time.perf_counter()
                        run = run_search(search, seed, eps)
                        seconds = time.perf_counter() - t0
                        write(path, row(model, "live", run, values, lattice, seconds, rho_affine=model == "mnist5k"))
                    rows.append(json.loads(path.read_text()))
    return rows


DIAGNOSE_BUDGET = {"tomonav": 12_000, "nsga2": 40_000}  # proposals of a run that does not stop
OPENED: dict = {}  # cnn6's Tester, table and ρ's probe, opened once


def cnn6_replay(search: str, seed: int, eps, stop_at, cache_dir: Path, path: Path) -> dict:
    """One cnn6 replay (stop_on good; `stop_at` None: it never stops) to its stop or DIAGNOSE_BUDGET
    proposals (budget None at auto with a stop: 5 × |Θ|), recorded at `path` with every checkpoint."""
    from verdict_models import tester

    from testnav import pipeline
    from testnav.stopping.certificate import CertificateConfig

    if path.exists():
        return json.loads(path.read_text())
    if not OPENED:
        t = tester("cnn6", cache_dir)
        obj, identity = pipeline.groundtruth_objectives(existing_groundtruth(t), t.benchmark, "ssim")
        rho_span = float(np.ptp(pd.read_parquet(identity["table"], columns=["ssim"])["ssim"]))
        OPENED.update(t=t, obj=obj, identity=identity, probe=pipeline.RhoProbe(t.session, "ssim"), rho_span=rho_span)
    t, obj, identity, probe = (OPENED[k] for k in ("t", "obj", "identity", "probe"))
    cert = CertificateConfig(stop_at=stop_at, stop_on="good", epsilon=eps)
    budget = None if eps == "auto" and stop_at is not None else DIAGNOSE_BUDGET[search]
    spec = pipeline.RunSpec(search, budget=budget, seed=seed, certificate=cert)
    t0 = time.perf_counter()
    run = pipeline.replay(spec, obj, identity, t.benchmark.families, probe=probe)
    values = np.column_stack([obj.delta, obj.rho])
    out = row(
        "cnn6", "replay", run, values, obj.lattice, time.perf_counter() - t0, spans=(obj.delta_span, OPENED["rho_span"])
    )
    write(path, out)
    return out


def large(seeds, cache_dir: Path, searches=SEARCHES, epsilons=EPSILONS) -> list[dict]:
    return [
        cnn6_replay(search, seed, eps, STOP_AT, cache_dir, CACHE / f"large__cnn6__{search}__{eps}__{seed}.json")
        for eps in epsilons
        for search in searches
        for seed in seeds
    ]


def diagnose(search: str, seed: int, eps, cache_dir: Path) -> dict:
    """A cnn6 replay that never stops: every checkpoint's readings with the truth there."""
    return cnn6_replay(search, seed, eps, None, cache_dir, CACHE / f"diagnose__cnn6__{search}__{eps}__{seed}.json")


# p_good's rule re-read on the recorded checkpoints (`rules`): (label, cap on the relax r, cap on |front|);
# None: as p_good reads it (testnav.stopping.estimators.GoodEstimator.probability), without the refusal
RULES = [
    ("p_good ≥ 0.95 (no refusal)", None, None),
    ("r ≤ 4", 4, None),
    ("r ≤ 2", 2, None),
    ("no relax (r = 1)", 1, None),
    ("|front| ≤ 40", None, 40),
    ("|front| ≤ 40, r ≤ 4", 4, 40),
    ("|front| ≤ 20", None, 20),
]
ALONE = "p_good ≥ 0.95 where ε ≥ the resolution"
CERTIFICATE = "the certificate (also: the front's neighbours all measured)"
TRUTH = "earliest safe stop (the truth)"


def rule_p(c: dict, relax_cap, front_cap) -> float:
    """p_good at checkpoint `c` with the relax r capped at `relax_cap` and |front| at `front_cap`."""
    from testnav.stopping import certificate as cm

    missing = np.inf if c["missing_good"] is None else c["missing_good"]
    if c["remaining"] == 0 or c["fresh_good"] or not np.isfinite(missing) or c["front"] == 0:
        return cm.GoodEstimator.probability(
            c["fresh_good"], missing, c["front"], c["remaining"], c["unique"], c["improved"]
        )
    held = c["unique"] / max(c["improved"], 1)
    r = held**cm.TUNED.good_relax_power if held >= cm.TUNED.good_quiet else 1.0
    r = min(r, relax_cap) if relax_cap else r
    front = min(c["front"], front_cap) if front_cap else c["front"]
    return float(np.exp(-min(missing, c["remaining"]) / (cm.TUNED.good_share * front * r)))


def stop_row(d: dict, rule: str, at: dict | None) -> dict:
    """Run `d`'s stop under `rule` at checkpoint `at` (None: no stop): its share of Θ, and whether ε-complete."""
    return {
        "search": d["search"],
        "epsilon": str(d["epsilon_setting"] if d["epsilon_setting"] == "auto" else d["epsilon"]),
        "seed": d["seed"],
        "rule": rule,
        "stop": np.nan if at is None else at["unique"] / d["size"],
        "ok": np.nan if at is None else float(at["escapes"] == 0),
    }


def unstopped() -> list[dict]:
    """The cnn6 records that went on to their budget (diagnose, and large at an ε it could not certify)."""
    runs = [json.loads(p.read_text()) for p in sorted(CACHE.glob("*__cnn6__*.json"))]
    return [d for d in runs if d["stopped_at"] is None]


def rules() -> str:
    """The cnn6 runs that never stopped, re-read: per search and ε, where the certificate, p_good without
    the refusal, RULES' variants of it and the truth would stop, and how many such stops were ε-complete."""
    runs = unstopped()
    rows = []
    for d in runs:
        cps = d["checkpoints"]
        for label, rcap, fcap in RULES:
            rows.append(stop_row(d, label, next((c for c in cps if rule_p(c, rcap, fcap) >= STOP_AT), None)))
        ok = [c for c in cps if c["p_good"] >= STOP_AT and c["certifiable"] is not False]
        rows.append(stop_row(d, ALONE, ok[0] if ok else None))
        rows.append(stop_row(d, CERTIFICATE, next((c for c in ok if c["unexplored"] == 0), None)))
        # the truth: the first checkpoint whose front is ε-complete; no rule stops safely before it
        rows.append(stop_row(d, TRUTH, next((c for c in cps if c["escapes"] == 0), None)))
    df = pd.DataFrame(rows)
    lines = [
        "# p_good's rule re-read on cnn6's checkpoints (scripts/resolution_study.py rules)",
        "",
        f"The cnn6 replays that went on to their budget (TomoNav {DIAGNOSE_BUDGET['tomonav']:,} proposals, NSGA-II "
        f"{DIAGNOSE_BUDGET['nsga2']:,}): `large` at ε = 0.01, where the certificate does not stop below the "
        "measurement's resolution, and `diagnose` (no stop_at). At each checkpoint the certificate's readings and the "
        "truth (`escapes`: unmeasured configurations that improve the front by more than the tolerance used there). "
        f"A stop is the first checkpoint where the rule reaches {STOP_AT}. p_good = exp(−missing_ε / (GOOD_SHARE · "
        "|front| · r)), r = (u / u_ε)^GOOD_RELAX_POWER once u ≥ GOOD_QUIET · u_ε; the caps on r and |front| are "
        f"read without the refusal. “{ALONE}”: p_good ≥ {STOP_AT} where ε is at least the measurement's resolution; "
        f"“{CERTIFICATE}”: that, once every unit-step neighbour of the measured front is measured, as the certificate "
        "stops. "
        f"“{TRUTH}”: the first checkpoint with no escape, read off the ground truth; a rule that stops earlier on "
        "that run stops on a front that is not ε-complete (a run with no such checkpoint never stops safely).",
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
    lines += ["", *neighbour_rule()]
    lines += [
        "",
        "Where each run's p_good first reached the threshold, as the certificate read it:",
        "",
        "| search | ε | seed | u | missing_ε (calibrated) | |front| | u_ε | ε_δ | resolution δ | certifiable "
        "| unmeasured neighbours | escapes |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for d in runs:
        at = next((c for c in d["checkpoints"] if c["p_good"] >= STOP_AT), None)
        if at is None:
            continue
        eps = d["epsilon_setting"] if d["epsilon_setting"] == "auto" else d["epsilon"]
        lines.append(
            f"| {d['search']} | {eps} | {d['seed']} | {at['unique']:,} | {at['missing_good'] or 0:.2f} | {at['front']} "
            f"| {at['improved']:,} | {at['eps_delta']:.4f} | {at['resolution_delta']:.4f} | {at['certifiable']} "
            f"| {at['unexplored']} | {at['escapes']} |"
        )
    text = "\n".join(lines) + "\n"
    path = OUT.parent / "resolution_study_rules.md"
    path.write_text(text)
    print(f"wrote {path.relative_to(ROOT)}")
    return text


def neighbour_rule() -> list[str]:
    """The live runs at auto (stop_at on p_good): where p_good alone would have stopped them (the first checkpoint
    with p_good ≥ STOP_AT, ε at the resolution), against the certificate's stop (the front's neighbours measured
    as well); each read off the truth at the tolerance used there."""
    rows = []
    for p in sorted(CACHE.glob("live__*__auto__*.json")):
        d = json.loads(p.read_text())
        ok = [c for c in d["checkpoints"] if c["p_good"] >= STOP_AT and c["certifiable"] is not False]
        rows.append(stop_row(d, ALONE, ok[0] if ok else None) | {"model": d["model"]})
        at = next((c for c in ok if c["unexplored"] == 0), None) if d["stopped_at"] is not None else None
        rows.append(stop_row(d, CERTIFICATE, at) | {"model": d["model"]})
    lines = [
        "The live runs at auto (scripts/resolution_study.py live): p_good alone against the certificate, which "
        "also waits for the front's unit-step neighbours to be measured.",
        "",
        "| model | search | rule | stopped | median stop / |Θ| | ε-complete at stop |",
        "|---|---|---|---|---|---|",
    ]
    for (model, search, rule), g in pd.DataFrame(rows).groupby(["model", "search", "rule"], sort=False):
        f = g[g.stop.notna()]
        lines.append(
            f"| {model} | {search} | {rule} | {len(f)} of {len(g)} | {pct(f.stop.median() if len(f) else np.nan)} "
            f"| {int(f.ok.sum())} of {len(f)} |"
        )
    return lines


def pct(x) -> str:
    return "—" if x is None or x != x else f"{x:.0%}"


def markdown(df: pd.DataFrame) -> str:
    lines = [
        "# The certificate at the measurement's resolution (scripts/resolution_study.py)",
        "",
        f"stop_at = {STOP_AT}, stop_on = good. The resolution, read at each checkpoint over the measured front: δ's "
        "is the 95 % half-width of the paired difference of two accuracies on the same N inputs, clean against each "
        "front member (the median over the front), ρ's the 95 % half-width of ρ from its per-input values (SSIM per image; the median "
        "over up to 16 members). `auto` uses it as the tolerance; a number ε is that share of each objective's "
        "measured range, and where it is below the resolution p_good does not stop the run (refused: the first u "
        f"at which p_good reached {STOP_AT} there), which goes on to its budget. ε_δ, ε_ρ and the resolution are "
        "the ones of the last checkpoint, in the units of the run's trace (live: raw δ and SSIM; replay: the table "
        "normalised over Θ; the resolution's raw numbers are in resolution_study.csv). ε-complete: every unmeasured "
        "configuration ε-dominated by the front at the run's end, checked on the ground truth at those tolerances; "
        "excess: how far beyond ε_δ the worst unmeasured configuration improves the front (≤ 0: ε-complete). Front: "
        "measured front at the end (distinguishable members at the resolution).",
        "",
    ]
    for (model, mode, setting), g in df.groupby(["model", "mode", "epsilon_setting"], sort=False):
        first = g.iloc[0]
        eps = f"auto (N = {int(first.inputs):,})" if setting == "auto" else f"{first.epsilon:g}"
        lines += [
            f"## {model}, {mode}, ε = {eps}, |Θ| = {int(first['size']):,}, |P*| = {int(first.pstar)}",
            "",
            "| search | seed | budget | stopped | refused | end (unique) | end / |Θ| | p_good | ε_δ | ε_ρ | resolution "
            "δ, ρ | ε-complete | excess | complete | front (distinguishable) |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for _, r in g.iterrows():
            dist = "" if r.distinguishable != r.distinguishable else f" ({int(r.distinguishable)})"
            res = f"{r.resolution_delta / r.delta_span:.4f}, {r.resolution_rho / r.rho_span:.4f}"
            lines.append(
                f"| {r.search} | {r.seed} | {r.budget:,} | {'yes' if r.stopped_at == r.stopped_at else 'no'} "
                f"| {'—' if r.refused_at != r.refused_at else f'{int(r.refused_at):,}'} "
                f"| {r['unique']:,} | {pct(r.stop_share)} | {r.p_good:.3f} | {r.eps_delta:.4f} | {r.eps_rho:.4f} "
                f"| {res} | {'yes' if r.eps_complete else '**no**'} | {r.worst_excess_delta:+.4f} "
                f"| {'yes' if r.complete else 'no'} | {r['front']}{dist} |"
            )
        for search, h in g.groupby("search", sort=False):
            fired = h[h.stopped_at.notna()]
            lines.append(
                f"\n{search}: {len(fired)} of {len(h)} stopped (median {pct(fired.stop_share.median())} of the "
                f"lattice), {int(fired.eps_complete.sum())} of them ε-complete; {int(h.refused_at.notna().sum())} "
                "refused below the resolution."
            )
        lines.append("")
    return "\n".join(lines) + "\n"


def study_rows() -> pd.DataFrame:
    """Every live and large run recorded (its checkpoints left out), with the spans that put its resolution
    in the units of its trace (replay: the table's raw ranges over Θ; live: 1)."""
    rows = []
    for p in sorted(CACHE.glob("*.json")):
        if p.name.startswith(("live__", "large__")):
            d = json.loads(p.read_text())
            d.pop("checkpoints", None)
            rows.append(d)
    if not rows:
        raise SystemExit(f"no runs under {CACHE}: run `live` or `large` first")
    df = pd.DataFrame(rows)
    order = {m: i for i, m in enumerate((*LIVE_MODELS, "cnn6"))}
    return df.sort_values(
        ["model", "epsilon_setting", "search", "seed"], key=lambda c: c.map(order) if c.name == "model" else c
    )


def report() -> pd.DataFrame:
    df = study_rows()
    OUT.parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(OUT.with_suffix(".csv"), index=False)
    OUT.with_suffix(".md").write_text(markdown(df))
    print(f"wrote {OUT.with_suffix('.csv').relative_to(ROOT)} and {OUT.with_suffix('.md').relative_to(ROOT)}")
    return df


def rate(k: int, n: int) -> str:
    """k of n with its 95 % Clopper–Pearson and Wilson intervals (statsmodels)."""
    from statsmodels.stats.proportion import proportion_confint

    if not n:
        return "— | — | —"
    cp = proportion_confint(k, n, alpha=0.05, method="beta")
    wi = proportion_confint(k, n, alpha=0.05, method="wilson")
    cp = tuple(np.nan_to_num(cp, nan=1.0 if k == n else 0.0))
    return f"{k} of {n} | {cp[0]:.0%}–{cp[1]:.0%} | {wi[0]:.0%}–{wi[1]:.0%}"


DESIGNED_ON = ("mlp", "cnn")  # lattices whose stops chose a rule of the certificate (not held out)


def held_out(df: pd.DataFrame) -> pd.DataFrame:
    """The rows of p_good's stops on lattices held out from its constants and rules (its record), before Θ was
    exhausted (a stop with every configuration measured holds the exact front and says nothing of p_good)."""
    stops = df[df.stopped_at.notna() & df.stop_rule.eq("good") & df["unique"].lt(df["size"])]
    return stops[~stops.model.isin(DESIGNED_ON)]


def conformance() -> str:
    """results/tables/conformance_stops.md: the certificate's stops per lattice, search and ε (false stops:
    stopped with the front not ε-complete at the tolerance used), and p_good's record over all of them."""
    df = pd.read_csv(OUT.with_suffix(".csv"))
    lines = [
        "# Certificate stops (scripts/resolution_study.py conformance)",
        "",
        f"From results/tables/resolution_study.csv: stop_at = {STOP_AT}, stop_on = good, on lattices held out from "
        "p_good's constants (chosen on generated tables only). A false stop: the run stopped and its front was not "
        "ε-complete on the ground truth at the tolerance the certificate used. Refused: p_good reached the threshold "
        "at an ε below the measurement's resolution, and the run went on to its budget. 95 % intervals: "
        'Clopper–Pearson (statsmodels, method="beta") and Wilson.',
        "",
        "| lattice | |Θ| | mode | search | ε | runs | refused | stops | median stop / |Θ| | false stops | "
        "Clopper–Pearson | Wilson |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    df = df.assign(
        eps_name=["auto" if s == "auto" else f"{float(e):g}" for s, e in zip(df.epsilon_setting, df.epsilon)]
    )
    for (model, mode, search, name), g in df.groupby(["model", "mode", "search", "eps_name"], sort=False):
        stops = g[g.stopped_at.notna()]
        lines.append(
            f"| {model} | {int(g['size'].iloc[0]):,} | {mode} | {search} | {name} | {len(g)} | "
            f"{int(g.refused_at.notna().sum())} | {len(stops)} | {pct(stops.stop_share.median() if len(stops) else np.nan)} "
            f"| {rate(int((~stops.eps_complete.astype(bool)).sum()), len(stops))} |"
        )
    every = df[df.stopped_at.notna() & df.stop_rule.eq("good")]
    stops = held_out(df)
    good = int(stops.eps_complete.astype(bool).sum())
    lines += [
        "",
        f"p_good's record at its stops before Θ was exhausted on the held-out lattices (every row above but "
        f"{', '.join(DESIGNED_ON)}, whose false stops at auto chose the rule that the front's unit-step neighbours be "
        "measured): the front "
        f"ε-complete at {rate(good, len(stops))} (k of n | Clopper–Pearson | Wilson); "
        f"testnav.stopping.certificate.HELD_OUT_STOPS holds ({good}, {len(stops)}). Over every row: "
        f"{rate(int(every.eps_complete.astype(bool).sum()), len(every))}.",
    ]
    text = "\n".join(lines) + "\n"
    path = OUT.parent / "conformance_stops.md"
    path.write_text(text)
    print(f"wrote {path.relative_to(ROOT)}; HELD_OUT_STOPS = ({good}, {len(stops)})")
    return text


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=("live", "large", "diagnose", "rules", "report", "conformance"))
    ap.add_argument("--seeds", type=int, nargs="+")
    ap.add_argument("--cache-dir", default=str(ROOT / "results" / "cache"))
    ap.add_argument("--searches", nargs="+", default=list(SEARCHES))
    ap.add_argument("--epsilon", nargs="+", default=[str(e) for e in EPSILONS])
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
    eps = [e if e == "auto" else float(e) for e in args.epsilon]
    if args.what == "rules":
        rules()
    elif args.what == "conformance":
        conformance()
    elif args.what == "live":
        live(args.seeds or [0, 1, 2], cache_dir, args.searches, eps)
    elif args.what == "large":
        large(args.seeds or [0, 1, 2, 3, 4], cache_dir, args.searches, eps)
    elif args.what == "diagnose":
        for e in eps:
            for search in args.searches:
                for seed in args.seeds or [0, 1, 2, 3, 4]:
                    diagnose(search, seed, e, cache_dir)
    else:
        report()
    return 0


if __name__ == "__main__":
    sys.exit(main())
