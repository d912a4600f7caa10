"""Which family does `compare` blame? (issue 75, item 4) The digits CNN of scripts/compare_study.py behind a
preprocessing that halves contrast, against its own release: the families ranked by their effect on the
drop (pipeline/localise.py) and, beside them, by the count of regressions that include each (what
`Comparison.families` ranked by before). Twice: against the release's certified run (the warm start, the
default) and over the whole lattice (both ground truths). Also: `assert_no_regression` after `compare` on
the same pair measures nothing more and names the same worst configuration and verdict.

Writes results/tables/localise_study.md and .json.

    python scripts/localise_study.py [--cache results/cache]
"""

from __future__ import annotations

import argparse
import copy
import shutil
import time
from pathlib import Path

import compare_study as cs

ROOT = Path(__file__).resolve().parents[1]


def ranking(c) -> list[dict]:
    """The families as `Comparison.families` ranks them, with the count each would have had."""
    out = c.families
    by_count = out.sort_values("regressions", ascending=False, kind="stable")["family"].tolist()
    rows = out.astype(object).where(out.notna(), None).to_dict("records")
    for r in rows:
        r["rank_by_count"] = by_count.index(r["family"]) + 1
    return rows


def gate_after(t, release, c) -> dict:
    """assert_no_regression on the pair `compare` just compared: what it measured and said."""
    before = c.evaluations, len(t.session.live_oracles["ssim"].outcomes)
    try:
        t.assert_no_regression(release, max_drop=0.02)
        line = "passed"
    except AssertionError as e:
        line = str(e)
    after = t._comparison
    return {
        "same_comparison": after is c,
        "measured_more": len(t.session.live_oracles["ssim"].outcomes) - before[1],
        "same_line": line == c.verdict.line,
        "line": line,
    }


def study(cache, work) -> dict:
    net = cs.cnn(cache)
    base = cs.tester(net, "mnist_cnn", cache)
    release, seconds = cs.certified(base)
    fresh = Path(work) / "half_warm"  # nothing measured on the new model yet: the warm start measures
    shutil.rmtree(fresh, ignore_errors=True)
    half = cs.tester(cs.HalfContrast(copy.deepcopy(net)).eval(), "mnist_cnn_half", fresh)
    c = half.compare(release, max_drop=0.02)
    out: dict = {"release": {"evaluations": len(release) - 1, "seconds": round(seconds, 1)}}
    out["warm"] = {
        "compared": c.compared,
        "evaluations": c.evaluations,
        "regressions": len(c.regressions),
        "families": ranking(c),
        "decision": c.verdict.decision,
        "worst": c.verdict.worst,
        "warm_sentence": c.warm.sentence(),
        "gate_after_compare": gate_after(half, release, c),
    }
    base_full = cs.full_record(base)
    half = cs.tester(cs.HalfContrast(copy.deepcopy(net)).eval(), "mnist_cnn_half", Path(work) / "half")
    half.groundtruth()
    full = half.compare(base_full, max_drop=0.02, measure="all")
    out["full"] = {
        "compared": full.compared,
        "regressions": len(full.regressions),
        "families": ranking(full),
        "pairs": full.pairs.astype(object).where(full.pairs.notna(), None).to_dict("records"),
    }
    return out


def render(r: dict) -> str:
    def table(rows):
        lines = [
            "| rank | family | effect on the drop [95 %] | at | worst alone | drop alone [95 %] | regressions that include it | rank by that count |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for i, f in enumerate(rows, 1):
            eff = (
                "—"
                if f["effect"] is None
                else (f"{100 * f['effect']:+.1f} pt [{100 * f['effect_low']:.1f}, {100 * f['effect_high']:.1f}]")
            )
            alone = (
                "—"
                if f["alone"] is None
                else (f"{100 * f['alone']:+.1f} pt [{100 * f['alone_low']:.1f}, {100 * f['alone_high']:.1f}]")
            )
            lines.append(
                f"| {i} | {f['family']} | {eff} | {f['effect_at'] or '—'} | {f['alone_at'] or '—'} | {alone} | "
                f"{f['regressions']} of {f['configurations']} | {f['rank_by_count']} |"
            )
        return lines

    w, f, g = r["warm"], r["full"], r["warm"]["gate_after_compare"]
    return "\n".join(
        [
            "# Which family does `compare` blame?",
            "",
            "Written by `python scripts/localise_study.py`. scripts/compare_study.py's digits CNN (500 held-out "
            "digits; pixelate, shot noise, motion blur and contrast at 5 levels, 625 configurations, SSIM) behind "
            "a preprocessing that halves each image's contrast, compared with the same network. `Comparison.families` "
            "ranks by the effect on the paired drop: a least-squares model of each configuration's drop on one "
            "term per family and severity (statsmodels, HC3 errors), at each family's most damaging severity; 'drop alone' "
            "is the family's own curve (Tango's paired interval). The last column is where the count of "
            "regressions that include the family ranked it.",
            "",
            f"## Against the release's certified run (warm start): {w['compared']} configurations compared, "
            f"{w['evaluations']} evaluated on the new model, {w['regressions']} regressions",
            "",
            *table(w["families"]),
            "",
            f"The gate: {w['decision']}, naming {w['worst']}. `assert_no_regression(max_drop=0.02)` asked after "
            f"`compare` on the same pair: the same comparison {'reused' if g['same_comparison'] else 'NOT reused'}, "
            f"{g['measured_more']} configurations measured more, "
            f"{'the same line' if g['same_line'] else 'ANOTHER line'}.",
            "",
            f"## Over the whole lattice: {f['compared']} configurations, {f['regressions']} regressions",
            "",
            *table(f["families"]),
            "",
        ]
    )


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cache", default=str(ROOT / "results" / "cache"), help="cnn's weights and ground truth")
    ap.add_argument("--work", default=str(ROOT / "results" / "cache" / "compare_study"), help="the new model's cache")
    ap.add_argument("--out", default=str(ROOT / "results" / "tables" / "localise_study"))
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    r = study(args.cache, args.work)
    r["seconds"] = round(time.perf_counter() - t0, 1)
    cs.write_tables(Path(args.out), r, render)


if __name__ == "__main__":
    main()
