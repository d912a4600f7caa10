"""Print mean ± sd over seeds per benchmark, fidelity and search for every run under a folder.

python scripts/summarize.py results/multirun [--csv out.csv]
"""

import argparse
import sys

from testnav.figures.summaries import load_summaries, method_table


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("root", nargs="?", default="results")
    ap.add_argument("--csv", help="also write the table here")
    args = ap.parse_args(argv)
    df = load_summaries(args.root)
    if df.empty:
        print(f"error: no run summaries under {args.root}", file=sys.stderr)
        return 2
    t = method_table(df)
    if args.csv:
        t.to_csv(args.csv, index=False)
    for _, r in t.iterrows():
        full = (
            f"u to full recall {r.u_full_mean:.0f} ± {r.u_full_sd:.0f} ({r.full_recall_runs}/{r.runs} runs)"
            if r.full_recall_runs
            else f"full recall in 0/{r.runs} runs"
        )
        cost = ""
        if "auc_inf_mean" in t and r.auc_inf_mean == r.auc_inf_mean:  # not NaN
            cost = f"  | inferences: AUC {r.auc_inf_mean:.3f} ± {r.auc_inf_sd:.3f}"
            if r.inf_full_mean == r.inf_full_mean:
                cost += f", to full recall {r.inf_full_mean:,.0f} ± {r.inf_full_sd:,.0f}"
        print(
            f"{r.benchmark:10s} {r.fidelity:6s} {r.search:11s} AUC {r.auc_mean:.3f} ± {r.auc_sd:.3f}  "
            f"final recall {r.final_recall:.3f}  {full}{cost}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
