"""The verdict study: do R(Q)'s bounds hold, and does the gate decide right, where the truth is known?

    python scripts/verdict_study.py [--models mlp cnn mnist5k] [--surrogate forest additive] [--every K]

On each model (scripts/verdict_models.py: `mlp`, `cnn`; and the embedded mnist5k), the tomography is
replayed from the ground truth (source="replay", so R_true is known) and every orthant query of
orders 2–4 (`f1 >= a & f2 >= b …`, each family at level ≥ 1) is answered:
* the surrogate's error on the unmeasured tests of order 3 and 4 (mean r̂ − r: positive
  over-estimates robustness), per surrogate;
* the interval [R_low, R_high] after measuring 20 of the query's unmeasured tests, and whether it
  holds R_true;
* the gate (measure="auto") at thresholds R_true ± 0.01, ± 0.02, ± 0.05: its decision, the tests it
  measured, and whether it decided without measuring. A false pass is a pass where R_true is below
  the threshold; a false fail a fail where R_true reaches it.
Writes results/tables/verdict_study.{csv,md} (the .csv, one row per gate, is not kept in git).

    python scripts/verdict_study.py --populations [--reps 400] [--out results/tables/conformance_rq]

measures R(Q)'s bound and the gate on synthetic populations with a known truth instead (issue 74,
item 2): a query of 200 tests, 40 measured by the tomography and 160 predicted by a forest that is
2 points optimistic and blind to a cliff; the inputs drawn from a population with correlated
difficulty (input j fails test σ with probability 1 − sigmoid(a_σ − b_j), b_j ~ N(0, 1)), so the
truth R(Q) = mean_σ E_b sigmoid(a_σ − b) is known exactly. Scenarios, each over `--reps` draws of the
inputs and of the sample's order:
* `cliff`: 6 % of the predicted tests collapse (accuracy ≈ 0.2), unseen by the forest; `smooth`: none;
* the gate at R(Q) + 0.01 (a pass is false), R(Q) − 0.02 and − 0.05 (a pass is power), R(Q) + 0.05
  (a fail is power), on N = 400, 1,000 and 10,000 inputs, with the tests it measured to decide;
* `rerun`: the gate at R(Q) + 0.01 on 400 inputs and, when it did not pass, again on 1,000 (the first
  400 and 600 more): a false pass at either run counts;
* `coverage`: R(Q)'s interval after k = 80 and 120 of the 160 predicted tests are sampled, with the
  inputs' term made negligible (the tests' accuracies exact), against the truth: the configurations'
  term alone. The version before issue 74 is measured at its look 3 (nominal 1 − 0.05/16 = 99.7 %).
Writes <out>.md and <out>.json, each rate with its Wilson interval.
"""

from __future__ import annotations

import argparse
import inspect
import itertools
import json
import time
from pathlib import Path

import numpy as np
import pandas as pd
import verdict_models

from testnav.tomography.bounds import query_bound
from testnav.tomography.gate import answer, gate
from testnav.tomography.query import QuerySpec

ROOT = Path(__file__).resolve().parents[1]
OFFSETS = (-0.05, -0.02, -0.01, 0.01, 0.02, 0.05)
SAMPLE = 20


def orthant_queries(names: list[str], levels: int):
    for order in (2, 3, 4):
        for fams in itertools.combinations(range(len(names)), order):
            for lv in itertools.product(range(1, levels), repeat=order):
                yield order, " & ".join(f"{names[f]} >= {a}" for f, a in zip(fams, lv))


def tomography(model: str, cache: str, surrogate: str):
    from testnav.groundtruth.compute import outcomes
    from testnav.pipeline import build_groundtruth, compose_config
    from testnav.tomography.core import Settings, from_groundtruth

    if model == "mnist5k":
        cfg = compose_config(["benchmark=mnist5k", f"cache_dir={cache}", "progress=false"])
        path, bench = build_groundtruth(cfg, signals=False)  # the outcomes only
        settings = Settings.from_config(cfg)
    else:
        t = verdict_models.tester(model, cache, progress=False)
        path, bench = t._groundtruth_path(), t.benchmark
        settings = Settings.from_config(t.cfg)
    settings.surrogate = surrogate
    df = pd.read_parquet(path)
    return from_groundtruth(outcomes(df), bench.lattice, [f.name for f in bench.families], settings)


def study(model: str, cache: str, surrogate: str, every: int = 1) -> tuple[pd.DataFrame, dict]:
    tomo = tomography(model, cache, surrogate)
    t = tomo.table
    bias = {}
    for order in (3, 4):
        sel = (t.order == order) & ~t.measured
        bias[f"bias_order{order}"] = float((t.r_pred - t.r_true)[sel].mean())
    rows = []
    for i, (order, q) in enumerate(list(orthant_queries(tomo.names, tomo.lattice.levels))[::every]):
        res = answer(tomo, QuerySpec(expr=q, confidence=0.95, sample=SAMPLE, seed=i))
        truth = res["R_true"]
        base = dict(
            model=model,
            surrogate=surrogate,
            order=order,
            query=q,
            tests=res["tests"],
            R_true=truth,
            R_estimate=res["R_estimate"],
            R_low=res["R_low"],
            R_high=res["R_high"],
            covered=res["R_low"] <= truth <= res["R_high"],
        )
        for off in OFFSETS:
            a = float(np.clip(truth + off, 0, 1))
            g = gate(tomo, QuerySpec(expr=q, min_accuracy=a, confidence=0.95, measure="auto", seed=i))
            rows.append(
                base
                | dict(
                    offset=off,
                    threshold=a,
                    decision=g["decision"],
                    sampled=g["sampled"],
                    unmeasured=g["tests"] - g["measured"],
                    gate_covered=g["R_low"] <= truth <= g["R_high"],
                )
            )
    return pd.DataFrame(rows), bias


def summarise(df: pd.DataFrame) -> pd.DataFrame:
    out = []
    for (model, surrogate), g in df.groupby(["model", "surrogate"], sort=False):
        q = g.drop_duplicates("query")
        below, above = g[g.threshold > g.R_true], g[g.threshold <= g.R_true]
        out.append(
            dict(
                model=model,
                surrogate=surrogate,
                queries=len(q),
                gates=len(g),
                covered_sample20=q.covered.mean(),
                covered_at_decision=g.gate_covered.mean(),
                false_pass=(below.decision == "pass").mean(),
                false_fail=(above.decision == "fail").mean(),
                undecided=(g.decision == "undecided").mean(),
                decided_without_measuring=((g.decision != "undecided") & (g.sampled == 0)).mean(),
                sampled_median=g.sampled.median(),
                sampled_share=(g.sampled / g.unmeasured.clip(lower=1)).mean(),
            )
        )
    return pd.DataFrame(out)


def by_offset(df: pd.DataFrame) -> str:
    """Pass, fail and undecided per threshold offset from R_true, each with its Wilson 95 % interval,
    and the tests measured (median) and their share of the query's unmeasured ones."""
    lines = ["| model | threshold | pass | fail | undecided | tests measured (median) | share measured (mean) |"]
    lines.append("|---|---|---|---|---|---|---|")
    for (model, off), g in df.groupby(["model", "offset"]):
        d = g.decision
        cells = " | ".join(rate(int((d == w).sum()), len(d)) for w in ("pass", "fail", "undecided"))
        share = (g.sampled / g.unmeasured.clip(lower=1)).mean()
        lines.append(
            f"| {model} | R {'+' if off > 0 else '−'} {abs(off):g} | {cells} | {g.sampled.median():.0f} | {share:.2f} |"
        )
    return "\n".join(lines) + "\n"


# --- synthetic populations with a known truth (--populations) ----------------------------------------
TESTS, KNOWN, CLIFF_SHARE = 200, 40, 0.06
GATE_OFFSETS = {"R + 0.01": 0.01, "R − 0.02": -0.02, "R − 0.05": -0.05, "R + 0.05": 0.05}


def population(kind: str, seed: int) -> dict:
    """Logits a_σ of a query's tests (the first KNOWN measured by the tomography), the forest's
    predictions, and the truth. `cliff`: CLIFF_SHARE of the predicted tests collapse unseen."""
    rng = np.random.default_rng([seed, 74])
    a = rng.normal(2.2, 0.6, TESTS)
    nodes, weights = np.polynomial.hermite_e.hermegauss(60)
    weights = weights / weights.sum()

    def accuracy(logits):
        return (1 / (1 + np.exp(-(logits[:, None] - nodes[None, :])))) @ weights

    pred = np.clip(accuracy(a) + 0.02 + rng.normal(0, 0.02, TESTS), 0, 1)  # optimistic, noisy
    if kind == "cliff":
        hidden = KNOWN + rng.choice(TESTS - KNOWN, round(CLIFF_SHARE * (TESTS - KNOWN)), replace=False)
        a[hidden] = -1.5
    p = accuracy(a)
    return dict(logits=a, pred=pred, p=p, truth=float(p.mean()))


def synthetic_tomography(pop: dict, outcomes: np.ndarray):
    """A Tomography over one family of TESTS levels above 0 (query `a >= 1`), its first KNOWN tests
    measured on `outcomes` (tests × inputs), the rest predicted as `pop` says and measured on demand."""
    from testnav.core.lattice import Lattice
    from testnav.tomography.core import Tomography

    lattice = Lattice(1, TESTS + 1)
    measured = np.zeros(lattice.size, bool)
    measured[1 : KNOWN + 1] = True
    r = np.r_[np.nan, outcomes.mean(axis=1)]
    table = pd.DataFrame({"t1": lattice.tuples[:, 0], "order": lattice.orders, "measured": measured})
    table["n"] = np.where(measured, outcomes.shape[1], 0)
    table["r_measured"] = np.where(measured, r, np.nan)
    table["r_pred"] = np.r_[1.0, pop["pred"]]
    table["r_est"] = np.where(measured, table.r_measured, table.r_pred)
    measure = lambda idx: {int(i): outcomes[int(i) - 1] for i in idx}  # noqa: E731
    return Tomography(lattice, ["a"], None, table, pd.DataFrame(), outcomes.shape[1], 0, measure)


def inputs(pop: dict, n: int, rng) -> np.ndarray:
    """Per-input outcomes (tests × n) of inputs drawn with difficulty b ~ N(0, 1)."""
    b = rng.normal(0, 1, n)
    return rng.random((TESTS, n)) < 1 / (1 + np.exp(-(pop["logits"][:, None] - b[None, :])))


def run_gate(pop: dict, outcomes: np.ndarray, threshold: float, seed: int) -> dict:
    """One gate on a fresh tomography; `seed` orders its sample (the version before issue 74 took the
    tomography's seed, 0 for every run, as its order)."""
    tomo = synthetic_tomography(pop, outcomes)
    return gate(tomo, QuerySpec(expr="a >= 1", min_accuracy=float(np.clip(threshold, 0, 1)), measure="auto", seed=seed))


def gates(kind: str, reps: int) -> list[dict]:
    rows = []
    for n in (400, 1000, 10000):
        for rep in range(reps):
            pop = population(kind, rep)
            out = inputs(pop, n, np.random.default_rng([rep, n, 1]))
            for name, offset in GATE_OFFSETS.items():
                g = run_gate(pop, out, pop["truth"] + offset, rep)
                rows.append(dict(kind=kind, inputs=n, rep=rep, case=name, decision=g["decision"], sampled=g["sampled"]))
    return rows


def reruns(kind: str, reps: int) -> list[dict]:
    rows = []
    for rep in range(reps):
        pop = population(kind, rep)
        out = inputs(pop, 1000, np.random.default_rng([rep, 2]))
        first = run_gate(pop, out[:, :400], pop["truth"] + 0.01, rep)["decision"]
        second = run_gate(pop, out, pop["truth"] + 0.01, rep + 10**6)["decision"] if first != "pass" else "pass"
        rows.append(dict(kind=kind, rep=rep, first=first, either=second))
    return rows


def coverage(kind: str, reps: int) -> list[dict]:
    """The configurations' term alone: exact accuracies, inputs' term negligible (10¹² inputs)."""
    rows, huge = [], 10**12
    old = "look" in inspect.signature(query_bound).parameters
    for rep in range(reps):
        pop = population(kind, rep)
        order = KNOWN + np.random.default_rng([rep, 3]).permutation(TESTS - KNOWN)
        p, pred = pop["p"], pop["pred"]
        for k in (80, 120):
            s, rest = order[:k], order[k:]
            args = (p[:KNOWN], np.full(KNOWN, huge), p[s], pred[s], np.full(k, huge), pred[rest], huge, 0.95)
            b = query_bound(*args, 3) if old else query_bound(*args)
            rows.append(dict(kind=kind, k=k, rep=rep, covered=b.low <= pop["truth"] <= b.high, width=b.high - b.low))
    return rows


def rate(hits: int, n: int) -> str:
    from statsmodels.stats.proportion import proportion_confint

    low, high = proportion_confint(hits, n, alpha=0.05, method="wilson")
    return f"{100 * hits / n:.1f} % [{100 * low:.1f}, {100 * high:.1f}]"


def population_tables(reps: int) -> tuple[str, dict]:
    kinds = ("cliff", "smooth")
    raw = {
        "gates": pd.DataFrame([r for kind in kinds for r in gates(kind, reps)]).to_dict("list"),
        "reruns": pd.DataFrame([r for kind in kinds for r in reruns(kind, reps)]).to_dict("list"),
        "coverage": pd.DataFrame([r for kind in kinds for r in coverage(kind, reps)]).to_dict("list"),
    }
    return render(raw), raw


def render(raw: dict) -> str:
    """The tables of --populations from their raw rows: each rate with its Wilson 95 % interval."""
    g, r, c = (pd.DataFrame(raw[k]) for k in ("gates", "reruns", "coverage"))
    share = lambda x, what: rate(int((x == what).sum()), len(x))  # noqa: E731
    lines = [
        "| population | N | threshold | pass | fail | undecided | tests measured (median) |",
        "|---|---|---|---|---|---|---|",
    ]
    for (kind, n, case), x in g.groupby(["kind", "inputs", "case"], sort=False):
        d = x.decision
        lines.append(
            f"| {kind} | {n:,} | {case} | {share(d, 'pass')} | {share(d, 'fail')} | {share(d, 'undecided')} "
            f"| {x.sampled.median():.0f} |"
        )
    lines += ["", "| population | false pass at 400 inputs | at 400, or at 1,000 when 400 did not pass |"]
    lines.append("|---|---|---|")
    for kind, x in r.groupby("kind", sort=False):
        lines.append(f"| {kind} | {share(x['first'], 'pass')} | {share(x.either, 'pass')} |")
    lines += ["", "| population | k of 160 | coverage (Wilson 95 %) | mean width |", "|---|---|---|---|"]
    for (kind, k), x in c.groupby(["kind", "k"], sort=False):
        lines.append(f"| {kind} | {k} | {share(x.covered, True)} | {x.width.mean():.4f} |")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", nargs="+", default=["mlp", "cnn", "mnist5k"])
    ap.add_argument("--surrogate", nargs="+", default=["forest", "additive"])
    ap.add_argument("--cache", default=str(ROOT / "results" / "cache"))
    ap.add_argument("--out", default=None, help="verdict_study, or conformance_rq with --populations")
    ap.add_argument("--populations", action="store_true", help="the synthetic populations instead of the models")
    ap.add_argument("--reps", type=int, default=400, help="draws per population scenario")
    ap.add_argument("--every", type=int, default=1, help="every k-th orthant query only (models)")
    args = ap.parse_args()
    tables = ROOT / "results" / "tables"
    if args.populations:
        t0 = time.perf_counter()
        text, raw = population_tables(args.reps)
        out = Path(args.out or tables / "conformance_rq")
        out.parent.mkdir(parents=True, exist_ok=True)
        out.with_suffix(".json").write_text(json.dumps(raw))
        out.with_suffix(".md").write_text(
            "# R(Q)'s bound and the gate on populations with a known truth\n\n"
            f"`python scripts/verdict_study.py --populations --reps {args.reps}` (module docstring: the populations). "
            "A threshold above the truth R (R + 0.01, R + 0.05): a pass is false. Below it (R − 0.02, R − 0.05): a "
            "fail is false, a pass is power. 95 % intervals; each rate with its Wilson 95 % interval.\n\n" + text
        )
        print(text + f"\n{args.reps} draws per scenario in {time.perf_counter() - t0:.0f} s")
        return
    frames, biases = [], []
    for model in args.models:
        for surrogate in args.surrogate:
            t0 = time.perf_counter()
            df, bias = study(model, args.cache, surrogate, args.every)
            frames.append(df)
            biases.append(dict(model=model, surrogate=surrogate, **bias))
            print(
                f"{model} {surrogate}: {df['query'].nunique()} queries in {time.perf_counter() - t0:.0f} s", flush=True
            )
    df = pd.concat(frames, ignore_index=True)
    summary = summarise(df).merge(pd.DataFrame(biases), on=["model", "surrogate"])
    out = Path(args.out or tables / "verdict_study")
    out.parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(out.with_suffix(".csv"), index=False)
    text = summary.to_markdown(index=False, floatfmt=".4f")
    out.with_suffix(".md").write_text(
        "# Verdict study (scripts/verdict_study.py)\n\nOrthant queries of orders 2–4, replayed; thresholds at "
        "R_true ± 0.01, 0.02, 0.05; 95 % intervals. false_pass: share of gates with R_true below the threshold "
        "that passed; false_fail: share with R_true at or above it that failed; sampled: the query's "
        "unmeasured tests the gate measured; bias_orderK: mean r̂ − r over unmeasured tests of order K "
        "(positive: optimistic).\n\n" + text + "\n\n" + by_offset(df)
    )
    print(text)


if __name__ == "__main__":
    main()
