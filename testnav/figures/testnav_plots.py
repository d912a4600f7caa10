"""The TestNav paper's figures, each drawn from a small frame (no file discovery here).

Why separate from the loader: a plotting function takes exactly the columns it shows, so
the tests can feed it a handful of constructed rows and the same function draws the
paper-sized data.

* `plot_pareto`   Fig. 1: all configurations in grey, P* highlighted, |P*| and order counts;
* `plot_recall`   Figs. 2–4: Recall@P* against unique configurations and against budget,
                  mean ± 1 sd over seeds, NSGA-II's full-recall line, end markers;
* `plot_examples` Figs. 5–6: one test input under every Pareto-optimal θ, grouped by order;
* `plot_voxels`   Figs. 7–8: P* in the 4D lattice, one 3D panel per θ4 level.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from .. import searches as search_registry
from ..plotstyle import GREY, TEAL, order_color, plt, save, styled
from .loader import fidelity_label, method_label


def order_summary(counts) -> str:
    """'(9, 12, 4, 2)' for |P* ∩ Θ1..Θn|."""
    return "(" + ", ".join(str(int(c)) for c in counts) + ")"


@styled
def plot_pareto(points: pd.DataFrame, path, title: str = "") -> object:
    """Fig. 1. `points`: fidelity, delta, rho, in_pstar, order (one row per θ, any number of fidelities).

    One panel per fidelity; x = normalised fidelity ρ, y = normalised degradation δ.
    """
    fids = list(dict.fromkeys(points["fidelity"]))
    fig, axes = plt.subplots(1, len(fids), figsize=(3.3 * len(fids), 3.0), squeeze=False)
    n = int(points.filter(regex=r"^t\d+$").shape[1]) or int(points["order"].max())
    for ax, fid in zip(axes[0], fids):
        p = points[points["fidelity"] == fid]
        front = p[p["in_pstar"].astype(bool)].sort_values("rho")
        ax.scatter(p["rho"], p["delta"], s=6, c=GREY, linewidths=0, label="Θ", rasterized=False)
        ax.step(front["rho"], front["delta"], where="post", color=TEAL, lw=0.8, alpha=0.6)
        ax.scatter(front["rho"], front["delta"], s=16, c=TEAL, edgecolors="black", linewidths=0.3, label="P*", zorder=3)
        counts = [int((front["order"] == k).sum()) for k in range(1, n + 1)]
        ax.set_title(f"{fidelity_label(fid)}: |P*| = {len(front)}  Θ1–Θ{n} {order_summary(counts)}")
        ax.set_xlabel(f"fidelity ρ ({fidelity_label(fid)}, normalised)")
        ax.set_ylabel("degradation δ (normalised)")
        ax.set_xlim(-0.03, 1.03)
        ax.set_ylim(-0.03, 1.03)
    axes[0][0].legend(loc="upper right", frameon=False)
    if title:
        fig.suptitle(title, y=1.02)
    fig.tight_layout()
    return save(fig, path)


def full_recall_x(curve: pd.DataFrame) -> int | None:
    """First x at which the mean curve is 1, i.e. every seed has recovered all of P*."""
    hit = curve.loc[curve["mean"] >= 1.0 - 1e-12, "x"]
    return int(hit.iloc[0]) if len(hit) else None


def best_point(curve: pd.DataFrame) -> tuple[int, float]:
    """(x, recall) where the mean curve first reaches its highest value."""
    m = curve["mean"].to_numpy()
    i = int(np.flatnonzero(m >= m.max() - 1e-12)[0])
    return int(curve["x"].iloc[i]), float(m[i])


AXIS_LABELS = {
    "unique": "unique configurations u",
    "budget": "budget (proposals)",
    "inferences": "model inferences (early stopping)",
}


@styled
def plot_recall(curves: pd.DataFrame, path, searches, title: str = "", reference: str = "nsga2") -> object:
    """Figs. 2–4. `curves`: fidelity, search, axis ('unique' | 'budget'), x, mean, sd.

    Columns are fidelities, rows the two x-axes; one line per search in `searches` that has
    data, a ± 1 sd band, a dotted vertical line where `reference` reaches full recall, and a
    square where each method first reaches its best recall.
    """
    fids = list(dict.fromkeys(curves["fidelity"]))
    axes_kinds = [a for a in ("unique", "budget", "inferences") if (curves["axis"] == a).any()]
    fig, axes = plt.subplots(
        len(axes_kinds), len(fids), figsize=(3.6 * len(fids), 2.6 * len(axes_kinds)), squeeze=False
    )
    shown = []
    for j, fid in enumerate(fids):
        for i, kind in enumerate(axes_kinds):
            ax = axes[i][j]
            sub = curves[(curves["fidelity"] == fid) & (curves["axis"] == kind)]
            for s in searches:
                c = sub[sub["search"] == s].sort_values("x")
                if c.empty:
                    continue
                color, ls = search_registry.info(s).style.color, search_registry.info(s).style.ls
                x, m, sd = c["x"].to_numpy(), c["mean"].to_numpy(), c["sd"].to_numpy()
                ax.fill_between(x, np.clip(m - sd, 0, 1), np.clip(m + sd, 0, 1), color=color, alpha=0.15, lw=0)
                ax.plot(x, m, color=color, ls=ls, lw=1.3 if s == reference else 1.0)
                bx, by = best_point(c)
                ax.plot([bx], [by], marker="s", ms=4, color=color, mec="black", mew=0.3, zorder=4)
                if s not in shown:
                    shown.append(s)
                if s == reference:
                    fx = full_recall_x(c)
                    if fx is not None:
                        ax.axvline(fx, color=color, ls=":", lw=0.9)
                        ax.annotate(
                            f"{fx:,}", (fx, 0.03), xytext=(3, 0), textcoords="offset points", fontsize=7, color=color
                        )
            ax.set_ylim(-0.02, 1.04)
            ax.set_xlim(left=0)
            ax.set_xlabel(AXIS_LABELS[kind])
            if j == 0:
                ax.set_ylabel("Recall@P*")
            if i == 0:
                seeds = int(sub["seeds"].max()) if "seeds" in sub and len(sub) else 0
                ax.set_title(f"{fidelity_label(fid)}" + (f" ({seeds} seeds)" if seeds else ""))
    handles = [
        Line2D(
            [],
            [],
            color=search_registry.info(s).style.color,
            ls=search_registry.info(s).style.ls,
            label=method_label(s),
        )
        for s in shown
    ]
    fig.legend(
        handles=handles,
        loc="lower center",
        ncol=min(len(handles), 4),
        frameon=False,
        bbox_to_anchor=(0.5, -0.02 - 0.04 * math.ceil(len(handles) / 4)),
    )
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return save(fig, path)


@styled
def plot_examples(items: list[dict], path, title: str = "", fidelity: str = "") -> object:
    """Figs. 5–6. `items`: dicts with theta (tuple), order, delta, rho, image (H×W or H×W×C in [0, 1]).

    One block of rows per order (Θ1 first), images sorted by δ, each labelled θ, δ, ρ.
    """
    orders = sorted({int(it["order"]) for it in items})
    ncols = max(1, min(8, max(sum(int(it["order"]) == k for it in items) for k in orders)))
    rows = []  # (order, [items]) per row
    for k in orders:
        group = sorted((it for it in items if int(it["order"]) == k), key=lambda it: (-it["delta"], it["theta"]))
        for start in range(0, len(group), ncols):
            rows.append((k, group[start : start + ncols]))
    fig, axes = plt.subplots(len(rows), ncols, figsize=(1.25 * ncols, 1.55 * len(rows)), squeeze=False)
    for r, (k, group) in enumerate(rows):
        for c in range(ncols):
            ax = axes[r][c]
            ax.set_xticks([])
            ax.set_yticks([])
            if c >= len(group):
                ax.axis("off")
                continue
            it = group[c]
            img = np.asarray(it["image"], dtype=float)
            if img.ndim == 3 and img.shape[0] in (1, 3) and img.shape[-1] not in (1, 3):
                img = np.moveaxis(img, 0, -1)
            if img.ndim == 3 and img.shape[-1] == 1:
                img = img[..., 0]
            ax.imshow(
                np.clip(img, 0, 1), cmap="gray" if img.ndim == 2 else None, vmin=0, vmax=1, interpolation="nearest"
            )
            for side in ax.spines.values():
                side.set_visible(True)
                side.set_color(order_color(k))
                side.set_linewidth(1.5)
            theta = ",".join(str(int(t)) for t in it["theta"])
            ax.set_title(f"θ=({theta})\nδ={it['delta']:.2f} ρ={it['rho']:.2f}", fontsize=6.5, pad=2)
        if group:
            axes[r][0].set_ylabel(f"Θ{k}", color=order_color(k), fontsize=9, rotation=0, labelpad=14, va="center")
    if title:
        fig.suptitle(title, fontsize=9)
    fig.tight_layout(h_pad=0.4, w_pad=0.3)
    return save(fig, path)


@styled
def plot_voxels(points: pd.DataFrame, path, title: str = "", levels: int | None = None) -> object:
    """Figs. 7–8. `points`: t1..t4, order, in_pstar (P* rows suffice).

    One 3D panel (θ1, θ2, θ3) per level of θ4, P* voxels coloured by order.
    With n = 3 a single panel is drawn.
    """
    tcols = sorted([c for c in points.columns if c[:1] == "t" and c[1:].isdigit()], key=lambda c: int(c[1:]))
    n = len(tcols)
    if n not in (3, 4):
        raise ValueError(f"voxel plots need 3 or 4 families, got {n}")
    front = points[points["in_pstar"].astype(bool)]
    ell = int(levels or (points[tcols].to_numpy().max() + 1))
    slices = list(range(ell)) if n == 4 else [None]
    ncols = min(len(slices), 3)
    nrows = math.ceil(len(slices) / ncols)
    fig = plt.figure(figsize=(3.0 * ncols, 2.6 * nrows + 0.6))
    for i, v in enumerate(slices):
        ax = fig.add_subplot(nrows, ncols, i + 1, projection="3d")
        sub = front if v is None else front[front[tcols[3]] == v]
        filled = np.zeros((ell, ell, ell), dtype=bool)
        colors = np.empty((ell, ell, ell), dtype=object)
        for _, r in sub.iterrows():
            a, b, c = int(r[tcols[0]]), int(r[tcols[1]]), int(r[tcols[2]])
            filled[a, b, c] = True
            colors[a, b, c] = order_color(int(r["order"]))
        if filled.any():
            ax.voxels(filled, facecolors=colors, edgecolor="#333333", linewidth=0.3, alpha=0.9)
        ax.set_xlim(0, ell)
        ax.set_ylim(0, ell)
        ax.set_zlim(0, ell)
        ticks = np.arange(ell) + 0.5
        for setter in (ax.set_xticks, ax.set_yticks, ax.set_zticks):
            setter(ticks)
        ax.set_xticklabels(range(ell), fontsize=6)
        ax.set_yticklabels(range(ell), fontsize=6)
        ax.set_zticklabels(range(ell), fontsize=6)
        ax.set_xlabel("θ1", fontsize=7, labelpad=-7)
        ax.set_ylabel("θ2", fontsize=7, labelpad=-7)
        ax.set_zlabel("θ3", fontsize=7, labelpad=-9)
        ax.set_box_aspect(None, zoom=0.85)
        ax.tick_params(pad=-3)
        ax.view_init(elev=22, azim=-55)
        head = "" if v is None else f"θ4 = {v}   "
        ax.set_title(f"{head}|P*| = {len(sub)}", fontsize=8, pad=0)
    present = sorted(front["order"].astype(int).unique())
    handles = [Patch(facecolor=order_color(k), edgecolor="#333333", label=f"Θ{k} ({k} active)") for k in present]
    fig.legend(handles=handles, loc="lower center", ncol=max(1, len(handles)), frameon=False)
    if title:
        fig.suptitle(title, fontsize=9)
    fig.subplots_adjust(left=0.02, right=0.96, top=0.88, bottom=0.08, wspace=0.12, hspace=0.05)
    return save(fig, path)


@styled
def plot_certificate(curves: pd.DataFrame, path, title: str = "") -> object:
    """Recall@P* (solid) and the stopping certificate p_complete (dashed) against unique
    configurations, one panel per fidelity; columns fidelity, search, unique, recall, p_complete."""
    fids = list(dict.fromkeys(curves["fidelity"]))
    fig, axes = plt.subplots(1, len(fids), figsize=(5.2 * len(fids), 3.6), squeeze=False)
    for ax, f in zip(axes[0], fids):
        for s, g in curves[curves["fidelity"] == f].groupby("search", sort=False):
            color = search_registry.info(s).style.color
            ax.plot(g["unique"], g["recall"], color=color, label=f"{method_label(s)} recall")
            ax.plot(g["unique"], g["p_complete"], color=color, ls="--", label=f"{method_label(s)} p_complete")
        ax.axhline(0.95, color=GREY, lw=0.8, ls=":")
        ax.set(
            xlabel="unique configurations", ylabel="Recall@P* / p_complete", ylim=(-0.02, 1.02), title=fidelity_label(f)
        )
    axes[0][0].legend(fontsize=7, loc="lower right")
    if title:
        fig.suptitle(title)
    return save(fig, path)
