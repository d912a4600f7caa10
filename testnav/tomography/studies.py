"""The TestifAI paper's §5 studies on a benchmark with a ground truth, as tidy tables.

(a) per-test errors r̂_σ − r_σ for 3D and 4D tomography (Fig. 3), with q̂_σ − q_σ (Fig. 10);
(b) aggregate queries Q1–Q12 on 3D, with Fig. 6's accuracy drop against Table 1 (Table 2: Q1–Q8 the octants where each family is ≤ 2 or
    ≥ 3, in binary order with the last family fastest; Q9–Q12 the cubes ≤ 1, ≤ 3, ≤ 4, ≤ 5 —
    the reading that reproduces Table 2's m and ℓ exactly, which a test checks);
(c) ordered vs random choice of training tests, 10 %–100 %, 10 repetitions, MSE on the
    held-out tests (on all of Θ at 100 %, where nothing is held out) (Figs. 7–8);
(d) total inferences of full tomography, partial tomography, and partial with early stopping,
    with the per-test MSE of each (Fig. 4);
(e) §3's mixed-independence estimate against the forest and the all-independent product on the
    unmeasured tests of order ≥ 3: with the χ² decisions at α, and with the k least dependent
    pairs (by χ²) taken as independent, k = 1 … all (where χ² rejects every pair, the estimate
    applies to no test at α; the sweep shows what it would give).
"""

from __future__ import annotations

from dataclasses import replace
from itertools import product

import numpy as np
import pandas as pd

from ..core.lattice import Lattice
from .core import Settings, from_groundtruth, sub_lattice
from .executor import ObservedTests, low_order, replay_tests
from .independence import independent_estimates
from .surrogate import RobustnessSurrogate

NO_EARLY_STOPPING = replace(Settings().rule, enabled=False)  # every test reads all of D


def paper_queries(names: list[str]) -> list[tuple[str, str]]:
    """Q1–Q12 of Table 2 for a 3-family lattice, as query strings."""
    a, b, c = names[:3]
    out = []
    for k, bits in enumerate(product((0, 1), repeat=3), start=1):
        out.append((f"Q{k}", " & ".join(f"{n} {'>= 3' if hi else '<= 2'}" for n, hi in zip((a, b, c), bits))))
    for k, top in zip(range(9, 13), (1, 3, 4, 5)):
        out.append((f"Q{k}", " & ".join(f"{n} <= {top}" for n in (a, b, c))))
    return out


def per_test_errors(outcomes, lattice, names, settings: Settings, label: str, quality=None) -> pd.DataFrame:
    """One row per σ; with `quality` (q_σ per test, lattice order) also q_true, q_pred, q_est (§6, Fig. 9)."""
    t = from_groundtruth(outcomes, lattice, names, settings, quality).table
    return t.assign(tomography=label, error=t.r_pred - t.r_true, abs_error=(t.r_pred - t.r_true).abs())


def query_errors(tomo, names, reference: float | None = None, source: str = "") -> pd.DataFrame:
    """Q1–Q12 with R̂(Q) − R(Q) and Fig. 6's drop: the paper's "predicted accuracy of M minus its
    original accuracy (as per Table 1)", `drop_pred` = R̂(Q) − reference in accuracy units (negative:
    accuracy lost), with `reference` Table 1's accuracy or, where the paper has none, the measured
    clean accuracy r_0; `drop_*_relative` = 1 − R(Q)/r_0, the drop relative to the clean estimate."""
    from .query import Query

    clean = float(tomo.table.r_true.iloc[0])
    if reference is None:
        reference, source = clean, "measured clean accuracy r_0"
    rows = []
    tuples = tomo.lattice.tuples
    for qid, text in paper_queries(names):
        mask = Query(text, names).mask(tuples)
        t = tomo.table[mask]
        rows.append(
            {
                "query": qid,
                "text": text,
                "tests": int(mask.sum()),
                "m": int(t.measured.sum()),
                "l": int((~t.measured).sum()),
                "R_true": t.r_true.mean(),
                "R_pred": t.r_est.mean(),
                "error": t.r_est.mean() - t.r_true.mean(),
                "drop_true": t.r_true.mean() - reference,
                "drop_pred": t.r_est.mean() - reference,
                "reference": reference,
                "reference_source": source,
                "drop_true_relative": 1 - t.r_true.mean() / clean,
                "drop_pred_relative": 1 - t.r_est.mean() / tomo.table.r_est.iloc[0],
            }
        )
    return pd.DataFrame(rows)


def ordered_vs_random(outcomes, lattice: Lattice, label: str, reps: int = 10, seed: int = 0) -> pd.DataFrame:
    truth = outcomes.mean(axis=1)
    rows = []
    full = NO_EARLY_STOPPING
    for rep in range(reps):
        rng = np.random.default_rng(seed + rep)
        ordered = np.lexsort((rng.random(lattice.size), lattice.orders))  # by order, random within an order
        shuffled = rng.permutation(lattice.size)
        for frac in np.round(np.arange(0.1, 1.01, 0.1), 1):
            n = int(round(frac * lattice.size))
            for strategy, chosen in (("ordered", ordered[:n]), ("random", shuffled[:n])):
                measured = replay_tests(outcomes, lattice, chosen, full, seed)
                pred = RobustnessSurrogate(seed=seed + rep).fit(lattice, measured.tests).predict()
                held = np.setdiff1d(np.arange(lattice.size), chosen)
                held = held if len(held) else np.arange(lattice.size)
                rows.append(
                    {
                        "tomography": label,
                        "strategy": strategy,
                        "fraction": frac,
                        "tests": n,
                        "rep": rep,
                        "mse": float(np.mean((pred[held] - truth[held]) ** 2)),
                    }
                )
    return pd.DataFrame(rows)


def inference_counts(outcomes, lattice: Lattice, settings: Settings, label: str) -> pd.DataFrame:
    truth = outcomes.mean(axis=1)
    n_inputs = outcomes.shape[1]
    rows = [{"tomography": label, "regime": "full", "inferences": lattice.size * n_inputs, "mse": 0.0}]
    tests = low_order(lattice, settings.max_order)
    for regime, rule in (("partial", NO_EARLY_STOPPING), ("partial_early_stopping", settings.rule)):
        m: ObservedTests = replay_tests(outcomes, lattice, tests, rule, settings.seed)
        pred = RobustnessSurrogate(seed=settings.seed).fit(lattice, m.tests).predict()
        est = pred.copy()
        for i, v in m.tests.items():
            est[i] = np.mean(v)
        rows.append(
            {
                "tomography": label,
                "regime": regime,
                "inferences": m.inferences,
                "mse": float(np.mean((est - truth) ** 2)),
            }
        )
    df = pd.DataFrame(rows)
    return df.assign(fraction_of_full=df.inferences / df.inferences.iloc[0])


def estimate_comparison(outcomes, lattice: Lattice, names, settings: Settings, label: str) -> pd.DataFrame:
    """MSE and mean |error| of §3's mixed estimate, the forest and the product of first-order tests,
    on the unmeasured tests of order ≥ 3 where the mixed estimate is defined, for the χ² decisions
    at α (`pairs_independent` = "chi2") and for the k least dependent pairs taken as independent."""
    tomo = from_groundtruth(outcomes, lattice, names, settings)
    t, pairs = tomo.table, tomo.pairs
    r = {i: float(np.mean(v)) for i, v in tomo.measured.tests.items()}
    index = {n: i for i, n in enumerate(names)}
    coded = pairs.assign(family_i=pairs.family_i.map(index), family_j=pairs.family_j.map(index))
    ranked = coded.sort_values("chi2", kind="stable").reset_index(drop=True)
    high = (t.order >= 3).to_numpy()
    truth = t.r_true.to_numpy()
    rows = []
    for k in [None, *range(1, len(ranked) + 1)]:
        if k is None:
            decided = coded
        else:
            chosen = set(zip(ranked.family_i[:k], ranked.family_j[:k]))
            decided = coded.assign(independent=[(a, b) in chosen for a, b in zip(coded.family_i, coded.family_j)])
        est = independent_estimates(lattice, r, decided, settings.relative_to_clean)
        ok = high & ~np.isnan(est)
        row = {
            "tomography": label,
            "pairs_independent": "chi2" if k is None else str(k),
            "independent": " ".join(
                f"{names[a]}⊥{names[b]}"
                for a, b, i in decided[["family_i", "family_j", "independent"]].itertuples(index=False)
                if i
            ),
            "tests": int(high.sum()),
            "defined": int(ok.sum()),
        }
        for name, values in (("mixed", est), ("forest", t.r_pred.to_numpy()), ("product", t.r_product.to_numpy())):
            e = values[ok] - truth[ok]
            row[f"mse_{name}"] = float(np.mean(e**2)) if ok.any() else np.nan
            row[f"mae_{name}"] = float(np.mean(np.abs(e))) if ok.any() else np.nan
        rows.append(row)
    return pd.DataFrame(rows)


def run_studies(
    outcomes, lattice: Lattice, names, settings: Settings, reps: int = 10, quality=None, reference=None
) -> dict[str, pd.DataFrame]:
    """All four studies for 4D (the benchmark's lattice) and 3D (its first three families).
    `quality`: q_σ per test in lattice order (e.g. the ground truth's KID), or None; `reference`:
    (accuracy, where it comes from) for Fig. 6's drop, e.g. the paper's Table 1, or None (the
    measured clean accuracy)."""
    sub, rows = sub_lattice(outcomes, lattice, [0, 1, 2])
    q = np.asarray(quality, float) if quality is not None else None
    views = {
        "3D": (outcomes[rows], sub, names[:3], None if q is None else q[rows]),
        f"{lattice.n}D": (outcomes, lattice, names, q),
    }
    tables = {"per_test_errors": [], "ordered_vs_random": [], "inferences": [], "estimates": []}
    for label, (out, lat, nm, ql) in views.items():
        tables["per_test_errors"].append(per_test_errors(out, lat, nm, settings, label, ql))
        tables["ordered_vs_random"].append(ordered_vs_random(out, lat, label, reps, settings.seed))
        tables["inferences"].append(inference_counts(out, lat, settings, label))
        tables["estimates"].append(estimate_comparison(out, lat, nm, settings, label))
    o3, l3, n3, _ = views["3D"]
    tables["queries"] = [query_errors(from_groundtruth(o3, l3, n3, settings), n3, *(reference or (None, "")))]
    return {k: pd.concat(v, ignore_index=True) for k, v in tables.items()}
