"""Draw every TestNav figure and table that the loaded results allow, with one sentence each.

Why a separate step from the report: each entry carries the number that matters, computed
from the same frames the figure shows, so the report cannot drift from the pictures.
A panel whose data are missing is skipped and the reason is added to `Results.missing`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from .claims import ALPHA, welch
from .loader import ABLATIONS, BASELINES, INPUT_LEVEL, Results, fidelity_label, fidelity_rank, method_label
from .tables import auc_table, marks, write_table2, write_table3
from .testnav_plots import (
    full_recall_x,
    order_summary,
    plot_certificate,
    plot_examples,
    plot_pareto,
    plot_recall,
    plot_voxels,
)


@dataclass
class Entry:
    section: str  # "TestNav figures", "TestNav tables", "TestifAI"
    title: str
    path: Path  # what the report links or embeds
    sentence: str
    kind: str = "figure"  # figure | table (embedded when Markdown) | link


def _auc(res: Results, b: str, f: str, s: str):
    r = res.runs
    if r.empty:
        return None
    v = r[(r["benchmark"] == b) & (r["fidelity"] == f) & (r["search"] == s)]["auc_recall"]
    return float(v.mean()) if len(v) else None


def _full(res: Results, b: str, f: str, s: str, axis: str):
    c = res.curves
    c = c[(c["benchmark"] == b) & (c["fidelity"] == f) & (c["search"] == s) & (c["axis"] == axis)]
    return full_recall_x(c) if len(c) else None


def _fig_pareto(res: Results, b: str, out: Path) -> Entry | None:
    fids = [f for f in res.fidelities(b) if (b, f) in res.truths]
    if not fids:
        return None
    pts = pd.concat([res.truths[(b, f)].points.assign(fidelity=f) for f in fids], ignore_index=True)
    path = plot_pareto(pts, out / f"fig1_{b}.png", title=f"{b}: P* over Θ")
    parts = []
    for f in fids:
        gt = res.truths[(b, f)]
        c = gt.order_counts()
        parts.append(f"{sum(c)} under {fidelity_label(f)} (Θ1–Θ{gt.n} {order_summary(c)})")
    size = len(res.truths[(b, fids[0])].points) - 1
    return Entry(
        "TestNav figures",
        f"Fig. 1 · {b}: the ground-truth Pareto fronts",
        path,
        f"Of the {size:,} perturbed configurations of {b}, P* holds " + "; ".join(parts) + ".",
    )


def _recall_sentence(res: Results, b: str, fids, searches, reference="nsga2") -> str:
    """Per fidelity: when TestNav's slowest seed has recovered all of P* (and the mean over seeds), its
    mean AUC-Recall, and every method whose mean is above it, with Welch's t-test over seeds (the
    claims ledger's rule: claims.md)."""
    bits = []
    for f in fids:
        u = _full(res, b, f, reference, "unique")
        n = _full(res, b, f, reference, "budget")
        size = len(res.truths[(b, f)].points) if (b, f) in res.truths else None
        aucs = {s: _auc(res, b, f, s) for s in searches}
        aucs = {s: v for s, v in aucs.items() if v is not None}
        if not aucs:
            continue
        per_seed = res.runs[(res.runs["benchmark"] == b) & (res.runs["fidelity"] == f)] if not res.runs.empty else None
        full = "TestNav does not recover all of P* in every seed"
        if u:
            shares = []
            ref = per_seed[per_seed["search"] == reference] if per_seed is not None else None
            if size:
                shares.append(f"{100 * u / size:.1f}% of Θ")
                if ref is not None and "unique_to_full_recall" in ref and ref["unique_to_full_recall"].notna().all():
                    shares.append(f"mean over seeds {100 * ref['unique_to_full_recall'].mean() / size:.1f}%")
            full = (
                f"TestNav's slowest seed recovers all of P* after {u:,} unique configurations"
                + (f" ({'; '.join(shares)})" if shares else "")
                + (f" and {n:,} proposals (slowest seed)" if n else "")
            )
        said = ""
        if reference in aucs:
            above = sorted((s for s in aucs if s != reference and aucs[s] > aucs[reference]), key=lambda s: -aucs[s])
            said = f"; mean AUC-Recall over seeds {aucs[reference]:.3f}"
            if above:
                said += ", below " + ", ".join(
                    f"{method_label(s)} {aucs[s]:.3f}{_welch_words(per_seed, reference, s)}" for s in above
                )
            elif len(aucs) > 1:
                rival = max((s for s in aucs if s != reference), key=aucs.get)
                said += f", above every other method here (next: {method_label(rival)} {aucs[rival]:.3f})"
        bits.append(f"{fidelity_label(f)}: {full}{said}")
    return "; ".join(bits) + "."


def _welch_words(runs, reference, s) -> str:
    """' (Welch p = …)' and whether the lead over TestNav is significant, from the per-seed AUCs."""
    if runs is None:
        return ""
    w = welch(runs[runs["search"] == s]["auc_recall"], runs[runs["search"] == reference]["auc_recall"])
    if w is None:
        return ""
    p = "p < 0.001" if w[1] < 0.001 else f"p = {w[1]:.3f}"
    return f" (Welch {p}" + (")" if w[1] < ALPHA else ", within noise)")


def _fig_recall(res: Results, b: str, out: Path, number: int, searches, what: str) -> Entry | None:
    c = res.curves
    c = c[(c["benchmark"] == b) & c["search"].isin(searches)]
    if number != 2:  # the cost-aware (inferences) row belongs to Fig. 2 only
        c = c[c["axis"] != "inferences"]
    if c.empty:
        return None
    fids = sorted(c["fidelity"].unique(), key=lambda f: (fidelity_rank(f), f))
    c = (
        c.assign(_r=c["fidelity"].map(lambda f: (fidelity_rank(f), f)))
        .sort_values("_r", kind="stable")
        .drop(columns="_r")
    )
    present = [s for s in searches if s in set(c["search"])]
    absent = [s for s in searches if s not in present]
    if absent:
        res.missing.append(f"Fig. {number} · {b}: no curves for {', '.join(absent)}")
    path = plot_recall(c, out / f"fig{number}_{b}.png", present, title=f"{b}: {what}")
    return Entry("TestNav figures", f"Fig. {number} · {b}: {what}", path, _recall_sentence(res, b, fids, present))


def _fig_examples(res: Results, b: str, f: str, out: Path, number: int, cache_dir: Path) -> Entry | None:
    from .examples import example_items

    gt = res.truths[(b, f)]
    try:
        items, note = example_items(b, gt, cache_dir, root=res.root)
    except Exception as e:  # no data or model on this machine, or not an image benchmark
        res.missing.append(f"Fig. {number} · {b}/{f}: example images unavailable ({type(e).__name__}: {str(e)[:100]})")
        return None
    if note:
        res.missing.append(f"Fig. {number} · {b}/{f}: {note}")
    path = plot_examples(
        items,
        out / f"fig{number}_{b}_{f}.png",
        title=f"{b}, test input #0 under the {len(items)} configurations of P* (δ, ρ {fidelity_label(f)}); "
        f"δ: accuracy drop over D, ρ: normalised fidelity",
    )
    d = [it["delta"] for it in items]
    return Entry(
        "TestNav figures",
        f"Fig. {number} · {b} · {fidelity_label(f)}: one input under each θ ∈ P*",
        path,
        f"Test input #0 under all {len(items)} Pareto-optimal configurations of (δ, ρ {fidelity_label(f)}), "
        f"grouped by order {order_summary(gt.order_counts())}; their accuracy drop over D ranges "
        f"from {min(d):.3f} to {max(d):.3f}.",
    )


def _fig_voxels(res: Results, b: str, f: str, out: Path, number: int) -> Entry | None:
    gt = res.truths[(b, f)]
    if gt.n not in (3, 4):
        res.missing.append(f"Fig. {number} · {b}/{f}: voxel plots need 3 or 4 families (has {gt.n})")
        return None
    levels = int(gt.points[[f"t{i + 1}" for i in range(gt.n)]].to_numpy().max()) + 1
    path = plot_voxels(
        gt.pstar,
        out / f"fig{number}_{b}_{f}.png",
        levels=levels,
        title=f"{b} ({fidelity_label(f)}): |P*| = {len(gt.pstar)}, coloured by order",
    )
    if gt.n == 4:
        per = gt.pstar["t4"].value_counts()
        split = ", ".join(str(int(per.get(v, 0))) for v in range(levels))
        where = f"per θ4 level 0–{levels - 1}: {split}"
    else:
        where = f"{len(gt.pstar)} voxels"
    return Entry(
        "TestNav figures",
        f"Fig. {number} · {b} · {fidelity_label(f)}: P* in the lattice",
        path,
        f"Where the {len(gt.pstar)} members of P* (δ, ρ {fidelity_label(f)}) lie in the "
        f"{levels}^{gt.n} lattice, {where}.",
    )


def certificate_curves(runs: pd.DataFrame, b: str, searches=("tomonav", "nsga2")) -> pd.DataFrame:
    """Per (fidelity, search), the lowest seed's trace with a p_complete column: recall and
    p_complete at each new configuration."""
    rows = []
    for (f, s), g in runs[(runs["benchmark"] == b) & runs["search"].isin(searches)].groupby(["fidelity", "search"]):
        r = g.sort_values("seed").iloc[0]
        if not isinstance(r.get("trace"), str) or not r.get("pstar_size"):
            continue
        t = pd.read_parquet(r["trace"]) if r["trace"].endswith(".parquet") else pd.read_csv(r["trace"])
        if "p_complete" not in t:
            continue
        t = t[t["new"].astype(bool)]
        hits = t["in_pstar"].fillna(False).astype(bool).cumsum() / int(r["pstar_size"])
        rows.append(
            pd.DataFrame(
                {
                    "fidelity": f,
                    "search": s,
                    "unique": t["unique"].to_numpy(),
                    "recall": hits.to_numpy(),
                    "p_complete": t["p_complete"].to_numpy(),
                }
            )
        )
    return pd.concat(rows, ignore_index=True) if rows else pd.DataFrame()


def _fig_certificate(res: Results, b: str, out: Path) -> Entry | None:
    c = certificate_curves(res.runs, b) if not res.runs.empty else pd.DataFrame()
    if c.empty:
        res.missing.append(
            f"Fig. 9 · {b}: no TomoNav or NSGA-II trace with p_complete (runs older than the certificate)"
        )
        return None
    path = plot_certificate(c, out / f"fig9_{b}.png", title=f"{b}: recall and the stopping certificate")
    bits = []
    for (f, s), g in c.groupby(["fidelity", "search"], sort=False):
        at = g[g["p_complete"] >= 0.95]
        full = g[g["recall"] >= 1 - 1e-12]
        stop = (
            f"p_complete reaches 0.95 after {int(at['unique'].iloc[0]):,} unique configurations"
            if len(at)
            else "p_complete never reaches 0.95"
        )
        found = f"full recall after {int(full['unique'].iloc[0]):,}" if len(full) else "full recall never reached"
        bits.append(f"{method_label(s)} on {fidelity_label(f)}: {stop}, {found}")
    return Entry(
        "TestNav figures",
        f"Fig. 9 · {b}: recall and p_complete against unique configurations",
        path,
        "Stopping certificate (lowest seed): " + "; ".join(bits) + ".",
    )


def draw_testnav(res: Results, figures_dir, tables_dir, cache_dir=None, examples: bool = True) -> list[Entry]:
    figures_dir, tables_dir = Path(figures_dir), Path(tables_dir)
    figures_dir.mkdir(parents=True, exist_ok=True)
    cache_dir = Path(cache_dir) if cache_dir else res.root / "cache"
    entries: list[Entry] = []
    for b in res.benchmarks():
        for e in (
            _fig_pareto(res, b, figures_dir),
            _fig_recall(res, b, figures_dir, 2, BASELINES, "Recall@P* of TestNav and the search baselines"),
            _fig_recall(res, b, figures_dir, 3, ABLATIONS, "multi- vs single-objective search"),
            _fig_recall(res, b, figures_dir, 4, INPUT_LEVEL, "input-level signals vs TestNav"),
        ):
            if e:
                entries.append(e)
        fids = [f for f in res.fidelities(b) if (b, f) in res.truths]
        # the benchmark's first metric in paper order gets Figs. 5 and 7, the others 6 and 8
        if examples:
            entries += [
                e
                for rank, f in enumerate(fids)
                if (e := _fig_examples(res, b, f, figures_dir, 5 if rank == 0 else 6, cache_dir))
            ]
        entries += [
            e for rank, f in enumerate(fids) if (e := _fig_voxels(res, b, f, figures_dir, 7 if rank == 0 else 8))
        ]
        if e := _fig_certificate(res, b, figures_dir):
            entries.append(e)
    t2 = write_table2(res.runs, tables_dir)
    if t2:
        mean, _ = auc_table(res.runs, BASELINES)
        mk = marks(mean)
        best = [f"{c}: {', '.join(mk.index[mk[c] == 'best'])} {mean[c].max():.3f}" for c in mean.columns]
        seeds = int(res.runs["seed"].nunique())
        entries.append(
            Entry(
                "TestNav tables",
                "Table 2: AUC-Recall@P* (mean over seeds; bold best, underline second)",
                t2["md"],
                f"Best per column over {seeds} seed(s) — "
                + "; ".join(best)
                + f" (also as {t2['tex'].name}, {t2['csv'].name} with ± sd, and every search in "
                f"{t2['all_md'].name}).",
                kind="table",
            )
        )
    else:
        res.missing.append("Table 2: no search runs")
    t3 = write_table3(res.truths, tables_dir)
    if t3:
        t = pd.read_csv(t3["csv"])
        sizes = "; ".join(f"{r['benchmark']} {r['metric pair']} |P*| = {r['|P*|']}" for _, r in t.iterrows())
        entries.append(
            Entry(
                "TestNav tables",
                "Table 3: P* composition by order per metric pair",
                t3["md"],
                f"{sizes} (also as {t3['tex'].name}, {t3['csv'].name}).",
                kind="table",
            )
        )
    else:
        res.missing.append("Table 3: no ground-truth table")
    return entries
