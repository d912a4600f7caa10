"""One matplotlib setup for every figure, the paper figures' and the HTML reports': headless,
legible, and byte-stable.

Why: the design promises that the same data gives the same figures. Agg renders
deterministically; what varies between runs is metadata (PNG `Software` and dates, SVG
ids), which is removed or pinned here. Colours are fixed per method and per order so a
method looks the same in Figs. 2–4 and an order the same in Figs. 1, 5–8.

Every figure is drawn under `RC` (`styled`, or `plt.rc_context(RC)`) and written by `png_bytes`:
to a file with `save` (results/figures/), into a page as a data URI by testnav/report/plots.py.
Both use one resolution, `DPI`. A plot that wants a grid draws it (`ax.grid(alpha=0.3)`).
"""

from __future__ import annotations

import io
from pathlib import Path

import matplotlib

matplotlib.use("Agg", force=True)
import matplotlib.pyplot as plt  # noqa: E402

from .core.cache import atomic_path  # noqa: E402

DPI = 130  # every PNG, on disk or in a page
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
    "savefig.dpi": DPI,
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


def png_bytes(fig) -> bytes:
    """The figure as PNG bytes at DPI, cropped to what is drawn, without version or time metadata
    (the same data, the same bytes); the figure is freed."""
    buf = io.BytesIO()
    with plt.rc_context(RC):
        fig.savefig(buf, format="png", dpi=DPI, metadata={"Software": None}, bbox_inches="tight", pad_inches=0.05)
    plt.close(fig)
    return buf.getvalue()


def save(fig, path) -> Path:
    """Write the figure's PNG (`png_bytes`) to `path`, whole or not at all, then free the figure."""
    path = Path(path)
    png = png_bytes(fig)
    with atomic_path(path) as tmp:
        tmp.write_bytes(png)
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
