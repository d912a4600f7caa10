"""TestifAI's Fig. 11: one input under configurations of equal severity sum, with their quality.

§6 shows two versions of the same image at severity sum 10, a fourth-order one that looks valid
and a third-order one that does not, to argue that a severity sum alone does not say whether an
input is plausible and that the quality score q_σ (KID) does. Here the sum is the middle of the
lattice's range (10 for four families of five levels); for each order present at that sum the
configurations with the lowest and the highest q_σ are shown, labelled with θ, q_σ and r_σ from
`per_test_errors.csv` of `python run.py stage=study`. The images are rebuilt as Figs. 5–6 rebuild
theirs (`examples.perturbed_inputs`: the ground truth's per-prefix draws).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..plotstyle import RC, order_color, save
from .testifai import _dims, _levels, _num


def pick(per_test: pd.DataFrame, total: int | None = None) -> tuple[int, pd.DataFrame]:
    """(severity sum, rows): on the largest tomography, per order at that sum, the configurations
    with the lowest and the highest q_σ (needs tomography, order, t1..tn, q_true, r_true)."""
    label = max(per_test.tomography.unique(), key=_dims)
    d = per_test[per_test.tomography == label].dropna(subset=["q_true"]).copy()
    cols = _levels(d)
    d["severity"] = d[cols].sum(axis=1).astype(int)
    total = int(d.severity.max() // 2) if total is None else int(total)
    at = d[d.severity == total]
    if at.empty:
        raise ValueError(f"no configuration with severity sum {total}")
    rows = []
    for _, g in at.groupby("order", sort=True):
        g = g.sort_values(["q_true", *cols], kind="stable")
        rows += [g.iloc[0]] + ([g.iloc[-1]] if len(g) > 1 else [])
    return total, pd.DataFrame(rows).reset_index(drop=True)


def plot_severity_examples(items: list[dict], path, title: str, quality_name: str = "KID") -> Path:
    """items: theta, order, q, r, image (C×H×W or H×W in [0, 1]); one row, ordered as given."""
    from matplotlib import rc_context
    from matplotlib.figure import Figure

    with rc_context(RC):
        fig = Figure(figsize=(1.6 * len(items) + 0.4, 2.5), layout="tight")
        axes = np.atleast_1d(fig.subplots(1, len(items)))
        for ax, it in zip(axes, items):
            img = np.asarray(it["image"], dtype=float)
            if img.ndim == 3 and img.shape[0] in (1, 3):
                img = np.moveaxis(img, 0, -1)
            if img.ndim == 3 and img.shape[-1] == 1:
                img = img[..., 0]
            ax.imshow(np.clip(img, 0, 1), cmap="gray" if img.ndim == 2 else None, vmin=0, vmax=1)
            ax.set_xticks([])
            ax.set_yticks([])
            for side in ax.spines.values():
                side.set_visible(True)
                side.set_color(order_color(int(it["order"])))
                side.set_linewidth(2)
            theta = ",".join(str(int(t)) for t in it["theta"])
            ax.set_title(
                f"θ=({theta}) Θ{int(it['order'])}\n{quality_name} {_num(it['q'])}\nr_σ {it['r']:.3f}", fontsize=7
            )
        fig.suptitle(title, fontsize=9)
        return save(fig, path)


def draw(results_dir, figures_dir, cache_dir=None, quality_name: str = "KID") -> list[tuple[Path, str]]:
    """Fig. 11 for every benchmark whose study table has quality columns and whose images can be
    rebuilt here; returns (path, sentence) per figure and prints why one is skipped."""
    from .examples import any_benchmark, perturbed_inputs

    root = Path(results_dir) / "tables" / "testifai"
    cache_dir = Path(cache_dir) if cache_dir else Path(results_dir) / "cache"
    out = []
    for bdir in sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []:
        csv = bdir / "per_test_errors.csv"
        if not csv.exists() or "q_true" not in pd.read_csv(csv, nrows=0).columns:
            print(f"testifai figures: skipped {bdir.name} severity_examples (no quality columns in {csv.name})")
            continue
        try:
            total, rows = pick(pd.read_csv(csv))
            benchmark, _ = any_benchmark(bdir.name, results_dir)
            if getattr(benchmark, "modality", "") != "image":
                raise ValueError(f"{bdir.name} is not an image benchmark")
            cols = _levels(rows)
            thetas = [tuple(int(v) for v in r) for r in rows[cols].to_numpy()]
            if len(cols) != len(benchmark.families):
                raise ValueError(
                    f"{len(cols)} levels in the study, {len(benchmark.families)} families in the benchmark"
                )
            images = perturbed_inputs(benchmark, benchmark.load(cache_dir), thetas)
        except Exception as e:  # no data or model here, or a study of another lattice
            print(f"testifai figures: skipped {bdir.name} severity_examples ({type(e).__name__}: {str(e)[:120]})")
            continue
        items = [
            {"theta": th, "order": int(r.order), "q": float(r.q_true), "r": float(r.r_true), "image": images[th]}
            for th, r in zip(thetas, rows.itertuples())
        ]
        path = plot_severity_examples(
            items,
            Path(figures_dir) / f"testifai_{bdir.name}_severity_examples.png",
            f"{bdir.name}: test input #0 at severity sum {total} (lowest and highest {quality_name} per order)",
            quality_name,
        )
        lo, hi = rows.q_true.idxmin(), rows.q_true.idxmax()
        said = [
            f"θ = ({','.join(map(str, th))}), order {int(r.order)}, r_σ {r.r_true:.3f}"
            for th, r in zip(thetas, rows.itertuples())
        ]
        out.append(
            (
                path,
                f"{bdir.name}: at severity sum {total}, {quality_name} runs from {_num(rows.q_true[lo])} "
                f"({said[lo]}) to {_num(rows.q_true[hi])} ({said[hi]}) over the {len(rows)} configurations shown "
                "(Fig. 11): equal severity sums, unequal quality.",
            )
        )
    return out
