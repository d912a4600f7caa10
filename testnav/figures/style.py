"""One matplotlib setup for every figure: headless, legible, and byte-stable.

Why: the design promises that the same data gives the same figures. Agg renders
deterministically; what varies between runs is metadata (PNG `Software` and dates, SVG
ids), which is removed or pinned here. Colours are fixed per method and per order so a
method looks the same in Figs. 2–4 and an order the same in Figs. 1, 5–8.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg", force=True)
import matplotlib.pyplot as plt  # noqa: E402

RC = {
    "svg.hashsalt": "testnav",
    "font.family": "DejaVu Sans",
    "font.size": 9,
    "axes.titlesize": 9,
    "axes.labelsize": 9,
    "legend.fontsize": 8,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "figure.dpi": 100,
    "savefig.dpi": 130,
    "path.simplify": True,
}

TEAL = "#0f8b8d"
GREY = "#b8b8b8"
ORDER_COLORS = {0: "#dddddd", 1: "#1b9e77", 2: "#d95f02", 3: "#7570b3", 4: "#e7298a", 5: "#66a61e", 6: "#e6ab02"}


def order_color(k: int) -> str:
    return ORDER_COLORS.get(int(k), "#444444")


def styled(fn):
    """Run a plotting function under RC, so every artist it creates gets the same style."""
    import functools

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with plt.rc_context(RC):
            return fn(*args, **kwargs)

    return wrapper


def save(fig, path) -> Path:
    """Write a PNG without version or time metadata, then free the figure."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with plt.rc_context(RC):
        fig.savefig(path, format="png", metadata={"Software": None}, bbox_inches="tight", pad_inches=0.05)
    plt.close(fig)
    return path


def study_rows(csv: Path, keep):
    """A study's table (scripts/*_study.py's CSV) with the rows `keep(df)` selects; None where the
    file is absent or no row is left (the figure is then not drawn)."""
    import pandas as pd

    csv = Path(csv)
    if not csv.exists():
        return None
    df = pd.read_csv(csv)
    df = df[keep(df)]
    return None if df.empty else df
