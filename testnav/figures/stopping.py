"""The stopping figure: where p_good stops TomoNav and NSGA-II on the held-out real lattices, against
where pymoo's own terminations stop NSGA-II, and how often the front was then ε-complete. From
scripts/stopping_study.py's table (results/tables/stopping_study.csv); drawn by `make figures`
when that table exists, skipped otherwise."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .. import searches
from ..plotstyle import GREY, plt, save, study_rows, styled

# (search, rule, label) in the order the bars are drawn
BARS = (
    ("tomonav", "p_good", "TomoNav · p_good"),
    ("nsga2", "p_good", "NSGA-II · p_good"),
    ("nsga2", "pymoo_default", "NSGA-II · pymoo default"),
    ("nsga2", "pymoo_robust", "NSGA-II · pymoo robust"),
)
HATCH = {"p_good": "", "pymoo_default": "///", "pymoo_robust": "..."}


@styled
def draw(csv: Path, out: Path) -> tuple[Path, str] | None:
    """results/tables/stopping_study.csv → out (a PNG), with the sentence the report prints under it."""
    df = study_rows(csv, lambda d: d["split"] == "test")
    if df is None:
        return None
    tables = list(dict.fromkeys(df["table"]))
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.4), sharex=True)
    width = 0.8 / len(BARS)
    x = np.arange(len(tables))
    for i, (search, rule, label) in enumerate(BARS):
        rows = df[(df["search"] == search) & (df["rule"] == rule)].set_index("table").reindex(tables)
        look = searches.info(search).style
        where = x + (i - (len(BARS) - 1) / 2) * width
        fired = rows["fired"].fillna(0).to_numpy()
        stop = np.where(fired > 0, rows["median_stop_of_lattice"], 0)
        style = dict(width=width, color=look.color, hatch=HATCH[rule], edgecolor="white", label=label)
        axes[0].bar(where, stop, **style)
        axes[1].bar(where, np.where(fired > 0, rows["eps_complete"], 0), **style)
        for w, h, f, n in zip(where, stop, fired, rows["runs"].fillna(0).to_numpy()):
            # how many of the runs it stopped; × where it never did within the budget
            axes[0].text(w, h + 0.01, f"{int(f)}/{int(n)}" if f else "×", ha="center", va="bottom", fontsize=6)
        if rule == "p_good":  # where the run's front was first ε-complete (median), over its own bar
            axes[0].scatter(
                where, rows["median_u_eps_of_lattice"], marker="_", s=120, color="white", linewidths=2.5, zorder=3
            )
            axes[0].scatter(
                where, rows["median_u_eps_of_lattice"], marker="_", s=120, color="#d95f02", linewidths=1.5, zorder=4
            )
    axes[0].set_ylabel("median stop / |Θ|")
    axes[0].set_title("stop (— the ε-complete point; runs stopped / runs)")
    axes[1].set_ylabel("stops with an ε-complete front")
    axes[1].set_title("ε-complete at the stop (ε = 0.01)")
    axes[1].axhline(0.95, color=GREY, lw=0.8, ls="--")
    axes[0].axhline(0.5, color=GREY, lw=0.8, ls="--")
    sizes = df.drop_duplicates("table").set_index("table")["size"]
    for ax in axes:
        ax.set_ylim(0, 1.12)
        ax.set_xticks(x, [f"{t.rsplit('_', 1)[0]}\n{t.rsplit('_', 1)[-1]} · {sizes[t]:,}" for t in tables], fontsize=7)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(
        handles, labels, frameon=False, fontsize=7, ncol=len(BARS), loc="upper center", bbox_to_anchor=(0.5, 1.06)
    )
    good = df[(df["rule"] == "p_good") & (df["search"] == "tomonav")]
    sentence = (
        f"Stopping on a good-enough front (scripts/stopping_study.py, held-out real lattices, stop_at 0.95, "
        f"ε = 0.01): TomoNav's median stop under p_good is {good['median_stop_of_lattice'].min():.0%}–"
        f"{good['median_stop_of_lattice'].max():.0%} of the lattice; NSGA-II's beside pymoo's "
        "DefaultMultiObjectiveTermination and its RobustTermination variant on the same runs "
        "(results/tables/stopping_study.md has every figure)."
    )
    return save(fig, out), sentence
