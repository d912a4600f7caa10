"""TomoNav variants (initial design, surrogate, κ, batch) on a ground-truth table, straight from
the search class (no Hydra): the measurements behind the defaults in docs/tomonav.md.

    python scripts/tomonav_variants.py results/cache/groundtruth/mnist5k-<key>.parquet --seeds 3 \\
        --variant '{}' --variant '{"init_order": 2, "init_random": 0}' [--calibration]
    python scripts/tomonav_variants.py --generated 100 --profiles pairs noisy spread --seeds 1 --variant …
        (generated tables, testnav/groundtruth/synthetic.py: where the defaults are chosen, mnist5k held out)
"""

import argparse
import json
import sys
import time

import numpy as np
import pandas as pd

from testnav import searches
from testnav.core.oracle import TableOracle
from testnav.core.recall import auc_recall, first_sightings, recall_curve, unique_to_full_recall
from testnav.core.table import Objectives
from testnav.stopping.level_surrogate import Surrogate

TABLES = (("ssim", 1.0), ("kid", -1.0))


def variants(df, seeds, specs, objectives=None):
    """One line per (table, variant); then, over all tables, each variant's mean AUC and mean
    unique configurations to full recall (the numbers the defaults are chosen on)."""
    summary = {json.dumps(kw): ([], []) for kw in specs}
    for col, obj in objectives or ((col, Objectives.from_table(df, col, sign)) for col, sign in TABLES):
        for kw in specs:
            aucs, us, t0 = [], [], time.perf_counter()
            for s in range(seeds):
                p = searches.make("tomonav", **kw).run(TableOracle(obj), 5 * obj.lattice.size, s)
                c = recall_curve(p[first_sightings(p)], obj.pstar, obj.lattice.size)
                aucs.append(auc_recall(c))
                us.append(unique_to_full_recall(c) or np.nan)
            summary[json.dumps(kw)][0].append(np.mean(aucs))
            summary[json.dumps(kw)][1].append(np.nanmean(us) / obj.lattice.size)
            print(
                f"{col:14s} {json.dumps(kw):60s} AUC {np.mean(aucs):.3f} ± {np.std(aucs):.3f}  "
                f"u to full {np.nanmean(us):.0f} ± {np.nanstd(us):.0f}  ({time.perf_counter() - t0:.0f} s)",
                flush=True,
            )
    print("\nover all tables: mean AUC, mean unique-to-full-recall as a share of |Θ|")
    for kw, (aucs, us) in summary.items():
        print(f"  {kw:60s} AUC {np.mean(aucs):.3f}  u to full {np.mean(us):.3f} |Θ|  ({len(aucs)} tables)")


def calibration(df, seeds):
    """Fit on a design, predict the rest: RMSE, Spearman, and how often |error| ≤ 1σ, 2σ."""
    from scipy.stats import spearmanr

    from testnav.tomography.surrogate import ScoreSurrogate

    for col, sign in TABLES:
        obj = Objectives.from_table(df, col, sign)
        lat, y = obj.lattice, np.column_stack([obj.delta, obj.rho])
        for design in ("order<=2", "order<=1+30"):
            acc = {}
            for seed in range(seeds):
                low = np.flatnonzero(lat.orders <= (2 if design == "order<=2" else 1))
                if design != "order<=2":
                    rest = np.setdiff1d(np.arange(lat.size), low)
                    low = np.r_[low, np.sort(np.random.default_rng(seed).choice(rest, 30, replace=False))]
                test = np.setdiff1d(np.arange(lat.size), low)
                preds = {
                    k: Surrogate(lat, k, seed=seed).fit(low, y[low]).predict(test)
                    for k in ("additive_forest", "forest")
                }
                tf = np.column_stack(
                    [ScoreSurrogate(seed=seed).fit(lat, low, y[low, k]).predict(test) for k in range(2)]
                )
                preds["testifai_forest"] = (tf, None)
                for k, (m, sd) in preds.items():
                    row = [np.sqrt(((m - y[test]) ** 2).mean(0)), [spearmanr(m[:, j], y[test, j])[0] for j in range(2)]]
                    if sd is not None:
                        z = np.abs(m - y[test]) / np.maximum(sd, 1e-12)
                        row += [(z <= 1).mean(0), (z <= 2).mean(0)]
                    acc.setdefault(k, []).append(row)
            for k, rows in acc.items():
                mean = [np.round(np.mean([r[i] for r in rows], 0), 3) for i in range(len(rows[0]))]
                print(
                    f"{col:5s} {design:12s} {k:16s} RMSE(δ,ρ) {mean[0]} Spearman {mean[1]}"
                    + (f"  |err|≤1σ {mean[2]} ≤2σ {mean[3]}" if len(mean) > 2 else "")
                )


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("table", nargs="?", help="a ground-truth parquet (delta, ssim, kid) or results/golden/mnist5k.csv")
    ap.add_argument("--generated", type=int, nargs="*", default=[], help="generated-table seeds instead of the parquet")
    ap.add_argument("--profiles", nargs="+", default=None, help="generated profiles (default: all)")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument(
        "--variant", action="append", default=[], help="JSON settings of search=tomonav (conf/search/tomonav.yaml)"
    )
    ap.add_argument("--calibration", action="store_true", help="also measure the surrogates' calibration")
    args = ap.parse_args(argv)
    specs = [json.loads(v) for v in args.variant] or [{}]
    if args.generated:
        from testnav.groundtruth.synthetic import PROFILES, profile_table

        objs = [
            (f"{p}/{s}", Objectives.from_table(profile_table(p, s)))
            for s in args.generated
            for p in args.profiles or PROFILES
        ]
        variants(None, args.seeds, specs, objs)
        return 0
    from interval_coverage import metric_tables

    variants(None, args.seeds, specs, metric_tables(args.table))
    if args.calibration:
        df = pd.read_parquet(args.table)
        calibration(df, args.seeds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
