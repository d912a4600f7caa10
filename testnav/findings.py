"""`Findings`: what breaks a model, read off the configurations measured on it (`Tester.scan()`).

From the per-input outcomes and the fidelity of every measured configuration (the whole lattice,
or what a search measured) it derives three tables, each in the families' own words:

* `families`: each family alone, at every tested severity: accuracy with its Wilson interval
  (testnav/core/intervals.py), the accuracy points lost with the loss's paired interval (the same
  inputs as clean; testnav/core/paired.py), McNemar's exact test against clean (Holm over the table)
  and `breaks` on every level whose test rejects and whose loss is shown to be at least `min_loss`;
* `interactions`: the configurations of two or more families against what the families alone
  predict if their failures were independent (TestifAI's relative product), ranked by the excess,
  in accuracy points with its interval, each tested on the per-input outcomes (a two-sided z-test
  with the delta method's standard error, Holm over every combination tested), with the smallest
  excess the test would have detected: one not shown to interact is never called independent;
* `failure_modes`: a short list of *minimal* configurations ranked by the accuracy they cost, each
  shown to cost at least `min_loss`, and minimal by its intervals: every measured sub-configuration
  (fewer families, or lower levels) is shown to do less than `MINIMAL_SHARE` (90 %) of its damage;
  each keeps its inputs recognisable (fidelity on the metric's own scale at or above `fidelity_floor`).
  The rules' error rates on populations with a known truth: results/tables/conformance_findings.md.

Losses shown to a person are absolute, in accuracy points (100 × (clean − perturbed)); accuracies
are fractions in [0, 1]; fidelity is the metric's raw value on its own scale (named in
`fidelity_scale`). `save(path)` writes everything a later comparison needs: the per-input
outcomes of every measured configuration, the families, levels and severities, and digests of
the model and data; `Findings.load(path)` reads it back.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from .core.cache import atomic_path, write_json_atomic
from .core.intervals import binomial, half_width
from .core.lattice import Lattice
from .core.naming import config_name
from .errors import UserError

MINIMAL_SHARE = 0.9  # a sub-configuration doing this share of a configuration's damage makes it not minimal
SHOWN = 6  # inputs shown per failure mode on the findings' own page (`Findings.report`, `testnav report`)
# the fidelity below which inputs count as destroyed rather than perturbed ("auto"), on each metric's scale
FLOORS = {"ssim": 0.25, "chrf": 40.0, "bertf1": 0.8}
SCALES = {
    "ssim": "SSIM, 0 to 1, 1 = identical",
    "chrf": "chrF, 0 to 100, 100 = identical",
    "bertf1": "BERT-F1, 0 to 1, 1 = identical",
    "kid": "KID, 0 = same distribution, lower is closer",
}
FORMAT = 1  # the layout `save` writes; `load` refuses another


def points(x) -> float:
    """A share of inputs as accuracy points."""
    return 100.0 * float(x)


def pct(x) -> str:
    return "—" if x is None or not np.isfinite(x) else f"{100 * float(x):.1f} %"


def interval(low, high) -> str:
    return f"[{100 * float(low):.1f}, {100 * float(high):.1f}]"


def p_text(p: float) -> str:
    return "p < 0.001" if p < 0.001 else f"p {p:.2g}"


@dataclass
class ConfigurationOutcomes:
    """The configurations measured on the model, each with its outcome on every input: lattice
    indices (θ = 0 among them), per-input outcomes (M, N) and raw fidelity (NaN where not computed)."""

    lattice: Lattice
    index: np.ndarray
    correct: np.ndarray
    fidelity: np.ndarray

    def __post_init__(self):
        order = np.argsort(self.index, kind="stable")
        self.index = np.asarray(self.index, np.int64)[order]
        self.correct = np.asarray(self.correct, bool)[order]
        self.fidelity = np.asarray(self.fidelity, float)[order]
        if not len(self.index) or self.index[0] != 0:
            raise UserError("findings need the clean configuration (θ = 0) among those measured")

    @classmethod
    def from_table(cls, table: pd.DataFrame, lattice: Lattice, fidelity: str | None) -> ConfigurationOutcomes:
        """From a ground-truth table (or a live run's outcomes): t1..tn, `correct`, and the fidelity column."""
        cols = [f"t{i + 1}" for i in range(lattice.n)]
        index = lattice.index(table[cols].to_numpy(np.int64))
        correct = np.stack(table["correct"].to_numpy()).astype(bool)
        fid = table[fidelity].to_numpy(float) if fidelity and fidelity in table else np.full(len(table), np.nan)
        return cls(lattice, np.atleast_1d(index), correct, fid)

    @classmethod
    def from_oracle(cls, oracle) -> ConfigurationOutcomes:
        """Everything a live oracle has measured (its memo and per-input outcomes)."""
        index = np.array(sorted(oracle.outcomes), np.int64)
        correct = np.stack([oracle.outcomes[int(i)] for i in index])
        fid = np.array([oracle.memo[int(i)].get(oracle.rho_column, np.nan) for i in index], float)
        return cls(oracle.lattice, index, correct, fid)

    @property
    def n(self) -> int:
        return int(self.correct.shape[1])

    @property
    def accuracy(self) -> np.ndarray:
        return self.correct.mean(axis=1)

    def accuracy_of(self) -> dict:
        return {int(i): float(a) for i, a in zip(self.index, self.accuracy)}


@dataclass
class FamilyInfo:
    """A family as the findings name it: its levels' labels and the table entries they test."""

    name: str
    labels: list  # level 0..ℓ−1 ("identity", "σ 0.4", …)
    severities: list  # table entry of level 1..ℓ−1
    table_size: int

    def range_text(self) -> str:
        tested = ", ".join(map(str, self.severities))
        return f"severities {tested} of 1–{self.table_size}"

    @classmethod
    def of(cls, family, levels: int) -> FamilyInfo:
        from .core.severity import severity_of
        from .families.severities import table_size

        return cls(
            family.name,
            [family.level_label(k) for k in range(levels)],
            [severity_of(family, k) for k in range(1, levels)],
            table_size(family),
        )


def family_curves(measured: ConfigurationOutcomes, infos, confidence: float, min_loss: float) -> pd.DataFrame:
    """One row per family and tested level ≥ 1 (measured ones): accuracy, its interval, points lost
    with the paired interval of the loss (the same inputs as clean), McNemar's exact p against clean
    (and Holm-adjusted over the table), and `breaks` on every level whose test rejects and whose loss
    is shown to be at least `min_loss` (the paired interval's lower end)."""
    from .core.paired import mcnemar_exact, paired_loss_interval

    lat, acc = measured.lattice, measured.accuracy_of()
    row_of = {int(i): k for k, i in enumerate(measured.index)}
    clean = measured.correct[0]
    rows = []
    for i, info in enumerate(infos):
        for level in range(1, lat.levels):
            theta = np.zeros(lat.n, np.int64)
            theta[i] = level
            k = row_of.get(int(lat.index(theta)))
            if k is None:
                continue
            a = acc[int(lat.index(theta))]
            low, high = binomial(round(a * measured.n), measured.n, confidence)
            lost, lost_low, lost_high = paired_loss_interval(clean, measured.correct[k], confidence)
            rows.append(
                {
                    "family": info.name,
                    "level": level,
                    "severity": info.severities[level - 1],
                    "parameter": info.labels[level],
                    "accuracy": a,
                    "accuracy_low": float(low),
                    "accuracy_high": float(high),
                    "lost_points": points(lost),
                    "lost_low": points(lost_low),
                    "lost_high": points(lost_high),
                    "p_value": mcnemar_exact(clean, measured.correct[k])[2],
                }
            )
    cols = ["family", "level", "severity", "parameter", "accuracy", "accuracy_low", "accuracy_high"]
    cols += ["lost_points", "lost_low", "lost_high", "p_value", "p_adjusted", "breaks"]
    df = pd.DataFrame(rows, columns=cols)
    reject, df["p_adjusted"] = holm(df["p_value"].to_numpy(float), 1 - confidence)
    df["breaks"] = reject & (df["lost_low"].to_numpy(float) >= points(min_loss) - 1e-9)
    return df


def holm(pvalues: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """(reject, adjusted p) of Holm's step-down procedure over `pvalues` (statsmodels)."""
    from statsmodels.stats.multitest import multipletests

    if not len(pvalues):
        return np.zeros(0, bool), np.zeros(0)
    reject, adjusted, _, _ = multipletests(pvalues, alpha=alpha, method="holm")
    return reject, adjusted


def interaction_rows(measured: ConfigurationOutcomes, families, confidence: float) -> list[dict]:
    """Every measured configuration of two or more families whose members alone were measured, with
    the independence product, the excess and its delta-method standard error over the inputs."""
    from scipy.stats import norm

    from .core.paired import product_excess, z_pvalue

    lat = measured.lattice
    row_of = {int(i): k for k, i in enumerate(measured.index)}
    names = [f.name for f in families]
    z = norm.isf((1 - confidence) / 2)
    rows = []
    for m, idx in enumerate(measured.index):
        theta = lat.theta(int(idx))
        active = np.flatnonzero(theta)
        if len(active) < 2:
            continue
        singles = []
        for i in active:
            one = np.zeros(lat.n, np.int64)
            one[i] = theta[i]
            singles.append(row_of.get(int(lat.index(one))))
        if any(s is None for s in singles):
            continue
        clean, joint = measured.correct[0], measured.correct[m]
        expected, excess, se = product_excess(clean, [measured.correct[s] for s in singles], joint)
        rows.append(
            {
                **{f"t{k + 1}": int(t) for k, t in enumerate(theta)},
                "configuration": config_name(theta, families),
                "families": " + ".join(names[i] for i in active),
                "order": len(active),
                "accuracy": float(joint.mean()),
                "expected": expected,
                "excess_points": points(excess),
                "excess_low": points(excess - z * se),
                "excess_high": points(excess + z * se),
                "alone_points": max(points(max(clean.mean() - measured.correct[s].mean(), 0.0)) for s in singles),
                "z": excess / se if se > 0 else 0.0,
                "p_value": z_pvalue(excess, se),
                "_se": se,
            }
        )
    return rows


def interaction_table(measured: ConfigurationOutcomes, families, confidence: float) -> pd.DataFrame:
    """Every measured configuration of two or more families whose members alone were measured:
    observed accuracy against the independence product, the excess loss in points with its interval,
    a two-sided delta-method z-test on the per-input outcomes (Holm-adjusted over all of them), and,
    for each, the smallest excess the test detects at `POWER` at the level a lone effect must pass
    under Holm (α/m); largest excess first (those costing less than the product last)."""
    from .core.paired import POWER, detectable

    lat = measured.lattice
    cols = [f"t{k + 1}" for k in range(lat.n)] + ["configuration", "families", "order", "accuracy", "expected"]
    cols += ["excess_points", "excess_low", "excess_high", "alone_points", "z", "p_value", "p_adjusted"]
    cols += ["significant", "direction", "detectable_points", "minimal"]
    rows = interaction_rows(measured, families, confidence)
    if not rows:
        return pd.DataFrame(columns=cols)
    df = pd.DataFrame(rows)
    alpha = 1 - confidence
    df["significant"], df["p_adjusted"] = holm(df["p_value"].to_numpy(float), alpha)
    more = df["excess_points"] > 0
    df["direction"] = np.where(df["significant"], np.where(more, "costs more", "costs less"), "not shown")
    df["detectable_points"] = points(1) * detectable(df["_se"].to_numpy(float), alpha / len(df), POWER)
    # minimal: no measured sub-configuration of two or more families already has 90 % of its excess
    at = lat.index(df[[f"t{k + 1}" for k in range(lat.n)]].to_numpy(np.int64))
    excess = np.full(lat.size, np.nan)
    excess[at] = df["excess_points"].to_numpy()
    df["minimal"] = minimal_mask(lat, excess)[at]
    df = df.sort_values(["excess_points", "p_value"], ascending=[False, True], kind="stable")
    return df[cols].reset_index(drop=True)


def strongest_sub(lattice: Lattice, theta, damage: dict) -> tuple[tuple | None, float]:
    """The measured sub-configuration of θ (each level ≤ θ's, not θ itself) with the largest damage."""
    best, best_d = None, -np.inf
    for i in strict_subs(lattice, tuple(theta)):
        d = damage.get(i)
        if d is not None and d > best_d:
            best, best_d = tuple(int(t) for t in lattice.theta(i)), d
    return best, float(best_d)


def minimal_mask(lattice: Lattice, damage_full: np.ndarray) -> np.ndarray:
    """Per lattice index: no measured sub-configuration does MINIMAL_SHARE of its damage. `damage_full`
    is (|Θ|,), NaN where not measured. The largest damage over each θ's down-set is a cumulative
    maximum along every family's axis; the strict down-set's is the largest over θ − e_i."""
    d = np.where(np.isfinite(damage_full), damage_full, -np.inf).reshape((lattice.levels,) * lattice.n)
    upto = d.copy()
    for axis in range(lattice.n):
        upto = np.maximum.accumulate(upto, axis=axis)
    strict = np.full(d.shape, -np.inf)
    for axis in range(lattice.n):
        shifted = np.full(d.shape, -np.inf)
        src = [slice(None)] * lattice.n
        dst = [slice(None)] * lattice.n
        src[axis], dst[axis] = slice(0, -1), slice(1, None)
        shifted[tuple(dst)] = upto[tuple(src)]
        strict = np.maximum(strict, shifted)
    return (strict < MINIMAL_SHARE * d).ravel()


def passes_floor(fidelity: np.ndarray, floor, higher_is_better: bool) -> np.ndarray:
    f = np.asarray(fidelity, float)
    if floor is None:
        return np.ones(len(f), bool)
    ok = f >= floor if higher_is_better else f <= floor
    return ok | ~np.isfinite(f)


def shown_minimal(measured: ConfigurationOutcomes, m: int, confidence: float) -> bool:
    """Configuration `m` (a row of `measured`) is minimal by its intervals: for every measured strict
    sub-configuration s, the interval of damage_s − MINIMAL_SHARE · damage_θ (a mean over the same
    inputs of (1 − share)·y₀ − y_s + share·y_θ, with its t interval) lies below 0, so none is shown
    to do a share of its damage; an intersection of one-sided claims, each at `confidence`."""
    from scipy.stats import t as student

    lat = measured.lattice
    row_of = {int(i): k for k, i in enumerate(measured.index)}
    theta = tuple(int(t) for t in lat.theta(int(measured.index[m])))
    subs = [row_of[i] for i in strict_subs(lat, theta) if i in row_of]
    y = measured.correct.astype(float)
    d = (1 - MINIMAL_SHARE) * y[0] - y[subs] + MINIMAL_SHARE * y[m]
    n = measured.n
    high = d.mean(axis=1) + student.isf((1 - confidence) / 2, max(n - 1, 1)) * d.std(axis=1, ddof=1) / np.sqrt(n)
    return bool(np.all(high < 0))


def strict_subs(lattice: Lattice, theta: tuple) -> list[int]:
    """Lattice indices of θ's sub-configurations (each level ≤ θ's), θ itself left out."""
    from itertools import product

    return [
        int(lattice.index(np.array(s, np.int64))) for s in product(*(range(t + 1) for t in theta)) if s != tuple(theta)
    ]


def failure_mode_table(measured: ConfigurationOutcomes, families, spec, floor, higher_is_better: bool) -> pd.DataFrame:
    """The `spec.failure_modes` configurations above the fidelity floor that cost the most accuracy
    among those whose loss is shown to be at least `spec.min_loss` (the paired interval's lower end)
    and that are minimal by their intervals (`shown_minimal`), each with the first `spec.examples`
    inputs it flipped."""
    from .core.paired import paired_loss_interval

    lat, confidence = measured.lattice, spec.confidence
    acc = measured.accuracy
    damage = acc[0] - acc
    full = np.full(lat.size, np.nan)
    full[measured.index] = damage
    clean = measured.correct[0]
    losses = {}
    ok = (measured.index > 0) & minimal_mask(lat, full)[measured.index]  # minimal on points: necessary
    ok &= passes_floor(measured.fidelity, floor, higher_is_better)
    chosen = []
    for m in np.flatnonzero(ok)[np.lexsort((measured.index[ok], -damage[ok]))]:
        losses[m] = paired_loss_interval(clean, measured.correct[m], confidence)
        if losses[m][1] > 0 and losses[m][1] >= spec.min_loss - 1e-12 and shown_minimal(measured, m, confidence):
            chosen.append(m)
            if len(chosen) == spec.failure_modes:
                break
    by_index = {int(i): float(d) for i, d in zip(measured.index, damage)}
    rows = []
    for rank, m in enumerate(chosen, 1):
        theta = lat.theta(int(measured.index[m]))
        low, high = binomial(int(measured.correct[m].sum()), measured.n, confidence)
        sub, sub_d = strongest_sub(lat, tuple(int(t) for t in theta), by_index)
        flipped = np.flatnonzero(clean & ~measured.correct[m])
        rows.append(
            {
                "rank": rank,
                **{f"t{i + 1}": int(t) for i, t in enumerate(theta)},
                "configuration": config_name(theta, families),
                "order": int(np.count_nonzero(theta)),
                "accuracy": float(acc[m]),
                "accuracy_low": float(low),
                "accuracy_high": float(high),
                "lost_points": points(damage[m]),
                "lost_low": points(losses[m][1]),
                "lost_high": points(losses[m][2]),
                "fidelity": float(measured.fidelity[m]),
                "largest_part": config_name(sub, families) if sub is not None else "",
                "largest_part_points": points(max(sub_d, 0.0)) if sub is not None else 0.0,
                "flipped": int(len(flipped)),
                "examples": [int(i) for i in flipped[: spec.examples]],
            }
        )
    cols = ["rank", *[f"t{i + 1}" for i in range(lat.n)], "configuration", "order", "accuracy", "accuracy_low"]
    cols += ["accuracy_high", "lost_points", "lost_low", "lost_high", "fidelity", "largest_part"]
    cols += ["largest_part_points", "flipped", "examples"]
    return pd.DataFrame(rows, columns=cols)


def configuration_table(measured: ConfigurationOutcomes, families, confidence: float) -> pd.DataFrame:
    """One row per measured configuration: levels, name, accuracy with its interval, points lost,
    fidelity and the per-input outcomes."""
    lat = measured.lattice
    theta = lat.theta(measured.index)
    df = pd.DataFrame(theta, columns=[f"t{i + 1}" for i in range(lat.n)])
    df.insert(lat.n, "configuration", [config_name(t, families) for t in theta])
    df["order"] = (theta > 0).sum(axis=1)
    acc = measured.accuracy
    low, high = binomial(measured.correct.sum(axis=1), measured.n, confidence)
    df["accuracy"], df["accuracy_low"], df["accuracy_high"] = acc, low, high
    df["lost_points"] = 100.0 * (acc[0] - acc)
    df["fidelity"] = measured.fidelity
    df["correct"] = [row.tolist() for row in measured.correct]
    return df


@dataclass
class Findings:
    """What breaks the model: `families`, `interactions` and `failure_modes` (DataFrames, described in
    the module's docstring), `configurations` (every measured one, with per-input outcomes), the clean
    accuracy and its interval (`clean`), how they were measured (`method`), and the settings that
    shaped them. `print(findings)` is a one-screen summary; `report(path)` the full page; `save(path)`
    a directory a later run can be compared with."""

    model: str
    families: pd.DataFrame
    interactions: pd.DataFrame
    failure_modes: pd.DataFrame
    configurations: pd.DataFrame
    family_info: list
    clean: dict
    confidence: float
    fidelity: dict
    method: dict
    provenance: dict = field(default_factory=dict)  # "digests" of the model and data, the "data" (inputs, seed)
    notes: list = field(default_factory=list)
    examples: dict = field(default_factory=dict, repr=False)  # failure mode → its inputs (Inputs.examples)
    run: object = field(default=None, repr=False)  # the search behind them, if one ran
    session: object = field(default=None, repr=False)  # the model they were measured on (None: loaded)

    @property
    def levels(self) -> int:
        return len(self.family_info[0].labels)

    @property
    def digests(self) -> dict:
        """Digests of the model, the data and the ground truth's key: what a later comparison checks."""
        return self.provenance.get("digests", {})

    @property
    def data(self) -> dict:
        """The data's size and perturbation seed."""
        return self.provenance.get("data", {})

    @property
    def resolution(self) -> float:
        """The widest half-width of an accuracy's interval on these N inputs at `confidence`."""
        return half_width(self.clean["n"], self.confidence)

    # --- sentences -------------------------------------------------------------------------
    def clean_sentence(self) -> str:
        c = self.clean
        return (
            f"Clean accuracy {pct(c['accuracy'])} {interval(c['low'], c['high'])} on {c['n']:,} inputs "
            f"({self.confidence:.0%} Wilson interval; two accuracies closer than ±{points(self.resolution):.1f} "
            "points cannot be told apart here)."
        )

    @property
    def min_loss(self) -> float:
        """The smallest loss (a share) a family level or a failure mode must be shown to cost."""
        return float(self.method.get("min_loss", 0.0))

    def breaks_rule(self) -> str:
        """How a level is found to break, in words."""
        return (
            f"McNemar's exact test against clean rejects (Holm over the {len(self.families)} levels tested) and the "
            f"loss's paired {self.confidence:.0%} interval lies at or above {points(self.min_loss):.1f} points"
        )

    def worst_family(self) -> dict | None:
        """The level that breaks with the largest loss, its family, and every level of it that breaks."""
        df = self.families
        if not len(df) or not df["breaks"].any():
            return None
        row = df.loc[df.loc[df["breaks"], "lost_points"].astype(float).idxmax()]
        info = next(f for f in self.family_info if f.name == row["family"])
        return {"row": row, "info": info, "breaks": df[(df["family"] == row["family"]) & df["breaks"]]}

    def worst_family_sentence(self) -> str:
        if not len(self.families):
            return ""
        w = self.worst_family()
        if w is None:
            return f"No family level alone breaks it: none is shown to cost a loss ({self.breaks_rule()})."
        row, info = w["row"], w["info"]
        text = (
            f"Worst family alone: {row['family']}, {pct(row['accuracy'])} "
            f"{interval(row['accuracy_low'], row['accuracy_high'])} at severity {row['severity']} of "
            f"{info.table_size} ({row['parameter']}), {row['lost_points']:.1f} points lost "
            f"[{row['lost_low']:.1f}, {row['lost_high']:.1f}]"
        )
        b = w["breaks"]
        return text + f"; it breaks at severities {', '.join(str(v) for v in b['severity'])} of {info.table_size}."

    def strongest_interaction(self) -> pd.Series | None:
        df = self.interactions
        if not len(df):
            return None
        sig = df[df["significant"] & df["minimal"] & (df["excess_points"] > 0)]
        return sig.iloc[0] if len(sig) else None

    def detectable_text(self) -> str:
        """The smallest excess the interaction tests could have detected, over the combinations tested."""
        d = self.interactions["detectable_points"].astype(float)
        lo, hi = d.min(), d.max()
        span = f"{lo:.1f}" if round(lo, 1) == round(hi, 1) else f"{lo:.1f}–{hi:.1f}"
        return f"an excess of {span} points would have been detected with 80 % power"

    def interaction_sentence(self) -> str:
        df = self.interactions
        how = f"a two-sided z-test on per-input outcomes, Holm over the {len(df):,} combinations measured"
        row = self.strongest_interaction()
        if row is None:
            if not len(df):
                return "No combination of families was measured with its families alone, so none was tested."
            return (
                "No combination of families is shown to cost more than the families alone predict "
                f"({how}); not shown is not independent: {self.detectable_text()}."
            )
        parts = row["configuration"].split(" · ")
        name = " with ".join(parts) if len(parts) == 2 else f"{', '.join(parts[:-1])} and {parts[-1]} together"
        alone = row["alone_points"]
        each = (
            f"though each alone costs at most {alone:.1f} points"
            if alone < row["excess_points"]
            else f"the families alone cost up to {alone:.1f} points"
        )
        return (
            f"Strongest interaction: {name}: {pct(row['accuracy'])}, {each}; independent failures would leave "
            f"{pct(row['expected'])}, so the combination costs {row['excess_points']:.1f} points more "
            f"[{row['excess_low']:.1f}, {row['excess_high']:.1f}] ({p_text(row['p_adjusted'])}, {how}){self.order_note(row)}."
        )

    def method_sentence(self) -> str:
        m = self.method
        if m["how"] == "lattice":
            why = (
                f" (projected at most {seconds_text(m['projected_seconds'])}, within the budget of "
                f"{seconds_text(m['budget_seconds'])})"
                if m.get("projected_seconds") is not None
                else " (read from the cached ground truth)"
                if m.get("cached")
                else ""
            )
            return f"Measured all {m['size']:,} configurations{why}, so every number here is measured."
        if m["how"] == "run":
            return (
                f"The run measured {m['run_measured']:,} of the {m['size']:,} configurations; the clean set, each "
                f"family alone and the failure modes' sub-configurations were completed for this report "
                f"({m['measured']:,} measured in all); pairs and higher orders only where the search went."
            )
        text = (
            f"Measuring all {m['size']:,} configurations was projected at {seconds_text(m['projected_seconds'])}, "
            f"beyond the budget of {seconds_text(m['budget_seconds'])}: TomoNav measured {m['measured']:,} of them"
        )
        if m.get("p_good") is not None:
            text += (
                f" and stopped with p_good {m['p_good']:.2f}, a stopping score against unmeasured configurations beating its "
                f"front by more than {points(m.get('epsilon') or 0.01):.1f} accuracy points"
            )
        return text + "; the families alone and in pairs are all measured, higher orders only where the search went."

    def floor_text(self) -> str:
        f = self.fidelity
        if f.get("floor") is None:
            return f"no fidelity floor ({f['name']})"
        op = "≥" if f.get("higher_is_better", True) else "≤"
        return f"{f['name']} {op} {f['floor']:g} ({f['scale']})"

    def text(self, hint: bool = True) -> str:
        """The one-screen summary; `hint`: its last line says how to draw and keep them in Python."""
        lines = [
            f"What breaks {self.model}? {self.clean['n']:,} inputs, {len(self.family_info)} families × "
            f"{self.levels} levels ({self.method['size']:,} configurations), fidelity {self.fidelity['name']}",
            "  " + self.method_sentence(),
            "  " + self.order_sentence(),
            self.clean_sentence(),
        ]
        for s in (self.worst_family_sentence(), self.interaction_sentence()):
            if s:
                lines.append(s)
        lines.append(f"Families alone (accuracy at each tested severity; * = breaks: {self.breaks_rule()}):")
        for info in self.family_info:
            rows = self.families[self.families["family"] == info.name]
            cells = [
                f"{r['parameter']}: {100 * r['accuracy']:.1f}{'*' if r['breaks'] else ''}" for _, r in rows.iterrows()
            ]
            lines.append(f"  {info.name:<14} {'  '.join(cells)}   ({info.range_text()})")
        top = self.interactions
        top = top[top["significant"] & top["minimal"]] if len(top) else top
        shown = top.head(3)
        if len(shown):
            lines.append(f"Interactions ({len(shown)} of {len(top)} significant and minimal, largest excess first):")
            for _, r in shown.iterrows():
                lines.append(
                    f"  {r['configuration']}: {pct(r['accuracy'])}, expected {pct(r['expected'])} "
                    f"({r['excess_points']:+.1f} points, {r['direction']}, {p_text(r['p_adjusted'])}){self.order_note(r)}"
                )
        fm = self.failure_modes
        lines.append(f"Failure modes (minimal configurations, {self.floor_text()}; {len(fm)} shown):")
        for _, r in fm.iterrows():
            lines.append(
                f"  {r['rank']}. {r['configuration']}: {pct(r['accuracy'])} ({r['lost_points']:.1f} points lost "
                f"[{r['lost_low']:.1f}, {r['lost_high']:.1f}]), "
                f"{self.fidelity['name']} {r['fidelity']:.2f}, {r['flipped']:,} inputs flipped{self.order_note(r)}"
            )
        if not len(fm):
            lines.append(
                f"  none: no configuration above the floor is shown to cost {points(self.min_loss):.1f} points or more "
                "and to be minimal"
            )
        if hint:
            lines.append("findings.report('report.html') draws them with the inputs; findings.save(dir) keeps them.")
        return "\n".join(lines)

    def answer(self) -> str:
        """What breaks the model in (at most) three lines: the clean accuracy, the worst family alone and
        the strongest interaction; what `Tester.scan()` prints first and a command-line run ends with."""
        return "\n".join(
            s for s in (self.clean_sentence(), self.worst_family_sentence(), self.interaction_sentence()) if s
        )

    def order_sentence(self) -> str:
        """The order the families are applied in, which a finding of several families can depend on."""
        names = " → ".join(info.name for info in self.family_info)
        return f"Families are applied in list order, {names} (Tester(order=…) sets another)."

    @staticmethod
    def order_note(row) -> str:
        """Whether the finding of `row` holds in every order of its families (testnav/pipeline/composition.py)."""
        every = row.get("in_every_order") if hasattr(row, "get") else None
        if every is None or (isinstance(every, float) and np.isnan(every)):
            return ""
        if int(row["orders_measured"]) == 0:
            return ""
        if every:
            n = int(row["orders_measured"])
            return f"; the same in every order ({n} other{'s' if n != 1 else ''} measured)"
        return f"; it needs this order: {row['other_order']} leaves {pct(row['other_order_accuracy'])}"

    def __str__(self) -> str:
        return self.text()

    __repr__ = __str__

    def _repr_html_(self) -> str:  # a notebook shows the summary as text, not the dataclass
        from html import escape

        return f"<pre>{escape(str(self))}</pre>"

    # --- files -----------------------------------------------------------------------------
    def report(self, path="report.html", k: int = SHOWN) -> Path:
        """Write the practitioner's report (one self-contained file; `k` inputs per failure mode) and
        return its path."""
        from .report.scan import write_findings

        return write_findings(path, self, k)

    def save(self, path) -> Path:
        """A directory: findings.json (settings, clean accuracy, how measured, digests), configurations.parquet
        (every measured configuration with per-input outcomes), families.csv, interactions.csv and
        failure_modes.csv."""
        out = Path(path)
        out.mkdir(parents=True, exist_ok=True)
        with atomic_path(out / "configurations.parquet") as tmp:
            self.configurations.to_parquet(tmp, index=False)
        for name in ("families", "interactions", "failure_modes"):
            df = getattr(self, name).copy()
            if "examples" in df:
                df["examples"] = [" ".join(map(str, e)) for e in df["examples"]]
            with atomic_path(out / f"{name}.csv") as tmp:
                df.to_csv(tmp, index=False)
        meta = {
            "format": FORMAT,
            "model": self.model,
            "families": [vars(f) for f in self.family_info],
            "levels": self.levels,
            "clean": self.clean,
            "confidence": self.confidence,
            "resolution": self.resolution,
            "fidelity": self.fidelity,
            "method": self.method,
            "digests": self.digests,
            "data": self.data,
            "notes": self.notes,
        }
        write_json_atomic(out / "findings.json", json_safe(meta))
        return out

    @classmethod
    def load(cls, path) -> Findings:
        """Findings as `save` wrote them (without the example inputs and the search run)."""
        out = Path(path)
        meta_path = out / "findings.json"
        if not meta_path.exists():
            raise UserError(f"{out}: no findings.json here (a directory that Findings.save wrote)")
        meta = json.loads(meta_path.read_text())
        if meta.get("format") != FORMAT:
            raise UserError(f"{out}: findings format {meta.get('format')} (this testnav reads {FORMAT})")
        frames = {n: pd.read_csv(out / f"{n}.csv") for n in ("families", "interactions", "failure_modes")}
        fm = frames["failure_modes"]
        if "examples" in fm:
            fm["examples"] = [[int(v) for v in str(e).split()] if isinstance(e, str) else [] for e in fm["examples"]]
        return cls(
            model=meta["model"],
            families=frames["families"],
            interactions=frames["interactions"],
            failure_modes=fm,
            configurations=pd.read_parquet(out / "configurations.parquet"),
            family_info=[FamilyInfo(**f) for f in meta["families"]],
            clean=meta["clean"],
            confidence=meta["confidence"],
            fidelity=meta["fidelity"],
            method=meta["method"],
            provenance={"digests": meta.get("digests", {}), "data": meta.get("data", {})},
            notes=meta.get("notes", []),
        )


def seconds_text(s) -> str:
    if s is None:
        return "—"
    s = float(s)
    return f"{s:.0f} s" if s < 90 else f"{s / 60:.0f} min" if s < 5400 else f"{s / 3600:.1f} h"


def json_safe(x):
    if isinstance(x, dict):
        return {str(k): json_safe(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [json_safe(v) for v in x]
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, (np.floating, float)):
        return None if not math.isfinite(float(x)) else float(x)
    if isinstance(x, np.bool_):
        return bool(x)
    return x


def fidelity_settings(name: str, floor, higher_is_better: bool) -> dict:
    """The fidelity metric as the findings state it: its name, scale, direction and floor (`floor`
    as `ScanSpec` checked it: a number on the metric's scale, "auto" for the metric's own, or None)."""
    if floor == "auto":
        floor = FLOORS.get(name)
    return {
        "name": name,
        "scale": SCALES.get(name, name),
        "higher_is_better": bool(higher_is_better),
        "floor": None if floor is None else float(floor),
    }


def build(measured: ConfigurationOutcomes, families, model: str, fidelity: dict, method: dict, spec, provenance=None):
    """The findings of `measured` (families: the benchmark's Family objects, in lattice order) under a
    scan's settings `spec` (testnav.pipeline.ScanSpec: confidence, failure_modes, examples)."""
    lat = measured.lattice
    infos = [FamilyInfo.of(f, lat.levels) for f in families]
    confidence = spec.confidence
    c = int(measured.correct[0].sum())
    low, high = binomial(c, measured.n, confidence)
    clean = {"accuracy": c / measured.n, "low": float(low), "high": float(high), "n": measured.n}
    floor, better = fidelity["floor"], fidelity["higher_is_better"]
    return Findings(
        model=model,
        families=family_curves(measured, infos, confidence, spec.min_loss),
        interactions=interaction_table(measured, families, confidence),
        failure_modes=failure_mode_table(measured, families, spec, floor, better),
        configurations=configuration_table(measured, families, confidence),
        family_info=infos,
        clean=clean,
        confidence=confidence,
        fidelity=fidelity,
        method={**method, "size": lat.size, "measured": int(len(measured.index)), "min_loss": float(spec.min_loss)},
        provenance=provenance or {},
    )
