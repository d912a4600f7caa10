"""Table 2 (AUC-Recall@P* per method × benchmark–metric) and Table 3 (P* by order).

Why here and not in the plots: the bold/underline rule is the part of Table 2 a reader
trusts, so it is one small function (`marks`) with its own tests.

Marking rule (Table 2, "bold = best, underline = second per column"): cells are compared
at the precision shown (3 decimals), so what looks equal is treated as equal. Every cell
equal to the column's best is bold; every cell equal to the next distinct value is
underlined. A column with one distinct value has only bold cells; empty cells (a method
with no runs) are never marked.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from .loader import BASELINES, METHODS, fidelity_label, fidelity_rank, method_label

DECIMALS = 3


def auc_table(runs: pd.DataFrame, searches=BASELINES) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(mean, sd) of AUC-Recall over seeds: rows = methods (paper order), columns = 'benchmark · fidelity'."""
    if runs.empty:
        return pd.DataFrame(), pd.DataFrame()
    r = runs[runs["search"].isin(searches)]
    g = r.groupby(["search", "benchmark", "fidelity"])["auc_recall"]
    mean, sd = g.mean().unstack(["benchmark", "fidelity"]), g.std().unstack(["benchmark", "fidelity"])
    cols = sorted(mean.columns, key=lambda c: (c[0], fidelity_rank(c[1]), c[1]))
    rows = [s for s in searches if s in mean.index]
    mean, sd = mean.reindex(index=rows, columns=cols), sd.reindex(index=rows, columns=cols)
    names = [f"{b} · {fidelity_label(f)}" for b, f in cols]
    mean.columns = sd.columns = names
    mean.index = sd.index = [method_label(s) for s in rows]
    return mean, sd


def marks(table: pd.DataFrame, decimals: int = DECIMALS) -> pd.DataFrame:
    """'best' / 'second' / '' for every cell, per column (see the module docstring for ties)."""
    out = pd.DataFrame("", index=table.index, columns=table.columns)
    for col in table.columns:
        v = table[col].round(decimals)
        distinct = sorted(v.dropna().unique(), reverse=True)
        if distinct:
            out.loc[v == distinct[0], col] = "best"
        if len(distinct) > 1:
            out.loc[v == distinct[1], col] = "second"
    return out


def _cells(table: pd.DataFrame, mk: pd.DataFrame, fmt) -> list[list[str]]:
    rows = []
    for idx in table.index:
        cells = []
        for col in table.columns:
            v = table.at[idx, col]
            cells.append("–" if pd.isna(v) else fmt(f"{v:.{DECIMALS}f}", mk.at[idx, col]))
        rows.append([str(idx), *cells])
    return rows


def to_markdown(table: pd.DataFrame, first: str = "Method") -> str:
    mk = marks(table)
    fmt = lambda s, m: f"**{s}**" if m == "best" else (f"<u>{s}</u>" if m == "second" else s)  # noqa: E731
    head = [first, *map(str, table.columns)]
    lines = ["| " + " | ".join(head) + " |", "| " + " | ".join(["---"] + ["---:"] * len(table.columns)) + " |"]
    lines += ["| " + " | ".join(r) + " |" for r in _cells(table, mk, fmt)]
    return "\n".join(lines) + "\n"


def latex_escape(s: str) -> str:
    return (
        s.replace("\\", r"\textbackslash{}")
        .replace("_", r"\_")
        .replace("&", r"\&")
        .replace("%", r"\%")
        .replace("#", r"\#")
        .replace("δ", r"$\delta$")
        .replace("ρ", r"$\rho$")
        .replace("·", r"$\cdot$")
        .replace("Θ", r"$\Theta$")
        .replace("|P*|", r"$|\mathcal{P}^*|$")
    )


def to_latex(table: pd.DataFrame, caption: str = "", first: str = "Method", label: str = "") -> str:
    mk = marks(table)
    fmt = lambda s, m: rf"\textbf{{{s}}}" if m == "best" else (rf"\underline{{{s}}}" if m == "second" else s)  # noqa: E731
    spec = "l" + "r" * len(table.columns)
    lines = [
        r"\begin{table}[t]",
        r"\centering",
        rf"\begin{{tabular}}{{{spec}}}",
        r"\toprule",
        " & ".join(latex_escape(str(c)) for c in [first, *table.columns]) + r" \\",
        r"\midrule",
    ]
    lines += [" & ".join([latex_escape(r[0]), *r[1:]]) + r" \\" for r in _cells(table, mk, fmt)]
    lines += [r"\bottomrule", r"\end{tabular}"]
    if caption:
        lines.append(rf"\caption{{{latex_escape(caption)}}}")
    if label:
        lines.append(rf"\label{{{label}}}")
    lines.append(r"\end{table}")
    return "\n".join(lines) + "\n"


def composition_table(truths: dict) -> pd.DataFrame:
    """Table 3: per benchmark–fidelity, |P*| and how many of its members have order 1..n."""
    rows = []
    for (b, f), gt in sorted(truths.items(), key=lambda kv: (kv[0][0], fidelity_rank(kv[0][1]), kv[0][1])):
        counts = gt.order_counts()
        row = {"benchmark": b, "metric pair": f"(δ, ρ {fidelity_label(f)})", "|P*|": sum(counts)}
        row.update({f"Θ{k}": c for k, c in enumerate(counts, start=1)})
        rows.append(row)
    return pd.DataFrame(rows)


def composition_markdown(t: pd.DataFrame) -> str:
    cols = list(t.columns)
    lines = [
        "| " + " | ".join(c.replace("|", "\\|") for c in cols) + " |",
        "| " + " | ".join(["---", "---"] + ["---:"] * (len(cols) - 2)) + " |",
    ]
    for r in t.itertuples(index=False):
        lines.append("| " + " | ".join(str(v) for v in r) + " |")
    return "\n".join(lines) + "\n"


def composition_latex(t: pd.DataFrame) -> str:
    cols = list(t.columns)
    lines = [
        r"\begin{table}[t]",
        r"\centering",
        rf"\begin{{tabular}}{{ll{'r' * (len(cols) - 2)}}}",
        r"\toprule",
        " & ".join(latex_escape(c) for c in cols) + r" \\",
        r"\midrule",
    ]
    for r in t.itertuples(index=False):
        lines.append(" & ".join(latex_escape(str(v)) for v in r) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", r"\caption{Pareto-front composition per metric pair.}", r"\end{table}"]
    return "\n".join(lines) + "\n"


def write_table2(runs: pd.DataFrame, out_dir) -> dict:
    """table2.{md,tex,csv} (the paper's four methods and TomoNav) and table2_all.{md,csv} (every search found in
    the runs: the paper's in paper order, then any other by name). Returns paths."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {}
    mean, sd = auc_table(runs, BASELINES)
    if mean.empty:
        return paths
    caption = (
        "AUC-Recall@P* for TestNav and search baselines (mean over seeds). Bold: best, underline: second per column."
    )
    (out_dir / "table2.md").write_text(to_markdown(mean))
    (out_dir / "table2.tex").write_text(to_latex(mean, caption, label="tab:auc"))
    both = mean.round(4).astype(str) + " ± " + sd.round(4).astype(str)
    both.rename_axis("method").to_csv(out_dir / "table2.csv")
    paths.update(md=out_dir / "table2.md", tex=out_dir / "table2.tex", csv=out_dir / "table2.csv")
    mean_all, sd_all = auc_table(runs, METHODS + sorted(set(runs["search"]) - set(METHODS)))  # a new search too
    (out_dir / "table2_all.md").write_text(to_markdown(mean_all))
    (mean_all.round(4).astype(str) + " ± " + sd_all.round(4).astype(str)).rename_axis("method").to_csv(
        out_dir / "table2_all.csv"
    )
    paths.update(all_md=out_dir / "table2_all.md")
    return paths


def write_table3(truths: dict, out_dir) -> dict:
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    t = composition_table(truths)
    if t.empty:
        return {}
    (out_dir / "table3.md").write_text(composition_markdown(t))
    (out_dir / "table3.tex").write_text(composition_latex(t))
    t.to_csv(out_dir / "table3.csv", index=False)
    return {"md": out_dir / "table3.md", "tex": out_dir / "table3.tex", "csv": out_dir / "table3.csv"}
