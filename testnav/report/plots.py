"""The report's figures, drawn with matplotlib and embedded as PNG data URIs (no file beside the page).

`front_figure`: every configuration a run measured, δ against ρ, the measured front numbered
(the page names each number); `order1_figure`: each family alone, accuracy by level;
`order2_figure`: one heat map per family pair, accuracy at each pair of levels, titled with
TestifAI's χ² verdict; `thumbnail`: one input as a small PNG. For a scan's findings
(testnav/report/scan.py): `family_curves_figure` (each family alone in its own parameter, with
intervals), `pair_maps_figure` (pair heat maps with the families' parameters on the axes) and
`front_summary_figure` (accuracy points lost against fidelity, at most a few points numbered).
"""

from __future__ import annotations

import base64
import io
import math

import numpy as np

from ..plotstyle import GREY, RC, TEAL, plt, png_bytes


def data_uri(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def figure_uri(fig) -> str:
    """The figure as a PNG data URI (plotstyle.py's `png_bytes`: the same data, the same bytes)."""
    return data_uri(png_bytes(fig))


def draw_front(ax, df, x: str, y: str, sizes, label: str):
    """Rank > 0 grey, the front (rank 0) joined in teal, its members drawn unless their size is 0 (a
    caller that draws them itself); returns the front sorted along x."""
    rest = df[df["rank"] > 0]
    front = df[df["rank"] == 0].sort_values(x)
    ax.scatter(rest[x], rest[y], s=sizes[0], color=GREY, label="measured", zorder=2)
    ax.plot(front[x], front[y], color=TEAL, lw=1, zorder=3)
    if sizes[1]:
        ax.scatter(front[x], front[y], s=sizes[1], color=TEAL, label=label, zorder=4)
    return front


MAX_LABELS = 10  # numbers written on a front's plot: more pile onto each other


def few(front, x: str, y: str, most: int = MAX_LABELS) -> list:
    """At most `most` index labels of a front worth a number on its plot: its two ends, its knee (farthest
    from the line between them, both axes scaled to their range), then members spread along it."""
    front = front.sort_values(x)
    if len(front) <= most:
        return list(front.index)
    xs, ys = front[x].to_numpy(float), front[y].to_numpy(float)
    xs = (xs - xs.min()) / (np.ptp(xs) or 1)
    ys = (ys - ys.min()) / (np.ptp(ys) or 1)
    d = np.abs((xs[-1] - xs[0]) * (ys[0] - ys) - (xs[0] - xs) * (ys[-1] - ys[0]))
    picks = [0, len(front) - 1, int(np.argmax(d))] + [int(round(v)) for v in np.linspace(0, len(front) - 1, most)]
    return list(dict.fromkeys(front.index[p] for p in picks))[:most]


def front_figure(
    ranked,
    rho_label: str,
    delta_error: float | None = None,
    told=None,
    scale: float = 1.0,
    y_label: str = "degradation δ (accuracy lost)",
) -> str:
    """δ (× `scale`, on the axis `y_label`) against ρ for every measured configuration; the front's
    members numbered 1..m in the order of the ranked list, at most MAX_LABELS of the numbers written
    (the ends, the knee, members spread along it). `delta_error`: δ's resolution (in δ's units before
    `scale`), drawn as ± error bars on the front; `told` (bool per front member, in the ranked list's
    order): the members told apart at it, the others drawn hollow."""
    ranked = ranked.assign(delta=scale * ranked["delta"])
    with plt.rc_context(RC):
        fig, ax = plt.subplots(figsize=(5.2, 3.6))
        members = ranked[ranked["rank"] == 0]
        front = draw_front(ax, ranked, "rho", "delta", (14, 30 if told is None else 0), "measured front")
        if delta_error is not None:
            error = scale * delta_error
            ax.errorbar(
                front["rho"],
                front["delta"],
                yerr=error,
                fmt="none",
                ecolor=TEAL,
                elinewidth=0.8,
                capsize=2,
                alpha=0.6,
                zorder=3,
                label=f"± {error:.3g} (the resolution of δ)",
            )
        if told is not None:
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
        for idx in few(front, "rho", "delta"):
            r = front.loc[idx]
            ax.annotate(
                str(number[idx]),
                (r["rho"], r["delta"]),
                textcoords="offset points",
                xytext=(4, 4),
                fontsize=8,
                color="#083d3e",
            )
        ax.set_xlabel(f"fidelity ρ ({rho_label}; right: closer to the clean input)")
        ax.set_ylabel(y_label)
        ax.legend(loc="best", frameon=False)
        ax.grid(alpha=0.3)
        return figure_uri(fig)


def family_panels(n: int, width: float, height: float):
    """One panel per family, four to a row, sharing the accuracy axis: (figure, the n axes, columns)."""
    cols = min(n, 4)
    rows = math.ceil(n / cols)
    fig, axes = plt.subplots(
        rows, cols, figsize=(width * cols, height * rows), squeeze=False, sharey=True, layout="constrained"
    )
    for ax in axes.ravel()[n:]:
        ax.axis("off")
    return fig, axes.ravel()[:n], cols


def order1_figure(names, level_labels, accuracy, clean: float) -> str:
    """One panel per family: accuracy at levels 0..ℓ−1 with the others at 0. `accuracy[i][k]`
    is family i alone at level k (NaN where unknown)."""
    with plt.rc_context(RC):
        fig, axes, cols = family_panels(len(names), 2.6, 2.4)
        for i, ax in enumerate(axes):
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


def heat_map(ax, grid, fmt: str, scale: float) -> None:
    """Accuracies in [0, 1] as a red-to-green map, each measured cell written (× `scale`, `fmt`)."""
    grid = np.asarray(grid, dtype=float)
    ax.imshow(np.ma.masked_invalid(grid), cmap="RdYlGn", vmin=0, vmax=1, origin="lower")
    for a in range(grid.shape[0]):
        for b in range(grid.shape[1]):
            if np.isfinite(grid[a, b]):
                ax.text(b, a, fmt.format(scale * grid[a, b]), ha="center", va="center", fontsize=6.5)


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
            heat_map(ax, grid, "{:.2f}", 1.0)
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


def family_curves_figure(infos, families, clean: float, clean_low: float, clean_high: float) -> str:
    """One panel per family: accuracy (with its interval) at each tested severity, the x axis in the
    family's own parameter ("σ 0.4") with the severity's place in its table; the clean accuracy
    dashed, its interval shaded. `families`: Findings.families."""
    with plt.rc_context(RC):
        fig, axes, cols = family_panels(len(infos), 2.7, 2.5)
        for i, ax in enumerate(axes):
            info = infos[i]
            df = families[families["family"] == info.name]
            x = np.arange(len(df) + 1)
            acc = np.r_[clean, df["accuracy"].to_numpy(float)]
            low = np.r_[clean_low, df["accuracy_low"].to_numpy(float)]
            high = np.r_[clean_high, df["accuracy_high"].to_numpy(float)]
            ax.axhspan(clean_low, clean_high, color=GREY, alpha=0.25, lw=0)
            ax.axhline(clean, color=GREY, lw=0.8, ls="--")
            yerr = np.clip([acc - low, high - acc], 0, None)  # Wilson's bound at 1 can round to 1 − 1e-16
            ax.errorbar(x, acc, yerr=yerr, marker="o", ms=4, color=TEAL, capsize=2, lw=1.2)
            ticks = ["clean"] + [f"{p}\n(sev. {s})" for p, s in zip(df["parameter"], df["severity"])]
            ax.set_xticks(x, ticks, fontsize=6.5)
            ax.set_title(f"{info.name} (table 1–{info.table_size})", fontsize=8.5)
            ax.set_ylim(-0.02, 1.02)
            ax.grid(alpha=0.3)
            if i % cols == 0:
                ax.set_ylabel("accuracy")
        return figure_uri(fig)


def pair_maps_figure(panels) -> str:
    """One heat map per family pair: `panels` holds (title, row family, row labels, column family,
    column labels, grid), grid[a][b] the accuracy with the row family at its a-th tested level and
    the column family at its b-th (level 0, the identity, included), NaN where not measured."""
    cols = min(len(panels), 3)
    rows = math.ceil(len(panels) / cols)
    with plt.rc_context(RC):
        fig, axes = plt.subplots(rows, cols, figsize=(3.5 * cols, 3.3 * rows), squeeze=False, layout="constrained")
        for k, ax in enumerate(axes.ravel()):
            if k >= len(panels):
                ax.axis("off")
                continue
            title, fi, li, fj, lj, grid = panels[k]
            heat_map(ax, grid, "{:.0f}", 100.0)
            ax.set_xticks(np.arange(len(lj)), ["none" if x == "identity" else x for x in lj], fontsize=6, rotation=30)
            ax.set_yticks(np.arange(len(li)), ["none" if x == "identity" else x for x in li], fontsize=6)
            ax.set_xlabel(fj)
            ax.set_ylabel(fi)
            ax.set_title(title, fontsize=7.5)
        return figure_uri(fig)


def front_summary_figure(points, labelled: dict, x_label: str) -> str:
    """Every measured configuration, accuracy points lost (up) against fidelity (right), the front
    drawn; only the configurations in `labelled` (row position → number) carry a number, so the plot
    stays legible however long the front. `points`: DataFrame with lost_points, fidelity, rank."""
    with plt.rc_context(RC):
        fig, ax = plt.subplots(figsize=(5.4, 3.6))
        draw_front(ax, points, "fidelity", "lost_points", (10, 22), "front")
        for pos, number in labelled.items():
            r = points.loc[pos]
            ax.annotate(
                str(number),
                (r["fidelity"], r["lost_points"]),
                textcoords="offset points",
                xytext=(4, 4),
                fontsize=8,
                color="#083d3e",
                fontweight="bold",
            )
        ax.set_xlabel(x_label)
        ax.set_ylabel("accuracy lost (points)")
        ax.legend(loc="best", frameon=False)
        ax.grid(alpha=0.3)
        return figure_uri(fig)
