"""What a report shows, gathered from a run, a session and a tomography before any HTML is written.

`Facts` is plain data: what was tested, the run's summary and ranked list, the accuracy of the
low-order configurations (each family alone, each pair) with TestifAI's χ² verdict per pair,
configurations shown input by input, the worst predicted configurations of a tomography, and
query answers. `for_run` gathers them for a search (live or replayed), `for_tomography` for
TestifAI's stages; testnav/report/page.py renders them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..core.naming import COLUMN, config_name, own_name, with_names
from ..groundtruth.inputs import Inputs
from ..tomography.independence import chi2_pairs

MAX_SHOWN = 8  # front members shown input by input (the configurations a person names come on top)
MAX_LOW_ORDER = 400  # configurations of order ≤ 2 a report may evaluate on a live model; beyond, order 1 only


@dataclass
class Shown:
    """One configuration, input by input."""

    name: str
    why: str
    theta: tuple
    accuracy: float
    clean_accuracy: float
    flipped: int
    inputs: int
    examples: pd.DataFrame
    per_class: pd.DataFrame
    delta: float | None = None
    rho: float | None = None


@dataclass
class LowOrder:
    """The accuracy of the configurations of order ≤ 2 (lattice index → accuracy), and where it comes from."""

    accuracy: dict = field(default_factory=dict)
    note: str = ""


@dataclass
class Facts:
    title: str
    tested: dict
    families: list  # [(name, [label of level 0..ℓ−1])]
    levels: int
    text: bool = False
    summary: dict | None = None
    ranked: pd.DataFrame | None = None
    rho_label: str = "ρ"
    absolute: bool = (
        False  # ranked δ is the accuracy lost (a share of inputs) and ρ the metric's raw value; else min–max normalised
    )
    low_order: LowOrder = field(default_factory=LowOrder)  # orders 0..2: accuracy and its source
    pairs: pd.DataFrame | None = None  # χ² per family pair (family_i, family_j named)
    shown: list = field(default_factory=list)
    predicted: pd.DataFrame | None = None  # a tomography's worst predicted configurations
    queries: list = field(default_factory=list)
    notes: list = field(default_factory=list)

    @property
    def names(self) -> list[str]:
        return [name for name, _ in self.families]


def tested(benchmark, inputs: Inputs | None, fidelity: str | None, summary: dict | None = None) -> dict:
    """What was tested, in the words of the report's first section."""
    out = {"benchmark": benchmark.name, "fidelity": fidelity, "modality": getattr(benchmark, "modality", "")}
    if inputs is not None:
        model = inputs.loaded.model
        net = getattr(model, "net", model)
        out["model"] = getattr(benchmark, "model_name", None) or own_name(model)
        params = getattr(net, "parameters", None)
        out["parameters"] = sum(p.numel() for p in params()) if callable(params) else None
        labels = inputs.labels
        out["inputs"] = int(len(labels))
        out["classes"] = int(len(np.unique(labels)))
        out["clean_accuracy"] = float((inputs.clean_predictions == labels).mean())
        out["device"] = str(inputs.session.device)
    elif summary and summary.get("psi_clean") is not None:
        out["clean_accuracy"] = float(summary["psi_clean"])
    return out


def family_table(families, levels: int) -> list:
    return [(f.name, [f.level_label(k) for k in range(levels)]) for f in families]


def low_order_indices(lattice, max_order: int = 2) -> np.ndarray:
    return np.flatnonzero(lattice.orders <= max_order)


def named_pairs(pairs: pd.DataFrame, names) -> pd.DataFrame:
    if not len(pairs) or not pd.api.types.is_integer_dtype(pairs["family_i"]):
        return pairs  # named already
    return pairs.assign(family_i=[names[i] for i in pairs.family_i], family_j=[names[j] for j in pairs.family_j])


def pairs_from(lattice, outcomes: dict, names) -> pd.DataFrame | None:
    """TestifAI's independence test per family pair on fully measured tests (per-input outcomes)."""
    if lattice.n < 2 or 0 not in outcomes or not any(lattice.order_of(i) == 2 for i in outcomes):
        return None
    return named_pairs(chi2_pairs(lattice, outcomes), names)


def table_outcomes(table_path, lattice, indices) -> dict | None:
    """Per-input outcomes of the configurations `indices` read from a ground-truth table's `correct`."""
    if not table_path or not Path(table_path).exists():
        return None
    df = pd.read_parquet(table_path, columns=["correct"]) if str(table_path).endswith(".parquet") else None
    if df is None or len(df) != lattice.size:
        return None
    return {int(i): np.asarray(df["correct"].iloc[int(i)], bool) for i in indices}


def live_outcomes(session, fidelity: str, indices) -> tuple[dict, int]:
    """Per-input outcomes of `indices`: what the session's live searches measured, the rest predicted
    now (outcomes only: no fidelity metric or signal is computed for them); and how many the latter."""
    oracle = session.live_oracles.get(fidelity)
    known = oracle.outcomes if oracle is not None else {}
    inputs, lattice = session.inputs, session.benchmark.lattice
    out, extra = {}, 0
    for i in sorted(int(i) for i in indices):  # lattice order: the walker shares prefixes
        if i in known:
            out[i] = np.asarray(known[i], bool)
        else:
            x = inputs.perturbed(lattice.theta(i))
            out[i] = np.asarray(inputs.predictions(x) == inputs.labels, bool)
            extra += 1
    return out, extra


def show(inputs: Inputs, families, theta, why: str, k: int, delta=None, rho=None) -> Shown:
    out = inputs.outcomes(theta)
    return Shown(
        name=config_name(theta, families),
        why=why,
        theta=tuple(int(t) for t in theta),
        accuracy=float(out["correct"].mean()),
        clean_accuracy=float(out["clean_correct"].mean()),
        flipped=int(out["flipped"].sum()),
        inputs=len(out),
        examples=inputs.examples(theta, k, outcomes=out),
        per_class=inputs.per_class(out),
        delta=delta,
        rho=rho,
    )


def shown_configurations(facts: Facts, inputs, families, lattice, front, configs, k) -> None:
    """The named configurations and the front's members (up to MAX_SHOWN, the clean θ left out),
    perturbed in lattice order (configurations that share a prefix share its perturbation) and
    shown in that order of mention."""
    wanted = {}
    for theta, why in [(tuple(c), "named") for c in configs] + front:
        if any(theta):
            wanted.setdefault(theta, why)
    values = {}
    if facts.ranked is not None:
        cols = facts.ranked[level_cols(lattice.n)].to_numpy(np.int64)
        for row, d, r in zip(cols, facts.ranked["delta"], facts.ranked["rho"]):
            values.setdefault(tuple(int(v) for v in row), (float(d), float(r)))
    shown = {
        theta: show(inputs, families, theta, wanted[theta], k, *values.get(theta, (None, None)))
        for theta in sorted(wanted)
    }
    facts.shown.extend(shown[theta] for theta in wanted)


def level_cols(n: int) -> list[str]:
    return [f"t{i + 1}" for i in range(n)]


def front_members(ranked: pd.DataFrame, n: int) -> list:
    front = ranked[ranked["rank"] == 0]
    thetas = [tuple(int(v) for v in row) for row in front[level_cols(n)].to_numpy()]
    members = [t for t in thetas if any(t)]
    return [(t, f"front member {thetas.index(t) + 1}") for t in members[:MAX_SHOWN]]


def for_run(run, benchmark, session, configs, k: int, queries=()) -> Facts:
    """The facts of one search run: `benchmark` and `session` (opened) give the inputs behind the
    numbers; without them (a replay on an external table) the report has the run alone."""
    s = run.summary
    fidelity = s.get("fidelity")
    if benchmark is None:
        n = len(level_cols_of(run.ranked))
        facts = Facts(
            title=f"{s.get('search')} on {s.get('benchmark')}",
            tested=tested_without_benchmark(s),
            families=[(f"t{i + 1}", []) for i in range(n)],
            levels=int(round(s.get("space_size", 1) ** (1 / max(n, 1)))),
            summary=s,
            ranked=run.ranked,
            rho_label=fidelity or "ρ",
        )
        facts.notes.append("this run replayed an external table: there are no inputs or model to show")
        facts.queries = list(queries)
        return facts
    lattice, families = benchmark.lattice, benchmark.families
    inputs = session.inputs if session is not None and session.readable else None
    facts = Facts(
        title=f"{s.get('search')} on {benchmark.name}",
        tested=tested(benchmark, inputs, fidelity, s),
        families=family_table(families, lattice.levels),
        levels=lattice.levels,
        text=bool(inputs and inputs.text),
        summary=s,
        ranked=run.ranked if COLUMN in run.ranked else with_names(run.ranked, families),
        rho_label=fidelity or "ρ",
        queries=list(queries),
    )
    facts.ranked, facts.absolute = in_units(facts.ranked, s, lattice, fidelity, benchmark.metrics)
    low = low_order_indices(lattice)
    outcomes = table_outcomes(s.get("table"), lattice, low)
    if outcomes is not None:
        facts.low_order.note = "from the ground truth (every input of D under each configuration)"
    elif session is not None and s.get("live"):
        if len(low) > MAX_LOW_ORDER:
            low = low_order_indices(lattice, 1)
        outcomes, extra = live_outcomes(session, fidelity, low)
        facts.low_order.note = "measured on every input of D" + (
            f"; {extra} of these configurations were evaluated for this report, beyond the search" if extra else ""
        )
    if outcomes:
        facts.low_order.accuracy = {i: float(np.mean(y)) for i, y in outcomes.items()}
        facts.pairs = pairs_from(lattice, outcomes, [f.name for f in families])
    if inputs is None:
        facts.notes.append(f"benchmark {benchmark.name}: inputs are shown for image and text classifiers only")
        return facts
    shown_configurations(facts, inputs, families, lattice, front_members(facts.ranked, lattice.n), configs, k)
    return facts


def in_units(ranked: pd.DataFrame, summary: dict, lattice, fidelity, metrics) -> tuple[pd.DataFrame, bool]:
    """The ranked list in the units a person reads: δ the absolute accuracy lost and ρ the fidelity
    metric's own value, from a live run's values (absolute already; ρ carries the metric's sign) or
    from the ground truth a replay read (its `delta` and raw metric column); the run's own trace and
    ranked.csv keep their min–max normalised values. Unchanged (False) where neither is at hand."""
    from ..fidelity import sign

    if not fidelity or fidelity not in (metrics or {}):
        return ranked, False
    ranked = ranked.assign(delta_trace=ranked["delta"], rho_trace=ranked["rho"])  # the certificate's units
    if summary.get("live"):
        return ranked.assign(rho=sign(fidelity, metrics) * ranked["rho"]), True
    path = summary.get("table")
    if not path or not str(path).endswith(".parquet") or not Path(path).exists():
        return ranked, False
    df = pd.read_parquet(path, columns=["delta", fidelity])
    if len(df) != lattice.size:
        return ranked, False
    idx = np.asarray(lattice.index(ranked[level_cols(lattice.n)].to_numpy(np.int64)), np.int64)
    return ranked.assign(delta=df["delta"].to_numpy()[idx], rho=df[fidelity].to_numpy()[idx]), True


def level_cols_of(df: pd.DataFrame) -> list[str]:
    from ..core.naming import level_columns

    return level_columns(df)


def tested_without_benchmark(summary: dict) -> dict:
    return {"benchmark": summary.get("benchmark"), "fidelity": summary.get("fidelity"), "table": summary.get("table")}


def for_tomography(tomo, benchmark, session, configs, k: int, queries=(), source: str = "") -> Facts:
    """The facts of a tomography (stage=tomography or query, Tester.tomography): the measured
    low-order tests, the χ² verdicts, the worst predicted configurations, the query answers."""
    lattice, families = benchmark.lattice, benchmark.families
    inputs = session.inputs if session is not None and session.readable else None
    t = tomo.table
    facts = Facts(
        title=f"TestifAI tomography of {benchmark.name}",
        tested=tested(benchmark, inputs, None),
        families=family_table(families, lattice.levels),
        levels=lattice.levels,
        text=bool(inputs and inputs.text),
        queries=list(queries),
    )
    measured = t[t["measured"] & (t["order"] <= 2)]
    facts.low_order.accuracy = {int(i): float(r) for i, r in zip(measured.index, measured["r_measured"])}
    low, high = (int(measured["n"].min()), int(measured["n"].max())) if len(measured) else (0, 0)
    facts.low_order.note = (
        f"measured {source + ' ' if source else ''}with TestifAI's early stopping "
        f"({low if low == high else f'{low}–{high}'} inputs per test)"
    )
    facts.pairs = named_pairs(tomo.pairs, [f.name for f in families]) if len(tomo.pairs) else None
    higher = t[~t["measured"]]
    if len(higher):
        worst = higher.nsmallest(10, "r_est")
        cols = level_cols(lattice.n)
        facts.predicted = with_names(
            worst[cols + ["order", "r_pred"] + (["r_true"] if "r_true" in t else [])], families
        )
    if inputs is None:
        return facts
    worst_theta = []
    if facts.predicted is not None and len(facts.predicted):
        first = facts.predicted.iloc[0]
        worst_theta = [(tuple(int(first[c]) for c in level_cols(lattice.n)), "worst predicted")]
    shown_configurations(facts, inputs, families, lattice, worst_theta, configs, k)
    return facts
