"""TestifAI figures (the paper's §5–§6) from the study tables of `python run.py stage=study`.

Each `plot_*` function takes one small tidy frame (the columns of one study CSV, see
docs/tomography.md), writes one PNG and returns one sentence that says what the figure shows
and the number that matters, computed from the frame:

    plot_r_distributions      per_test_errors.csv   ground-truth r_σ by order (Fig. 2)
    plot_per_test_errors      per_test_errors.csv   r̂_σ − r_σ box plots, 3D and 4D (Fig. 3)
    plot_queries              queries.csv           Q1–Q12 error and predicted drop (Fig. 6)
    plot_ordered_vs_random    ordered_vs_random.csv MSE vs training tests, ordered vs random (Figs. 7–8)
    plot_inferences           inferences.csv        inferences per regime, with MSE (Fig. 4, §5.4)
    plot_quality_vs_severity  per_test_errors.csv   q_σ, q̂_σ and accuracy drop vs severity sum (Fig. 9)
    plot_quality_errors       per_test_errors.csv   q̂_σ − q_σ box plots, 4D (Fig. 10)
    plot_estimates            per_test_errors.csv   forest vs §3's mixed-independence and product estimates
    plot_estimate_mse         estimates.csv         their MSE, χ²'s decisions and the k least dependent pairs independent

`draw_all(results_dir, figures_dir)` draws every figure it has data for, one set per benchmark
under results/tables/testifai/<benchmark>/, and says what is missing and which command makes it.

Figures are drawn on bare `matplotlib.figure.Figure` objects (the Agg canvas, no pyplot state,
so a notebook's backend is left alone) under testnav/plotstyle.py's `RC` and written by its `save`:
the same frames give the same PNG bytes.
"""

from __future__ import annotations

from math import comb
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib import rc_context
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from ..plotstyle import RC, save

STUDY_COMMAND = "python run.py stage=study"
BLUE, GREY, RED, GREEN, ORANGE = "#1f77b4", "#7f7f7f", "#d62728", "#2ca02c", "#ff7f0e"


def error_boxes(ax, data, colors, ticks, fontsize=None) -> None:
    """Boxes of estimation errors (whiskers over the full range), filled in `colors`, one tick each."""
    box = ax.boxplot(data, whis=(0, 100), widths=0.5, patch_artist=True, medianprops={"color": "black"})
    for patch, c in zip(box["boxes"], colors):
        patch.set_facecolor(c)
        patch.set_alpha(0.5)
    ax.set_xticks(np.arange(1, len(data) + 1), ticks, **({"fontsize": fontsize} if fontsize else {}))


def _require(df: pd.DataFrame, columns, what: str) -> None:
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ValueError(f"{what}: frame lacks column(s) {', '.join(missing)} (has: {', '.join(map(str, df.columns))})")
    if df.empty:
        raise ValueError(f"{what}: frame is empty")


def _levels(df: pd.DataFrame) -> list[str]:
    return sorted((c for c in df.columns if c[:1] == "t" and c[1:].isdigit()), key=lambda c: int(c[1:]))


def _dims(label: str) -> int:
    return int(str(label).rstrip("D"))


def _largest(df: pd.DataFrame) -> tuple[str, pd.DataFrame]:
    """The rows of the highest-dimensional tomography (the full lattice: 4D for the paper's benchmarks)."""
    label = max(df.tomography.unique(), key=_dims)
    return label, df[df.tomography == label]


def _num(v: float) -> str:
    return f"{v:,.0f}" if abs(v) >= 1000 else f"{v:.4g}"


def _title(df: pd.DataFrame, what: str) -> str:
    names = df["benchmark"].unique() if "benchmark" in df.columns else []
    return f"{what} — {names[0]}" if len(names) == 1 else what


def plot_r_distributions(per_test: pd.DataFrame, path) -> str:
    """Ground-truth r_σ (fraction of D still classified correctly under σ) by order k, on the
    largest lattice of the frame (needs tomography, order, r_true)."""
    _require(per_test, ["tomography", "order", "r_true"], "r_σ distributions")
    label, d = _largest(per_test)
    orders = sorted(int(k) for k in d.order.unique())
    groups = [d.loc[d.order == k, "r_true"].to_numpy(float) for k in orders]
    with rc_context(RC):
        fig = Figure(figsize=(6.4, 4.0), layout="tight")
        ax = fig.add_subplot()
        ax.grid(alpha=0.3)
        pos = np.arange(len(orders))
        multi = [i for i, g in enumerate(groups) if len(g) > 1]
        if multi:
            parts = ax.violinplot([groups[i] for i in multi], positions=pos[multi], showextrema=False, widths=0.8)
            for body in parts["bodies"]:
                body.set_facecolor(BLUE)
                body.set_alpha(0.35)
        ax.boxplot(groups, positions=pos, widths=0.18, whis=(0, 100), showfliers=False, medianprops={"color": RED})
        ax.set_xticks(pos, [f"Θ{k}\n(n={len(g)})" for k, g in zip(orders, groups)])
        ax.set_xlabel("order k (number of perturbations applied)")
        ax.set_ylabel("ground-truth robustness r_σ")
        ax.set_ylim(-0.02, 1.02)
        ax.set_title(_title(per_test, f"Ground-truth r_σ by order ({label})"))
        save(fig, path)
    med = [float(np.median(g)) for g in groups]
    lo = next((i for i, k in enumerate(orders) if k >= 1), 0)
    return (
        f"Ground-truth robustness r_σ by order on the {label} lattice: the median r_σ falls from "
        f"{med[lo]:.3f} for order {orders[lo]} to {med[-1]:.3f} for order {orders[-1]}, "
        f"the clean accuracy being {med[0]:.3f}."
        if orders[0] == 0
        else f"Ground-truth robustness r_σ by order on the {label} lattice: the median falls from "
        f"{med[0]:.3f} (order {orders[0]}) to {med[-1]:.3f} (order {orders[-1]})."
    )


def plot_per_test_errors(per_test: pd.DataFrame, path) -> str:
    """Box plots of r̂_σ − r_σ per tomography (3D, 4D), over all tests and over the tests of
    order ≥ 3 that partial tomography never measured (needs tomography, order, error)."""
    _require(per_test, ["tomography", "order", "error"], "per-test errors")
    labels = sorted(per_test.tomography.unique(), key=_dims)
    data, ticks, colors = [], [], []
    for label in labels:
        d = per_test[per_test.tomography == label]
        held = d[d.order >= 3]
        data.append(d.error.to_numpy(float))
        ticks.append(f"{label}\nall Θ ({len(d)})")
        colors.append(BLUE)
        if len(held):
            data.append(held.error.to_numpy(float))
            ticks.append(f"{label}\nΘ≥3 only ({len(held)})")
            colors.append(ORANGE)
    with rc_context(RC):
        fig = Figure(figsize=(6.4, 4.2), layout="tight")
        ax = fig.add_subplot()
        ax.grid(alpha=0.3)
        error_boxes(ax, data, colors, ticks)
        for y in (-0.1, -0.05, 0.05, 0.1):
            ax.axhline(y, color=GREY, lw=0.8, ls=":" if abs(y) > 0.06 else "--")
        ax.axhline(0, color="black", lw=0.8)
        ax.set_ylabel("estimation error  r̂_σ − r_σ")
        ax.set_title(_title(per_test, "Per-test robustness estimation error (whiskers: full range)"))
        save(fig, path)
    parts = []
    for label in labels:
        d = per_test[per_test.tomography == label]
        e = d.error.abs()
        parts.append(
            f"{label}: {(e <= 0.05).mean():.1%} of {len(d)} tests within ±0.05 and {(e <= 0.1).mean():.1%} "
            f"within ±0.1 (max |error| {e.max():.3f})"
        )
    return "Per-test estimation errors r̂_σ − r_σ of partial tomography; " + "; ".join(parts) + "."


DROPS = ("absolute", "relative")  # Fig. 6's drop: the paper's (points against Table 1's accuracy), or 1 − R/r_0


def plot_queries(queries: pd.DataFrame, path, drop: str = "absolute") -> str:
    """Q1–Q12: R̂(Q) − R(Q) and the predicted (and true) accuracy drop (needs query, error, drop_pred;
    drop_true optional). drop="absolute" (the paper's Fig. 6): predicted accuracy minus the original
    accuracy (`reference`: Table 1's, or the measured clean accuracy), in points; "relative":
    1 − R̂(Q)/r̂_0 (columns drop_*_relative, or drop_* of a study table written before the change)."""
    if drop not in DROPS:
        raise ValueError(f"drop={drop} (valid: {', '.join(DROPS)})")
    _require(queries, ["query", "error", "drop_pred"], "query errors")
    q = queries.reset_index(drop=True)
    absolute = drop == "absolute" and "reference" in q
    if drop == "absolute" and not absolute:
        raise ValueError("absolute drop: the table has no reference column (a study from before; remake it)")
    pred = q.drop_pred if absolute else q.get("drop_pred_relative", q.drop_pred)
    true = (q.drop_true if absolute else q.get("drop_true_relative", q.get("drop_true"))) if "drop_true" in q else None
    scale = 100.0 if absolute else 1.0
    x = np.arange(len(q))
    with rc_context(RC):
        fig = Figure(figsize=(7.6, 5.0), layout="tight")
        ax1, ax2 = fig.subplots(2, 1, sharex=True)
        ax1.grid(alpha=0.3)
        ax2.grid(alpha=0.3)
        ax1.bar(x, q.error, color=[RED if e > 0 else BLUE for e in q.error], width=0.6)
        ax1.axhline(0, color="black", lw=0.8)
        ax1.set_ylabel("error  R̂(Q) − R(Q)")
        ax1.set_title(_title(q, "Aggregate queries Q1–Q12 (3D)"))
        ax2.bar(x, scale * pred, width=0.6, color=ORANGE, alpha=0.7, label="predicted drop")
        if true is not None:
            ax2.plot(x, scale * true, "k_", ms=18, mew=2, label="true drop")
        if absolute:
            ref = float(q.reference.iloc[0])
            ax2.set_ylabel(f"drop (points vs {100 * ref:.1f} %)")
            ax2.set_ylim(min(-100.0 * ref, float(np.nanmin(scale * pred)) * 1.05), 0)
            ax2.legend(loc="lower left")
        else:
            ax2.set_ylabel("relative accuracy drop")
            ax2.set_ylim(0, max(1.0, float(np.nanmax(pred)) * 1.05))
            ax2.legend(loc="upper left")
        ax2.set_xticks(x, q["query"])
        save(fig, path)
    worst = q.loc[q.error.abs().idxmax()]
    top = int(np.argmin(pred)) if absolute else int(np.argmax(pred))
    if absolute:
        source = str(q.reference_source.iloc[0]) if "reference_source" in q else "the reference"
        largest = (
            f"the largest predicted drop is {-100 * pred.iloc[top]:.1f} points ({q['query'].iloc[top]}), "
            f"against {100 * float(q.reference.iloc[0]):.1f} % ({source})"
        )
    else:
        largest = f"the largest predicted relative drop is {pred.iloc[top]:.1%} ({q['query'].iloc[top]})"
    return (
        f"Robustness estimation error R̂(Q) − R(Q) and predicted accuracy drop for {len(q)} Boolean queries: "
        f"mean |error| {q.error.abs().mean():.3f}, worst {worst['query']} at {worst.error:+.3f}; {largest}."
    )


def _order_cut(label: str, total: int, k: int) -> int | None:
    """|Θ≤k| for a lattice of `total` tests and dimension `label` (e.g. 3D, 216 → ℓ = 6)."""
    n = _dims(label)
    levels = round(total ** (1 / n))
    if levels**n != total:
        return None
    return sum(comb(n, j) * (levels - 1) ** j for j in range(k + 1))


def plot_ordered_vs_random(ovr: pd.DataFrame, path) -> str:
    """Mean MSE (± one std over repetitions) on held-out tests against the number of training
    tests, ordered (by order) vs random selection, one panel per tomography (needs tomography,
    strategy, tests, mse; fraction optional)."""
    _require(ovr, ["tomography", "strategy", "tests", "mse"], "ordered vs random")
    labels = sorted(ovr.tomography.unique(), key=_dims)
    agg = ovr.groupby(["tomography", "strategy", "tests"]).mse.agg(["mean", "std"]).reset_index().fillna({"std": 0.0})
    sentences = []
    with rc_context(RC):
        fig = Figure(figsize=(5.2 * len(labels), 4.0))
        axes = np.atleast_1d(fig.subplots(1, len(labels)))
        for ax in axes:
            ax.grid(alpha=0.3)
        for ax, label in zip(axes, labels):
            total = int(ovr.loc[ovr.tomography == label, "tests"].max())
            for strategy, color in (("ordered", BLUE), ("random", GREY)):
                g = agg[(agg.tomography == label) & (agg.strategy == strategy)].sort_values("tests")
                if g.empty:
                    continue
                ax.plot(g.tests, g["mean"], "o-", color=color, ms=4, label=strategy)
                ax.fill_between(
                    g.tests, (g["mean"] - g["std"]).clip(lower=0), g["mean"] + g["std"], color=color, alpha=0.2, lw=0
                )
            for k, color in ((2, RED), (3, GREEN)):
                cut = _order_cut(label, total, k)
                if cut is not None and cut < total:
                    ax.axvline(cut, color=color, ls="--", lw=1, label=f"|Θ≤{k}| = {cut}")
            ax.set_xlabel(f"training tests n (of |Θ| = {total})")
            ax.set_ylabel("MSE of r̂_σ on held-out tests")
            ax.set_title(_title(ovr, f"Ordered vs random selection ({label})"))
            ax.legend()
            o = agg[(agg.tomography == label) & (agg.strategy == "ordered")].set_index("tests")["mean"]
            r = agg[(agg.tomography == label) & (agg.strategy == "random")].set_index("tests")["mean"]
            common = o.index.intersection(r.index)
            cut = _order_cut(label, total, 2)
            if len(common):
                at = [n for n in common if cut is None or n >= cut]
                n = min(at) if at else max(common)
                reps = int(ovr[ovr.tomography == label].groupby(["strategy", "tests"]).size().min())
                sentences.append(
                    f"{label} at n = {n} (first step with all of Θ≤2 available), mean over {reps} repetitions: "
                    f"ordered {o[n]:.4f} vs random {r[n]:.4f}; ordered's mean is lower at "
                    f"{int((o[common] < r[common]).sum())} of {len(common)} sizes"
                )
        save(fig, path)
    return "Held-out MSE of r̂_σ, ordered vs random choice of training tests; " + "; ".join(sentences) + "."


REGIMES = {"full": "full tomography", "partial": "partial (Θ≤2)", "partial_early_stopping": "partial + early stopping"}


def plot_inferences(inferences: pd.DataFrame, path) -> str:
    """Total inferences per regime (full, partial, partial with early stopping), per tomography,
    with each regime's per-test MSE above its bar (needs tomography, regime, inferences, mse)."""
    _require(inferences, ["tomography", "regime", "inferences", "mse"], "inference counts")
    labels = sorted(inferences.tomography.unique(), key=_dims)
    regimes = [r for r in REGIMES if r in set(inferences.regime)] + sorted(set(inferences.regime) - set(REGIMES))
    colors = dict(zip(regimes, (GREY, BLUE, GREEN, ORANGE, RED)))
    width = 0.8 / len(regimes)
    with rc_context(RC):
        fig = Figure(figsize=(6.8, 4.2), layout="tight")
        ax = fig.add_subplot()
        ax.grid(alpha=0.3)
        for j, regime in enumerate(regimes):
            for i, label in enumerate(labels):
                row = inferences[(inferences.tomography == label) & (inferences.regime == regime)]
                if row.empty:
                    continue
                row = row.iloc[0]
                x = i + (j - (len(regimes) - 1) / 2) * width
                ax.bar(
                    x,
                    row.inferences,
                    width=width * 0.95,
                    color=colors[regime],
                    label=REGIMES.get(regime, regime) if i == 0 else None,
                )
                full = inferences[(inferences.tomography == label) & (inferences.regime == "full")].inferences
                share = f"{row.inferences / full.iloc[0]:.0%}\n" if len(full) and full.iloc[0] else ""
                ax.annotate(
                    f"{share}MSE {row.mse:.4f}",
                    (x, row.inferences),
                    ha="center",
                    va="bottom",
                    fontsize=7,
                    xytext=(0, 2),
                    textcoords="offset points",
                )
        ax.set_xticks(np.arange(len(labels)), [f"{label} tomography" for label in labels])
        ax.set_ylabel("total inferences (model evaluations of one input)")
        ax.set_ylim(0, inferences.inferences.max() * 1.3)
        ax.ticklabel_format(axis="y", style="sci", scilimits=(0, 0))
        ax.legend(loc="upper left")
        ax.set_title(_title(inferences, "Inferences needed to reconstruct Θ"))
        save(fig, path)
    parts = []
    for label in labels:
        d = inferences[inferences.tomography == label].set_index("regime")
        if "full" not in d.index:
            continue
        full = d.loc["full", "inferences"]
        bits = [
            f"{REGIMES.get(r, r)} {d.loc[r, 'inferences'] / full:.1%} of full (MSE {d.loc[r, 'mse']:.4f})"
            for r in regimes
            if r in d.index and r != "full"
        ]
        parts.append(f"{label} ({int(full):,} inferences for full): " + ", ".join(bits))
    return "Inference cost per regime; " + "; ".join(parts) + "."


def plot_quality_vs_severity(per_test: pd.DataFrame, path, quality_name: str = "KID") -> str:
    """Mean true quality q_σ and predicted q̂_σ (band: interquartile range of q_σ) and mean
    accuracy drop r_0 − r_σ against the severity sum σ_1 + … + σ_n, on the largest lattice
    (needs tomography, t1..tn, q_true, q_pred, r_true)."""
    _require(per_test, ["tomography", "q_true", "q_pred", "r_true"], "quality vs severity")
    label, d = _largest(per_test)
    cols = _levels(d)
    if not cols:
        raise ValueError("quality vs severity: frame has no level columns t1..tn")
    d = d.dropna(subset=cols + ["q_true", "q_pred", "r_true"]).copy()
    d["severity"] = d[cols].sum(axis=1).astype(int)
    clean = d.loc[d.severity == 0, "r_true"]
    r0 = float(clean.iloc[0]) if len(clean) else float(d.r_true.max())
    d["drop"] = r0 - d.r_true
    g = (
        d.groupby("severity")
        .agg(
            q=("q_true", "mean"),
            q_lo=("q_true", lambda s: s.quantile(0.25)),
            q_hi=("q_true", lambda s: s.quantile(0.75)),
            q_hat=("q_pred", "mean"),
            drop=("drop", "mean"),
        )
        .reset_index()
    )
    with rc_context(RC):
        fig = Figure(figsize=(6.8, 4.2), layout="tight")
        ax = fig.add_subplot()
        ax.grid(alpha=0.3)
        ax.fill_between(g.severity, g.q_lo, g.q_hi, color=BLUE, alpha=0.15, lw=0, label="q_σ interquartile range")
        ax.plot(g.severity, g.q, "o-", color=BLUE, ms=4, label=f"q_σ ({quality_name}, ground truth)")
        ax.plot(g.severity, g.q_hat, "s--", color=ORANGE, ms=4, label="q̂_σ (predicted from Θ≤2)")
        ax.set_xlabel(f"severity sum σ1 + … + σ{len(cols)}")
        ax.set_ylabel(f"input quality ({quality_name}, mean per sum)")
        ax2 = ax.twinx()
        ax2.spines["right"].set_visible(True)  # RC hides it; a second y axis needs its own
        ax2.plot(g.severity, g["drop"], "^-", color=RED, ms=4, label="accuracy drop r_0 − r_σ")
        ax2.set_ylabel("mean accuracy drop", color=RED)
        ax2.set_ylim(min(0.0, float(g["drop"].min()) * 1.1), max(1.0, float(g["drop"].max()) * 1.05))
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        h1, l1 = ax.get_legend_handles_labels()
        h2, l2 = ax2.get_legend_handles_labels()
        ax.legend(h1 + h2, l1 + l2, loc="upper left", fontsize=8)
        ax.set_title(_title(per_test, f"Quality and accuracy drop vs severity sum ({label})"))
        save(fig, path)
    held = d[d.order >= 3] if "order" in d else d
    err = (held.q_pred - held.q_true).abs()
    span = float(d.q_true.max() - d.q_true.min()) or 1.0
    top = g.iloc[-1]
    return (
        f"Input quality ({quality_name}) q_σ and its prediction q̂_σ, and the mean accuracy drop, against the "
        f"severity sum on the {label} lattice: on the {len(held)} unmeasured tests of order ≥ 3, mean |q̂ − q| is "
        f"{_num(err.mean())} ({err.mean() / span:.1%} of q's range); at the largest severity sum, "
        f"{int(top.severity)}, mean q̂ is {_num(top.q_hat)} vs q {_num(top.q)} and the mean accuracy drop is "
        f"{top['drop']:.3f}."
    )


def plot_quality_errors(per_test: pd.DataFrame, path, quality_name: str = "KID") -> str:
    """Fig. 10: box plot of the quality-estimation error q̂_σ − q_σ of the largest tomography (4D),
    by order, over the tests partial tomography never measured (order ≥ 3) and over all of Θ,
    whiskers the full range (needs tomography, order, q_true, q_pred)."""
    _require(per_test, ["tomography", "order", "q_true", "q_pred"], "quality errors")
    label, d = _largest(per_test)
    d = d.dropna(subset=["q_true", "q_pred"])
    err = (d.q_pred - d.q_true).to_numpy(float)
    orders = sorted(int(k) for k in d.order.unique() if k >= 3)
    groups = [err[d.order.to_numpy() == k] for k in orders] + [err[d.order.to_numpy() >= 3], err]
    ticks = [f"Θ{k}\n({len(g)})" for k, g in zip(orders, groups)] + [
        f"Θ≥3\n({len(groups[-2])})",
        f"all Θ\n({len(err)})",
    ]
    with rc_context(RC):
        fig = Figure(figsize=(6.4, 4.2), layout="tight")
        ax = fig.add_subplot()
        ax.grid(alpha=0.3)
        box = ax.boxplot(groups, whis=(0, 100), widths=0.5, patch_artist=True, medianprops={"color": "black"})
        for patch, c in zip(box["boxes"], [ORANGE] * (len(groups) - 1) + [BLUE]):
            patch.set_facecolor(c)
            patch.set_alpha(0.5)
        ax.set_xticks(np.arange(1, len(groups) + 1), ticks)
        ax.axhline(0, color="black", lw=0.8)
        ax.set_ylabel(f"estimation error  q̂_σ − q_σ ({quality_name})")
        ax.set_title(_title(per_test, f"Quality estimation error ({label}; whiskers: full range)"))
        save(fig, path)
    held = np.abs(groups[-2])
    span = float(d.q_true.max() - d.q_true.min()) or 1.0
    return (
        f"Quality ({quality_name}) estimation error q̂_σ − q_σ on the {label} lattice: on the {len(held)} "
        f"unmeasured tests of order ≥ 3 the mean |error| is {_num(held.mean())} ({held.mean() / span:.1%} of q's "
        f"range), the median error {_num(float(np.median(groups[-2])))} and the largest |error| {_num(held.max())}."
    )


ESTIMATES = {"r_pred": "forest", "r_indep": "mixed independence (§3)", "r_product": "all-independent product"}


def estimate_errors(per_test: pd.DataFrame) -> pd.DataFrame:
    """Per tomography and estimator (forest r̂, §3's mixed-independence estimate, the plain product
    of first-order tests), on the unmeasured tests of order ≥ 3 where the mixed estimate is defined:
    tests, mean |error|, MSE; and, for the forest, the same over all unmeasured tests of order ≥ 3."""
    rows = []
    for label, d in per_test[per_test.order >= 3].groupby("tomography", sort=False):
        defined = d[d.r_indep.notna()] if "r_indep" in d else d.iloc[:0]
        for column, name in ESTIMATES.items():
            if column not in d:
                continue
            for scope, part in (("mixed defined", defined), ("all Θ≥3", d)):
                e = (part[column] - part.r_true).dropna()
                rows.append(
                    {
                        "tomography": label,
                        "estimate": name,
                        "column": column,
                        "scope": scope,
                        "tests": len(e),
                        "of": len(d),
                        "mean_abs_error": float(e.abs().mean()) if len(e) else np.nan,
                        "mse": float((e**2).mean()) if len(e) else np.nan,
                    }
                )
    return pd.DataFrame(rows)


def plot_estimates(per_test: pd.DataFrame, path) -> str:
    """Errors of the forest, §3's mixed-independence estimate and the all-independent product on the
    unmeasured tests of order ≥ 3, per tomography (needs tomography, order, r_true, r_pred, r_indep,
    r_product)."""
    _require(per_test, ["tomography", "order", "r_true", "r_pred", "r_indep", "r_product"], "estimates")
    labels = sorted(per_test.tomography.unique(), key=_dims)
    data, ticks, colors = [], [], []
    palette = dict(zip(ESTIMATES, (BLUE, GREEN, GREY)))
    for label in labels:
        d = per_test[(per_test.tomography == label) & (per_test.order >= 3)]
        for column, name in ESTIMATES.items():
            e = (d[column] - d.r_true).dropna().to_numpy(float)
            data.append(e if len(e) else np.array([np.nan]))
            ticks.append(f"{label}\n{name.split(' ')[0]}\n({len(e)})")
            colors.append(palette[column])
    with rc_context(RC):
        fig = Figure(figsize=(7.2, 4.2), layout="tight")
        ax = fig.add_subplot()
        ax.grid(alpha=0.3)
        error_boxes(ax, data, colors, ticks, fontsize=8)
        ax.axhline(0, color="black", lw=0.8)
        ax.set_ylabel("estimation error  r̂_σ − r_σ (order ≥ 3)")
        ax.set_title(_title(per_test, "Forest vs independence estimates (whiskers: full range)"))
        save(fig, path)
    table = estimate_errors(per_test)
    parts = []
    for label in labels:
        t = table[(table.tomography == label)]
        defined = t[(t.scope == "mixed defined")].set_index("column")
        every = t[(t.scope == "all Θ≥3")].set_index("column")
        n, total = int(defined.loc["r_indep", "tests"]), int(defined.loc["r_indep", "of"])
        bits = [f"the mixed estimate is defined on {n} of {total} unmeasured tests of order ≥ 3"]
        if n:
            bits.append(
                "there MSE " + ", ".join(f"{ESTIMATES[c].split(' ')[0]} {defined.loc[c, 'mse']:.4f}" for c in ESTIMATES)
            )
        bits.append(
            f"over all of them MSE forest {every.loc['r_pred', 'mse']:.4f}, product {every.loc['r_product', 'mse']:.4f}"
        )
        parts.append(f"{label}: " + "; ".join(bits))
    return "Forest vs §3's independence estimates; " + "; ".join(parts) + "."


def plot_estimate_mse(estimates: pd.DataFrame, path) -> str:
    """MSE of §3's mixed estimate, the forest and the all-independent product on the unmeasured tests
    of order ≥ 3 where the mixed estimate is defined: with the χ² decisions at α, then with the k
    least dependent pairs taken as independent (needs tomography, pairs_independent, defined, tests,
    mse_mixed, mse_forest, mse_product; estimates.csv)."""
    _require(
        estimates,
        ["tomography", "pairs_independent", "defined", "tests", "mse_mixed", "mse_forest", "mse_product"],
        "estimate MSE",
    )
    labels = sorted(estimates.tomography.unique(), key=_dims)
    sentences = []
    with rc_context(RC):
        fig = Figure(figsize=(5.2 * len(labels), 4.0))
        axes = np.atleast_1d(fig.subplots(1, len(labels)))
        for ax in axes:
            ax.grid(alpha=0.3)
        for ax, label in zip(axes, labels):
            d = estimates[estimates.tomography == label].reset_index(drop=True)
            x = np.arange(len(d))
            for column, name, color in (
                ("mse_mixed", "mixed independence (§3)", GREEN),
                ("mse_forest", "forest", BLUE),
                ("mse_product", "all-independent product", GREY),
            ):
                ax.plot(x, d[column], "o-", color=color, ms=4, label=name)
            ax.set_xticks(
                x, [("χ² α" if k == "chi2" else str(k)) + f"\n{n}" for k, n in zip(d.pairs_independent, d.defined)]
            )
            ax.set_xlabel(
                "pairs taken as independent (χ² at α, or the k least dependent)\nand tests where the mixed estimate is defined"
            )
            ax.set_ylabel("MSE on those tests (order ≥ 3)")
            ax.set_title(_title(estimates, f"Independence estimates vs forest ({label})"))
            ax.legend(fontsize=8)
            at = d.iloc[0]
            full = d[(d.defined == d.tests) & d.pairs_independent.ne("chi2")]
            bit = f"{label}: at α the mixed estimate is defined on {int(at.defined)} of {int(at.tests)} tests"
            if at.defined:
                bit += f" (MSE mixed {at.mse_mixed:.4f}, forest {at.mse_forest:.4f}, product {at.mse_product:.4f})"
            if len(full):
                f0 = full.iloc[0]
                bit += (
                    f"; with the {f0.pairs_independent} least dependent pairs taken as independent it covers all, MSE mixed "
                    f"{f0.mse_mixed:.4f}, forest {f0.mse_forest:.4f}, product {f0.mse_product:.4f}"
                )
            sentences.append(bit)
        save(fig, path)
    return (
        "§3's mixed-independence estimate against the forest and the all-independent product; "
        + "; ".join(sentences)
        + "."
    )


# ---------------------------------------------------------------------------------------------

FIGURES = (  # (file stem, study CSV, plotting function)
    ("r_distribution", "per_test_errors", plot_r_distributions),
    ("per_test_errors", "per_test_errors", plot_per_test_errors),
    ("queries", "queries", plot_queries),
    ("ordered_vs_random", "ordered_vs_random", plot_ordered_vs_random),
    ("inferences", "inferences", plot_inferences),
    ("quality_vs_severity", "per_test_errors", plot_quality_vs_severity),
    ("quality_errors", "per_test_errors", plot_quality_errors),
    ("estimates", "per_test_errors", plot_estimates),
    ("estimate_mse", "estimates", plot_estimate_mse),
)


def draw_all(results_dir, figures_dir, drop: str = "absolute") -> list[tuple[Path, str]]:
    """Every TestifAI figure there is data for: results_dir/tables/testifai/<benchmark>/*.csv →
    figures_dir/testifai_<benchmark>_<figure>.png. Returns (path, one-sentence description)
    per figure written; prints what is missing and the command that makes it. `drop`: Fig. 6's
    accuracy drop, "absolute" (the paper's) or "relative" (`plot_queries`)."""
    root = Path(results_dir) / "tables" / "testifai"
    benchmarks = sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []
    if not benchmarks:
        print(f"testifai figures: skipped, no study tables under {root} (make them with: {STUDY_COMMAND})")
        return []
    out: list[tuple[Path, str]] = []
    for bdir in benchmarks:
        name = bdir.name
        command = STUDY_COMMAND + ("" if name == "mnist5k" else f" benchmark={name}")
        frames: dict[str, pd.DataFrame | None] = {}
        for stem, table, plot in FIGURES:
            if table not in frames:
                csv = bdir / f"{table}.csv"
                frames[table] = pd.read_csv(csv) if csv.exists() else None
            df = frames[table]
            if df is None:
                print(
                    f"testifai figures: skipped {name} {stem}, missing {bdir / (table + '.csv')} "
                    f"(make it with: {command})"
                )
                continue
            if plot in (plot_quality_vs_severity, plot_quality_errors) and "q_true" not in df.columns:
                print(
                    f"testifai figures: skipped {name} {stem}, {table}.csv has no quality columns "
                    f"(make them with: {command} tomography.quality=kid)"
                )
                continue
            path = Path(figures_dir) / f"testifai_{name}_{stem}.png"
            try:
                sentence = plot(df, path, drop=drop) if plot is plot_queries else plot(df, path)
            except ValueError as e:
                print(f"testifai figures: skipped {name} {stem}: {e} (remake it with: {command})")
                continue
            out.append((path, f"{name}: {sentence}"))
    return out
