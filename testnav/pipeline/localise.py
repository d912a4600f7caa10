"""Which families a regression comes from: effects on the paired drop, with intervals, not counts.

Counting the regressions among the configurations that include a family blames whichever family
the compared configurations hold most often: a family that multiplies another's damage, or one the
warm start sampled more, collects regressions it did not cause. Two estimates replace the counts:

* **each family's own curve**: the configurations where it acts alone, at each severity compared,
  and the paired drop there (baseline minus new accuracy on the same inputs), with the two-sided
  interval of Tango's score (the gate's, pipeline/noninferiority.py, each side at (1 + confidence)/2);
* **a main-effects model** of the per-configuration drop: ordinary least squares (statsmodels) on
  one indicator per family and severity (severity 0 the reference), with HC3 standard errors (the
  drops' variances differ across configurations). A family's effect is its largest
  coefficient: the drop the model attributes to it at its most damaging severity, with that
  coefficient's interval (an average over severities would let a floor, where the baseline already
  fails and nothing is left to lose, cancel the severity that hurts). Pairs add one indicator per pair of families both present: the drop beyond what the two
  main effects predict (negative: one family masks the other).

Families are ranked by the model's effect where it can be fitted (more configurations than
parameters), else by the own curve's worst drop. The configurations compared share their inputs, so
the model's intervals treat correlated drops as independent: they rank, they do not gate (the gate
is pipeline/noninferiority.py's).
"""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd

FAMILY_COLUMNS = [
    "family",
    "effect",
    "effect_low",
    "effect_high",
    "effect_at",
    "alone",
    "alone_low",
    "alone_high",
    "alone_at",
    "configurations",
    "regressions",
    "improvements",
]
PAIR_COLUMNS = ["family", "with", "excess", "excess_low", "excess_high", "configurations", "regressions"]


def drop_interval(b: int, c: int, n: int, confidence: float) -> tuple[float, float]:
    """The two-sided interval at `confidence` on a paired drop (b right → wrong, c wrong → right of n)."""
    from .noninferiority import drop_bound

    one_side = (1 + confidence) / 2
    return drop_bound(b, c, n, one_side, upper=False), drop_bound(b, c, n, one_side, upper=True)


def levels_of(table: pd.DataFrame, k: int) -> np.ndarray:
    """(rows, k) the lattice levels of each configuration compared."""
    return table[[f"t{i + 1}" for i in range(k)]].to_numpy(np.int64)


def own_curves(table: pd.DataFrame, names: list[str], inputs: int, confidence: float) -> pd.DataFrame:
    """One row per family and level where the family acts alone among the configurations compared:
    family, level, drop, low, high (the paired drop and its interval)."""
    levels = levels_of(table, len(names))
    alone = (levels > 0).sum(1) == 1
    rows = []
    for r in np.flatnonzero(alone):
        f = int(np.flatnonzero(levels[r])[0])
        b, c = int(table["worse"].iloc[r]), int(table["better"].iloc[r])
        low, high = drop_interval(b, c, inputs, confidence)
        rows.append(
            {"family": names[f], "level": int(levels[r, f]), "drop": (b - c) / inputs, "low": low, "high": high}
        )
    return pd.DataFrame(rows, columns=["family", "level", "drop", "low", "high"])


def design(levels: np.ndarray, names: list[str], pairs: bool) -> pd.DataFrame:
    """The model's regressors: a constant, one indicator per family and level present (level 0 the
    reference), and with `pairs` one indicator per pair of families both present."""
    cols: dict[str, np.ndarray] = {"const": np.ones(len(levels))}
    for f, name in enumerate(names):
        for level in sorted(set(levels[:, f].tolist()) - {0}):
            cols[f"{name}={level}"] = (levels[:, f] == level).astype(float)
    if pairs:
        for i, j in combinations(range(len(names)), 2):
            both = ((levels[:, i] > 0) & (levels[:, j] > 0)).astype(float)
            if both.any():
                cols[f"{names[i]}×{names[j]}"] = both
    return pd.DataFrame(cols)


def fit(table: pd.DataFrame, names: list[str], pairs: bool):
    """statsmodels' OLS of the drop on `design`, HC3 errors; None where there are too few configurations
    (no more than the parameters) or the design is rank-deficient."""
    import statsmodels.api as sm

    x = design(levels_of(table, len(names)), names, pairs)
    if len(x) <= x.shape[1] or np.linalg.matrix_rank(x.to_numpy()) < x.shape[1]:
        return None
    return sm.OLS(-table["change"].to_numpy(float), x).fit(cov_type="HC3")


def worst_effect(model, fams, f: int, confidence: float) -> dict:
    """Family `f`'s most damaging severity in the model: its largest coefficient (effect, effect_low,
    effect_high at `confidence`) and where it acts alone at that severity (effect_at); {} where it has none."""
    name = fams[f].name
    keys = [k for k in model.params.index if k.startswith(f"{name}=")]
    if not keys:
        return {}
    k = max(keys, key=lambda key: model.params[key])
    low, high = model.conf_int(alpha=1 - confidence).loc[k]
    at = alone_name(fams, f, int(k.rsplit("=", 1)[1]))
    return {"effect": float(model.params[k]), "effect_low": float(low), "effect_high": float(high), "effect_at": at}


def alone_name(fams, f: int, level: int) -> str:
    """The configuration where family `f` alone acts at `level`, as a person reads it: "contrast=4 (×0.3)"."""
    from ..core.naming import config_name

    theta = np.zeros(len(fams), np.int64)
    theta[f] = level
    return config_name(theta, fams)


def families(table, fams, inputs, confidence, flags) -> pd.DataFrame:
    """Per family of `fams` (Family objects, or a record's NamedFamily), the most damaging first: its
    main effect on the drop at its most damaging severity (`effect`, its interval, `effect_at` that
    severity alone), its own curve's worst
    drop where it acts alone (`alone`, its interval, `alone_at` the configuration), and for reference the
    configurations compared that include it with the regressions and improvements among them (`flags`:
    Comparison.flags). Ranked by `effect`, or by `alone` where the model cannot be fitted."""
    names = [f.name for f in fams]
    curves = own_curves(table, names, inputs, confidence)
    model = fit(table, names, pairs=False)
    levels, (reg, imp) = levels_of(table, len(names)), flags
    rows = []
    for f, name in enumerate(names):
        row: dict = {"family": name, **(worst_effect(model, fams, f, confidence) if model is not None else {})}
        own = curves[curves["family"] == name]
        if len(own):
            w = own.loc[own["drop"].idxmax()]
            row |= {"alone": w["drop"], "alone_low": w["low"], "alone_high": w["high"]}
            row["alone_at"] = alone_name(fams, f, int(w["level"]))
        has = levels[:, f] > 0
        row |= {"configurations": int(has.sum()), "regressions": int((has & reg).sum())}
        row["improvements"] = int((has & imp).sum())
        rows.append(row)
    out = pd.DataFrame(rows).reindex(columns=FAMILY_COLUMNS)
    key = out["alone"] if model is None else out["effect"]
    order = np.lexsort((-out["alone"].fillna(-np.inf).to_numpy(), -key.fillna(-np.inf).to_numpy()))
    return out.iloc[order].reset_index(drop=True)


def pairs(table, names, confidence, flags) -> pd.DataFrame:
    """Per pair of families both present in some configuration compared, ranked by `excess`: the drop
    beyond what their main effects predict (the model with pair indicators; NaN where it cannot be
    fitted), its interval, and the configurations and regressions that include both."""
    model = fit(table, names, pairs=True)
    ci = model.conf_int(alpha=1 - confidence) if model is not None else None
    levels, (reg, _) = levels_of(table, len(names)), flags
    rows = []
    for i, j in combinations(range(len(names)), 2):
        has = (levels[:, i] > 0) & (levels[:, j] > 0)
        if not has.any():
            continue
        row: dict = {"family": names[i], "with": names[j], "configurations": int(has.sum())}
        row["regressions"] = int((has & reg).sum())
        k = f"{names[i]}×{names[j]}"
        if model is not None and ci is not None and k in model.params.index:
            row |= {"excess": model.params[k], "excess_low": ci.loc[k, 0], "excess_high": ci.loc[k, 1]}
        rows.append(row)
    out = pd.DataFrame(rows).reindex(columns=PAIR_COLUMNS)
    return out.sort_values(
        ["excess", "regressions"], ascending=[False, False], kind="stable", na_position="last"
    ).reset_index(drop=True)
