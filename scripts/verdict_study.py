"""The verdict study: do R(Q)'s bounds hold, and does the gate decide right, where the truth is known?

    python scripts/verdict_study.py [--models mlp cnn mnist5k] [--surrogate forest additive]

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
"""

from __future__ import annotations

import argparse
import itertools
import time
from pathlib import Path

import numpy as np
import pandas as pd
import verdict_models

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
        path, bench = build_groundtruth(cfg)
        settings = Settings.from_config(cfg)
    else:
        t = verdict_models.tester(model, cache, progress=False)
        path, bench = t._groundtruth_path(), t.benchmark
        settings = Settings.from_config(t.cfg)
    settings.surrogate = surrogate
    df = pd.read_parquet(path)
    return from_groundtruth(outcomes(df), bench.lattice, [f.name for f in bench.families], settings)


def study(model: str, cache: str, surrogate: str) -> tuple[pd.DataFrame, dict]:
    tomo = tomography(model, cache, surrogate)
    t = tomo.table
    bias = {}
    for order in (3, 4):
        sel = (t.order == order) & ~t.measured
        bias[f"bias_order{order}"] = float((t.r_pred - t.r_true)[sel].mean())
    rows = []
    for order, q in orthant_queries(tomo.names, tomo.lattice.levels):
        res = answer(tomo, QuerySpec(expr=q, confidence=0.95, sample=SAMPLE))
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
            g = gate(tomo, QuerySpec(expr=q, min_accuracy=a, confidence=0.95, measure="auto"))
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", nargs="+", default=["mlp", "cnn", "mnist5k"])
    ap.add_argument("--surrogate", nargs="+", default=["forest", "additive"])
    ap.add_argument("--cache", default=str(ROOT / "results" / "cache"))
    ap.add_argument("--out", default=str(ROOT / "results" / "tables" / "verdict_study"))
    args = ap.parse_args()
    frames, biases = [], []
    for model in args.models:
        for surrogate in args.surrogate:
            t0 = time.perf_counter()
            df, bias = study(model, args.cache, surrogate)
            frames.append(df)
            biases.append(dict(model=model, surrogate=surrogate, **bias))
            print(
                f"{model} {surrogate}: {df['query'].nunique()} queries in {time.perf_counter() - t0:.0f} s", flush=True
            )
    df = pd.concat(frames, ignore_index=True)
    summary = summarise(df).merge(pd.DataFrame(biases), on=["model", "surrogate"])
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(out.with_suffix(".csv"), index=False)
    text = summary.to_markdown(index=False, floatfmt=".4f")
    out.with_suffix(".md").write_text(
        "# Verdict study (scripts/verdict_study.py)\n\nOrthant queries of orders 2–4, replayed; thresholds at "
        "R_true ± 0.01, 0.02, 0.05; 95 % intervals. false_pass: share of gates with R_true below the threshold "
        "that passed; false_fail: share with R_true at or above it that failed; sampled: the query's "
        "unmeasured tests the gate measured; bias_orderK: mean r̂ − r over unmeasured tests of order K "
        "(positive: optimistic).\n\n" + text + "\n"
    )
    print(text)


if __name__ == "__main__":
    main()
