"""`Tester.scan()`: measure what can be afforded, and say what breaks the model (testnav/findings.py).

1. The clean set and every family alone (the order-1 configurations) are measured on the model;
   their time prices one configuration.
2. If measuring the rest of the lattice fits `budget_seconds` at that price (an upper bound: the
   ground truth shares the families' common prefixes and batches siblings), the whole lattice is
   measured (`Tester.groundtruth()`, cached), and every number in the findings is measured.
3. Otherwise the pairs are measured where they fit half the time left (the interactions need
   them), and TomoNav searches the rest under the stopping certificate (`stop_at`, p_good), with
   as many proposals as the remaining time buys. The failure modes' sub-configurations that the
   search left unmeasured are measured before the failure modes are chosen, so minimality is
   checked on measurements.

A ground truth already cached is read without any probing.
"""

from __future__ import annotations

import time

import numpy as np

from .errors import UserError
from .findings import FAILURE_MODES, Measured, build, fidelity_settings, minimal_mask, passes_floor

BUDGET_SECONDS = 600.0  # the default: ten minutes of measuring
STOP_AT = 0.95


def check_budget_seconds(value) -> float:
    if value is None:
        return BUDGET_SECONDS
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0 or not np.isfinite(value):
        raise UserError(f"budget_seconds={value!r}: a positive number of seconds, or None for {BUDGET_SECONDS:.0f} s")
    return float(value)


def check_count(value, key: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise UserError(f"{key}={value!r}: a whole number ≥ 1")
    return int(value)


def timed(oracle, indices, progress=None, what: str = "configurations") -> float:
    """Measure `indices` on the live oracle, in lattice order and in steps a progress bar (or, where
    nobody watches, a line every 30 s) can follow; the seconds per configuration not measured before."""
    from .core.progress import bar

    new = sorted(int(i) for i in indices if int(i) not in oracle.memo)
    if not new:
        return 0.0
    t0 = time.perf_counter()
    step = max(oracle.lattice.levels, 16)
    with bar(progress, total=len(new), desc=f"scan: {what}", unit="cfg") as pbar:
        for k in range(0, len(new), step):
            oracle.evaluate(np.array(new[k : k + step], np.int64))
            pbar.update(len(new[k : k + step]))
    return (time.perf_counter() - t0) / len(new)


def sub_configurations(lattice, theta) -> list[int]:
    from itertools import product

    theta = tuple(int(t) for t in theta)
    return [int(lattice.index(np.array(s, np.int64))) for s in product(*(range(t + 1) for t in theta)) if s != theta]


def complete_minimality(oracle, lattice, fidelity: dict, k: int, limit: int = 64) -> int:
    """Measure the unmeasured sub-configurations of the most damaging measured candidates (above the
    floor), until `k` of them are minimal on measured values; returns how many were measured."""
    extra = 0
    for _ in range(4 * k):
        m = Measured.from_oracle(oracle)
        damage = m.accuracy[0] - m.accuracy
        full = np.full(lattice.size, np.nan)
        full[m.index] = damage
        ok = (m.index > 0) & minimal_mask(lattice, full)[m.index] & (damage > 0)
        ok &= passes_floor(m.fidelity, fidelity["floor"], fidelity["higher_is_better"])
        top = m.index[ok][np.argsort(-damage[ok], kind="stable")][:k]
        todo = sorted(
            {s for i in top for s in sub_configurations(lattice, lattice.theta(int(i))) if s not in oracle.memo}
        )
        if not todo or extra + len(todo) > limit * k:
            return extra
        oracle.evaluate(np.array(todo, np.int64))
        extra += len(todo)
    return extra


def model_name(tester) -> str:
    return getattr(tester.benchmark, "model_name", None) or tester.benchmark.name


def digests(tester) -> tuple[dict, dict]:
    """Digests of the model and of the data (what a later comparison checks), and the data's size."""
    from .core.cache import stable_hash

    b, loaded = tester.benchmark, tester.session.loaded
    return (
        {"model": str(loaded.model_key), "data": stable_hash(b.data_description()), "benchmark": b.key(loaded)},
        {"inputs": int(len(loaded.labels)), "perturb_seed": b.perturb_seed},
    )


def scan(
    tester,
    budget_seconds=None,
    failure_modes: int = FAILURE_MODES,
    fidelity_floor="auto",
    seed: int = 0,
    stop_at: float = STOP_AT,
    examples: int = 8,
):
    """The findings of `tester`'s model (testnav/findings.py); see this module's docstring."""
    from .pipeline import cached_groundtruth, live_oracle
    from .report.inputs import inputs_of, supported

    budget = check_budget_seconds(budget_seconds)
    k = check_count(failure_modes, "failure_modes")
    examples = check_count(examples, "examples")
    metric = tester.benchmark.metrics[tester.fidelity]
    fid = fidelity_settings(tester.fidelity, fidelity_floor, getattr(metric, "higher_is_better", True))
    lattice = tester.lattice
    t0 = time.perf_counter()
    session = tester.session
    method = {"budget_seconds": budget}
    table = cached_groundtruth(tester.benchmark, tester.cache_dir, session.loaded)
    run = None
    if table is None:
        oracle = live_oracle(session, tester.fidelity)
        session.clean  # noqa: B018  (the metrics prepared before the clock starts)
        per = timed(oracle, np.flatnonzero(lattice.orders <= 1), tester.progress, "each family alone")
        per = per or (oracle.seconds / max(oracle.evaluations, 1))
        rest = lattice.size - oracle.evaluations
        projected = per * rest
        method.update(projected_seconds=round(projected, 1), seconds_per_configuration=round(per, 4))
        if projected <= budget:
            table = tester._groundtruth_path(signals=False)  # what the projection priced: no signal
        else:
            method["how"] = "search"
            pairs = np.flatnonzero(lattice.orders == 2)
            left = budget - (time.perf_counter() - t0)
            method["pairs"] = bool(per * len(pairs) <= left / 2)
            if method["pairs"]:
                timed(oracle, pairs, tester.progress, "pairs of families")
            left = budget - (time.perf_counter() - t0)
            proposals = max(int(left / max(per, 1e-6)), lattice.n * (lattice.levels - 1) + 20)
            run = tester.search("tomonav", budget=min(proposals, 5 * lattice.size), seed=seed, stop_at=stop_at)
            method.update(p_good=run.summary.get("p_good"), epsilon=run.summary.get("epsilon"))
            method["sub_configurations_measured"] = complete_minimality(oracle, lattice, fid, k)
            measured = Measured.from_oracle(oracle)
    else:
        method["cached"] = "projected_seconds" not in method
    if table is not None:
        import pandas as pd

        method["how"] = "lattice"
        measured = Measured.from_table(pd.read_parquet(table), lattice, tester.fidelity)
    method["seconds"] = round(time.perf_counter() - t0, 1)
    model_digests, data = digests(tester)
    findings = build(
        measured, tester.benchmark.families, model_name(tester), tester.confidence, fid, method, k, model_digests, data
    )
    findings.run, findings._tester = run, tester
    if supported(tester.benchmark, session.loaded):
        inputs = inputs_of(session)
        for _, row in findings.failure_modes.iterrows():
            theta = lattice.theta(int(lattice.index(row[[f"t{i + 1}" for i in range(lattice.n)]].to_numpy(np.int64))))
            findings.examples[row["configuration"]] = inputs.examples(theta, examples)
    return findings
