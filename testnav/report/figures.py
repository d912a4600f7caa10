"""The report's figures, drawn with matplotlib and embedded as PNG data URIs (no file beside the page).

`front_figure`: every configuration a run measured, δ against ρ, the measured front numbered
(the page names each number); `order1_figure`: each family alone, accuracy by level;
`order2_figure`: one heat map per family pair, accuracy at each pair of levels, titled with
TestifAI's χ² verdict; `thumbnail`: one input as a small PNG.
"""

from __future__ import annotations

import base64
import io
import math

import numpy as np

from ..figures.style import GREY, RC, TEAL, plt


def data_uri(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def figure_uri(fig) -> str:
    """The figure as a PNG data URI (no software or date metadata: the same data, the same bytes)."""
    buf = io.BytesIO()
    with plt.rc_context(RC):
        fig.savefig(buf, format="png", metadata={"Software": None}, bbox_inches="tight", pad_inches=0.05, dpi=110)
    plt.close(fig)
    return data_uri(buf.getvalue())


def front_figure(ranked, rho_label: str, delta_error: float | None = None, told=None) -> str:
    """δ against ρ for every measured configuration; the front's members numbered 1..m in the
    order of the ranked list. `delta_error`: δ's resolution, drawn as ± error bars on the front;
    `told` (bool per front member, in the ranked list's order): the members told apart at it,
    the others drawn hollow."""
    with plt.rc_context(RC):
        fig, ax = plt.subplots(figsize=(5.2, 3.6))
        rest = ranked[ranked["rank"] > 0]
        members = ranked[ranked["rank"] == 0]
        front = members.sort_values("rho")
        ax.scatter(rest["rho"], rest["delta"], s=14, color=GREY, label="measured", zorder=2)
        ax.plot(front["rho"], front["delta"], color=TEAL, lw=1, zorder=3)
        if delta_error is not None:
            ax.errorbar(
                front["rho"],
                front["delta"],
                yerr=delta_error,
                fmt="none",
                ecolor=TEAL,
                elinewidth=0.8,
                capsize=2,
                alpha=0.6,
                zorder=3,
                label=f"± {delta_error:.3g} (the resolution of δ)",
            )
        if told is None:
            ax.scatter(front["rho"], front["delta"], s=30, color=TEAL, label="measured front", zorder=4)
        else:
            apart = np.asarray(told, bool)
            kept, within = members[apart], members[~apart]
            ax.scatter(kept["rho"], kept["delta"], s=30, color=TEAL, label="front: told apart", zorder=4)
            ax.scatter(
                within["rho"],
                within["delta"],
                s=30,
                facecolors="white",
                edgecolors=TEAL,
                zorder=4,
                label="front: within the resolution",
            )
        number = {idx: i + 1 for i, idx in enumerate(ranked.index[ranked["rank"] == 0])}
        for idx, r in front.iterrows():
            ax.annotate(
                str(number[idx]),
                (r["rho"], r["delta"]),
                textcoords="offset points",
                xytext=(4, 4),
                fontsize=8,
                color="#083d3e",
            )
        ax.set_xlabel(f"fidelity ρ ({rho_label}; right: closer to the clean input)")
        ax.set_ylabel("degradation δ (accuracy lost)")
        ax.legend(loc="best", frameon=False)
        ax.grid(alpha=0.3)
        return figure_uri(fig)


def order1_figure(names, level_labels, accuracy, clean: float) -> str:
    """One panel per family: accuracy at levels 0..ℓ−1 with the others at 0. `accuracy[i][k]`
    is family i alone at level k (NaN where unknown)."""
    n = len(names)
    cols = min(n, 4)
    rows = math.ceil(n / cols)
    with plt.rc_context(RC):
        fig, axes = plt.subplots(
            rows, cols, figsize=(2.6 * cols, 2.4 * rows), squeeze=False, sharey=True, layout="constrained"
        )
        for i, ax in enumerate(axes.ravel()):
            if i >= n:
                ax.axis("off")
                continue
            acc = np.asarray(accuracy[i], dtype=float)
            levels = np.arange(len(acc))
            ax.plot(levels, acc, marker="o", color=TEAL)
            ax.axhline(clean, color=GREY, lw=0.8, ls="--")
            ax.set_title(names[i])
            ax.set_xticks(levels, [f"{k}\n{label}" for k, label in enumerate(level_labels[i])], fontsize=6)
            ax.set_ylim(-0.02, 1.02)
            ax.grid(alpha=0.3)
            if i % cols == 0:
                ax.set_ylabel("accuracy")
        return figure_uri(fig)


def order2_figure(panels, levels: int) -> str:
    """One heat map per family pair: `panels` holds (title, row family, column family, grid) with
    grid[a-1][b-1] the accuracy at levels (a, b), NaN where not measured."""
    cols = min(len(panels), 3)
    rows = math.ceil(len(panels) / cols)
    with plt.rc_context(RC):
        fig, axes = plt.subplots(rows, cols, figsize=(3.3 * cols, 3.1 * rows), squeeze=False, layout="constrained")
        ticks = np.arange(levels - 1)
        for k, ax in enumerate(axes.ravel()):
            if k >= len(panels):
                ax.axis("off")
                continue
            title, fi, fj, grid = panels[k]
            grid = np.asarray(grid, dtype=float)
            ax.imshow(np.ma.masked_invalid(grid), cmap="RdYlGn", vmin=0, vmax=1, origin="lower")
            for a in range(grid.shape[0]):
                for b in range(grid.shape[1]):
                    if np.isfinite(grid[a, b]):
                        ax.text(b, a, f"{grid[a, b]:.2f}", ha="center", va="center", fontsize=6.5)
            ax.set_xticks(ticks, [str(t + 1) for t in ticks])
            ax.set_yticks(ticks, [str(t + 1) for t in ticks])
            ax.set_xlabel(f"{fj} level")
            ax.set_ylabel(f"{fi} level")
            ax.set_title(title, fontsize=7.5)
        return figure_uri(fig)


def thumbnail(image, side: int = 96) -> str:
    """A C×H×W image in [0, 1] as a PNG data URI, at most `side` pixels on its longer edge
    (small images keep their pixels; the page enlarges them without smoothing)."""
    from PIL import Image

    a = np.asarray(image, dtype=np.float32)
    a = np.clip(a, 0, 1)
    a = (a[0] if a.shape[0] == 1 else a.transpose(1, 2, 0)) * 255
    im = Image.fromarray(np.round(a).astype(np.uint8))
    if max(im.size) > side:
        im.thumbnail((side, side), Image.Resampling.LANCZOS)
    buf = io.BytesIO()
    im.save(buf, format="PNG", optimize=True)
    return data_uri(buf.getvalue())
