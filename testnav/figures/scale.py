"""The scaling figure: AUC-Recall@P* and search time per proposal against |Θ|, per search, from
scripts/scale_study.py's table (results/tables/scale.csv). Drawn by `make figures` when that
table exists; a clone without it just skips the figure."""

from __future__ import annotations

from pathlib import Path

from .. import searches
from ..plotstyle import plt, save, study_rows, styled


@styled
def draw(csv: Path, out: Path) -> tuple[Path, str] | None:
    """results/tables/scale.csv → out (a PNG), with the sentence the report prints under it."""
    df = study_rows(csv, lambda d: d["ok"].astype(bool))
    if df is None:
        return None
    # the profiles run at the most sizes (every generated one in the committed study), averaged
    # per size: a size with more profiles than another would bend the curves
    sizes = df.groupby("profile")["space_size"].nunique()
    profiles = sorted(sizes.index[sizes == sizes.max()])
    df = df[df["profile"].isin(profiles)]
    budget = df.groupby("space_size")["budget"].transform("min")  # the smaller budget at each size
    df = df[df["budget"] == budget]
    mean = df.groupby(["search", "space_size"])[["auc", "search_ms_per_proposal"]].mean().reset_index()
    fig, axes = plt.subplots(1, 2, figsize=(8, 3))
    for search, g in mean.groupby("search"):
        label, look = searches.info(search).label, searches.info(search).style
        style = dict(color=look.color, linestyle=look.ls, marker="o", markersize=3, label=label)
        axes[0].plot(g["space_size"], g["auc"], **style)
        axes[1].plot(g["space_size"], g["search_ms_per_proposal"], **style)
    for ax, label in zip(axes, ("AUC-Recall@P*", "search ms / proposal (oracle excluded)")):
        ax.set_xscale("log")
        ax.set_xlabel("|Θ| (budget 5|Θ| up to 10⁴, else 5,000)")
        ax.set_ylabel(label)
    axes[1].set_yscale("log")
    axes[0].legend(frameon=False)
    n_runs = df.groupby(["space_size", "search"]).size().min()
    sentence = (
        f"Scaling (scripts/scale_study.py, {len(profiles)} profile(s): {', '.join(profiles)}; at least "
        f"{n_runs} held-out run(s) per point): mean AUC-Recall@P* and search time per proposal against |Θ| "
        f"({df['space_size'].min():,}–{df['space_size'].max():,} configurations); results/tables/scale.md has every figure."
    )
    return save(fig, out), sentence
