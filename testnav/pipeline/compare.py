"""Did the new version get less robust? Two records of the same inputs, configuration by configuration.

    comparison = compare(session, baseline_record, CompareSpec(), "ssim")   # the session's model measured
    comparison = compare_records(baseline_record, new_record, CompareSpec(correction="bh"))
    comparison.regressions      # significant changes (two-sided McNemar) larger than min_change, worst first
    comparison.decide()         # the regression gate at max_drop: a Verdict, pass, fail or undecided
    comparison.line()           # its one line

For each configuration θ measured on both, the models saw the same perturbed inputs, so the test is
paired: McNemar's exact test (statsmodels) on the inputs whose outcome differs, b = right before and
wrong after, c = wrong before and right after, under H0 that a flip either way is equally likely;
the change in accuracy is (c − b)/N. Over the K configurations compared the p-values are adjusted for
multiple comparisons: Holm's step-down (default; controls the family-wise error: the chance of
calling even one unchanged configuration a regression stays below 1 − confidence) or
Benjamini–Hochberg (correction="bh"; controls the false discovery rate: the expected share of
calls that are wrong). A regression is a configuration whose adjusted p-value is below
1 − confidence and whose accuracy dropped by more than `min_change`; an improvement the same upwards.
These say what changed. The gate (`decide`) asks another question, whether any configuration lost
more than `max_drop`, and answers it as a non-inferiority test on the paired drop
(pipeline/noninferiority.py): pass, fail or undecided, kept as `verdict`.

`compare` measures on a session's model what the comparison needs: with measure="auto" (the
default) or "never" the baseline's front, where a surrogate expects a drop and a random sample that
bounds the rest (pipeline/warm.py; "auto" grows the sample until the gate decides); with
measure="all" every configuration the baseline measured. The settings are one `CompareSpec`
(testnav/pipeline/specs.py; the defaults are conf/settings/compare.yaml's).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..core.naming import COLUMN, config_name
from ..core.pareto import nondominated_mask
from ..errors import UserError
from .noninferiority import drop_high
from .paired import CORRECTIONS, adjust, mcnemar_exact
from .record import RunRecord, check_comparable, record_of
from .specs import CompareSpec


def pct_points(x: float) -> str:
    return f"{100 * x:+.1f} points"


@dataclass
class Comparison:
    """The new model against a baseline on the same inputs. `table`: one row per configuration
    compared (named, levels, before, after, change, b, c, p, p_adjusted, significant); `regressions`
    and `improvements` its significant rows beyond `min_change`, worst (largest change) first;
    `families` and `pairs`: how many regressions include each family and each pair of families;
    `fronts`: each model's measured front over the configurations compared; `evaluations`:
    configurations evaluated on the new model for the comparison; `verdict`: the regression gate's
    (`decide`; None before it ran); `warm`: what a warm start
    (pipeline/warm.py) measured and predicted, and the bound on the predicted ones (None: every
    configuration the baseline measured was compared); `predicted`: those configurations. `spec`: the
    settings it was compared under (confidence, correction, min_change; the gate's max_drop). `table`
    also holds `drop_high`: the one-sided upper bound at `confidence` on each configuration's paired
    drop (pipeline/noninferiority.py)."""

    table: pd.DataFrame
    base: RunRecord = field(repr=False)
    new: RunRecord = field(repr=False)
    spec: CompareSpec = field(repr=False)
    evaluations: int = 0
    reused: int = 0
    seconds: float = 0.0
    inputs: Any = field(default=None, repr=False)  # the new model's Inputs (groundtruth/inputs.py), for the report
    families_objects: list | None = field(default=None, repr=False)
    verdict: Any = None  # the regression gate's Verdict (pipeline/noninferiority.py), once `decide` ran
    warm: Any = field(default=None, repr=False)  # a WarmStart (pipeline/warm.py), or None: all measured

    def decide(self):
        """The regression gate at the spec's `max_drop` (pipeline/noninferiority.py): pass when every
        configuration compared is shown to lose at most max_drop, fail when one is shown to lose more,
        else undecided. Kept as `verdict` (shown on the report) and returned."""
        from .noninferiority import judge

        t, spec, w = self.table, self.spec, self.warm
        sampled = room = None
        if w is not None:
            sampled = (t["measured_for"] == "sample").to_numpy()
            room = w.allowed - (w.bound.bad_high if w.bound is not None else 0)
        decision, shown, uncleared, tolerated = judge(
            t["worse"],
            t["better"],
            self.base.inputs,
            t["drop_high"] <= spec.max_drop,
            spec.max_drop,
            spec.confidence,
            sampled,
            room,
        )
        self.verdict = verdict_of(self, decision, shown, uncleared, tolerated)
        return self.verdict

    @property
    def confidence(self) -> float:
        return self.spec.confidence

    @property
    def correction(self) -> str:
        return self.spec.correction

    @property
    def min_change(self) -> float:
        return self.spec.min_change

    @property
    def alpha(self) -> float:
        return 1 - self.confidence

    @property
    def correction_label(self) -> str:
        return CORRECTIONS[self.correction][1]

    @property
    def regressions(self) -> pd.DataFrame:
        t = self.table
        out = t[t["significant"] & (t["change"] < -self.min_change)]
        return out.sort_values(["change", "p_adjusted"], kind="stable").reset_index(drop=True)

    @property
    def improvements(self) -> pd.DataFrame:
        t = self.table
        out = t[t["significant"] & (t["change"] > self.min_change)]
        return out.sort_values(["change", "p_adjusted"], ascending=[False, True], kind="stable").reset_index(drop=True)

    @property
    def families(self) -> pd.DataFrame:
        """Per family, the most damaging first: its effect on the paired drop (a main-effects model of
        the per-configuration drop on the families' severities, statsmodels; `effect`, its interval at
        `confidence` and the severity), its own curve's worst drop where it acts alone (`alone`, its
        interval, the severity), and the configurations compared that include it with the regressions
        and improvements among them (pipeline/localise.py)."""
        from .localise import families

        fams = self.families_objects if self.families_objects is not None else self.base.named_families
        return families(self.table, fams, self.base.inputs, self.confidence, self.flags())

    @property
    def pairs(self) -> pd.DataFrame:
        """Per pair of families: the drop beyond what their main effects predict (`excess`, its
        interval; negative: one masks the other), the configurations compared that include both and
        the regressions among them (pipeline/localise.py)."""
        from .localise import pairs

        return pairs(self.table, self.base.family_names, self.confidence, self.flags())

    def flags(self) -> tuple[np.ndarray, np.ndarray]:
        """(regressed, improved): boolean masks over `table`'s rows, in its order: significant after the
        correction, with a drop (a gain) beyond `min_change`; the rows `regressions` and `improvements`
        list, as masks (the families, the pairs and the report's scatter plot read them)."""
        t = self.table
        sig = t["significant"].to_numpy()
        return sig & (t["change"].to_numpy() < -self.min_change), sig & (t["change"].to_numpy() > self.min_change)

    @property
    def fronts(self) -> pd.DataFrame:
        """The two measured fronts side by side: for `model` = baseline and new, the configurations
        compared that no other one beats on both δ (accuracy lost from that model's clean accuracy)
        and ρ (the fidelity of the perturbed inputs, the same for both models)."""
        t = self.table
        rows = []
        for side, col, clean in (("baseline", "before", self.base.psi_clean), ("new", "after", self.new.psi_clean)):
            ok = np.isfinite(t["rho"].to_numpy(float))
            sub = t[ok]
            delta = np.maximum(clean - sub[col].to_numpy(float), 0.0)
            mask = nondominated_mask(delta, sub["rho"].to_numpy(float)) if len(sub) else np.zeros(0, bool)
            front = sub[mask].assign(model=side, delta=delta[mask], accuracy=sub[col][mask])
            rows.append(front[["model", COLUMN, "accuracy", "delta", "rho"]].sort_values("rho"))
        return pd.concat(rows, ignore_index=True)

    @property
    def compared(self) -> int:
        return len(self.table)

    @property
    def predicted(self) -> pd.DataFrame:
        """The baseline's configurations the warm start left unmeasured: named, before, after and
        change as the surrogate predicts them (bounded together by `warm.bound`, never tested one by one)."""
        if self.warm is None or not len(self.warm.predicted):
            return pd.DataFrame(columns=[COLUMN, "before", "after", "change"])
        p = self.warm.predicted
        cols = [c for c in p if c.startswith("t")]
        fams = self.families_objects if self.families_objects is not None else self.base.named_families
        return p.assign(**{COLUMN: [config_name(t, fams) for t in p[cols].to_numpy()]})

    @property
    def summary(self) -> dict:
        reg, imp = self.regressions, self.improvements
        return {
            "baseline": self.base.name,
            "baseline_model": self.base.model,
            "new_model": self.new.model,
            "data": self.base.data,
            "inputs": self.base.inputs,
            "configurations_compared": self.compared,
            "test": "McNemar's exact test (paired, per input)",
            "correction": self.correction_label,
            "confidence": self.confidence,
            "min_change": self.min_change,
            "regressions": len(reg),
            "improvements": len(imp),
            "worst_regression": None if not len(reg) else row_summary(reg.iloc[0]),
            "families": self.families_summary(),
            "evaluations": self.evaluations,
            "reused": self.reused,
            "warm": None if self.warm is None else self.warm.summary,
            "verdict": None if self.verdict is None else self.verdict.summary,
            "seconds": round(self.seconds, 2),
            "clean_before": self.base.psi_clean,
            "clean_after": self.new.psi_clean,
        }

    def families_summary(self) -> list[dict]:
        """`families` as JSON holds it: each family's effect and own curve's worst drop, with intervals."""
        keep = ["family", "effect", "effect_low", "effect_high", "effect_at", "alone", "alone_low", "alone_high"]
        keep.append("alone_at")
        f = self.families[keep].astype(object)
        return f.where(f.notna(), None).to_dict("records")

    def families_line(self) -> str:
        """The families by their effect on the drop, most damaging first, in one line."""
        f = self.families.dropna(subset=["effect"])
        if not len(f):
            return ""
        parts = [
            f"{name} {100 * v:+.1f} [{100 * low:.1f}, {100 * high:.1f}] at {at}"
            for name, v, low, high, at in zip(
                f["family"], f["effect"].astype(float), f["effect_low"], f["effect_high"], f["effect_at"]
            )
        ]
        from ..report.compare import separated

        tie = "; the first two not separated (their intervals overlap)" if separated(f) is False else ""
        return f"families by their effect on the drop (points, {self.confidence:.0%}): " + ", ".join(parts) + tie

    def sentence(self) -> str:
        """What a person reads first: how many configurations changed significantly, and how it was decided."""
        reg, imp = len(self.regressions), len(self.improvements)
        beyond = f" by more than {100 * self.min_change:g} points" if self.min_change else ""
        return (
            f"{reg} regression{'s' * (reg != 1)} and {imp} improvement{'s' * (imp != 1)}{beyond} among "
            f"{self.compared:,} configurations compared on the same {self.base.inputs:,} inputs (McNemar's exact "
            f"test, {self.correction_label}-adjusted at {self.confidence:.0%} confidence)"
        )

    def line(self) -> str:
        """The one line: the gate's verdict once `decide` ran; before it, the worst significant
        change in words (before → after, its p-value), or that there is none."""
        if self.verdict is not None:
            return self.verdict.line
        warm = "" if self.warm is None else f"; {self.warm.sentence()}"
        if not len(self.regressions):
            return f"no regression against the baseline: {self.sentence()}; the largest drop is {largest_drop(self.table)}{warm}"
        w, n = self.regressions.iloc[0], len(self.regressions)
        more = f"; {n} configurations dropped significantly" if n > 1 else ""
        return (
            f"regression against the baseline: {w[COLUMN]}: accuracy {w['before']:.3f} → {w['after']:.3f} "
            f"({pct_points(w['change'])}), p {w['p_value']:.2g} ({self.correction_label}-adjusted {w['p_adjusted']:.2g} "
            f"over {self.compared:,} configurations, {self.confidence:.0%} confidence){more}{warm}"
        )

    def __repr__(self) -> str:
        return f"Comparison({self.sentence()}; {self.evaluations} configurations evaluated on the new model)"

    def __str__(self) -> str:
        lines = [self.sentence() + "."]
        for title, df in (("regressions", self.regressions), ("improvements", self.improvements)):
            if len(df):
                lines.append(f"{title} (first 5 of {len(df)}):")
                for _, r in df.head(5).iterrows():
                    lines.append(
                        f"  {r[COLUMN]}  {r['before']:.3f} → {r['after']:.3f} ({pct_points(r['change'])}), "
                        f"p {r['p_value']:.2g}, adjusted {r['p_adjusted']:.2g}"
                    )
        if line := self.families_line():
            lines.append(line)
        lines.append(f"{self.evaluations} configurations evaluated on the new model ({self.reused} already measured)")
        if self.warm is not None:
            lines.append(self.warm.sentence())
        return "\n".join(lines)

    def report(self, path="comparison.html", k: int | None = None, most: int = 5) -> Path:
        """One self-contained page: the verdict, the two fronts side by side, each regression before and
        after with `k` of the inputs that flipped (None: the spec's `examples`; the first `most`
        regressions), the families behind them."""
        from ..report.compare import write

        k = self.spec.examples if k is None else k
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise UserError(f"k={k}: the number of examples must be a whole number ≥ 1")
        return write(path, self, k, most, self.verdict)

    def save(self, directory) -> Path:
        """comparison.csv (every configuration compared) and comparison.json (the summary) in `directory`."""
        from ..core.cache import atomic_path, write_json_atomic

        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        with atomic_path(out / "comparison.csv") as tmp:
            self.table.to_csv(tmp, index=False)
        write_json_atomic(out / "comparison.json", self.summary)
        return out


def row_summary(r) -> dict:
    return {
        "configuration": r[COLUMN],
        "before": float(r["before"]),
        "after": float(r["after"]),
        "change": float(r["change"]),
        "p_value": float(r["p_value"]),
        "p_adjusted": float(r["p_adjusted"]),
    }


def points(x: float) -> str:
    return f"{round(100 * x, 1) + 0.0:.1f}"  # + 0.0: no "-0.0"


def verdict_of(c: Comparison, decision: str, shown: int, uncleared: int, tolerated: int):
    """The Verdict of `c` (pipeline/noninferiority.py) with its one line: the configuration it names
    (fail: the largest drop shown beyond max_drop; undecided: the largest bound not cleared; pass:
    the largest bound), its drop and bound, and what the warm start measured."""
    from .noninferiority import Verdict, beyond_p, drop_bound

    t, spec, n = c.table, c.spec, c.base.inputs
    m, conf, k = spec.max_drop, spec.confidence, len(c.table)
    drop, high = -t["change"].to_numpy(float), t["drop_high"].to_numpy(float)
    if decision == "fail":
        from .paired import adjust

        reject, adjusted = adjust(beyond_p(t["worse"], t["better"], n, m), conf, "holm")
        i = int(np.flatnonzero(reject)[np.argmax(drop[reject])])
        bound = drop_bound(int(t["worse"].iloc[i]), int(t["better"].iloc[i]), n, conf, upper=False)
        more = f"; {shown} configurations shown to lose more than {points(m)} points" if shown > 1 else ""
        what = (
            f"regression beyond {points(m)} points against the baseline: {t[COLUMN].iloc[i]}: accuracy "
            f"{t['before'].iloc[i]:.3f} → {t['after'].iloc[i]:.3f}, a drop of {points(drop[i])} points, at least "
            f"{points(bound)} at {conf:.0%} (Holm-adjusted p {adjusted[i]:.2g} over {k:,} configurations){more}"
        )
    else:
        open_ = high > m
        pool = np.flatnonzero(open_) if decision == "undecided" and open_.any() else np.arange(k)
        i = int(pool[np.lexsort((drop[pool], high[pool]))[-1]])  # the largest bound; of equal ones the largest drop
        bound, name = float(high[i]), t[COLUMN].iloc[i]
        tol = ""
        if tolerated:
            within = "within" if decision == "pass" else "counted against"
            tol = f"; {tolerated} sampled at random not cleared, {within} the warm start's tolerance"
        if decision == "pass":
            what = (
                f"no regression beyond {points(m)} points against the baseline: each of the {k:,} configurations "
                f"compared loses at most {points(m)} points at {conf:.0%} (one-sided upper bounds on the paired drop); "
                f"the closest: {name}: a drop of {points(drop[i])} points, at most {points(bound)}{tol}"
            )
        else:
            what = (
                f"regression gate undecided: {name}: a drop of {points(drop[i])} points, at most {points(bound)} at "
                f"{conf:.0%}, neither shown within {points(m)} points nor beyond; {uncleared} of {k:,} configurations "
                f"compared not cleared{tol}; {undecided_why(c)}"
            )
    warm = "" if c.warm is None else f"; {c.warm.sentence()}"
    return Verdict(
        decision, m, conf, k, t[COLUMN].iloc[i], float(drop[i]), float(bound), shown, uncleared, tolerated, what + warm
    )


def undecided_why(c: Comparison) -> str:
    """What would decide an undecided gate."""
    w = c.warm
    if w is not None and w.bound is not None and len(w.predicted) and w.decision == "undecided" and w.measure != "auto":
        return "measure='auto' measures the predicted configurations until the gate decides"
    return f"more inputs would decide (the baseline's record holds {c.base.inputs:,})"


def largest_drop(t: pd.DataFrame) -> str:
    if not len(t) or t["change"].min() >= 0:
        return "none (no configuration lost accuracy)"
    w = t.iloc[int(np.argmin(t["change"].to_numpy(float)))]
    return f"{pct_points(w['change'])} at {w[COLUMN]} (p {w['p_value']:.2g}, adjusted {w['p_adjusted']:.2g})"


def compare_records(base: RunRecord, new: RunRecord, spec: CompareSpec, families=None, key: str = "baseline"):
    """Every configuration measured in both records, tested pair by pair and adjusted together under
    `spec`. `families`: Family objects naming the configurations (default: the records' own labels)."""
    check_comparable(base, new, key)
    mine = new.index()
    rows = []
    fams = families if families is not None else base.named_families
    for i, theta in enumerate(base.thetas):
        j = mine.get(tuple(map(int, theta)))
        if j is None:
            continue
        before, after = base.correct[i], new.correct[j]
        b, c, p = mcnemar_exact(before, after)
        rho = new.rho[j] if np.isfinite(new.rho[j]) else base.rho[i]
        rows.append(
            {
                **{f"t{k + 1}": int(v) for k, v in enumerate(theta)},
                COLUMN: config_name(theta, fams),
                "order": int((theta > 0).sum()),
                "before": float(before.mean()),
                "after": float(after.mean()),
                "change": (c - b) / len(before),
                "worse": b,
                "better": c,
                "p_value": p,
                "rho": float(rho),
            }
        )
    if not rows:
        raise UserError(f"{key}: no configuration is measured in both runs (the new model's: {len(new)})")
    table = pd.DataFrame(rows)
    reject, adjusted = adjust(table["p_value"], spec.confidence, spec.correction)
    table["p_adjusted"] = adjusted
    table["significant"] = reject
    table["drop_high"] = drop_high(table["worse"], table["better"], base.inputs, spec.confidence)
    return Comparison(table, base, new, spec, families_objects=families)


def measure(session, fidelity: str, thetas) -> int:
    """Evaluate on the session's model (its live oracle for ρ = `fidelity`: memoised, prefixes shared)
    every configuration of `thetas` not measured yet; returns how many it evaluated."""
    from ..core.progress import bar
    from .live import live_oracle

    oracle = live_oracle(session, fidelity)
    lattice = session.benchmark.lattice
    todo = sorted({int(lattice.index(np.asarray(t, np.int64))) for t in thetas} - set(oracle.outcomes))
    todo = [i for i in todo if i != 0]  # the clean set is the session's own
    step = max(lattice.levels, 16)  # in lattice order, siblings together: each request shares its prefixes
    with bar(total=len(todo), desc="comparison on the model", unit="cfg", disable=not session.progress) as pbar:
        for s in range(0, len(todo), step):
            oracle.evaluate(todo[s : s + step])
            pbar.update(len(todo[s : s + step]))
    return len(todo)


def compare(session, baseline: RunRecord, spec: CompareSpec, fidelity: str, groundtruth=None, key: str = "baseline"):
    """The opened session's model against the record `baseline`: refused in one line unless the data,
    families, levels and perturbation seed agree; then the configurations `baseline` measured that the
    session has not (its live searches, the table `groundtruth`) are evaluated on the model, and
    compared: unless spec.measure is "all", those a warm start needs for a gate at `spec.max_drop`
    (pipeline/warm.py: the rest predicted and bounded at `spec.tolerance`, sampled with `spec.seed`),
    else all of them.
    `key`: how errors name the baseline (compare.baseline on the command line)."""
    import time

    from .live import live_oracle

    t0 = time.perf_counter()
    live_oracle(session, fidelity)  # made first: what earlier verbs measured (its store) counts as known
    mine = record_of(session, fidelity, groundtruth)
    check_comparable(baseline, mine, key)
    start = None
    if spec.measure != "all":
        from .warm import warm_measure

        known = {tuple(map(int, t)): c for t, c in zip(mine.thetas, mine.correct)}
        evaluate = Evaluate(session, fidelity)
        start = warm_measure(baseline, known, evaluate, spec)
        evaluated = evaluate.evaluated
    else:
        evaluated = measure(session, fidelity, baseline.thetas)
    new = record_of(session, fidelity, groundtruth)
    out = warmed(compare_records(baseline, new, spec, session.benchmark.families, key), start)
    out.evaluations, out.reused = evaluated, len(out.table) - evaluated
    out.seconds = time.perf_counter() - t0
    if session.readable:
        out.inputs = session.inputs
    return out


def warmed(out: Comparison, start) -> Comparison:
    """`out` with the WarmStart `start` (None: every configuration measured): why each row was measured
    (`measured_for`), and the gate's verdict, which counts the sampled rows against its tolerance."""
    cols = [f"t{i + 1}" for i in range(len(out.base.families))]
    out.warm = start
    out.table["measured_for"] = (
        [start.why[tuple(map(int, t))] for t in out.table[cols].to_numpy()] if start else "every configuration"
    )
    out.decide()
    return out


class Evaluate:
    """The warm start's `evaluate(thetas)`: each θ measured on the session's model (once), θ → its
    per-input outcomes; `evaluated` counts the configurations it evaluated."""

    def __init__(self, session, fidelity: str):
        from .live import live_oracle

        self.session, self.fidelity, self.evaluated = session, fidelity, 0
        self.oracle, self.lattice = live_oracle(session, fidelity), session.benchmark.lattice

    def __call__(self, thetas) -> dict:
        self.evaluated += measure(self.session, self.fidelity, thetas)
        return {t: self.oracle.outcomes[int(self.lattice.index(np.asarray(t, np.int64)))] for t in thetas}
