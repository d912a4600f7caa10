"""Stopping on a front that is good enough: where p_good stops TomoNav and NSGA-II, what the front is
then, and where pymoo's own terminations stop NSGA-II on the same runs.

    python scripts/stopping_study.py record [--split train test large] [--seeds 0 1 2 3 4] [--jobs 2]
    python scripts/stopping_study.py live [--seeds 0 1 2]
    python scripts/stopping_study.py report

`record` runs each search on each table of the split with the certificate on and never stopping
(stop_on=good's checkpoint schedule), keeping every checkpoint's readings; whether the measured
front was ε-complete (ε = 0.01 of the table's normalised objectives) and exactly complete there;
its hypervolume against P*'s; and, for NSGA-II, the generation at which pymoo's
`DefaultMultiObjectiveTermination()` and `RobustTermination(MultiObjectiveSpaceTermination(tol=0.005,
n_skip=5), period=20)` (pymoo's documented objective-space example) would have ended the run. A
stop at stop_at = 0.95 is read off the checkpoints with the certificate's current constants, so
`report` redraws without rerunning; each run is cached under results/cache/stopping_study/.

Splits (the held-out split is everything but `train`):
* train: generated tables (testnav/groundtruth/synthetic.py), every profile at 4⁴, 5⁴, 6⁴ and 4⁶,
  table seeds 300 and 301 (new for this study); TomoNav, NSGA-II and Random. The p_good constants
  (GOOD_SHARE, GOOD_QUIET, GOOD_RELAX_POWER) are chosen here only.
* test: real lattices, replayed: mnist5k under SSIM and KID (results/golden/mnist5k.csv),
  mnist5k_c6 under SSIM (4,096 configurations), and two models built as a practitioner would
  (scripts/practitioner_models.py): a CNN on scikit-learn's digits at 16×16 (625) and a text
  classifier of WordNet glosses (729); run seeds 0–4.
* large: generated tables above 10⁴ configurations (8⁵ and 6⁶, profiles pairs and additive,
  table seeds 100–102), TomoNav with 5,000 proposals.
`live` runs TomoNav and NSGA-II on the mnist5k LeNet-5, the digits CNN and the glosses model
themselves (testnav.Tester, stop_at = 0.95, stop_on the live default), and reads the stop against
their ground truths. Writes results/tables/stopping_study.{csv,md} (a row per table and search).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]

from testnav import searches  # noqa: E402
from testnav.core.oracle import TableOracle  # noqa: E402
from testnav.core.pareto import nondominated_mask  # noqa: E402
from testnav.core.recall import first_sightings  # noqa: E402
from testnav.core.table import Objectives  # noqa: E402
from testnav.groundtruth.synthetic import PROFILES, synthetic_table  # noqa: E402
from testnav.stopping import certificate as cm  # noqa: E402
from testnav.stopping.epsilon import eps_dominated  # noqa: E402

EPSILON = 0.01  # ε-completeness, in the table's normalised objectives
STOP_AT = 0.95
VERSION = "2"  # bump to invalidate the cached runs (what a run records changed)
CACHE = ROOT / "results" / "cache" / "stopping_study" / VERSION
OUT = ROOT / "results" / "tables" / "stopping_study"
TRAIN_SIZES = ((4, 4), (4, 5), (4, 6), (6, 4))  # (n, ℓ)
LARGE_SIZES = ((5, 8), (6, 6))
REAL = ("mnist5k_ssim", "mnist5k_kid", "mnist5k_c6_ssim", "digits16_ssim", "glosses_chrf")
TERMINATIONS = ("pymoo_default", "pymoo_robust")
# profiles that fix their own n and ℓ are left out: the size is the split's variable
PROFILE_NAMES = [k for k, v in PROFILES.items() if "n" not in v and "levels" not in v]
# (GOOD_SHARE, GOOD_QUIET, GOOD_RELAX_POWER) tried on the train split
GRID = [(s, q, g) for s in (0.25, 0.5, 1) for q in (1.5, 1.7, 2) for g in (0, 1, 1.5, 2)]
CURRENT = (cm.TUNED.good_share, cm.TUNED.good_quiet, cm.TUNED.good_relax_power)


# ------------------------------------------------------------------------------------------ tables


def table(name: str) -> Objectives:
    """A table by its study name: gen/<profile>/<n>x<ℓ>/<seed>, or one of REAL."""
    if name.startswith("gen/"):
        _, profile, size, seed = name.split("/")
        n, levels = map(int, size.split("x"))
        return Objectives.from_table(synthetic_table(**{**PROFILES[profile], "n": n, "levels": levels}, seed=int(seed)))
    if name.startswith("mnist5k_") and name.count("_") == 1:
        df = pd.read_csv(ROOT / "results" / "golden" / "mnist5k.csv")
        return Objectives.from_table(df, f"rho_{name.split('_')[1]}", source=name)
    if name == "mnist5k_c6_ssim":
        from testnav.groundtruth.compute import compute_groundtruth
        from testnav.pipeline import compose_benchmark

        path = compute_groundtruth(
            compose_benchmark(["benchmark=mnist5k_c6"]), ROOT / "results" / "cache", progress=False
        )
        return Objectives.from_table(pd.read_parquet(path), "ssim", source=name)
    from practitioner_models import TESTERS

    model, fidelity = name.split("_")
    df = TESTERS[model.removesuffix("16")](ROOT / "results" / "cache").groundtruth()
    return Objectives.from_table(df, fidelity, source=name)


def split_tables(split: str) -> list[str]:
    if split == "train":
        return [f"gen/{p}/{n}x{lv}/{s}" for n, lv in TRAIN_SIZES for p in PROFILE_NAMES for s in (300, 301)]
    if split == "large":
        return [
            f"gen/{p}/{n}x{lv}/{s}" for n, lv in LARGE_SIZES for p in ("pairs", "additive") for s in (100, 101, 102)
        ]
    return list(REAL)


def split_searches(split: str) -> tuple[str, ...]:
    return {"train": ("tomonav", "nsga2", "random"), "large": ("tomonav",)}.get(split, ("tomonav", "nsga2"))


# ------------------------------------------------------------------------------------------ truth


def hypervolume(points: np.ndarray) -> float:
    """The area dominated by `points` (maximised, in [0, 1]²) above the origin (pymoo's HV)."""
    from pymoo.indicators.hv import HV

    points = points[(points > 0).all(axis=1)]
    return float(HV(ref_point=np.zeros(2))(-points)) if len(points) else 0.0


class Truth:
    """What the table knows about a run's measured set after u unique configurations."""

    def __init__(self, obj: Objectives, proposals: np.ndarray):
        self.values = np.column_stack([obj.delta, obj.rho])
        self.order = proposals[first_sightings(proposals)]
        self.pstar = obj.pstar
        self.size = obj.lattice.size
        self.hv_star = hypervolume(self.values[obj.pstar])

    def measured(self, u: int) -> np.ndarray:
        m = self.order[:u]
        return m[m != 0]

    def front(self, u: int) -> np.ndarray:
        m = self.measured(u)
        return self.values[m][nondominated_mask(*self.values[m].T)] if len(m) else np.zeros((0, 2))

    def eps_complete(self, u: int) -> bool:
        rest = np.ones(self.size, bool)
        rest[self.order[:u]] = False
        rest[0] = False
        return bool(eps_dominated(self.values[rest], self.front(u), EPSILON).all())

    def complete(self, u: int) -> bool:
        return bool(np.isin(self.pstar, self.order[:u]).all())

    def hv_ratio(self, u: int) -> float:
        return hypervolume(self.front(u)) / self.hv_star if self.hv_star else 1.0

    def first(self, test) -> int | None:
        """The smallest u at which `test(u)` holds (it is monotone in u), or None."""
        lo, hi = 1, len(self.order)
        if not test(hi):
            return None
        while lo < hi:
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if test(mid) else (mid + 1, hi)
        return lo

    def at(self, u: int) -> dict:
        return {"eps_complete": self.eps_complete(u), "complete": self.complete(u), "hv_ratio": self.hv_ratio(u)}


# ------------------------------------------------------------------------------------------ record


class Watch:
    """pymoo's terminations, updated after every NSGA-II generation (a pymoo callback): where each
    would have ended the run, in proposals and unique configurations (the certificate's count)."""

    def __init__(self, certificate):
        from pymoo.termination.default import DefaultMultiObjectiveTermination
        from pymoo.termination.ftol import MultiObjectiveSpaceTermination
        from pymoo.termination.robust import RobustTermination

        self.certificate = certificate
        self.terms = {
            "pymoo_default": DefaultMultiObjectiveTermination(),
            "pymoo_robust": RobustTermination(MultiObjectiveSpaceTermination(tol=0.005, n_skip=5), period=20),
        }
        self.fired: dict[str, tuple[int, int]] = {}

    def __call__(self, algorithm) -> None:
        for name, term in self.terms.items():
            if name not in self.fired:
                term.update(algorithm)
                if term.has_terminated():
                    self.fired[name] = (self.certificate.measured.b, self.certificate.measured.u)


def record(name: str, search_name: str, seed: int) -> dict:
    """One run, never stopping: its checkpoints with the truth at each, and pymoo's terminations."""
    obj = table(name)
    size = obj.lattice.size
    budget = 5_000 if size > 10_000 else size if search_name == "tomonav" else 5 * size
    search = searches.make(search_name)
    search.fit(obj.lattice, budget)
    oracle = TableOracle(obj)
    cert = cm.Certificate(obj.lattice, cm.CertificateConfig(stop_on="good"), seed=seed)
    watch = None
    if search_name == "nsga2":
        watch = Watch(cert)
        build = search.pymoo_algorithm

        def with_watch(lattice, **kwargs):
            algorithm = build(lattice, **kwargs)
            algorithm.callback = watch
            return algorithm

        search.pymoo_algorithm = with_watch
    t0 = time.perf_counter()
    proposals, _ = cm.run_certified(search, cm.CertifiedOracle(oracle, cert), budget, seed, oracle.evaluate)
    truth = Truth(obj, proposals)
    checkpoints = [{**r.row(), **truth.at(r.unique)} for r in cert.records]
    terminations = {}
    for term in TERMINATIONS if watch else ():
        b, u = watch.fired.get(term, (None, None))
        terminations[term] = None if b is None else {"proposals": b, "unique": u, **truth.at(u)}
    return {
        "table": name,
        "search": search_name,
        "seed": seed,
        "size": size,
        "budget": budget,
        "pstar": len(obj.pstar),
        "unique": len(truth.order),
        "u_eps": truth.first(truth.eps_complete),
        "u_full": truth.first(truth.complete),
        "seconds": round(time.perf_counter() - t0, 1),
        "checkpoints": checkpoints,
        "terminations": terminations,
    }


def cached(job: tuple[str, str, int]) -> dict:
    name, search_name, seed = job
    path = CACHE / f"{name.replace('/', '-')}__{search_name}__{seed}.json"
    if path.exists():
        return json.loads(path.read_text())
    out = record(name, search_name, seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(out, default=float))
    tmp.replace(path)
    print(f"{name:28s} {search_name:8s} seed {seed}: {out['seconds']} s", flush=True)
    return out


def runs(splits, seeds, jobs: int = 1, only=()) -> list[dict]:
    todo = [
        (name, s, seed)
        for split in splits
        for name in split_tables(split)
        if not only or name in only
        for s in split_searches(split)
        for seed in (seeds if split == "test" else (0,))
    ]
    if jobs <= 1:
        return [cached(j) for j in todo]
    with ProcessPoolExecutor(jobs) as pool:
        return list(pool.map(cached, todo))


# ------------------------------------------------------------------------------------------ stops


def split_of(name: str) -> str:
    if not name.startswith("gen/"):
        return "test"
    n, lv = map(int, name.split("/")[2].split("x"))
    return "large" if lv**n > 10_000 else "train"


def group_of(name: str) -> str:
    """A real lattice by its name; generated tables by their size (ℓ^n), every profile and seed together."""
    if not name.startswith("gen/"):
        return name
    n, lv = name.split("/")[2].split("x")
    return f"generated {lv}^{n}"


def good(c: dict, constants=CURRENT) -> float:
    """p_good at checkpoint `c`, read with the certificate's rule and `constants` (its own by default)."""
    share, quiet, power = constants
    tuning = dataclasses.replace(cm.TUNED, good_share=share, good_quiet=quiet, good_relax_power=power)
    return cm.GoodEstimator.probability(
        c["fresh_good"], c["missing_good"], c["front"], c["remaining"], c["unique"], c["improved"], tuning
    )


def stops(all_runs: list[dict], rule=None) -> pd.DataFrame:
    """Per run: the first checkpoint at which `rule(checkpoint)` ≥ STOP_AT (default: p_good with
    the certificate's constants), with the truth there; and pymoo's terminations."""
    rule = rule or good
    rows = []
    for r in all_runs:
        base = {k: r[k] for k in ("table", "search", "seed", "size", "budget", "pstar", "u_eps", "u_full")}
        base["split"] = split_of(r["table"])
        base["group"] = group_of(r["table"])
        at = next((c for c in r["checkpoints"] if rule(c) >= STOP_AT), None)
        rows.append({**base, "rule": "p_good", **stop_fields(at, r)})
        if r["size"] <= 10_000:  # p_complete on the same schedule as stop_on=complete's there
            at = next((c for c in r["checkpoints"] if c["p_complete"] >= STOP_AT), None)
            rows.append({**base, "rule": "p_complete", **stop_fields(at, r)})
        for term, t in r["terminations"].items():
            rows.append({**base, "rule": term, **stop_fields(t, r)})
    return pd.DataFrame(rows)


def stop_fields(at: dict | None, r: dict) -> dict:
    if at is None:
        return {"fired": False, "stop_u": np.nan, "stop_b": np.nan, "eps_complete": np.nan, "complete": np.nan}
    return {
        "fired": True,
        "early": at["unique"] < r["size"],
        "stop_u": at["unique"],
        "stop_b": at["proposals"],
        "eps_complete": bool(at["eps_complete"]),
        "complete": bool(at["complete"]),
        "hv_ratio": at["hv_ratio"],
    }


def choose(all_runs: list[dict]) -> tuple[pd.DataFrame, tuple]:
    """The grid on the train split: per constants, the share of stops with an ε-complete front (the
    worst search's) and TomoNav's median stop. Chosen: the earliest TomoNav median stop among the
    constants whose stops were ε-complete ≥ 95 % of the time for every search; ties to the higher
    share ε-complete, then the smaller constants."""
    train = [r for r in all_runs if split_of(r["table"]) == "train"]
    rows = []
    for share, quiet, relax in GRID:
        st = stops(train, lambda c, k=(share, quiet, relax): good(c, k))
        st = st[(st.rule == "p_good") & st.fired]
        per = st.groupby("search")["eps_complete"].mean()
        tomonav = st[st.search == "tomonav"]
        rows.append(
            {
                "share": share,
                "quiet": quiet,
                "relax": relax,
                "worst_eps_complete": per.min(),
                "tomonav_median_stop": (tomonav.stop_u / tomonav["size"]).median(),
            }
        )
    grid = pd.DataFrame(rows)
    ok = grid[grid.worst_eps_complete >= 0.95]
    best = ok.sort_values(
        ["tomonav_median_stop", "worst_eps_complete", "share", "relax", "quiet"],
        ascending=[True, False, True, True, True],
    ).iloc[0]
    return grid, (float(best.share), float(best.quiet), float(best.relax))


# ------------------------------------------------------------------------------------------ live


def live(seeds) -> list[dict]:
    """TomoNav and NSGA-II on the models themselves (pipeline.live, stop_at = 0.95, stop_on `auto`:
    good on a live run), each stop read against the model's ground truth."""
    from practitioner_models import TESTERS

    from testnav import pipeline
    from testnav.stopping.certificate import CertificateConfig

    def mnist5k():
        b = pipeline.compose_benchmark(["benchmark=mnist5k"])
        return pipeline.open(b, ROOT / "results" / "cache", "cpu"), "ssim"

    def tester(name):
        t = TESTERS[name](ROOT / "results" / "cache")
        return t.session, t.fidelity

    sessions = {
        "mnist5k_ssim": mnist5k,
        "digits16_ssim": lambda: tester("digits"),
        "glosses_chrf": lambda: tester("glosses"),
    }
    rows = []
    for name, open_session in sessions.items():
        session, fidelity = open_session()
        obj = table(name)
        for s in ("tomonav", "nsga2"):
            for seed in seeds:
                spec = pipeline.RunSpec(s, seed=seed, certificate=CertificateConfig(stop_at=STOP_AT))
                run = pipeline.live(spec, session, fidelity)
                levels = run.trace[[f"t{i + 1}" for i in range(obj.lattice.n)]].to_numpy(np.int64)
                truth = Truth(obj, obj.lattice.index(levels))
                u = int(run.summary["unique"])
                rows.append(
                    {
                        "table": name,
                        "search": s,
                        "seed": seed,
                        "size": obj.lattice.size,
                        "stopped_at": run.summary["stopped_at"],
                        "stop_on": run.summary["stop_on"],
                        "p_good": run.summary["p_good"],
                        "p_complete": run.summary["p_complete"],
                        "stop_u": u,
                        "u_eps": truth.first(truth.eps_complete),
                        "seconds": run.summary["wall_seconds"],
                        **truth.at(u),
                    }
                )
                print(rows[-1], flush=True)
    return rows


# ------------------------------------------------------------------------------------------ report


def summary(st: pd.DataFrame) -> pd.DataFrame:
    rows = []
    order = {"test": 0, "large": 1, "train": 2}
    st = st.assign(order=st["split"].map(order)).sort_values(["order", "size", "group"], kind="stable")
    for (split, name, search, rule), g in st.groupby(["split", "group", "search", "rule"], sort=False):
        f = g[g.fired]
        rows.append(
            {
                "split": split,
                "table": name,
                "size": int(g["size"].iloc[0]),
                "search": search,
                "rule": rule,
                "runs": len(g),
                "fired": len(f),
                "early": int(f.early.sum()) if len(f) else 0,
                "median_stop_of_lattice": (f.stop_u / f["size"]).median() if len(f) else np.nan,
                "median_stop_over_eps": (f.stop_u / f.u_eps).median() if len(f) else np.nan,
                "median_u_eps_of_lattice": (g.u_eps / g["size"]).median(),
                "median_stop_proposals": f.stop_b.median() if len(f) else np.nan,
                "eps_complete": f.eps_complete.mean() if len(f) else np.nan,
                "complete": f.complete.mean() if len(f) else np.nan,
                "hv_ratio": f.hv_ratio.median() if len(f) else np.nan,
                "hv_ratio_min": f.hv_ratio.min() if len(f) else np.nan,
            }
        )
    return pd.DataFrame(rows)


def pct(x) -> str:
    return "—" if x != x else f"{x:.0%}"


def num(x, fmt=".2f") -> str:
    return "—" if x != x else format(x, fmt)


def markdown(table_: pd.DataFrame, chosen: tuple, grid: pd.DataFrame, live_rows: list[dict]) -> str:
    share, quiet, relax = chosen
    lines = [
        "# Stopping on a good-enough front (scripts/stopping_study.py)",
        "",
        f"p_good's constants chosen on the train split only: GOOD_SHARE = {share:g}, GOOD_QUIET = {quiet:g}, "
        f"GOOD_RELAX_POWER = {relax:g} (TomoNav's earliest median stop among the constants whose stops were "
        f"ε-complete ≥ 95 % of the time for every search). Held out: every other row. ε = {EPSILON} of each normalised "
        f"objective; stop_at = {STOP_AT}. Stops are read off each run's checkpoints (stop_on=good's schedule); "
        "pymoo's terminations off the same NSGA-II runs (`pymoo_default`: `DefaultMultiObjectiveTermination()`; "
        "`pymoo_robust`: `RobustTermination(MultiObjectiveSpaceTermination(tol=0.005, n_skip=5), period=20)`). "
        "Stop: unique configurations measured at the stop; ε-point: the unique configurations after which "
        "the run's front was ε-complete; HV: the hypervolume of the front at the stop over P*'s.",
        "",
        "| split | lattice | |Θ| | search | rule | runs | fired (early) | median stop / |Θ| | median stop / ε-point "
        "| median ε-point / |Θ| | ε-complete at stop | complete at stop | HV ratio: median (min) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for _, r in table_.iterrows():
        lines.append(
            f"| {r.split} | {r.table} | {r['size']:,} | {r.search} | {r.rule} | {r.runs} | {r.fired} ({r.early}) "
            f"| {pct(r.median_stop_of_lattice)} | {num(r.median_stop_over_eps)} | {pct(r.median_u_eps_of_lattice)} "
            f"| {pct(r.eps_complete)} | {pct(r.complete)} | {num(r.hv_ratio, '.4f')} ({num(r.hv_ratio_min, '.4f')}) |"
        )
    if live_rows:
        lv = pd.DataFrame(live_rows)
        lines += [
            "",
            "## Live (the models themselves, pipeline.live: stop_at = 0.95, stop_on `auto` = good)",
            "",
            "| table | search | runs | stopped | median stop / |Θ| | median stop / ε-point | ε-complete at stop "
            "| complete at stop | median HV ratio | median seconds |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for (name, search), g in lv.groupby(["table", "search"], sort=False):
            lines.append(
                f"| {name} | {search} | {len(g)} | {int(g.stopped_at.notna().sum())} "
                f"| {pct((g.stop_u / g['size']).median())} | {num((g.stop_u / g.u_eps).median())} "
                f"| {pct(g.eps_complete.mean())} | {pct(g.complete.mean())} | {num(g.hv_ratio.median(), '.4f')} "
                f"| {g.seconds.median():.0f} |"
            )
    lines += [
        "",
        "## The choice on the train split",
        "",
        "| GOOD_SHARE | GOOD_QUIET | GOOD_RELAX_POWER | ε-complete at stop (worst search) | TomoNav's median stop / |Θ| |",
        "|---|---|---|---|---|",
    ]
    for _, g in grid.iterrows():
        lines.append(
            f"| {g.share:g} | {g.quiet:g} | {g.relax:g} | {pct(g.worst_eps_complete)} | {pct(g.tomonav_median_stop)} |"
        )
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=("record", "live", "report"))
    ap.add_argument("--split", nargs="+", default=["train", "test", "large"], choices=("train", "test", "large"))
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--tables", nargs="*", default=[], help="record only these tables of the splits")
    args = ap.parse_args(argv)
    if args.what == "record":
        runs(args.split, args.seeds, args.jobs, args.tables)
        return 0
    if args.what == "live":
        rows = live(args.seeds)
        (CACHE / "live.json").write_text(json.dumps(rows, default=float))
        return 0
    all_runs = [json.loads(p.read_text()) for p in sorted(CACHE.glob("*__*.json"))]
    grid, chosen = choose(all_runs)
    st = stops(all_runs)
    table_ = summary(st)
    live_rows = json.loads((CACHE / "live.json").read_text()) if (CACHE / "live.json").exists() else []
    OUT.parent.mkdir(parents=True, exist_ok=True)
    table_.to_csv(f"{OUT}.csv", index=False)
    if live_rows:
        pd.DataFrame(live_rows).to_csv(f"{OUT}_live.csv", index=False)
    md = markdown(table_, chosen, grid, live_rows)
    Path(f"{OUT}.md").write_text(md)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
