"""Golden digests: the committed fixed point of a ground-truth table, and a readable diff against it.

A golden is two files under results/golden/: `<name>.csv` with every θ's δ, normalised ρ
per fidelity metric and the coverage signals (NAC, SNAC, KMNC, TKNC: fractions of counted cells,
which must match exactly) rounded to 1e-6 (small enough to commit, precise enough to see one flipped prediction,
which moves δ by 1/|D|), and `<name>.json` with, per fidelity metric, |P*|, its composition by
order and its members. Comparing a recomputed table with it names each θ that changed and by how
much, so drift between machines or code versions is visible instead of silently reshaping P*.

Tolerances (docs/reproducibility.md): δ is a difference of accuracies, a multiple of 1/|D|, and
must match exactly (after rounding); normalised ρ may differ by float rounding between builds
and instruction sets, so it matches within `RHO_TOL`; P* must match exactly.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from ..core.cache import atomic_path, write_json_atomic
from ..core.table import Objectives, level_columns, minmax
from ..fidelity import sign as rho_sign

RHO_TOL = 1e-6
DECIMALS = 6
GOLDEN_DIR = Path(__file__).resolve().parents[2] / "results" / "golden"
# the committed goldens: the default benchmark, and the reduced lattice the test suite computes
COVERAGE = ("nac", "snac", "kmnc", "tknc")  # binned in float64 (testnav/signals): the same on every host
SCALES = {"mnist5k": (), "mnist5k-reduced": ("benchmark.levels=3", "benchmark.test_per_class=20")}


def fidelity_signs(columns) -> dict[str, float]:
    """{column: sign} of every fidelity metric whose column the table holds (ρ = sign × column)."""
    from .. import fidelity

    return {name: rho_sign(name) for name in sorted(fidelity.names()) if name in columns}


def rows(table: pd.DataFrame) -> pd.DataFrame:
    """t1..tn, δ and the normalised ρ of each fidelity metric (rho_<metric>), in lattice order,
    rounded to 1e-6. ρ is compared normalised, as every search sees it: raw KID on LeNet features
    is in the hundreds, so a tolerance on it would mean nothing."""
    t = level_columns(table)
    ordered = table.sort_values(t).reset_index(drop=True)
    out = ordered[t + ["delta"]].copy()
    for column, sign in fidelity_signs(table.columns).items():
        out[f"rho_{column}"] = minmax(sign * ordered[column].to_numpy(float))
    for column in COVERAGE:
        if column in table.columns:
            out[column] = ordered[column].to_numpy(float)
    return out.round(DECIMALS)


def fronts(table: pd.DataFrame) -> dict:
    """Per fidelity metric: |P*|, its order composition (Θ1..Θn) and its members (θ tuples, lattice order)."""
    out = {}
    for column, sign in fidelity_signs(table.columns).items():
        obj = Objectives.from_table(table, column, sign)
        thetas = obj.lattice.tuples[np.sort(obj.pstar)]
        orders = np.bincount((thetas > 0).sum(1), minlength=obj.lattice.n + 1)[1:]
        out[column] = {
            "pstar_size": len(thetas),
            "pstar_orders": orders.tolist(),
            "pstar": [",".join(map(str, t)) for t in thetas],
        }
    return out


def groundtruth(scale: str, cache_dir, overrides=(), progress: bool = False) -> pd.DataFrame:
    """The table of one golden scale (plus any overrides), computed or read from the cache."""
    from ..groundtruth.compute import whole_table
    from .config import compose_benchmark

    bench = compose_benchmark([*SCALES[scale], *overrides])
    return pd.read_parquet(whole_table(bench, cache_dir, "cpu", progress=progress, signals=True))


def write(table: pd.DataFrame, path_stem: Path, about: dict) -> tuple[Path, Path]:
    path_stem = Path(path_stem)
    csv = path_stem.with_suffix(".csv")
    with atomic_path(csv) as tmp:
        rows(table).to_csv(tmp, index=False, float_format=f"%.{DECIMALS}f")
    meta = {**about, "rows": len(table), "rho_tolerance": RHO_TOL, "fronts": fronts(table)}
    write_json_atomic(path_stem.with_suffix(".json"), meta)
    return csv, path_stem.with_suffix(".json")


def compare(table: pd.DataFrame, path_stem: Path, limit: int = 12) -> list[str]:
    """Every difference between `table` and the golden at `path_stem`, one line each ([] if none)."""
    path_stem = Path(path_stem)
    gold = pd.read_csv(path_stem.with_suffix(".csv"))
    meta = json.loads(path_stem.with_suffix(".json").read_text())
    new = rows(table)
    t = level_columns(gold)
    if list(new.columns) != list(gold.columns) or len(new) != len(gold):
        return [
            f"table shape differs: columns {list(new.columns)} × {len(new)} rows, golden "
            f"{list(gold.columns)} × {len(gold)} rows"
        ]
    if not (new[t].to_numpy() == gold[t].to_numpy()).all():
        return ["the configurations (t1..tn) differ from the golden's"]
    problems = []
    for c in gold.columns[len(t) :]:
        diff = new[c].to_numpy() - gold[c].to_numpy()
        exact = c == "delta" or c in COVERAGE
        tol = 0.5 * 10.0**-DECIMALS if exact else RHO_TOL + 10.0**-DECIMALS  # both sides rounded
        bad = np.flatnonzero(np.abs(diff) > tol)
        for i in bad[:limit]:
            theta = tuple(int(v) for v in gold.loc[i, t])
            problems.append(f"θ={theta} {c}: golden {gold.loc[i, c]:.6f}, now {new.loc[i, c]:.6f} ({diff[i]:+.6f})")
        if len(bad) > limit:
            problems.append(f"… {c}: {len(bad) - limit} more θ differ")
    for column, want in meta["fronts"].items():
        have = fronts(table).get(column)
        if have is None:
            problems.append(f"P* under {column}: the table has no {column} column")
            continue
        lost = sorted(set(want["pstar"]) - set(have["pstar"]))
        gained = sorted(set(have["pstar"]) - set(want["pstar"]))
        if lost or gained:
            problems.append(
                f"P* under {column}: |P*| {want['pstar_size']} {want['pstar_orders']} → "
                f"{have['pstar_size']} {have['pstar_orders']}; lost {' '.join(lost) or 'none'}, gained {' '.join(gained) or 'none'}"
            )
    return problems
